/**
 * The Redis store's passwords and reset tokens (store/password-resets.ts PasswordResetStore).
 * A reset is a string by its token's digest on the organization's shard (keys.ts
 * passwordReset), named by the record's `pr`; each write is one script that also ends every
 * session and announces it, as deleteAllSessions does.
 */
import type { PasswordResetStore } from '../password-resets.js';
import { shardTagOf } from '../shard-tag.js';
import type { Revoked } from '../store.js';
import type { RedisStoreContext } from './context.js';
import { packId, packMs, unpackId, unpackMs } from './packing.js';
import { unexpected } from './replies.js';

/** A script's reply: 0 (nothing done) or the ended sessions' ids. */
function endedOrUndefined(reply: unknown, method: string): Revoked[] | undefined {
  if (reply === 0) return undefined;
  if (!Array.isArray(reply) || reply.some((id) => typeof id !== 'string')) throw unexpected(method);
  return (reply as string[]).map((cacheKey): Revoked => ({ kind: 'session', cacheKey }));
}

export function redisPasswordResets(context: RedisStoreContext): PasswordResetStore {
  const { client, now, run, announced, guard, durably, organizationPlace, organizationRecord, credentialPlace } = context;

  /** The organization's sessions keys, as every script here takes them after its own. */
  function sessionKeys(orgId: string): string[] {
    const { shard, packed } = organizationPlace(orgId);
    return [shard.organizationSessions(packed), shard.organizationSessionInfo(packed), shard.sessions];
  }

  return {
    replacePassword: (orgId, passwordHash) =>
      announced((channel, head) => guard('replacePassword', () => durably([organizationRecord(orgId)], async () => {
        const reply = await run.replacePassword([organizationRecord(orgId), ...sessionKeys(orgId)], [passwordHash, shardTagOf(orgId), channel, head]);
        return endedOrUndefined(reply, 'replacePassword');
      }))),

    createPasswordReset: (reset) =>
      announced((channel, head) => guard('createPasswordReset', () => durably([organizationRecord(reset.orgId)], async () => {
        const place = credentialPlace(reset.tokenHash);
        if (place === undefined || place.tag !== shardTagOf(reset.orgId) || place.rest === '') throw new Error('a reset token hash carries its organization\'s shard tag');
        const ttlMs = Math.max(1, Math.ceil(reset.expiresAt - now()));
        const reply = await run.createPasswordReset(
          [organizationRecord(reset.orgId), place.shard.passwordReset(place.rest), ...sessionKeys(reset.orgId)],
          [`${packId(reset.orgId)} ${packMs(reset.expiresAt)}`, ttlMs, place.rest, place.tag, channel, head],
        );
        return endedOrUndefined(reply, 'createPasswordReset');
      }))),

    /** Two reads on the shard the hash's tag names: the reset, and whether its record still names it. */
    findPasswordReset: (tokenHash) =>
      guard('findPasswordReset', async () => {
        const place = credentialPlace(tokenHash);
        if (place === undefined || place.rest === '') return undefined;
        const value: unknown = await client.get(place.shard.passwordReset(place.rest));
        if (value === null) return undefined;
        // A member's reset names its member third (redis/member-passwords.ts).
        const match = typeof value === 'string' ? /^(\S+) (\S+)(?: (\S+))?$/.exec(value) : null;
        if (match === null) throw unexpected('findPasswordReset');
        const orgId = unpackId(match[1]!);
        const expiresAt = unpackMs(match[2]!);
        const memberId = match[3];
        if (expiresAt <= now() || shardTagOf(orgId) !== place.tag) return undefined;
        if (memberId !== undefined) {
          // Only the member's live one: not replaced, nor left by the member's removal.
          const json: unknown = await client.hget(place.shard.organizationMembers(match[1]!), memberId);
          const live = typeof json === 'string' ? (JSON.parse(json) as { pr?: unknown }).pr : undefined;
          return live === place.rest ? { orgId, expiresAt, memberId } : undefined;
        }
        // Only the organization's live one: not replaced by a newer reset, nor left by its deletion.
        if ((await client.hget(place.shard.organization(match[1]!), 'pr')) !== place.rest) return undefined;
        return { orgId, expiresAt };
      }),

    consumePasswordReset: (orgId, tokenHash, passwordHash) =>
      announced((channel, head) => guard('consumePasswordReset', () => durably([organizationRecord(orgId)], async () => {
        const place = credentialPlace(tokenHash);
        const tag = shardTagOf(orgId);
        // Another organization's tag cannot be its reset: the script still runs, to announce nothing.
        const rest = place !== undefined && place.tag === tag ? place.rest : '';
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.consumePasswordReset(
          [shard.passwordReset(rest), organizationRecord(orgId), ...sessionKeys(orgId)],
          [packed, rest === '' ? '-' : rest, passwordHash, now(), tag, channel, head],
        );
        return endedOrUndefined(reply, 'consumePasswordReset');
      }))),
  };
}
