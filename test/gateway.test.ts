import t from 'tap';
import { buildGateway } from '../src/gateway.js';
import { createLocalInvalidationBus } from '../src/store/invalidation.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { StoreUnavailable } from '../src/store/store.js';
import { testConfig } from './helpers/gateway.js';
import { assertProblem, injectGateway, UNREACHABLE_UPSTREAM } from './helpers/inject.js';
import { captureLogs } from './helpers/log-capture.js';

/** gateway.ts, the composition root: two servers that never listen on their own, built from what it is given. */

t.test('builds two servers that do not listen; main.ts (or a test) does', async (t) => {
  const gw = await injectGateway(t);
  t.equal(gw.gateway.publicServer.server.listening, false);
  t.equal(gw.gateway.opsServer.server.listening, false);
  t.equal((await gw.pub({ url: '/nowhere' })).statusCode, 404, 'and yet they answer by inject');
});

t.test('uses the storage it is handed, and tells its bus of revocations', async (t) => {
  const store = createMemoryStore();
  const bus = createLocalInvalidationBus();
  let closes = 0;
  const storage = { store: { ...store, close: async () => (closes++, store.close()) }, bus };
  const gw = await injectGateway(t, { deps: { storage } });
  const { orgId, keyId } = await gw.signedUp();
  t.ok(await store.findOrganizationById(orgId), 'the organization is in the store handed in');
  const me = await gw.signedUp();
  // Listening only now: a key's creation is announced on the bus too (issue 45, unknown keys).
  const heard: string[] = [];
  bus.onInvalidation((invalidation) => heard.push(invalidation === 'all' ? 'all' : invalidation.map((r) => r.kind).join()));
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${me.keyId}`, headers: { authorization: `Bearer ${me.token}` } })).statusCode, 204);
  t.same(heard, ['api_key'], 'the revocation went through the bus handed in');
  t.not(keyId, me.keyId);
  await Promise.all([gw.gateway.close(), gw.gateway.close()]);
  t.equal(closes, 1, 'close() is idempotent, and closes the store once');
});

t.test('reads time from the clock it is handed: a token expires when that clock says so', async (t) => {
  let now = Date.parse('2026-06-01T00:00:00Z');
  const gw = await injectGateway(t, { deps: { now: () => now }, env: { AUTHGATE_TOKEN_TTL_SECONDS: '60' } });
  const { token } = await gw.signedUp();
  t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } })).statusCode, 200);
  now += 61_000;
  const expired = await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } });
  const body = assertProblem(t, expired, 401, 1102);
  t.match(body.detail, /expired/);
});

t.test('without an upstream in the config, the one handed in is used; with neither, it refuses to build', async (t) => {
  const config = testConfig();
  t.equal(config.upstream.url, undefined, 'the test config names no upstream');
  const built = await buildGateway(config, { logDestination: captureLogs().destination, upstreamUrl: UNREACHABLE_UPSTREAM });
  await built.close();
  await t.rejects(buildGateway(config, { logDestination: captureLogs().destination }), /no upstream/);
});

/** A series' value in the Prometheus text (the first line with every label given), 0 when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([key, v]) => line.includes(`${key}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

t.test('wires the metrics: store calls timed by operation, revocations sent, a failing store counted and answered 503', async (t) => {
  const store = createMemoryStore();
  let failing = false;
  const storage = {
    store: { ...store, findApiKeyByHash: (hash: string) => (failing ? Promise.reject(new StoreUnavailable('store down')) : store.findApiKeyByHash(hash)) },
    bus: createLocalInvalidationBus(),
  };
  const gw = await injectGateway(t, { deps: { storage }, env: { AUTHGATE_CACHE_TTL_SECONDS: '0', AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS: '0' } });
  const { apiKey, token } = await gw.signedUp();
  const spare = await gw.createApiKey(token);
  const metrics = async () => (await gw.ops({ url: '/metrics', bare: true })).body;

  const before = await metrics();
  t.ok(value(before, 'authgate_store_command_duration_seconds_count', { operation: 'create_organization' }) >= 1, 'store calls are timed by operation');
  t.ok(value(before, 'authgate_store_command_duration_seconds_count', { operation: 'create_session' }) >= 1);

  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${spare.id}`, headers: { authorization: `Bearer ${token}` } })).statusCode, 204);
  t.equal(value(await metrics(), 'authgate_invalidations_sent_total') - value(before, 'authgate_invalidations_sent_total'), 1, 'one revocation sent');

  failing = true;
  const res = await gw.pub({ url: '/accounts', headers: { authorization: `Bearer ${apiKey}` } });
  assertProblem(t, res, 503, 1503, 'the store did not answer');
  t.equal(res.headers['retry-after'], '1');
  const after = await metrics();
  t.equal(value(after, 'authgate_store_errors_total', { operation: 'find_api_key' }), 1, 'the failure counted by operation');
  t.equal(value(after, 'authgate_auth_decisions_total', { kind: 'api_key', outcome: 'error', reason: 'store_unavailable' }), 1, 'and as an auth decision');
  t.notOk(res.body.includes('store down'), 'the backend message is not echoed');
});
