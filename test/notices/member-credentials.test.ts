import t from 'tap';
import { signature } from '../../src/notices/notice.js';
import { ADMIN_TOKEN, eventually, send, startGateway } from '../helpers/gateway.js';
import { call, clock, codeAt } from '../helpers/second-factor.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { invite } from '../members/started-team.js';

/**
 * Issue 50: the operator's reset of one member's password and removal of its second factor go out
 * as security notices naming the member (its id and e-mail in the details), signed, with no
 * secret (reset token, TOTP secret, password); so does the member's own password change.
 */

const SECRET = 'notices-test-secret-0123456789abcdef-XyZ';
type Notice = { type: string; organization: { id: string }; actor: string; details: Record<string, unknown>; member?: { id: string; email: string | null } };

t.test("the operator's resets of a member are told, naming the member", async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const time = clock();
  const gw = await startGateway(t, { env: { AUTHGATE_NOTIFY_WEBHOOK_URL: receiver.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET }, deps: { now: time.now, noticeTuning: { baseDelayMs: 20 } } });
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const dev = await invite(t, gw, owner, 'developer');
  const { secret } = (await call(gw, 'POST', '/auth/mfa/totp', { currentPassword: dev.password }, dev.token)).json() as { secret: string };
  t.equal((await call(gw, 'POST', '/auth/mfa/totp/confirm', { code: codeAt(secret, time.now()) }, dev.token)).status, 200, "the member's TOTP enabled");
  const admin = (method: string, path: string) => send(`${gw.opsUrl}/admin/organizations/${org.id}/members/${dev.id}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal((await admin('DELETE', '/mfa')).status, 200, "the operator removes the member's second factor");
  const issued = await admin('POST', '/password-reset');
  t.equal(issued.status, 200, "the operator issues the member's reset");
  const { resetToken } = issued.json() as { resetToken: string };

  const notices = () => receiver.received.map((r) => JSON.parse(r.raw.toString('utf8')) as Notice);
  const aboutMember = (type: string) => notices().find((n) => n.type === type && n.details.memberId === dev.id);
  t.ok(await eventually(async () => aboutMember('mfa.removed') !== undefined && aboutMember('password.reset_issued') !== undefined, 10_000), `both told (${notices().map((n) => n.type).join(', ')})`);
  for (const type of ['mfa.removed', 'password.reset_issued']) {
    const notice = aboutMember(type)!;
    t.equal(notice.details.memberEmail, dev.email, `${type}: names the member`);
    t.strictSame(notice.member, { id: dev.id, email: dev.email }, `${type}: the member it concerns`);
    t.equal(notice.actor, 'admin', `${type}: by the operator`);
    t.equal(notice.organization.id, org.id);
  }
  for (const received of receiver.received) {
    t.equal(received.headers['x-authgate-signature'], signature(received.raw, SECRET), 'signed');
    const text = received.raw.toString('utf8');
    for (const held of [secret, resetToken, dev.password, dev.token]) t.notOk(text.includes(held), 'no secret in the notice');
  }
});
