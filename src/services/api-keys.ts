// API keys of an organization: create (the secret shown once, only its hash stored), list, get,
// rename, delete
// (revoked everywhere); and leak reports, which revoke whatever reported key is real.
import type { Environment } from '../config/config.js';
import { generateApiKey } from '../credentials/api-keys.js';
import { Problem } from '../problems.js';
import type { TenantGrowth } from '../guards/tenant-growth.js';
import type { InvalidationBus } from '../store/invalidation.js';
import { shardTagOf } from '../store/shard-tag.js';
import type { RateLimitService } from './rate-limits.js';
import type { RouteTableSource } from '../route-table/types.js';
import type { PlanLookup } from '../plans/organization-plans.js';
import { scopesOutsidePlan } from '../route-table/plans.js';
import { keyQuotaWithin, type KeyQuotas } from '../limits/key-quotas.js';
import { storedScopes, type ApiKeySummary, type Store } from '../store/store.js';
import { keyCreatorsOf, type KeyCreator, type KeyCreatorLookup, type KeyCreatorStore } from '../members/key-creators.js';
import { cursorOf, declaredScopes, expiryOf, iso, readCursor, REFUSALS, scopesShown } from './api-key-terms.js';
import { reportLeakedKeys, type LeakedKeyRevoked } from './leaked-api-keys.js';

export { declaredScopes, scopesShown } from './api-key-terms.js';
export type { LeakedKeyRevoked } from './leaked-api-keys.js';

export * from './api-key-shapes.js';
import { DEFAULT_PAGE_SIZE, DEFAULT_ROLL_GRACE_SECONDS, EXPIRED_KEY_RETENTION_MS, MAX_API_KEY_LIFETIME_MS, MAX_PAGE_SIZE, type ApiKeyChangeOptions, type ApiKeyPage, type ApiKeyView, type CreatedApiKey, type NewApiKeyOptions, type PageRequest, type RollOptions, type RolledApiKey } from './api-key-shapes.js';

