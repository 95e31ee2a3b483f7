/**
 * Members and invitations (issue 50): the rules around the store's atomic steps. Who may change
 * whom (roles.ts mayManageRole), the last owner (the store refuses atomically), ending a member's
 * sessions on every replica (the store's session revocation, announced on the bus), invitations
 * (a token shown once, kept as a digest, one use).
 */
import { randomBytes } from 'node:crypto';
import { sha256Base64url } from '../credentials/digest.js';
import type { PasswordHasher } from '../credentials/passwords.js';
import type { PasswordPolicy } from '../credentials/password-policy.js';
import { mayManageRole } from '../members/roles.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { firstMemberId, type Invitation, type Member, type MemberRole } from '../store/members.js';
import type { GatewayStore, Revoked } from '../store/store.js';
import { endMemberSessions } from './member-sessions.js';
import type { NormalizedEmail } from './organizations.js';

export type MemberView = Readonly<{ id: string; email: string; role: MemberRole; createdAt: string; first: boolean }>;
export type InvitationView = Readonly<{ id: string; email: string; role: MemberRole; createdAt: string; expiresAt: string; invitedBy: string }>;
export type IssuedInvitation = InvitationView & Readonly<{ token: string }>;

export const DEFAULT_INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

export function memberView(member: Member): MemberView {
  return { id: member.id, email: member.email, role: member.role, createdAt: member.createdAt, first: member.id === firstMemberId(member.orgId) };
}

function invitationView(invitation: Invitation): InvitationView {
  const { id, email, role, invitedBy } = invitation;
  return { id, email, role, invitedBy, createdAt: new Date(invitation.createdAt).toISOString(), expiresAt: new Date(invitation.expiresAt).toISOString() };
}

/**
 * An invitation token: `agi_<invitation id without inv_>.<secret>`. The id names the organization
 * (its first 32 characters are the organization id's hex), so accepting needs no index; only the
 * secret's digest is stored.
 */
