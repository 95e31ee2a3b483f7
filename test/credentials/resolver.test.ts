import { ALL_SCOPES_GRANT } from '../../src/authz/scopes.js';
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { createTokenService, type TokenService } from '../../src/credentials/jwt.js';
import { createResolver, type Resolution } from '../../src/credentials/resolver.js';
import { apiKeyCacheKey, createCredentialCache, sessionCacheKey, type CacheSettings } from '../../src/credentials/cache.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { shardTagOf, tagged } from '../../src/store/shard-tag.js';
import type { Store } from '../../src/store/store.js';

const SETTINGS: CacheSettings = { max: 1000, ttlSeconds: 60, negativeTtlSeconds: 5 };
/** org_1's shard tag: its keys and its session carry it. */
const TAG = shardTagOf('org_1');
/** The fixture's session: `<tag>.<random>`, as the session service makes them. */
const SESSION_ID = tagged(TAG, randomBytes(16).toString('base64url'));

type Tap = typeof t;

/** A memory store with one organization, one key and one session; its reads and the token checks counted. */
async function fixture(t: Pick<Tap, 'teardown'>, cacheSettings: CacheSettings = SETTINGS) {
  const memory = createMemoryStore();
  t.teardown(() => memory.close());
  const createdAt = new Date().toISOString();
  await memory.createOrganizationIfEmailFree({ id: 'org_1', name: 'Org', email: 'o@example.test', passwordHash: 'x', createdAt });
  const key = generateApiKey('production', TAG);
  await memory.createApiKey({ id: key.id, orgId: 'org_1', hash: key.hash, displayPrefix: key.displayPrefix, createdAt });
  const reads = { keys: 0, sessions: 0, verifications: 0 };
  const store: Store = {
    ...memory,
    findApiKeyByHash: (hash) => (reads.keys++, memory.findApiKeyByHash(hash)),
    findSession: (id) => (reads.sessions++, memory.findSession(id)),
  };
  const signer = await createTokenService({ secret: 'resolver-test-secret-0123456789abcdef', previousSecrets: [], issuer: 'authgate', ttlSeconds: 3600, environment: 'production' });
  const tokens: TokenService = { ...signer, verify: (token, nowMs) => (reads.verifications++, signer.verify(token, nowMs)) };
  const { token, expiresAtMs } = await signer.sign(SESSION_ID, Date.now());
  await memory.createSession({ id: SESSION_ID, orgId: 'org_1', expiresAt: expiresAtMs });
  const cache = createCredentialCache(cacheSettings);
  const resolver = createResolver({ store, cache, tokens, environment: 'production', now: Date.now });
  return { key, token, reads, cache, resolver, memory };
}

const isPromise = (value: unknown) => value instanceof Promise;

t.test('an API key: the first resolution reads the store, later ones are synchronous cache hits', async (t) => {
  const { key, reads, resolver, cache } = await fixture(t);
  const first = resolver.resolve(key.secret);
  t.ok(isPromise(first), 'a miss is asynchronous');
  t.same(await first, { ok: true, principal: { orgId: 'org_1', via: 'api_key', credentialId: key.id, scopes: ALL_SCOPES_GRANT } });
  const second = resolver.resolve(key.secret);
  t.notOk(isPromise(second), 'a hit is not');
  t.same(second, await first);
  t.equal(reads.keys, 1);
  t.same(cache.stats, { hits: 1, misses: 1, evictions: 0 });
});

t.test('an unknown key is remembered as unknown: one store read, then synchronous refusals', async (t) => {
  const { reads, resolver } = await fixture(t);
  const ghost = generateApiKey('production', TAG).secret;
  t.match(await resolver.resolve(ghost), { ok: false, kind: 'api_key', reason: 'unknown_key' });
  const again = resolver.resolve(ghost);
  t.notOk(isPromise(again));
  t.match(again, { ok: false, reason: 'unknown_key' });
  t.equal(reads.keys, 1);
});

t.test('malformed, mistyped and other-environment keys never reach the store or the cache', async (t) => {
  const { reads, resolver, cache } = await fixture(t);
  const good = generateApiKey('production', TAG).secret;
  const typo = good.slice(0, -1) + (good.endsWith('A') ? 'B' : 'A');
  t.match(resolver.resolve('agk_live_short'), { ok: false, reason: 'malformed_key' });
  // A key of the first format (agk_live_ + 36 base62, no shard tag) is not looked up either.
  t.match(resolver.resolve(`agk_live_${good.slice(-36)}`), { ok: false, reason: 'malformed_key' });
  t.match(resolver.resolve('agk_live_0123456789ABCDEFGHIJabcdefghijABCDEF'), { ok: false, reason: 'malformed_key' });
  t.match(resolver.resolve(typo), { ok: false, reason: 'bad_checksum' });
  t.match(resolver.resolve(generateApiKey('sandbox', TAG).secret), { ok: false, reason: 'wrong_environment', environment: 'sandbox' });
  t.equal(reads.keys, 0);
  t.same(cache.stats, { hits: 0, misses: 0, evictions: 0 });
});

