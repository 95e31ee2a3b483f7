/**
 * The Redis store's API keys (store/api-keys.ts ApiKeyStore): the hot-path value in the tag's
 * keys hash, the index entry in the organization's record (replies.ts); changing and rolling a
 * key are in key-changes.ts.
 */
import { newestFirst, storedScopes, type ApiKeyStore } from '../api-keys.js';
import { restAfterOrganizationTag, shardTagOf } from '../shard-tag.js';
import type { RedisStoreContext } from './context.js';
import { changeApiKey, rollApiKey, type KeyChangeContext } from './key-changes.js';
import { DIGEST, packedKeyIdOrUndefined, packId, packMs } from './packing.js';
import {
  apiKeyIndexEntry,
  apiKeyReply,
  apiKeySummaries,
  apiKeySummaryReply,
  apiKeyValue,
  keyIndexField,
  keyUseField,
  unexpected,
} from './replies.js';

export function redisApiKeys(context: RedisStoreContext): ApiKeyStore {
  const { client, run, announced, guard, durably, organizationPlace, organizationRecord, credentialPlace } = context;

  /**
   * One key's index entry and last use (HMGET), with where they are: undefined for an id no key
   * can have. `reply` is [entry or null, last use or null].
   */
  async function readKeyEntry(orgId: string, keyId: string) {
    const { shard, packed } = organizationPlace(orgId);
    const packedKeyId = packedKeyIdOrUndefined(keyId);
    if (packedKeyId === undefined) return undefined;
    const record = shard.organization(packed);
    const field = keyIndexField(packedKeyId);
    const reply = await client.hmget(record, field, keyUseField(packedKeyId));
    return { shard, record, field, packedOrgId: packed, packedKeyId, reply };
  }

  const keyChanges: KeyChangeContext = { run, place: organizationPlace, announced };

  return {
    /** Announced (scripts/createApiKey.lua): an unknown entry of the key goes on every replica. */
    createApiKey: (key, maxKeys) =>
      announced((channel, head) => guard('createApiKey', () => durably([organizationRecord(key.orgId)], async () => {
        const digest = restAfterOrganizationTag(key.hash, key.orgId, 'the API key');
        if (!DIGEST.test(digest)) throw new Error('an API key lookup hash is <tag>.<22 base64url>');
        const { shard, packed } = organizationPlace(key.orgId);
        const packedKeyId = packId(key.id);
        const stored = { ...key, scopes: storedScopes(key.scopes) };
        const reply = await run.createApiKey(
          [shard.organization(packed), shard.apiKeys],
          [digest, apiKeyValue(packed, packedKeyId, stored), keyIndexField(packedKeyId), apiKeyIndexEntry(digest, stored), maxKeys === undefined ? '' : Math.max(0, Math.floor(maxKeys)), key.hash, channel, head],
        );
        if (reply !== 'created' && reply !== 'no-organization' && reply !== 'limit-reached') throw unexpected('createApiKey');
        return reply;
      }))),

    /** The hot path: one HGET on the shard the key's own tag names. */
    findApiKeyByHash: (hash) =>
      guard('findApiKeyByHash', async () => {
        const place = credentialPlace(hash);
        if (place === undefined || !DIGEST.test(place.rest)) return undefined;
        return apiKeyReply(hash, await client.hget(place.shard.apiKeys, place.rest));
      }),

    listApiKeys: (orgId) =>
      guard('listApiKeys', async () => {
        const { shard, packed } = organizationPlace(orgId);
        return apiKeySummaries(await client.hgetall(shard.organization(packed))).sort(newestFirst);
      }),

    /** One HMGET of the key's index field and its last use in its organization's record. */
    findApiKeySummary: (orgId, keyId) =>
      guard('findApiKeySummary', async () => {
        const found = await readKeyEntry(orgId, keyId);
        return found === undefined ? undefined : apiKeySummaryReply(found.packedKeyId, found.reply, 'findApiKeySummary');
      }),

    /** One script reads the key, checks the change against it and writes it (key-changes.ts). */
    changeApiKey: (orgId, keyId, change) =>
      guard('changeApiKey', () => durably([organizationRecord(orgId)], () => changeApiKey(keyChanges, orgId, keyId, change))),

    /** One script, as changeApiKey: the successor and the rolled key's new end (key-changes.ts). */
    rollApiKey: (orgId, keyId, roll) =>
      guard('rollApiKey', () => durably([organizationRecord(orgId)], () => rollApiKey(keyChanges, orgId, keyId, roll))),

    pruneExpiredApiKeys: (orgId, before) =>
      guard('pruneExpiredApiKeys', async () => {
        const { shard, packed } = organizationPlace(orgId);
        const reply = await run.pruneExpiredApiKeys([shard.organization(packed), shard.apiKeys], [Math.floor(before)]);
        if (typeof reply !== 'number') throw unexpected('pruneExpiredApiKeys');
        return reply;
      }),

    /**
     * One script per organization, all sent at once without waiting for each other (a pipeline
     * in effect, which also works across Cluster shards, where an ioredis pipeline would not).
     */
    recordApiKeyUse: (uses) =>
      guard('recordApiKeyUse', async () => {
        const byOrg = new Map<string, (string | number)[]>();
        for (const { orgId, keyId, at } of uses) {
          const packedKeyId = packedKeyIdOrUndefined(keyId);
          if (packedKeyId === undefined) continue;
          let args = byOrg.get(orgId);
          if (args === undefined) byOrg.set(orgId, (args = []));
          args.push(packedKeyId, packMs(at));
        }
        await Promise.all([...byOrg].map(([orgId, args]) => {
          const { shard, packed } = organizationPlace(orgId);
          return run.recordApiKeyUse([shard.organization(packed)], args);
        }));
      }),

    deleteApiKeyIfOwned: (orgId, keyId) =>
      announced((channel, head) => guard('deleteApiKeyIfOwned', () => durably([organizationRecord(orgId)], async () => {
        const { shard, packed } = organizationPlace(orgId);
        let field: string;
        try {
          field = keyIndexField(packId(keyId));
        } catch {
          field = ''; // an id no key can have (a space in it): the script still announces nothing
        }
        const reply = await run.deleteApiKeyIfOwned(
          [shard.organization(packed), shard.apiKeys],
          [field, shardTagOf(orgId), channel, head],
        );
        if (reply === null) return undefined;
        if (typeof reply !== 'string') throw unexpected('deleteApiKeyIfOwned');
        return { kind: 'api_key', cacheKey: reply };
      }))),
  };
}
