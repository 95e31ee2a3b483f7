import t from 'tap';
import { injectGateway } from '../helpers/inject.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { waitFor } from '../helpers/redis.js';
import { bearer } from './helpers.js';

/**
 * An invitation goes to the operator's webhook as the signed notice member.invited (issue 50),
 * with its token for the operator's mailer; the audit trail never holds the token.
 */
const SECRET = 'members-notice-secret-0123456789abcdef';

t.test('member.invited reaches the webhook, signed, with the token; the trail has no token', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_NOTIFY_WEBHOOK_URL: receiver.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET }, deps: { noticeTuning: { baseDelayMs: 20 } } });
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const invited = (await gw.pub({ method: 'POST', url: '/auth/invitations', headers: bearer(owner), payload: { email: 'New.Person@Example.test', role: 'developer' } })).json<{ token: string; id: string }>();
  await waitFor('the notice', 10_000, () => receiver.received.some((r) => r.raw.toString('utf8').includes('member.invited')));
  const notice = receiver.received.find((r) => r.raw.toString('utf8').includes('member.invited'))!;
  const body = JSON.parse(notice.raw.toString('utf8')) as { type: string; organization: { id: string }; invitation: { email: string; role: string; token: string }; details: Record<string, unknown> };
  t.equal(body.type, 'member.invited');
  t.equal(body.organization.id, org.id);
  t.match(body.invitation, { email: 'new.person@example.test', role: 'developer', token: invited.token });
  const signed = String(notice.headers['x-authgate-signature'] ?? '');
  t.ok(signed.length > 0, 'signed (notices/notice.ts signs every notice alike; test/notices checks the HMAC)');
  await gw.gateway.audit.flush();
  const trail = (await gw.pub({ url: '/auth/audit', headers: bearer(owner) })).body;
  t.ok(trail.includes('member.invited'), 'recorded');
  t.notOk(trail.includes(invited.token.split('.')[1]!), 'without the token');
});
