/**
 * Each member's own second factor and password (issue 50, store/mfa.ts, store/passkeys.ts and
 * store/member-passwords.ts with a `memberId`): run by storeContract on memory, standalone Redis,
 * Sentinel and Cluster. The first member's stay the organization's, stored as before members.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { newMfaToken } from '../../src/credentials/mfa-tokens.js';
import { newResetToken } from '../../src/credentials/reset-tokens.js';
import { firstMemberId, type Member } from '../../src/store/members.js';
import type { Passkey } from '../../src/store/passkeys.js';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';

const passkey = (id: string): Passkey => ({ id, name: id, publicKey: 'pQECAyYgASFYIA', counter: 0, transports: ['internal'], createdAt: 1_700_000_000_000, lastUsedAt: null });

export function memberCredentialContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: { newOrganization: () => NewOrganization }): void {
  async function orgWithMember(store: GatewayStore): Promise<{ org: NewOrganization; member: Member }> {
    const org = helpers.newOrganization();
    if ((await store.createOrganizationIfEmailFree(org)) === 'email-taken') throw new Error('fresh e-mail taken');
    const id = `mem_${randomBytes(12).toString('hex')}`;
    const member: Member = { id, orgId: org.id, email: `${id}@example.com`, passwordHash: '$argon2id$old', role: 'developer', createdAt: new Date().toISOString() };
    if ((await store.createMemberIfEmailFree(member)) !== member) throw new Error('member not created');
    return { org, member };
  }

  t.test('member credentials: a member\'s TOTP, codes and passkeys are its own; the first member\'s are the organization\'s', async (t) => {
    const store = await open(t);
    const { org, member } = await orgWithMember(store);
    const m = member.id;
    t.equal(await store.beginTotp(org.id, 'sealed-m', m), 'pending');
    t.equal(await store.findTotp(org.id), undefined, 'the organization\'s own factor untouched');
    t.equal(await store.activateTotp(org.id, 'sealed-m', 100, ['m1', 'm2'], m), 'first', 'the member\'s first factor');
    t.strictSame(await store.findTotp(org.id, m), { secret: 'sealed-m', active: true, lastStep: 100, recoveryCodesLeft: 2 });
    t.equal(await store.useRecoveryCode(org.id, 'm1'), false, 'the member\'s code is no code of the organization');
    t.equal(await store.useTotpStep(org.id, 101), false, 'no organization factor to use a step of');

    t.equal(await store.beginTotp(org.id, 'sealed-o'), 'pending', 'the organization enrols on its own');
    t.equal(await store.activateTotp(org.id, 'sealed-o', 100, ['o1'], firstMemberId(org.id)), 'first', 'the first member\'s id is the organization\'s factor');
    t.equal((await store.findTotp(org.id))?.secret, 'sealed-o');
    t.equal(await store.useTotpStep(org.id, 101, m), true, 'the member\'s steps are its own');
    t.equal(await store.useTotpStep(org.id, 101), true, '…and the organization\'s');
    t.equal(await store.useRecoveryCode(org.id, 'm1', m), true);
    t.equal(await store.countRecoveryCodes(org.id, m), 1);
    t.equal(await store.countRecoveryCodes(org.id), 1);

    t.equal(await store.addPasskey(org.id, passkey('pk-m'), ['x'], m), 'added', 'beside its TOTP: codes kept');
    t.strictSame((await store.listPasskeys(org.id, m)).map((p) => p.id), ['pk-m']);
    t.strictSame(await store.listPasskeys(org.id), [], 'not the organization\'s');
    t.equal(await store.usePasskey(org.id, 'pk-m', 0, 5), false, 'the organization has no such passkey');
    t.equal(await store.usePasskey(org.id, 'pk-m', 0, 5, m), true);
    await store.beginPasskeyRegistration(org.id, { challenge: 'c-m', expiresAt: Date.now() + 60_000 }, m);
    t.equal(await store.takePasskeyRegistration(org.id), undefined, 'the member\'s pending registration is its own');
    t.equal((await store.takePasskeyRegistration(org.id, m))?.challenge, 'c-m');

    t.equal(await store.removeSecondFactors(org.id, m), true, 'the operator removes the member\'s');
    t.equal(await store.findTotp(org.id, m), undefined);
    t.strictSame(await store.listPasskeys(org.id, m), []);
    t.equal(await store.countRecoveryCodes(org.id, m), 0);
    t.equal((await store.findTotp(org.id))?.active, true, 'the organization\'s stays');
  });

  t.test('member credentials: none stored for a member that is not (or no more), and a removal takes them', async (t) => {
    const store = await open(t);
    const { org, member } = await orgWithMember(store);
    t.equal(await store.beginTotp(org.id, 's', 'mem_nobody'), undefined, 'no such member');
    t.equal(await store.addPasskey(org.id, passkey('pk-x'), ['h'], 'mem_nobody'), undefined, 'no such member');
    t.equal(await store.beginTotp(org.id, 's', member.id), 'pending');
    t.equal(await store.activateTotp(org.id, 's', 10, ['h'], member.id), 'first');
    t.equal(await store.addPasskey(org.id, passkey('pk-y'), ['h'], member.id), 'added');
    t.ok(typeof (await store.removeMember(org.id, member.id)) === 'object');
    t.equal(await store.findTotp(org.id, member.id), undefined, 'its TOTP went with it');
    t.strictSame(await store.listPasskeys(org.id, member.id), [], 'its passkeys too');
    t.equal(await store.countRecoveryCodes(org.id, member.id), 0, 'its codes too');
    t.equal(await store.beginTotp(org.id, 's', member.id), undefined, 'a removed member enrols nothing');

    const again = await orgWithMember(store);
    t.equal(await store.beginTotp(again.org.id, 's', again.member.id), 'pending');
    t.ok(await store.deleteOrganization(again.org.id));
    t.equal(await store.findTotp(again.org.id, again.member.id), undefined, 'a deleted organization\'s members\' factors go with it');
  });

  t.test('member credentials: a login challenge names its member', async (t) => {
    const store = await open(t);
    const { org, member } = await orgWithMember(store);
    const { tokenHash } = newMfaToken(org.id);
    await store.createMfaChallenge(tokenHash, { orgId: org.id, memberId: member.id, passwordCheck: 'pc', expiresAt: Date.now() + 60_000 });
    t.equal((await store.findMfaChallenge(tokenHash))?.memberId, member.id);
    const own = newMfaToken(org.id);
    await store.createMfaChallenge(own.tokenHash, { orgId: org.id, passwordCheck: 'pc', expiresAt: Date.now() + 60_000 });
    t.equal((await store.findMfaChallenge(own.tokenHash))?.memberId, undefined, 'the organization\'s own names none');
  });

  t.test('member credentials: a member\'s password and its one live reset', async (t) => {
    const store = await open(t);
    const { org, member } = await orgWithMember(store);
    t.equal(await store.setMemberPassword(org.id, member.id, '$argon2id$new'), true);
    t.equal((await store.findMember(org.id, member.id))?.passwordHash, '$argon2id$new');
    t.equal((await store.findOrganizationById(org.id))?.passwordHash, org.passwordHash, 'the organization\'s own untouched');
    t.equal(await store.setMemberPassword(org.id, 'mem_nobody', 'h'), false);
    t.equal(await store.setMemberPassword(org.id, firstMemberId(org.id), 'h'), false, 'the first member\'s is the organization\'s (replacePassword)');

    const first = newResetToken(org.id);
    const second = newResetToken(org.id);
    const expiresAt = Date.now() + 60_000;
    t.equal(await store.createMemberPasswordReset({ orgId: org.id, memberId: member.id, tokenHash: first.tokenHash, expiresAt }), true);
    t.strictSame(await store.findPasswordReset(first.tokenHash), { orgId: org.id, expiresAt, memberId: member.id });
    t.equal(await store.createMemberPasswordReset({ orgId: org.id, memberId: member.id, tokenHash: second.tokenHash, expiresAt }), true);
    t.equal(await store.findPasswordReset(first.tokenHash), undefined, 'replaced by the newer');
    t.equal(await store.consumePasswordReset(org.id, second.tokenHash, 'h'), undefined, 'a member\'s reset sets no organization password');
    const racing = await Promise.all([1, 2, 3].map(() => store.consumeMemberPasswordReset(org.id, member.id, second.tokenHash, '$argon2id$reset')));
    t.equal(racing.filter(Boolean).length, 1, 'one of three racing uses');
    t.equal((await store.findMember(org.id, member.id))?.passwordHash, '$argon2id$reset');
    t.equal(await store.findPasswordReset(second.tokenHash), undefined, 'used');
    t.equal(await store.createMemberPasswordReset({ orgId: org.id, memberId: 'mem_nobody', tokenHash: first.tokenHash, expiresAt }), false);

    const third = newResetToken(org.id);
    t.equal(await store.createMemberPasswordReset({ orgId: org.id, memberId: member.id, tokenHash: third.tokenHash, expiresAt }), true);
    t.ok(typeof (await store.removeMember(org.id, member.id)) === 'object');
    t.equal(await store.findPasswordReset(third.tokenHash), undefined, 'a removed member\'s reset works no more');
  });
}
