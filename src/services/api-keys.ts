// API keys of an organization: create (the secret shown once, only its hash stored), list, delete (revoked everywhere).
import type { Environment } from '../config/config.js';
import { generateApiKey } from '../credentials/api-keys.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { shardTagOf } from '../store/shard-tag.js';
import type { ApiKeySummary, Store } from '../store/store.js';

export type ApiKeyView = Readonly<{ id: string; prefix: string; createdAt: string }>;

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
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
