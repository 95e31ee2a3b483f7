/**
 * What bounds one organization's growth in the store (issue 26): its own API-key limit, which the
 * admin API sets (the default is AUTHGATE_MAX_KEYS_PER_ORGANIZATION). The count itself is checked
 * by createApiKey and createSession, in the same atomic step as the write (store.ts).
 */
export interface TenantLimitStore {
  /** The organization's own API-key limit; undefined when it has none (the default applies) or is gone. */
  readKeyLimit(orgId: string): Promise<number | undefined>;
  /** Sets (a number) or removes (null) its own key limit; false when there is no such organization. */
  setKeyLimit(orgId: string, limit: number | null): Promise<boolean>;
}