t.test('a revocation reaches the next resolution at once', async (t) => {
  const { key, reads, resolver, cache, memory } = await fixture(t);
  t.match(await resolver.resolve(key.secret), { ok: true });
  t.match(resolver.resolve(key.secret), { ok: true });
  const revoked = await memory.deleteApiKeyIfOwned('org_1', key.id);
  cache.invalidate([revoked!]);
  const after = resolver.resolve(key.secret);
  t.ok(isPromise(after), 'the cache no longer answers');
  t.match(await after, { ok: false, reason: 'unknown_key' });
  t.equal(reads.keys, 2);
  t.equal(cache.peek(apiKeyCacheKey(key.hash)), null, 'now cached as unknown');
});

t.test('a JWT is verified once, then answered from its memo and the session cache', async (t) => {
  const { token, reads, resolver, cache } = await fixture(t);
  const expected: Resolution = { ok: true, principal: { orgId: 'org_1', via: 'jwt', credentialId: SESSION_ID, scopes: ALL_SCOPES_GRANT } };
  t.same(await resolver.resolve(token), expected);
  for (let i = 0; i < 5; i++) {
    const hit = resolver.resolve(token);
    t.notOk(isPromise(hit), 'synchronous');
    t.same(hit, expected);
  }
  t.equal(reads.verifications, 1, 'the signature is checked once');
  t.equal(reads.sessions, 1, 'the session is read once');
  // Logout: the session goes, the memo stays, and the token is refused.
  cache.invalidate([{ kind: 'session', cacheKey: SESSION_ID }]);
  t.equal(cache.peek(sessionCacheKey(SESSION_ID)), undefined);
  t.match(await resolver.resolve(token), { ok: true }, 'still in the store here: read again');
  t.equal(reads.verifications, 1, 'no second signature check');
  t.equal(reads.sessions, 2);
  t.match(await resolver.resolve(token.slice(0, -2) + 'xx'), { ok: false, kind: 'jwt', reason: 'invalid_token' });
});

t.test('with the cache off every resolution reads the store', async (t) => {
  const { key, token, reads, resolver } = await fixture(t, { ...SETTINGS, max: 0 });
  for (let i = 0; i < 3; i++) {
    const resolved = resolver.resolve(key.secret);
    t.ok(isPromise(resolved));
    t.match(await resolved, { ok: true });
    t.match(await resolver.resolve(token), { ok: true });
  }
  t.equal(reads.keys, 3);
  t.equal(reads.sessions, 3);
  t.equal(reads.verifications, 3, 'nor are verified tokens remembered');
});

