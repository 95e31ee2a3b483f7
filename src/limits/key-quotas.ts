/**
 * API keys' own quotas (issue 47) as every replica keeps them: the keys given one
 * (store/key-quotas.ts), one small table read at start and again whenever any replica changes it
 * (announced on the invalidation bus as `key_quota`) or the bus may have missed messages ('all').
 * A key's quota is counted beside its organization's, in the organization's plan's period: it
 * only narrows what the plan's quota allows. The owner-facing checks are here too.
 */
import type { Logger } from '../observability/logging.js';
import { Problem } from '../problems.js';
import type { CompiledPlan } from '../route-table/types.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { KeyQuotaStore, StoredKeyQuota } from '../store/key-quotas.js';
import type { QuotaPeriod } from './quota.js';
import { replicateTable } from '../store/replicated-table.js';

/** A key's quota as the API takes and shows it: the same shape as a plan's. */
export type KeyQuota = Readonly<{ requests: number; per: QuotaPeriod }>;

export const formatKeyQuota = (quota: KeyQuota): StoredKeyQuota => `${quota.requests}/${quota.per}`;

export function parseKeyQuota(stored: StoredKeyQuota): KeyQuota | undefined {
  const match = /^([1-9][0-9]{0,14})\/(day|month)$/.exec(stored);
  return match === null ? undefined : Object.freeze({ requests: Number(match[1]), per: match[2] as QuotaPeriod });
}

/**
 * A key's own quota as its owner gives it, checked against its organization's plan: the plan must
 * have a quota (the key's is counted in the plan's period, beside it), of the same period, and
 * the key's may not be above it. Otherwise 400 (1200), as a key's rateLimit above its
 * organization's is.
 */
export function keyQuotaWithin(quota: KeyQuota, plan: CompiledPlan | undefined): KeyQuota {
  const ceiling = plan?.quota;
  if (ceiling === undefined) throw new Problem('badRequest', "quota needs the organization's plan to have a quota: a key's own quota only narrows it.");
  if (quota.per !== ceiling.per) throw new Problem('badRequest', `quota.per must be the plan's (${ceiling.per}).`);
  if (quota.requests > ceiling.requests) throw new Problem('badRequest', `quota must not be above the organization's (${ceiling.requests} per ${ceiling.per}).`);
  return Object.freeze({ requests: quota.requests, per: quota.per });
}

export type KeyQuotas = Readonly<{
  /** The hot path: the key's own quota, or undefined. */
  quotaOf(keyId: string): KeyQuota | undefined;
  /** Sets (after keyQuotaWithin) or removes (null) a key's quota, applied here before it returns. */
  set(orgId: string, keyId: string, quota: KeyQuota | null): Promise<void>;
  /** After a key is gone: its quota too. Best effort: a stale one names a key that no longer exists. */
  forget(orgId: string, keyId: string): Promise<void>;
  close(): void;
}>;

export async function createKeyQuotas(deps: {
  store: KeyQuotaStore;
  bus: Pick<InvalidationBus, 'onInvalidation'>;
  logger: Pick<Logger, 'warn'>;
}): Promise<KeyQuotas> {
  let table = new Map<string, KeyQuota>();
  // Until the first read, keys' own quotas are unknown (their organizations' still hold).
  const replica = await replicateTable({
    read: async () => {
      const read = new Map<string, KeyQuota>();
      for (const [keyId, entry] of await deps.store.readKeyQuotas()) {
        const quota = parseKeyQuota(entry.quota);
        if (quota !== undefined) read.set(keyId, quota);
      }
      table = read;
    },
    kind: 'key_quota',
    bus: deps.bus,
    onReloadFailed: (error) => deps.logger.warn({ event: 'key_quotas.reload_failed', err: error }, "could not read the keys' own quotas; keeping those in memory"),
  });

  async function set(orgId: string, keyId: string, quota: KeyQuota | null): Promise<void> {
    await deps.store.setKeyQuota(orgId, keyId, quota === null ? null : formatKeyQuota(quota));
    // This replica applies its own change before answering; the others hear the announcement.
    const changed = new Map(table);
    if (quota === null) changed.delete(keyId);
    else changed.set(keyId, quota);
    table = changed;
    await replica.reload().catch(() => {});
  }

  return {
    quotaOf: (keyId) => table.get(keyId),
    set,
    async forget(orgId, keyId) {
      if (!table.has(keyId)) return;
      await set(orgId, keyId, null).catch(() => {});
    },
    close: replica.close,
  };
}
