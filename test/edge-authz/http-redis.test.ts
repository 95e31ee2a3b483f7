import { Redis } from 'ioredis';
import t from 'tap';
import { listenAuthz } from '../helpers/authz.js';
import { eventually, send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * The authorization port on two replicas of one real Redis (one redis-server for the file): a key
 * revoked through one replica is refused by the other's authorization port within the usual bound
 * (the revocation message, not the cache TTL), and a store that does not answer is a 503 with
 * Retry-After, never an allow and never a 401.
 */

t.test('two replicas: revoked on A, refused by B\'s authorization port; the store paused: 503 with Retry-After', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300', AUTHGATE_AUTHZ_PORT: '0' };
  const a = await startGateway(t, { env, upstream });
  const b = await startGateway(t, { env, upstream });
  const authzB = await listenAuthz(b);
  for (const gw of [a, b]) {
    t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50), 'ready');
  }
  const check = (gw: { url: string }, credential: string) =>
    send(`${gw.url}/authz/auth-request`, { headers: { 'x-original-method': 'GET', 'x-original-uri': '/accounts', authorization: `Bearer ${credential}` } });

  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = await a.createApiKey(token);
  t.equal((await check(authzB, key.apiKey)).status, 200, 'a key made on A is allowed by B (and now cached there)');
  t.equal((await check(authzB, key.apiKey)).status, 200);
  const revoked = await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(revoked.status, 204);
  const startedAt = Date.now();
  // Bounded far below the cache TTL (60 s): only the revocation message can explain it.
  t.ok(await eventually(async () => (await check(authzB, key.apiKey)).status === 401, 15_000, 5), `revoked on A → 401 from B's authorization port (${Date.now() - startedAt} ms)`);
  const refused = await check(authzB, key.apiKey);
  t.equal(refused.headers['www-authenticate'], 'Bearer realm="authgate", error="invalid_token"');

  // A credential B has not cached, while Redis does not answer: fail closed, as a 503 the proxy can map back.
  const uncached = await a.createApiKey(token);
  redis.pause();
  t.teardown(() => redis.resume());
  const down = await check(authzB, uncached.apiKey);
  t.equal(down.status, 503);
  t.equal(down.json().code, 1503);
  t.ok(Number(down.headers['retry-after']) >= 1, 'Retry-After');
  t.equal(down.headers['cache-control'], 'no-store');
  t.notOk('x-organization-id' in down.headers);
  const metrics = (await send(`${b.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="auth_request",outcome="error",route="\/accounts\/\*"[^}]*\} 1/);
  t.match(metrics, /authgate_auth_decisions_total\{[^}]*kind="api_key",outcome="error",reason="store_unavailable"/);
  redis.resume();
  t.ok(await eventually(async () => (await check(authzB, uncached.apiKey)).status === 200, 15_000, 50), 'allowed again once the store answers');
});

t.test('the store killed: 503 with Retry-After for every uncached credential, and no 5xx but 503', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw: StartedGateway = await startGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300', AUTHGATE_AUTHZ_PORT: '0' }, upstream });
  const authz = await listenAuthz(gw);
  t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50), 'ready');
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  await redis.kill();
  for (const path of ['/authz/forward-auth', '/authz/ext-authz/accounts']) {
    const res = await send(`${authz.url}${path}`, { headers: { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/accounts', authorization: `Bearer ${key.apiKey}` } });
    t.equal(res.status, 503, path);
    t.ok(Number(res.headers['retry-after']) >= 1);
  }
});

t.test('a stored record the store cannot read: 503 through the authorization port (fail closed, as the public port), never an allow', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_AUTHZ_PORT: '0' };
  const a = await startGateway(t, { env, upstream });
  const b = await startGateway(t, { env, upstream });
  const authzB = await listenAuthz(b);
  for (const gw of [a, b]) t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 10_000, 50), 'ready');
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = await a.createApiKey(token);
  // The real fault: the hot path's record (an API key's field in its tag's `k` hash,
  // docs/redis-layout.md) overwritten with a value of no known shape, as a bad migration or a
  // hand edit would leave it. B has never read the key, so its decision reads the record.
  const client = new Redis(redis.url);
  t.teardown(() => client.quit());
  let corrupted = 0;
  for (const name of await client.keys('*k')) {
    if ((await client.type(name)) !== 'hash') continue;
    for (const field of await client.hkeys(name)) corrupted += await client.hset(name, field, 'x').then(() => 1);
  }
  t.ok(corrupted >= 1, `the key's record overwritten (${corrupted} field(s))`);
  const check = (path: string, headers: Record<string, string>) => send(`${authzB.url}${path}`, { headers: { ...headers, authorization: `Bearer ${key.apiKey}` } });
  const answers = [
    await check('/authz/auth-request', { 'x-original-method': 'GET', 'x-original-uri': '/accounts' }),
    await check('/authz/forward-auth', { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/accounts' }),
    await check('/authz/ext-authz/accounts', {}),
  ];
  for (const res of answers) {
    // The store reports what it cannot read as unavailable (its guard): a 503 the proxy maps back, never an allow.
    t.equal(res.status, 503, 'refused, never allowed');
    t.equal(res.json().code, 1503);
    t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    t.equal(res.headers['cache-control'], 'no-store');
    t.notOk('x-organization-id' in res.headers, 'no identity on a fault');
    t.notOk(res.body.includes(key.apiKey), 'the credential is not echoed');
  }
  const metrics = (await send(`${b.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*outcome="error"[^}]*\} [1-9]/, 'counted as an error');
});
