import { LRUCache } from 'lru-cache';
import { growingLru } from './growing-lru.js';
import type { Principal } from './principal.js';
import { createUnknownCredentials } from './unknown-credentials.js';
import type { Invalidation, InvalidationBus } from '../store/invalidation.js';
import { StoreUnavailable } from '../store/store.js';

/**
 * The in-process cache in front of the store, so the hot path rarely leaves the process.
 * - principals by credential ('a' + key hash, 's' + session id): concurrent misses share one
 *   store read (lru-cache's fetch);
 * - unknown credentials, remembered briefly so a flood of garbage keys does not become a flood of
 *   store reads, apart: in a fixed table of digests (unknown-credentials.ts, why there), bounded
 *   by AUTHGATE_NEGATIVE_CACHE_MAX, never in the principals' LRU (whose room they would take);
 * - verified JWTs by token digest, until the token's own `exp`, so a signature is checked once.
 * Revocations delete entries (which also aborts a read in flight, so a racing revocation wins);
 * a key's creation is announced the same way (store/redis/scripts/createApiKey.lua), so an unknown
 * entry of it goes at once on every replica; 'all' clears both, for a replica that may have missed
 * messages.
 *
 * The cache is only as good as the revocations that reach it: while this replica is not sure to
 * hear them (no confirmed subscription to the revocation channel), setCaching(false) makes every
 * lookup read the store; a cached principal is not an answer then. What the cache holds (and
 * what those reads find) stays only as a reserve for a store that does not answer at all: a
 * revocation needs the store too, so while it is down for this replica the reserve is served,
 * within the cache TTL, exactly as during an outage with the channel up. Unknown credentials are
 * still remembered briefly: that keeps a garbage flood off the store, and a creation this replica
 * did not hear of meanwhile is refused no longer than the negative TTL (a key is only ever asked
 * for before its creation by someone who made its secret, never by its holder).
 * setCaching(true) starts again from an empty cache. A generation counter, bumped on every
 * switch, keeps a read that started before a switch from filling the cache after it.
 */
/** negativeMax: AUTHGATE_NEGATIVE_CACHE_MAX, the most unknown credentials remembered (default 65,536). */
export type CacheSettings = Readonly<{ max: number; ttlSeconds: number; negativeTtlSeconds: number; negativeMax?: number }>;

export type Loaded = Readonly<{ principal: Principal; ttlMs?: number }> | undefined;
export type Loader = () => Promise<Loaded>;
export type VerifiedTokenMemo = Readonly<{ sessionId: string; expiresAtMs: number }>;

export type CacheStats = { hits: number; misses: number; evictions: number };

export const DEFAULT_NEGATIVE_MAX = 65_536;

export interface CredentialCache {
  /**
   * What the cache holds for key, without loading: the principal, null for a credential cached
   * as unknown, undefined when it holds nothing (then ask principal()). A find counts as a hit.
   * The hot path: a cache hit costs no promise.
   */
  peek(key: string): Principal | null | undefined;
  /** The cached principal, or the loader's answer (shared by concurrent callers). */
  principal(key: string, load: Loader): Promise<Principal | undefined>;
  verifiedToken(digest: string): VerifiedTokenMemo | undefined;
  rememberVerifiedToken(digest: string, memo: VerifiedTokenMemo, ttlMs: number): void;
  invalidate(invalidation: Invalidation): void;
  /**
   * Off: principals are read from the store on every lookup; cached ones answer only when the
   * store does not (StoreUnavailable). On: from empty.
   */
  setCaching(on: boolean): void;
  readonly stats: Readonly<CacheStats>;
  /** Principals and unknown credentials held. */
  size(): number;
  /** Unknown credentials held (not yet expired). */
  unknownSize(): number;
}

const STALE = 'stale';
type FetchContext = { load: Loader; generation: number };

export const apiKeyCacheKey = (hash: string) => `a${hash}`;
export const sessionCacheKey = (sessionId: string) => `s${sessionId}`;

/**
 * lru-cache's default `ttlResolution` (1 ms) keeps performance.now() for a millisecond and arms a
 * setTimeout to forget it: a timer per cache per busy millisecond, each a timer-list insert and a
 * timer callback (on the authorization port behind nginx, node:timers was ~3 % of its busy time,
 * most of it these; issue 30's fifth step, docs/performance.md). With 0 each TTL check reads
 * performance.now() itself, which costs less than the timer and is exact.
 */
const EXACT_CLOCK = { ttlResolution: 0 } as const;

