import t, { type Test } from 'tap';
import { startGateway, type StartedGateway } from '../helpers/gateway.js';
import { call, clock, codeAt, problem, type Clock } from '../helpers/second-factor.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

/**
 * Issue 45: a stolen session with a phished password must not mint a permanent factor. While an
 * organization has a second factor, adding, removing or regenerating an authenticator (TOTP,
 * passkeys, recovery codes) needs a proof of it beside the password: a current code, a recovery
 * code, or a passkey's assertion over the session's step-up options (POST /auth/mfa/step-up,
 * once). Without one 403 1123, a wrong one 403 1119 / 1120 (audited, and counted under the
 * organization's bound), and nothing changes. An organization without a factor is unchanged.
 */

const ORIGIN = 'http://localhost:8443';
type Options = { challenge: string; rp: { id?: string } };

async function gateway(t: Test, time: Clock, env: Record<string, string> = {}): Promise<StartedGateway> {
  return startGateway(t, { env: { AUTHGATE_WEBAUTHN_RP_ID: 'localhost', AUTHGATE_WEBAUTHN_ORIGINS: ORIGIN, ...env }, deps: { now: time.now } });
}

async function withTotp(t: Test, gw: StartedGateway, time: Clock) {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { secret } = (await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token)).json() as { secret: string };
  const confirmed = await call(gw, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token);
  t.equal(confirmed.status, 200, 'TOTP enabled (no factor before: the password was enough)');
  time.step();
  return { org, token, secret, recoveryCodes: (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes };
}

async function withPasskey(t: Test, gw: StartedGateway) {
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const authenticator = new SoftAuthenticator();
  const begun = await call(gw, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: org.password }, token);
  t.equal(begun.status, 200, 'the first passkey needs the password only');
  const added = await call(gw, 'POST', '/auth/mfa/passkeys', { response: authenticator.register((begun.json() as { options: Options }).options, { origin: ORIGIN }) }, token);
  t.equal(added.status, 201);
  return { org, token, authenticator, recoveryCodes: (added.json() as { recoveryCodes: string[] }).recoveryCodes };
}

const status = async (gw: StartedGateway, token: string) => (await call(gw, 'GET', '/auth/mfa', undefined, token)).json() as Record<string, unknown>;

t.test('with TOTP: the password alone, or with a wrong code, adds, regenerates and removes nothing', async (t) => {
  const time = clock();
  const gw = await gateway(t, time);
  const { org, token, secret, recoveryCodes } = await withTotp(t, gw, time);
  const before = await status(gw, token);
  const right = codeAt(secret, time.now());
  const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
  const changes: Array<[string, string]> = [
    ['POST', '/auth/mfa/passkeys/registration'],
    ['POST', '/auth/mfa/recovery-codes'],
    ['POST', '/auth/mfa/totp'],
  ];
  for (const [method, path] of changes) {
    problem(t, await call(gw, method, path, { currentPassword: org.password }, token), 403, 1123, `${path}: the password alone`);
    problem(t, await call(gw, method, path, { currentPassword: org.password, code: wrong }, token), 403, 1119, `${path}: a wrong code`);
    problem(t, await call(gw, method, path, { currentPassword: org.password, recoveryCode: 'aaaaa-bbbbb-ccccc-ddddd' }, token), 403, 1119, `${path}: a made-up recovery code`);
    problem(t, await call(gw, method, path, { currentPassword: org.password, code: right, recoveryCode: recoveryCodes[0] }, token), 400, 1200, `${path}: two proofs at once`);
  }
  problem(t, await call(gw, 'POST', '/auth/mfa/step-up', undefined, token), 404, 1230, 'no passkey to assert');
  t.strictSame(await status(gw, token), before, 'nothing changed');

  const login = await call(gw, 'POST', '/auth/login', { email: org.email, password: org.password });
  t.equal((await call(gw, 'POST', '/auth/login/mfa', { mfaToken: (login.json() as { mfaToken: string }).mfaToken, recoveryCode: recoveryCodes[0] })).status, 200, 'the old recovery codes still work');

  const regenerated = await call(gw, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, code: right }, token);
  t.equal(regenerated.status, 200, 'with the right code: regenerated');
  problem(t, await call(gw, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, code: right }, token), 403, 1119, 'the same code twice: its step is used');

  await gw.gateway.audit.flush();
  const failed = (await call(gw, 'GET', '/auth/audit?type=mfa.code_failed', undefined, token)).json() as { events: Array<{ details: { change: string } }> };
  t.strictSame(failed.events.map((e) => e.details.change).sort(), ['passkey_registration', 'passkey_registration', 'recovery_codes', 'recovery_codes', 'recovery_codes', 'totp_enrolment', 'totp_enrolment'], 'each wrong proof audited');
});

