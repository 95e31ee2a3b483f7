/**
 * The Redis store's second factors (store/mfa.ts MfaStore). The factor is a hash beside the
 * organization's record (keys.ts organizationTotp), its recovery codes a set beside it, a
 * challenge a hash with a TTL by its token's digest, all on the organization's shard; every
 * deciding step is one script (scripts/*Totp*.lua, useRecoveryCode, *MfaChallenge). The
 * recovery codes' steps also read the passkeys (redis/passkeys.ts): the codes are the second
 * factor's as a whole.
 */
import type { MfaStore } from '../mfa.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';
import { factorKeysOf } from './member-factors.js';

export function redisMfa(context: RedisStoreContext): MfaStore {
  const { client, now, run, guard, durably, organizationRecord, credentialPlace } = context;

  /** The TOTP factor, the recovery codes and the passkeys (which the codes' steps also look at). */
  function factorKeys(orgId: string, memberId?: string): [string, string, string] {
    const keys = factorKeysOf(context, orgId, memberId);
    return [keys.totp, keys.codes, keys.passkeys];
  }

  /** The challenge's key; undefined for a hash of no shape (then it is unknown). */
  function challengeKey(tokenHash: string): string | undefined {
    const place = credentialPlace(tokenHash);
    return place === undefined || place.rest === '' ? undefined : place.shard.mfaChallenge(place.rest);
  }

  const flag = (reply: unknown, method: string): boolean => {
    if (reply !== 0 && reply !== 1) throw unexpected(method);
    return reply === 1;
  };

  return {
    findTotp: (orgId, memberId) =>
      guard('findTotp', async () => {
        const [factor, codes] = factorKeys(orgId, memberId);
        const [fields, left] = await Promise.all([client.hmget(factor, 's', 'a', 't'), client.scard(codes)]);
        const [secret, active, lastStep] = fields;
        if (secret === null || secret === undefined) return undefined;
        return { secret, active: active === '1', lastStep: Number(lastStep ?? 0), recoveryCodesLeft: Number(left) };
      }),

    beginTotp: (orgId, secret, memberId) =>
      guard('beginTotp', () => durably([organizationRecord(orgId)], async () => {
        const keys = factorKeysOf(context, orgId, memberId);
        const reply = await run.beginTotp([organizationRecord(orgId), keys.totp, keys.members], [secret, keys.memberId]);
        if (reply === 0) return undefined;
        if (reply !== 'active' && reply !== 'pending') throw unexpected('beginTotp');
        return reply;
      })),

    activateTotp: (orgId, secret, step, hashes, memberId) =>
      guard('activateTotp', () => durably([organizationRecord(orgId)], async () => {
        const reply = await run.activateTotp(factorKeys(orgId, memberId), [secret, step, ...hashes]);
        if (reply !== 0 && reply !== 1 && reply !== 2) throw unexpected('activateTotp');
        return reply === 2 ? 'first' : reply === 1 ? 'added' : false;
      })),

    useTotpStep: (orgId, step, memberId) =>
      guard('useTotpStep', () => durably([organizationRecord(orgId)], async () =>
        flag(await run.useTotpStep([factorKeys(orgId, memberId)[0]], [step]), 'useTotpStep'))),

    countRecoveryCodes: (orgId, memberId) => guard('countRecoveryCodes', async () => Number(await client.scard(factorKeys(orgId, memberId)[1]))),

    useRecoveryCode: (orgId, codeHash, memberId) =>
      guard('useRecoveryCode', () => durably([organizationRecord(orgId)], async () =>
        flag(await run.useRecoveryCode(factorKeys(orgId, memberId), [codeHash]), 'useRecoveryCode'))),

    replaceRecoveryCodes: (orgId, hashes, memberId) =>
      guard('replaceRecoveryCodes', () => durably([organizationRecord(orgId)], async () =>
        flag(await run.replaceRecoveryCodes(factorKeys(orgId, memberId), [...hashes]), 'replaceRecoveryCodes'))),

    removeTotp: (orgId, memberId) =>
      guard('removeTotp', () => durably([organizationRecord(orgId)], async () =>
        flag(await run.removeTotp(factorKeys(orgId, memberId), []), 'removeTotp'))),

    createMfaChallenge: (tokenHash, challenge) =>
      guard('createMfaChallenge', async () => {
        const key = challengeKey(tokenHash);
        if (key === undefined) throw new Error('an mfaToken hash carries its organization\'s shard tag');
        const ttlMs = Math.max(1, Math.ceil(challenge.expiresAt - now()));
        await run.createMfaChallenge([key], [challenge.orgId, challenge.passwordCheck, challenge.expiresAt, ttlMs, challenge.passkeyChallenge ?? '', challenge.memberId ?? '']);
      }),

    findMfaChallenge: (tokenHash) =>
      guard('findMfaChallenge', async () => {
        const key = challengeKey(tokenHash);
        if (key === undefined) return undefined;
        const [orgId, passwordCheck, expiresAt, passkeyChallenge, memberId] = await client.hmget(key, 'o', 'p', 'e', 'w', 'u');
        if (orgId == null || passwordCheck == null || expiresAt == null) return undefined;
        const at = Number(expiresAt);
        if (at <= now()) return undefined;
        return { orgId, ...(memberId != null && { memberId }), passwordCheck, expiresAt: at, ...(passkeyChallenge != null && { passkeyChallenge }) };
      }),

    failMfaChallenge: (tokenHash, limit) =>
      guard('failMfaChallenge', async () => {
        const key = challengeKey(tokenHash);
        if (key === undefined) return 0;
        const reply = await run.failMfaChallenge([key], [limit]);
        if (typeof reply !== 'number') throw unexpected('failMfaChallenge');
        return reply;
      }),

    consumeMfaChallenge: (tokenHash) =>
      guard('consumeMfaChallenge', async () => {
        const key = challengeKey(tokenHash);
        if (key === undefined) return false;
        // Read its end and delete it in one transaction: an expired challenge is used by nobody,
        // even in the few milliseconds Redis's clock may keep the key past this process's.
        const replies = await client.multi().hget(key, 'e').del(key).exec();
        const expiresAt = replies?.[0]?.[1];
        const deleted = replies?.[1]?.[1];
        return deleted === 1 && typeof expiresAt === 'string' && Number(expiresAt) > now();
      }),
  };
}
