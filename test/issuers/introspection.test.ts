// Opaque provider tokens by RFC 7662 introspection (issue 49) against a real OpenID provider on
// loopback (panva's oidc-provider issuing opaque client-credentials tokens and answering
// introspection and revocation): active on both ports with the organization injected, inactive,
// revoked at the provider (refused once the configured bound has passed), the endpoint down (503
// with Retry-After, then recovery), a parallel burst of one token (one call), and the client
// secret never in a log line, an error body or the metrics.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { listenExtAuthzGrpc } from '../../src/edge-authz/grpc/listen.js';
import { authorizationService } from '../../src/edge-authz/grpc/server.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { listenAuthz } from '../helpers/authz.js';
import { ADMIN_TOKEN, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { INTROSPECTION_PATH, startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const API = 'https://api.example.test';
const CLIENT_ID = 'authgate-introspector';
const SECRET = `s3cret-${randomBytes(12).toString('hex')}`;

function secretFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'authgate-introspection-')), 'client-secret');
  writeFileSync(path, `${SECRET}\n`, { mode: 0o600 });
  return path;
}

function routesFile(provider: TestProvider, clientSecretFile: string, bounds: { cacheSeconds?: number; inactiveCacheSeconds?: number } = {}): RoutesFile {
  return {
    version: 1,
    scopes: { 'orders:read': 'Read orders', 'orders:write': 'Place orders' },
    issuers: {
      corp: {
        issuer: provider.issuer,
        audiences: [API],
        organization: { claim: 'org_id' },
        introspection: { url: `${provider.issuer}${INTROSPECTION_PATH}`, clientId: CLIENT_ID, clientSecretFile, timeoutSeconds: 2, ...bounds },
      },
    },
    routes: [
      { id: 'orders', path: '/orders', match: 'subtree', credentials: ['api_key', 'login_token', 'issuer:corp'], methods: { GET: 'orders:read', POST: 'orders:write' } },
      { id: 'own', path: '/own', match: 'subtree', credentials: ['api_key', 'login_token'], methods: { GET: 'orders:read' } },
    ],
  };
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never: ${what}`);
}

async function setUp(t: Test, bounds: { cacheSeconds?: number; inactiveCacheSeconds?: number } = {}) {
  const provider = await startTestProvider({ introspection: { clientId: CLIENT_ID, clientSecret: SECRET } });
  t.teardown(() => provider.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0' }, upstream, deps: { routes: tableOf(routesFile(provider, secretFile(), bounds), upstream.url) } });
  const authz = await listenAuthz(gw);
  const org = await gw.createOrganization();
  const externalId = `org_${randomUUID().slice(0, 8)}`;
  const patched = await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ externalIds: { corp: externalId } }) });
  t.equal(patched.status, 200, patched.body);
  const bearer = (token: string) => ({ ...UA, authorization: `Bearer ${token}` });
  return {
    provider,
    upstream,
    gw,
    org,
    externalId,
    token: (scope?: string) => provider.token({ org: externalId, resource: API, ...(scope !== undefined && { scope }) }),
    get: (path: string, token: string) => gw.get(path, bearer(token)),
    edge: (uri: string, token: string, method = 'GET') => send(`${authz.url}/authz/auth-request`, { headers: { 'x-original-method': method, 'x-original-uri': uri, ...bearer(token) } }),
  };
}

type GrpcAnswer = {
  ok_response?: { headers?: Array<{ header: { key: string; value: string } }> };
  denied_response?: { status?: { code?: number | string }; headers?: Array<{ header: { key: string; value: string } }> };
};

/** Envoy ext_authz over gRPC (the gateway's own listener, as main.ts starts it): Check for a GET of `path` with the token. */
async function grpcCheck(t: Test, gw: StartedGateway): Promise<(path: string, token: string) => Promise<GrpcAnswer>> {
  const server = await listenExtAuthzGrpc(gw.gateway.edge, { authz: { port: undefined, host: '127.0.0.1', trustedProxies: [], cacheSeconds: 0 }, authzGrpc: { port: 0, removeCredential: true } }, gw.gateway.logger);
  if (server === undefined) throw new Error('no listener');
  t.teardown(() => server.close());
  const client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  t.teardown(() => client.close());
  const check = authorizationService()['Check']!;
  return (path, token) =>
    new Promise((resolve, reject) => {
      const headers = { ':authority': 'api.example.com', ':method': 'GET', ':path': path, ...UA, authorization: `Bearer ${token}` };
      const request = { attributes: { source: { address: { socket_address: { address: '203.0.113.7', port_value: 41000 } } }, request: { http: { id: 'req-1', method: 'GET', path, host: 'api.example.com', scheme: 'https', headers } } } };
      client.makeUnaryRequest<Buffer, GrpcAnswer>(check.path, (value) => value, (bytes) => check.responseDeserialize(bytes) as GrpcAnswer, check.requestSerialize(request), new Metadata(), { deadline: Date.now() + 10_000 }, (error, answer) =>
        error || answer === undefined ? reject(error ?? new Error('no answer')) : resolve(answer),
      );
    });
}
const headersOf = (list: Array<{ header: { key: string; value: string } }> | undefined): Record<string, string> => Object.fromEntries((list ?? []).map((o) => [o.header.key, o.header.value]));

async function metric(gw: StartedGateway, line: string): Promise<number> {
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const found = text.split('\n').find((l) => l.startsWith(line));
  return found === undefined ? 0 : Number(found.slice(found.lastIndexOf(' ') + 1));
}

t.test('an opaque token: active on both ports, inactive refused, a burst costs one call', async (t) => {
  const { provider, upstream, gw, org, token, get, edge } = await setUp(t);
  const active = await token();
  t.notOk(active.includes('.'), 'the provider issues opaque tokens');

  const first = await get('/orders/1', active);
  t.equal(first.status, 200, first.body);
  const seen = upstream.requests.at(-1)!;
  t.equal(seen.headers['x-organization-id'], org.id, 'the organization injected');
  t.notOk(JSON.stringify(seen.headers).includes(active), 'the token never reaches the upstream');
  t.equal((await edge('/orders/2', active)).status, 200, 'the authorization port');
  const grpc = await grpcCheck(t, gw);
  const allowed = await grpc('/orders/2', active);
  t.equal(headersOf(allowed.ok_response?.headers)['x-organization-id'], org.id, 'ext_authz over gRPC: allowed, the organization injected');
  const write = await send(`${gw.publicUrl}/orders/3`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${active}` } });
  t.equal(write.status, 403, 'without orders:write: the scope check as for keys');
  t.equal((await edge('/orders/3', active, 'POST')).status, 403, 'the same on the authorization port');

  const before = provider.introspectionsServed();
  const fresh = await token();
  const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? get(`/orders/burst-${i}`, fresh) : edge(`/orders/burst-${i}`, fresh))));
  t.same(burst.map((res) => res.status), burst.map(() => 200), 'every request of the burst allowed');
  t.equal(provider.introspectionsServed() - before, 1, 'one introspection call for 24 parallel requests on both ports');

  const onOwn = provider.introspectionsServed();
  const own = await get('/own/1', `opaque-${randomBytes(24).toString('base64url')}`);
  t.equal(own.status, 401, 'an opaque token on a route that does not take issuer:corp');
  t.equal((await edge('/own/1', `opaque-${randomBytes(24).toString('base64url')}`)).status, 401);
  t.equal(provider.introspectionsServed(), onOwn, 'is never sent to the provider');
  const warm = await get('/own/2', active);
  t.equal(warm.status, 403, "an opaque token answered active for another route: this one does not take the issuer's tokens, as for a JWT");
  t.equal(warm.json().code, 1141);

  const made = `opaque-${randomBytes(24).toString('base64url')}`;
  const inactive = await get('/orders/4', made);
  t.equal(inactive.status, 401, 'a token the provider does not know: active false');
  t.equal(inactive.json().code, 1102);
  t.equal((await edge('/orders/4', made)).status, 401, 'the same on the authorization port');
  const calls = provider.introspectionsServed();
  t.equal((await get('/orders/5', made)).status, 401, 'asked again: still refused');
  t.equal(provider.introspectionsServed(), calls, 'from the brief inactive cache: no second call');
  t.ok((await metric(gw, 'authgate_issuer_introspections_total{issuer="corp",result="inactive"')) >= 1, 'calls counted by result');
  t.ok((await metric(gw, 'authgate_issuer_token_refusals_total{issuer="corp",reason="inactive"')) >= 1, 'refusals counted by reason');

  const login = await gw.login(org.email, org.password);
  t.equal((await get('/orders/6', login)).status, 200, "authgate's own login token is not taken for an opaque one");
  const { apiKey } = await gw.createApiKey(login);
  const keyCalls = provider.introspectionsServed();
  t.equal((await get('/orders/7', apiKey)).status, 200, 'nor is an API key');
  t.equal(provider.introspectionsServed(), keyCalls, 'neither was sent to the provider');
});

