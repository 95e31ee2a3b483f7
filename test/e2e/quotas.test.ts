import t, { type Test } from 'tap';
import { periodOf } from '../../src/limits/quota.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { dayOf } from '../../src/store/usage.js';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { compiledTable } from '../helpers/route-tables.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { startGateway } from '../helpers/gateway.js';

/**
 * Plans' quotas and usage figures (issue 47) on real replicas sharing a real Redis: a parallel
 * burst over two replicas at the quota's boundary admits exactly the quota; refused requests
 * spend nothing; a route's cost; the period's rollover by a clock the test moves; Redis gone,
 * a request that needs the store is refused (503), never admitted; the authorization port spends
 * the same quota; the usage figures are the requests made.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const fileWithQuota = (requests: number): RoutesFile => ({
  ...BUILTIN_ROUTES_FILE,
  plans: { metered: { scopes: 'all', quota: { requests, per: 'day' } } },
  defaultPlan: 'metered',
  routes: [
    ...BUILTIN_ROUTES_FILE.routes,
    { id: 'export', path: '/export', match: 'exact', credentials: ['login_token', 'api_key'], methods: { POST: 'accounts:write' }, cost: 10 },
    { id: 'people-only', path: '/people-only', match: 'exact', credentials: ['login_token'], methods: { GET: 'accounts:read' } },
  ],
});

async function twoReplicas(t: Test, requests: number, env: Record<string, string> = {}) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  // The clock both replicas read: the tests move it past the day's end.
  const clock = { offset: 0 };
  const now = () => Date.now() + clock.offset;
  const shared = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '3000', AUTHGATE_UPSTREAM_URL: upstream.url, ...env };
  const deps = { routes: compiledTable(fileWithQuota(requests), upstream.url), now };
  const a = await injectGateway(t, { env: shared, deps });
  const b = await injectGateway(t, { env: shared, deps });
  await until('both replicas subscribed', async () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed);
  return { redis, upstream, a, b, clock, now };
}

const forwarded = (gw: InjectedGateway, credential: string) => gw.pub({ url: '/accounts', headers: bearer(credential) });
const used = (gw: InjectedGateway, orgId: string, at: number) => gw.gateway.storage.store.readQuotaUsed(orgId, periodOf(at, 'day').name, null);
/** What the store counted once both replicas gave back what they held ahead (leases count when granted). */
async function spent(a: InjectedGateway, b: InjectedGateway, orgId: string, at: number): Promise<number> {
  await Promise.all([a.gateway.quotas.keeper.close(), b.gateway.quotas.keeper.close()]);
  return used(a, orgId, at);
}

t.test('a parallel burst over two replicas at the quota\'s boundary admits exactly the quota; every refusal is a 429 1125 that stays in the gateway', async (t) => {
  const quota = 40;
  const { upstream, a, b, now } = await twoReplicas(t, quota);
  const org = await a.signedUp();
  // Three times the quota, all at once, half on each replica.
  const burst = await Promise.all(Array.from({ length: 3 * quota }, (_, i) => forwarded(i % 2 === 0 ? a : b, org.apiKey)));
  const admitted = burst.filter((res) => res.statusCode === 200);
  t.equal(admitted.length, quota, `exactly the quota admitted (${admitted.length})`);
  t.equal(upstream.requests.filter((request) => request.url === '/accounts').length, quota, 'and exactly the quota reached the upstream');
  const toEnd = Math.ceil((periodOf(now(), 'day').endsAt - now()) / 1000);
  for (const res of burst) {
    if (res.statusCode === 200) {
      t.equal(res.headers['ratelimit-policy'], `"quota";q=${quota};w=86400`);
      t.match(String(res.headers['ratelimit']), /^"quota";r=\d+;t=\d+$/);
      continue;
    }
    assertProblem(t, res, 429, 1125, 'past the quota');
    const retry = Number(res.headers['retry-after']);
    t.ok(retry >= toEnd - 5 && retry <= toEnd + 5, `Retry-After ${retry}: to the day's end (${toEnd})`);
    t.equal(res.headers['ratelimit-policy'], `"quota";q=${quota};w=86400`);
    t.match(String(res.headers['ratelimit']), /^"quota";r=0;t=\d+$/);
  }
  for (const gw of [a, b]) assertProblem(t, await forwarded(gw, org.token), 429, 1125, 'the organization\'s other credentials too');
  t.equal(await used(a, org.orgId, now()), quota, 'the store counted the quota, no more');
  const refusals = await a.gateway.metrics.registry.getSingleMetricAsString('authgate_quota_refusals_total');
  t.match(refusals, /authgate_quota_refusals_total\{[^}]*plan="metered"[^}]*\} [1-9]/, 'refusals counted by plan');
  t.notMatch(refusals, new RegExp(org.orgId), 'never by organization');
});

