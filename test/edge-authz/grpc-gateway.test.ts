import t, { type Test } from 'tap';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import type { EdgeDecider } from '../../src/edge-authz/decision.js';
import { listenExtAuthzGrpc } from '../../src/edge-authz/grpc/listen.js';
import { authorizationService } from '../../src/edge-authz/grpc/server.js';
import { loadConfig } from '../../src/config/load.js';
import { eventually, send, startGateway, testConfig, UA, type StartedGateway } from '../helpers/gateway.js';
import { createOrganizationAndLogin, startGatewayProcess } from '../helpers/gateway-process.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Envoy ext_authz over gRPC through a real gateway (issue 30): the gateway's own edge decider
 * (gateway.edge) behind the gRPC listener main.ts starts, called by a @grpc/grpc-js client over
 * h2c on loopback. The memory store for the answers, one redis-server for what needs replicas:
 * a revocation on one replica refused on the other's gRPC port, and a store that stops answering
 * refused as a *denied* 503 with retry-after, never an RPC error.
 */

type Answer = {
  status?: { code?: number; message?: string };
  ok_response?: { headers?: Array<{ header: { key: string; value: string } }>; headers_to_remove?: string[] };
  denied_response?: { status?: { code?: number | string }; headers?: Array<{ header: { key: string; value: string } }>; body?: string };
};
type Grpc = { check(http: { method?: string; path: string; headers?: Record<string, string> }): Promise<Answer> };

/** The gateway's ext_authz gRPC listener, started as main.ts starts it, and a client of it. */
async function grpcOf(t: Test, gw: StartedGateway, options: { removeCredential?: boolean; decide?: EdgeDecider } = {}): Promise<Grpc> {
  const edge = options.decide === undefined ? gw.gateway.edge : { ...gw.gateway.edge, decide: options.decide };
  const server = await listenExtAuthzGrpc(edge, { authz: { port: undefined, host: '127.0.0.1', trustedProxies: [], cacheSeconds: 0 }, authzGrpc: { port: 0, removeCredential: options.removeCredential ?? true } }, gw.gateway.logger);
  if (server === undefined) throw new Error('no listener');
  t.teardown(() => server.close());
  return clientOf(t, server.port);
}

/** A gRPC client of Check on `port`, closed at teardown. */
function clientOf(t: Test, port: number): Grpc {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  t.teardown(() => client.close());
  const check = authorizationService()['Check']!;
  return {
    check: (http) =>
      new Promise((resolve, reject) => {
        const request = {
          attributes: {
            source: { address: { socket_address: { address: '203.0.113.7', port_value: 41000 } } },
            request: { http: { id: 'req-1', method: http.method ?? 'GET', path: http.path, host: 'api.example.com', scheme: 'https', headers: { ':authority': 'api.example.com', ':method': http.method ?? 'GET', ':path': http.path, ...UA, ...http.headers } } },
          },
        };
        client.makeUnaryRequest<Buffer, Answer>(check.path, (value) => value, (bytes) => check.responseDeserialize(bytes) as Answer, check.requestSerialize(request), new Metadata(), { deadline: Date.now() + 10_000 }, (error, answer) =>
          error || answer === undefined ? reject(error ?? new Error('no answer')) : resolve(answer),
        );
      }),
  };
}

const headersOf = (list: Array<{ header: { key: string; value: string } }> | undefined): Record<string, string> => Object.fromEntries((list ?? []).map((o) => [o.header.key, o.header.value]));
/** proto-loader decodes envoy.type.v3.StatusCode by name (enums: String); the contract test checks the numbers on the wire. */
const STATUS_NAMES: Record<string, number> = { BadRequest: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, MethodNotAllowed: 405, TooManyRequests: 429, InternalServerError: 500, ServiceUnavailable: 503 };
const deniedStatus = (answer: Answer): number => {
  const code = answer.denied_response?.status?.code;
  return typeof code === 'string' ? (STATUS_NAMES[code] ?? -1) : (code ?? 0);
};
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function credentialsOn(gw: StartedGateway): Promise<{ orgId: string; token: string; key: { id: string; apiKey: string } }> {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  return { orgId: org.id, token, key: await gw.createApiKey(token) };
}

