import { randomBytes, randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import type { Invalidation } from '../../src/store/invalidation.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import type { RedisInvalidationBus } from '../../src/store/redis/invalidation.js';
import { openRedisStorage, type OpenRedisStorageOptions, type RedisStorage } from '../../src/store/redis/store.js';
import { StoreUnavailable, type GatewayStore, type Revoked } from '../../src/store/store.js';
import { redisCommand, startRedis } from '../helpers/redis.js';
import { packId } from '../../src/store/redis/packing.js';
import { SHARD_TAG_LENGTH, shardTagOf } from '../../src/store/shard-tag.js';
import { newResetToken } from '../../src/credentials/reset-tokens.js';
import { found, newApiKey, newOrganization, newSession, pollUntil, storeContract } from './store-contract.js';
import { organizationIndexKeys } from '../../src/store/redis/organization-index.js';

const PREFIX = 'authgate-test:';
const server = await startRedis();
t.teardown(() => server.stop());

type Options = Partial<OpenRedisStorageOptions>;

type Opened = RedisStorage & { heard: Invalidation[] };

/**
 * A storage on `url` (the shared server by default) in its own environment unless told, ready
 * to answer. `heard` records what its bus tells listeners, from before the first subscription.
 */
async function open(t: Test, options: Options = {}): Promise<Opened> {
  const storage = await openRedisStorage({
    url: server.url,
    prefix: PREFIX,
    environment: `env-${randomUUID()}`,
    commandTimeoutMs: 1000,
    invalidationHeartbeatMs: 200,
    ...options,
  });
  const heard: Invalidation[] = [];
  storage.bus.onInvalidation((invalidation) => heard.push(invalidation));
  t.teardown(() => storage.store.close());
  await pollUntil(10_000, () => storage.store.ping().then(() => true, () => false));
  return { ...storage, heard };
}

/** Resolves once the bus's subscription is live (it says 'all' then), and forgets that 'all'. */
async function subscribed(opened: Opened): Promise<void> {
  await pollUntil(10_000, () => opened.heard.includes('all'));
  opened.heard.length = 0;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('resolved, but should have failed'),
    (error: unknown) => error,
  );
}

/** A hash as an object of its fields, read on the shared server. */
async function hashOf(name: string): Promise<Record<string, string>> {
  const flat = (await redisCommand(server.port, 'HGETALL', name)) as string[];
  return Object.fromEntries(flat.flatMap((value, i) => (i % 2 === 0 ? [[value, flat[i + 1]!]] : [])));
}

function sha(): string {
  return randomBytes(32).toString('hex');
}

/** Every Store method with arguments, for the outage tests. */
function everyMethod(store: GatewayStore): [string, () => Promise<unknown>][] {
  const org = newOrganization();
  return [
    ['createOrganizationIfEmailFree', () => store.createOrganizationIfEmailFree(org)],
    ['findOrganizationByEmail', () => store.findOrganizationByEmail(org.email)],
    ['findOrganizationById', () => store.findOrganizationById(org.id)],
    ['deleteOrganization', () => store.deleteOrganization(org.id)],
    ['createApiKey', () => store.createApiKey(newApiKey(org.id))],
    ['findApiKeyByHash', () => store.findApiKeyByHash(newApiKey(org.id).hash)],
    ['listApiKeys', () => store.listApiKeys(org.id)],
    ['findApiKeySummary', () => store.findApiKeySummary(org.id, randomUUID())],
    ['changeApiKey', () => store.changeApiKey(org.id, randomUUID(), { name: 'x' })],
    ['rollApiKey', () => store.rollApiKey(org.id, randomUUID(), { successor: newApiKey(org.id), rolledKeyEnds: 'now' })],
    ['pruneExpiredApiKeys', () => store.pruneExpiredApiKeys(org.id, Date.now())],
    ['recordApiKeyUse', () => store.recordApiKeyUse([{ orgId: org.id, keyId: randomUUID(), at: Date.now() }])],
    ['deleteApiKeyIfOwned', () => store.deleteApiKeyIfOwned(org.id, randomUUID())],
    ['createSession', () => store.createSession(newSession(org.id, 60_000))],
    ['findSession', () => store.findSession(newSession(org.id).id)],
    ['deleteSession', () => store.deleteSession(newSession(org.id).id)],
    ['countAttempt', () => store.countAttempt({ counters: [{ name: 'login:x', limit: 10 }], windowMs: 60_000, known: { set: 'login:x', member: '192.0.2.1', knownTtlMs: 60_000 } })],
    ['settleAttempt', () => store.settleAttempt({ reset: ['login:x'], giveBack: ['login:y'], remember: { set: 'login:x', member: '192.0.2.1', ttlMs: 60_000, max: 10 } })],
    ['readCounters', () => store.readCounters(['login:x'])],
    ['appendAuditEvents', () => store.appendAuditEvents([{ type: 'login.succeeded', at: Date.now(), actor: 'anonymous' }], { maxEvents: 10, maxAgeMs: 60_000 })],
    ['readAuditEvents', () => store.readAuditEvents({ limit: 10 })],
    ['readRateLimits', () => store.readRateLimits()],
    ['setRateLimit', () => store.setRateLimit({ kind: 'organization', orgId: org.id }, '600/60s')],
    ['dropRateLimits', () => store.dropRateLimits(org.id)],
    ['leaseRateBudget', () => store.leaseRateBudget({ credentialId: randomUUID(), orgId: org.id, limit: 100, windowMs: 60_000, want: 10, replica: 'a' })],
    ['replacePassword', () => store.replacePassword(org.id, 'x')],
    ['createPasswordReset', () => store.createPasswordReset({ orgId: org.id, tokenHash: newResetToken(org.id).tokenHash, expiresAt: Date.now() + 60_000 })],
    ['findPasswordReset', () => store.findPasswordReset(newResetToken(org.id).tokenHash)],
    ['consumePasswordReset', () => store.consumePasswordReset(org.id, newResetToken(org.id).tokenHash, 'x')],
    ['changeOrganizationProfile', () => store.changeOrganizationProfile(org.id, { name: 'x', email: 'x@example.com' })],
    ['ping', () => store.ping()],
  ];
}

t.test('the store contract', async (t) => {
  storeContract(t, async () => {
    const storage = await open(t);
    return { store: storage.store, close: () => storage.store.close() };
  });
});

