import t from 'tap';
import { buildGateway } from '../../src/gateway.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ADMIN_TOKEN, testConfig, UA } from '../helpers/gateway.js';
import { assertProblem, UNREACHABLE_UPSTREAM } from '../helpers/inject.js';

/**
 * Passkeys without a relying party (production without AUTHGATE_WEBAUTHN_RP_ID and
 * AUTHGATE_WEBAUTHN_ORIGINS: config.webauthn undefined, config/webauthn.ts): registration is 409
 * (1231) after nothing is asked of the password, and the rest answers as for an organization with
 * no passkey. The flows themselves are test/e2e/mfa-passkeys.test.ts's.
 */
t.test('no relying party: registration 409 (1231); status and logins as without passkeys', async (t) => {
  const logs = captureLogs();
  const config = { ...testConfig({ AUTHGATE_UPSTREAM_URL: UNREACHABLE_UPSTREAM }), webauthn: undefined };
  const gateway = await buildGateway(config, { logDestination: logs.destination });
  t.teardown(() => gateway.close());
  const email = `passkeys-${process.pid}@example.test`;
  const password = 'a password long enough 0123';
  const created = await gateway.opsServer.inject({ method: 'POST', url: '/admin/organizations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'No RP', email, password } });
  t.equal(created.statusCode, 201);
  const login = await gateway.publicServer.inject({ method: 'POST', url: '/auth/login', headers: UA, payload: { email, password } });
  t.equal(login.statusCode, 200);
  const authorization = `Bearer ${login.json<{ token: string }>().token}`;
  const begun = await gateway.publicServer.inject({ method: 'POST', url: '/auth/mfa/passkeys/registration', headers: { ...UA, authorization }, payload: { currentPassword: 'not even checked' } });
  assertProblem(t, begun, 409, 1231, 'no relying party');
  t.notOk(begun.body.includes('not even checked'));
  const finished = await gateway.publicServer.inject({ method: 'POST', url: '/auth/mfa/passkeys', headers: { ...UA, authorization }, payload: { response: { id: 'abc', rawId: 'abc', type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: 'e30', attestationObject: 'oA' } } } });
  assertProblem(t, finished, 409, 1231, 'nor a finish');
  const status = await gateway.publicServer.inject({ url: '/auth/mfa', headers: { ...UA, authorization } });
  t.strictSame(status.json(), { methods: [], totp: { enabled: false, pending: false }, recoveryCodesLeft: 0, passkeys: [], offered: { totp: true, passkey: false } }, 'and says passkeys are not offered');
  t.equal((await gateway.publicServer.inject({ method: 'POST', url: '/auth/login', headers: UA, payload: { email, password } })).statusCode, 200, 'logins as before');
});

t.test('GET /auth/mfa says what may be added: neither without the MFA key and the relying party, both with them', async (t) => {
  const logs = captureLogs();
  const base = testConfig({ AUTHGATE_UPSTREAM_URL: UNREACHABLE_UPSTREAM });
  for (const [label, config, offered] of [
    ['neither', { ...base, webauthn: undefined, mfa: { ...base.mfa, encryptionKey: undefined } }, { totp: false, passkey: false }],
    ['both', base, { totp: true, passkey: true }],
  ] as const) {
    const gateway = await buildGateway(config, { logDestination: logs.destination });
    t.teardown(() => gateway.close());
    const email = `offered-${label}-${process.pid}@example.test`;
    const password = 'a password long enough 0123';
    const created = await gateway.opsServer.inject({ method: 'POST', url: '/admin/organizations', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: `Offered ${label}`, email, password } });
    t.equal(created.statusCode, 201);
    const login = await gateway.publicServer.inject({ method: 'POST', url: '/auth/login', headers: UA, payload: { email, password } });
    const authorization = `Bearer ${login.json<{ token: string }>().token}`;
    const status = await gateway.publicServer.inject({ url: '/auth/mfa', headers: { ...UA, authorization } });
    t.strictSame(status.json<{ offered: unknown }>().offered, offered, label);
    // And it is what enrolment then does.
    const totp = await gateway.publicServer.inject({ method: 'POST', url: '/auth/mfa/totp', headers: { ...UA, authorization }, payload: { currentPassword: password } });
    t.equal(totp.statusCode, offered.totp ? 200 : 409, `${label}: TOTP enrolment`);
    const passkey = await gateway.publicServer.inject({ method: 'POST', url: '/auth/mfa/passkeys/registration', headers: { ...UA, authorization }, payload: { currentPassword: password } });
    t.equal(passkey.statusCode, offered.passkey ? 200 : 409, `${label}: passkey registration`);
  }
});
