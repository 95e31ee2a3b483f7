import { ALL_SCOPES_GRANT } from '../../src/authz/scopes.js';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiKeyCacheKey, createCredentialCache, sessionCacheKey, type CacheSettings, type Loaded } from '../../src/credentials/cache.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { StoreUnavailable } from '../../src/store/store.js';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import type { Principal } from '../../src/credentials/principal.js';

type Tap = typeof t;

const SETTINGS: CacheSettings = { max: 1000, ttlSeconds: 60, negativeTtlSeconds: 5 };
/** The shard tag of org_1, the organization every fixture's keys belong to. */
const TAG = shardTagOf('org_1');

/** A memory store holding one organization with one API key, and a counting loader over it. */
async function fixture(t: Pick<Tap, 'teardown' | 'equal'>) {
  const store = createMemoryStore();
  t.teardown(() => store.close());
  await store.createOrganizationIfEmailFree({ id: 'org_1', name: 'Org', email: 'org@example.test', passwordHash: 'x', createdAt: new Date().toISOString() });
  const key = generateApiKey('production', TAG);
  t.equal(await store.createApiKey({ id: key.id, orgId: 'org_1', hash: key.hash, displayPrefix: key.displayPrefix, createdAt: new Date().toISOString() }), 'created');
  const counter = { calls: 0 };
  const loaderFor = (hash: string) => async (): Promise<Loaded> => {
    counter.calls++;
    const record = await store.findApiKeyByHash(hash);
    return record && { principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes: ALL_SCOPES_GRANT } };
  };
  const expected: Principal = { orgId: 'org_1', via: 'api_key', credentialId: key.id, scopes: ALL_SCOPES_GRANT };
  return { store, key, counter, loaderFor, expected };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await sleep(stepMs);
  }
  return condition();
}

t.test('a hit after the first load: the loader runs once', async (t) => {
  const { key, counter, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
  t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
  t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
  t.equal(counter.calls, 1);
  t.equal(cache.size(), 1);
});

t.test('50 concurrent misses of one key share one load', async (t) => {
  const { key, counter, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const gate = deferred();
  const load = loaderFor(key.hash);
  const slow = async () => {
    await gate.promise;
    return load();
  };
  const all = Promise.all(Array.from({ length: 50 }, () => cache.principal(apiKeyCacheKey(key.hash), slow)));
  await sleep(10);
  gate.resolve();
  const results = await all;
  t.equal(counter.calls, 1);
  t.equal(results.length, 50);
  for (const r of results) t.same(r, expected);
});

t.test('an unknown credential is undefined and remembered until the negative TTL passes', async (t) => {
  const { store, counter, loaderFor } = await fixture(t);
  const cache = createCredentialCache({ ...SETTINGS, negativeTtlSeconds: 1 });
  const ghost = generateApiKey('production', TAG);
  const started = Date.now();
  t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
  t.equal(counter.calls, 1);
  t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
  t.equal(counter.calls, 1, 'the second ask does not load');

  // Even once it exists, the cache says unknown until the negative entry expires.
  await store.createApiKey({ id: ghost.id, orgId: 'org_1', hash: ghost.hash, displayPrefix: ghost.displayPrefix, createdAt: new Date().toISOString() });
  t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
  t.equal(counter.calls, 1);

  let found: Principal | undefined;
  const reloaded = await waitFor(async () => {
    found = await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash));
    return counter.calls > 1;
  }, 10_000);
  const elapsed = Date.now() - started;
  t.ok(reloaded, 'loaded again after the negative TTL');
  t.ok(elapsed >= 950, `not before ~1 s (${elapsed} ms)`);
  t.equal(counter.calls, 2);
  t.same(found, { orgId: 'org_1', via: 'api_key', credentialId: ghost.id, scopes: ALL_SCOPES_GRANT });
});

t.test('negative TTL 0: unknown is not remembered', async (t) => {
  const { counter, loaderFor } = await fixture(t);
  const cache = createCredentialCache({ ...SETTINGS, negativeTtlSeconds: 0 });
  const ghost = generateApiKey('production', TAG);
  t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
  await sleep(5);
  t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
  t.equal(counter.calls, 2);
});

