import t from 'tap';
import { assertProblem, injectGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Issue 26: nothing bounded one tenant's keys (1,100 POST /auth/api-key, all 201). Now an
 * organization holds at most AUTHGATE_MAX_KEYS_PER_ORGANIZATION keys (the admin API sets its
 * own), makes at most AUTHGATE_KEY_CREATION_RATE_LIMIT per window, and the same for sessions;
 * the counts hold under a parallel burst across two replicas on one Redis.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

t.test('a parallel burst across two replicas never overshoots the key limit; the admin raises it', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_MAX_KEYS_PER_ORGANIZATION: '20', AUTHGATE_KEY_CREATION_RATE_LIMIT: 'off' };
  const a = await injectGateway(t, { env });
  const b = await injectGateway(t, { env });
  const org = await a.signedUp(); // holds one key
  const other = await b.signedUp();
  const burst = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: {} })));
  t.equal(burst.filter((res) => res.statusCode === 201).length, 19, 'exactly up to the limit');
  const refused = burst.filter((res) => res.statusCode !== 201);
  t.equal(refused.length, 41);
  for (const res of refused.slice(0, 3)) assertProblem(t, res, 409, 1305, 'limit reached');
  const listed = await a.pub({ url: '/auth/api-key?limit=500', headers: bearer(org.token) });
  t.equal(listed.json<{ keys: unknown[] }>().keys.length, 20, 'twenty keys held');
  t.equal((await b.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(other.token), payload: {} })).statusCode, 201, 'another organization is not held back');

  const raised = await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: { keyLimit: 22 } });
  t.equal(raised.statusCode, 200);
  t.match(raised.json(), { keyLimit: 22, effectiveKeyLimit: 22 });
  const more = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: {} })));
  t.equal(more.filter((res) => res.statusCode === 201).length, 2, 'two more under the raised limit');
  t.match((await b.ops({ url: `/admin/organizations/${org.orgId}` })).json(), { keyLimit: 22, effectiveKeyLimit: 22 });
  const back = await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: { keyLimit: null } });
  t.match(back.json(), { keyLimit: null, effectiveKeyLimit: 20, rateLimit: null });
  assertProblem(t, await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: { keyLimit: 0 } }), 400, 1200, 'a limit below 1');
  assertProblem(t, await a.ops({ method: 'PATCH', url: `/admin/organizations/${org.orgId}`, payload: {} }), 400, 1200, 'nothing to change');
  assertProblem(t, await a.ops({ method: 'PATCH', url: '/admin/organizations/org_nobody', payload: { keyLimit: 5 } }), 404, 1302, 'no such organization');
});

t.test('key creations per window are counted across replicas (429, code 1111), rolls too', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_KEY_CREATION_RATE_LIMIT: '10/1h' };
  const a = await injectGateway(t, { env });
  const b = await injectGateway(t, { env });
  const org = await a.signedUp(); // its first key counted
  const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).pub({ method: 'POST', url: '/auth/api-key', headers: bearer(org.token), payload: {} })));
  t.equal(burst.filter((res) => res.statusCode === 201).length, 9, 'the window admits exactly its count');
  const refused = burst.find((res) => res.statusCode !== 201)!;
  assertProblem(t, refused, 429, 1111, 'too many created');
  t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After');
  assertProblem(t, await a.pub({ method: 'POST', url: `/auth/api-key/${org.keyId}/roll`, headers: bearer(org.token), payload: {} }), 429, 1111, 'a roll makes a key too');
});

t.test('live sessions per organization and logins per window are bounded (memory store)', async (t) => {
  const gw = await injectGateway(t, { env: { AUTHGATE_MAX_SESSIONS_PER_ORGANIZATION: '3', AUTHGATE_SESSION_CREATION_RATE_LIMIT: 'off' } });
  const org = await gw.createOrganization();
  const tokens = [await gw.login(org.email, org.password), await gw.login(org.email, org.password), await gw.login(org.email, org.password)];
  const login = () => gw.pub({ method: 'POST', url: '/auth/login', payload: { email: org.email, password: org.password } });
  assertProblem(t, await login(), 409, 1306, 'a fourth live session');
  t.equal((await gw.pub({ method: 'POST', url: '/auth/logout', headers: bearer(tokens[0]!) })).statusCode, 204);
  t.equal((await login()).statusCode, 200, 'one ended: one more');

  const limited = await injectGateway(t, { env: { AUTHGATE_SESSION_CREATION_RATE_LIMIT: '2/1h' } });
  const other = await limited.createOrganization();
  const again = () => limited.pub({ method: 'POST', url: '/auth/login', payload: { email: other.email, password: other.password } });
  t.equal((await again()).statusCode, 200);
  t.equal((await again()).statusCode, 200);
  assertProblem(t, await again(), 429, 1112, 'too many logins');
  assertProblem(t, await limited.pub({ method: 'POST', url: '/auth/login', payload: { email: other.email, password: 'not-the-password-at-all' } }), 401, 1105, 'a wrong password is not counted against the organization');
});

t.test('the session limit holds under a parallel burst across two replicas (Redis)', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_MAX_SESSIONS_PER_ORGANIZATION: '5', AUTHGATE_SESSION_CREATION_RATE_LIMIT: 'off' };
  const a = await injectGateway(t, { env });
  const b = await injectGateway(t, { env });
  const org = await a.createOrganization();
  // 10 in flight at once: the login limits count an attempt before its password is judged, and
  // allow 10 per (e-mail, address) pair, so a larger burst from one address would also meet 1108.
  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).pub({ method: 'POST', url: '/auth/login', payload: { email: org.email, password: org.password } })));
  t.equal(burst.filter((res) => res.statusCode === 200).length, 5, 'exactly the limit');
  for (const refused of burst.filter((res) => res.statusCode !== 200)) assertProblem(t, refused, 409, 1306);
});
