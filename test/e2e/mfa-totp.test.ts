import t, { type Test } from 'tap';
import * as OTPAuth from 'otpauth';
import { ADMIN_TOKEN, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { call, clock, codeAt, problem, type Clock } from '../helpers/second-factor.js';
import { startRedis } from '../helpers/redis.js';

/**
 * TOTP as a second factor (issue 32) over real HTTP, on the memory store and on two replicas of
 * one real Redis: enrolment needs the password and a first code; a login of an organization with
 * a factor answers 403 (1116) with an mfaToken, finished at POST /auth/login/mfa with a code the
 * test computes from the returned secret. A code (a time step) works once, also across replicas
 * racing; the next step's works; recovery codes work once; five wrong codes spend the mfaToken;
 * a used or unknown mfaToken is refused; an organization without a factor logs in as before.
 * The replicas share one clock the test moves forward by whole steps (no waiting 30 s).
 */

async function twoReplicas(t: Test, store: 'memory' | 'redis', time: Clock): Promise<[StartedGateway, StartedGateway]> {
  const deps = { now: time.now };
  if (store === 'memory') {
    const gw = await startGateway(t, { deps });
    return [gw, gw];
  }
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000', AUTHGATE_MFA_ENCRYPTION_KEY: 'one key both replicas share, 32 bytes or more' };
  return [await startGateway(t, { env, deps }), await startGateway(t, { env, deps })];
}

/** An organization with TOTP enabled: its secret, recovery codes and a login token. */
async function enrolled(t: Test, gw: StartedGateway, time: Clock) {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const begun = await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token);
  t.equal(begun.status, 200, 'enrolment begun');
  const { secret, otpauthUri } = begun.json() as { secret: string; otpauthUri: string };
  const confirmed = await call(gw, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token);
  t.equal(confirmed.status, 200, 'confirmed');
  return { org, token, secret, otpauthUri, recoveryCodes: (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes };
}

async function mfaToken(t: Test, gw: StartedGateway, org: { email: string; password: string }): Promise<string> {
  const res = await call(gw, 'POST', '/auth/login', { email: org.email, password: org.password });
  problem(t, res, 403, 1116, 'the password alone');
  return (res.json() as { mfaToken: string }).mfaToken;
}

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: enrolment needs the password and a right code; GET /auth/mfa says what is enrolled`, async (t) => {
    const time = clock();
    const [a] = await twoReplicas(t, store, time);
    const org = await a.createOrganization();
    const token = await a.login(org.email, org.password);
    t.strictSame((await call(a, 'GET', '/auth/mfa', undefined, token)).json(), { methods: [], totp: { enabled: false, pending: false }, recoveryCodesLeft: 0, passkeys: [], offered: { totp: true, passkey: true } });
    problem(t, await call(a, 'POST', '/auth/mfa/totp', { currentPassword: 'not the password' }, token), 403, 1217, 'a wrong password');
    problem(t, await call(a, 'POST', '/auth/mfa/totp/confirm', { code: '123456' }, token), 409, 1226, 'nothing pending');
    const key = await a.createApiKey(token);
    problem(t, await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, key.apiKey), 403, 1103, 'an API key cannot');
    const begun = await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token);
    t.equal(begun.status, 200);
    t.equal(begun.headers['cache-control'], 'no-store');
    const { secret, otpauthUri } = begun.json() as { secret: string; otpauthUri: string };
    t.match(secret, /^[A-Z2-7]{32}$/, '160 bits, base32');
    const parsed = OTPAuth.URI.parse(otpauthUri);
    t.equal(parsed.secret.base32, secret, 'the URI carries the same secret');
    t.equal((await call(a, 'GET', '/auth/mfa', undefined, token)).json().totp.pending, true);
    t.equal((await call(a, 'POST', '/auth/login', { email: org.email, password: org.password })).status, 200, 'pending: logins as before');
    const wrong = String((Number(codeAt(secret, time.now())) + 1) % 1_000_000).padStart(6, '0');
    problem(t, await call(a, 'POST', '/auth/mfa/totp/confirm', { code: wrong }, token), 403, 1119, 'a wrong code');
    const confirmed = await call(a, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token);
    t.equal(confirmed.status, 200);
    const { recoveryCodes } = confirmed.json() as { recoveryCodes: string[] };
    t.equal(new Set(recoveryCodes).size, 10, 'ten distinct recovery codes');
    t.strictSame((await call(a, 'GET', '/auth/mfa', undefined, token)).json(), { methods: ['totp', 'recovery_code'], totp: { enabled: true, pending: false }, recoveryCodesLeft: 10, passkeys: [], offered: { totp: true, passkey: true } });
    // Issue 45: with a factor enrolled, an enrolment also needs a proof of it (1123 without).
    problem(t, await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token), 403, 1123, 'the password alone no longer changes authenticators');
    time.step();
    problem(t, await call(a, 'POST', '/auth/mfa/totp', { currentPassword: org.password, code: codeAt(secret, time.now()) }, token), 409, 1225, 'no second enrolment');
    const everything = [a.logs.text(), (await send(`${a.opsUrl}/admin/audit`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body].join('\n');
    t.notOk(everything.includes(secret), 'the secret in no log line and no audit entry');
    t.notOk(recoveryCodes.some((code) => everything.includes(code)), 'nor a recovery code');
  });

  t.test(`${store}: login with a second factor; each step once; the next step works; mfaTokens single use`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const { org, secret } = await enrolled(t, a, time);
    const plain = await a.createOrganization();
    t.type(await b.login(plain.email, plain.password), 'string', 'an organization without a factor logs in as before');

    const res = await call(b, 'POST', '/auth/login', { email: org.email, password: org.password });
    problem(t, res, 403, 1116, 'second factor required');
    const body = res.json() as { mfaToken: string; methods: string[]; expiresIn: number; token?: string };
    t.equal(res.headers['cache-control'], 'no-store');
    t.match(body.mfaToken, /^agm_/);
    t.strictSame(body.methods, ['totp', 'recovery_code']);
    t.equal(body.expiresIn, 300);
    t.equal(body.token, undefined, 'no token of any kind');
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: body.mfaToken, code: codeAt(secret, time.now()) }), 401, 1117, "the enrolment code's step is used");
    time.step();
    const done = await call(b, 'POST', '/auth/login/mfa', { mfaToken: body.mfaToken, code: codeAt(secret, time.now()) });
    t.equal(done.status, 200, 'the next step\'s code');
    t.equal((await a.get('/auth/api-key', { authorization: `Bearer ${(done.json() as { token: string }).token}` })).status, 200, 'the token works on the other replica');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: body.mfaToken, code: codeAt(secret, time.now() + 30_000) }), 401, 1118, 'a used mfaToken');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: `agm_${'x'.repeat(4)}_${'y'.repeat(22)}`, code: '000000' }), 401, 1118, 'an unknown mfaToken');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: 'nonsense', code: '000000' }), 401, 1118, 'a malformed one');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: body.mfaToken }), 400, 1200, 'no code');

    // Drift: one step ahead is accepted (the phone's clock runs fast).
    const ahead = await mfaToken(t, a, org);
    t.equal((await call(a, 'POST', '/auth/login/mfa', { mfaToken: ahead, code: codeAt(secret, time.now() + 30_000) })).status, 200, 'one step ahead');
    const behind = await mfaToken(t, a, org);
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: behind, code: codeAt(secret, time.now()) }), 401, 1117, 'a step before the last used one');

    // Two replicas, two logins, one code: exactly one 200.
    time.step();
    time.step();
    const tokens = [await mfaToken(t, a, org), await mfaToken(t, b, org), await mfaToken(t, a, org), await mfaToken(t, b, org)];
    const code = codeAt(secret, time.now());
    const raced = await Promise.all(tokens.map((mfa, i) => call(i % 2 === 0 ? a : b, 'POST', '/auth/login/mfa', { mfaToken: mfa, code })));
    t.strictSame(raced.map((r) => r.status).sort(), [200, 401, 401, 401], 'one code, four racing logins on two replicas: one 200');

    // An expired mfaToken.
    const late = await mfaToken(t, a, org);
    for (let i = 0; i < 11; i++) time.step();
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: late, code: codeAt(secret, time.now()) }), 401, 1118, 'after 5 minutes');
  });

  t.test(`${store}: recovery codes once; five wrong codes spend the mfaToken; regenerate; remove; the admin side`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const { org, secret, token, recoveryCodes } = await enrolled(t, a, time);

    const first = await mfaToken(t, a, org);
    t.equal((await call(b, 'POST', '/auth/login/mfa', { mfaToken: first, recoveryCode: recoveryCodes[0]!.toUpperCase() })).status, 200, 'a recovery code (case does not matter)');
    const second = await mfaToken(t, a, org);
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: second, recoveryCode: recoveryCodes[0] }), 401, 1117, 'the same recovery code again');
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: second, code: '000000', recoveryCode: recoveryCodes[1] }), 400, 1200, 'both at once');
    t.equal((await call(a, 'GET', '/auth/mfa', undefined, token)).json().recoveryCodesLeft, 9);

    const spent = await mfaToken(t, a, org);
    time.step();
    const right = codeAt(secret, time.now());
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 1; i <= 4; i++) problem(t, await call(i % 2 === 0 ? a : b, 'POST', '/auth/login/mfa', { mfaToken: spent, code: wrong }), 401, 1117, `wrong code ${i}`);
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: spent, code: wrong }), 401, 1118, 'the fifth spends it');
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: spent, code: right }), 401, 1118, 'then even a right code');

    const regenerated = await call(a, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, recoveryCode: recoveryCodes[1] }, token);
    t.equal(regenerated.status, 200);
    const fresh = (regenerated.json() as { recoveryCodes: string[] }).recoveryCodes;
    const third = await mfaToken(t, a, org);
    problem(t, await call(a, 'POST', '/auth/login/mfa', { mfaToken: third, recoveryCode: recoveryCodes[2] }), 401, 1117, 'old recovery codes die');
    t.equal((await call(a, 'POST', '/auth/login/mfa', { mfaToken: third, recoveryCode: fresh[0] })).status, 200, 'new ones work');

    problem(t, await call(a, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: wrong }, token), 403, 1119, 'removal needs a right code');
    problem(t, await call(a, 'DELETE', '/auth/mfa/totp', { currentPassword: 'wrong', code: right }, token), 403, 1217, 'and the password');
    t.equal((await call(a, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: right }, token)).status, 204, 'removed');
    t.type(await b.login(org.email, org.password), 'string', 'the password alone logs in again');
    problem(t, await call(a, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: right }, token), 409, 1227, 'nothing to remove');

    await a.gateway.audit.flush();
    const types = ((await call(a, 'GET', '/auth/audit?limit=500', undefined, token)).json() as { events: Array<{ type: string }> }).events.map((e) => e.type);
    for (const type of ['mfa.totp_enabled', 'mfa.recovery_code_used', 'mfa.totp_disabled', 'login.mfa_required']) t.ok(types.includes(type), `audited: ${type}`);
  });

  t.test(`${store}: the operator sees a factor and removes it (sessions end); a password reset never removes it`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const { org, recoveryCodes: codes } = await enrolled(t, a, time);
    const admin = (method: string, path: string) => send(`${a.opsUrl}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    t.strictSame((await admin('GET', `/admin/organizations/${org.id}/mfa`)).json(), { methods: ['totp', 'recovery_code'], totp: { enabled: true, pending: false }, recoveryCodesLeft: 10, passkeys: [] });
    problem(t, await admin('GET', '/admin/organizations/org_unknown/mfa'), 404, 1302, 'unknown organization');
    t.equal((await admin('POST', `/admin/organizations/${org.id}/password-reset`)).status, 200, 'a reset issued');
    await mfaToken(t, b, org);
    t.equal((await admin('GET', `/admin/organizations/${org.id}/mfa`)).json().totp.enabled, true, 'the factor stays after a reset');

    const again = await mfaToken(t, a, org);
    const { recoveryCodes } = { recoveryCodes: codes };
    const live = ((await call(a, 'POST', '/auth/login/mfa', { mfaToken: again, recoveryCode: recoveryCodes[0] })).json() as { token: string }).token;
    t.equal((await b.get('/auth/api-key', { authorization: `Bearer ${live}` })).status, 200, 'a live session before the removal');
    const removed = await admin('DELETE', `/admin/organizations/${org.id}/mfa`);
    t.equal(removed.status, 200);
    t.equal(removed.json().removed, true);
    let status = 200;
    for (const deadline = Date.now() + 5000; status !== 401 && Date.now() < deadline; ) {
      status = (await b.get('/auth/api-key', { authorization: `Bearer ${live}` })).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(status, 401, 'sessions ended (the token is refused on the other replica)');
    t.type(await b.login(org.email, org.password), 'string', 'the password alone logs in');
    t.strictSame((await admin('DELETE', `/admin/organizations/${org.id}/mfa`)).json(), { removed: false, sessionsEnded: 0 }, 'nothing left to remove');
    await a.gateway.audit.flush();
    const audit = (await admin('GET', `/admin/audit?org=${org.id}`)).json() as { events: Array<{ type: string; actor: string }> };
    t.ok(audit.events.some((e) => e.type === 'mfa.removed' && e.actor === 'admin'), 'audited as mfa.removed by the admin');
  });

  // Issue 45: the three right passwords that opened these logins stay counted until a second
  // factor succeeds, so 7 wrong codes spend the pair's 10 (before, a right password reset them).
  t.test(`${store}: wrong codes count against the login limits across replicas (10 per e-mail and address, the open logins' passwords among them: then 429 1108)`, async (t) => {
    const time = clock();
    const [a, b] = await twoReplicas(t, store, time);
    const { org, secret } = await enrolled(t, a, time);
    const tokens = [await mfaToken(t, a, org), await mfaToken(t, b, org), await mfaToken(t, a, org)];
    time.step();
    const right = codeAt(secret, time.now());
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 7; i++) {
      const res = await call(i % 2 === 0 ? a : b, 'POST', '/auth/login/mfa', { mfaToken: tokens[i < 5 ? 0 : 1], code: wrong });
      t.equal(res.status, 401, `wrong code ${i + 1}: 401`);
    }
    problem(t, await call(b, 'POST', '/auth/login/mfa', { mfaToken: tokens[2], code: right }), 429, 1108, 'the limits are spent: even a right code waits');
  });
}
