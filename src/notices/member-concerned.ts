/**
 * The member a security notice concerns (issue 50: "security notices name the member concerned"),
 * so the operator can tell that person, not only the organization. Found from the event when it is
 * queued, and read from the store when the notice is sent (as the organization is):
 * - an event about a member (`details.memberId`): that member (the operator's reset or removal of a
 *   member's own password or second factor, a member's reset token used, too);
 * - the operator's reset or second-factor removal, and a reset token used: the organization's own
 *   password and second factor, which are its first member's;
 * - a key reported leaked: the member who created it (a key of no recorded creator: the first);
 * - otherwise the member who acted (a password or second-factor change, an invitation, a change of
 *   the organization's name or e-mail); none for what the operator did to the organization itself.
 */
import type { AuditEvent } from '../store/audit.js';
import { firstMemberId } from '../store/members.js';

export type ConcernedRef = Readonly<{ memberId: string } | { keyId: string }>;

/** The member as a notice names it; its e-mail null once it is gone. */
export type NoticeMember = Readonly<{ id: string; email: string | null }>;

const FIRST_MEMBERS_CREDENTIALS: ReadonlySet<string> = new Set(['password.reset_issued', 'password.reset', 'mfa.removed']);

export function concernedRef(event: AuditEvent & { orgId: string }): ConcernedRef | undefined {
  const named = event.details?.memberId;
  if (typeof named === 'string') return { memberId: named };
  if (FIRST_MEMBERS_CREDENTIALS.has(event.type)) return { memberId: firstMemberId(event.orgId) };
  const keyId = event.details?.keyId;
  if (event.type === 'api_key.leaked' && typeof keyId === 'string') return { keyId };
  const actor = event.actorDetail;
  return actor?.type === 'member' ? { memberId: actor.id } : undefined;
}

/** Reads the member a reference names, as the store holds it now; throws when the store does not answer. */
export function concernedMembers(store: {
  keyCreators(orgId: string): Promise<Record<string, string>>;
  findMember(orgId: string, memberId: string): Promise<{ id: string; email: string } | undefined>;
}): (orgId: string, ref: ConcernedRef) => Promise<NoticeMember> {
  return async (orgId, ref) => {
    const id = 'memberId' in ref ? ref.memberId : ((await store.keyCreators(orgId))[ref.keyId] ?? firstMemberId(orgId));
    const member = await store.findMember(orgId, id);
    return { id, email: member?.email ?? null };
  };
}
