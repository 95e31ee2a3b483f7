import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Rate limits on forwarded routes (limits/), on real replicas sharing a real Redis: the limit
 * holds across replicas under parallel bursts (never over it while Redis answers), the answers
 * carry RateLimit-Policy and RateLimit, a refusal is a 429 problem that never reaches the
 * upstream, overrides set on one replica apply on the other, and with Redis paused each replica
 * keeps to its local share.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function twoReplicas(t: Test, env: Record<string, string>) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  // A generous command timeout: on a busy machine a burst of 180 requests must not time Redis out
  // (a 503 is no answer about the limit); the paused-Redis test sets a short one of its own.
  const shared = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '3000', AUTHGATE_UPSTREAM_URL: upstream.url, ...env };
  const a = await injectGateway(t, { env: shared });
  const b = await injectGateway(t, { env: shared });
  await until('both replicas subscribed', async () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed);
  return { redis, upstream, a, b };
}

const forwarded = (gw: InjectedGateway, credential: string) => gw.pub({ url: '/accounts', headers: bearer(credential) });

t.test('two replicas, one limit: parallel bursts never admit more than the limit, and every refusal is a 429 that stays in the gateway', async (t) => {
  const limit = 60;
  const { upstream, a, b } = await twoReplicas(t, { AUTHGATE_RATE_LIMIT: `${limit}/1h` });
  const org = await a.signedUp();

  // Three times the limit, all at once, half on each replica.
  const burst = await Promise.all(Array.from({ length: 3 * limit }, (_, i) => forwarded(i % 2 === 0 ? a : b, org.apiKey)));
  const admitted = burst.filter((res) => res.statusCode === 200).length;
  t.ok(admitted <= limit, `the burst admitted ${admitted}, never more than ${limit}`);
  // What a replica leased and did not spend is lost to the other until the window ends: a few.
  t.ok(admitted >= limit - 10, `and not much less (${admitted})`);
  for (const res of burst) {
    if (res.statusCode === 200) continue;
    assertProblem(t, res, 429, 1110, 'over the limit');
    t.ok(Number(res.headers['retry-after']) > 3500, 'Retry-After: until the window ends');
    t.equal(res.headers['ratelimit-policy'], `"credential";q=${limit};w=3600`);
    t.match(res.headers['ratelimit'], /^"credential";r=0;t=\d+$/);
  }
  for (const res of burst.filter((r) => r.statusCode === 200)) {
    t.equal(res.headers['ratelimit-policy'], `"credential";q=${limit};w=3600`, 'the policy on every admitted answer');
    const [, remaining, reset] = /^"credential";r=(\d+);t=(\d+)$/.exec(String(res.headers['ratelimit'])) ?? [];
    t.ok(Number(remaining) <= limit && Number(reset) > 3500 && Number(reset) <= 3600, `RateLimit ${res.headers['ratelimit']}`);
  }

  // Drained one replica at a time: what either still held is spent, and then nothing more.
  for (const gw of [a, b]) for (let i = 0; i <= limit && (await forwarded(gw, org.apiKey)).statusCode === 200; i++);
  const reached = upstream.requests.filter((request) => request.url === '/accounts').length;
  t.equal(reached, limit, `exactly the limit reached the upstream over both replicas (${reached})`);
  for (const gw of [a, b]) assertProblem(t, await forwarded(gw, org.apiKey), 429, 1110, 'refused on both');

  // Another credential of the same organization has a window of its own; a login token too.
  t.equal((await forwarded(b, org.token)).statusCode, 200, 'the login token is limited apart from the key');
  const refusals = await a.gateway.metrics.registry.getSingleMetricAsString('authgate_rate_limit_refusals_total');
  t.match(refusals, /authgate_rate_limit_refusals_total\{[^}]*\} [1-9]/, 'refusals are counted');
  t.notOk(JSON.stringify([...a.logs.records(), ...b.logs.records()]).includes(org.apiKey), 'the key is in no log line');
});

