/**
 * The Redis store's invitations and key creators (store/members.ts InvitationStore): two hashes
 * under the organization's shard tag. An invitation's field holds its JSON (`x` its end and `t`
 * its token's digest for the takeInvitation script); Redis cannot expire a field, so an
 * expired invitation is skipped by every read and dropped by the listing.
 */
import { isMemberRole, type Invitation, type InvitationStore } from '../members.js';
import type { RedisStoreContext } from './context.js';

type StoredInvitation = { e: string; r: string; t: string; c: number; x: number; b: string };

function invitationFrom(orgId: string, id: string, json: string): Invitation | undefined {
  const s = JSON.parse(json) as Partial<StoredInvitation>;
  if (typeof s.e !== 'string' || !isMemberRole(s.r) || typeof s.t !== 'string' || typeof s.c !== 'number' || typeof s.x !== 'number' || typeof s.b !== 'string') return undefined;
  return { id, orgId, email: s.e, role: s.r, tokenHash: s.t, createdAt: s.c, expiresAt: s.x, invitedBy: s.b };
}

export function redisInvitations(context: RedisStoreContext): InvitationStore {
  const { client, now, run, guard, durably, organizationPlace, organizationRecord } = context;
  const place = (orgId: string) => organizationPlace(orgId);
  const invitationsKey = (orgId: string) => place(orgId).shard.organizationInvitations(place(orgId).packed);
  const creatorsKey = (orgId: string) => place(orgId).shard.organizationKeyCreators(place(orgId).packed);

  return {
    createInvitation: (invitation) =>
      guard('createInvitation', () => durably([organizationRecord(invitation.orgId)], async () => {
        const json = JSON.stringify({ e: invitation.email, r: invitation.role, t: invitation.tokenHash, c: invitation.createdAt, x: invitation.expiresAt, b: invitation.invitedBy } satisfies StoredInvitation);
        // The organization's record and its invitations are one slot: a MULTI of the check is not
        // needed, a deleted organization's invitation is deleted with it (organizations.ts).
        if ((await client.exists(organizationRecord(invitation.orgId))) === 0) return 'no-organization';
        await client.hset(invitationsKey(invitation.orgId), invitation.id, json);
        return 'created';
      })),

    listInvitations: (orgId) =>
      guard('listInvitations', async () => {
        const fields: Record<string, string> = await client.hgetall(invitationsKey(orgId));
        const all = Object.entries(fields).map(([id, json]) => invitationFrom(orgId, id, json)).filter((i): i is Invitation => i !== undefined);
        const t = now();
        const expired = all.filter((i) => i.expiresAt <= t).map((i) => i.id);
        if (expired.length > 0) await client.hdel(invitationsKey(orgId), ...expired);
        return all.filter((i) => i.expiresAt > t).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      }),

    deleteInvitation: (orgId, id) =>
      guard('deleteInvitation', async () => {
        const json: unknown = await client.hget(invitationsKey(orgId), id);
        const live = typeof json === 'string' && (invitationFrom(orgId, id, json)?.expiresAt ?? 0) > now();
        return (await client.hdel(invitationsKey(orgId), id)) === 1 && live;
      }),

    takeInvitation: (orgId, id, tokenHash) =>
      guard('takeInvitation', async () => {
        const json: unknown = await run.takeInvitation([invitationsKey(orgId)], [id, tokenHash, now()]);
        return typeof json === 'string' ? invitationFrom(orgId, id, json) : undefined;
      }),

    recordKeyCreator: (orgId, keyId, memberId) =>
      guard('recordKeyCreator', async () => {
        await client.hset(creatorsKey(orgId), keyId, memberId);
      }),

    keyCreators: (orgId) => guard('keyCreators', async () => client.hgetall(creatorsKey(orgId))),
  };
}
