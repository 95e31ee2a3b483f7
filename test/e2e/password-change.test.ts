import t, { type Test } from 'tap';
import { ADMIN_TOKEN, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

/**
 * POST /auth/password (issue 31) over real HTTP, on the memory store and on two replicas of one
 * real Redis: the old password fails and the new works, every old token is refused on the other
 * replica within the revocation bound while the returned one works, a wrong current password is
 * a 403 that counts toward the login limits (a parallel burst ends in 429), and no password
 * reaches a log line, an audit entry or an answer.
 */

const json = { ...UA, 'content-type': 'application/json' };
const NEW_PASSWORD = 'a new one, long and not on any list 7';

function post(gw: StartedGateway, path: string, body: unknown, token?: string): Promise<Response> {
  return send(`${gw.publicUrl}${path}`, { method: 'POST', headers: { ...json, ...(token !== undefined && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) });
}

const whoAmI = (gw: StartedGateway, credential: string) => gw.get('/auth/api-key', { authorization: `Bearer ${credential}` });

/** Polls until the credential answers `status` on gw; bounded (the revocation bound is far below 5 s). */
async function until(gw: StartedGateway, credential: string, status: number): Promise<number> {
  let res = await whoAmI(gw, credential);
  for (const deadline = Date.now() + 5000; res.status !== status && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    res = await whoAmI(gw, credential);
  }
  return res.status;
}

function problem(t: Test, res: Response, status: number, code: number, what: string): void {
  t.equal(res.status, status, `${what}: ${status}`);
  t.equal(res.status === status ? (res.json() as { code?: number }).code : undefined, code, `${what}: code ${code}`);
}

async function twoReplicas(t: Test, store: 'memory' | 'redis'): Promise<[StartedGateway, StartedGateway]> {
  if (store === 'memory') {
    const gw = await startGateway(t);
    return [gw, gw];
  }
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  const a = await startGateway(t, { env });
  const b = await startGateway(t, { env });
  for (let i = 0; i < 400 && !(a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  return [a, b];
}

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: a change replaces the password, ends every other session on every replica, returns a working token`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const org = await a.createOrganization();
    const other = await a.createOrganization();
    const tokens = [await a.login(org.email, org.password), await b.login(org.email, org.password), await a.login(org.email, org.password)];
    const otherToken = await b.login(other.email, other.password);
    const key = await a.createApiKey(tokens[0]!);
    for (const token of tokens) t.equal((await whoAmI(b, token)).status, 200, 'each token works (and is cached) on B');

    problem(t, await post(a, '/auth/password', { currentPassword: 'not the password at all', newPassword: NEW_PASSWORD }, tokens[0]), 403, 1217, 'a wrong current password');
    problem(t, await post(a, '/auth/password', { currentPassword: org.password, newPassword: 'too short' }, tokens[0]), 400, 1213, 'the policy applies');
    problem(t, await post(a, '/auth/password', { currentPassword: org.password, newPassword: `my ${org.email} forever and ever` }, tokens[0]), 400, 1216, "with the organization's e-mail as context");
    problem(t, await post(a, '/auth/password', { newPassword: NEW_PASSWORD }, tokens[0]), 400, 1200, 'the current password is required');
    problem(t, await post(a, '/auth/password', { currentPassword: org.password, newPassword: NEW_PASSWORD }, key.apiKey), 403, 1103, 'an API key cannot');
    problem(t, await post(a, '/auth/password', { currentPassword: org.password, newPassword: NEW_PASSWORD }), 401, 1101, 'no credential');
    t.equal((await whoAmI(b, tokens[0]!)).status, 200, 'refusals end no session');

    const changed = await post(a, '/auth/password', { currentPassword: org.password, newPassword: NEW_PASSWORD }, tokens[0]);
    t.equal(changed.status, 200, 'changed');
    t.equal(changed.headers['cache-control'], 'no-store');
    const fresh = (changed.json() as { token: string }).token;
    t.type(fresh, 'string');
    for (const token of tokens) t.equal(await until(b, token, 401), 401, 'an old token is refused on the other replica');
    for (const token of tokens) t.equal((await whoAmI(a, token)).status, 401, 'and on this one');
    t.equal((await whoAmI(b, fresh)).status, 200, 'the returned token works on the other replica');
    t.equal((await whoAmI(b, key.apiKey)).status, 200, 'API keys are not revoked');
    t.equal((await whoAmI(b, otherToken)).status, 200, "another organization's session stays");

    problem(t, await post(b, '/auth/login', { email: org.email, password: org.password }), 401, 1105, 'the old password fails');
    t.equal((await post(b, '/auth/login', { email: org.email, password: NEW_PASSWORD })).status, 200, 'the new one works');
    t.equal((await post(b, '/auth/login', { email: other.email, password: other.password })).status, 200, "another organization's password is unchanged");

    await a.gateway.audit.flush();
    const audit = await b.get('/auth/audit', { authorization: `Bearer ${fresh}` });
    t.equal(audit.status, 200);
    const types = (audit.json() as { events: Array<{ type: string }> }).events.map((e) => e.type);
    t.ok(types.includes('password.changed') && types.includes('password.change_failed'), 'the change and the failed attempt are audited');
    const everything = [a.logs.text(), b.logs.text(), audit.body, (await send(`${a.opsUrl}/admin/audit`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body].join('\n');
    for (const secret of [org.password, NEW_PASSWORD, 'not the password at all']) t.notOk(everything.includes(secret), 'no password in the logs, the audit trail or its answers');
    for (const token of [...tokens, fresh]) t.notOk(everything.includes(token), 'no token in the logs or the audit trail');
  });

  t.test(`${store}: wrong current passwords count toward the login limits: a parallel burst ends in 429`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const org = await a.createOrganization();
    const token = await a.login(org.email, org.password);
    // The pair limit (e-mail, address) is 10 per window: 14 wrong attempts at once, on both replicas.
    const burst = await Promise.all(Array.from({ length: 14 }, (_, i) => post(i % 2 === 0 ? a : b, '/auth/password', { currentPassword: `wrong guess number ${i}`, newPassword: NEW_PASSWORD }, token)));
    const statuses = burst.map((res) => res.status).sort();
    t.equal(statuses.filter((s) => s === 403).length, 10, 'ten judged: 403 each');
    t.equal(statuses.filter((s) => s === 429).length, 4, 'the rest: 429');
    const refused = burst.find((res) => res.status === 429)!;
    t.equal((refused.json() as { code: number }).code, 1108, 'the login limit\'s own answer');
    t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After');
    problem(t, await post(b, '/auth/password', { currentPassword: org.password, newPassword: NEW_PASSWORD }, token), 429, 1108, 'the right password too, now: the limit is spent');
    problem(t, await post(a, '/auth/login', { email: org.email, password: org.password }), 429, 1108, 'and a login from this address: the same counters');
    t.equal((await whoAmI(b, token)).status, 200, 'the session itself goes on (403 and 429 are no sign-out)');
  });
}
