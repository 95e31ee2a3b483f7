/**
 * Scale: what a stored credential costs Redis, and whether a lookup slows down as they pile up.
 *
 * - Memory: the real Redis store (src/store/redis/, from dist/: the build that runs) on a
 *   redis-server of its own, emptied (FLUSHALL) before each fill. Organizations are created
 *   first; then `count` API keys (or live sessions, 1-hour expiry) are created for them, N per
 *   organization, 200 store calls in flight. The figure is (used_memory after the credentials −
 *   used_memory after the organizations) / count, from INFO memory once it has settled: what the
 *   credentials add, their indexes and per-tag hashes included, the organizations' own records not.
 * - Lookups: store.findApiKeyByHash throughput (64 in flight, each a random key that exists)
 *   against a Redis holding 1,000 keys and one holding the largest fill, in alternating slices;
 *   the ratio is the median of same-round ratios. Both sides pick from arrays of the same length
 *   (the small side's 1,000 hashes copied), so the client's own memory access is alike. This is the cold path (no credential cache) at
 *   the store, without HTTP: the one thing in it that could grow with the number of keys is the
 *   Redis lookup, so Redis's own CPU time per lookup is reported beside it.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type * as ApiKeys from '../src/credentials/api-keys.js';
import type * as RedisStore from '../src/store/redis/store.js';
import type * as ShardTag from '../src/store/shard-tag.js';
import { cpuMs, sleep } from './lib/proc.js';
import { startBenchRedis, type BenchRedis } from './lib/redis.js';
import { median } from './lib/stats.js';

const dist = (file: string) => new URL(`../../dist/${file}`, import.meta.url).href;
const apiKeys: typeof ApiKeys = await import(dist('credentials/api-keys.js'));
const shardTags: typeof ShardTag = await import(dist('store/shard-tag.js'));
const redisStore: typeof RedisStore = await import(dist('store/redis/store.js'));

type StoreOf = Awaited<ReturnType<typeof RedisStore.openRedisStorage>>['store'];

export type ScaleOptions = {
  redisBinary: string;
  /** The core redis-server runs on (taskset); undefined: not pinned. */
  core: number | undefined;
  /** Credential counts to measure memory at, e.g. [100_000, 1_000_000]; the largest also for lookups. */
  sizes: readonly number[];
  /** The extra 1-per-organization fill. */
  onePerOrganizationCount: number;
  perOrganization: number;
  concurrency: number;
  lookupsInFlight: number;
  /** The small side of the lookup comparison. */
  lookupSmallCount: number;
  lookupRounds: number;
  lookupSliceS: number;
  log(text: string): void;
};

export type MemoryFigure = {
  kind: 'api_key' | 'session';
  count: number;
  perOrganization: number;
  organizations: number;
  /** (used_memory with the credentials − with the organizations only) / count. */
  bytesPerItem: number;
  /** (used_memory with the organizations − empty) / organizations: record and e-mail claim. */
  bytesPerOrganization: number;
  usedMemory: { empty: number; organizations: number; items: number };
  /** Store calls per second while creating the credentials (concurrency in flight). */
  createdPerSecond: number;
  seconds: number;
  /** CPU time per credential created: redis-server's, and this process's (the store client). */
  redisCpuUsPerItem: number;
  clientCpuUsPerItem: number;
};

export type LookupSlice = { round: number; stored: number; lookups: number; lookupsPerSecond: number; misses: number; redisCpuUsPerLookup: number };

export type LookupFigure = {
  method: string;
  inFlight: number;
  small: { stored: number; lookupsPerSecond: number; redisCpuUsPerLookup: number };
  large: { stored: number; lookupsPerSecond: number; redisCpuUsPerLookup: number };
  /** Median of same-round (large / small) lookups per second. */
  ratio: number;
  misses: number;
  slices: LookupSlice[];
};

export type ScaleResult = { memory: MemoryFigure[]; lookups: LookupFigure; seconds: number };

const ENVIRONMENT = 'production';
/** An argon2id PHC string of the length the gateway stores (its content does not matter here). */
const passwordHash = () => `$argon2id$v=19$m=19456,t=2,p=1$${randomBytes(16).toString('base64').replace(/=+$/, '')}$${randomBytes(32).toString('base64').replace(/=+$/, '')}`;
const hex32 = () => randomBytes(16).toString('hex');

