/** The memory store's members (store/members.ts MemberStore), over memory/state.ts's maps. */
import { firstMemberId, type Invitation, type InvitationStore, type Member, type MemberChange, type MemberRole, type MemberStore } from '../members.js';
import type { Organization } from '../store.js';
import type { MemoryPart, MemoryState } from './state.js';
import { dropHolder, factorHolder } from './factor-holders.js';

/** What is stored of a first member: only a changed role, or that it was removed. */
export type FirstMemberChange = Readonly<{ role: MemberRole } | { removed: true }>;

export type MemoryMembers = {
  /** orgId → memberId → member (never the first member). */
  membersByOrg: Map<string, Map<string, Member>>;
  /** e-mail → [orgId, memberId] of a (non-first) member. */
  memberByEmail: Map<string, readonly [string, string]>;
  firstMemberChanges: Map<string, FirstMemberChange>;
  /** session id → [member id, forget after (epoch ms)]. */
  sessionMembers: Map<string, readonly [string, number]>;
  /** orgId → invitation id → invitation. */
  invitationsByOrg: Map<string, Map<string, Invitation>>;
  /** orgId → key id → member id. */
  keyCreatorsByOrg: Map<string, Map<string, string>>;
};

export function createMemoryMembers(): MemoryMembers {
  return { membersByOrg: new Map(), memberByEmail: new Map(), firstMemberChanges: new Map(), sessionMembers: new Map(), invitationsByOrg: new Map(), keyCreatorsByOrg: new Map() };
}

/** Forgets everything of a deleted organization's members (memory/organizations.ts). */
export function dropMembersOf(members: MemoryMembers, orgId: string): void {
  for (const member of members.membersByOrg.get(orgId)?.values() ?? []) members.memberByEmail.delete(member.email);
  members.membersByOrg.delete(orgId);
  members.firstMemberChanges.delete(orgId);
  members.invitationsByOrg.delete(orgId);
  members.keyCreatorsByOrg.delete(orgId);
}

export function firstMemberOf(org: Organization, change: FirstMemberChange | undefined): Member | undefined {
  if (change !== undefined && 'removed' in change) return undefined;
  return { id: firstMemberId(org.id), orgId: org.id, email: org.email, passwordHash: org.passwordHash, role: change?.role ?? 'owner', createdAt: org.createdAt };
}

export function memoryMembers(state: MemoryState): MemoryPart<MemberStore & InvitationStore> {
  const { orgsById, orgIdByEmail, members } = state;
  const { membersByOrg, memberByEmail, firstMemberChanges, sessionMembers, invitationsByOrg, keyCreatorsByOrg } = members;

  function liveInvitations(orgId: string): Map<string, Invitation> {
    const byId = invitationsByOrg.get(orgId) ?? new Map<string, Invitation>();
    for (const [id, invitation] of byId) if (invitation.expiresAt <= state.now()) byId.delete(id);
    return byId;
  }

  function all(orgId: string): Member[] {
    const org = orgsById.get(orgId);
    if (org === undefined) return [];
    const first = firstMemberOf(org, firstMemberChanges.get(orgId));
    const rest = [...(membersByOrg.get(orgId)?.values() ?? [])].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    return first === undefined ? rest : [first, ...rest];
  }

  /** The one check both changes make, in the same synchronous run as the write. */
  function change(orgId: string, memberId: string, role: MemberRole | 'removed'): MemberChange {
    const current = all(orgId);
    const member = current.find((m) => m.id === memberId);
    if (member === undefined) return 'not-found';
    const owners = current.filter((m) => m.role === 'owner').length;
    if (member.role === 'owner' && role !== 'owner' && owners <= 1) return 'last-owner';
    // A removed member's second factor and pending reset go with it: no secret outlives its holder.
    if (role === 'removed') dropHolder(state, factorHolder(orgId, memberId));
    if (memberId === firstMemberId(orgId)) {
      firstMemberChanges.set(orgId, role === 'removed' ? { removed: true } : { role });
    } else if (role === 'removed') {
      membersByOrg.get(orgId)?.delete(memberId);
      memberByEmail.delete(member.email);
    } else {
      membersByOrg.get(orgId)?.set(memberId, { ...member, role });
    }
    return role === 'removed' ? member : { ...member, role };
  }

  return {
    sweep: (t) => {
      for (const [id, [, until]] of sessionMembers) if (until <= t) sessionMembers.delete(id);
    },
    methods: {
      async createMemberIfEmailFree(member) {
        if (!orgsById.has(member.orgId)) return 'no-organization';
        if (orgIdByEmail.has(member.email) || memberByEmail.has(member.email)) return 'email-taken';
        let byId = membersByOrg.get(member.orgId);
        if (byId === undefined) membersByOrg.set(member.orgId, (byId = new Map()));
        byId.set(member.id, member);
        memberByEmail.set(member.email, [member.orgId, member.id]);
        return member;
      },

      async findMemberByEmail(email) {
        const at = memberByEmail.get(email);
        return at === undefined ? undefined : membersByOrg.get(at[0])?.get(at[1]);
      },

      async findMember(orgId, memberId) {
        return all(orgId).find((m) => m.id === memberId);
      },

      listMembers: async (orgId) => all(orgId),
      changeMemberRole: async (orgId, memberId, role) => change(orgId, memberId, role),
      removeMember: async (orgId, memberId) => change(orgId, memberId, 'removed'),

      async linkSessionToMember(_orgId, sessionId, memberId, ttlMs) {
        sessionMembers.set(sessionId, [memberId, state.now() + ttlMs]);
      },

      async sessionMemberId(_orgId, sessionId) {
        return sessionMembers.get(sessionId)?.[0];
      },

      async linkedSessionIds(_orgId, memberId) {
        return [...sessionMembers].filter(([, [id]]) => id === memberId).map(([sessionId]) => sessionId);
      },

      async createInvitation(invitation) {
        if (!orgsById.has(invitation.orgId)) return 'no-organization';
        let byId = invitationsByOrg.get(invitation.orgId);
        if (byId === undefined) invitationsByOrg.set(invitation.orgId, (byId = new Map()));
        byId.set(invitation.id, invitation);
        return 'created';
      },

      listInvitations: async (orgId) => [...liveInvitations(orgId).values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      deleteInvitation: async (orgId, id) => liveInvitations(orgId).delete(id),

      async takeInvitation(orgId, id, tokenHash) {
        const invitation = liveInvitations(orgId).get(id);
        if (invitation === undefined || invitation.tokenHash !== tokenHash) return undefined;
        invitationsByOrg.get(orgId)?.delete(id);
        return invitation;
      },

      async recordKeyCreator(orgId, keyId, memberId) {
        if (!orgsById.has(orgId)) return;
        let byKey = keyCreatorsByOrg.get(orgId);
        if (byKey === undefined) keyCreatorsByOrg.set(orgId, (byKey = new Map()));
        byKey.set(keyId, memberId);
      },

      keyCreators: async (orgId) => Object.fromEntries(keyCreatorsByOrg.get(orgId) ?? []),
    },
  };
}
