// Leak reports of API keys (POST /auth/api-key/leaked, routes/leaked-keys.ts): whatever
// reported key is real is revoked at once, everywhere; the answer never says which were.
import type { Environment } from '../config/config.js';
import { parseApiKey } from '../credentials/api-keys.js';
import type { InvalidationBus } from '../store/invalidation.js';
import type { Store } from '../store/store.js';

/** A key a leak report revoked: for the audit line, never the key or its hash. */
export type LeakedKeyRevoked = Readonly<{ orgId: string; keyId: string }>;

/**
 * A leak report: every string that is a well-formed key of this gateway's environment and
 * exists is revoked at once, everywhere, as revoke() does; anything else (another
 * environment's key, a malformed string, a bad checksum, an unknown key) is skipped without a
 * word, so the caller's answer never says which keys existed. `onRevoked` is told each
 * revocation as it is committed (the audit line), even when another lookup of the report then
 * fails: the first failure (StoreUnavailable: 503) is thrown once every lookup has settled.
 */
export async function reportLeakedKeys(
  deps: {
    store: Pick<Store, 'findApiKeyByHash' | 'deleteApiKeyIfOwned'>;
    bus: Pick<InvalidationBus, 'applyLocally'>;
    environment: Environment;
    /** Forgets a revoked key's own rate limit and quota. */
    forget: (orgId: string, keyId: string) => Promise<unknown>;
  },
  keys: readonly string[],
  onRevoked: (revoked: LeakedKeyRevoked) => void,
): Promise<void> {
  const { store, bus, environment } = deps;
  const hashes = new Set<string>();
  for (const key of keys) {
    const parsed = parseApiKey(key);
    if (parsed.ok && parsed.environment === environment) hashes.add(parsed.hash);
  }
  const outcomes = await Promise.allSettled(
    [...hashes].map(async (hash) => {
      const found = await store.findApiKeyByHash(hash);
      if (found === undefined) return;
      const revoked = await store.deleteApiKeyIfOwned(found.orgId, found.id);
      if (revoked === undefined) return; // deleted meanwhile, by its owner or another report
      bus.applyLocally([revoked]);
      onRevoked({ orgId: found.orgId, keyId: found.id });
      await deps.forget(found.orgId, found.id);
    }),
  );
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
