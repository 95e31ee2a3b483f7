// API keys of an organization: create (the secret shown once, only its hash stored), list, delete
// (revoked everywhere); and leak reports, which revoke whatever reported key is real.
import type { Environment } from '../config/config.js';
import { generateApiKey, parseApiKey } from '../credentials/api-keys.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { shardTagOf } from '../store/shard-tag.js';
import type { ApiKeySummary, Store } from '../store/store.js';

export type ApiKeyView = Readonly<{ id: string; prefix: string; createdAt: string }>;

/** A key a leak report revoked: for the audit line, never the key or its hash. */
export type LeakedKeyRevoked = Readonly<{ orgId: string; keyId: string }>;

export function createApiKeyService(deps: { store: Store; bus: Pick<InvalidationBus, 'applyLocally'>; environment: Environment; now: () => number }) {
  const { store, bus, environment, now } = deps;
  const view = (key: ApiKeySummary): ApiKeyView => ({ id: key.id, prefix: key.displayPrefix, createdAt: key.createdAt });

  return {
    /** The secret is in this answer and nowhere else, ever: only its hash is stored. */
    async create(orgId: string): Promise<{ id: string; apiKey: string }> {
      const key = generateApiKey(environment, shardTagOf(orgId));
      const created = await store.createApiKey({
        id: key.id,
        orgId,
        hash: key.hash,
        displayPrefix: key.displayPrefix,
        createdAt: new Date(now()).toISOString(),
      });
      if (created === 'no-organization') throw new Problem('credentialInvalid', undefined, 'revoked_token');
      return { id: key.id, apiKey: key.secret };
    },

    async list(orgId: string): Promise<ApiKeyView[]> {
      return (await store.listApiKeys(orgId)).map(view);
    },

    /** 404 for another organization's key as for an unknown one: ids of others are not confirmed. */
    async revoke(orgId: string, keyId: string): Promise<void> {
      const revoked = await store.deleteApiKeyIfOwned(orgId, keyId);
      if (revoked === undefined) throw new Problem('apiKeyNotFound');
      bus.applyLocally([revoked]);
    },

    /**
     * A leak report: every string that is a well-formed key of this gateway's environment and
     * exists is revoked at once, everywhere, as revoke() does; anything else (another
     * environment's key, a malformed string, a bad checksum, an unknown key) is skipped without a
     * word, so the caller's answer never says which keys existed. `onRevoked` is told each
     * revocation as it is committed (the audit line), even when another lookup of the report then
     * fails: the first failure (StoreUnavailable: 503) is thrown once every lookup has settled.
     */
    async reportLeaked(keys: readonly string[], onRevoked: (revoked: LeakedKeyRevoked) => void): Promise<void> {
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
        }),
      );
      const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