t.test('key names: under the organization\'s or the e-mail\'s shard tag, the documented types, nothing left behind', async (t) => {
  t.throws(() => redisKeys('authgate:{x}:', 'production'), /must not contain/);
  t.throws(() => redisKeys('authgate:', ''), /must not be empty/);
  t.equal(redisKeys('authgate:', 'production').invalidationChannel, 'authgate:{production}:invalidations');
  t.equal(redisKeys('authgate:', 'production').shard('k3x').apiKeys, 'authgate:{production:k3x}:k');

  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const keys = redisKeys(PREFIX, environment);
  const org = newOrganization();
  const shard = keys.shard(shardTagOf(org.id));
  const packed = packId(org.id);
  t.equal(packed.length, 26, 'a generated id is packed to 26 characters');
  const key = newApiKey(org.id);
  const short = newSession(org.id, 300);
  await store.createOrganizationIfEmailFree(org);
  await store.createApiKey(key);
  await store.createSession(short);
  // Redis forgets the tag's session hash and the org's index with their last session (PX).
  await pollUntil(20_000, async () => (await redisCommand(server.port, 'EXISTS', shard.organizationSessions(packed))) === 0);
  t.equal(await redisCommand(server.port, 'HEXISTS', shard.sessions, short.id.slice(SHARD_TAG_LENGTH + 1)), 0, 'the short session went with its hash');
  const session = newSession(org.id);
  await store.createSession(session);

  const ours = async () =>
    ((await redisCommand(server.port, 'KEYS', `*${environment}*`)) as string[]).sort();
  const emailClaim = keys.shard(shardTagOf(org.email)).emailClaim(org.email);
  const listing = organizationIndexKeys(keys);
  t.strictSame(
    await ours(),
    [shard.organization(packed), emailClaim, shard.apiKeys, shard.sessions, shard.organizationSessions(packed), listing.byEmail, listing.byName].sort(),
  );
  for (const name of await ours()) t.match(name, new RegExp(`^${PREFIX}\\{${environment}:[0-9a-z]{3}\\}:`), name);
  const types = Object.fromEntries(
    await Promise.all((await ours()).map(async (name) => [name, await redisCommand(server.port, 'TYPE', name)])),
  );
  t.strictSame(types, {
    [shard.organization(packed)]: 'hash',
    [emailClaim]: 'string',
    [shard.apiKeys]: 'hash',
    [shard.sessions]: 'hash',
    [shard.organizationSessions(packed)]: 'zset',
    [listing.byEmail]: 'zset',
    [listing.byName]: 'zset',
  });
  t.equal(await redisCommand(server.port, 'OBJECT', 'ENCODING', shard.apiKeys), 'listpack', 'small hashes stay in the compact encoding');
  t.match(await redisCommand(server.port, 'HGET', shard.organization(packed), `k:${packId(key.id)}`), new RegExp(`^${key.hash.slice(SHARD_TAG_LENGTH + 1)}[0-9a-z]+ ${key.displayPrefix}$`), 'the key\'s index entry is a field of its organization\'s record');
  t.equal(await redisCommand(server.port, 'OBJECT', 'ENCODING', shard.sessions), 'listpack');
  t.equal(await redisCommand(server.port, 'HGET', shard.apiKeys, key.hash.slice(SHARD_TAG_LENGTH + 1)), `${packed} ${packId(key.id)}`, 'the hot path\'s record: owner and key id');
  for (const name of [shard.sessions, shard.organizationSessions(packed)]) {
    const pttl = Number(await redisCommand(server.port, 'PTTL', name));
    t.ok(pttl > 3_500_000 && pttl <= 3_600_000, `${name} lives as long as its last session: ${pttl} ms`);
  }
  t.strictSame(await redisCommand(server.port, 'ZRANGE', shard.organizationSessions(packed), 0, -1), [session.id.slice(SHARD_TAG_LENGTH + 1)]);
  t.equal(await redisCommand(server.port, 'PTTL', shard.apiKeys), -1, 'API keys do not expire');

  await store.deleteOrganization(org.id);
  t.strictSame(await ours(), [], 'deleting the organization leaves no key behind');
});

t.test('a key with a name and an expiry: expiresAt appended to the hot-path value (still a listpack), both in the index entry, name last', async (t) => {
  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const org = newOrganization();
  const shard = redisKeys(PREFIX, environment).shard(shardTagOf(org.id));
  const packed = packId(org.id);
  await store.createOrganizationIfEmailFree(org);
  const expiresAt = Date.parse('2027-03-01T12:00:00.000Z');
  const key = { ...newApiKey(org.id), name: 'deploy key  two', expiresAt };
  const onlyExpiry = { ...newApiKey(org.id), expiresAt };
  const onlyName = { ...newApiKey(org.id), name: 'n' };
  for (const k of [key, onlyExpiry, onlyName]) t.equal(await store.createApiKey(k), 'created');
  const value = (k: { hash: string }) => redisCommand(server.port, 'HGET', shard.apiKeys, k.hash.slice(SHARD_TAG_LENGTH + 1));
  const entry = (k: { id: string }) => redisCommand(server.port, 'HGET', shard.organization(packed), `k:${packId(k.id)}`);
  const hot = await value(key);
  t.equal(hot, `${packed} ${packId(key.id)} ${expiresAt.toString(36)}`, 'owner, key id, expiresAt in base 36');
  t.ok(Buffer.byteLength(String(hot)) <= 64, `at most 64 bytes (${String(hot).length})`);
  t.equal(await value(onlyName), `${packed} ${packId(onlyName.id)}`, 'no expiry: the value is as before');
  t.equal(await redisCommand(server.port, 'OBJECT', 'ENCODING', shard.apiKeys), 'listpack');
  const digest = (k: { hash: string }) => k.hash.slice(SHARD_TAG_LENGTH + 1);
  t.match(await entry(key), new RegExp(`^${digest(key)}[0-9a-z]+ ${key.displayPrefix} ${expiresAt.toString(36)} deploy key  two$`));
  t.match(await entry(onlyExpiry), new RegExp(`^${digest(onlyExpiry)}[0-9a-z]+ ${onlyExpiry.displayPrefix} ${expiresAt.toString(36)}$`));
  t.match(await entry(onlyName), new RegExp(`^${digest(onlyName)}[0-9a-z]+ ${onlyName.displayPrefix} - n$`));
  t.strictSame(await store.findApiKeyByHash(key.hash), found(key));
  // The scripts read the digest (the entry's first 22 characters) only.
  t.strictSame(await store.deleteApiKeyIfOwned(org.id, key.id), { kind: 'api_key', cacheKey: key.hash });
  t.equal(await value(key), null, 'its hot-path value went with it');
  t.equal((await store.deleteOrganization(org.id))?.length, 3, 'its keys and the organization itself');
  t.equal(await value(onlyExpiry), null);
  t.equal(await value(onlyName), null);
});

