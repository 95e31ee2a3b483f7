import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/**
 * Credentials the store did not know, remembered for AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS so a
 * flood of garbage keys is not a flood of store reads: a fixed table of 64-bit digests of the
 * cache key and an expiry each, no object per entry, never more than its slots.
 *
 * Why not the principals' LRU (issue 45, "Memory under a flood"). Measured on Node 24.21, a
 * gateway (dist/main.js, Redis store, 2-core machine) sent 50,000 distinct well-formed unknown
 * keys by 50 connections: RSS +135 to +195 MiB between runs (/proc VmRSS). Forcing two full
 * GCs through the inspector right after, the heap held only +9.6 MiB more than before (32.2 →
 * 41.8 MiB) and RSS fell back to +13 MiB: the growth was garbage, not what was kept. Kept were
 * the 50,000 entries in lru-cache, ~132 B of heap each (6.3 MiB; the key string 'a' + hash, a
 * cons string over a slice that holds the whole 43-character SHA-256 text, and lru-cache's slots),
 * and a full LRU would have pushed out cached principals. The garbage grew the heap because every
 * entry outlived the scavenges that the flood's allocations triggered: each lived 5 s or more
 * (lru-cache purges no expired entry), so each was copied to old space with what it held, and
 * V8 let both the young generation (to its 2 × 32 MiB) and old space (41 → 118 MiB between two
 * mark-compacts, --trace-gc) grow under the rising survival. The same flood with one unknown key
 * again and again, or with bad checksums (no entry made), grew RSS by ~20 MiB; a valid key by ~33.
 *
 * Here an entry is 16 bytes of one preallocated table (two Int32 lanes of the digest, a Float64
 * expiry): nothing survives a scavenge per unknown key, the table cannot grow, and an unknown key
 * never displaces a principal. A digest is not the key: two keys share an entry only if their 64
 * bits do (a seed per process, so no one can aim at another's), and then a created key could be
 * refused until the entry expires, which is the negative TTL: 2^-64 per lookup and entry.
 *
 * After it, the same flood: the heap after two full GCs +0.5 MiB (was +9.6), yet RSS still +179
 * and +190 MiB. What the entries held was not what grew: sampling what survived scavenges and died
 * in a full GC (the inspector's sampling heap profiler) put most of the promoted bytes in ioredis's
 * auto-pipelines, one per store read (store/redis/connection.ts says why). With the key's HGET sent
 * as a plain command as well: RSS +68 MiB, and the bench's flood row +76 MiB (docs/performance.md,
 * "Memory under a flood").
 *
 * Buckets of four slots, the bucket chosen by the digest: a full bucket gives its slot that
 * expires first (the oldest, as TTLs are equal), so a flood keeps its newest keys and the table
 * never needs a sweep.
 */
export interface UnknownCredentials {
  /** Remembered as unknown and not yet expired. */
  has(key: string): boolean;
  remember(key: string, ttlMs: number): void;
  forget(key: string): void;
  clear(): void;
  /** Entries not yet expired (a scan of the table: for the metrics' scrape, not the hot path). */
  size(): number;
  /** Slots: the most entries it can hold. */
  readonly capacity: number;
}

const BUCKET = 4;

export function createUnknownCredentials(max: number, now: () => number = () => performance.now()): UnknownCredentials {
  if (max <= 0) return NONE;
  const capacity = Math.max(BUCKET, 2 ** Math.ceil(Math.log2(max)));
  const bucketMask = capacity / BUCKET - 1;
  // Typed arrays are zero-filled and committed page by page as written: an idle table costs no RSS.
  const high = new Int32Array(capacity);
  const low = new Int32Array(capacity);
  /** When the slot's entry expires (now()'s clock); 0: empty. */
  const expires = new Float64Array(capacity);
  const seed = randomBytes(4).readInt32LE(0);
  // The digest of the last key asked about, so no call allocates a pair.
  let h1 = 0;
  let h2 = 0;

  /** cyrb53's two 32-bit lanes over the key's UTF-16 units, seeded: 64 bits, no allocation. */
  function digest(key: string): void {
    let a = 0xdeadbeef ^ seed;
    let b = 0x41c6ce57 ^ seed;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      a = Math.imul(a ^ c, 2654435761);
      b = Math.imul(b ^ c, 1597334677);
    }
    a = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
    b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(a ^ (a >>> 13), 3266489909);
    h1 = a | 0;
    h2 = b | 0;
  }

  /** The slot holding the digest just computed, or -1. */
  function slotOf(): number {
    const first = (h1 & bucketMask) * BUCKET;
    for (let i = first; i < first + BUCKET; i++) {
      if (expires[i] !== 0 && high[i] === h1 && low[i] === h2) return i;
    }
    return -1;
  }

  return {
    capacity,
    has(key) {
      digest(key);
      const slot = slotOf();
      if (slot === -1) return false;
      if (expires[slot]! > now()) return true;
      expires[slot] = 0;
      return false;
    },
    remember(key, ttlMs) {
      digest(key);
      let slot = slotOf();
      if (slot === -1) {
        // An empty slot of the bucket, else the one that expires first.
        const first = (h1 & bucketMask) * BUCKET;
        slot = first;
        for (let i = first; i < first + BUCKET; i++) {
          if (expires[i] === 0) {
            slot = i;
            break;
          }
          if (expires[i]! < expires[slot]!) slot = i;
        }
        high[slot] = h1;
        low[slot] = h2;
      }
      expires[slot] = now() + Math.max(1, ttlMs);
    },
    forget(key) {
      digest(key);
      const slot = slotOf();
      if (slot !== -1) expires[slot] = 0;
    },
    clear() {
      expires.fill(0);
    },
    size() {
      const t = now();
      let live = 0;
      for (let i = 0; i < capacity; i++) if (expires[i]! > t) live++;
      return live;
    },
  };
}

/** AUTHGATE_NEGATIVE_CACHE_MAX=0: nothing is remembered (concurrent misses still share one read). */
const NONE: UnknownCredentials = {
  capacity: 0,
  has: () => false,
  remember: () => {},
  forget: () => {},
  clear: () => {},
  size: () => 0,
};