t.test('overrides: an organization\'s limit and a key\'s own, set on one replica, apply on the other; a key never above its organization', async (t) => {
  const { a, b } = await twoReplicas(t, { AUTHGATE_RATE_LIMIT: '1000/60s' });
  const org = await a.signedUp();
  const policyOn = async (gw: InjectedGateway, credential: string) => (await forwarded(gw, credential)).headers['ratelimit-policy'];
  t.equal(await policyOn(b, org.apiKey), '"credential";q=1000;w=60', 'the default');

  // The organization's own, through the admin API of A; B applies it as soon as it hears.
  const set = await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: { rateLimit: '5/1m' } });
  t.equal(set.statusCode, 200);
  t.match(set.json(), { id: org.orgId, rateLimit: '5/60s', effectiveRateLimit: '5/60s' });
  await until('B applies the organization\'s limit', async () => (await policyOn(b, org.apiKey)) === '"credential";q=5;w=60');
  t.match((await a.ops({ url: `/admin/organizations/${org.orgId}` })).json(), { rateLimit: '5/60s', effectiveRateLimit: '5/60s' });

  // A key's own: only at or below the organization's.
  const above = await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: { rateLimit: '6/60s' } });
  assertProblem(t, above, 400, 1200, 'above the organization\'s');
  t.match(above.json<{ detail: string }>().detail, /not be above the organization's \(5\/60s\)/);
  for (const rateLimit of ['5/0s', '0/60s', 'lots', '5/60', '2000000000/1s', '5/25h', 'off', 5]) {
    assertProblem(t, await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: { rateLimit } }), 400, 1200, `rateLimit ${JSON.stringify(rateLimit)}`);
  }
  const created = await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: { rateLimit: '2/1m' } });
  t.equal(created.statusCode, 201);
  const key = created.json<{ id: string; apiKey: string; rateLimit: string }>();
  t.equal(key.rateLimit, '2/60s');
  await until('B applies the key\'s limit', async () => (await policyOn(b, key.apiKey)) === '"credential";q=2;w=60');
  t.equal((await forwarded(b, key.apiKey)).statusCode, 200);
  assertProblem(t, await forwarded(a, key.apiKey), 429, 1110, 'the key\'s own limit, across replicas: 2 then refused');
  const listed = (await b.pub({ url: `/auth/api-key/${key.id}`, headers: bearer(org.token) })).json<{ rateLimit: string | null }>();
  t.equal(listed.rateLimit, '2/60s', 'shown with the key');

  // PATCH: changed, and removed (null: the organization's again).
  const patched = await b.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(org.token), payload: { rateLimit: '4/2m' } });
  t.equal(patched.statusCode, 200);
  t.equal(patched.json<{ rateLimit: string }>().rateLimit, '4/120s');
  assertProblem(t, await b.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(org.token), payload: { rateLimit: '10/1m' } }), 400, 1200, 'PATCH above the organization\'s');
  t.equal((await b.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(org.token), payload: { rateLimit: null } })).json<{ rateLimit: null }>().rateLimit, null);
  await until('A applies the removal', async () => (await policyOn(a, key.apiKey)) === '"credential";q=5;w=60');

  // Rolled: the successor keeps the key's own limit.
  await b.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(org.token), payload: { rateLimit: '3/1m' } });
  const rolled = await b.pub({ method: 'POST', url: `/auth/api-key/${key.id}/roll`, headers: bearer(org.token), payload: { graceSeconds: 0 } });
  t.equal(rolled.json<{ rateLimit: string }>().rateLimit, '3/60s', 'the successor keeps it');
  await until('A sees the successor\'s limit', async () => (await policyOn(a, rolled.json<{ apiKey: string }>().apiKey)) === '"credential";q=3;w=60');

  // `off` exempts the organization from the default: no headers at all; null returns it to the default.
  t.match((await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: { rateLimit: 'off' } })).json(), { rateLimit: 'off', effectiveRateLimit: null });
  await until('B drops the limit', async () => (await forwarded(b, org.apiKey)).headers['ratelimit-policy'] === undefined);
  t.equal((await forwarded(b, org.apiKey)).headers['ratelimit'], undefined);
  t.match((await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: { rateLimit: null } })).json(), { rateLimit: null, effectiveRateLimit: '1000/60s' });
  await until('B applies the default again', async () => (await policyOn(b, org.apiKey)) === '"credential";q=1000;w=60');

  assertProblem(t, await a.ops({ method: 'PATCH', url: '/admin/organizations/org_missing', payload: { rateLimit: '5/1m' } }), 404, 1302, 'no such organization');
  for (const payload of [{ rateLimit: '5/1d' }, { rateLimit: 5 }, {}, { rateLimit: '5/1m', extra: true }]) {
    assertProblem(t, await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload }), 400, 1200, JSON.stringify(payload));
  }

  // Deleting the organization drops its overrides with it.
  const dropped = await a.signedUp();
  await a.ops({ method: 'PATCH', url: `/admin/organizations/${dropped.orgId}`, payload: { rateLimit: '7/1m' } });
  t.equal((await a.ops({ method: 'DELETE', url: `/admin/organizations/${dropped.orgId}` })).statusCode, 204);
  const table = await a.gateway.storage.store.readRateLimits();
  t.notOk(table.organizations.has(dropped.orgId), 'its override is gone from the store');
});