t.test('a key with a list of scopes: the five original names as their bit set in base 36 (the longest value exactly 64 bytes, still a listpack), any other names spelled out after ~; its last use a field of the record', async (t) => {
  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const org = newOrganization();
  const shard = redisKeys(PREFIX, environment).shard(shardTagOf(org.id));
  const packed = packId(org.id);
  await store.createOrganizationIfEmailFree(org);
  const expiresAt = Date.parse('2027-03-01T12:00:00.000Z');
  // Bits of LEGACY_SCOPES: accounts:read 1, keys:write 16; organization:read 4.
  const longest = { ...newApiKey(org.id), name: 'ops', expiresAt, scopes: ['keys:write', 'accounts:read'] };
  const onlyScopes = { ...newApiKey(org.id), scopes: ['organization:read'] };
  for (const k of [longest, onlyScopes]) t.equal(await store.createApiKey(k), 'created');
  const digest = (k: { hash: string }) => k.hash.slice(SHARD_TAG_LENGTH + 1);
  const value = (k: { hash: string }) => redisCommand(server.port, 'HGET', shard.apiKeys, digest(k));
  const entry = (k: { id: string }) => redisCommand(server.port, 'HGET', shard.organization(packed), `k:${packId(k.id)}`);
  const hot = String(await value(longest));
  t.equal(hot, `${packed} ${packId(longest.id)} ${expiresAt.toString(36)}/h`);
  t.equal(Buffer.byteLength(hot), 64, 'exactly the listpack limit');
  t.equal(await value(onlyScopes), `${packed} ${packId(onlyScopes.id)} -/4`, 'no expiry: - before the set');
  t.equal(await redisCommand(server.port, 'OBJECT', 'ENCODING', shard.apiKeys), 'listpack');
  t.match(await entry(longest), new RegExp(`^${digest(longest)}[0-9a-z]+ ${longest.displayPrefix} ${expiresAt.toString(36)}/h ops$`));
  t.match(await entry(onlyScopes), new RegExp(`^${digest(onlyScopes)}[0-9a-z]+ ${onlyScopes.displayPrefix} -/4$`));
  await store.recordApiKeyUse([{ orgId: org.id, keyId: longest.id, at: 1_800_000_000_000 }]);
  t.equal(await redisCommand(server.port, 'HGET', shard.organization(packed), `u:${packId(longest.id)}`), (1_800_000_000_000).toString(36), 'u:<packed key id> → the use in base 36');

  // The operator's names are spelled out, sorted: 56 bytes and their length (63 with an expiry). Past 64 bytes the
  // tag's hash is a hash table from then on (docs/redis-layout.md, "Memory").
  const operators = { ...newApiKey(org.id), name: 'reports', scopes: ['reports:read', 'invoices:read'] };
  t.equal(await store.createApiKey(operators), 'created');
  const spelled = String(await value(operators));
  t.equal(spelled, `${packed} ${packId(operators.id)} -~invoices:read,reports:read`);
  t.equal(Buffer.byteLength(spelled), 56 + 'invoices:read,reports:read'.length);
  t.equal(await redisCommand(server.port, 'OBJECT', 'ENCODING', shard.apiKeys), 'hashtable', 'a value over 64 bytes: the hash is a hash table');
  t.match(await entry(operators), new RegExp(`^${digest(operators)}[0-9a-z]+ ${operators.displayPrefix} -~invoices:read,reports:read reports$`));
  t.strictSame(await store.findApiKeyByHash(operators.hash), found(operators));

  t.strictSame(await store.deleteApiKeyIfOwned(org.id, longest.id), { kind: 'api_key', cacheKey: longest.hash });
  t.equal(await redisCommand(server.port, 'HEXISTS', shard.organization(packed), `u:${packId(longest.id)}`), 0, 'its use went with it');
  await store.deleteOrganization(org.id);
});

t.test('a key written before scopes were names (its set of the five original scopes in base 36) is read, listed, narrowed and rolled by name', async (t) => {
  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const org = newOrganization();
  const shard = redisKeys(PREFIX, environment).shard(shardTagOf(org.id));
  const packed = packId(org.id);
  await store.createOrganizationIfEmailFree(org);
  // Written as the store before this change wrote it (replies.ts, before issue 28), byte for
  // byte: accounts:read (1) + accounts:write (2) + keys:read (8) = 11 = 'b'; and one with an expiry.
  const legacy = newApiKey(org.id, '2024-01-01T00:00:00.000Z');
  const expiring = newApiKey(org.id, '2024-01-02T00:00:00.000Z');
  const end = Date.parse('2099-01-01T00:00:00.000Z');
  const digest = (k: { hash: string }) => k.hash.slice(SHARD_TAG_LENGTH + 1);
  const head = (k: { hash: string; createdAt: string; displayPrefix: string }) => `${digest(k)}${Date.parse(k.createdAt).toString(36)} ${k.displayPrefix}`;
  await redisCommand(server.port, 'HSET', shard.apiKeys, digest(legacy), `${packed} ${packId(legacy.id)} -/b`);
  await redisCommand(server.port, 'HSET', shard.organization(packed), `k:${packId(legacy.id)}`, `${head(legacy)} -/b legacy key`);
  await redisCommand(server.port, 'HSET', shard.apiKeys, digest(expiring), `${packed} ${packId(expiring.id)} ${end.toString(36)}/4`);
  await redisCommand(server.port, 'HSET', shard.organization(packed), `k:${packId(expiring.id)}`, `${head(expiring)} ${end.toString(36)}/4`);

  t.strictSame(await store.findApiKeyByHash(legacy.hash), { id: legacy.id, orgId: org.id, hash: legacy.hash, scopes: ['accounts:read', 'accounts:write', 'keys:read'] }, 'the hot path reads the names');
  t.strictSame(await store.findApiKeyByHash(expiring.hash), { id: expiring.id, orgId: org.id, hash: expiring.hash, expiresAt: end, scopes: ['organization:read'] });
  t.match(await store.listApiKeys(org.id), [
    { id: expiring.id, expiresAt: end, scopes: ['organization:read'] },
    { id: legacy.id, name: 'legacy key', scopes: ['accounts:read', 'accounts:write', 'keys:read'] },
  ], 'listed by the same names');

  t.equal(await store.changeApiKey(org.id, legacy.id, { scopes: ['keys:write'] }), 'scopes-wider', 'the Lua check reads the bit set by name');
  t.equal(await store.changeApiKey(org.id, legacy.id, { scopes: ['invoices:read'] }), 'scopes-wider');
  const changed = await store.changeApiKey(org.id, legacy.id, { scopes: ['keys:read', 'accounts:read'] });
  t.match(changed, { key: { scopes: ['accounts:read', 'keys:read'], name: 'legacy key' }, revoked: { kind: 'api_key', cacheKey: legacy.hash } }, 'narrowed by name');
  t.equal(await redisCommand(server.port, 'HGET', shard.apiKeys, digest(legacy)), `${packed} ${packId(legacy.id)} -/9`, 'still the short form: 1 + 8');
  const renamed = await store.changeApiKey(org.id, expiring.id, { name: 'renamed' });
  t.match(renamed, { key: { scopes: ['organization:read'], name: 'renamed' }, revoked: undefined }, 'a rename keeps the set as it was written');

  const { orgId: _o, name: _n, scopes: _s, ...successor } = newApiKey(org.id, '2024-02-01T00:00:00.000Z');
  const rolled = await store.rollApiKey(org.id, legacy.id, { successor, rolledKeyEnds: 'now' });
  t.match(rolled, { successor: { id: successor.id, name: 'legacy key', scopes: ['accounts:read', 'keys:read'] } }, 'a roll copies the names');
  t.strictSame((await store.findApiKeyByHash(successor.hash))?.scopes, ['accounts:read', 'keys:read']);
  await store.deleteOrganization(org.id);
});

