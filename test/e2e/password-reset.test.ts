import t, { type Test } from 'tap';
import { ADMIN_TOKEN, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Operator resets (issue 31) over real HTTP, on the memory store and on two replicas of one real
 * Redis: POST /admin/organizations/{id}/password-reset ends every session and issues a one-time
 * token; POST /auth/password/reset uses it once (also when two race), never after its end (an
 * injected clock), never for another organization; wrong tokens are one answer, limited per
 * address; an organization created without a password gets a token; no secret leaks.
 */

const json = { ...UA, 'content-type': 'application/json' };
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const NEW_PASSWORD = 'reset to something long and fresh 42';
type Issued = { resetToken: string; expiresAt: string };

const post = (gw: StartedGateway, path: string, body: unknown): Promise<Response> => send(`${gw.publicUrl}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
const reset = (gw: StartedGateway, resetToken: string, newPassword = NEW_PASSWORD) => post(gw, '/auth/password/reset', { resetToken, newPassword });
const login = (gw: StartedGateway, email: string, password: string) => post(gw, '/auth/login', { email, password });
const whoAmI = (gw: StartedGateway, credential: string) => gw.get('/auth/api-key', { authorization: `Bearer ${credential}` });

async function issue(gw: StartedGateway, orgId: string): Promise<Issued> {
  const res = await send(`${gw.opsUrl}/admin/organizations/${orgId}/password-reset`, { method: 'POST', headers: { authorization: admin.authorization } });
  if (res.status !== 200) throw new Error(`issue: ${res.status} ${res.body}`);
  return res.json() as Issued;
}

function problem(t: Test, res: Response, status: number, code: number, what: string): void {
  t.equal(res.status, status, `${what}: ${status}`);
  t.equal(res.status === status ? (res.json() as { code?: number }).code : undefined, code, `${what}: code ${code}`);
}

async function until(gw: StartedGateway, credential: string, status: number): Promise<number> {
  let res = await whoAmI(gw, credential);
  for (const deadline = Date.now() + 5000; res.status !== status && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    res = await whoAmI(gw, credential);
  }
  return res.status;
}

async function twoReplicas(t: Test, store: 'memory' | 'redis', now?: () => number): Promise<[StartedGateway, StartedGateway]> {
  const deps = now === undefined ? {} : { deps: { now } };
  if (store === 'memory') {
    const gw = await startGateway(t, deps);
    return [gw, gw];
  }
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  const a = await startGateway(t, { env, ...deps });
  const b = await startGateway(t, { env, ...deps });
  for (let i = 0; i < 400 && !(a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  return [a, b];
}

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: a reset token ends the sessions, works once, for its own organization only`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const org = await a.createOrganization();
    const other = await a.createOrganization();
    const token = await b.login(org.email, org.password);
    const otherToken = await b.login(other.email, other.password);
    const key = await a.createApiKey(token);
    t.equal((await whoAmI(b, token)).status, 200, 'cached on B');

    const issued = await issue(a, org.id);
    t.match(issued, { resetToken: /^agr_[0-9a-z]{3}_[A-Za-z0-9_-]{22}$/, expiresAt: /^\d{4}-/ });
    const ttl = Date.parse(issued.expiresAt) - Date.now();
    t.ok(ttl > 23.9 * 3600_000 && ttl <= 24 * 3600_000, '24 hours by default');
    t.equal(await until(b, token, 401), 401, 'every session ends, on the other replica too');
    t.equal((await whoAmI(b, key.apiKey)).status, 200, 'API keys stay');
    t.equal((await whoAmI(b, otherToken)).status, 200, "another organization's session stays");
    problem(t, await send(`${a.opsUrl}/admin/organizations/org_${'0'.repeat(32)}/password-reset`, { method: 'POST', headers: { authorization: admin.authorization } }), 404, 1302, 'an unknown organization');

    // Another organization's token never touches this one; this one's never touches another.
    const otherIssued = await issue(b, other.id);
    problem(t, await reset(b, issued.resetToken, `${org.email.split('@')[0]} is my password now`), 400, 1216, 'the policy applies (the token stays usable)');
    t.equal((await reset(b, otherIssued.resetToken, 'the other organization picks this one')).status, 204, "the other organization's token resets the other organization");
    t.equal((await login(a, org.email, org.password)).status, 200, 'and not this one');

    t.equal((await reset(b, issued.resetToken)).status, 204, 'used: 204, no body');
    problem(t, await reset(a, issued.resetToken, 'a second go at it with this token'), 400, 1218, 'not twice');
    problem(t, await login(a, org.email, org.password), 401, 1105, 'the old password fails');
    const loggedIn = await login(b, org.email, NEW_PASSWORD);
    t.equal(loggedIn.status, 200, 'the new one works');
    problem(t, await login(b, other.email, NEW_PASSWORD), 401, 1105, 'the other organization does not have it');
    t.equal((await login(b, other.email, 'the other organization picks this one')).status, 200);

    // A newer token makes the earlier one worthless; two racing uses of one: exactly one wins.
    const older = await issue(a, org.id);
    const newer = await issue(b, org.id);
    problem(t, await reset(a, older.resetToken), 400, 1218, 'a replaced token');
    const race = await Promise.all([reset(a, newer.resetToken, 'racer number one with a long password'), reset(b, newer.resetToken, 'racer number two with a long password')]);
    t.same(race.map((res) => res.status).sort(), [204, 400], 'two racing uses: exactly one wins');
    const winner = race[0]!.status === 204 ? 'racer number one with a long password' : 'racer number two with a long password';
    t.equal((await login(a, org.email, winner)).status, 200, "the winner's password is the one set");
    problem(t, await reset(a, `agr_${newer.resetToken.slice(4, 7)}_${'A'.repeat(22)}`), 400, 1218, 'an unknown token: the same answer');
    problem(t, await reset(a, 'not-a-token'), 400, 1218, 'a malformed one: the same answer');

    const logs = [a.logs.text(), b.logs.text()].join('\n');
    const audit = (await send(`${a.opsUrl}/admin/audit`, { headers: { authorization: admin.authorization } })).body;
    const types = (JSON.parse(audit) as { events: Array<{ type: string }> }).events.map((e) => e.type);
    t.ok(['password.reset_issued', 'password.reset', 'password.reset_refused'].every((type) => types.includes(type)), 'issue, use and refusal are audited');
    for (const secret of [issued.resetToken, otherIssued.resetToken, older.resetToken, newer.resetToken, NEW_PASSWORD, winner, (loggedIn.json() as { token: string }).token]) {
      t.notOk(logs.includes(secret), 'no reset token, password or login token in any log line');
      t.notOk(audit.includes(secret), 'nor in the audit trail');
    }
  });

  t.test(`${store}: not after its end (injected clock)`, async (t) => {
    let clock = Date.now();
    const [a, b] = await twoReplicas(t, store, () => clock);
    const org = await a.createOrganization();
    const issued = await issue(a, org.id);
    clock += 24 * 3600_000 + 1000;
    problem(t, await reset(b, issued.resetToken), 400, 1218, 'expired: the one answer');
    clock -= 2000;
    const late = await issue(b, org.id);
    clock += 24 * 3600_000 - 1000;
    t.equal((await reset(a, late.resetToken)).status, 204, 'a second before its end, it works');
  });

  t.test(`${store}: wrong tokens are limited per address, a parallel burst on two replicas too`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const org = await a.createOrganization();
    // 10 wrong tries per address and window: 14 at once on both replicas.
    const burst = await Promise.all(Array.from({ length: 14 }, (_, i) => reset(i % 2 === 0 ? a : b, `agr_abc_${String(i).padStart(22, 'x')}`)));
    const statuses = burst.map((res) => res.status);
    t.equal(statuses.filter((s) => s === 400).length, 10, 'ten judged: the generic 400');
    t.equal(statuses.filter((s) => s === 429).length, 4, 'the rest: 429');
    const refused = burst.find((res) => res.status === 429)!;
    t.equal((refused.json() as { code: number }).code, 1219);
    t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After');
    const fresh = await issue(a, org.id);
    problem(t, await reset(b, fresh.resetToken), 429, 1219, 'a good token too, from this address, until the window ends');
  });

  t.test(`${store}: an organization created without a password gets a reset token and cannot log in before`, async (t) => {
    const [a, b] = await twoReplicas(t, store);
    const email = `nopass-${store}-${process.pid}@example.test`;
    const created = await send(`${a.opsUrl}/admin/organizations`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Passwordless', email }) });
    t.equal(created.status, 201);
    const body = created.json() as { id: string; resetToken: string; resetExpiresAt: string };
    t.match(body, { id: /^org_/, resetToken: /^agr_/, resetExpiresAt: /^\d{4}-/ });
    for (const guess of ['!unset', 'password']) problem(t, await login(b, email, guess), 401, 1105, 'no password logs in');
    t.equal((await reset(b, body.resetToken)).status, 204);
    t.equal((await login(a, email, NEW_PASSWORD)).status, 200, 'the password set by the reset');
    const withPassword = await send(`${a.opsUrl}/admin/organizations`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'With one', email: `with-${email}`, password: 'a long enough password for tests' }) });
    t.notOk('resetToken' in (withPassword.json() as object), 'with a password, no token');
    t.notOk([a.logs.text(), b.logs.text()].join('\n').includes(body.resetToken), 'the token in no log line');
  });
}
