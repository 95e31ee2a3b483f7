/**
 * The Redis store's passkeys (store/passkeys.ts PasskeyStore): one hash per organization beside
 * its record (keys.ts organizationPasskeys, four fields per passkey), its pending registration a
 * string with a TTL, all on the organization's shard. Every deciding step is one script
 * (scripts/addPasskey, renamePasskey, removePasskey, usePasskey, removeSecondFactors) or one
 * transaction (the registration taken: read and deleted together). Another member's passkeys have
 * keys of their own (member-factors.ts).
 */
import { MAX_PASSKEYS_PER_ORGANIZATION, type Passkey, type PasskeyStore } from '../passkeys.js';
import type { RedisStoreContext } from './context.js';
import { unexpected } from './replies.js';
import { factorKeysOf } from './member-factors.js';

type Fixed = { p: string; t: string[]; c: number };

/** The passkeys of one hash's fields, oldest first; a field of no shape is skipped. */
function passkeysOf(fields: Record<string, string>): Passkey[] {
  const found: Passkey[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (!field.startsWith('k:')) continue;
    const id = field.slice(2);
    let fixed: Fixed;
    try {
      fixed = JSON.parse(value) as Fixed;
    } catch {
      continue;
    }
    const lastUsed = Number(fields[`u:${id}`] ?? 0);
    found.push({
      id,
      name: fields[`n:${id}`] ?? '',
      publicKey: fixed.p,
      counter: Number(fields[`c:${id}`] ?? 0),
      transports: Array.isArray(fixed.t) ? fixed.t : [],
      createdAt: fixed.c,
      lastUsedAt: lastUsed > 0 ? lastUsed : null,
    });
  }
  return found.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

export function redisPasskeys(context: RedisStoreContext): PasskeyStore {
  const { client, now, run, guard, durably, organizationRecord } = context;

  const keysOf = (orgId: string, memberId?: string) => factorKeysOf(context, orgId, memberId);

  const flag = (reply: unknown, method: string): boolean => {
    if (reply !== 0 && reply !== 1) throw unexpected(method);
    return reply === 1;
  };

  const list = async (orgId: string, memberId?: string) => passkeysOf(await client.hgetall(keysOf(orgId, memberId).passkeys));

  return {
    listPasskeys: (orgId, memberId) => guard('listPasskeys', () => list(orgId, memberId)),

    beginPasskeyRegistration: (orgId, registration, memberId) =>
      guard('beginPasskeyRegistration', async () => {
        const ttlMs = Math.max(1, Math.ceil(registration.expiresAt - now()));
        await client.set(keysOf(orgId, memberId).registration, `${registration.expiresAt} ${registration.challenge}`, 'PX', ttlMs);
      }),

    takePasskeyRegistration: (orgId, memberId) =>
      guard('takePasskeyRegistration', async () => {
        const key = keysOf(orgId, memberId).registration;
        // Read and deleted in one transaction: of two replicas finishing one registration, one
        // gets it; an expired one is nobody's, even while Redis's clock keeps the key a little longer.
        const replies = await client.multi().get(key).del(key).exec();
        const value = replies?.[0]?.[1];
        if (typeof value !== 'string' || replies?.[1]?.[1] !== 1) return undefined;
        const space = value.indexOf(' ');
        const expiresAt = Number(value.slice(0, space));
        if (space < 0 || !(expiresAt > now())) return undefined;
        return { challenge: value.slice(space + 1), expiresAt };
      }),

    addPasskey: (orgId, passkey, hashes, memberId) =>
      guard('addPasskey', () => durably([organizationRecord(orgId)], async () => {
        const keys = keysOf(orgId, memberId);
        const fixed: Fixed = { p: passkey.publicKey, t: [...passkey.transports], c: passkey.createdAt };
        const reply = await run.addPasskey(
          [organizationRecord(orgId), keys.passkeys, keys.totp, keys.codes, keys.members],
          [passkey.id, JSON.stringify(fixed), passkey.name, passkey.counter, MAX_PASSKEYS_PER_ORGANIZATION, keys.memberId, ...hashes],
        );
        if (reply === 0) return undefined;
        if (reply !== 'first' && reply !== 'added' && reply !== 'duplicate' && reply !== 'limit') throw unexpected('addPasskey');
        return reply;
      })),

    renamePasskey: (orgId, id, name, memberId) =>
      guard('renamePasskey', () => durably([organizationRecord(orgId)], async () => {
        if (!flag(await run.renamePasskey([keysOf(orgId, memberId).passkeys], [id, name]), 'renamePasskey')) return undefined;
        return (await list(orgId, memberId)).find((passkey) => passkey.id === id);
      })),

    removePasskey: (orgId, id, memberId) =>
      guard('removePasskey', () => durably([organizationRecord(orgId)], async () => {
        const keys = keysOf(orgId, memberId);
        return flag(await run.removePasskey([keys.passkeys, keys.totp, keys.codes], [id]), 'removePasskey');
      })),

    usePasskey: (orgId, id, counter, at, memberId) =>
      guard('usePasskey', () => durably([organizationRecord(orgId)], async () =>
        flag(await run.usePasskey([keysOf(orgId, memberId).passkeys], [id, counter, at]), 'usePasskey'))),

    removeSecondFactors: (orgId, memberId) =>
      guard('removeSecondFactors', () => durably([organizationRecord(orgId)], async () => {
        const keys = keysOf(orgId, memberId);
        return flag(await run.removeSecondFactors([keys.totp, keys.passkeys, keys.codes, keys.registration], []), 'removeSecondFactors');
      })),
  };
}