t.test('settings: off unless AUTHGATE_AUTHZ_GRPC_PORT is set, a port of its own, the credential removed by default', async (t) => {
  t.same(testConfig().authzGrpc, { port: undefined, removeCredential: true });
  t.same(testConfig({ AUTHGATE_AUTHZ_GRPC_PORT: '9191', AUTHGATE_AUTHZ_REMOVE_CREDENTIAL: 'off' }).authzGrpc, { port: 9191, removeCredential: false });
  const errors = (env: Record<string, string>) => {
    const loaded = loadConfig({ AUTHGATE_JWT_SECRET: 'x'.repeat(40), AUTHGATE_ADMIN_TOKEN: 'y'.repeat(20), ...env });
    return loaded.ok ? [] : loaded.errors;
  };
  for (const port of ['8080', '9090']) t.match(errors({ AUTHGATE_AUTHZ_GRPC_PORT: port }), [/^AUTHGATE_AUTHZ_GRPC_PORT must differ/], port);
  t.match(errors({ AUTHGATE_AUTHZ_PORT: '9191', AUTHGATE_AUTHZ_GRPC_PORT: '9191' }), [/^AUTHGATE_AUTHZ_GRPC_PORT must differ/]);
  t.match(errors({ AUTHGATE_AUTHZ_REMOVE_CREDENTIAL: 'yes' }), [/^AUTHGATE_AUTHZ_REMOVE_CREDENTIAL /]);
  t.same(errors({ AUTHGATE_AUTHZ_PORT: '9191', AUTHGATE_AUTHZ_GRPC_PORT: '9192' }), []);
});

