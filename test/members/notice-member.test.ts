import t from 'tap';
import { injectGateway } from '../helpers/inject.js';
import { waitFor } from '../helpers/redis.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { bearer, invite } from './helpers.js';

/**
 * Security notices name the member concerned (issue 50): `member: {id, email}` (null where the
 * notice concerns no person), as the store holds the member when the notice is sent.
 */
const SECRET = 'members-notice-secret-0123456789abcdef';
type Notice = { type: string; member?: { id: string; email: string | null } | null; details: Record<string, unknown> };

t.test('each notice names the member it concerns', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_NOTIFY_WEBHOOK_URL: receiver.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET }, deps: { noticeTuning: { baseDelayMs: 20 } } });
  const org = await gw.createOrganization();
  const first = { id: `mem_${org.id.slice(4)}`, email: org.email };
  const owner = await gw.login(org.email, org.password);
  const dev = await invite(t, gw, owner, 'developer');
  const leaked = await gw.createApiKey(dev.token);

  t.equal((await gw.pub({ method: 'POST', url: '/auth/password', headers: bearer(owner), payload: { currentPassword: org.password, newPassword: 'a-brand-new-password-for-the-owner' } })).statusCode, 200, 'the owner changes its password');
  t.equal((await gw.ops({ method: 'POST', url: `/admin/organizations/${org.id}/password-reset` })).statusCode, 200, 'the operator issues a reset');
  t.equal((await gw.pub({ method: 'POST', url: '/auth/api-key/leaked', payload: { keys: [leaked.apiKey] } })).statusCode, 202, "the developer's key is reported leaked");

  const types = ['password.changed', 'password.reset_issued', 'api_key.leaked', 'member.invited'];
  await waitFor('the notices', 10_000, () => types.every((type) => receiver.received.some((r) => (JSON.parse(r.raw.toString('utf8')) as Notice).type === type)));
  const notices = receiver.received.map((r) => JSON.parse(r.raw.toString('utf8')) as Notice);
  const of = (type: string) => notices.find((n) => n.type === type);
  t.same(of('password.changed')?.member, first, 'a password change: the member whose password it is');
  t.same(of('password.reset_issued')?.member, first, "the operator's reset: the organization's first member, whose password it is");
  t.same(of('api_key.leaked')?.member, { id: dev.memberId, email: dev.email }, 'a leaked key: the member who created it');
  t.same(of('member.invited')?.member, first, 'an invitation: the member who invited');
  t.ok(notices.every((n) => 'member' in n), 'every notice has the field (null where it concerns no person)');
});
