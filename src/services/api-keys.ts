// API keys of an organization: create (the secret shown once, only its hash stored), list, get,
// rename, delete
// (revoked everywhere); and leak reports, which revoke whatever reported key is real.
import type { Environment } from '../config/config.js';
import { generateApiKey, parseApiKey } from '../credentials/api-keys.js';
import { Problem } from '../problems.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { shardTagOf } from '../store/shard-tag.js';
import type { ApiKeySummary, Store } from '../store/store.js';

export type ApiKeyView = Readonly<{ id: string; prefix: string; name: string | null; createdAt: string; expiresAt: string | null }>;

/** What a new key may be given: a name, and an end (at most one of expiresAt, expiresIn). */
export type NewApiKeyOptions = Readonly<{ name?: string; expiresAt?: string; expiresIn?: number }>;

export type CreatedApiKey = Readonly<{ id: string; apiKey: string; name: string | null; createdAt: string; expiresAt: string | null }>;

/** The latest end a key may be given: 366 days (31,622,400 s, the most `expiresIn` takes). */
export const MAX_API_KEY_LIFETIME_MS = 366 * 24 * 60 * 60 * 1000;

/** A key's answer shape: null where it has no name or does not expire. */
const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** A key a leak report revoked: for the audit line, never the key or its hash. */
export type LeakedKeyRevoked = Readonly<{ orgId: string; keyId: string }>;

export function createApiKeyService(deps: { store: Store; bus: Pick<InvalidationBus, 'applyLocally'>; environment: Environment; now: () => number }) {
  const { store, bus, environment, now } = deps;
  const view = (key: ApiKeySummary): ApiKeyView => ({
    id: key.id,
    prefix: key.displayPrefix,
    name: key.name ?? null,
    createdAt: key.createdAt,
    expiresAt: iso(key.expiresAt),
  });

  /** The key's end in epoch ms, or undefined; a 400 for one in the past or beyond 366 days. */
  function expiryOf(options: NewApiKeyOptions, t: number): number | undefined {
    if (options.expiresAt !== undefined && options.expiresIn !== undefined) {
      throw new Problem('badRequest', 'Give expiresAt or expiresIn, not both.');
    }
    if (options.expiresIn !== undefined) return t + options.expiresIn * 1000;
    if (options.expiresAt === undefined) return undefined;
    const at = Date.parse(options.expiresAt);
    if (!Number.isFinite(at)) throw new Problem('badRequest', 'expiresAt must be an RFC 3339 date-time.');
    if (at <= t) throw new Problem('badRequest', 'expiresAt must be in the future.');
    if (at - t > MAX_API_KEY_LIFETIME_MS) throw new Problem('badRequest', 'expiresAt must be at most 366 days ahead.');
    return at;
  }

  return {
    /** The secret is in this answer and nowhere else, ever: only its hash is stored. */
    async create(orgId: string, options: NewApiKeyOptions = {}): Promise<CreatedApiKey> {
      const t = now();
      const expiresAt = expiryOf(options, t);
      const key = generateApiKey(environment, shardTagOf(orgId));
      const createdAt = new Date(t).toISOString();
      const created = await store.createApiKey({
        id: key.id,
        orgId,
        hash: key.hash,
        displayPrefix: key.displayPrefix,
        createdAt,
        ...(options.name !== undefined && { name: options.name }),
        ...(expiresAt !== undefined && { expiresAt }),
      });
      if (created === 'no-organization') throw new Problem('credentialInvalid', undefined, 'revoked_token');
      return { id: key.id, apiKey: key.secret, name: options.name ?? null, createdAt, expiresAt: iso(expiresAt) };
    },

    async list(orgId: string): Promise<ApiKeyView[]> {
      return (await store.listApiKeys(orgId)).map(view);
    },

    /** One of the organization's keys; 404 for another organization's key as for an unknown one. */
    async get(orgId: string, keyId: string): Promise<ApiKeyView> {
      const key = await store.findApiKeySummary(orgId, keyId);
      if (key === undefined) throw new Problem('apiKeyNotFound');
      return view(key);
    },

    /** Sets (or, with null, removes) the key's name, and nothing else; 404 as get(). */
    async rename(orgId: string, keyId: string, name: string | null): Promise<ApiKeyView> {
      const key = await store.renameApiKey(orgId, keyId, name);
      if (key === undefined) throw new Problem('apiKeyNotFound');
      return view(key);
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