async function openStore(redis: BenchRedis): Promise<StoreOf> {
  const { store } = await redisStore.openRedisStorage({ url: redis.url, prefix: 'authgate:', environment: ENVIRONMENT, commandTimeoutMs: 30_000 });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await store.ping();
      return store;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

/** work(0 … count − 1), `concurrency` at a time. */
async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function usedMemory(redis: BenchRedis): Promise<number> {
  const match = /^used_memory:(\d+)/m.exec(await redis.client.info('memory'));
  if (match === null) throw new Error('INFO memory has no used_memory');
  return Number(match[1]);
}

/**
 * used_memory once it stops moving: Redis finishes growing its dictionaries (incremental
 * rehashing, with both tables allocated until it ends) in its cron after the writes stop.
 */
async function settledMemory(redis: BenchRedis): Promise<number> {
  await sleep(1000);
  let last = await usedMemory(redis);
  let stable = 0;
  const deadline = Date.now() + 15_000;
  while (stable < 4 && Date.now() < deadline) {
    await sleep(250);
    const now = await usedMemory(redis);
    stable = Math.abs(now - last) < 16_384 ? stable + 1 : 0;
    last = now;
  }
  return last;
}

async function createOrganizations(store: StoreOf, count: number, concurrency: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => `org_${hex32()}`);
  const run = hex32().slice(0, 8);
  await inParallel(count, concurrency, async (i) => {
    const id = ids[i]!;
    const created = await store.createOrganizationIfEmailFree({
      id,
      name: `Scale ${i}`,
      email: `scale-${run}-${i}@bench.test`,
      passwordHash: passwordHash(),
      createdAt: new Date().toISOString(),
    });
    if (created === 'email-taken') throw new Error('scale: an e-mail was taken');
  });
  return ids;
}

type Fill = { figure: MemoryFigure; hashes: string[] };

/** Empties Redis, then creates organizations and `count` credentials of one kind, measuring memory. */
async function fill(store: StoreOf, redis: BenchRedis, kind: 'api_key' | 'session', count: number, perOrganization: number, concurrency: number, keepHashes: boolean): Promise<Fill> {
  await redis.client.call('FLUSHALL', 'SYNC');
  const empty = await settledMemory(redis);
  const organizations = Math.ceil(count / perOrganization);
  const orgIds = await createOrganizations(store, organizations, concurrency);
  const withOrganizations = await settledMemory(redis);
  const hashes: string[] = keepHashes ? new Array<string>(count) : [];
  const t0 = performance.now();
  const redisCpu0 = cpuMs(redis.pid);
  const clientCpu0 = process.cpuUsage();
  await inParallel(count, concurrency, async (i) => {
    const orgId = orgIds[Math.floor(i / perOrganization)]!;
    const tag = shardTags.shardTagOf(orgId);
    let reply: 'created' | 'no-organization' | 'limit-reached';
    if (kind === 'api_key') {
      const key = apiKeys.generateApiKey(ENVIRONMENT, tag);
      reply = await store.createApiKey({ id: key.id, orgId, hash: key.hash, displayPrefix: key.secret.slice(0, 18), createdAt: new Date().toISOString() });
      if (keepHashes) hashes[i] = key.hash;
    } else {
      reply = await store.createSession({ id: shardTags.tagged(tag, randomBytes(16).toString('base64url')), orgId, expiresAt: Date.now() + 3_600_000 });
    }
    if (reply !== 'created') throw new Error(`scale: ${kind} ${i}: ${reply}`);
  });
  const seconds = (performance.now() - t0) / 1000;
  const redisCpuUsPerItem = ((cpuMs(redis.pid) - redisCpu0) * 1000) / count;
  const clientCpu = process.cpuUsage(clientCpu0);
  const withItems = await settledMemory(redis);
  return {
    hashes,
    figure: {
      kind,
      count,
      perOrganization,
      organizations,
      bytesPerItem: (withItems - withOrganizations) / count,
      bytesPerOrganization: (withOrganizations - empty) / organizations,
      usedMemory: { empty, organizations: withOrganizations, items: withItems },
      createdPerSecond: count / seconds,
      seconds,
      redisCpuUsPerItem,
      clientCpuUsPerItem: (clientCpu.user + clientCpu.system) / count,
    },
  };
}

async function lookupSlice(store: StoreOf, hashes: readonly string[], inFlight: number, durationS: number, redisPid: number): Promise<Omit<LookupSlice, 'round' | 'stored'>> {
  let lookups = 0;
  let misses = 0;
  const cpuBefore = cpuMs(redisPid);
  const t0 = performance.now();
  const end = t0 + durationS * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const hash = hashes[Math.floor(Math.random() * hashes.length)]!;
        const found = await store.findApiKeyByHash(hash);
        if (found === undefined || found.hash !== hash) misses++;
        lookups++;
      }
    }),
  );
  const elapsedS = (performance.now() - t0) / 1000;
  return { lookups, lookupsPerSecond: lookups / elapsedS, misses, redisCpuUsPerLookup: ((cpuMs(redisPid) - cpuBefore) * 1000) / Math.max(1, lookups) };
}