t.test('memory store: allow with the identity headers set, the credential and forged copies removed; refusals as denied_response', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_HOST: '127.0.0.1' } });
  const grpc = await grpcOf(t, gw);
  const { orgId, token, key } = await credentialsOn(gw);

  for (const [label, credential] of [['API key', key.apiKey], ['login token', token]] as const) {
    // A client's identity-family header: refused (issue 45), never only removed.
    const forged = await grpc.check({ path: '/accounts?page=2', headers: { ...bearer(credential), 'x-organization-id': 'org_forged', 'x-organization-plan': 'gold' } });
    t.equal(forged.denied_response?.status?.code, 'BadRequest', `${label}: a forged identity header is refused (400)`);
    t.match(JSON.parse(forged.denied_response?.body ?? '{}'), { code: 1234 }, `${label}: 1234`);
    const answer = await grpc.check({ path: '/accounts?page=2', headers: bearer(credential) });
    t.equal(answer.status?.code ?? 0, 0, `${label}: allowed`);
    t.notOk(answer.denied_response, `${label}: no denied_response`);
    const set = headersOf(answer.ok_response?.headers);
    t.equal(set['x-organization-id'], orgId, `${label}: x-organization-id set from the credential`);
    t.match(set['x-authgate-identity'], /^[\w-]+\.[\w-]+\.[\w-]+$/, `${label}: the signed identity assertion`);
    t.ok('x-organization-scopes' in set, `${label}: x-organization-scopes set`);
    t.same([...(answer.ok_response?.headers_to_remove ?? [])].sort(), ['authorization'], `${label}: the credential removed`);
  }

  const missing = await grpc.check({ path: '/accounts' });
  t.equal(missing.status?.code, 16, 'no credential: UNAUTHENTICATED');
  t.equal(deniedStatus(missing), 401);
  t.equal(headersOf(missing.denied_response?.headers)['www-authenticate'], 'Bearer realm="authgate"');
  t.equal(JSON.parse(missing.denied_response?.body ?? '{}').code, 1101, 'the public port\'s problem body');

  const invalid = await grpc.check({ path: '/accounts', headers: bearer('not-a-credential') });
  t.equal(deniedStatus(invalid), 401);
  t.match(headersOf(invalid.denied_response?.headers)['www-authenticate'], /error="invalid_token"/);

  const duplicate = await grpc.check({ path: '/accounts', headers: { authorization: `Bearer ${key.apiKey},Bearer ${key.apiKey}` } });
  t.equal(duplicate.status?.code === 0, false, 'two Authorization values (merged by Envoy with a comma): refused');
  t.equal(deniedStatus(duplicate), 401, 'as the public port answers a duplicate Authorization');

  const unknownPath = await grpc.check({ path: '/not-a-route', headers: bearer(key.apiKey) });
  t.equal(unknownPath.status?.code, 5, 'a path outside the table: NOT_FOUND');
  t.equal(deniedStatus(unknownPath), 404);

  const ambiguous = await grpc.check({ path: '/accounts/../admin', headers: bearer(key.apiKey) });
  t.equal(deniedStatus(ambiguous), 404, 'the path guard, as on the public port');

  const metrics = (await send(`${gw.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="ext_authz_grpc"[^}]*outcome="allowed"[^}]*\} 2/, 'decisions counted under protocol ext_authz_grpc');

  // A method override (issue 45): decided by the same function as on the HTTP endpoints and the public port.
  const override = await grpc.check({ path: '/accounts/7', headers: { ...bearer(key.apiKey), 'x-http-method-override': 'TRACE' } });
  t.equal(deniedStatus(override), 400, 'an override naming a method the route does not forward');
  t.equal(JSON.parse(override.denied_response?.body ?? '{}').code, 1235);
  const overridden = await grpc.check({ path: '/accounts/7', headers: { ...bearer(key.apiKey), 'x-http-method-override': 'DELETE' } });
  t.equal(overridden.status?.code ?? 0, 0, 'a key holding every scope: DELETE allowed too');
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="ext_authz_grpc"[^}]*outcome="denied"/);
  t.match(gw.logs.text(), /"protocol":"ext_authz_grpc"/, 'the access line names the protocol');
  t.notMatch(gw.logs.text(), key.apiKey, 'the credential is never logged');
});

t.test('a fault outside the decider: a denied 500, counted as an error, an access line with the trace Envoy passed on, the fault reported, nothing of it sent', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_HOST: '127.0.0.1' } });
  const SECRET = 'a defect org_secret_grpc_31';
  const grpc = await grpcOf(t, gw, { decide: () => Promise.reject(new Error(SECRET)) });
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const answer = await grpc.check({ path: '/accounts', headers: { ...bearer('agk_test_whatever'), traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
  t.equal(answer.status?.code, 13, 'INTERNAL, as a denial (never an RPC error)');
  t.equal(deniedStatus(answer), 500);
  t.equal(JSON.parse(answer.denied_response?.body ?? '{}').code, 1500, 'internalError');
  t.notOk(JSON.stringify(answer).includes('org_secret'), 'nothing of the fault sent');
  const metrics = (await send(`${gw.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_authz_decisions_total\{protocol="ext_authz_grpc",outcome="error",route="unmatched"[^}]*\} 1/, 'counted as an error');
  t.notOk(metrics.includes('org_secret'), 'in no label');
  const records = gw.logs.records();
  t.match(records.find((line) => line['reqId'] === 'req-1'), { msg: 'request', protocol: 'ext_authz_grpc', method: 'GET', route: 'unmatched', status: 500, trace_id: traceId }, 'the access line, in the trace Envoy passed on');
  t.match(records.filter((line) => line['event'] === 'authz.fault'), [{ protocol: 'ext_authz_grpc' }], 'the fault reported once');
  t.notOk(records.filter((line) => line['event'] !== 'authz.fault').some((line) => JSON.stringify(line).includes('org_secret')), 'and in no other line');
});

t.test('AUTHGATE_AUTHZ_REMOVE_CREDENTIAL=off keeps authorization; an untrusted transport peer is refused 403 without deciding', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_HOST: '127.0.0.1' } });
  const kept = await grpcOf(t, gw, { removeCredential: false });
  const { key } = await credentialsOn(gw);
  const allowed = await kept.check({ path: '/accounts', headers: bearer(key.apiKey) });
  t.equal(allowed.status?.code ?? 0, 0);
  t.same(allowed.ok_response?.headers_to_remove ?? [], []);

  const strict = await startGateway(t, { env: { AUTHGATE_AUTHZ_HOST: '127.0.0.1', AUTHGATE_AUTHZ_TRUSTED_PROXIES: '192.0.2.0/24' } });
  const grpc = await grpcOf(t, strict);
  const strictKey = (await credentialsOn(strict)).key;
  const before = (await send(`${strict.opsUrl}/metrics`)).body.match(/authgate_auth_decisions_total\{[^}]*\} \d+/g) ?? [];
  const refused = await grpc.check({ path: '/accounts', headers: bearer(strictKey.apiKey) });
  t.equal(refused.status?.code, 7, 'PERMISSION_DENIED');
  t.equal(deniedStatus(refused), 403);
  t.equal(JSON.parse(refused.denied_response?.body ?? '{}').code, 1114, 'authzUntrustedPeer');
  const after = (await send(`${strict.opsUrl}/metrics`)).body;
  t.same(after.match(/authgate_auth_decisions_total\{[^}]*\} \d+/g) ?? [], before, 'no credential was checked');
  t.match(after, /authgate_authz_decisions_total\{[^}]*protocol="ext_authz_grpc"[^}]*outcome="denied"[^}]*\} 1/, 'the refusal counted');
});

