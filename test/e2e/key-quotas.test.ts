import t, { type Test } from 'tap';
import { periodOf } from '../../src/limits/quota.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { compiledTable } from '../helpers/route-tables.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { send, startGateway } from '../helpers/gateway.js';

/**
 * An API key's own quota (issue 47), within its organization's plan's, on real replicas sharing a
 * real Redis: validated on create and PATCH (above the plan's, another period, or a plan without a
 * quota: 400 1200); a parallel burst over two replicas at the key's boundary admits exactly the
 * key's quota while the organization has room, on both ports and over real HTTP (the fast lane
 * hands such a key to the framework); a roll carries it; a PATCH lowering or removing it holds on
 * both replicas; GET /auth/usage shows it.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const fileWithQuota = (requests: number | undefined): RoutesFile => ({
  ...BUILTIN_ROUTES_FILE,
  plans: { metered: { scopes: 'all', ...(requests !== undefined && { quota: { requests, per: 'day' as const } }) } },
  defaultPlan: 'metered',
});

async function twoReplicas(t: Test, requests: number | undefined, env: Record<string, string> = {}) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const shared = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '3000', AUTHGATE_UPSTREAM_URL: upstream.url, ...env };
  const deps = { routes: compiledTable(fileWithQuota(requests), upstream.url) };
  const a = await injectGateway(t, { env: shared, deps });
  const b = await injectGateway(t, { env: shared, deps });
  await until('both replicas subscribed', async () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed);
  return { upstream, a, b };
}

const forwarded = (gw: InjectedGateway, credential: string) => gw.pub({ url: '/accounts', headers: bearer(credential) });
const newKey = (gw: InjectedGateway, token: string, body: object) => gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: body });
const patchKey = (gw: InjectedGateway, token: string, id: string, body: object) => gw.pub({ method: 'PATCH', url: `/auth/api-key/${id}`, headers: bearer(token), payload: body });
const keyUsed = (gw: InjectedGateway, orgId: string, keyId: string | null) => gw.gateway.storage.store.readQuotaUsed(orgId, periodOf(Date.now(), 'day').name, keyId);

t.test("a key's quota on create and PATCH: only within its organization's plan's; shown in every key answer", async (t) => {
  const { a, b } = await twoReplicas(t, 100);
  const org = await a.signedUp();
  assertProblem(t, await newKey(a, org.token, { quota: { requests: 101, per: 'day' } }), 400, 1200, "above the plan's: 400 1200");
  assertProblem(t, await newKey(a, org.token, { quota: { requests: 10, per: 'month' } }), 400, 1200, "another period than the plan's: 400 1200");
  assertProblem(t, await newKey(a, org.token, { quota: { requests: 0, per: 'day' } }), 400, 1200, 'no requests: 400 1200');
  assertProblem(t, await newKey(a, org.token, { quota: { requests: 5, per: 'week' } }), 400, 1200, 'an unknown period: 400 1200');

  const created = await newKey(a, org.token, { quota: { requests: 100, per: 'day' } });
  t.equal(created.statusCode, 201, 'the plan\'s own quota is within it');
  const key = created.json() as { id: string; quota: unknown };
  t.strictSame(key.quota, { requests: 100, per: 'day' });
  const listed = (await b.pub({ url: '/auth/api-key', headers: bearer(org.token) })).json() as { keys: { id: string; quota: unknown }[] };
  t.strictSame(listed.keys.find((k) => k.id === key.id)?.quota, { requests: 100, per: 'day' }, 'listed with it, on the other replica too');
  t.equal(listed.keys.find((k) => k.id === org.keyId)?.quota, null, 'a key without one: null');

  assertProblem(t, await patchKey(b, org.token, key.id, { quota: { requests: 101, per: 'day' } }), 400, 1200, 'PATCH above the plan\'s: 400 1200');
  const lowered = await patchKey(b, org.token, key.id, { quota: { requests: 7, per: 'day' } });
  t.equal(lowered.statusCode, 200);
  t.strictSame((lowered.json() as { quota: unknown }).quota, { requests: 7, per: 'day' });
  const shown = (await a.pub({ url: `/auth/api-key/${key.id}`, headers: bearer(org.token) })).json() as { quota: unknown };
  t.strictSame(shown.quota, { requests: 7, per: 'day' }, 'GET on the other replica shows the change');
  const removed = await patchKey(a, org.token, key.id, { quota: null });
  t.equal((removed.json() as { quota: unknown }).quota, null, 'null removes it');
});

t.test("a plan without a quota: a key's own quota is refused (400 1200), nothing to narrow", async (t) => {
  const { a } = await twoReplicas(t, undefined);
  const org = await a.signedUp();
  assertProblem(t, await newKey(a, org.token, { quota: { requests: 5, per: 'day' } }), 400, 1200);
  assertProblem(t, await patchKey(a, org.token, org.keyId, { quota: { requests: 5, per: 'day' } }), 400, 1200);
});

t.test("a parallel burst over two replicas at the key's boundary admits exactly the key's quota while its organization has room; both ports", async (t) => {
  const quota = 15;
  const { upstream, a, b } = await twoReplicas(t, 1000, { AUTHGATE_AUTHZ_PORT: '0' });
  const org = await a.signedUp();
  const created = (await newKey(a, org.token, { quota: { requests: quota, per: 'day' } })).json() as { id: string; apiKey: string };
  // The organization's key first, on both replicas: each then holds a slice of the organization's
  // quota ahead, which the burst's key spends from (only the key's count asked of the store).
  for (const gw of [a, b, a, b]) t.equal((await forwarded(gw, org.apiKey)).statusCode, 200);
  // Three times the key's quota, all at once, half on each replica.
  const burst = await Promise.all(Array.from({ length: 3 * quota }, (_, i) => forwarded(i % 2 === 0 ? a : b, created.apiKey)));
  const admitted = burst.filter((res) => res.statusCode === 200);
  t.equal(admitted.length, quota, `exactly the key's quota admitted (${admitted.length})`);
  t.equal(upstream.requests.filter((request) => request.url === '/accounts').length, quota + 4, 'and exactly that many reached the upstream');
  for (const res of burst) {
    if (res.statusCode === 200) continue;
    const problem = assertProblem(t, res, 429, 1125);
    t.match(problem.detail, /API key's own quota allows 15 requests per day/);
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After to the day\'s end');
    t.match(String(res.headers['ratelimit-policy']), /"key-quota";q=15;w=86400/, "the RateLimit fields name the key's quota");
    t.match(String(res.headers['ratelimit']), /"key-quota";r=0;t=\d+/);
  }
  t.equal(await keyUsed(a, org.orgId, created.id), quota, "the key's count is its quota");
  await Promise.all([a.gateway.quotas.keeper.close(), b.gateway.quotas.keeper.close()]);
  t.equal(await keyUsed(a, org.orgId, null), quota + 4, "the organization's count: every admitted request once, what was held given back");

  const decide = (gw: InjectedGateway, credential: string) => gw.gateway.edge.decide({ protocol: 'auth_request', method: 'GET', target: '/accounts', authorization: [`Bearer ${credential}`], clientAddress: '127.0.0.1', clientHeaders: {}, identityHeaderSent: false, requestId: undefined });
  const denied = await decide(b, created.apiKey);
  t.notOk(denied.allowed, 'the authorization port refuses the key too');
  if (!denied.allowed) t.equal(denied.status, 429);
  t.equal((await forwarded(b, org.apiKey)).statusCode, 200, 'another key of the organization is still admitted');
  t.ok((await decide(a, org.apiKey)).allowed, 'on either port');

  // The authorization port spends the same count: a fresh key of 2.
  const small = (await newKey(a, org.token, { quota: { requests: 2, per: 'day' } })).json() as { id: string; apiKey: string };
  t.ok((await decide(a, small.apiKey)).allowed);
  t.equal((await forwarded(b, small.apiKey)).statusCode, 200);
  t.notOk((await decide(b, small.apiKey)).allowed, 'the third, on either port, is refused');
  assertProblem(t, await forwarded(a, small.apiKey), 429, 1125);
});

t.test("a roll carries the key's quota to its successor, which counts its own requests", async (t) => {
  const { a, b } = await twoReplicas(t, 1000);
  const org = await a.signedUp();
  const created = (await newKey(a, org.token, { quota: { requests: 3, per: 'day' } })).json() as { id: string };
  const rolled = await a.pub({ method: 'POST', url: `/auth/api-key/${created.id}/roll`, headers: bearer(org.token), payload: { graceSeconds: 0 } });
  t.equal(rolled.statusCode, 201);
  const successor = rolled.json() as { id: string; apiKey: string; quota: unknown };
  t.strictSame(successor.quota, { requests: 3, per: 'day' }, 'in the roll\'s answer');
  const shown = (await b.pub({ url: `/auth/api-key/${successor.id}`, headers: bearer(org.token) })).json() as { quota: unknown };
  t.strictSame(shown.quota, { requests: 3, per: 'day' }, 'and in its own, on the other replica');
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await forwarded(i % 2 === 0 ? a : b, successor.apiKey)).statusCode);
  t.strictSame(statuses, [200, 200, 200, 429], 'the successor is held to it');
});

t.test("a PATCH lowering the key's quota holds on both replicas; removing it leaves the organization's", async (t) => {
  const { a, b } = await twoReplicas(t, 1000);
  const org = await a.signedUp();
  const created = (await newKey(a, org.token, { quota: { requests: 100, per: 'day' } })).json() as { id: string; apiKey: string };
  for (const gw of [a, b, a]) t.equal((await forwarded(gw, created.apiKey)).statusCode, 200);
  t.equal((await patchKey(a, org.token, created.id, { quota: { requests: 3, per: 'day' } })).statusCode, 200);
  assertProblem(t, await forwarded(a, created.apiKey), 429, 1125, 'the replica that changed it: at once');
  await until('the other replica refuses', async () => (await forwarded(b, created.apiKey)).statusCode === 429);
  t.equal(await keyUsed(a, org.orgId, created.id), 3, 'nothing admitted past the lowered quota');

  const usage = (await b.pub({ url: `/auth/usage?keyId=${created.id}`, headers: bearer(org.token) })).json() as { keyQuota: unknown };
  t.strictSame(usage.keyQuota, { requests: 3, per: 'day', used: 3, left: 0 }, "GET /auth/usage with keyId: the key's quota used and left");

  t.equal((await patchKey(b, org.token, created.id, { quota: null })).statusCode, 200);
  t.equal((await forwarded(b, created.apiKey)).statusCode, 200, 'removed: admitted again');
  await until('the other replica admits', async () => (await forwarded(a, created.apiKey)).statusCode === 200);
  const after = (await a.pub({ url: `/auth/usage?keyId=${created.id}`, headers: bearer(org.token) })).json() as { keyQuota: unknown };
  t.equal(after.keyQuota, null, 'no quota of its own: null');
});

t.test("over real HTTP the fast lane hands a key with its own quota to the framework, which holds it to the quota", async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { upstream, deps: { routes: compiledTable(fileWithQuota(5000), upstream.url) } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const res = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { 'user-agent': 'authgate-test', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ quota: { requests: 4, per: 'day' } }),
  });
  t.equal(res.status, 201, 'created with its quota');
  const { apiKey } = res.json() as { apiKey: string };
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await gw.get('/accounts', bearer(apiKey))).status);
  t.strictSame(statuses, [200, 200, 200, 200, 429, 429]);
});