export function createApiKeyService(deps: {
  /** With the members' part that says who created each key (members/key-creators.ts). */
  store: Store & KeyCreatorStore;
  bus: Pick<InvalidationBus, 'applyLocally'>;
  environment: Environment;
  now: () => number;
  /** This replica's use of a key not yet written to the store (services/key-usage.ts), if any. */
  pendingUse?: (keyId: string) => number | undefined;
  /** Keys' own rate limits (services/rate-limits.ts). */
  rateLimits: RateLimitService;
  /** Keys made per organization and window, and held per organization (guards/tenant-growth.ts). */
  growth?: Pick<TenantGrowth, 'admitKeyCreation' | 'maxKeys'>;
  /** The live route table: its scopes are what keys may be given, and the order they are shown in. */
  routes: RouteTableSource;
  /** The organizations' plans (issue 47): a key is given only scopes its organization's plan includes, and its maxKeys holds. */
  plans?: PlanLookup;
  /** Keys' own quotas (limits/key-quotas.ts): only within the organization's plan's. */
  keyQuotas?: Pick<KeyQuotas, 'quotaOf' | 'set' | 'forget'>;
}) {
  const { store, bus, environment, now, rateLimits, growth, routes } = deps;
  const table = () => routes.current().scopes;
  const planOf = (orgId: string) => deps.plans?.planOf(orgId, routes.current());
  /** Names given to a key, checked against the table and then against the organization's plan (403 1130). */
  const grantable = (orgId: string, names: readonly string[]): readonly string[] => {
    const declared = declaredScopes(names, table());
    const outside = scopesOutsidePlan(declared, planOf(orgId));
    if (outside.length > 0) {
      throw new Problem('scopesOutsidePlan', `The organization's plan does not include ${outside.join(', ')} (GET /auth/scopes lists those it does).`, 'scope_outside_plan');
    }
    return declared;
  };
  const pendingUse = deps.pendingUse ?? (() => undefined);
  const keyQuotas = deps.keyQuotas ?? { quotaOf: () => undefined, set: async () => {}, forget: async () => {} };
  /** The key as answered; `creators` says who created it (one read per answer, for a whole page). */
  const view = (key: ApiKeySummary, creators: KeyCreatorLookup): ApiKeyView => {
    const pending = pendingUse(key.id);
    const lastUsedAt = pending === undefined || (key.lastUsedAt ?? -Infinity) > pending ? key.lastUsedAt : pending;
    return {
      id: key.id,
      prefix: key.displayPrefix,
      name: key.name ?? null,
      scopes: scopesShown(key.scopes, table()),
      createdAt: key.createdAt,
      expiresAt: iso(key.expiresAt),
      lastUsedAt: iso(lastUsedAt),
      rateLimit: rateLimits.keyView(key.id),
      quota: keyQuotas.quotaOf(key.id) ?? null,
      createdBy: creators(key.id),
    };
  };
  const creatorsOf = (orgId: string) => keyCreatorsOf(store, orgId);
  /** The creator a new key is answered with: the member creating it, else (no member: the organization's login) whom the store counts. */
  const newKeyCreator = async (orgId: string, keyId: string, creator: KeyCreator | undefined) => creator ?? (await creatorsOf(orgId))(keyId);

  /** Keys that expired more than the retention ago leave the store on the organization's next key write (or listing that finds one). */
  const prune = (orgId: string) => store.pruneExpiredApiKeys(orgId, now() - EXPIRED_KEY_RETENTION_MS);

  return {
    /** The secret is in this answer and nowhere else, ever: only its hash is stored. */
    async create(orgId: string, options: NewApiKeyOptions = {}, creator?: KeyCreator): Promise<CreatedApiKey> {
      const t = now();
      const expiresAt = expiryOf(options, t);
      const scopes = storedScopes(options.scopes === undefined ? undefined : grantable(orgId, options.scopes));
      const rateLimit = options.rateLimit === undefined ? undefined : rateLimits.keyLimitFor(orgId, options.rateLimit);
      const quota = options.quota === undefined ? undefined : keyQuotaWithin(options.quota, planOf(orgId));
      const key = generateApiKey(environment, shardTagOf(orgId));
      const createdAt = new Date(t).toISOString();
      await growth?.admitKeyCreation(orgId);
      await prune(orgId);
      // The limit before the key: a key never works without the limit it was created with.
      if (rateLimit !== undefined) await rateLimits.setKey(orgId, key.id, rateLimit);
      if (quota !== undefined) await keyQuotas.set(orgId, key.id, quota);
      const created = await store.createApiKey({
        id: key.id,
        orgId,
        hash: key.hash,
        displayPrefix: key.displayPrefix,
        createdAt,
        ...(options.name !== undefined && { name: options.name }),
        ...(expiresAt !== undefined && { expiresAt }),
        ...(scopes !== undefined && { scopes }),
      }, planOf(orgId)?.maxKeys ?? growth?.maxKeys);
      // The store announced the creation to the other replicas (a replica that remembers the key
      // as unknown forgets it); this replica hears it here.
      if (created === 'created') bus.applyLocally([{ kind: 'api_key', cacheKey: key.hash, created: true }]);
      if (created !== 'created' && rateLimit !== undefined) await rateLimits.forgetKey(orgId, key.id);
      if (created !== 'created' && quota !== undefined) await keyQuotas.forget(orgId, key.id);
      if (created === 'no-organization') throw new Problem('credentialInvalid', undefined, 'revoked_token');
      if (created === 'limit-reached') {
        throw new Problem('apiKeyLimitReached', "This organization holds as many API keys as its limit allows: delete one (expired ones count until deleted), or ask the operator to raise the limit.", 'key_limit');
      }
      return {
        id: key.id,
        apiKey: key.secret,
        name: options.name ?? null,
        scopes: scopesShown(scopes, table()),
        createdAt,
        expiresAt: iso(expiresAt),
        rateLimit: rateLimit ?? null,
        quota: quota ?? null,
        createdBy: await newKeyCreator(orgId, key.id, creator),
      };
    },

    /** Newest first, a page at a time; the cursor is the one the previous page gave. */
    async list(orgId: string, page: PageRequest = {}): Promise<ApiKeyPage> {
      const limit = Math.min(page.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const after = page.cursor === undefined ? undefined : readCursor(page.cursor);
      let keys = await store.listApiKeys(orgId); // newest first
      // A key past its retention is not shown, and the store drops it: a write only when there is one.
      const retainedAfter = now() - EXPIRED_KEY_RETENTION_MS;
      if (keys.some((key) => key.expiresAt !== undefined && key.expiresAt < retainedAfter)) {
        keys = keys.filter((key) => key.expiresAt === undefined || key.expiresAt >= retainedAfter);
        await store.pruneExpiredApiKeys(orgId, retainedAfter);
      }
      if (after !== undefined) {
        const [createdAt, id] = after;
        keys = keys.filter((key) => key.createdAt < createdAt || (key.createdAt === createdAt && key.id < id));
      }
      const shown = keys.slice(0, limit);
      const last = shown[shown.length - 1];
      const creators = await creatorsOf(orgId);
      return { keys: shown.map((key) => view(key, creators)), nextCursor: keys.length > limit && last !== undefined ? cursorOf(last) : null };
    },

    /** One of the organization's keys; 404 for another organization's key as for an unknown one. */
    async get(orgId: string, keyId: string): Promise<ApiKeyView> {
      const key = await store.findApiKeySummary(orgId, keyId);
      if (key === undefined) throw new Problem('apiKeyNotFound');
      return view(key, await creatorsOf(orgId));
    },

    /**
     * Changes the key's name, narrows its scopes or brings its end closer, in one atomic step; a
     * change that would widen it is a 400 and changes nothing. When its scopes or end changed,
     * every replica drops its cached copy.
     */
    async change(orgId: string, keyId: string, options: ApiKeyChangeOptions): Promise<ApiKeyView> {
      const expiresAt = expiryOf(options, now());
      const rateLimit = options.rateLimit == null ? options.rateLimit : rateLimits.keyLimitFor(orgId, options.rateLimit);
      const quota = options.quota == null ? options.quota : keyQuotaWithin(options.quota, planOf(orgId));
      const changed = await store.changeApiKey(orgId, keyId, {
        ...(options.name !== undefined && { name: options.name }),
        ...(options.scopes !== undefined && { scopes: grantable(orgId, options.scopes) }),
        ...(expiresAt !== undefined && { expiresAt }),
      });
      if (changed === 'not-found') throw new Problem('apiKeyNotFound');
      if (typeof changed === 'string') throw new Problem('badRequest', REFUSALS[changed]);
      if (changed.revoked !== undefined) bus.applyLocally([changed.revoked]);
      // After the key's own terms, which may refuse: a refused change changes nothing.
      if (rateLimit !== undefined) await rateLimits.setKey(orgId, keyId, rateLimit);
      if (quota !== undefined) await keyQuotas.set(orgId, keyId, quota);
      return view(changed.key, await creatorsOf(orgId));
    },

    /**
     * A successor with the key's name and scopes, its secret in this answer only; the rolled key
     * keeps working for graceSeconds (never longer than it would have), or is revoked at once for
     * 0. The successor ends when asked (expiresAt, expiresIn) or, for a rolled key that expires,
     * after the same lifetime the rolled key was given; otherwise never. One atomic step.
     */
    async roll(orgId: string, keyId: string, options: RollOptions = {}, creator?: KeyCreator): Promise<RolledApiKey> {
      const t = now();
      const grace = options.graceSeconds ?? DEFAULT_ROLL_GRACE_SECONDS;
      let expiresAt = expiryOf(options, t);
      if (expiresAt === undefined && options.expiresAt === undefined && options.expiresIn === undefined) {
        const rolled = await store.findApiKeySummary(orgId, keyId);
        if (rolled === undefined) throw new Problem('apiKeyNotFound');
        if (rolled.expiresAt !== undefined) {
          const lifetime = rolled.expiresAt - Date.parse(rolled.createdAt);
          expiresAt = t + Math.min(Math.max(lifetime, 60_000), MAX_API_KEY_LIFETIME_MS);
        }
      }
      const key = generateApiKey(environment, shardTagOf(orgId));
      const createdAt = new Date(t).toISOString();
      // A roll makes a key: counted as a creation (the rolled one ends within its grace period).
      await growth?.admitKeyCreation(orgId);
      await prune(orgId);
      // The successor keeps the rolled key's own limit, set before it exists (as at creation).
      const rateLimit = rateLimits.keyView(keyId);
      if (rateLimit !== null) await rateLimits.setKey(orgId, key.id, rateLimit);
      // And its own quota (a fresh count: the successor's requests are its own).
      const quota = keyQuotas.quotaOf(keyId) ?? null;
      if (quota !== null) await keyQuotas.set(orgId, key.id, quota);
      const result = await store.rollApiKey(orgId, keyId, {
        successor: {
          id: key.id,
          hash: key.hash,
          displayPrefix: key.displayPrefix,
          createdAt,
          ...(expiresAt !== undefined && { expiresAt }),
        },
        rolledKeyEnds: grace === 0 ? 'now' : t + grace * 1000,
      });
      if (result === 'not-found') {
        if (rateLimit !== null) await rateLimits.forgetKey(orgId, key.id);
        if (quota !== null) await keyQuotas.forget(orgId, key.id);
        throw new Problem('apiKeyNotFound');
      }
      bus.applyLocally([result.revoked, { kind: 'api_key', cacheKey: key.hash, created: true }]); // the successor, announced as created
      if (result.rolled === undefined) await Promise.all([rateLimits.forgetKey(orgId, keyId), keyQuotas.forget(orgId, keyId)]);
      return {
        id: key.id,
        apiKey: key.secret,
        name: result.successor.name ?? null,
        scopes: scopesShown(result.successor.scopes, table()),
        createdAt,
        expiresAt: iso(expiresAt),
        rateLimit,
        quota,
        createdBy: await newKeyCreator(orgId, key.id, creator),
        rolled: { id: keyId, expiresAt: new Date(result.rolled?.expiresAt ?? t).toISOString() },
      };
    },

    /** 404 for another organization's key as for an unknown one: ids of others are not confirmed. */
    async revoke(orgId: string, keyId: string): Promise<void> {
      const revoked = await store.deleteApiKeyIfOwned(orgId, keyId);
      if (revoked === undefined) throw new Problem('apiKeyNotFound');
      bus.applyLocally([revoked]);
      await Promise.all([rateLimits.forgetKey(orgId, keyId), keyQuotas.forget(orgId, keyId)]);
    },

    /** A leak report (leaked-api-keys.ts): every real key of this gateway's environment in it is revoked, as revoke() does. */
    reportLeaked: (keys: readonly string[], onRevoked: (revoked: LeakedKeyRevoked) => void): Promise<void> =>
      reportLeakedKeys({ store, bus, environment, forget: (orgId, keyId) => Promise.all([rateLimits.forgetKey(orgId, keyId), keyQuotas.forget(orgId, keyId)]) }, keys, onRevoked),
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
