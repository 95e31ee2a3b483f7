import t from 'tap';
import { assertProblem, injectGateway } from '../helpers/inject.js';
import { redisCommand, startRedis } from '../helpers/redis.js';

/**
 * lastUsedAt across two replicas on one real Redis: each replica notes uses in memory and writes
 * them once per flush, so hundreds of requests cost one write per key per flush, and the other
 * replica lists the use once it is written.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const HOUR = 3_600_000;

t.test('hundreds of requests on two replicas: one write per replica per flush, and each lists the latest use', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  let now = Date.parse('2030-01-01T00:00:00.000Z');
  // Flushed by the test (an hour apart otherwise), so the writes can be counted.
  const options = { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' }, deps: { now: () => now, keyUseFlushMs: HOUR } };
  const a = await injectGateway(t, options);
  const b = await injectGateway(t, options);
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const used = await a.createApiKey(token);
  const idle = await a.createApiKey(token);
  const listed = async (gw: typeof a) =>
    Object.fromEntries((await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json<{ keys: Array<{ id: string; lastUsedAt: string | null }> }>().keys.map((k) => [k.id, k.lastUsedAt]));
  t.same(await listed(b), { [used.id]: null, [idle.id]: null }, 'never used');

  const scriptCalls = async () => {
    const stats = String(await redisCommand(redis.port, 'INFO', 'commandstats'));
    return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  };
  // The audit events of the login and the key creations are written after their answers, by a
  // script: written out first, so they are not counted as a use's write.
  await a.gateway.audit.flush();
  await b.gateway.audit.flush();
  const before = await scriptCalls();
  await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).pub({ url: '/auth/api-key', headers: bearer(used.apiKey) })));
  t.equal(await scriptCalls(), before, '300 requests: no script ran (no write per request)');
  t.same(await listed(a), { [used.id]: '2030-01-01T00:00:00.000Z', [idle.id]: null }, "A lists its own use before it is written (this replica's news)");
  t.same(await listed(b), { [used.id]: '2030-01-01T00:00:00.000Z', [idle.id]: null }, 'and B its own');

  now += 90_000;
  t.equal((await b.pub({ url: '/auth/api-key', headers: bearer(used.apiKey) })).statusCode, 200, 'a later use on B');
  await a.gateway.keyUsage.flush();
  t.equal(await scriptCalls(), before + 1, "A's flush: one script for its organization");
  await b.gateway.keyUsage.flush();
  t.equal(await scriptCalls(), before + 2, "B's flush: one more");
  t.same(await listed(a), { [used.id]: '2030-01-01T00:01:30.000Z', [idle.id]: null }, 'A lists the latest use, made on B');
  const shown = await a.pub({ url: `/auth/api-key/${used.id}`, headers: bearer(token) });
  t.equal(shown.json().lastUsedAt, '2030-01-01T00:01:30.000Z', 'GET one key says it too');
  const admin = await a.ops({ url: `/admin/organizations/${org.id}/api-keys` });
  t.equal(admin.json().keys.find((k: { id: string }) => k.id === used.id).lastUsedAt, '2030-01-01T00:01:30.000Z', 'and the admin API');

  // An older use flushed later (A's clock behind) does not move it back.
  now -= 30_000;
  t.equal((await a.pub({ url: '/auth/api-key', headers: bearer(used.apiKey) })).statusCode, 200);
  await a.gateway.keyUsage.flush();
  const c = await injectGateway(t, options);
  t.same(await listed(c), { [used.id]: '2030-01-01T00:01:30.000Z', [idle.id]: null }, 'a third replica reads the latest from Redis');
});

t.test('uses written by the timer; a replica that closes writes what it noted', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const a = await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url }, deps: { keyUseFlushMs: 50 } });
  const b = await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url }, deps: { keyUseFlushMs: HOUR } });
  const { token, apiKey, keyId } = await a.signedUp();
  const started = Date.now();
  t.equal((await a.pub({ url: '/auth/api-key', headers: bearer(apiKey) })).statusCode, 200);
  const lastUsedOnB = async () => (await b.pub({ url: `/auth/api-key/${keyId}`, headers: bearer(token) })).json<{ lastUsedAt: string | null }>().lastUsedAt;
  let seen = await lastUsedOnB();
  for (let i = 0; i < 400 && seen === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    seen = await lastUsedOnB();
  }
  t.ok(seen !== null && Date.parse(seen) >= started - 1 && Date.parse(seen) <= Date.now(), `B lists A's use once A's timer wrote it: ${seen}`);

  const second = (await b.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token) })).json<{ id: string; apiKey: string }>();
  t.equal((await b.pub({ url: '/auth/api-key', headers: bearer(second.apiKey) })).statusCode, 200);
  await b.gateway.close(); // B's timer would not write for an hour: close() does
  const onA = (await a.pub({ url: `/auth/api-key/${second.id}`, headers: bearer(token) })).json<{ lastUsedAt: string | null }>();
  t.not(onA.lastUsedAt, null, 'what B noted before it closed is in Redis');
  assertProblem(t, await a.pub({ url: `/auth/api-key/${second.id}`, headers: bearer('agk_nope') }), 401, 1102);
});