t.test('an e-mail claim and its organization are two steps: a crash between them leaves nothing wrong', async (t) => {
  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const keys = redisKeys(PREFIX, environment);
  const claimOf = (email: string) => keys.shard(shardTagOf(email)).emailClaim(email);

  // A sign-up cut off after writing the organization, before claiming the e-mail: an
  // organization nobody can reach, and the e-mail free.
  const orphan = newOrganization();
  await store.createOrganizationIfEmailFree(orphan);
  await redisCommand(server.port, 'DEL', claimOf(orphan.email));
  t.equal(await store.findOrganizationByEmail(orphan.email), undefined, 'no login reaches it');
  const next = newOrganization({ email: orphan.email });
  t.strictSame(await store.createOrganizationIfEmailFree(next), next, 'the e-mail is free');
  t.strictSame(await store.findOrganizationByEmail(orphan.email), next);

  // A deletion cut off after its script, before releasing the claim: the claim names a gone
  // organization; it finds nothing, and the next sign-up with the e-mail takes it over.
  const gone = newOrganization();
  await store.createOrganizationIfEmailFree(gone);
  const key = newApiKey(gone.id);
  await store.createApiKey(key);
  // What the deletion's script does, without the release that follows it.
  const shard = keys.shard(shardTagOf(gone.id));
  await redisCommand(server.port, 'DEL', shard.organization(packId(gone.id)));
  await redisCommand(server.port, 'HDEL', shard.apiKeys, key.hash.slice(SHARD_TAG_LENGTH + 1));
  t.equal(await redisCommand(server.port, 'GET', claimOf(gone.email)), gone.id, 'the claim is left behind');
  t.equal(await store.findOrganizationByEmail(gone.email), undefined, 'a claim without its organization finds nothing');
  const rivals = [newOrganization({ email: gone.email }), newOrganization({ email: gone.email }), newOrganization({ email: gone.email })];
  const results = await Promise.all(rivals.map((org) => store.createOrganizationIfEmailFree(org)));
  t.equal(results.filter((result) => result !== 'email-taken').length, 1, 'racing sign-ups repair it once: exactly one wins');
  const winner = rivals[results.findIndex((result) => result !== 'email-taken')]!;
  t.strictSame(await store.findOrganizationByEmail(gone.email), winner);
  for (const rival of rivals) if (rival !== winner) t.equal(await store.findOrganizationById(rival.id), undefined, 'the losers wrote nothing that stays');

  // A release that comes late (the old deletion finishing now) does not free the new claim.
  t.equal(await store.deleteOrganization(gone.id), undefined);
  t.equal(await redisCommand(server.port, 'GET', claimOf(gone.email)), winner.id, 'the new claim stands');
});

t.test('two storages on one server see each other\'s writes', async (t) => {
  const environment = `env-${randomUUID()}`;
  const a = await open(t, { environment });
  const b = await open(t, { environment });
  const org = newOrganization();
  const key = newApiKey(org.id);
  await a.store.createOrganizationIfEmailFree(org);
  await a.store.createApiKey(key);
  t.strictSame(await b.store.findOrganizationByEmail(org.email), org);
  t.strictSame(await b.store.findApiKeyByHash(key.hash), found(key));
  t.strictSame(await b.store.deleteApiKeyIfOwned(org.id, key.id), { kind: 'api_key', cacheKey: key.hash });
  t.equal(await a.store.findApiKeyByHash(key.hash), undefined);

  const elsewhere = await open(t);
  t.equal(await elsewhere.store.findOrganizationByEmail(org.email), undefined, 'another environment sees nothing');
});

