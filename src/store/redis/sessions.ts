/**
 * The Redis store's login sessions (store/sessions.ts SessionStore): the session in the tag's
 * sessions hash (the hot path), the organization's index (a sorted set by end) and its info.
 */
import { restAfterOrganizationTag, shardTagOf } from '../shard-tag.js';
import { latestLoginFirst, type SessionStore } from '../sessions.js';
import type { Revoked } from '../store.js';
import type { RedisStoreContext } from './context.js';
import type { ShardKeys } from './keys.js';
import { packId, packMs } from './packing.js';
import { sessionInfoValue, sessionReply, sessionSummaryOf, unexpected } from './replies.js';

export function redisSessions(context: RedisStoreContext): SessionStore {
  const { client, keys, now, run, announced, guard, durably, organizationPlace, organizationRecord, credentialPlace } = context;

  /** deleteSession, with or without an owner the session must be of. */
  function endSession(sessionId: string, ownerOrgId: string | undefined) {
    return announced((channel, head) => guard('deleteSession', () => {
      const place = credentialPlace(sessionId);
      const shard = place?.shard ?? keys.shard(shardTagOf(sessionId));
      return durably([shard.sessions], () => endSessionOn(shard, place?.rest ?? '', channel, head));
    }));

    async function endSessionOn(shard: ShardKeys, rest: string, channel: string, head: string) {
      // An id without a tag names nothing, but the script still runs: it announces an empty
      // revocation, so this replica's message sequence has no hole.
      const reply = await run.deleteSession(
        [shard.sessions],
        [rest, now(), shard.organizationStem, channel, head, sessionId, ownerOrgId === undefined ? '' : packId(ownerOrgId)],
      );
      if (reply === 0) return undefined;
      if (reply !== 1) throw unexpected('deleteSession');
      return { kind: 'session', cacheKey: sessionId } satisfies Revoked;
    }
  }

  return {
    createSession: (session, maxSessions) =>
      guard('createSession', () => durably([organizationRecord(session.orgId)], async () => {
        const field = restAfterOrganizationTag(session.id, session.orgId, 'the session id');
        if (/\s/.test(field) || field === '') throw new Error('a session id is <tag>.<random>');
        const { shard, packed } = organizationPlace(session.orgId);
        const t = now();
        const reply = await run.createSession(
          [shard.organization(packed), shard.sessions, shard.organizationSessions(packed), shard.organizationSessionInfo(packed)],
          [field, `${packed} ${packMs(session.expiresAt)}`, session.expiresAt, Math.ceil(session.expiresAt - t), t, shard.organizationStem, sessionInfoValue(session), maxSessions === undefined ? '' : Math.max(0, Math.floor(maxSessions))],
        );
        if (reply !== 'created' && reply !== 'no-organization' && reply !== 'limit-reached') throw unexpected('createSession');
        return reply;
      })),

    /** The hot path for login tokens: one HGET on the shard the session id's tag names. */
    findSession: (sessionId) =>
      guard('findSession', async () => {
        const place = credentialPlace(sessionId);
        if (place === undefined) return undefined;
        const session = sessionReply(sessionId, await client.hget(place.shard.sessions, place.rest));
        if (session === undefined) return undefined;
        // Redis cannot expire a hash field: the record's own expiresAt, by the gateway's clock, decides.
        return session.expiresAt <= now() ? undefined : session;
      }),

    deleteSession: (sessionId) => endSession(sessionId, undefined),

    deleteSessionIfOwned: (orgId, sessionId) => endSession(sessionId, orgId),

    /** The org's session index (live ones by score) and their info: two reads, one shard. */
    listSessions: (orgId) =>
      guard('listSessions', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const live: unknown = await client.zrangebyscore(shard.organizationSessions(packed), `(${now()}`, '+inf', 'WITHSCORES');
        if (!Array.isArray(live)) throw unexpected('listSessions');
        if (live.length === 0) return [];
        const rests: string[] = [];
        const ends: number[] = [];
        for (let i = 0; i < live.length; i += 2) {
          if (typeof live[i] !== 'string') throw unexpected('listSessions');
          rests.push(live[i] as string);
          ends.push(Number(live[i + 1]));
        }
        const info: unknown = await client.hmget(shard.organizationSessionInfo(packed), ...rests);
        if (!Array.isArray(info) || info.length !== rests.length) throw unexpected('listSessions');
        const tag = shardTagOf(orgId);
        return rests.map((rest, i) => sessionSummaryOf(`${tag}.${rest}`, ends[i]!, info[i] ?? null)).sort(latestLoginFirst);
      }),

    deleteAllSessions: (orgId) =>
      announced((channel, head) => guard('deleteAllSessions', () => durably([organizationRecord(orgId)], async () => {
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.deleteAllSessions(
          [shard.organizationSessions(packed), shard.organizationSessionInfo(packed), shard.sessions],
          [shardTagOf(orgId), channel, head],
        );
        if (!Array.isArray(reply) || reply.some((id) => typeof id !== 'string')) throw unexpected('deleteAllSessions');
        return (reply as string[]).map((cacheKey): Revoked => ({ kind: 'session', cacheKey }));
      }))),
  };
}