t.test('invalidate drops the named credentials only', async (t) => {
  const { store, key, counter, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const other = generateApiKey('production', TAG);
  await store.createApiKey({ id: other.id, orgId: 'org_1', hash: other.hash, displayPrefix: other.displayPrefix, createdAt: new Date().toISOString() });
  await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash));
  await cache.principal(apiKeyCacheKey(other.hash), loaderFor(other.hash));
  t.equal(counter.calls, 2);

  cache.invalidate([{ kind: 'api_key', cacheKey: key.hash }]);
  t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
  t.equal(counter.calls, 3, 'the invalidated key is loaded again');
  await cache.principal(apiKeyCacheKey(other.hash), loaderFor(other.hash));
  t.equal(counter.calls, 3, 'the other key is still cached');

  // After a real revocation the reload finds nothing.
  const revoked = await store.deleteApiKeyIfOwned('org_1', key.id);
  t.same(revoked, { kind: 'api_key', cacheKey: key.hash });
  cache.invalidate([revoked!]);
  t.equal(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), undefined);
  t.equal(counter.calls, 4);
});

t.test('invalidate of a session uses the session key space', async (t) => {
  const cache = createCredentialCache(SETTINGS);
  let calls = 0;
  const load = async (): Promise<Loaded> => {
    calls++;
    return { principal: { orgId: 'org_1', via: 'jwt', credentialId: 'sess_1', scopes: ALL_SCOPES_GRANT } };
  };
  await cache.principal(sessionCacheKey('sess_1'), load);
  await cache.principal(apiKeyCacheKey('sess_1'), load);
  t.equal(calls, 2);
  cache.invalidate([{ kind: 'api_key', cacheKey: 'sess_1' }]);
  await cache.principal(sessionCacheKey('sess_1'), load);
  t.equal(calls, 2, 'an api_key invalidation leaves the session of the same name');
  cache.invalidate([{ kind: 'session', cacheKey: 'sess_1' }]);
  await cache.principal(sessionCacheKey('sess_1'), load);
  t.equal(calls, 3);
});

t.test("invalidate('all') drops every principal, known and unknown", async (t) => {
  const { key, counter, loaderFor } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const ghost = generateApiKey('production', TAG);
  await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash));
  await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash));
  t.equal(cache.size(), 2);
  cache.invalidate('all');
  t.equal(cache.size(), 0);
  await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash));
  await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash));
  t.equal(counter.calls, 4);
});

t.test('a revocation during a load in flight wins', async (t) => {
  const { store, key } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const gate = deferred();
  const firstRead = deferred();
  let calls = 0;
  const load = async (): Promise<Loaded> => {
    calls++;
    const record = await store.findApiKeyByHash(key.hash); // read before the revocation…
    if (calls === 1) {
      firstRead.resolve();
      await gate.promise; // …answered after it
    }
    return record && { principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes: ALL_SCOPES_GRANT } };
  };
  const pending = cache.principal(apiKeyCacheKey(key.hash), load);
  await firstRead.promise;
  const revoked = await store.deleteApiKeyIfOwned('org_1', key.id);
  cache.invalidate([revoked!]);
  gate.resolve();
  t.equal(await pending, undefined, 'the stale answer is not returned');
  t.equal(calls, 2, 'the answer came from a second load');
  t.equal(await cache.principal(apiKeyCacheKey(key.hash), load), undefined, 'nor cached');
  t.equal(calls, 2, 'the second load’s answer is what is cached');

  // Same with 'all'.
  const { store: store2, key: key2 } = await fixture(t);
  const cache2 = createCredentialCache(SETTINGS);
  const gate2 = deferred();
  const read2 = deferred();
  let calls2 = 0;
  const load2 = async (): Promise<Loaded> => {
    calls2++;
    const record = await store2.findApiKeyByHash(key2.hash);
    if (calls2 === 1) {
      read2.resolve();
      await gate2.promise;
    }
    return record && { principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes: ALL_SCOPES_GRANT } };
  };
  const pending2 = cache2.principal(apiKeyCacheKey(key2.hash), load2);
  await read2.promise;
  await store2.deleteOrganization('org_1');
  cache2.invalidate('all');
  gate2.resolve();
  t.equal(await pending2, undefined);
  t.equal(calls2, 2);
});