export async function measureScale(options: ScaleOptions): Promise<ScaleResult> {
  const { log, concurrency, perOrganization } = options;
  const startedAt = performance.now();
  const sizes = [...new Set(options.sizes)].sort((a, b) => a - b);
  const largest = sizes[sizes.length - 1]!;
  const memory: MemoryFigure[] = [];
  const big = await startBenchRedis(options.redisBinary, options.core);
  let small: BenchRedis | undefined;
  const stores: StoreOf[] = [];
  try {
    const bigStore = await openStore(big);
    stores.push(bigStore);
    const report = (f: MemoryFigure) =>
      log(`scale: ${f.count.toLocaleString('en-US')} ${f.kind === 'api_key' ? 'API keys' : 'sessions'}, ${f.perOrganization} per organization: ${Math.round(f.bytesPerItem)} B each (${Math.round(f.createdPerSecond).toLocaleString('en-US')}/s, ${f.seconds.toFixed(0)} s; CPU per item: redis ${f.redisCpuUsPerItem.toFixed(1)} µs, client ${f.clientCpuUsPerItem.toFixed(1)} µs)`);
    // Sessions first, then keys by size, so the largest key fill is left in place for the lookups.
    for (const size of sizes) {
      log(`scale: ${size.toLocaleString('en-US')} sessions, ${perOrganization} per organization`);
      const { figure } = await fill(bigStore, big, 'session', size, perOrganization, concurrency, false);
      memory.push(figure);
      report(figure);
    }
    log(`scale: ${options.onePerOrganizationCount.toLocaleString('en-US')} API keys, 1 per organization`);
    const single = await fill(bigStore, big, 'api_key', options.onePerOrganizationCount, 1, concurrency, false);
    memory.push(single.figure);
    report(single.figure);
    let hashes: string[] = [];
    for (const size of sizes) {
      log(`scale: ${size.toLocaleString('en-US')} API keys, ${perOrganization} per organization`);
      const result = await fill(bigStore, big, 'api_key', size, perOrganization, concurrency, size === largest);
      memory.push(result.figure);
      report(result.figure);
      if (size === largest) hashes = result.hashes;
    }

    // Lookups: the largest key fill (still in `big`) against a Redis of its own with few keys.
    log(`scale: lookups, ${options.lookupSmallCount.toLocaleString('en-US')} vs ${largest.toLocaleString('en-US')} keys stored`);
    small = await startBenchRedis(options.redisBinary, options.core);
    const smallStore = await openStore(small);
    stores.push(smallStore);
    const smallHashes = (await fill(smallStore, small, 'api_key', options.lookupSmallCount, perOrganization, concurrency, true)).hashes;
    // The same client-side work on both sides: as many hash strings to pick from at random (the
    // small side's as fresh copies), so only what Redis does differs, not this process's caches.
    const smallSide = Array.from({ length: hashes.length }, (_, i) => Buffer.from(smallHashes[i % smallHashes.length]!).toString());
    const sides = [
      { stored: options.lookupSmallCount, store: smallStore, hashes: smallSide, pid: small.pid },
      { stored: largest, store: bigStore, hashes, pid: big.pid },
    ];
    for (const side of sides) await lookupSlice(side.store, side.hashes, options.lookupsInFlight, 1, side.pid); // warm-up
    const slices: LookupSlice[] = [];
    for (let round = 0; round < options.lookupRounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        slices.push({ round, stored: side.stored, ...(await lookupSlice(side.store, side.hashes, options.lookupsInFlight, options.lookupSliceS, side.pid)) });
      }
    }
    const of = (stored: number) => slices.filter((s) => s.stored === stored);
    const summary = (stored: number) => ({
      stored,
      lookupsPerSecond: median(of(stored).map((s) => s.lookupsPerSecond)),
      redisCpuUsPerLookup: median(of(stored).map((s) => s.redisCpuUsPerLookup)),
    });
    const ratios = Array.from({ length: options.lookupRounds }, (_, round) => {
      const [a, b] = sides.map((side) => slices.find((s) => s.round === round && s.stored === side.stored)!);
      return b!.lookupsPerSecond / a!.lookupsPerSecond;
    });
    const lookups: LookupFigure = {
      method: 'store.findApiKeyByHash (Redis store from dist/, no credential cache, no HTTP)',
      inFlight: options.lookupsInFlight,
      small: summary(options.lookupSmallCount),
      large: summary(largest),
      ratio: median(ratios),
      misses: slices.reduce((n, s) => n + s.misses, 0),
      slices,
    };
    log(`scale: lookups/s ${Math.round(lookups.small.lookupsPerSecond)} (${lookups.small.stored} keys) vs ${Math.round(lookups.large.lookupsPerSecond)} (${lookups.large.stored} keys): ×${lookups.ratio.toFixed(2)}`);
    return { memory, lookups, seconds: (performance.now() - startedAt) / 1000 };
  } finally {
    for (const store of stores) await store.close().catch(() => undefined);
    await small?.stop();
    await big.stop();
  }
}
