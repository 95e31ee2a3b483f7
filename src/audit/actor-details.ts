/**
 * What an entry's actor (issue 50) needs from the store, added when the trail writes a batch, off
 * the request path: an API key's creator (the store's key creators), and the e-mail of a member
 * named by id only (a password reset, whose route knows the organization, not the address).
 * Read once per organization per batch; a read that fails leaves the part out, never the entry.
 */
import type { AuditEvent } from '../store/audit.js';
import { firstMemberId } from '../store/members.js';

export type ActorCompletion = Readonly<{
  /** Key id → the member who created it (store InvitationStore.keyCreators). */
  keyCreators: (orgId: string) => Promise<Record<string, string>>;
  /** The member's e-mail; undefined once it is gone. */
  memberEmail: (orgId: string, memberId: string) => Promise<string | undefined>;
}>;

export async function completeActors(batch: AuditEvent[], deps: ActorCompletion): Promise<AuditEvent[]> {
  const creatorsOf = new Map<string, Promise<Record<string, string> | undefined>>();
  return Promise.all(batch.map(async (event): Promise<AuditEvent> => {
    const actor = event.actorDetail;
    const orgId = event.orgId;
    if (actor === undefined || orgId === undefined) return event;
    if (actor.type === 'api_key' && actor.createdBy === undefined) {
      let creators = creatorsOf.get(orgId);
      if (creators === undefined) creatorsOf.set(orgId, (creators = deps.keyCreators(orgId).catch(() => undefined)));
      const known = await creators;
      // A key of no recorded creator is from before members, or the first member's: the role guard counts it so.
      return known === undefined ? event : { ...event, actorDetail: { ...actor, createdBy: known[actor.id] ?? firstMemberId(orgId) } };
    }
    if (actor.type === 'member' && actor.email === '') {
      const email = await deps.memberEmail(orgId, actor.id).catch(() => undefined);
      return email === undefined ? event : { ...event, actorDetail: { ...actor, email } };
    }
    return event;
  }));
}

/** The completion a store gives. */
export function actorCompletion(store: { keyCreators(orgId: string): Promise<Record<string, string>>; findMember(orgId: string, memberId: string): Promise<{ email: string } | undefined> }): ActorCompletion {
  return { keyCreators: (orgId) => store.keyCreators(orgId), memberEmail: async (orgId, memberId) => (await store.findMember(orgId, memberId))?.email };
}
