/**
 * Who created each API key (issue 50), as the key answers show it (`createdBy`): the member, by
 * id and e-mail. The store records a key's creator when a member's login token creates or rolls
 * it (store/members.ts keyCreators); a key with no record was made before members, by the
 * organization's login, which is its first member (as the role guard counts it: a developer
 * manages only its own keys). A creator since removed keeps its id, with no e-mail: the store
 * keeps no record of a removed member, and the key stays listed so that an admin can review it.
 */
import { firstMemberId, type InvitationStore, type Member, type MemberStore } from '../store/members.js';

export type KeyCreator = Readonly<{ id: string; email: string | null }>;

/** A key's creator, from the lookup keyCreatorsOf made for its organization. */
export type KeyCreatorLookup = (keyId: string) => KeyCreator;

export type KeyCreatorStore = Pick<InvitationStore, 'keyCreators'> & Pick<MemberStore, 'listMembers'>;

export const creatorOf = (member: Pick<Member, 'id' | 'email'>): KeyCreator => ({ id: member.id, email: member.email });

/** One read of the organization's key creators and members, for a whole listing. */
export async function keyCreatorsOf(store: KeyCreatorStore, orgId: string): Promise<KeyCreatorLookup> {
  const [creators, members] = await Promise.all([store.keyCreators(orgId), store.listMembers(orgId)]);
  const emails = new Map(members.map((member) => [member.id, member.email]));
  const first = firstMemberId(orgId);
  return (keyId) => {
    const id = Object.hasOwn(creators, keyId) ? creators[keyId]! : first;
    return { id, email: emails.get(id) ?? null };
  };
}