t.test('with a passkey: the password alone removes nothing and adds nothing; a step-up assertion works once', async (t) => {
  const time = clock();
  const gw = await gateway(t, time);
  const { org, token, authenticator, recoveryCodes } = await withPasskey(t, gw);
  const before = await status(gw, token);
  problem(t, await call(gw, 'DELETE', `/auth/mfa/passkeys/${authenticator.id}`, { currentPassword: org.password }, token), 403, 1123, 'removal with the password alone');
  problem(t, await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token), 403, 1123, 'TOTP beside it with the password alone');
  problem(t, await call(gw, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: org.password }, token), 403, 1123, 'another passkey with the password alone');

  const options = async () => (await call(gw, 'POST', '/auth/mfa/step-up', undefined, token)).json() as { passkeyOptions: Options & { rpId?: string }; expiresIn: number };
  const attacker = new SoftAuthenticator();
  problem(t, await call(gw, 'DELETE', `/auth/mfa/passkeys/${authenticator.id}`, { currentPassword: org.password, passkey: attacker.assert((await options()).passkeyOptions, { origin: ORIGIN }) }, token), 403, 1120, 'an assertion of a passkey not the organization\'s');
  const unasked = authenticator.assert({ challenge: Buffer.from('never asked').toString('base64url'), rpId: 'localhost' }, { origin: ORIGIN });
  problem(t, await call(gw, 'DELETE', `/auth/mfa/passkeys/${authenticator.id}`, { currentPassword: org.password, passkey: unasked }, token), 403, 1120, 'an assertion without a step-up');
  t.strictSame(await status(gw, token), before, 'nothing changed');

  const stepUp = await options();
  t.equal(stepUp.expiresIn, 300);
  const assertion = authenticator.assert(stepUp.passkeyOptions, { origin: ORIGIN });
  const begun = await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password, passkey: assertion }, token);
  t.equal(begun.status, 200, 'TOTP enrolment begun with the passkey\'s assertion');
  problem(t, await call(gw, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: org.password, passkey: assertion }, token), 403, 1120, 'the same assertion again: the step-up is used');
  t.equal((await call(gw, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, recoveryCode: recoveryCodes[0] }, token)).status, 200, 'a recovery code proves it too');
});

t.test('without a factor nothing changes for a client; wrong proofs count under the organization\'s bound', async (t) => {
  const time = clock();
  const gw = await gateway(t, time, { AUTHGATE_MFA_FAILURE_LIMIT: '3' });
  const plain = await gw.createOrganization();
  const plainToken = await gw.login(plain.email, plain.password);
  t.equal((await call(gw, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: plain.password }, plainToken)).status, 200, 'the password alone, as before');

  const { org, token, secret } = await withTotp(t, gw, time);
  for (let i = 0; i < 3; i++) problem(t, await call(gw, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, code: String(100000 + i) }, token), 403, 1119, `wrong proof ${i + 1}`);
  problem(t, await call(gw, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, code: codeAt(secret, time.now()) }, token), 429, 1121, 'then the right code is refused too');
  const login = await call(gw, 'POST', '/auth/login', { email: org.email, password: org.password });
  problem(t, await call(gw, 'POST', '/auth/login/mfa', { mfaToken: (login.json() as { mfaToken: string }).mfaToken, code: codeAt(secret, time.now()) }), 429, 1121, 'and at a login: one bound for every proof');
});