t.test('Redis: a key revoked on replica A is refused on replica B\'s gRPC port; a store that stops answering is a denied 503', async (t) => {
  const redis: RedisServer = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300', AUTHGATE_AUTHZ_HOST: '127.0.0.1' };
  const a = await startGateway(t, { upstream, env });
  const b = await startGateway(t, { upstream, env });
  for (const gw of [a, b]) {
    if (!(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50))) throw new Error('not ready');
  }
  const grpc = await grpcOf(t, b);
  const { token, key } = await credentialsOn(a);
  t.equal((await grpc.check({ path: '/accounts', headers: bearer(key.apiKey) })).status?.code ?? 0, 0, 'a key made on A is allowed on B (and now cached there)');

  const deleted = await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(token) } });
  t.equal(deleted.status, 204);
  // Bounded far below the cache TTL (60 s): only the revocation message can explain it.
  const refused = await eventually(async () => deniedStatus(await grpc.check({ path: '/accounts', headers: bearer(key.apiKey) })) === 401, 15_000, 5);
  t.ok(refused, 'revoked on A → denied 401 on B long before the cache TTL');

  // A key B has never seen must be read from the store, which no longer answers.
  const fresh = await a.createApiKey(token);
  redis.pause();
  t.teardown(() => redis.resume());
  const down = await grpc.check({ path: '/accounts', headers: bearer(fresh.apiKey) });
  redis.resume();
  t.equal(down.status?.code, 14, 'UNAVAILABLE as the rpc code of a denial, not an RPC error');
  t.equal(deniedStatus(down), 503);
  t.match(headersOf(down.denied_response?.headers)['retry-after'], /^\d+$/, 'retry-after');
  t.equal(JSON.parse(down.denied_response?.body ?? '{}').code, 1503, 'storeUnavailable');
  t.ok(await eventually(async () => ((await grpc.check({ path: '/accounts', headers: bearer(fresh.apiKey) })).status?.code ?? 0) === 0, 10_000, 20), 'allowed again once the store answers');
});

t.test('the built gateway (dist/main.js) serves Check on AUTHGATE_AUTHZ_GRPC_PORT, names it in the start line, and exits 0 on SIGTERM with Envoy\'s connection open', async (t) => {
  const grpcPort = await freePort();
  const gw = await startGatewayProcess({ AUTHGATE_AUTHZ_HOST: '127.0.0.1', AUTHGATE_AUTHZ_GRPC_PORT: String(grpcPort), AUTHGATE_SHUTDOWN_DELAY_SECONDS: '0', AUTHGATE_SHUTDOWN_GRACE_SECONDS: '5' });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  t.match(gw.output(), new RegExp(`"authzGrpcPort":${grpcPort}`), 'the start line names the port');
  const { orgId, token } = await createOrganizationAndLogin(gw, { name: 'Grpc Org', email: `grpc-${process.pid}@example.test` });
  const grpc = clientOf(t, grpcPort);
  const answer = await grpc.check({ path: '/accounts', headers: bearer(token) });
  t.equal(answer.status?.code ?? 0, 0, 'allowed');
  t.equal(headersOf(answer.ok_response?.headers)['x-organization-id'], orgId);
  const stoppingAt = Date.now();
  gw.child.kill('SIGTERM');
  const exit = await Promise.race([gw.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000).unref())]);
  t.same(exit, { code: 0, signal: null }, 'drained and exited 0 while the client still held its HTTP/2 connection');
  t.comment(`stopped in ${Date.now() - stoppingAt} ms`);
});