t.test('caching off (no confirmed revocation channel): every lookup reads the store, nothing known is kept', async (t) => {
  const { key, counter, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const k = apiKeyCacheKey(key.hash);
  t.same(await cache.principal(k, loaderFor(key.hash)), expected);
  t.same(cache.peek(k), expected, 'cached while on');

  cache.setCaching(false);
  t.equal(cache.peek(k), undefined, 'switching off: a cached principal is no answer');
  for (let i = 1; i <= 3; i++) t.same(await cache.principal(k, loaderFor(key.hash)), expected);
  t.equal(counter.calls, 4, 'each lookup read the store');
  t.equal(cache.peek(k), undefined, 'and is still no answer after those reads');
  t.equal(cache.size(), 1, 'kept only as the reserve for a store that does not answer');

  const ghost = generateApiKey('production', TAG);
  t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
  t.equal(cache.peek(apiKeyCacheKey(ghost.hash)), null, 'an unknown credential is still remembered (its creation is never announced anyway)');

  cache.setCaching(true);
  t.equal(cache.size(), 0, 'switching on starts from an empty cache');
  t.same(await cache.principal(k, loaderFor(key.hash)), expected);
  t.same(cache.peek(k), expected, 'and caches again');
});

t.test('caching off: the reserve answers only when the store does not, and the store\'s answer wins', async (t) => {
  const { store, key, counter, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const k = apiKeyCacheKey(key.hash);
  const down = async (): Promise<Loaded> => {
    throw new StoreUnavailable('redis down');
  };
  t.same(await cache.principal(k, loaderFor(key.hash)), expected, 'cached while subscribed');
  cache.setCaching(false);
  t.same(await cache.principal(k, down), expected, 'the store does not answer: the reserve is served (as in any outage)');
  const ghost = generateApiKey('production', TAG);
  await t.rejects(cache.principal(apiKeyCacheKey(ghost.hash), down), StoreUnavailable, 'nothing in reserve: still 503');

  await store.deleteApiKeyIfOwned('org_1', key.id); // revoked elsewhere, the message missed
  t.equal(await cache.principal(k, loaderFor(key.hash)), undefined, 'the store answers: its answer wins');
  t.equal(counter.calls, 2);
  t.equal(await cache.principal(k, down), undefined, 'and the revoked credential left the reserve: it is remembered as unknown');

  const fresh = await fixture(t);
  const k2 = apiKeyCacheKey(fresh.key.hash);
  t.same(await cache.principal(k2, fresh.loaderFor(fresh.key.hash)), fresh.expected, 'read while off');
  t.same(await cache.principal(k2, down), fresh.expected, 'a read while off refreshes the reserve');
  cache.setCaching(true);
  await t.rejects(cache.principal(k2, down), StoreUnavailable, 'switching on forgets the reserve: it may predate missed revocations');
});

t.test('a read begun before caching was switched never fills the cache after the switch', async (t) => {
  // Begun while off, answered after on: it may predate a revocation this replica never heard.
  const { store, key } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  const k = apiKeyCacheKey(key.hash);
  cache.setCaching(false);
  const gate = deferred();
  const read = deferred();
  const slow = async (): Promise<Loaded> => {
    const record = await store.findApiKeyByHash(key.hash);
    read.resolve();
    await gate.promise;
    return record && { principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes: ALL_SCOPES_GRANT } };
  };
  const pending = cache.principal(k, slow);
  await read.promise;
  await store.deleteApiKeyIfOwned('org_1', key.id); // revoked, and the message missed
  cache.setCaching(true);
  gate.resolve();
  t.ok(await pending, 'that caller gets what was read when it asked');
  t.equal(cache.peek(k), undefined, 'but it is not cached');

  // Begun while on, answered after an off and on again: read again, the revocation wins.
  const second = await fixture(t);
  const cache2 = createCredentialCache(SETTINGS);
  const k2 = apiKeyCacheKey(second.key.hash);
  const gate2 = deferred();
  const read2 = deferred();
  let calls = 0;
  const slow2 = async (): Promise<Loaded> => {
    calls++;
    const record = await second.store.findApiKeyByHash(second.key.hash);
    if (calls === 1) {
      read2.resolve();
      await gate2.promise;
    }
    return record && { principal: { orgId: record.orgId, via: 'api_key', credentialId: record.id, scopes: ALL_SCOPES_GRANT } };
  };
  const pending2 = cache2.principal(k2, slow2);
  await read2.promise;
  await second.store.deleteApiKeyIfOwned('org_1', second.key.id);
  cache2.setCaching(false);
  cache2.setCaching(true);
  gate2.resolve();
  t.equal(await pending2, undefined, 'the stale answer is not returned');
  t.equal(calls, 2, 'it was read again');
  t.equal(cache2.peek(k2), null, 'and what is cached is the fresh answer');
});

t.test('StoreUnavailable from the loader propagates and is not cached', async (t) => {
  const { key, counter, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  let failing = 0;
  const down = async (): Promise<Loaded> => {
    failing++;
    throw new StoreUnavailable('redis timed out');
  };
  await t.rejects(cache.principal(apiKeyCacheKey(key.hash), down), StoreUnavailable);
  t.equal(failing, 1, 'not retried');
  await t.rejects(cache.principal(apiKeyCacheKey(key.hash), down), { name: 'StoreUnavailable', message: 'redis timed out' });
  t.equal(failing, 2, 'the failure was not cached');
  t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
  t.equal(counter.calls, 1);
  t.equal(cache.size(), 1);

  // Concurrent callers of a failing load all see the failure.
  const gate = deferred();
  const slowDown = async (): Promise<Loaded> => {
    await gate.promise;
    throw new StoreUnavailable();
  };
  const ghost = generateApiKey('production', TAG);
  const calls = Array.from({ length: 5 }, () => cache.principal(apiKeyCacheKey(ghost.hash), slowDown));
  gate.resolve();
  for (const call of calls) await t.rejects(call, StoreUnavailable);
});

t.test("the loader's ttlMs is honoured, and capped by the cache TTL", async (t) => {
  const cache = createCredentialCache(SETTINGS);
  let calls = 0;
  const principal: Principal = { orgId: 'org_1', via: 'jwt', credentialId: 'sess_short', scopes: ALL_SCOPES_GRANT };
  const load = async (): Promise<Loaded> => {
    calls++;
    return { principal, ttlMs: 1500 };
  };
  const key = sessionCacheKey('sess_short');
  // Generous against a stalled machine: the second ask follows the first at once.
  const loadedAt = Date.now();
  t.same(await cache.principal(key, load), principal);
  t.same(await cache.principal(key, load), principal);
  t.equal(calls, 1, 'cached within its ttl');
  t.ok(await waitFor(async () => (await cache.principal(key, load), calls === 2), 10_000), 'loaded again after its ttl');
  t.ok(Date.now() - loadedAt >= 1450, 'not before it');

  const capped = createCredentialCache({ ...SETTINGS, ttlSeconds: 1 });
  let cappedCalls = 0;
  const long = async (): Promise<Loaded> => {
    cappedCalls++;
    return { principal, ttlMs: 3_600_000 };
  };
  const started = Date.now();
  await capped.principal(key, long);
  t.ok(await waitFor(async () => (await capped.principal(key, long), cappedCalls > 1), 10_000), 'reloaded after the cache TTL');
  t.ok(Date.now() - started >= 950);
});

t.test('a cache with max 0 (or TTL 0) loads every time', async (t) => {
  for (const settings of [{ ...SETTINGS, max: 0 }, { ...SETTINGS, ttlSeconds: 0 }]) {
    const { key, counter, loaderFor, expected } = await fixture(t);
    const cache = createCredentialCache(settings);
    for (let i = 0; i < 5; i++) t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
    t.equal(counter.calls, 5);
    const ghost = generateApiKey('production', TAG);
    t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
    t.equal(await cache.principal(apiKeyCacheKey(ghost.hash), loaderFor(ghost.hash)), undefined);
    t.equal(counter.calls, 7);
    t.equal(cache.size(), 0);
    t.same(cache.stats, { hits: 0, misses: 7, evictions: 0 });
    cache.rememberVerifiedToken('d', { sessionId: 's', expiresAtMs: Date.now() + 60_000 }, 60_000);
    t.equal(cache.verifiedToken('d'), undefined, 'nothing memoised either');
  }
});

t.test('stats count hits, misses and evictions', async (t) => {
  const cache = createCredentialCache({ ...SETTINGS, max: 2 });
  const load = (id: string) => async (): Promise<Loaded> => ({ principal: { orgId: 'org', via: 'api_key', credentialId: id, scopes: ALL_SCOPES_GRANT } });
  t.same(cache.stats, { hits: 0, misses: 0, evictions: 0 });
  await cache.principal('a1', load('1'));
  await cache.principal('a1', load('1'));
  await cache.principal('a1', load('1'));
  t.same(cache.stats, { hits: 2, misses: 1, evictions: 0 });
  await cache.principal('a2', load('2'));
  await cache.principal('a3', load('3'));
  t.same(cache.stats, { hits: 2, misses: 3, evictions: 1 });
  t.equal(cache.size(), 2);
  // The least recently used (a1) went.
  let reloaded = false;
  await cache.principal('a1', async () => ((reloaded = true), { principal: { orgId: 'org', via: 'api_key', credentialId: '1', scopes: ALL_SCOPES_GRANT } }));
  t.ok(reloaded);
  t.same(cache.stats, { hits: 2, misses: 4, evictions: 2 });
  // Unknown answers count the same way.
  await cache.principal('a9', async () => undefined);
  await cache.principal('a9', async () => undefined);
  t.same(cache.stats, { hits: 3, misses: 5, evictions: 3 });
});

t.test('verified-token memos are returned until their ttl', async (t) => {
  const cache = createCredentialCache(SETTINGS);
  const memo = { sessionId: 'sess_1', expiresAtMs: Date.now() + 1500 };
  t.equal(cache.verifiedToken('digest'), undefined);
  const rememberedAt = Date.now();
  cache.rememberVerifiedToken('digest', memo, 1500);
  t.same(cache.verifiedToken('digest'), memo);
  t.equal(cache.verifiedToken('other'), undefined);
  t.ok(await waitFor(() => cache.verifiedToken('digest') === undefined, 10_000), 'expired with its ttl');
  t.ok(Date.now() - rememberedAt >= 1450, 'not before it');

  cache.rememberVerifiedToken('zero', memo, 0);
  t.equal(cache.verifiedToken('zero'), undefined, 'a ttl of 0 is not remembered');
  cache.rememberVerifiedToken('negative', memo, -5);
  t.equal(cache.verifiedToken('negative'), undefined);

  const long = createCredentialCache({ ...SETTINGS, ttlSeconds: 1 });
  long.rememberVerifiedToken('d', memo, 60_000);
  t.same(long.verifiedToken('d'), memo);
});

t.test('a lookup arms no timer (no lru-cache clock timer per millisecond on the hot path)', async (t) => {
  const { key, loaderFor, expected } = await fixture(t);
  const cache = createCredentialCache(SETTINGS);
  t.same(await cache.principal(apiKeyCacheKey(key.hash), loaderFor(key.hash)), expected);
  cache.rememberVerifiedToken('digest', { sessionId: 'sess_1', expiresAtMs: Date.now() + 60_000 }, 60_000);
  // lru-cache calls the global setTimeout when it caches its clock: counted while the lookups run.
  const real = globalThis.setTimeout;
  let armed = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof real>) => {
    armed++;
    return real(...args);
  }) as typeof real;
  try {
    for (let i = 0; i < 5; i++) {
      t.same(cache.peek(apiKeyCacheKey(key.hash)), expected);
      t.ok(cache.verifiedToken('digest'));
      await sleep(3); // past lru-cache's default 1 ms resolution, so each round would arm a timer
    }
  } finally {
    globalThis.setTimeout = real;
  }
  t.equal(armed, 0);
});