t.test('revoked at the provider: refused once the cache bound has passed', async (t) => {
  const { provider, externalId, token, get, edge } = await setUp(t, { cacheSeconds: 1, inactiveCacheSeconds: 1 });
  const revoked = await token();
  t.equal((await get('/orders/1', revoked)).status, 200);
  await provider.revoke(revoked, externalId);
  let refused: Response | undefined;
  await waitFor(async () => {
    refused = await get('/orders/2', revoked);
    return refused.status === 401;
  }, 'refused after cacheSeconds');
  t.equal(refused!.json().code, 1102);
  t.equal((await edge('/orders/3', revoked)).status, 401, 'the authorization port too');
  t.equal((await get('/orders/4', revoked)).status, 401, 'and it stays refused');
});

t.test('the endpoint down: 503 with Retry-After on both ports, never a 200; then recovery', async (t) => {
  const { provider, gw, token, get, edge } = await setUp(t);
  const seenBefore = await token();
  t.equal((await get('/orders/1', seenBefore)).status, 200);
  const unseen = await token();
  await provider.stop();

  const down = await get('/orders/2', unseen);
  t.equal(down.status, 503, down.body);
  t.equal(down.json().code, 1541);
  t.ok(Number(down.headers['retry-after']) >= 1, 'Retry-After');
  const edgeDown = await edge('/orders/2', unseen);
  t.equal(edgeDown.status, 503, 'the authorization port too');
  t.ok(Number(edgeDown.headers['retry-after']) >= 1, 'with Retry-After');
  const grpc = await grpcCheck(t, gw);
  const grpcDown = await grpc('/orders/2', unseen);
  t.ok(grpcDown.ok_response === undefined && ['ServiceUnavailable', 503].includes(grpcDown.denied_response?.status?.code ?? 0), 'ext_authz over gRPC: denied 503, never allowed');
  t.ok(Number(headersOf(grpcDown.denied_response?.headers)['retry-after']) >= 1, 'with retry-after');
  t.equal((await get('/orders/3', seenBefore)).status, 200, 'a token answered active before is kept within its bound');
  const junk = `opaque-${randomBytes(24).toString('base64url')}`;
  const own = await get('/own/1', junk);
  t.equal(own.status, 401, 'a route that takes no issuer of opaque tokens: an unknown token is 401 as ever, not 503');
  t.equal(own.json().code, 1102);
  t.equal((await edge('/own/1', junk)).status, 401, 'the same on the authorization port');
  t.ok((await metric(gw, 'authgate_issuer_introspections_total{issuer="corp",result="error"')) >= 1, 'the failed calls counted');
  t.ok((await metric(gw, 'authgate_issuer_token_refusals_total{issuer="corp",reason="introspection_unavailable"')) >= 1);

  await provider.start();
  await waitFor(async () => (await get('/orders/4', unseen)).status === 200, 'recovered once the endpoint answers');
  t.equal((await edge('/orders/5', unseen)).status, 200);
  t.ok((await grpc('/orders/5', unseen)).ok_response !== undefined, 'and over gRPC');

  const everything = [gw.logs.text(), down.body, edgeDown.body, (await send(`${gw.opsUrl}/metrics`)).body].join('\n');
  t.ok(gw.logs.lines.length > 0, 'the gateway logged');
  t.notOk(everything.includes(SECRET), 'the client secret is in no log line, error body or metric');
  t.notOk(everything.includes(Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')), 'nor its Basic form');
});

t.test('a wrong client secret is a 503, never a 401; the secret rotated in its file is applied by a reload', async (t) => {
  const provider = await startTestProvider({ introspection: { clientId: CLIENT_ID, clientSecret: SECRET } });
  t.teardown(() => provider.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const path = secretFile();
  writeFileSync(path, 'not-the-secret\n');
  const file = routesFile(provider, path);
  const gw = await startGateway(t, { upstream, deps: { routes: tableOf(file, upstream.url) } });
  const org = await gw.createOrganization();
  t.equal((await send(`${gw.opsUrl}/admin/organizations/${org.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ externalIds: { corp: 'org_rotated' } }) })).status, 200);
  const token = await provider.token({ org: 'org_rotated', resource: API });
  const get = () => gw.get('/orders/1', { ...UA, authorization: `Bearer ${token}` });
  const wrong = await get();
  t.equal(wrong.status, 503, 'the provider refuses the client (invalid_client): the token could not be checked');
  t.equal(wrong.json().code, 1541);

  writeFileSync(path, `${SECRET}\n`);
  gw.gateway.routes.swap(tableOf(file, upstream.url)); // what a reload does: the file read, compiled, swapped in
  const right = await get();
  t.equal(right.status, 200, right.body);
  t.equal(upstream.requests.at(-1)!.headers['x-organization-id'], org.id);
  t.notOk(gw.logs.text().includes(SECRET) || gw.logs.text().includes('not-the-secret'), 'neither secret in a log line');
});
