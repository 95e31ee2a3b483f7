/**
 * Options that bound an LRUCache to `max` entries while letting it allocate as it fills.
 *
 * lru-cache sizes its bookkeeping for `max` when it is built: with `max: 100_000`
 * (AUTHGATE_CACHE_MAX's default) one cache holds 3–4 MB before its first entry (key and value
 * arrays and two link arrays of `max` slots, two more with a TTL), and the gateway keeps four
 * (credentials, verified tokens, identity assertions, organization profiles): about 15 MB of
 * every replica's memory, 11.6 MB of it in V8's large-object space, whether or not anything is
 * ever cached. Bounded by size instead, each entry counting 1 towards `maxSize`, the arrays grow
 * with the entries: the same bound, the same least-recently-used order and `evict` disposals.
 */
export function growingLru(max: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: max, sizeCalculation: one };
}

const one = () => 1;
