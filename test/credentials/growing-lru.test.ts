import t from 'tap';
import { LRUCache } from 'lru-cache';
import { growingLru } from '../../src/credentials/growing-lru.js';
import { createCredentialCache } from '../../src/credentials/cache.js';

/** Heap and array buffers now, in bytes: what building a cache adds shows in one or the other. */
const allocated = () => {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

t.test('bounded like max: the least recently used entry goes first, disposed as an eviction', async (t) => {
  const evicted: string[] = [];
  const cache = new LRUCache<string, number>({ ...growingLru(3), ttl: 60_000, dispose: (_v, key, reason) => reason === 'evict' && evicted.push(key) });
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  t.equal(cache.get('a'), 1, 'a is now the most recently used');
  cache.set('d', 4);
  t.same(evicted, ['b'], 'b, the least recently used, is evicted');
  t.equal(cache.size, 3);
  t.same([...cache.keys()], ['d', 'a', 'c'], 'most recent first');
  for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i);
  t.equal(cache.size, 3, 'never more than the bound, however many are set');
  t.same([...cache.keys()], ['k999', 'k998', 'k997']);
});

t.test('a cache bounded at a million entries allocates nothing much until it fills', async (t) => {
  // lru-cache with `max: 1_000_000` and a TTL builds six arrays of a million slots at once
  // (≈ 40 MB); bounded through growingLru it starts empty.
  const before = allocated();
  const caches = [new LRUCache<string, number>({ ...growingLru(1_000_000), ttl: 60_000 }), createCredentialCache({ max: 1_000_000, ttlSeconds: 60, negativeTtlSeconds: 5 })];
  const grown = allocated() - before;
  t.ok(grown < 4 * 1024 * 1024, `building them added ${(grown / 1024 / 1024).toFixed(1)} MiB (< 4 MiB)`);
  t.equal(caches.length, 2);
});
