import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import t, { type Test } from 'tap';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { EdgeDecider, EdgeDecision, EdgeDeny, EdgeRequest } from '../../src/edge-authz/decision.js';
import { EXTERNAL_AUTH_PROTO, PROTO_ROOT, authorizationService, peerAddress, startExtAuthzGrpc, type ExtAuthzGrpcServer } from '../../src/edge-authz/grpc/server.js';

/**
 * Envoy ext_authz over gRPC, the contract (issue 30): a real @grpc/grpc-js client calls
 * /envoy.service.auth.v3.Authorization/Check over h2c on loopback with CheckRequests shaped as
 * Envoy's ext_authz filter sends them, and the answers are decoded twice: with the official
 * protos (protobufjs, from the vendored files) and by hand from the wire bytes, so a wrong
 * field number or enum value cannot hide behind a shared loader. The decider here is a plain
 * function over the EdgeDecider seam (src/edge-authz/decision.ts), not a mock of HTTP or Redis:
 * the real decider's end-to-end test is beside it.
 */

const METHOD = '/envoy.service.auth.v3.Authorization/Check';
// protobufjs resolves imports relative to the importing file; give it the include root (it
// serves google/protobuf/* from its own bundled copies).
const loaded = new protobuf.Root();
loaded.resolvePath = (_origin, target) => join(PROTO_ROOT, target);
loaded.loadSync(EXTERNAL_AUTH_PROTO, { keepCase: true });
const CheckRequest = loaded.lookupType('envoy.service.auth.v3.CheckRequest');
const CheckResponse = loaded.lookupType('envoy.service.auth.v3.CheckResponse');

const PROBLEM = (status: number, title: string): string => JSON.stringify({ type: 'about:blank', title, status });
const deny = (status: number, headers: Record<string, string> = {}, route: string | undefined = 'accounts'): EdgeDeny => ({
  allowed: false,
  status,
  headers: { 'content-type': 'application/problem+json', ...headers },
  body: PROBLEM(status, `refused ${status}`),
  route,
});

const MALFORMED = { allowed: false, status: 403, headers: null, body: '', route: undefined } as unknown as EdgeDecision;

/** The test's decider: an answer per bearer token, and every request it saw. */
function decider(): { decide: EdgeDecider; seen: EdgeRequest[] } {
  const seen: EdgeRequest[] = [];
  const decide: EdgeDecider = (request): EdgeDecision | Promise<EdgeDecision> => {
    seen.push(request);
    const token = request.authorization.length === 1 ? request.authorization[0] : undefined;
    if (request.authorization.length > 1) return deny(400);
    switch (token) {
      case 'Bearer good':
        return {
          allowed: true,
          upstreamHeaders: { 'x-organization-id': 'org-1', 'x-organization-scopes': 'accounts:read', 'x-authgate-identity': 'signed.jwt.value' },
          removeHeaders: [],
          cacheSeconds: 0,
          route: 'accounts',
        } satisfies EdgeDecision;
      case 'Bearer slow':
        return new Promise((resolve) => setImmediate(() => resolve(deny(403))));
      case 'Bearer limited':
        return deny(429, { 'retry-after': '7', ratelimit: 'limit=10, remaining=0, reset=7' });
      case 'Bearer store-down':
        return deny(503, { 'retry-after': '1' });
      case 'Bearer throws':
        throw new Error('bug');
      case 'Bearer rejects':
        return Promise.reject(new Error('bug'));
      // Decisions no CheckResponse can be made of (headers that are no object): a defect, as a throw is.
      case 'Bearer malformed':
        return MALFORMED;
      case 'Bearer malformed-later':
        return Promise.resolve(MALFORMED);
      case undefined:
        return request.target.startsWith('/public')
          ? ({ allowed: true, upstreamHeaders: {}, removeHeaders: ['x-organization-id', 'x-organization-scopes', 'x-authgate-identity'], cacheSeconds: 0, route: 'public' } satisfies EdgeDecision)
          : deny(401, { 'www-authenticate': 'Bearer realm="authgate"' });
      default:
        return deny(401, { 'www-authenticate': 'Bearer realm="authgate", error="invalid_token"' });
    }
  };
  return { decide, seen };
}

