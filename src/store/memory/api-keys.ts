/** The memory store's API keys (store/api-keys.ts ApiKeyStore). */
import {
  changedTerms,
  newestFirst,
  sameScopes,
  storedScopes,
  type ApiKeyRecord,
  type ApiKeyStore,
  type ApiKeySummary,
} from '../api-keys.js';
import { restAfterOrganizationTag } from '../shard-tag.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryApiKeys(state: MemoryState): MemoryPart<ApiKeyStore> {
  const { keysByHash, keyHashesByOrg, lastUsedByKey, keyLimits } = state;

  function keyOf(orgId: string, keyId: string): ApiKeyRecord | undefined {
    const hash = keyHashesByOrg.get(orgId)?.get(keyId);
    return hash === undefined ? undefined : keysByHash.get(hash);
  }

  function forgetKey(orgId: string, key: ApiKeyRecord): void {
    keyHashesByOrg.get(orgId)?.delete(key.id);
    keysByHash.delete(key.hash);
    lastUsedByKey.delete(key.id);
  }

  /** A key as listApiKeys shows it: no hash, no organization; with its last recorded use. */
  function summaryOf(key: ApiKeyRecord): ApiKeySummary {
    const lastUsedAt = lastUsedByKey.get(key.id);
    return {
      id: key.id,
      displayPrefix: key.displayPrefix,
      createdAt: key.createdAt,
      ...(key.name !== undefined && { name: key.name }),
      ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
      ...(key.scopes !== undefined && { scopes: key.scopes }),
      ...(lastUsedAt !== undefined && { lastUsedAt }),
    };
  }

  return {
    methods: {
      async createApiKey(key, maxKeys) {
        restAfterOrganizationTag(key.hash, key.orgId, 'the API key'); // the Redis store's contract, kept here too
        const index = keyHashesByOrg.get(key.orgId);
        if (index === undefined) return 'no-organization';
        if (maxKeys !== undefined && index.size >= (keyLimits.get(key.orgId) ?? maxKeys)) return 'limit-reached';
        keysByHash.set(key.hash, withStoredScopes(key));
        index.set(key.id, key.hash);
        return 'created';
      },

      async findApiKeyByHash(hash) {
        const key = keysByHash.get(hash);
        if (key === undefined) return undefined;
        return {
          id: key.id,
          orgId: key.orgId,
          hash: key.hash,
          ...(key.expiresAt !== undefined && { expiresAt: key.expiresAt }),
          ...(key.scopes !== undefined && { scopes: key.scopes }),
        };
      },

      async listApiKeys(orgId) {
        const summaries: ApiKeySummary[] = [];
        for (const hash of keyHashesByOrg.get(orgId)?.values() ?? []) {
          const key = keysByHash.get(hash);
          if (key !== undefined) summaries.push(summaryOf(key));
        }
        return summaries.sort(newestFirst);
      },

      async findApiKeySummary(orgId, keyId) {
        const key = keyOf(orgId, keyId);
        return key === undefined ? undefined : summaryOf(key);
      },

      async changeApiKey(orgId, keyId, change) {
        if (change.name === '') throw new Error('an API key\'s name must not be empty (null removes it)');
        const key = keyOf(orgId, keyId);
        if (key === undefined) return 'not-found';
        const terms = changedTerms(key, change);
        if (typeof terms === 'string') return terms;
        const { name: _name, expiresAt: _expiresAt, scopes: _scopes, ...rest } = key;
        const changed: ApiKeyRecord = { ...rest, ...terms };
        keysByHash.set(key.hash, changed);
        const termsChanged = !sameScopes(changed.scopes, key.scopes) || changed.expiresAt !== key.expiresAt;
        return { key: summaryOf(changed), revoked: termsChanged ? { kind: 'api_key', cacheKey: key.hash } : undefined };
      },

      async rollApiKey(orgId, keyId, roll) {
        const key = keyOf(orgId, keyId);
        const index = keyHashesByOrg.get(orgId);
        if (key === undefined || index === undefined) return 'not-found';
        restAfterOrganizationTag(roll.successor.hash, orgId, 'the API key');
        const successor: ApiKeyRecord = {
          ...roll.successor,
          orgId,
          ...(key.name !== undefined && { name: key.name }),
          ...(key.scopes !== undefined && { scopes: key.scopes }),
        };
        keysByHash.set(successor.hash, successor);
        index.set(successor.id, successor.hash);
        let rolled: ApiKeyRecord | undefined;
        if (roll.rolledKeyEnds === 'now') {
          forgetKey(orgId, key);
        } else {
          rolled = { ...key, expiresAt: Math.min(key.expiresAt ?? Infinity, roll.rolledKeyEnds) };
          keysByHash.set(key.hash, rolled);
        }
        return { successor: summaryOf(successor), rolled: rolled && summaryOf(rolled), revoked: { kind: 'api_key', cacheKey: key.hash } };
      },

      async pruneExpiredApiKeys(orgId, before) {
        let pruned = 0;
        for (const hash of [...(keyHashesByOrg.get(orgId)?.values() ?? [])]) {
          const key = keysByHash.get(hash);
          if (key?.expiresAt !== undefined && key.expiresAt < before) {
            forgetKey(orgId, key);
            pruned++;
          }
        }
        return pruned;
      },

      async recordApiKeyUse(uses) {
        for (const { orgId, keyId, at } of uses) {
          if (keyOf(orgId, keyId) !== undefined && (lastUsedByKey.get(keyId) ?? -Infinity) < at) lastUsedByKey.set(keyId, at);
        }
      },

      async deleteApiKeyIfOwned(orgId, keyId) {
        const key = keyOf(orgId, keyId);
        if (key === undefined) return undefined;
        forgetKey(orgId, key);
        return { kind: 'api_key', cacheKey: key.hash };
      },
    },
  };
}

/** Scope names as a store keeps them: sorted, without duplicates (storedScopes). */
function withStoredScopes(key: ApiKeyRecord): ApiKeyRecord {
  const scopes = storedScopes(key.scopes);
  return scopes === undefined ? key : { ...key, scopes };
}
