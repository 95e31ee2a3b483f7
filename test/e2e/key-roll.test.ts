import t, { type Test } from 'tap';
import { assertProblem, injectGateway, untilStatus } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Rolling a key (POST /auth/api-key/:id/roll) on two replicas sharing one real Redis, each a
 * whole gateway driven by inject() with one injected clock, so a grace of hours is crossed
 * without waiting. The rolled key is cached on both replicas before the roll.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function twoReplicas(t: Test, clock: () => number) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const options = { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' }, deps: { now: clock } };
  const a = await injectGateway(t, options);
  const b = await injectGateway(t, options);
  const subscribed = () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed;
  for (let i = 0; i < 400 && !subscribed(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.ok(subscribed(), 'both replicas trust their caches');
  return { a, b };
}

type Rolled = { id: string; apiKey: string; name: string | null; scopes: string[]; createdAt: string; expiresAt: string | null; rolled: { id: string; expiresAt: string } };


t.test('a key rolled on one replica: the successor has its name and scopes; both work on the other replica during the grace, only the successor after', async (t) => {
  let now = Date.parse('2029-12-31T23:59:00.000Z');
  const { a, b } = await twoReplicas(t, () => now);
  const org = await a.createOrganization();
  const token = await b.login(org.email, org.password);
  const made = await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { name: 'billing job', scopes: ['keys:read', 'accounts:read'] } });
  const old = made.json<{ id: string; apiKey: string }>();
  for (const gw of [a, b]) t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(old.apiKey) })).statusCode, 200, 'the old key works, and is cached, on each replica');
  now = Date.parse('2030-01-01T00:00:00.000Z'); // a minute later: the successor is the newer key

  const res = await a.pub({ method: 'POST', url: `/auth/api-key/${old.id}/roll`, headers: bearer(token), payload: { graceSeconds: 3600 } });
  t.equal(res.statusCode, 201, res.body);
  t.equal(res.headers['cache-control'], 'no-store');
  const rolled = res.json<Rolled>();
  t.match(rolled, { name: 'billing job', scopes: ['accounts:read', 'keys:read'], expiresAt: null, rolled: { id: old.id, expiresAt: '2030-01-01T01:00:00.000Z' } });
  t.not(rolled.id, old.id);
  t.match(rolled.apiKey, /^agk_(live|test)_[0-9a-z]{3}_[0-9A-Za-z]{36}$/);

  for (const gw of [a, b]) {
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(rolled.apiKey) })).statusCode, 200, 'the successor works on each replica');
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(old.apiKey) })).statusCode, 200, 'so does the rolled key, during its grace');
  }
  const listed = (await b.pub({ url: '/auth/api-key', headers: bearer(token) })).json<{ keys: Array<{ id: string; name: string; expiresAt: string | null }> }>();
  t.match(listed.keys, [{ id: rolled.id, name: 'billing job', expiresAt: null }, { id: old.id, name: 'billing job', expiresAt: '2030-01-01T01:00:00.000Z' }], 'B lists both, the successor first');

  now = Date.parse('2030-01-01T01:00:00.000Z') - 1;
  // B dropped its cached copy of the old key when the roll was announced: it read the new end.
  const stillCached = await untilStatus(b, old.apiKey, 200);
  t.equal(stillCached.statusCode, 200, 'a millisecond before the grace ends');
  now = Date.parse('2030-01-01T01:00:00.000Z');
  for (const gw of [a, b]) {
    const refused = await gw.pub({ url: '/auth/api-key', headers: bearer(old.apiKey) });
    t.match(assertProblem(t, refused, 401, 1102, 'the rolled key once its grace is over').detail, /expired/);
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(rolled.apiKey) })).statusCode, 200, 'the successor goes on');
  }
  const audit = a.logs.records().filter((line) => line.event === 'api_key.rolled' || line.event === 'api_key.created');
  t.match(audit.at(-2), { event: 'api_key.rolled', orgId: org.id, keyId: old.id, successorId: rolled.id, expiresAt: '2030-01-01T01:00:00.000Z' });
  t.match(audit.at(-1), { event: 'api_key.created', orgId: org.id, keyId: rolled.id, rolledFrom: old.id });
  t.notOk(a.logs.text().includes(rolled.apiKey) || a.logs.text().includes(old.apiKey), 'no secret in any log line');
});