t.test('the invalidation bus', async (t) => {
  const environment = `env-${randomUUID()}`;
  const channel = redisKeys(PREFIX, environment).invalidationChannel;
  const a = await open(t, { environment });
  const b = await open(t, { environment });
  await Promise.all([subscribed(a), subscribed(b)]);
  t.ok(a.bus.subscribed && b.bus.subscribed, 'both say they are subscribed once SUBSCRIBE was answered');
  const { heard: heardA } = a;
  const { heard: heardB } = b;

  const wire: string[] = [];
  const spy = new Redis(server.port, '127.0.0.1');
  t.teardown(() => spy.disconnect());
  spy.on('message', (_: string, message: string) => wire.push(message));
  await spy.subscribe(channel);

  const org = newOrganization();
  const key = newApiKey(org.id);
  await a.store.createOrganizationIfEmailFree(org);
  await a.store.createApiKey(key);
  // Issue 45: the creation is announced too (a replica that remembers the key as unknown forgets it).
  await pollUntil(20_000, () => heardB.length > 0 && wire.some((text) => text.includes('"created":true')));
  t.strictSame(heardB, [[{ kind: 'api_key', cacheKey: key.hash, created: true }]], 'B heard the creation');
  heardB.length = 0;
  wire.length = 0;
  const revoked = await a.store.deleteApiKeyIfOwned(org.id, key.id);
  t.strictSame(revoked, { kind: 'api_key', cacheKey: key.hash });
  await pollUntil(20_000, () => heardB.length > 0);
  t.strictSame(heardB, [[revoked]], "B's listeners heard the revocation A's store committed");
  t.strictSame(heardA, [], "A's store leaves A's own listeners to the caller…");
  a.bus.applyLocally([revoked!]);
  t.strictSame(heardA, [[revoked]], '…who tells them synchronously');

  await pollUntil(20_000, () => wire.length >= 5); // a few heartbeats and A's own echo
  t.strictSame(heardA, [[revoked]], 'A ignored its own echo, and heartbeats told nobody anything');
  t.strictSame(heardB, [[revoked]]);

  const sent = wire.map((text) => JSON.parse(text) as { origin: string; seq: number; revoked: Revoked[] });
  const carrying = sent.filter((message) => message.revoked.length > 0);
  t.equal(carrying.length, 1);
  t.strictSame(Object.keys(carrying[0] ?? {}).sort(), ['at', 'origin', 'revoked', 'seq'], 'only an origin, a seq, when it was handed out and what was revoked');
  const at = (carrying[0] as { at?: unknown } | undefined)?.at;
  t.ok(typeof at === 'number' && Math.abs(at - Date.now()) < 60_000, `at: the sender's clock in epoch ms (${String(at)})`);
  t.strictSame(carrying[0]?.revoked, [revoked]);
  for (const origin of new Set(sent.map((message) => message.origin))) {
    const seqs = sent.filter((message) => message.origin === origin).map((message) => message.seq).sort((x, y) => x - y);
    t.strictSame(seqs, seqs.map((_, i) => seqs[0]! + i), 'scripts and heartbeats share one gapless sequence per origin');
  }

  heardB.length = 0;
  for (const garbage of [
    'not json',
    '[]',
    JSON.stringify({ origin: 'someone', seq: 1, revoked: [{ kind: 'password', cacheKey: 'x' }] }),
    JSON.stringify({ origin: 'someone', seq: 1, revoked: [{ kind: 'session' }] }),
    JSON.stringify({ origin: 'someone', revoked: [] }),
  ]) {
    await redisCommand(server.port, 'PUBLISH', channel, garbage);
  }
  const fromPeer = (seq: number, cacheKey: string) =>
    JSON.stringify({ origin: 'peer', seq, revoked: [{ kind: 'session', cacheKey }] });
  await redisCommand(server.port, 'PUBLISH', channel, fromPeer(1, 's1'));
  await pollUntil(20_000, () => heardB.length > 0);
  t.strictSame(heardB, [[{ kind: 'session', cacheKey: 's1' }]], 'garbage ignored, a well-formed message heard');

  heardB.length = 0;
  await redisCommand(server.port, 'PUBLISH', channel, fromPeer(3, 's3'));
  await pollUntil(20_000, () => heardB.length >= 2);
  t.strictSame(heardB, [[{ kind: 'session', cacheKey: 's3' }], 'all'], 'a gap in a peer\'s seq clears everything');
});