t.test('a key with an expiry: refused from its expiresAt on by the resolver\'s clock, from the cache too, and cached no longer than it lives', async (t) => {
  const memory = createMemoryStore();
  t.teardown(() => memory.close());
  let clock = Date.parse('2030-01-01T00:00:00.000Z');
  const now = () => clock;
  await memory.createOrganizationIfEmailFree({ id: 'org_1', name: 'Org', email: 'o@example.test', passwordHash: 'x', createdAt: new Date(clock).toISOString() });
  const expiring = generateApiKey('production', TAG);
  const expiresAt = clock + 60_000;
  await memory.createApiKey({ id: expiring.id, orgId: 'org_1', hash: expiring.hash, displayPrefix: expiring.displayPrefix, createdAt: new Date(clock).toISOString(), expiresAt });
  const lasting = generateApiKey('production', TAG);
  await memory.createApiKey({ id: lasting.id, orgId: 'org_1', hash: lasting.hash, displayPrefix: lasting.displayPrefix, createdAt: new Date(clock).toISOString() });
  const reads = { keys: 0 };
  const store: Store = { ...memory, findApiKeyByHash: (hash) => (reads.keys++, memory.findApiKeyByHash(hash)) };
  const real = createCredentialCache(SETTINGS);
  const ttls: Array<number | undefined> = [];
  // The cache as the resolver sees it, with the TTL each load asks for written down.
  const cache = { ...real, peek: real.peek, principal: (key: string, load: () => Promise<import('../../src/credentials/cache.js').Loaded>) => real.principal(key, async () => {
    const loaded = await load();
    ttls.push(loaded?.ttlMs);
    return loaded;
  }) };
  const resolver = createResolver({ store, cache, tokens: undefined as never, environment: 'production', now });

  const first = await resolver.resolve(expiring.secret);
  t.same(first, { ok: true, principal: { orgId: 'org_1', via: 'api_key', credentialId: expiring.id, scopes: ALL_SCOPES_GRANT, expiresAt } });
  t.same(ttls, [60_000], 'cached for what is left of its life (under the 60 s cache TTL, it would be capped by it)');
  t.same(await resolver.resolve(lasting.secret), { ok: true, principal: { orgId: 'org_1', via: 'api_key', credentialId: lasting.id, scopes: ALL_SCOPES_GRANT } });
  t.same(ttls, [60_000, undefined], 'a key without expiry: the cache\'s own TTL');

  clock = expiresAt - 1;
  const before = resolver.resolve(expiring.secret);
  t.notOk(isPromise(before), 'a millisecond before: a cache hit');
  t.match(before, { ok: true });
  clock = expiresAt;
  const at = resolver.resolve(expiring.secret);
  t.notOk(isPromise(at), 'at its expiresAt: still the cached entry, answered synchronously');
  t.same(at, { ok: false, kind: 'api_key', reason: 'expired_key' }, 'refused with its own reason');
  t.equal(reads.keys, 2, 'no store read, and no store write, made it so');
  t.match(resolver.resolve(lasting.secret), { ok: true }, 'the key without expiry lives on');

  // A replica that never cached it reads it from the store, and refuses it all the same.
  const fresh = createResolver({ store, cache: createCredentialCache(SETTINGS), tokens: undefined as never, environment: 'production', now });
  t.same(await fresh.resolve(expiring.secret), { ok: false, kind: 'api_key', reason: 'expired_key' });
  t.equal(reads.keys, 3);
  // With the cache off (every read from the store), the same.
  const uncached = createResolver({ store, cache: createCredentialCache({ ...SETTINGS, max: 0 }), tokens: undefined as never, environment: 'production', now });
  t.same(await uncached.resolve(expiring.secret), { ok: false, kind: 'api_key', reason: 'expired_key' });
});

t.test('resolveCached: an answer only from the cache or the shape, never a store read or a signature check', async (t) => {
  const { key, token, reads, resolver } = await fixture(t);
  t.equal(resolver.resolveCached(key.secret), undefined, 'a key not cached: no answer');
  t.equal(resolver.resolveCached(token), undefined, 'a token never verified: no answer');
  t.same(reads, { keys: 0, sessions: 0, verifications: 0 }, 'and nothing asked of the store or the signature');
  t.match(resolver.resolveCached('agk_production_short'), { ok: false, reason: 'malformed_key' }, 'a refusal by shape needs nothing');
  await resolver.resolve(key.secret);
  await resolver.resolve(token);
  t.match(resolver.resolveCached(key.secret), { ok: true, principal: { via: 'api_key', credentialId: key.id } }, 'cached: answered');
  t.match(resolver.resolveCached(token), { ok: true, principal: { via: 'jwt' } });
  t.same(reads, { keys: 1, sessions: 1, verifications: 1 }, 'each read once, by resolve()');
});

t.test('a cached key skips only its own checksum: a key differing in the checksum alone, or in its environment, is refused as before', async (t) => {
  const { key, resolver } = await fixture(t);
  t.match(await resolver.resolve(key.secret), { ok: true });
  t.match(resolver.resolve(key.secret), { ok: true }, 'the hit');
  // Same body, other checksum characters: another key's SHA-256, so never the cached one.
  for (const checksum of ['000000', key.secret.slice(-6).split('').reverse().join(''), 'zzzzzz']) {
    if (checksum === key.secret.slice(-6)) continue;
    t.match(resolver.resolve(key.secret.slice(0, -6) + checksum), { ok: false, reason: 'bad_checksum' });
  }
  // The cached key's own characters under the other environment's tag: checksum first, as ever.
  const otherTag = key.secret.replace('agk_live_', 'agk_test_');
  t.match(resolver.resolve(otherTag), { ok: false, reason: 'bad_checksum' });
  // A right checksum in the other environment: wrong_environment, with the cache holding this one.
  t.match(resolver.resolve(generateApiKey('sandbox', TAG).secret), { ok: false, reason: 'wrong_environment', environment: 'sandbox' });
});