t.test('refused requests spend nothing; a route\'s cost; the day\'s end starts a new quota; usage figures are the requests made', async (t) => {
  const { a, b, clock, now } = await twoReplicas(t, 25, { AUTHGATE_RATE_LIMIT: '3/1h' });
  const org = await a.signedUp();
  const day = now();
  // A key without the route's scope: refused for scope, nothing spent.
  const narrow = await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: { scopes: ['organization:read'] } });
  t.equal(narrow.statusCode, 201);
  const narrowKey = narrow.json<{ apiKey: string; id: string }>();
  assertProblem(t, await forwarded(b, narrowKey.apiKey), 403, 1106, 'no scope');
  assertProblem(t, await a.pub({ url: '/people-only', headers: bearer(org.apiKey) }), 403, 1103, 'a route for login tokens only');
  t.equal(await spent(a, b, org.orgId, day), 0, 'a scope or credential refusal spends nothing');
  // The key's rate limit (3 an hour): the fourth is refused by it, and spends nothing.
  for (let i = 0; i < 3; i++) t.equal((await forwarded(a, org.apiKey)).statusCode, 200);
  assertProblem(t, await forwarded(a, org.apiKey), 429, 1110, 'rate limited');
  t.equal(await spent(a, b, org.orgId, day), 3, 'only the admitted requests spent');
  // cost 10: two exports take 20 of the 22 left; a third does not fit (2 left) and spends nothing.
  for (let i = 0; i < 2; i++) t.equal((await b.pub({ method: 'POST', url: '/export', headers: bearer(org.token) })).statusCode, 200, 'an export');
  assertProblem(t, await b.pub({ method: 'POST', url: '/export', headers: bearer(org.token) }), 429, 1125, 'a cost above what is left');
  t.equal(await spent(a, b, org.orgId, day), 23, '3 + 2 × 10');

  await Promise.all([a.gateway.quotas.usage.flush(), b.gateway.quotas.usage.flush()]);
  const [figures] = await a.gateway.storage.store.readUsage({ orgId: org.orgId, granularity: 'day', from: dayOf(day), to: dayOf(day) });
  t.strictSame(figures?.counts, { admitted: 5, credential: 1, scope: 1, rate_limit: 1, quota: 1 }, 'the day\'s figures: the requests made');
  const [keyFigures] = await a.gateway.storage.store.readUsage({ orgId: org.orgId, keyId: org.keyId, granularity: 'hour', from: day, to: day });
  t.strictSame(keyFigures?.counts, { admitted: 3, credential: 1, scope: 0, rate_limit: 1, quota: 0 }, 'the key\'s hour');

  // The day ends: a new quota, on both replicas (the clock moved, nothing else). A key of its
  // own: the login token would have expired, the first key's rate limit is spent.
  const later = await a.createApiKey(org.token);
  clock.offset += periodOf(now(), 'day').endsAt - now() + 1000;
  t.equal((await b.pub({ method: 'POST', url: '/export', headers: bearer(later.apiKey) })).statusCode, 200, 'the next day: an export again');
  t.equal(await spent(a, b, org.orgId, now()), 10, 'the new day counted from zero');
});

t.test('the authorization port spends the same quota as the public port', async (t) => {
  const { a, b } = await twoReplicas(t, 4, { AUTHGATE_AUTHZ_PORT: '0' });
  const org = await a.signedUp();
  const decide = (gw: InjectedGateway) => gw.gateway.edge.decide({ protocol: 'auth_request', method: 'GET', target: '/accounts', authorization: [`Bearer ${org.apiKey}`], clientAddress: '127.0.0.1', clientHeaders: {}, identityHeaderSent: false, requestId: undefined });
  const first = await decide(a);
  t.ok(first.allowed, 'allowed');
  if (first.allowed) t.match(first.upstreamHeaders['ratelimit'], /^"quota";r=\d+;t=\d+$/);
  t.equal((await forwarded(b, org.apiKey)).statusCode, 200);
  t.ok((await decide(b)).allowed);
  t.equal((await forwarded(a, org.apiKey)).statusCode, 200);
  const fifth = await decide(a);
  t.notOk(fifth.allowed, 'the fifth, on either port, is refused');
  if (!fifth.allowed) t.equal(fifth.status, 429);
  assertProblem(t, await forwarded(b, org.apiKey), 429, 1125, 'and on the public port');
});

t.test('Redis paused: a request that must ask the store is refused with 503, never admitted', async (t) => {
  const { redis, a } = await twoReplicas(t, 1000, { AUTHGATE_REDIS_TIMEOUT_MS: '300' });
  const org = await a.signedUp();
  t.equal((await forwarded(a, org.apiKey)).statusCode, 200, 'while Redis answers');
  const other = await a.signedUp();
  t.equal((await forwarded(a, other.apiKey)).statusCode, 200, 'its key cached');
  await a.gateway.quotas.keeper.close(); // nothing held any more: the next request must lease
  redis.pause();
  t.teardown(() => redis.resume());
  const res = await forwarded(a, other.apiKey);
  assertProblem(t, res, 503, 1503, 'the quota could not be asked');
  redis.resume();
});