t.test('a revocation and its announcement are one step: the PUBLISH runs inside the script, before its writes', async (t) => {
  const environment = `env-${randomUUID()}`;
  const keys = redisKeys(PREFIX, environment);
  const a = await open(t, { environment, invalidationHeartbeatMs: 60_000 });
  const b = await open(t, { environment });
  await Promise.all([subscribed(a), subscribed(b)]);
  const org = newOrganization();
  const key = newApiKey(org.id);
  const session = newSession(org.id);
  const lastKey = newApiKey(org.id);
  await a.store.createOrganizationIfEmailFree(org);
  await a.store.createApiKey(key);
  await a.store.createApiKey(lastKey);
  await a.store.createSession(session);
  // Issue 45: the two creations were announced; what follows is about the revocations.
  await pollUntil(20_000, () => b.heard.length >= 2);
  b.heard.length = 0;

  // MONITOR shows every command in the order Redis ran it, those run by a script marked 'lua'.
  const client = new Redis(server.port, '127.0.0.1');
  const monitor = await client.monitor();
  t.teardown(() => {
    monitor.disconnect();
    client.disconnect();
  });
  const ran: { args: string[]; lua: boolean }[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => ran.push({ args, lua: source === 'lua' }));
  const marker = `marker-${randomUUID()}`;
  await redisCommand(server.port, 'ECHO', marker);
  await pollUntil(20_000, () => ran.some((r) => r.args[1] === marker));

  const revokedKey = await a.store.deleteApiKeyIfOwned(org.id, key.id);
  const revokedSession = await a.store.deleteSession(session.id);
  const revokedAll = await a.store.deleteOrganization(org.id);
  t.equal(await a.store.deleteApiKeyIfOwned(org.id, key.id), undefined, 'nothing left to revoke');
  await pollUntil(20_000, () => b.heard.length >= 3);
  t.strictSame(b.heard, [[revokedKey], [revokedSession], revokedAll], 'B heard each revocation, in order');

  const end = `marker-${randomUUID()}`;
  await redisCommand(server.port, 'ECHO', end);
  await pollUntil(20_000, () => ran.some((r) => r.args[1] === end));
  const steps = ran.slice(ran.findIndex((r) => r.args[1] === marker) + 1, ran.findIndex((r) => r.args[1] === end));
  const publishes = steps.filter((r) => r.args[0]?.toLowerCase() === 'publish');
  const revoking = publishes.filter((r) => /"revoked":\[\{/.test(r.args[2] ?? ''));
  t.equal(revoking.length, 3, 'three messages carried revocations');
  t.ok(revoking.every((r) => r.lua), 'each ran inside its script: there is no separate PUBLISH');
  t.equal(publishes.filter((r) => r.lua).length, 4, 'and the script that revoked nothing published too (B\'s heartbeats are the others)');
  const scripts = steps.filter((r) => !r.lua && /^eval/i.test(r.args[0] ?? ''));
  t.equal(scripts.length, 5, 'four revoking scripts ran, and the release of the e-mail claim after the organization\'s');
  const bodies = scripts.map((script) => {
    const body = steps.slice(steps.indexOf(script) + 1);
    const end = body.findIndex((r) => !r.lua);
    return body.slice(0, end === -1 ? body.length : end);
  });
  const revokingBodies = bodies.filter((own) => own.some((r) => r.args[0]?.toLowerCase() === 'publish'));
  t.equal(revokingBodies.length, 4, 'four scripts announced');
  for (const own of revokingBodies) {
    const names = own.map((r) => r.args[0]?.toLowerCase());
    t.equal(names.filter((n) => n === 'publish').length, 1, 'each script PUBLISHes exactly once');
    const writes = names.flatMap((n, i) => (n === 'del' || n === 'hdel' || n === 'zrem' ? [i] : []));
    t.ok(writes.every((i) => i > names.indexOf('publish')), `the PUBLISH comes before every write (${names.join(' ')})`);
  }
  const release = bodies.find((own) => !revokingBodies.includes(own))!;
  const emailClaim = keys.shard(shardTagOf(org.email)).emailClaim(org.email);
  t.ok(release.every((r) => r.args[1] === emailClaim), 'the other script touched only the e-mail claim');
  const apiKeys = keys.shard(shardTagOf(org.id)).apiKeys;
  t.ok(steps.some((r) => r.lua && r.args[0]?.toLowerCase() === 'hdel' && r.args[1] === apiKeys && r.args[2] === key.hash.slice(SHARD_TAG_LENGTH + 1)), 'the key record went in the same script');
});

t.test('a user that may not use the channel: never subscribed, and never revokes without announcing', async (t) => {
  const user = `nochan-${randomUUID().slice(0, 8)}`;
  await redisCommand(server.port, 'ACL', 'SETUSER', user, 'on', '>nochan-password', '~*', '+@all', 'resetchannels');
  t.teardown(() => redisCommand(server.port, 'ACL', 'DELUSER', user));
  const environment = `env-${randomUUID()}`;
  const keys = redisKeys(PREFIX, environment);
  const warnings: string[] = [];
  const logger = { warn: (_: object, msg: string) => warnings.push(msg), info: () => {} };
  const events: string[] = [];
  const storage = await open(t, { environment, username: user, password: 'nochan-password', logger });
  storage.bus.onSubscriptionChange((value) => events.push(`subscribed:${value}`));
  storage.bus.onInvalidation((invalidation) => events.push(invalidation === 'all' ? 'all' : 'revoked'));

  // Redis counts each refused SUBSCRIBE in its ACL log: wait for three.
  const refusals = async () => {
    const log = (await redisCommand(server.port, 'ACL', 'LOG')) as unknown[][];
    return log
      .map((entry) => Object.fromEntries(entry.flatMap((v, i, all) => (i % 2 === 0 ? [[String(v), all[i + 1]]] : []))))
      .filter((entry) => entry['username'] === user && entry['context'] === 'toplevel' && entry['reason'] === 'channel')
      .reduce((sum, entry) => sum + Number(entry['count']), 0);
  };
  await pollUntil(20_000, async () => (await refusals()) >= 3);
  t.equal(storage.bus.subscribed, false, 'not subscribed');
  t.equal(warnings.filter((w) => w.includes('could not subscribe')).length, 1, 'the refusal is logged once, not at each retry');

  const org = newOrganization();
  const key = newApiKey(org.id);
  t.strictSame(await storage.store.createOrganizationIfEmailFree(org), org, 'it may still write…');
  t.equal(await storage.store.createApiKey(key), 'created');
  t.strictSame(await storage.store.findApiKeyByHash(key.hash), found(key), '…and read');
  const error = await failure(storage.store.deleteApiKeyIfOwned(org.id, key.id));
  t.ok(error instanceof StoreUnavailable, 'a revocation it cannot announce fails…');
  t.strictSame(await storage.store.findApiKeyByHash(key.hash), found(key), '…and leaves the key in place: nothing committed unannounced');
  t.equal(await redisCommand(server.port, 'HEXISTS', keys.shard(shardTagOf(org.id)).apiKeys, key.hash.slice(SHARD_TAG_LENGTH + 1)), 1);

  events.length = 0;
  await redisCommand(server.port, 'ACL', 'SETUSER', user, 'allchannels');
  await pollUntil(20_000, () => storage.bus.subscribed);
  t.strictSame(events, ['all', 'subscribed:true'], 'once allowed it subscribes, clearing caches first');
  t.strictSame(await storage.store.deleteApiKeyIfOwned(org.id, key.id), { kind: 'api_key', cacheKey: key.hash }, 'and revokes');
});

t.test('rate limits: a change is announced to every replica from inside its script; the table and windows as documented', async (t) => {
  const environment = `env-${randomUUID()}`;
  const keys = redisKeys(PREFIX, environment);
  // a's clock an hour ahead: the windows go by Redis's clock, so it shares b's window all the same.
  const a = await open(t, { environment, now: () => Date.now() + 3_600_000 });
  const b = await open(t, { environment });
  await Promise.all([subscribed(a), subscribed(b)]);
  const [org, other] = [newOrganization().id, newOrganization().id];
  const keyId = `key_${randomBytes(16).toString('hex')}`;

  await a.store.setRateLimit({ kind: 'organization', orgId: org }, '600/60s');
  await a.store.setRateLimit({ kind: 'api_key', orgId: org, keyId }, '10/1s');
  await a.store.setRateLimit({ kind: 'organization', orgId: other }, 'off');
  await a.store.dropRateLimits(other);
  const announced = (orgId: string): Revoked[] => [{ kind: 'rate_limits', cacheKey: orgId }];
  await pollUntil(20_000, () => b.heard.length >= 4);
  t.strictSame(b.heard, [announced(org), announced(org), announced(other), announced(other)], 'b heard each change, with the organization\'s id, in order');
  t.strictSame(a.heard, [], 'a\'s own listeners are left to the caller (applyLocally)');
  t.strictSame((await b.store.readRateLimits()).organizations, new Map([[org, '600/60s']]), 'and reads the changed table');

  t.equal(keys.rateLimits, `${keys.shard(shardTagOf('limits')).base}l`, 'under the tag of the text `limits`');
  t.strictSame(await hashOf(keys.rateLimits), { [`o:${org}`]: '600/60s', [`k:${keyId}`]: `${org} 10/1s` }, 'o:<org> → limit, k:<key> → `<org> <limit>`');

  const lease = { credentialId: keyId, orgId: org, limit: 100, windowMs: 60_000, want: 100 };
  t.match(await a.store.leaseRateBudget({ ...lease, replica: 'a' }), { granted: 25, used: 25, replicas: 1 });
  t.match(await b.store.leaseRateBudget({ ...lease, replica: 'b' }), { granted: 19, used: 44, replicas: 2 }, 'one window for both, though a\'s clock is an hour ahead');
  const window = keys.shard(shardTagOf(org)).rateWindow(keyId);
  t.equal(window, `${keys.shard(shardTagOf(org)).base}r:${keyId}`, 'on the organization\'s shard');
  const fields = await hashOf(window);
  t.match(fields, { w: '60000', n: '44', 'p:a': '1', 'p:b': '1' });
  t.ok(Math.abs(Number(fields['s']) - Date.now()) < 60_000, `s: Redis's clock in epoch ms (${String(fields['s'])})`);
  const pttl = Number(await redisCommand(server.port, 'PTTL', window));
  t.ok(pttl > 0 && pttl <= 60_000, `PX: the window (${pttl} ms)`);

  await redisCommand(server.port, 'HSET', keys.rateLimits, 'x:junk', '1');
  t.ok((await failure(b.store.readRateLimits())) instanceof StoreUnavailable, 'a malformed table is an error, not a half-read one');
  await redisCommand(server.port, 'HDEL', keys.rateLimits, 'x:junk');
  await redisCommand(server.port, 'HSET', keys.rateLimits, `k:${keyId}`, 'no-limit-part');
  t.ok((await failure(b.store.readRateLimits())) instanceof StoreUnavailable, 'so is a key\'s value without its limit');
});

t.test('rate limits: a user that may not use the channel cannot change them (nothing written unannounced)', async (t) => {
  const user = `nochan-${randomUUID().slice(0, 8)}`;
  await redisCommand(server.port, 'ACL', 'SETUSER', user, 'on', '>nochan-password', '~*', '+@all', 'resetchannels');
  t.teardown(() => redisCommand(server.port, 'ACL', 'DELUSER', user));
  const environment = `env-${randomUUID()}`;
  const keys = redisKeys(PREFIX, environment);
  const storage = await open(t, { environment, username: user, password: 'nochan-password', logger: { warn: () => {}, info: () => {} } });
  const org = newOrganization().id;
  const keyId = `key_${randomBytes(16).toString('hex')}`;
  await redisCommand(server.port, 'HSET', keys.rateLimits, `o:${org}`, '600/60s', `k:${keyId}`, `${org} 10/1s`);

  t.ok((await failure(storage.store.setRateLimit({ kind: 'organization', orgId: org }, '1/1s'))) instanceof StoreUnavailable, 'a change it cannot announce fails…');
  t.ok((await failure(storage.store.setRateLimit({ kind: 'api_key', orgId: org, keyId: randomUUID() }, '1/1s'))) instanceof StoreUnavailable);
  t.ok((await failure(storage.store.dropRateLimits(org))) instanceof StoreUnavailable);
  t.strictSame(await hashOf(keys.rateLimits), { [`o:${org}`]: '600/60s', [`k:${keyId}`]: `${org} 10/1s` }, '…and wrote nothing');
  t.strictSame((await storage.store.readRateLimits()).organizations, new Map([[org, '600/60s']]), 'it may still read');
  t.match(await storage.store.leaseRateBudget({ credentialId: keyId, orgId: org, limit: 10, windowMs: 60_000, want: 1, replica: 'a' }), { granted: 1 }, 'and lease: leases announce nothing');
});

t.test('subscriber connection killed while the command connection lives: unsubscribed at once, back with a clear', async (t) => {
  const own = await startRedis();
  t.teardown(() => own.stop());
  const events: string[] = [];
  const storage = await open(t, { url: own.url });
  storage.bus.onSubscriptionChange((value) => events.push(`subscribed:${value}`));
  storage.bus.onInvalidation((invalidation) => events.push(invalidation === 'all' ? 'all' : 'revoked'));
  await pollUntil(10_000, () => storage.bus.subscribed);
  events.length = 0;

  await redisCommand(own.port, 'CLIENT', 'KILL', 'TYPE', 'pubsub');
  await pollUntil(10_000, () => events.includes('subscribed:false'));
  t.pass('the dropped subscriber connection made it unsubscribed');
  await pollUntil(10_000, () => storage.bus.subscribed);
  t.strictSame(events, ['subscribed:false', 'all', 'subscribed:true'], 'resubscribed: caches cleared, then trusted again');
  await storage.store.ping();
});

t.test('a revoking script whose caller got an error is applied locally from its own echo', async (t) => {
  const environment = `env-${randomUUID()}`;
  const channel = redisKeys(PREFIX, environment).invalidationChannel;
  // No heartbeat in between: the sequence below is all this bus sends.
  const a = await open(t, { environment, invalidationHeartbeatMs: 60_000 });
  await subscribed(a);
  const bus = a.bus as RedisInvalidationBus;
  const publish = (text: string) => redisCommand(server.port, 'PUBLISH', channel, text);
  /** Messages reach the subscriber in order: once a peer's marker is heard, everything before it was. */
  const drained = async () => {
    const marker = randomUUID();
    await publish(JSON.stringify({ origin: `marker-${marker}`, seq: 1, revoked: [{ kind: 'session', cacheKey: marker }] }));
    const isMarker = (i: Invalidation) => i !== 'all' && i[0]?.cacheKey === marker;
    await pollUntil(20_000, () => a.heard.some(isMarker));
    a.heard.splice(a.heard.findIndex(isMarker), 1);
  };
  const item = (): Revoked => ({ kind: 'api_key', cacheKey: sha() });

  // The script ran (its message went out) but its answer never reached the caller: echo first…
  const first = bus.nextMessage();
  const one = item();
  await publish(`${first.head}[${JSON.stringify(one)}]}`);
  await drained();
  t.strictSame(a.heard, [], 'an echo of a script still running is held back');
  first.settle(false);
  t.strictSame(a.heard, [[one]], 'echo, then the error: applied at the error');

  // …or the error first, then the echo.
  a.heard.length = 0;
  const second = bus.nextMessage();
  const two = item();
  second.settle(false);
  await publish(`${second.head}[${JSON.stringify(two)}]}`);
  await pollUntil(20_000, () => a.heard.length > 0);
  t.strictSame(a.heard, [[two]], 'the error, then the echo: applied at the echo');

  // Answered in time: the caller applies it; the echo is not applied twice.
  a.heard.length = 0;
  const third = bus.nextMessage();
  third.settle(true);
  await publish(`${third.head}[${JSON.stringify(item())}]}`);
  const fourth = bus.nextMessage();
  await publish(`${fourth.head}[]}`);
  fourth.settle(true);
  await drained();
  t.strictSame(a.heard, [], 'an answered script is not applied again, and our own sequence shows no gap');
});

t.test('maxmemory-policy: anything but noeviction is reported', async (t) => {
  const lru = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
  t.teardown(() => lru.stop());
  const risky: string[] = [];
  await open(t, { url: lru.url, onEvictionRisk: (policy) => risky.push(policy) });
  await pollUntil(20_000, () => risky.length > 0);
  t.strictSame(risky, ['allkeys-lru']);

  const safe: string[] = [];
  const warnings: string[] = [];
  const logger = { warn: (_: object, msg: string) => warnings.push(msg), info: () => {} };
  await open(t, { onEvictionRisk: (policy) => safe.push(policy), logger });
  // The same check reports appendonly off on this server: once that is logged, it has run.
  await pollUntil(20_000, () => warnings.some((msg) => msg.includes('appendonly')));
  t.strictSame(safe, [], 'noeviction is not reported');
});

t.test('Redis killed: every method fails fast with StoreUnavailable; back after restart', async (t) => {
  const own = await startRedis();
  t.teardown(() => own.stop());
  const environment = `env-${randomUUID()}`;
  const lost: number[] = [];
  const mine = await open(t, {
    url: own.url,
    environment,
    commandTimeoutMs: 500,
    onSubscriptionLost: () => lost.push(Date.now()),
  });
  const other = await open(t, { url: own.url, environment, commandTimeoutMs: 500 });
  await Promise.all([subscribed(mine), subscribed(other)]);
  const { store, bus, heard } = mine;
  const heardByOther = other.heard;

  await own.kill();
  await checkEveryMethodFails(t, store, 500);
  const revoked: Revoked[] = [{ kind: 'api_key', cacheKey: sha() }];
  bus.applyLocally(revoked);
  t.strictSame(heard, [revoked], 'applied locally even though Redis is down');
  await pollUntil(20_000, () => lost.length > 0);
  t.pass('onSubscriptionLost was called');
  t.equal(bus.subscribed, false, 'not subscribed while Redis is down');

  heard.length = 0;
  heardByOther.length = 0;
  await own.restart();
  const started = Date.now();
  await pollUntil(10_000, () => store.ping().then(() => true, () => false));
  t.ok(Date.now() - started < 10_000, `answering again ${Date.now() - started} ms after the restart`);
  const org = newOrganization();
  t.strictSame(await store.createOrganizationIfEmailFree(org), org);
  await pollUntil(10_000, () => heard.includes('all') && heardByOther.includes('all'));
  t.pass('both buses told their listeners to clear everything after resubscribing');
  t.ok(bus.subscribed && other.bus.subscribed, 'and both are subscribed again');

  heardByOther.length = 0;
  const session = newSession(org.id, 60_000);
  t.equal(await store.createSession(session), 'created');
  t.strictSame(await store.deleteSession(session.id), { kind: 'session', cacheKey: session.id });
  await pollUntil(20_000, () => heardByOther.some((i) => i !== 'all' && i[0]?.cacheKey === session.id));
  t.pass('revocations travel again');
});

t.test('Redis hung (SIGSTOP): every method gives up with StoreUnavailable in time', async (t) => {
  const own = await startRedis();
  t.teardown(() => own.stop());
  const { store } = await open(t, { url: own.url, commandTimeoutMs: 300 });
  own.pause();
  await checkEveryMethodFails(t, store, 300);
  own.resume();
  await pollUntil(20_000, () => store.ping().then(() => true, () => false));
  const org = newOrganization();
  t.strictSame(await store.createOrganizationIfEmailFree(org), org, 'works again once Redis answers');
});

t.test('appendonly yes: credentials survive a crash and restart', async (t) => {
  // appendfsync always, as docs/redis-layout.md advises: with everysec a crash may lose the last
  // second of writes, and a lost write may be a revocation.
  const own = await startRedis({ appendonly: true, args: ['--appendfsync', 'always'] });
  t.teardown(() => own.stop());
  const { store } = await open(t, { url: own.url });
  const org = newOrganization();
  const key = newApiKey(org.id);
  const session = newSession(org.id);
  t.strictSame(await store.createOrganizationIfEmailFree(org), org);
  t.equal(await store.createApiKey(key), 'created');
  t.equal(await store.createSession(session), 'created');

  await own.kill();
  await own.restart();
  await pollUntil(10_000, () => store.ping().then(() => true, () => false));
  t.strictSame(await store.findOrganizationByEmail(org.email), org);
  t.strictSame(await store.findApiKeyByHash(key.hash), found(key));
  t.strictSame(await store.findSession(session.id), session);
  t.strictSame(await store.listApiKeys(org.id), [{ id: key.id, displayPrefix: key.displayPrefix, createdAt: key.createdAt }]);
});

async function checkEveryMethodFails(t: Test, store: GatewayStore, commandTimeoutMs: number): Promise<void> {
  for (const [name, call] of everyMethod(store)) {
    const started = Date.now();
    const error = await failure(call());
    const took = Date.now() - started;
    t.ok(error instanceof StoreUnavailable, `${name} throws StoreUnavailable`);
    // A liveness bound, not a speed check: without the guard a call to a hung Redis never ends;
    // the margin is for a loaded machine, where timers fire late.
    t.ok(took <= commandTimeoutMs + 5_000, `${name} gave up after ${took} ms`);
  }
}

t.test('login limit keys: the e-mail\'s counters together, the address\'s apart, with the window; the known set bounded in time', async (t) => {
  const { createLoginThrottle, DEFAULT_LIMITS, KNOWN_ADDRESS_TTL_MS } = await import('../../src/guards/login-throttle.js');
  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const keys = redisKeys(PREFIX, environment);
  const throttle = createLoginThrottle(store);
  await (await throttle.attempt('owner@example.com', '192.0.2.1')).succeeded();
  await throttle.attempt('owner@example.com', '2001:db8:1:2::/64');

  const names = ((await redisCommand(server.port, 'KEYS', `*${environment}*`)) as string[]).sort();
  t.ok(names.length > 0);
  const tagOf = (name: string) => /^[^{]*\{[^:]*:([0-9a-z]{3})\}:/.exec(name)?.[1];
  for (const name of names) {
    t.ok(name.startsWith(keys.environmentBase) && tagOf(name) !== undefined, `${name} is under a shard tag of the environment`);
    const type = await redisCommand(server.port, 'TYPE', name);
    const pttl = Number(await redisCommand(server.port, 'PTTL', name));
    t.notOk(name.includes('owner@example.com'), 'the e-mail is not in key names');
    if (name.includes('}:c:login:')) {
      t.equal(type, 'string', name);
      t.ok(pttl > 0 && pttl <= DEFAULT_LIMITS.windowSeconds * 1000, `${name}: PTTL ${pttl}`);
      const placement = /\{([^}]+)\}[^{}]*$/.exec(name)![1]!;
      t.equal(tagOf(name), shardTagOf(placement), `${name} is placed by the text in its braces`);
    } else {
      t.ok(name.includes('}:n:login:'), `${name} is a known-address set`);
      t.equal(type, 'zset', name);
      t.ok(pttl > KNOWN_ADDRESS_TTL_MS - 60_000 && pttl <= KNOWN_ADDRESS_TTL_MS, `${name}: PTTL ${pttl}`);
      t.strictSame(await redisCommand(server.port, 'ZRANGE', name, '0', '-1'), ['192.0.2.1']);
    }
  }
  t.equal(names.filter((name) => name.includes('}:n:')).length, 1, 'one known set');
  const emailTags = new Set(names.filter((name) => !name.includes(':addr:')).map(tagOf));
  t.equal(emailTags.size, 1, 'the pair, e-mail and known-set keys share the e-mail\'s tag: one atomic step');
  t.ok(names.some((name) => name.includes(':addr:') && !emailTags.has(tagOf(name))), 'an address counter is placed by the address');
});