t.test('Redis paused: each replica keeps to its local share of the window; the credential check still fails closed for what is not cached', async (t) => {
  const limit = 40;
  const { redis, upstream, a, b } = await twoReplicas(t, { AUTHGATE_RATE_LIMIT: `${limit}/1h`, AUTHGATE_CACHE_TTL_SECONDS: '600', AUTHGATE_REDIS_TIMEOUT_MS: '300' });
  const org = await a.signedUp();
  const uncached = await b.login(org.email, org.password);
  // Both replicas draw on the window (so each knows there are two), and cache the key.
  for (let i = 0; i < 5; i++) for (const gw of [a, b]) t.equal((await forwarded(gw, org.apiKey)).statusCode, 200);

  redis.pause();
  t.teardown(() => redis.resume());
  const during = await Promise.all(Array.from({ length: 3 * limit }, (_, i) => forwarded(i % 2 === 0 ? a : b, org.apiKey)));
  const admitted = during.filter((res) => res.statusCode === 200).length;
  for (const res of during) if (res.statusCode !== 200) assertProblem(t, res, 429, 1110, 'over the local share');
  const reached = upstream.requests.filter((request) => request.url === '/accounts').length;
  t.ok(reached <= limit, `with Redis paused, both replicas together admitted ${reached} in the window: within the limit (each its share, ${limit / 2})`);
  t.ok(admitted > 0, `and served (${admitted}) rather than failing closed`);
  const leases = await a.gateway.metrics.registry.getSingleMetricAsString('authgate_rate_limit_leases_total');
  t.match(leases, /outcome="store_unavailable"[^}]*\} [1-9]/, 'the fallback is counted');

  // A credential no replica has cached cannot be checked: 503, as ever (fail closed).
  assertProblem(t, await forwarded(a, uncached), 503, 1503, 'an uncached token while Redis does not answer');
  redis.resume();
});

t.test('one gateway: no limit by default, the upstream\'s own RateLimit headers pass; a limited credential\'s answer carries the gateway\'s instead', async (t) => {
  const upstream = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ratelimit: '"upstream";r=1;t=1', 'ratelimit-policy': '"upstream";q=2;w=1' });
    response.end('{}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    upstream.close(() => resolve());
    upstream.closeAllConnections(); // the gateway keeps its connections to the upstream alive
  }));
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } });
  const org = await gw.signedUp();
  const open = await forwarded(gw, org.apiKey);
  t.equal(open.headers['ratelimit'], '"upstream";r=1;t=1', 'no gateway limit: the upstream\'s header passes');
  t.equal(open.headers['ratelimit-policy'], '"upstream";q=2;w=1');

  const key = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: { rateLimit: '3/10s' } })).json<{ apiKey: string }>();
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await forwarded(gw, key.apiKey));
  t.same(answers.map((res) => res.statusCode), [200, 200, 200, 429]);
  t.same(answers.map((res) => res.headers['ratelimit-policy']), Array(4).fill('"credential";q=3;w=10'), 'the gateway\'s policy replaces the upstream\'s');
  t.same(answers.map((res) => String(res.headers['ratelimit']).replace(/t=\d+/, 't=T')), ['"credential";r=2;t=T', '"credential";r=1;t=T', '"credential";r=0;t=T', '"credential";r=0;t=T']);
  t.match(answers[3]!.json(), { code: 1110, title: 'Rate limit exceeded', detail: /3 requests per 10 s; try again in \d+ s/ });
  t.ok(Number(answers[3]!.headers['retry-after']) >= 1 && Number(answers[3]!.headers['retry-after']) <= 10);
  // The gateway's own routes are not limited.
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(key.apiKey) })).headers['ratelimit'], undefined, 'gateway routes carry no limit');
});
