import t, { type Test } from 'tap';
import { firstMemberId } from '../../src/store/members.js';
import { injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { bearer, invite } from './helpers.js';

/**
 * GET /auth/organization names the member the login token acts as, with its role (issue 50), so
 * that a client (the console) shows only what the role allows; PATCH answers the same, the first
 * member's e-mail being the organization's new one after a change.
 */

type Answer = { id: string; email: string; member?: { id: string; email: string; role: string; first: boolean } };

async function signedInMember(t: Test, gw: InjectedGateway) {
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const viewer = await invite(t, gw, owner, 'viewer');
  const developer = await invite(t, gw, owner, 'developer');

  const asOwner = await gw.pub({ url: '/auth/organization', headers: bearer(owner) });
  t.equal(asOwner.statusCode, 200);
  t.strictSame(asOwner.json<Answer>().member, { id: firstMemberId(org.id), email: org.email, role: 'owner', first: true }, 'the first member, an owner');
  t.strictSame((await gw.pub({ url: '/auth/organization', headers: bearer(viewer.token) })).json<Answer>().member, { id: viewer.memberId, email: viewer.email, role: 'viewer', first: false }, 'a viewer sees itself as one');
  t.strictSame((await gw.pub({ url: '/auth/organization', headers: bearer(developer.token) })).json<Answer>().member, { id: developer.memberId, email: developer.email, role: 'developer', first: false }, 'a developer too');

  // A changed role counts at once: the viewer made a developer logs in again (its sessions ended) and reads it.
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/members/${viewer.memberId}`, headers: bearer(owner), payload: { role: 'developer' } })).statusCode, 200);
  const again = await gw.login(viewer.email, viewer.password);
  t.equal((await gw.pub({ url: '/auth/organization', headers: bearer(again) })).json<Answer>().member?.role, 'developer', 'the new role is the one named');

  const newEmail = `renamed-${process.pid}-${Date.now()}@example.test`;
  const changed = await gw.pub({ method: 'PATCH', url: '/auth/organization', headers: bearer(owner), payload: { email: newEmail, currentPassword: org.password } });
  t.equal(changed.statusCode, 200);
  t.strictSame(changed.json<Answer>().member, { id: firstMemberId(org.id), email: newEmail, role: 'owner', first: true }, "PATCH answers the member too, the first member's e-mail the new one");
}

t.test('the signed-in member on the memory store', async (t) => {
  await signedInMember(t, await injectGateway(t));
});

t.test('the signed-in member on Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  await signedInMember(t, await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' } }));
});
