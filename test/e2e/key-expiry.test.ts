import t from 'tap';
import { startRedis } from '../helpers/redis.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * An API key's expiry on two replicas sharing one real Redis, each a whole gateway driven by
 * inject() with one injected clock (a key lives at least 60 s: no test waits for that). The key
 * is cached on both; at its expiresAt both refuse it, with nothing written to the store and
 * nothing announced on the revocation channel.
 */

t.test('a key expires on every replica at its expiresAt, from their caches, without a store write', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  let clock = Date.parse('2030-01-01T00:00:00.000Z');
  const options = { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' }, deps: { now: () => clock } };
  const a = await injectGateway(t, options);
  const b = await injectGateway(t, options);
  const subscribed = async () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed;
  for (let i = 0; i < 200 && !(await subscribed()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.ok(await subscribed(), 'both replicas use their caches');

  const org = await a.createOrganization();
  const token = await b.login(org.email, org.password);
  const res = await a.pub({ method: 'POST', url: '/auth/api-key', headers: { authorization: `Bearer ${token}` }, payload: { name: 'nightly job', expiresIn: 120 } });
  t.equal(res.statusCode, 201);
  const key = res.json<{ id: string; apiKey: string; expiresAt: string }>();
  t.equal(key.expiresAt, '2030-01-01T00:02:00.000Z');
  const get = (gw: typeof a) => gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${key.apiKey}` } });

  for (const gw of [a, b]) t.equal((await get(gw)).statusCode, 200, 'works, and is cached, on each replica');
  const listed = (await b.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } })).json<{ keys: Array<{ id: string; name: string; expiresAt: string }> }>();
  t.match(listed.keys.find((k) => k.id === key.id), { name: 'nightly job', expiresAt: key.expiresAt }, 'B lists what A made');

  clock = Date.parse(key.expiresAt) - 1;
  for (const gw of [a, b]) t.equal((await get(gw)).statusCode, 200, 'a millisecond before its expiresAt');
  clock = Date.parse(key.expiresAt);
  for (const gw of [a, b]) {
    const refused = await get(gw);
    const body = assertProblem(t, refused, 401, 1102, 'at its expiresAt');
    t.match(refused.headers['www-authenticate'], /error="invalid_token"/);
    t.match(body.detail, /expired/);
  }
  const fresh = await injectGateway(t, options);
  assertProblem(t, await get(fresh), 401, 1102, 'a third replica, reading it from Redis');
  const stored = await a.gateway.storage.store.listApiKeys(org.id);
  t.match(stored.find((k) => k.id === key.id), { name: 'nightly job', expiresAt: Date.parse(key.expiresAt) }, 'still stored and listed: nothing was written');
});
