/**
 * The Redis store's members (store/members.ts MemberStore). A member's record is in its
 * organization's members hash (its shard tag); its e-mail is claimed in the same namespace as
 * organizations' e-mails (`<base>e:<email>` under the e-mail's tag), with the value
 * `m <org id> <member id>`, so one SET NX keeps an e-mail to one person store-wide. As with
 * sign-up, the record is written first and the claim taken after; a claim whose member is gone
 * is left over, and released by the next claim of that e-mail (email-claims.ts).
 */
import { firstMemberId, isMemberRole, type Member, type MemberChange, type MemberRole, type MemberStore } from '../members.js';
import type { RedisStoreContext } from './context.js';
import { createEmailClaims, memberClaimHolder, parseMemberClaim } from './email-claims.js';
import { unexpected } from './replies.js';
import { allFactorKeys, factorKeysOf } from './member-factors.js';

type StoredMember = { e: string; h: string; r: string; c: string };

function memberFrom(orgId: string, id: string, json: string): Member | undefined {
  const stored = JSON.parse(json) as Partial<StoredMember>;
  if (typeof stored.e !== 'string' || typeof stored.h !== 'string' || typeof stored.c !== 'string' || !isMemberRole(stored.r)) return undefined;
  return { id, orgId, email: stored.e, passwordHash: stored.h, role: stored.r, createdAt: stored.c };
}

export function redisMembers(context: RedisStoreContext): MemberStore {
  const { client, run, guard, durably, organizationPlace, organizationRecord, readOrganization } = context;
  const claims = createEmailClaims(context);
  const membersKey = (orgId: string) => {
    const { shard, packed } = organizationPlace(orgId);
    return shard.organizationMembers(packed);
  };
  const linksKey = (orgId: string) => {
    const { shard, packed } = organizationPlace(orgId);
    return shard.organizationSessionMembers(packed);
  };

  async function all(orgId: string): Promise<Member[]> {
    const org = await readOrganization(orgId);
    if (org === undefined) return [];
    const fields: Record<string, string> = await client.hgetall(membersKey(orgId));
    const firstId = firstMemberId(orgId);
    const members: Member[] = [];
    const firstChange = fields[firstId] === undefined ? {} : (JSON.parse(fields[firstId]) as { r?: string; x?: number });
    if (firstChange.x === undefined) {
      members.push({ id: firstId, orgId, email: org.email, passwordHash: org.passwordHash, role: isMemberRole(firstChange.r) ? firstChange.r : 'owner', createdAt: org.createdAt });
    }
    const rest = Object.entries(fields).filter(([id]) => id !== firstId).map(([id, json]) => memberFrom(orgId, id, json)).filter((m): m is Member => m !== undefined);
    rest.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
    return [...members, ...rest];
  }

  /** The first member as the script found it: its organization's record, and its stored role ('' for none). */
  async function firstAsItWas(orgId: string, stored: string): Promise<Member | undefined> {
    const org = await readOrganization(orgId);
    if (org === undefined) return undefined;
    const role = stored === '' ? 'owner' : (JSON.parse(stored) as { r?: unknown }).r;
    return { id: firstMemberId(orgId), orgId, email: org.email, passwordHash: org.passwordHash, role: isMemberRole(role) ? role : 'owner', createdAt: org.createdAt };
  }

  async function change(orgId: string, memberId: string, role: MemberRole | ''): Promise<MemberChange> {
    const reply: unknown = await run.changeMember([organizationRecord(orgId), membersKey(orgId), ...allFactorKeys(factorKeysOf(context, orgId, memberId))], [memberId, firstMemberId(orgId), role]);
    if (!Array.isArray(reply) || typeof reply[0] !== 'string') throw unexpected('changeMember');
    if (reply[0] === 'not-found' || reply[0] === 'last-owner') return reply[0];
    if (reply[0] !== 'ok' || typeof reply[1] !== 'string') throw unexpected('changeMember');
    // What the script found, not the read before it: the member as it was when changed.
    const before = memberId === firstMemberId(orgId) ? await firstAsItWas(orgId, reply[1]) : memberFrom(orgId, memberId, reply[1]);
    if (before === undefined) throw unexpected('changeMember');
    if (role === '') {
      // Committed: a claim left behind names a member that is gone, and the next claim releases it.
      if (memberId !== firstMemberId(orgId)) await run.releaseEmail([claims.claimKey(before.email)], [memberClaimHolder(orgId, memberId)]);
      return before;
    }
    return { ...before, role };
  }

  return {
    createMemberIfEmailFree: (member) =>
      guard('createMemberIfEmailFree', () => durably([organizationRecord(member.orgId), claims.claimKey(member.email)], async () => {
        const json = JSON.stringify({ e: member.email, h: member.passwordHash, r: member.role, c: member.createdAt } satisfies StoredMember);
        const written = await run.createMember([organizationRecord(member.orgId), membersKey(member.orgId)], [member.id, json]);
        if (written === 'no-organization') return 'no-organization';
        if (written === 'exists') throw new Error('a member with this id exists');
        if (written !== 'created') throw unexpected('createMember');
        if (await claims.claim(member.email, memberClaimHolder(member.orgId, member.id), false)) return member;
        await client.hdel(membersKey(member.orgId), member.id);
        return 'email-taken';
      })),

    findMemberByEmail: (email) =>
      guard('findMemberByEmail', async () => {
        const holder: unknown = await client.get(claims.claimKey(email));
        const at = typeof holder === 'string' ? parseMemberClaim(holder) : undefined;
        if (at === undefined) return undefined;
        const json: unknown = await client.hget(membersKey(at.orgId), at.memberId);
        const member = typeof json === 'string' ? memberFrom(at.orgId, at.memberId, json) : undefined;
        return member?.email === email ? member : undefined;
      }),

    findMember: (orgId, memberId) => guard('findMember', async () => (await all(orgId)).find((m) => m.id === memberId)),
    listMembers: (orgId) => guard('listMembers', () => all(orgId)),
    changeMemberRole: (orgId, memberId, role) => guard('changeMemberRole', () => durably([organizationRecord(orgId)], () => change(orgId, memberId, role))),
    removeMember: (orgId, memberId) => guard('removeMember', () => durably([organizationRecord(orgId)], () => change(orgId, memberId, ''))),

    linkSessionToMember: (orgId, sessionId, memberId, ttlMs) =>
      guard('linkSessionToMember', async () => {
        const key = linksKey(orgId);
        // The links live as long as the longest session they name (a hash field cannot expire).
        await client.multi().hset(key, sessionId, memberId).pexpire(key, Math.max(1, Math.ceil(ttlMs)), 'GT').pexpire(key, Math.max(1, Math.ceil(ttlMs)), 'NX').exec();
      }),

    sessionMemberId: (orgId, sessionId) =>
      guard('sessionMemberId', async () => {
        const id: unknown = await client.hget(linksKey(orgId), sessionId);
        return typeof id === 'string' ? id : undefined;
      }),

    linkedSessionIds: (orgId, memberId) =>
      guard('linkedSessionIds', async () => {
        const links: Record<string, string> = await client.hgetall(linksKey(orgId));
        return Object.entries(links).filter(([, id]) => id === memberId).map(([sessionId]) => sessionId);
      }),
  };
}
