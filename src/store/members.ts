/**
 * The members part of the store contract (issue 50): the people of an organization, each with
 * their own e-mail, password and role. Implemented by memory/members.ts and redis/members.ts.
 *
 * An organization's own e-mail and password are its **first member**, an owner, with no
 * migration: that member is derived from the organization record (firstMemberId) and only a
 * change of its role or its removal is ever stored. Every other member is stored in full.
 * Sessions record their member by a link written before the session (linkSessionToMember): a
 * session without a link is the first member's, which is every session opened before members.
 */

export const MEMBER_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export type Member = Readonly<{
  /** `mem_…`; the first member's is derived from its organization's id (firstMemberId). */
  id: string;
  orgId: string;
  /** Normalized: trimmed and lower-cased. The first member's is its organization's. */
  email: string;
  /** argon2id (credentials/passwords.ts); the first member's is its organization's. */
  passwordHash: string;
  role: MemberRole;
  createdAt: string;
}>;

/** The first member's id: stable, derived from the organization's (`org_<hex>` → `mem_<hex>`). */
export function firstMemberId(orgId: string): string {
  return `mem_${orgId.startsWith('org_') ? orgId.slice(4) : orgId}`;
}

/**
 * Whose own credentials (password, second factor, reset) are stored apart: a member other than
 * the first; undefined for the first member (or none named), whose are its organization's.
 */
export function otherMemberId(orgId: string, memberId: string | undefined): string | undefined {
  return memberId === undefined || memberId === firstMemberId(orgId) ? undefined : memberId;
}

export function isMemberRole(value: unknown): value is MemberRole {
  return typeof value === 'string' && (MEMBER_ROLES as readonly string[]).includes(value);
}

/** A change that would leave the organization without an owner: refused (409). */
export type MemberChange = Member | 'not-found' | 'last-owner';

export interface MemberStore {
  /**
   * Adds a member (never the first, which exists with its organization) unless its e-mail is
   * any organization's or any member's already: one atomic claim across the whole store.
   */
  createMemberIfEmailFree(member: Member): Promise<Member | 'email-taken' | 'no-organization'>;
  /** The member (never a first member: an organization's e-mail is found as an organization). */
  findMemberByEmail(email: string): Promise<Member | undefined>;
  /** The organization's member, the first one included (unless removed). */
  findMember(orgId: string, memberId: string): Promise<Member | undefined>;
  /** Every member of the organization, the first one first, then by createdAt. */
  listMembers(orgId: string): Promise<Member[]>;
  /** Changes a role in one atomic step: 'last-owner' when it would demote the only owner. */
  changeMemberRole(orgId: string, memberId: string, role: MemberRole): Promise<MemberChange>;
  /** Removes a member in one atomic step: 'last-owner' when it is the only owner. */
  removeMember(orgId: string, memberId: string): Promise<MemberChange>;
  /**
   * Records that the session (about to be created) is the member's; kept `ttlMs`. Written before
   * the session, so a session never exists without its link (it would count as the first member's).
   */
  linkSessionToMember(orgId: string, sessionId: string, memberId: string, ttlMs: number): Promise<void>;
  /** The member a session was linked to; undefined for the first member's sessions. */
  sessionMemberId(orgId: string, sessionId: string): Promise<string | undefined>;
  /** The ids of the sessions linked to the member (ended or not: the caller ends the live ones). */
  linkedSessionIds(orgId: string, memberId: string): Promise<string[]>;
}

/** A pending invitation (issue 50): only its token's digest is kept; one use; gone when taken, revoked or expired. */
export type Invitation = Readonly<{
  /** `inv_<32 hex of the organization's id><random>`: the organization is found from the id alone. */
  id: string;
  orgId: string;
  email: string;
  role: MemberRole;
  tokenHash: string;
  /** Epoch ms. */
  createdAt: number;
  expiresAt: number;
  /** The member who invited. */
  invitedBy: string;
}>;

/** Invitations and who created which API key: the rest of the members part of the contract. */
export interface InvitationStore {
  createInvitation(invitation: Invitation): Promise<'created' | 'no-organization'>;
  /** The organization's live invitations, oldest first (ties by id). */
  listInvitations(orgId: string): Promise<Invitation[]>;
  /** Revokes a live invitation; false when there was none. */
  deleteInvitation(orgId: string, invitationId: string): Promise<boolean>;
  /**
   * Takes (removes) the invitation in one atomic step if its token's digest is this one and it
   * has not expired: of parallel takes, one gets it. Undefined otherwise (one answer for all).
   */
  takeInvitation(orgId: string, invitationId: string, tokenHash: string): Promise<Invitation | undefined>;
  /** Records the member who created an API key (kept as long as the organization). */
  recordKeyCreator(orgId: string, keyId: string, memberId: string): Promise<void>;
  /** Key id → the member who created it, for the keys created by a member other than the first. */
  keyCreators(orgId: string): Promise<Record<string, string>>;
}
