/**
 * Ending one member's login sessions (issue 50), on every replica: the store announces each
 * revocation, this replica applies it at once. A member's sessions are those linked to it; the
 * first member's are its organization's sessions linked to nobody (store/members.ts). Used by a
 * removal or a role change (services/members.ts) and by a member's own password change, an
 * operator's reset and a second-factor removal (password-changes.ts, mfa.ts).
 */
import type { InvalidationBus } from '../store/invalidation.js';
import { firstMemberId, type MemberStore } from '../store/members.js';
import type { Revoked, Store } from '../store/store.js';

export type MemberSessionDeps = Readonly<{
  store: Pick<Store, 'listSessions' | 'deleteSessionIfOwned'> & Pick<MemberStore, 'listMembers' | 'linkedSessionIds'>;
  bus: Pick<InvalidationBus, 'applyLocally'>;
}>;

/** Ends every session of the member; how many there were. */
export async function endMemberSessions(deps: MemberSessionDeps, orgId: string, memberId: string): Promise<number> {
  const { store, bus } = deps;
  let ids: string[];
  if (memberId === firstMemberId(orgId)) {
    // The first member's sessions are the organization's sessions linked to nobody.
    const linked = new Set<string>();
    for (const other of await store.listMembers(orgId)) for (const id of await store.linkedSessionIds(orgId, other.id)) linked.add(id);
    const all = await store.listSessions(orgId);
    ids = all.map((s) => s.id).filter((id) => !linked.has(id));
  } else {
    ids = await store.linkedSessionIds(orgId, memberId);
  }
  const revoked: Revoked[] = [];
  for (const id of ids) {
    const ended = await store.deleteSessionIfOwned(orgId, id);
    if (ended !== undefined) revoked.push(ended);
  }
  bus.applyLocally(revoked);
  return revoked.length;
}