function parseInvitationToken(token: string): { orgId: string; invitationId: string; secret: string } | undefined {
  const match = /^agi_([0-9a-f]{32})([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (match === null) return undefined;
  return { orgId: `org_${match[1]!}`, invitationId: `inv_${match[1]!}${match[2]!}`, secret: match[3]! };
}

const digestOf = (secret: string) => sha256Base64url(`authgate-invitation:${secret}`);

export function createMemberService(deps: {
  store: GatewayStore;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  passwords: PasswordHasher;
  policy: Pick<PasswordPolicy, 'enforce'>;
  now: () => number;
  invitationTtlMs?: number;
}) {
  const { store, bus, passwords, policy, now } = deps;
  const ttlMs = deps.invitationTtlMs ?? DEFAULT_INVITATION_TTL_MS;

  async function target(orgId: string, memberId: string): Promise<Member> {
    const member = await store.findMember(orgId, memberId);
    if (member === undefined) throw new Problem('memberNotFound');
    return member;
  }

  function refuse(actor: Member, what: string): never {
    throw new Problem('memberRoleForbidden', `The role ${actor.role} may not ${what}.`, `role_${actor.role}`);
  }

  /** Ends every session of the member, on every replica (services/member-sessions.ts). */
  const endSessionsOf = (orgId: string, memberId: string): Promise<number> => endMemberSessions({ store, bus }, orgId, memberId);

  /** Revokes the keys the member created (a key of no recorded creator is the first member's); their ids. */
  async function revokeKeysOf(orgId: string, memberId: string): Promise<string[]> {
    const creators = await store.keyCreators(orgId);
    const first = firstMemberId(orgId);
    const ids = (await store.listApiKeys(orgId)).map((key) => key.id).filter((id) => (creators[id] ?? first) === memberId);
    const revoked: Revoked[] = [];
    const keyIds: string[] = [];
    for (const id of ids) {
      const gone = await store.deleteApiKeyIfOwned(orgId, id);
      if (gone === undefined) continue; // revoked meanwhile
      revoked.push(gone);
      keyIds.push(id);
    }
    bus.applyLocally(revoked);
    return keyIds;
  }

  function changed(result: Member | 'not-found' | 'last-owner'): Member {
    if (result === 'not-found') throw new Problem('memberNotFound');
    if (result === 'last-owner') throw new Problem('lastOwner', 'An organization keeps at least one owner: make another member an owner first.');
    return result;
  }

  return {
    endSessionsOf,

    list: async (orgId: string): Promise<MemberView[]> => (await store.listMembers(orgId)).map(memberView),

    /** `actor` undefined: the operator (admin API), who may do anything but leave no owner. */
    async changeRole(actor: Member | undefined, orgId: string, memberId: string, role: MemberRole): Promise<{ member: MemberView; before: MemberRole; sessionsEnded: number }> {
      const current = await target(orgId, memberId);
      if (actor !== undefined && (!mayManageRole(actor.role, current.role) || !mayManageRole(actor.role, role))) refuse(actor, `change an owner's role, or make an owner`);
      const updated = changed(await store.changeMemberRole(orgId, memberId, role));
      // A role taken away ends the member's sessions, as a removal does (they log in again with the new role).
      const sessionsEnded = current.role === role ? 0 : await endSessionsOf(orgId, memberId);
      return { member: memberView(updated), before: current.role, sessionsEnded };
    },

    /**
     * Removes a member and ends its sessions; with `revokeKeys`, also revokes the keys it created
     * (after the removal, so a refused removal revokes nothing), each announced on the bus as a
     * key revocation is: every replica refuses them at once.
     */
    async remove(actor: Member | undefined, orgId: string, memberId: string, options: { revokeKeys?: boolean } = {}): Promise<{ member: MemberView; sessionsEnded: number; keysRevoked: string[] }> {
      const current = await target(orgId, memberId);
      if (actor !== undefined && !mayManageRole(actor.role, current.role)) refuse(actor, 'remove an owner');
      const removed = changed(await store.removeMember(orgId, memberId));
      const sessionsEnded = await endSessionsOf(orgId, memberId);
      return { member: memberView(removed), sessionsEnded, keysRevoked: options.revokeKeys === true ? await revokeKeysOf(orgId, memberId) : [] };
    },

    async invite(actor: Member, orgId: string, email: NormalizedEmail, role: MemberRole): Promise<IssuedInvitation> {
      if (!mayManageRole(actor.role, role)) refuse(actor, 'invite an owner');
      // Early, for a clear answer; the member's creation claims the e-mail atomically anyway.
      if ((await store.findOrganizationByEmail(email)) !== undefined || (await store.findMemberByEmail(email)) !== undefined) throw new Problem('emailTaken');
      const hex = orgId.startsWith('org_') ? orgId.slice(4) : '';
      if (!/^[0-9a-f]{32}$/.test(hex)) throw new Problem('organizationNotFound');
      const invitationId = `inv_${hex}${randomBytes(12).toString('base64url')}`;
      const secret = randomBytes(32).toString('base64url');
      const at = now();
      const invitation: Invitation = { id: invitationId, orgId, email, role, tokenHash: digestOf(secret), createdAt: at, expiresAt: at + ttlMs, invitedBy: actor.id };
      if ((await store.createInvitation(invitation)) === 'no-organization') throw new Problem('organizationNotFound');
      return { ...invitationView(invitation), token: `agi_${invitationId.slice(4)}.${secret}` };
    },

    listInvitations: async (orgId: string): Promise<InvitationView[]> => (await store.listInvitations(orgId)).map(invitationView),

    async revokeInvitation(orgId: string, invitationId: string): Promise<void> {
      if (!(await store.deleteInvitation(orgId, invitationId))) throw new Problem('invitationNotFound');
    },

    /**
     * Accepts an invitation: the new member, whose session the caller opens. The password is
     * judged before the invitation is used, so a refused password leaves it usable.
     */
    async accept(token: string, password: string): Promise<Member> {
      const parsed = parseInvitationToken(token);
      const org = parsed === undefined ? undefined : await store.findOrganizationById(parsed.orgId);
      if (parsed === undefined || org === undefined) throw new Problem('invitationInvalid');
      const pending = (await store.listInvitations(org.id)).find((i) => i.id === parsed.invitationId);
      if (pending === undefined) throw new Problem('invitationInvalid');
      policy.enforce(password, { name: org.name, email: pending.email });
      const passwordHash = await passwords.hash(password);
      const invitation = await store.takeInvitation(org.id, parsed.invitationId, digestOf(parsed.secret));
      if (invitation === undefined) throw new Problem('invitationInvalid');
      const member: Member = { id: `mem_${randomBytes(12).toString('base64url')}`, orgId: org.id, email: invitation.email, passwordHash, role: invitation.role, createdAt: new Date(now()).toISOString() };
      const created = await store.createMemberIfEmailFree(member);
      if (created === 'email-taken') throw new Problem('emailTaken');
      if (created === 'no-organization') throw new Problem('invitationInvalid');
      return created;
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