export function createCredentialCache(settings: CacheSettings): CredentialCache {
  const stats: CacheStats = { hits: 0, misses: 0, evictions: 0 };
  const enabled = settings.max > 0 && settings.ttlSeconds > 0;
  const ttlMs = settings.ttlSeconds * 1000;
  const negativeTtlMs = settings.negativeTtlSeconds * 1000;

  if (!enabled) return uncached(stats);

  /** Whether a principal read now may be cached; the one check the hot path pays for it. */
  let caching = true;
  let generation = 0;
  const unknown = createUnknownCredentials(negativeTtlMs > 0 ? (settings.negativeMax ?? DEFAULT_NEGATIVE_MAX) : 0);
  const principals = new LRUCache<string, Principal, FetchContext>({
    ...growingLru(settings.max),
    ...EXACT_CLOCK,
    ttl: ttlMs,
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') stats.evictions++;
    },
    fetchMethod: async (key, _stale, { options, signal, context }) => {
      const loaded = await context.load();
      // Caching was switched off or on since the read began: what it read may predate a
      // revocation this replica never heard of. Its caller reads again.
      if (context.generation !== generation) throw new Error(STALE);
      if (loaded === undefined) {
        // Undefined leaves nothing in the LRU (lru-cache deletes the read's place) and is what every
        // caller sharing this read gets. Not remembered when a message about the key (its creation)
        // came while the read was out: the read may predate it, and the caller reads again.
        if (!signal.aborted) unknown.remember(key, negativeTtlMs);
        return undefined;
      }
      if (loaded.ttlMs !== undefined) options.ttl = Math.max(1, Math.min(ttlMs, loaded.ttlMs));
      return loaded.principal;
    },
  });
  const tokens = new LRUCache<string, VerifiedTokenMemo>({ ...growingLru(settings.max), ...EXACT_CLOCK, ttl: ttlMs });

  /**
   * A read while caching is off: the store's answer wins and refreshes the reserve; only when
   * the store does not answer is the reserve served.
   */
  async function loadUncached(key: string, load: Loader): Promise<Principal | undefined> {
    const started = generation;
    let loaded: Loaded;
    try {
      loaded = await load();
    } catch (error) {
      const reserve = principals.get(key);
      if (reserve !== undefined && isStoreUnavailable(error)) return reserve;
      throw error;
    }
    if (started !== generation) return loaded?.principal; // a switch since: keep nothing
    if (loaded !== undefined) {
      principals.set(key, loaded.principal, { ttl: Math.max(1, Math.min(ttlMs, loaded.ttlMs ?? ttlMs)) });
      return loaded.principal;
    }
    principals.delete(key);
    unknown.remember(key, negativeTtlMs);
    return undefined;
  }

  return {
    stats,
    size: () => principals.size + unknown.size(),
    unknownSize: () => unknown.size(),

    peek(key) {
      const cached = principals.get(key);
      if (cached === undefined) {
        if (!unknown.has(key)) return undefined;
        stats.hits++;
        return null;
      }
      if (!caching) return undefined; // a reserve, not an answer: ask principal()
      stats.hits++;
      return cached;
    },

    async principal(key, load) {
      const cached = principals.get(key);
      if (cached !== undefined && caching) {
        stats.hits++;
        return cached;
      }
      if (cached === undefined && unknown.has(key)) {
        stats.hits++;
        return undefined;
      }
      stats.misses++;
      // A revocation arriving mid-read aborts the fetch; read again so the revocation wins.
      // After three such races, one read that nothing caches settles it.
      for (let attempt = 1; attempt <= 3 && caching; attempt++) {
        try {
          return await principals.fetch(key, { context: { load, generation } });
        } catch (error) {
          if (!isAbort(error)) throw error;
        }
      }
      return loadUncached(key, load);
    },

    verifiedToken: (digest) => tokens.get(digest),
    rememberVerifiedToken: (digest, memo, memoTtlMs) => {
      if (memoTtlMs > 0) tokens.set(digest, memo, { ttl: memoTtlMs });
    },

    setCaching(on) {
      generation++;
      // Off keeps what is cached as the outage reserve; on must forget it (missed revocations).
      if (on) {
        principals.clear();
        unknown.clear();
      }
      caching = on;
    },

    invalidate(invalidation) {
      if (invalidation === 'all') {
        principals.clear();
        unknown.clear();
        return;
      }
      for (const revoked of invalidation) {
        const key = revoked.kind === 'api_key' ? apiKeyCacheKey(revoked.cacheKey) : revoked.kind === 'session' ? sessionCacheKey(revoked.cacheKey) : undefined;
        if (key === undefined) continue;
        principals.delete(key); // aborts a read in flight too
        unknown.forget(key);
      }
    },
  };
}

/** The cache switched off (AUTHGATE_CACHE_MAX=0 or TTL 0): every request reads the store. */
function uncached(stats: CacheStats): CredentialCache {
  return {
    stats,
    size: () => 0,
    unknownSize: () => 0,
    peek: () => undefined,
    async principal(_key, load) {
      stats.misses++;
      return (await load())?.principal;
    },
    verifiedToken: () => undefined,
    rememberVerifiedToken: () => {},
    invalidate: () => {},
    setCaching: () => {},
  };
}

const ABORT_REASONS = new Set(['deleted', 'evicted', 'replaced', STALE]);

function isStoreUnavailable(error: unknown): boolean {
  return error instanceof StoreUnavailable;
}

function isAbort(error: unknown): boolean {
  // lru-cache rejects an aborted fetch with the abort reason (and a stale read with STALE); the
  // loader itself only ever throws StoreUnavailable (or a bug), which carry names of their own.
  return error instanceof Error && error.name === 'Error' && ABORT_REASONS.has(error.message);
}

/**
 * Keeps the cache in step with the revocation bus: a revocation deletes its entries at once, and
 * a replica not sure to hear revocations made elsewhere does not trust its cache (until the bus
 * confirms its subscription, every credential is read from the store).
 */
export function followRevocations(cache: CredentialCache, bus: Pick<InvalidationBus, 'onInvalidation' | 'onSubscriptionChange' | 'subscribed'>): void {
  bus.onInvalidation((invalidation) => cache.invalidate(invalidation));
  bus.onSubscriptionChange((subscribed) => cache.setCaching(subscribed));
  cache.setCaching(bus.subscribed);
}