t.test('graceSeconds 0 revokes the rolled key at once, on every replica; a grace never extends a key that ends sooner', async (t) => {
  const now = Date.parse('2030-01-01T00:00:00.000Z');
  const { a, b } = await twoReplicas(t, () => now);
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const old = (await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token) })).json<{ id: string; apiKey: string }>();
  t.equal((await b.pub({ url: '/auth/api-key', headers: bearer(old.apiKey) })).statusCode, 200, 'cached on B');
  const res = await a.pub({ method: 'POST', url: `/auth/api-key/${old.id}/roll`, headers: bearer(token), payload: { graceSeconds: 0 } });
  t.equal(res.statusCode, 201);
  t.match(res.json(), { rolled: { id: old.id, expiresAt: '2030-01-01T00:00:00.000Z' } });
  assertProblem(t, await untilStatus(b, old.apiKey, 401), 401, 1102, 'revoked on B');
  assertProblem(t, await a.pub({ url: `/auth/api-key/${old.id}`, headers: bearer(token) }), 404, 1301, 'and gone');

  // A key that expires in 10 minutes, rolled with the default grace (24 h): it still ends in 10 minutes,
  // and its successor gets its lifetime (10 minutes) from now.
  const short = (await a.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { expiresIn: 600 } })).json<{ id: string }>();
  const rolledShort = (await b.pub({ method: 'POST', url: `/auth/api-key/${short.id}/roll`, headers: bearer(token) })).json<Rolled>();
  t.match(rolledShort, { expiresAt: '2030-01-01T00:10:00.000Z', rolled: { id: short.id, expiresAt: '2030-01-01T00:10:00.000Z' } });
  const own = (await b.pub({ method: 'POST', url: `/auth/api-key/${rolledShort.id}/roll`, headers: bearer(token), payload: { expiresIn: 86_400, graceSeconds: 60 } })).json<Rolled>();
  t.match(own, { expiresAt: '2030-01-02T00:00:00.000Z', rolled: { expiresAt: '2030-01-01T00:01:00.000Z' } }, 'the successor may be given its own end');
});

t.test('who may roll what: a login token, its own keys, a grace of at most 7 days', async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const other = await gw.signedUp();
  const key = await gw.createApiKey(token);
  const roll = (id: string, credential: string, payload?: object) =>
    gw.pub({ method: 'POST', url: `/auth/api-key/${id}/roll`, headers: bearer(credential), ...(payload !== undefined && { payload }) });
  assertProblem(t, await roll(key.id, key.apiKey), 403, 1103, 'with an API key');
  assertProblem(t, await roll(key.id, other.token), 404, 1301, "another organization's key");
  assertProblem(t, await roll('key_00000000000000000000000000000000', token), 404, 1301, 'an unknown key');
  for (const payload of [{ graceSeconds: 604_801 }, { graceSeconds: -1 }, { graceSeconds: 1.5 }, { graceSeconds: '60' }, { grace: 60 }, { expiresIn: 10 }, { expiresAt: 'tomorrow' }, { expiresIn: 600, expiresAt: '2099-01-01T00:00:00Z' }]) {
    assertProblem(t, await roll(key.id, token, payload), 400, 1200, JSON.stringify(payload));
  }
  t.equal((await gw.pub({ url: `/auth/api-key/${key.id}`, headers: bearer(token) })).json().expiresAt, null, 'no refused roll changed the key');
  const ok = await roll(key.id, token, { graceSeconds: 604_800 });
  t.equal(ok.statusCode, 201, 'seven days');
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json().keys.length, 2);
});
