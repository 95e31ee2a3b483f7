/**
 * The members part of the store contract (store/members.ts, issue 50): run by storeContract on
 * memory, standalone Redis, Sentinel and Cluster.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { firstMemberId, type Member } from '../../src/store/members.js';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';

export function memberContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: { newOrganization: (overrides?: Partial<NewOrganization>) => NewOrganization }): void {
  async function org(store: GatewayStore) {
    const made = helpers.newOrganization();
    if ((await store.createOrganizationIfEmailFree(made)) === 'email-taken') throw new Error('fresh e-mail taken');
    return made;
  }
  const newMember = (orgId: string, overrides: Partial<Member> = {}): Member => {
    const id = `mem_${randomBytes(12).toString('base64url')}`;
    return { id, orgId, email: `${id.toLowerCase()}@example.com`, passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', role: 'developer', createdAt: new Date().toISOString(), ...overrides };
  };

  t.test('members: an organization is its first member, an owner, derived from its record', async (t) => {
    const store = await open(t);
    const o = await org(store);
    const first = { id: firstMemberId(o.id), orgId: o.id, email: o.email, passwordHash: o.passwordHash, role: 'owner', createdAt: o.createdAt };
    t.strictSame(await store.listMembers(o.id), [first]);
    t.strictSame(await store.findMember(o.id, first.id), first);
    t.equal(await store.findMemberByEmail(o.email), undefined, 'the organization\'s e-mail is found as the organization');
    t.strictSame(await store.listMembers(helpers.newOrganization().id), [], 'no organization, no members');
  });

  t.test('members: one e-mail, one person across the whole store', async (t) => {
    const store = await open(t);
    const a = await org(store);
    const b = await org(store);
    const m = newMember(a.id);
    t.strictSame(await store.createMemberIfEmailFree(m), m);
    t.strictSame(await store.findMemberByEmail(m.email), m);
    t.strictSame(await store.findOrganizationByEmail(m.email), undefined, 'a member\'s e-mail is no organization\'s');
    t.equal(await store.createMemberIfEmailFree(newMember(b.id, { email: m.email })), 'email-taken', 'another organization\'s member');
    t.equal(await store.createMemberIfEmailFree(newMember(a.id, { email: b.email })), 'email-taken', 'another organization\'s own e-mail');
    t.equal(await store.createMemberIfEmailFree(newMember(a.id, { email: a.email })), 'email-taken', 'its own organization\'s e-mail (the first member\'s)');
    t.equal(await store.createOrganizationIfEmailFree(helpers.newOrganization({ email: m.email })), 'email-taken', 'a sign-up with a member\'s e-mail');
    t.equal(await store.createMemberIfEmailFree(newMember(helpers.newOrganization().id)), 'no-organization');
    const racing = await Promise.all([a.id, b.id, a.id].map((orgId) => store.createMemberIfEmailFree(newMember(orgId, { email: 'same@example.com' }))));
    t.equal(racing.filter((r) => typeof r === 'object').length, 1, 'three racing creations of one e-mail: one member');
    t.equal((await store.listMembers(a.id)).length + (await store.listMembers(b.id)).length, 2 + 1 + 1, 'no half-created member is listed');
  });

  t.test('members: roles change and members leave, and the last owner stays', async (t) => {
    const store = await open(t);
    const o = await org(store);
    const firstId = firstMemberId(o.id);
    const admin = newMember(o.id, { role: 'admin' });
    await store.createMemberIfEmailFree(admin);
    t.equal(await store.changeMemberRole(o.id, firstId, 'admin'), 'last-owner', 'the only owner is not demoted');
    t.equal(await store.removeMember(o.id, firstId), 'last-owner', 'nor removed');
    t.equal(await store.changeMemberRole(o.id, 'mem_nobody', 'viewer'), 'not-found');
    t.equal(await store.removeMember(helpers.newOrganization().id, firstId), 'not-found');
    t.match(await store.changeMemberRole(o.id, admin.id, 'owner'), { id: admin.id, role: 'owner', email: admin.email });
    t.match(await store.changeMemberRole(o.id, firstId, 'viewer'), { id: firstId, role: 'viewer', email: o.email }, 'with two owners, one may go');
    t.equal((await store.findMember(o.id, firstId))?.role, 'viewer', 'the first member\'s role is stored');
    t.equal(await store.changeMemberRole(o.id, admin.id, 'developer'), 'last-owner');
    t.match(await store.changeMemberRole(o.id, firstId, 'owner'), { role: 'owner' });
    // Two owners, two racing demotions: exactly one may pass.
    const racing = await Promise.all([store.changeMemberRole(o.id, firstId, 'viewer'), store.changeMemberRole(o.id, admin.id, 'viewer')]);
    t.equal(racing.filter((r) => r === 'last-owner').length, 1, 'one of two racing demotions is refused');
    t.equal((await store.listMembers(o.id)).filter((m) => m.role === 'owner').length, 1, 'one owner left');
    const owner = (await store.listMembers(o.id)).find((m) => m.role === 'owner')!;
    const other = owner.id === firstId ? admin.id : firstId;
    t.match(await store.changeMemberRole(o.id, other, 'owner'), { role: 'owner' });
    const removed = await store.removeMember(o.id, other);
    t.match(removed, { id: other }, 'removed, answered with what it was');
    t.equal(await store.findMember(o.id, other), undefined);
    t.strictSame((await store.listMembers(o.id)).map((m) => m.id), [owner.id]);
    if (other === admin.id) {
      t.equal(await store.findMemberByEmail(admin.email), undefined, 'its e-mail is free');
      t.match(await store.createMemberIfEmailFree(newMember(o.id, { email: admin.email })), { email: admin.email }, 'and may be taken again');
    }
  });

  t.test('members: sessions link to their member; deleting the organization drops its members', async (t) => {
    const store = await open(t);
    const o = await org(store);
    const m = newMember(o.id);
    await store.createMemberIfEmailFree(m);
    await store.linkSessionToMember(o.id, 'tag.s1', m.id, 60_000);
    await store.linkSessionToMember(o.id, 'tag.s2', m.id, 60_000);
    t.equal(await store.sessionMemberId(o.id, 'tag.s1'), m.id);
    t.equal(await store.sessionMemberId(o.id, 'tag.s3'), undefined, 'no link: the first member\'s');
    t.strictSame((await store.linkedSessionIds(o.id, m.id)).sort(), ['tag.s1', 'tag.s2']);
    await store.deleteOrganization(o.id);
    t.equal(await store.findMemberByEmail(m.email), undefined);
    const again = await org(store);
    t.match(await store.createMemberIfEmailFree(newMember(again.id, { email: m.email })), { email: m.email }, 'a deleted organization\'s member\'s e-mail is free again');
  });

  t.test('invitations: one use, revocable, listed while live; key creators recorded', async (t) => {
    const store = await open(t);
    const o = await org(store);
    const at = Date.now();
    // Far from any clock a store of the suite runs on (some run on a clock of their own).
    const invitation = (id: string, expiresAt = at + 10 * 365 * 24 * 3600 * 1000) => ({ id, orgId: o.id, email: `${id}@example.com`, role: 'viewer' as const, tokenHash: `hash-${id}`, createdAt: at, expiresAt, invitedBy: firstMemberId(o.id) });
    t.equal(await store.createInvitation({ ...invitation('inv_a'), orgId: helpers.newOrganization().id }), 'no-organization');
    t.equal(await store.createInvitation(invitation('inv_a')), 'created');
    t.equal(await store.createInvitation(invitation('inv_b')), 'created');
    t.equal(await store.createInvitation(invitation('inv_old', 1)), 'created');
    t.strictSame((await store.listInvitations(o.id)).map((i) => i.id), ['inv_a', 'inv_b'], 'an expired one is not listed');
    t.equal(await store.takeInvitation(o.id, 'inv_a', 'hash-wrong'), undefined, 'another token');
    t.equal(await store.takeInvitation(o.id, 'inv_old', 'hash-inv_old'), undefined, 'expired');
    const racing = await Promise.all([1, 2, 3].map(() => store.takeInvitation(o.id, 'inv_a', 'hash-inv_a')));
    t.equal(racing.filter((r) => r !== undefined).length, 1, 'three racing takes: one');
    t.strictSame(racing.find((r) => r !== undefined), invitation('inv_a'));
    t.equal(await store.deleteInvitation(o.id, 'inv_b'), true);
    t.equal(await store.deleteInvitation(o.id, 'inv_b'), false, 'once');
    t.equal(await store.takeInvitation(o.id, 'inv_b', 'hash-inv_b'), undefined, 'a revoked one');
    t.strictSame(await store.listInvitations(o.id), []);
    await store.recordKeyCreator(o.id, 'key_1', 'mem_x');
    t.strictSame(await store.keyCreators(o.id), { key_1: 'mem_x' });
  });
}