t.test('no plans: no quota, no RateLimit fields of one, and usage still counted', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url }, deps: { routes: compiledTable(BUILTIN_ROUTES_FILE, upstream.url) } });
  const org = await gw.signedUp();
  for (let i = 0; i < 5; i++) {
    const res = await forwarded(gw, org.apiKey);
    t.equal(res.statusCode, 200);
    t.equal(res.headers['ratelimit-policy'], undefined);
  }
  await gw.gateway.quotas.usage.flush();
  const [figures] = await gw.gateway.storage.store.readUsage({ orgId: org.orgId, keyId: org.keyId, granularity: 'day', from: dayOf(Date.now()), to: dayOf(Date.now()) });
  t.equal(figures?.counts.admitted, 5);
});

t.test('GET /auth/usage and GET /admin/organizations/:id/usage: the figures of the requests made and this period\'s quota; every bad query a 400', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url }, deps: { routes: compiledTable(fileWithQuota(100), upstream.url) } });
  const org = await gw.signedUp();
  for (let i = 0; i < 4; i++) t.equal((await forwarded(gw, org.apiKey)).statusCode, 200);
  t.equal((await forwarded(gw, org.token)).statusCode, 200);
  const narrow = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: { scopes: ['organization:read'] } })).json<{ apiKey: string; id: string }>();
  assertProblem(t, await forwarded(gw, narrow.apiKey), 403, 1106, 'no scope');
  await gw.gateway.quotas.usage.flush();
  await gw.gateway.quotas.keeper.close();

  const mine = await gw.pub({ url: '/auth/usage', headers: bearer(org.token) });
  t.equal(mine.statusCode, 200, mine.body);
  const report = mine.json<{ buckets: { start: string; admitted: number; scope: number }[]; quota: { used: number; left: number; requests: number; plan: string } }>();
  t.equal(report.buckets.length, 30, 'the last 30 days');
  t.strictSame({ admitted: report.buckets[29]!.admitted, scope: report.buckets[29]!.scope }, { admitted: 5, scope: 1 }, 'today: the requests made');
  t.strictSame({ ...report.quota, periodStart: undefined, periodEnd: undefined }, { plan: 'metered', requests: 100, per: 'day', periodStart: undefined, periodEnd: undefined, used: 5, left: 95 });
  const byKey = (await gw.pub({ url: `/auth/usage?granularity=hour&keyId=${org.keyId}`, headers: bearer(org.apiKey) })).json<{ buckets: { admitted: number }[] }>();
  t.equal(byKey.buckets.length, 24);
  t.equal(byKey.buckets[23]!.admitted, 4, 'the key\'s hour, read with the key itself (keys:read)');
  assertProblem(t, await gw.pub({ url: '/auth/usage', headers: bearer(narrow.apiKey) }), 403, 1106, 'a key without keys:read');
  for (const query of ['granularity=week', 'from=yesterday', 'from=2026-12-07&to=2026-12-01', 'from=2000-01-01', 'to=2999-01-01', 'keyId=nope', 'colour=blue', 'granularity=hour&from=2000-01-01T00:00:00Z']) {
    assertProblem(t, await gw.pub({ url: `/auth/usage?${query}`, headers: bearer(org.token) }), 400, 1200, query);
  }
  const admin = await gw.ops({ url: `/admin/organizations/${org.orgId}/usage?granularity=day` });
  t.equal(admin.statusCode, 200);
  t.strictSame(admin.json(), report, 'the admin API sees the same');
  t.equal((await gw.ops({ url: '/admin/organizations/00000000-0000-4000-8000-000000000000/usage' })).statusCode, 404);
});

t.test('the fast lane spends what the replica holds, hands the rest to the framework, and never admits past the quota', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  // 5000 a day: a slice of 50 leased ahead while far from the end, so most requests take the lane.
  const gw = await startGateway(t, { upstream, deps: { routes: compiledTable(fileWithQuota(5000), upstream.url) } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  const answers = [];
  for (let i = 0; i < 120; i++) answers.push(await gw.get('/accounts', bearer(apiKey)));
  t.ok(answers.every((res) => res.status === 200), 'all admitted');
  t.ok(answers.every((res) => /^"quota";q=5000;w=86400$/.test(String(res.headers['ratelimit-policy']))), 'the quota\'s policy on every answer, either way');
  const lane = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_fast_lane_requests_total');
  const taken = [...lane.matchAll(/authgate_fast_lane_requests_total\{[^}]*\} (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  t.ok(taken >= 60, `the lane took most of them (${taken} of 120)`);
  await gw.gateway.quotas.keeper.close();
  t.equal(await gw.gateway.storage.store.readQuotaUsed(org.id, periodOf(Date.now(), 'day').name, null), 120, 'each spent once, whichever way it went');
});
