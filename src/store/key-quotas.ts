/**
 * The part of the store contract for API keys' own quotas (issue 47): like the organizations'
 * plans and the keys' own rate limits, one small table (only the keys given a quota) that every
 * replica keeps whole in memory and reads again when any replica changes it, so a request finds
 * its key's quota without a store round trip. What each key spent is counted by the quota store
 * (store/quotas.ts, the key's counter beside its organization's).
 * Implemented by memory/key-quotas.ts and redis/key-quotas.ts.
 */

/** A key's quota as stored: `<requests>/<day|month>` (limits/key-quotas.ts formatKeyQuota). */
export type StoredKeyQuota = string;

export type KeyQuotaEntry = Readonly<{ orgId: string; quota: StoredKeyQuota }>;

export interface KeyQuotaStore {
  /** Every key's own quota: key id → its organization and quota (keys without one are absent). */
  readKeyQuotas(): Promise<ReadonlyMap<string, KeyQuotaEntry>>;
  /**
   * Sets (a quota) or removes (null) the key's own quota, and announces it on the invalidation bus
   * as `{kind: 'key_quota', cacheKey: orgId}` in the same step, so every replica reads the table
   * again. The caller checks the key and the quota.
   */
  setKeyQuota(orgId: string, keyId: string, quota: StoredKeyQuota | null): Promise<void>;
}
