import t, { type Test } from 'tap';
import { ADMIN_TOKEN, UA, eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { Redis } from 'ioredis';
import { redisCommand, startRedis, startTcpProxy, type RedisServer } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const json = { 'content-type': 'application/json' };

async function twoReplicas(t: Test, redis: RedisServer, env: Record<string, string> = {}): Promise<[StartedGateway, StartedGateway]> {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const options = { upstream, env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300', ...env } };
  return [await startGateway(t, options), await startGateway(t, options)];
}

async function ready(gw: StartedGateway): Promise<void> {
  if (!(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50))) throw new Error('not ready');
}

/** A metric's value (its one series) from /metrics; undefined when it is not there. */
async function metric(gw: StartedGateway, name: string): Promise<number | undefined> {
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const UNSUBSCRIBED = 'unsubscribed (serving from Redis without cache)';
const readiness = async (gw: StartedGateway) => {
  const res = await send(`${gw.opsUrl}/readyz`);
  return { status: res.status, invalidation: res.json().invalidation as unknown };
};
const subscribed = async (gw: StartedGateway) =>
  (await readiness(gw)).invalidation === 'subscribed' && (await metric(gw, 'authgate_invalidation_subscribed')) === 1;
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

t.test('two replicas on one Redis share credentials and revocations', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const [a, b] = await twoReplicas(t, redis);
  await ready(a);
  await ready(b);
  const org = await a.createOrganization();
  const token = await b.login(org.email, org.password);
  const key = await a.createApiKey(token);

  t.equal((await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'a key made on A works on B');
  t.equal((await a.get('/accounts', { authorization: `Bearer ${token}` })).status, 200, 'a login on B works on A');
  t.equal((await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'now cached on B');

  const deleted = await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(deleted.status, 204);
  const startedAt = Date.now();
  // Bounded far below the cache TTL (60 s), so only the revocation message can explain it, and far
  // above what a loaded machine takes: the benchmark, not this test, measures how fast it is.
  const revokedOnB = await eventually(async () => (await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status === 401, 15_000, 5);
  t.ok(revokedOnB, `deleted on A → 401 on B long before the cache TTL (${Date.now() - startedAt} ms)`);

  t.equal((await b.get('/accounts', { authorization: `Bearer ${token}` })).status, 200, 'the token is cached on B');
  t.equal((await send(`${a.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 204);
  t.ok(await eventually(async () => (await b.get('/accounts', { authorization: `Bearer ${token}` })).status === 401, 15_000, 5), 'logout on A → 401 on B long before the cache TTL');

  const second = await a.login(org.email, org.password);
  const key2 = await a.createApiKey(second);
  t.equal((await b.get('/accounts', { authorization: `Bearer ${key2.apiKey}` })).status, 200);
  t.equal((await send(`${b.opsUrl}/admin/organizations/${org.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 204);
  t.ok(await eventually(async () => (await a.get('/accounts', { authorization: `Bearer ${key2.apiKey}` })).status === 401, 15_000, 5), 'organization deleted on B → its key 401 on A');
  t.equal((await a.get('/accounts', { authorization: `Bearer ${second}` })).status, 401, 'and its token');
});

t.test('concurrency: one e-mail on two replicas; 50 parallel key creates and deletes', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const [a, b] = await twoReplicas(t, redis);
  await ready(a);
  await ready(b);
  const body = JSON.stringify({ name: 'Race', email: 'race@example.test', password: 'long-enough-password' });
  const create = (gw: StartedGateway) => send(`${gw.opsUrl}/admin/organizations`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...json }, body });
  const statuses = (await Promise.all([create(a), create(b)])).map((r) => r.status).sort();
  t.same(statuses, [201, 409], 'exactly one 201 and one 409');

  const token = await a.login('race@example.test', 'long-enough-password');
  const auth = { ...UA, authorization: `Bearer ${token}` };
  const created = await Promise.all(
    Array.from({ length: 50 }, (_, i) => send(`${(i % 2 === 0 ? a : b).publicUrl}/auth/api-key`, { method: 'POST', headers: auth })),
  );
  t.ok(created.every((r) => r.status === 201), '50 keys created');
  const ids = created.map((r) => r.json().id as string);
  const toDelete = ids.filter((_, i) => i % 3 === 0);
  const deletions = await Promise.all([
    ...toDelete.map((id, i) => send(`${(i % 2 === 0 ? b : a).publicUrl}/auth/api-key/${id}`, { method: 'DELETE', headers: auth })),
    ...toDelete.map((id, i) => send(`${(i % 2 === 0 ? a : b).publicUrl}/auth/api-key/${id}`, { method: 'DELETE', headers: auth })),
  ]);
  const codes = deletions.map((r) => r.status);
  t.equal(codes.filter((c) => c === 204).length, toDelete.length, 'each key deleted exactly once');
  t.equal(codes.filter((c) => c === 404).length, toDelete.length, 'the racing second delete is a 404');
  const listed = await b.get('/auth/api-key', { authorization: `Bearer ${token}` });
  const listedIds = (listed.json().keys as Array<{ id: string }>).map((k) => k.id).sort();
  t.same(listedIds, ids.filter((id) => !toDelete.includes(id)).sort(), 'the listing is exactly the keys left');
});

t.test('fail closed when Redis is down, recover by itself when it returns', async (t) => {
  // AOF, so the data is still there when the same server comes back.
  const redis = await startRedis({ appendonly: true, args: ['--appendfsync', 'always'] });
  t.teardown(() => redis.stop());
  const [a] = await twoReplicas(t, redis, { AUTHGATE_CACHE_TTL_SECONDS: '6' }); // room for the checks below on a loaded machine
  await ready(a);
  t.ok(await eventually(() => subscribed(a), 10_000, 50), 'subscribed: the cache is in use');
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const cachedKey = await a.createApiKey(token);
  const uncachedKey = await a.createApiKey(token);
  t.equal((await a.get('/accounts', { authorization: `Bearer ${cachedKey.apiKey}` })).status, 200, 'this key is now cached');
  const before = a.upstream.requests.length;

  await redis.kill();
  // Its revocation channel went with it: from now on nothing is served from the cache, since a
  // replica cannot tell Redis being gone from its own partition while others still revoke.
  t.ok(await eventually(async () => (await readiness(a)).invalidation === UNSUBSCRIBED, 5000, 10), 'unsubscribed');
  const started = Date.now();
  const uncached = await a.get('/accounts', { authorization: `Bearer ${uncachedKey.apiKey}` });
  t.equal(uncached.status, 503, 'a credential not in the cache: 503, never 401 or 200');
  // Redis stays down far longer than this bound: a command queued for the reconnect would hang.
  t.ok(Date.now() - started < 10_000, `no hang (${Date.now() - started} ms)`);
  t.equal(uncached.json().code, 1503);
  t.ok(Number(uncached.headers['retry-after']) >= 1);
  t.equal((await a.get('/accounts', { authorization: `Bearer ${cachedKey.apiKey}` })).status, 200, 'a cached credential is served within its cache TTL: no replica can revoke it while Redis is down');
  const login = await send(`${a.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, ...json }, body: JSON.stringify({ email: org.email, password: org.password }) });
  t.equal(login.status, 503, 'login needs the store');
  t.equal((await send(`${a.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 503, 'key creation needs the store');
  t.equal((await a.get('/auth/api-key', { authorization: `Bearer ${token}` })).status, 503, 'so does listing');
  t.equal((await send(`${a.publicUrl}/auth/api-key/${uncachedKey.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 503);
  t.ok(await eventually(async () => (await send(`${a.opsUrl}/readyz`)).status === 503, 20_000, 100), 'not ready while the store is down');
  t.ok(await eventually(async () => (await a.get('/accounts', { authorization: `Bearer ${cachedKey.apiKey}` })).status === 503, 30_000, 100), 'after the cache TTL, cached credentials are 503 too');
  const seen = a.upstream.requests.length;
  t.equal((await a.get('/accounts', { authorization: `Bearer ${uncachedKey.apiKey}` })).status, 503);
  t.equal((await a.get('/accounts', { authorization: `Bearer ${token}x` })).status, 401, 'a token that fails its signature needs no store: still 401');
  t.equal(a.upstream.requests.length, seen, 'nothing unchecked reached the upstream');
  t.ok(seen > before, 'only the cached credential was forwarded during the outage');

  await redis.restart();
  const recovered = await eventually(async () => (await a.get('/accounts', { authorization: `Bearer ${uncachedKey.apiKey}` })).status === 200, 10_000, 100);
  t.ok(recovered, 'recovers within 10 s without a restart');
  t.ok(await eventually(async () => (await send(`${a.opsUrl}/readyz`)).status === 200, 20_000, 100), 'ready again');
  t.ok(await eventually(() => subscribed(a), 20_000, 50), 'and subscribed again');
  t.ok(!a.logs.text().includes(cachedKey.apiKey), 'no secret in the outage log lines');
});

t.test('keys and sessions survive a gateway restart, and a Redis restart with AOF', async (t) => {
  const redis = await startRedis({ appendonly: true, args: ['--appendfsync', 'always'] });
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url };
  const first = await startGateway(t, { upstream, env });
  await ready(first);
  const org = await first.createOrganization();
  const token = await first.login(org.email, org.password);
  const key = await first.createApiKey(token);
  await first.gateway.close();

  await redis.restart();
  const second = await startGateway(t, { upstream, env });
  await ready(second);
  t.equal((await second.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'the key survived');
  t.equal((await second.get('/accounts', { authorization: `Bearer ${token}` })).status, 200, 'the session survived');
  t.equal((await second.get('/auth/api-key', { authorization: `Bearer ${token}` })).json().keys.length, 1);
});

t.test('a Redis that may evict credentials is warned about at start', async (t) => {
  const redis = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
  t.teardown(() => redis.stop());
  const [a] = await twoReplicas(t, redis);
  await ready(a);
  t.ok(await eventually(async () => a.logs.records().some((r) => r['event'] === 'redis_eviction_risk' && r['policy'] === 'allkeys-lru'), 20_000), 'warned');
  // The store logs it and calls onEvictionRisk in one step, so a second line would be here by now.
  t.equal(a.logs.records().filter((r) => r['policy'] === 'allkeys-lru').length, 1, 'warned in one log line');
});

t.test("a replica whose Redis user may not subscribe reads every credential from Redis, and says so", async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  // Redis 7 gives new users no channel at all (acl-pubsub-default resetchannels): commands yes, SUBSCRIBE no.
  const password = 'no-channel-password-0123';
  await redisCommand(redis.port, 'ACL', 'SETUSER', 'nochan', 'on', `>${password}`, '~*', '+@all', 'resetchannels');
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_TIMEOUT_MS: '300' };
  const a = await startGateway(t, { upstream, env: { ...env, AUTHGATE_REDIS_URL: redis.url } });
  const b = await startGateway(t, { upstream, env: { ...env, AUTHGATE_REDIS_URL: `redis://nochan:${password}@127.0.0.1:${redis.port}` } });
  await ready(a);
  await ready(b);
  t.ok(await eventually(() => subscribed(a), 10_000, 50), 'A is subscribed');
  t.ok(await eventually(async () => b.logs.records().some((r) => r['event'] === 'invalidation_subscribe_failed'), 10_000, 50), 'B logged the refusal');
  t.strictSame(await readiness(b), { status: 200, invalidation: UNSUBSCRIBED }, 'B stays ready (it answers correctly, only slower) and says why');
  t.equal(await metric(b, 'authgate_invalidation_subscribed'), 0);

  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = await a.createApiKey(token);
  for (let i = 0; i < 3; i++) {
    t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 200, 'the key works on B');
    t.equal((await b.get('/accounts', bearer(token)) ).status, 200, 'so does the token');
  }
  t.equal(await metric(b, 'authgate_credential_cache_hits_total'), 0, 'B served none of them from its cache');

  const deleted = await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(token) } });
  t.equal(deleted.status, 204);
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 401, 'revoked on A: 401 on B at once, without any message');
  t.equal((await send(`${a.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, ...bearer(token) } })).status, 204);
  t.equal((await b.get('/accounts', bearer(token))).status, 401, 'logged out on A: 401 on B at once');

  const second = await a.login(org.email, org.password);
  const kept = await a.createApiKey(second);
  const refused = await send(`${b.publicUrl}/auth/api-key/${kept.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(second) } });
  t.equal(refused.status, 503, 'B cannot announce a revocation, so it does not commit one');
  t.equal((await a.get('/accounts', bearer(kept.apiKey))).status, 200, 'the key is still there');
  t.equal(b.logs.records().filter((r) => r['event'] === 'invalidation_subscribe_failed').length, 1, 'the refusal was logged once');

  await redisCommand(redis.port, 'ACL', 'SETUSER', 'nochan', 'allchannels');
  t.ok(await eventually(() => subscribed(b), 30_000, 100), 'once allowed, B subscribes (its retry backs off, never stops)');
  const hits = (await metric(b, 'authgate_credential_cache_hits_total')) ?? 0;
  t.equal((await b.get('/accounts', bearer(kept.apiKey))).status, 200);
  t.equal((await b.get('/accounts', bearer(kept.apiKey))).status, 200);
  t.ok(((await metric(b, 'authgate_credential_cache_hits_total')) ?? 0) > hits, 'and caches again');
  t.equal((await send(`${b.publicUrl}/auth/api-key/${kept.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(second) } })).status, 204, 'and revokes');
  t.ok(await eventually(async () => (await a.get('/accounts', bearer(kept.apiKey))).status === 401, 5000, 10), 'which reaches A');
  t.notOk(b.logs.text().includes(password), 'the Redis password is in no log line');
});

t.test('subscriber connection killed while the command connection lives: the other replica never serves a revoked credential', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const [a, b] = await twoReplicas(t, redis);
  await ready(a);
  await ready(b);
  t.ok(await eventually(() => subscribed(a), 10_000, 50) && await eventually(() => subscribed(b), 10_000, 50), 'both subscribed');
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = await a.createApiKey(token);
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 200);
  t.equal((await b.get('/accounts', bearer(token))).status, 200);
  const hits = (await metric(b, 'authgate_credential_cache_hits_total')) ?? 0;
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 200);
  t.equal((await b.get('/accounts', bearer(token))).status, 200);
  t.equal(await metric(b, 'authgate_credential_cache_hits_total'), hits + 2, 'B has both in its cache');

  // One connection of our own for the rest: once Redis is at maxclients, it takes no new one.
  const admin = new Redis(redis.port, '127.0.0.1');
  t.teardown(() => admin.disconnect());
  const subscribers = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).trim().split('\n').length;
  t.equal(subscribers, 2, "the two replicas' subscriber connections");
  // The subscribers are killed and cannot come back (max number of clients reached: Redis keeps
  // the connections it has and refuses new ones), while every command connection stays up: the
  // window in which a revocation message goes unheard, held open for as long as the test needs.
  await admin.config('SET', 'maxclients', '1');
  t.teardown(() => admin.config('SET', 'maxclients', '10000').catch(() => {}));
  await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  t.ok(await eventually(async () => b.logs.records().some((r) => r['event'] === 'invalidation_subscription_lost'), 10_000, 10), 'B noticed');
  t.equal(
    b.logs.records().filter((r) => /subscription lost|channel lost/.test(String(r['msg']))).length,
    1,
    'the loss is logged in one line',
  );

  t.equal((await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(token) } })).status, 204);
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 401, 'deleted on A while B hears nothing: 401 on B');
  t.equal((await send(`${a.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, ...bearer(token) } })).status, 204);
  t.equal((await b.get('/accounts', bearer(token))).status, 401, 'logged out on A: 401 on B');
  t.strictSame(await readiness(b), { status: 200, invalidation: UNSUBSCRIBED }, 'B is ready and says it is unsubscribed');
  t.equal(await metric(b, 'authgate_invalidation_subscribed'), 0);
  t.equal(String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).trim(), '', 'still no subscriber connection');

  const second = await a.login(org.email, org.password);
  const fresh = await a.createApiKey(second);
  const before = (await metric(b, 'authgate_credential_cache_hits_total')) ?? 0;
  t.equal((await b.get('/accounts', bearer(fresh.apiKey))).status, 200);
  t.equal((await b.get('/accounts', bearer(fresh.apiKey))).status, 200);
  t.equal(await metric(b, 'authgate_credential_cache_hits_total'), before, 'meanwhile B caches nothing');

  await admin.config('SET', 'maxclients', '10000');
  t.ok(await eventually(() => subscribed(b), 15_000, 50), 'B subscribes again');
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 401, 'the revoked key stays revoked');
  t.equal((await b.get('/accounts', bearer(fresh.apiKey))).status, 200);
  t.equal((await b.get('/accounts', bearer(fresh.apiKey))).status, 200);
  t.ok(((await metric(b, 'authgate_credential_cache_hits_total')) ?? 0) > before, 'and caches again');
});

t.test('a revocation is announced in its own write: a connection lost where a separate PUBLISH would go changes nothing', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  // A reaches Redis through a relay that cuts A's connection when A sends a PUBLISH that carries a
  // revocation: what a separate PUBLISH after the write (the old way) would meet.
  const separatePublish = (chunk: Buffer) => /publish\r\n[\s\S]*"revoked":\[\{/i.test(chunk.toString('latin1'));
  const proxy = await startTcpProxy(redis.port, separatePublish);
  t.teardown(() => proxy.close());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_TIMEOUT_MS: '300' };
  const a = await startGateway(t, { upstream, env: { ...env, AUTHGATE_REDIS_URL: proxy.url } });
  const b = await startGateway(t, { upstream, env: { ...env, AUTHGATE_REDIS_URL: redis.url } });
  await ready(a);
  await ready(b);
  t.ok(await eventually(() => subscribed(a), 10_000, 50) && await eventually(() => subscribed(b), 10_000, 50), 'both subscribed');
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = await a.createApiKey(token);
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 200);
  t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 200, 'cached on B');

  const deleted = await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(token) } });
  t.equal(deleted.status, 204, 'the revocation is answered 204');
  t.ok(await eventually(async () => (await b.get('/accounts', bearer(key.apiKey))).status === 401, 5000, 10), 'and announced: 401 on B');
  t.equal((await a.get('/accounts', bearer(key.apiKey))).status, 401, 'and on A');
  t.equal(proxy.cuts, 0, 'A never sent a PUBLISH of its own for it');
  t.equal(await metric(a, 'authgate_invalidations_sent_total'), 1, 'counted once as sent');
});
