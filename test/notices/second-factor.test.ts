import t from 'tap';
import { signature } from '../../src/notices/notice.js';
import { ADMIN_TOKEN, eventually, send, startGateway } from '../helpers/gateway.js';
import { call, clock, codeAt, problem } from '../helpers/second-factor.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Issue 45: every change to an organization's second factor goes out as a security notice (NIST
 * SP 800-63B-4 §4.6), as password and e-mail changes do: TOTP enrolled and removed, a passkey
 * added and removed, recovery codes regenerated and used, and the operator's removal. A real
 * gateway POSTs them to a real HTTP receiver on loopback; each is signed, names the organization,
 * and holds no secret (TOTP secret, recovery code, password, token).
 */

const SECRET = 'notices-test-secret-0123456789abcdef-XyZ';
const ORIGIN = 'http://localhost:8443';
type Notice = { type: string; organization: { id: string }; details: Record<string, unknown> };

t.test('a notice for each second-factor change, the operator\'s removal too', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const time = clock();
  const gw = await startGateway(t, {
    env: { AUTHGATE_NOTIFY_WEBHOOK_URL: receiver.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET, AUTHGATE_WEBAUTHN_RP_ID: 'localhost', AUTHGATE_WEBAUTHN_ORIGINS: ORIGIN },
    deps: { now: time.now, noticeTuning: { baseDelayMs: 20 } },
  });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);

  const { secret } = (await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token)).json() as { secret: string };
  const confirmed = await call(gw, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, token);
  const { recoveryCodes } = confirmed.json() as { recoveryCodes: string[] };
  t.equal(confirmed.status, 200, 'TOTP enabled');

  const login = await call(gw, 'POST', '/auth/login', { email: org.email, password: org.password });
  problem(t, login, 403, 1116, 'a login asks for the second factor');
  t.equal((await call(gw, 'POST', '/auth/login/mfa', { mfaToken: (login.json() as { mfaToken: string }).mfaToken, recoveryCode: recoveryCodes[0] })).status, 200, 'a recovery code used');

  time.step();
  const regenerated = await call(gw, 'POST', '/auth/mfa/recovery-codes', { currentPassword: org.password, code: codeAt(secret, time.now()) }, token);
  t.equal(regenerated.status, 200, 'recovery codes regenerated');
  const fresh = (regenerated.json() as { recoveryCodes: string[] }).recoveryCodes;

  time.step();
  const authenticator = new SoftAuthenticator();
  const begun = await call(gw, 'POST', '/auth/mfa/passkeys/registration', { currentPassword: org.password, code: codeAt(secret, time.now()) }, token);
  t.equal(begun.status, 200, 'passkey registration begun');
  const added = await call(gw, 'POST', '/auth/mfa/passkeys', { response: authenticator.register((begun.json() as { options: { challenge: string; rp: { id?: string } } }).options, { origin: ORIGIN }) }, token);
  t.equal(added.status, 201, 'passkey added');
  // The proof of this removal is a recovery code: it is told as used, as at a login.
  t.equal((await call(gw, 'DELETE', `/auth/mfa/passkeys/${authenticator.id}`, { currentPassword: org.password, recoveryCode: fresh[0] }, token)).status, 204, 'passkey removed');

  time.step();
  t.equal((await call(gw, 'DELETE', '/auth/mfa/totp', { currentPassword: org.password, code: codeAt(secret, time.now()) }, token)).status, 204, 'TOTP removed');

  const again = (await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: org.password }, token)).json() as { secret: string };
  t.equal((await call(gw, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(again.secret, time.now()) }, token)).status, 200, 'TOTP enabled again');
  const removed = await send(`${gw.opsUrl}/admin/organizations/${org.id}/mfa`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(removed.status, 200, 'the operator removes it');

  const wanted = ['mfa.totp_enabled', 'mfa.recovery_code_used', 'mfa.recovery_codes_regenerated', 'mfa.passkey_added', 'mfa.passkey_removed', 'mfa.totp_disabled', 'mfa.removed'];
  const types = () => receiver.received.map((r) => (JSON.parse(r.raw.toString('utf8')) as Notice).type);
  t.ok(await eventually(async () => wanted.every((type) => types().includes(type)) && types().filter((x) => x === 'mfa.totp_enabled').length === 2, 10_000), `every change told (${types().join(', ')})`);
  t.equal(types().filter((x) => x === 'mfa.recovery_code_used').length, 2, 'a recovery code used at a login and as a proof: both told');

  for (const received of receiver.received) {
    t.equal(received.headers['x-authgate-signature'], signature(received.raw, SECRET), 'signed with the webhook secret');
    const notice = JSON.parse(received.raw.toString('utf8')) as Notice;
    t.equal(notice.organization.id, org.id);
    const text = received.raw.toString('utf8');
    for (const held of [secret, again.secret, org.password, token, ...recoveryCodes, ...fresh]) t.notOk(text.includes(held), `${notice.type}: no secret in the notice`);
  }
  const byOperator = receiver.received.map((r) => JSON.parse(r.raw.toString('utf8')) as Notice & { actor: string }).find((n) => n.type === 'mfa.removed');
  t.equal(byOperator?.actor, 'admin', 'the operator\'s removal names the operator');
});