type Started = { server: ExtAuthzGrpcServer; client: Client; seen: EdgeRequest[] };

async function start(t: Test, options: { trusted?: (address: string) => boolean; removeCredential?: boolean; onUndecided?: (request: EdgeRequest | undefined, refusal: EdgeDeny) => void } = {}): Promise<Started> {
  const { decide, seen } = decider();
  const server = await startExtAuthzGrpc({
    decide,
    host: '127.0.0.1',
    port: 0,
    trusted: options.trusted ?? (() => true),
    untrusted: () => deny(403, {}, undefined),
    failed: () => deny(503, { 'retry-after': '1' }, undefined),
    removeCredential: options.removeCredential ?? false,
    ...(options.onUndecided === undefined ? {} : { onUndecided: options.onUndecided }),
  });
  const client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  t.teardown(async () => {
    client.close();
    await server.close();
  });
  return { server, client, seen };
}

/** One Check with raw bytes both ways: the request encoded and the answer decoded by the test. */
function check(client: Client, request: Record<string, unknown>): Promise<Buffer> {
  const bytes = Buffer.from(CheckRequest.encode(CheckRequest.fromObject(request)).finish());
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest<Buffer, Buffer>(METHOD, (value) => value, (value) => value, bytes, new Metadata(), { deadline: Date.now() + 10_000 }, (error: ServiceError | null, value?: Buffer) =>
      error || value === undefined ? reject(error ?? new Error('no answer')) : resolve(value),
    );
  });
}

type Decoded = {
  status?: { code?: number; message?: string };
  ok_response?: { headers?: Array<{ header: { key: string; value: string }; append?: { value?: boolean }; append_action?: number }>; headers_to_remove?: string[] };
  denied_response?: { status?: { code?: number }; headers?: Array<{ header: { key: string; value: string }; append?: { value?: boolean }; append_action?: number }>; body?: string };
};
const decode = (bytes: Buffer): Decoded => CheckResponse.toObject(CheckResponse.decode(bytes), { enums: Number, defaults: false }) as Decoded;
const headersOf = (list: Array<{ header: { key: string; value: string } }> | undefined): Record<string, string> =>
  Object.fromEntries((list ?? []).map((option) => [option.header.key, option.header.value]));

/** An Envoy-shaped request (ext_authz_grpc_impl / check_request_utils: lower-case header map with pseudo-headers, path with query). */
function envoyRequest(http: { method?: string; path: string; headers?: Record<string, string>; id?: string }, source = '203.0.113.9'): Record<string, unknown> {
  return {
    attributes: {
      source: { address: { socket_address: { address: source, port_value: 50123 } } },
      destination: { address: { socket_address: { address: '10.0.0.5', port_value: 8443 } } },
      request: {
        time: { seconds: 1764126000, nanos: 0 },
        http: {
          id: http.id ?? '5d3e0b5a-2f1c-4c57-9f0e-6a0b8f1f2e11',
          method: http.method ?? 'GET',
          path: http.path,
          host: 'api.example.com',
          scheme: 'https',
          protocol: 'HTTP/1.1',
          headers: { ':authority': 'api.example.com', ':method': http.method ?? 'GET', ':path': http.path, ':scheme': 'https', 'x-forwarded-proto': 'https', 'x-request-id': 'rid-1', ...http.headers },
        },
      },
      context_extensions: { virtual_host: 'api' },
    },
  };
}

// ---- a hand-written protobuf wire reader: field numbers straight from the bytes ----
type WireField = { field: number; wire: number; value: bigint | Buffer };
function readVarint(bytes: Buffer, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = bytes[at++];
    if (byte === undefined) throw new Error('truncated varint');
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, at];
    shift += 7n;
  }
}
function fields(bytes: Buffer): WireField[] {
  const out: WireField[] = [];
  let at = 0;
  while (at < bytes.length) {
    const [tag, next] = readVarint(bytes, at);
    at = next;
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [value, after] = readVarint(bytes, at);
      out.push({ field, wire, value });
      at = after;
    } else if (wire === 2) {
      const [length, after] = readVarint(bytes, at);
      out.push({ field, wire, value: bytes.subarray(after, after + Number(length)) });
      at = after + Number(length);
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}
const only = (list: WireField[], field: number): WireField[] => list.filter((entry) => entry.field === field);
const numbersOf = (list: WireField[]): number[] => [...new Set(list.map((entry) => entry.field))].sort((a, b) => a - b);

/** Field numbers and enum values as the vendored .proto text declares them (the test reads the files, not the loader). */
function protoText(file: string): string {
  return readFileSync(join(PROTO_ROOT, file), 'utf8');
}
function declared(text: string, message: string, field: string): number {
  const body = new RegExp(`message ${message} \\{([\\s\\S]*?)\\n\\}`).exec(text)?.[1] ?? '';
  const match = new RegExp(`\\b${field} = (\\d+)`).exec(body.replace(/\/\/.*$/gm, ''));
  if (!match?.[1]) throw new Error(`${message}.${field} not declared`);
  return Number(match[1]);
}

t.test('the vendored protos are byte for byte the package\'s closure (scripts/vendor-envoy-protos.mjs --check)', async (t) => {
  const output = execFileSync(process.execPath, ['scripts/vendor-envoy-protos.mjs', '--check'], { encoding: 'utf8' });
  t.match(output, /19 protos match @grpc\/grpc-js-xds@1\.14\.1/);

  t.equal(authorizationService()['Check']?.path, METHOD);
});

t.test('the field numbers and enum values this server relies on, read from the .proto text', async (t) => {
  const external = protoText('envoy/service/auth/v3/external_auth.proto');
  t.equal(declared(external, 'CheckResponse', 'status'), 1);
  t.equal(declared(external, 'CheckResponse', 'denied_response'), 2);
  t.equal(declared(external, 'CheckResponse', 'ok_response'), 3);
  t.equal(declared(external, 'OkHttpResponse', 'headers'), 2);
  t.equal(declared(external, 'OkHttpResponse', 'headers_to_remove'), 5);
  t.equal(declared(external, 'DeniedHttpResponse', 'status'), 1);
  t.equal(declared(external, 'DeniedHttpResponse', 'headers'), 2);
  t.equal(declared(external, 'DeniedHttpResponse', 'body'), 3);
  const base = protoText('envoy/config/core/v3/base.proto');
  t.equal(declared(base, 'HeaderValue', 'key'), 1);
  t.equal(declared(base, 'HeaderValue', 'value'), 2);
  t.equal(declared(base, 'HeaderValueOption', 'header'), 1);
  t.equal(declared(base, 'HeaderValueOption', 'append'), 2);
  t.equal(declared(base, 'HeaderValueOption', 'append_action'), 3);
  t.match(base, /OVERWRITE_IF_EXISTS_OR_ADD = 2;/);
  t.equal(declared(protoText('envoy/type/v3/http_status.proto'), 'HttpStatus', 'code'), 1);
  const status = protoText('google/rpc/status.proto');
  t.equal(declared(status, 'Status', 'code'), 1);
  t.equal(declared(status, 'Status', 'message'), 2);
});

t.test('allow: code 0, ok_response headers set (append false, OVERWRITE_IF_EXISTS_OR_ADD), forged identity headers removed', async (t) => {
  const { client, seen } = await start(t);
  const bytes = await check(
    client,
    envoyRequest({
      method: 'post',
      path: '/accounts/42?expand=owner&q=a%20b',
      headers: { authorization: 'Bearer good', 'x-organization-id': 'forged', 'x-organization-plan': 'forged', 'x-authgate-other': 'forged', 'x-forwarded-for': '198.51.100.1, 203.0.113.9' },
    }),
  );
  const request = seen[0];
  t.match(request, { protocol: 'ext_authz_grpc', method: 'POST', target: '/accounts/42?expand=owner&q=a%20b', authorization: ['Bearer good'], clientAddress: '203.0.113.9', requestId: '5d3e0b5a-2f1c-4c57-9f0e-6a0b8f1f2e11' });
  // The decider refuses such a request (issue 45, decider.test.ts); the mapping still removes the copies on its own.
  t.equal(request?.identityHeaderSent, true, 'the client\'s identity-family headers are seen');
  t.equal(request?.clientHeaders['x-organization-plan'], 'forged', 'the client\'s headers, for the method-override check');

  const decoded = decode(bytes);
  t.equal(decoded.status?.code ?? 0, 0, 'status.code 0 = allowed');
  t.notOk(decoded.denied_response, 'no denied_response');
  t.same(headersOf(decoded.ok_response?.headers), { 'x-organization-id': 'org-1', 'x-organization-scopes': 'accounts:read', 'x-authgate-identity': 'signed.jwt.value' });
  for (const option of decoded.ok_response?.headers ?? []) {
    t.equal(option.append?.value ?? false, false, `${option.header.key}: append false`);
    t.equal(option.append_action, 2, `${option.header.key}: OVERWRITE_IF_EXISTS_OR_ADD`);
  }
  t.same([...(decoded.ok_response?.headers_to_remove ?? [])].sort(), ['x-authgate-other', 'x-organization-plan'], 'client copies the decision does not overwrite; the credential stays (default off)');

  // The same answer read from the wire: CheckResponse{status=1, ok_response=3}, OkHttpResponse{headers=2, headers_to_remove=5}.
  const top = fields(bytes);
  t.same(numbersOf(top), [1, 3]);
  const ok = fields(only(top, 3)[0]!.value as Buffer);
  t.same(numbersOf(ok), [2, 5]);
  const option = fields(only(ok, 2)[0]!.value as Buffer);
  t.same(numbersOf(option), [1, 2, 3], 'HeaderValueOption{header=1, append=2, append_action=3}');
  t.equal(only(option, 3)[0]!.value, 2n, 'append_action = OVERWRITE_IF_EXISTS_OR_ADD (2)');
  const append = fields(only(option, 2)[0]!.value as Buffer);
  t.ok(append.every((entry) => entry.field === 1 && entry.value === 0n), 'append = BoolValue{value=1: false}: present, so Envoy overwrites');
  const header = fields(only(option, 1)[0]!.value as Buffer);
  t.equal((only(header, 1)[0]!.value as Buffer).toString(), 'x-organization-id', 'HeaderValue.key = 1');
  t.equal((only(header, 2)[0]!.value as Buffer).toString(), 'org-1', 'HeaderValue.value = 2');
});

t.test('AUTHGATE_AUTHZ_REMOVE_CREDENTIAL: authorization in headers_to_remove; public route: identity headers removed', async (t) => {
  const { client } = await start(t, { removeCredential: true });
  const allowed = decode(await check(client, envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good' } })));
  t.same(allowed.ok_response?.headers_to_remove, ['authorization']);
  const open = decode(await check(client, envoyRequest({ path: '/public/status', headers: { 'x-organization-id': 'forged', 'x-authgate-identity': 'forged' } })));
  t.equal(open.status?.code ?? 0, 0);
  t.same(open.ok_response?.headers ?? [], [], 'a public route sets nothing');
  t.same([...(open.ok_response?.headers_to_remove ?? [])].sort(), ['authorization', 'x-authgate-identity', 'x-organization-id', 'x-organization-scopes']);
});

t.test('refusals: denied_response{status, headers, body} and the matching rpc code; never an RPC error', async (t) => {
  const undecided: string[] = [];
  const { client } = await start(t, { onUndecided: (request, refusal) => undecided.push(`${request?.authorization[0]} ${refusal.status}`) });
  const cases: Array<{ token: string | undefined; http: number; code: number; headers: Record<string, string> }> = [
    { token: undefined, http: 401, code: 16, headers: { 'www-authenticate': 'Bearer realm="authgate"' } },
    { token: 'Bearer nope', http: 401, code: 16, headers: { 'www-authenticate': 'Bearer realm="authgate", error="invalid_token"' } },
    { token: 'Bearer slow', http: 403, code: 7, headers: {} },
    { token: 'Bearer limited', http: 429, code: 8, headers: { 'retry-after': '7', ratelimit: 'limit=10, remaining=0, reset=7' } },
    { token: 'Bearer store-down', http: 503, code: 14, headers: { 'retry-after': '1' } },
    { token: 'Bearer throws', http: 503, code: 14, headers: { 'retry-after': '1' } },
    { token: 'Bearer rejects', http: 503, code: 14, headers: { 'retry-after': '1' } },
  ];
  for (const { token, http, code, headers } of cases) {
    const bytes = await check(client, envoyRequest({ path: '/accounts', headers: token === undefined ? {} : { authorization: token } }));
    const decoded = decode(bytes);
    t.equal(decoded.status?.code, code, `${token}: rpc code ${code}`);
    t.notOk(decoded.ok_response, `${token}: no ok_response`);
    t.equal(decoded.denied_response?.status?.code, http, `${token}: HttpStatus ${http}`);
    t.same(headersOf(decoded.denied_response?.headers), { 'content-type': 'application/problem+json', ...headers }, `${token}: headers`);
    t.equal(JSON.parse(decoded.denied_response?.body ?? '{}').status, http, `${token}: problem body`);
    const top = fields(bytes);
    t.same(numbersOf(top), [1, 2], `${token}: CheckResponse{status=1, denied_response=2}`);
    t.equal(only(fields(only(top, 1)[0]!.value as Buffer), 1)[0]!.value, BigInt(code), `${token}: google.rpc.Status.code = 1`);
    const denied = fields(only(top, 2)[0]!.value as Buffer);
    t.same(numbersOf(denied), [1, 2, 3], `${token}: DeniedHttpResponse{status=1, headers=2, body=3}`);
    t.equal(only(fields(only(denied, 1)[0]!.value as Buffer), 1)[0]!.value, BigInt(http), `${token}: HttpStatus.code = 1, the HTTP status itself`);
  }
  t.same(undecided, ['Bearer throws 503', 'Bearer rejects 503'], 'only a failing decider is reported as undecided (the decider records its own answers)');
});

t.test('a decision no CheckResponse can be made of: the failing decider\'s refusal, never an RPC error nor an unhandled rejection, reported as undecided', async (t) => {
  const escaped: unknown[] = [];
  const onEscape = (reason: unknown) => void escaped.push(reason);
  process.on('unhandledRejection', onEscape);
  t.teardown(() => void process.off('unhandledRejection', onEscape));
  const undecided: string[] = [];
  const { client } = await start(t, { onUndecided: (request, refusal) => undecided.push(`${request?.authorization[0]} ${refusal.status}`) });
  for (const token of ['Bearer malformed', 'Bearer malformed-later']) {
    const decoded = decode(await check(client, envoyRequest({ path: '/accounts', headers: { authorization: token } })));
    t.equal(decoded.status?.code, 14, `${token}: the failing decider's answer (here a denied 503)`);
    t.equal(decoded.denied_response?.status?.code, 503);
  }
  t.same(undecided, ['Bearer malformed 503', 'Bearer malformed-later 503'], 'each reported for its metric and access line');
  t.same(escaped, [], 'no unhandled rejection');
});

t.test('several Authorization values (Envoy merges them with a comma, or header_map entries) reach the decider as several', async (t) => {
  const { client, seen } = await start(t);
  const merged = decode(await check(client, envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good,Bearer other' } })));
  t.equal(merged.denied_response?.status?.code, 400);
  t.same(seen[0]?.authorization, ['Bearer good', 'Bearer other']);
  const raw = envoyRequest({ path: '/accounts' }) as { attributes: { request: { http: Record<string, unknown> } } };
  delete raw.attributes.request.http['headers'];
  raw.attributes.request.http['header_map'] = {
    headers: [
      { key: ':path', raw_value: Buffer.from('/accounts') },
      { key: 'authorization', raw_value: Buffer.from('Bearer good') },
      { key: 'authorization', raw_value: Buffer.from('Bearer good') },
    ],
  };
  const repeated = decode(await check(client, raw));
  t.equal(repeated.denied_response?.status?.code, 400);
  t.same(seen[1]?.authorization, ['Bearer good', 'Bearer good']);
  raw.attributes.request.http['header_map'] = { headers: [{ key: 'authorization', raw_value: Buffer.from('Bearer good') }, { key: 'x-organization-id', raw_value: Buffer.from('forged') }] };
  const single = decode(await check(client, raw));
  t.equal(single.status?.code ?? 0, 0, 'one raw value: allowed');
  t.same(single.ok_response?.headers_to_remove ?? [], [], 'x-organization-id is overwritten by the decision, not removed');
});

t.test('client address: source peer, else the last x-forwarded-for entry (the one Envoy appended), else the transport peer', async (t) => {
  const { client, seen } = await start(t);
  const noSource = envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good', 'x-forwarded-for': '6.6.6.6, 198.51.100.7' } }) as { attributes: Record<string, unknown> };
  delete noSource.attributes['source'];
  await check(client, noSource);
  t.equal(seen[0]?.clientAddress, '198.51.100.7');
  const bare = envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good' } }) as { attributes: Record<string, unknown> };
  delete bare.attributes['source'];
  await check(client, bare);
  t.equal(seen[1]?.clientAddress, '127.0.0.1');
  // A last entry that is no address (a client's own X-Forwarded-For where Envoy appends none): never a bucket of its own.
  for (const forwarded of ['198.51.100.7, evil-bucket', 'x', '198.51.100.7,']) {
    const shaped = envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good', 'x-forwarded-for': forwarded } }) as { attributes: Record<string, unknown> };
    delete shaped.attributes['source'];
    await check(client, shaped);
    t.equal(seen.at(-1)?.clientAddress, '127.0.0.1', `x-forwarded-for ${forwarded}: the transport peer, as the HTTP endpoints read it`);
  }
  await check(client, {});
  t.same(seen.at(-1), { protocol: 'ext_authz_grpc', method: '', target: '', authorization: [], clientHeaders: {}, identityHeaderSent: false, clientAddress: '127.0.0.1', requestId: undefined }, 'an empty CheckRequest still reaches the decider, which refuses it');
});

t.test('an untrusted transport peer: denied 403 without deciding', async (t) => {
  const peers: string[] = [];
  const undecided: number[] = [];
  const { client, seen } = await start(t, { trusted: (address) => (peers.push(address), false), onUndecided: (request, refusal) => undecided.push(request === undefined ? refusal.status : -1) });
  const decoded = decode(await check(client, envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good' } })));
  t.equal(decoded.status?.code, 7);
  t.equal(decoded.denied_response?.status?.code, 403);
  t.equal(seen.length, 0, 'the decider never ran');
  t.same(peers, ['127.0.0.1'], 'trust is judged on the transport peer, not on attributes.source');
  t.same(undecided, [403], 'the refusal given without deciding is reported for its metric and access line');
  // grpc-js's getPeer() is `${remoteAddress}:${remotePort}`, IPv6 without brackets.
  for (const [peer, address] of [['127.0.0.1:50412', '127.0.0.1'], ['::1:50412', '::1'], ['::ffff:10.0.0.7:443', '::ffff:10.0.0.7'], ['[fd00::1]:80', 'fd00::1'], ['unknown', 'unknown']] as const) t.equal(peerAddress(peer), address, peer);
});

t.test('50 concurrent calls on one channel, each answered', async (t) => {
  const { client } = await start(t);
  const answers = await Promise.all(Array.from({ length: 50 }, () => check(client, envoyRequest({ path: '/accounts', headers: { authorization: 'Bearer good' } }))));
  t.equal(answers.filter((bytes) => (decode(bytes).status?.code ?? 0) === 0).length, 50);
});
