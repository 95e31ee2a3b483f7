import { randomBytes, randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import type { Invalidation } from '../../src/store/invalidation.js';
import { redisKeys } from '../../src/store/redis-keys.js';
import { openRedisStorage, type OpenRedisStorageOptions, type RedisStorage } from '../../src/store/redis-store.js';
import { StoreUnavailable, type CounterStore, type Revoked, type Store } from '../../src/store/store.js';
import { redisCommand, startRedis } from '../helpers/redis.js';
import { newApiKey, newOrganization, pollUntil, storeContract } from './store-contract.js';

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

function sha(): string {
  return randomBytes(32).toString('hex');
}

/** Every Store method with arguments, for the outage tests. */
function everyMethod(store: Store & CounterStore): [string, () => Promise<unknown>][] {
  const org = newOrganization();
  return [
    ['createOrganizationIfEmailFree', () => store.createOrganizationIfEmailFree(org)],
    ['findOrganizationByEmail', () => store.findOrganizationByEmail(org.email)],
    ['findOrganizationById', () => store.findOrganizationById(org.id)],
    ['deleteOrganization', () => store.deleteOrganization(org.id)],
    ['createApiKey', () => store.createApiKey(newApiKey(org.id))],
    ['findApiKeyByHash', () => store.findApiKeyByHash(sha())],
    ['listApiKeys', () => store.listApiKeys(org.id)],
    ['deleteApiKeyIfOwned', () => store.deleteApiKeyIfOwned(org.id, randomUUID())],
    ['createSession', () => store.createSession({ id: randomUUID(), orgId: org.id, expiresAt: Date.now() + 60_000 })],
    ['findSession', () => store.findSession(randomUUID())],
    ['deleteSession', () => store.deleteSession(randomUUID())],
    ['countAttempt', () => store.countAttempt({ counters: [{ name: 'login:x', limit: 10 }], windowMs: 60_000, known: { set: 'login:x', member: '192.0.2.1', knownTtlMs: 60_000 } })],
    ['settleAttempt', () => store.settleAttempt({ reset: ['login:x'], giveBack: ['login:y'], remember: { set: 'login:x', member: '192.0.2.1', ttlMs: 60_000, max: 10 } })],
    ['readCounters', () => store.readCounters(['login:x'])],
    ['ping', () => store.ping()],
  ];
}

t.test('the store contract', async (t) => {
  storeContract(t, async () => {
    const storage = await open(t);
    return { store: storage.store, close: () => storage.store.close() };
  });
});

t.test('key names: one hash tag per environment, the documented types, nothing left behind', async (t) => {
  t.throws(() => redisKeys('authgate:{x}:', 'production'), /must not contain/);
  t.throws(() => redisKeys('authgate:', ''), /must not be empty/);
  t.equal(redisKeys('authgate:', 'production').invalidationChannel, 'authgate:{production}:invalidations');

  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const keys = redisKeys(PREFIX, environment);
  const org = newOrganization();
  const key = newApiKey(org.id);
  const short = { id: randomUUID(), orgId: org.id, expiresAt: Date.now() + 300 };
  await store.createOrganizationIfEmailFree(org);
  await store.createApiKey(key);
  await store.createSession(short);
  // Redis itself forgets the session record (PX), not only the read path.
  await pollUntil(20_000, async () => (await redisCommand(server.port, 'EXISTS', keys.session(short.id))) === 0);
  const session = { id: randomUUID(), orgId: org.id, expiresAt: Date.now() + 3_600_000 };
  await store.createSession(session);

  const ours = async () =>
    ((await redisCommand(server.port, 'KEYS', `*${environment}*`)) as string[]).sort();
  t.strictSame(
    await ours(),
    [
      keys.organization(org.id),
      keys.organizationIdByEmail(org.email),
      keys.apiKey(key.hash),
      keys.organizationApiKeys(org.id),
      keys.session(session.id),
      keys.organizationSessions(org.id),
    ].sort(),
  );
  for (const name of await ours()) t.ok(name.startsWith(`${PREFIX}{${environment}}:`), name);
  const types = Object.fromEntries(
    await Promise.all((await ours()).map(async (name) => [name, await redisCommand(server.port, 'TYPE', name)])),
  );
  t.strictSame(types, {
    [keys.organization(org.id)]: 'hash',
    [keys.organizationIdByEmail(org.email)]: 'string',
    [keys.apiKey(key.hash)]: 'hash',
    [keys.organizationApiKeys(org.id)]: 'hash',
    [keys.session(session.id)]: 'hash',
    [keys.organizationSessions(org.id)]: 'zset',
  });
  const pttl = Number(await redisCommand(server.port, 'PTTL', keys.session(session.id)));
  t.ok(pttl > 3_500_000 && pttl <= 3_600_000, `session TTL ${pttl} ms`);
  t.strictSame(
    await redisCommand(server.port, 'ZRANGE', keys.organizationSessions(org.id), 0, -1),
    [session.id],
    'the expired session was pruned from the index',
  );

  await store.deleteOrganization(org.id);
  t.strictSame(await ours(), [], 'deleting the organization leaves no key behind');
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
  t.strictSame(await b.store.findApiKeyByHash(key.hash), key);
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
  const { heard: heardA } = a;
  const { heard: heardB } = b;

  const wire: string[] = [];
  const spy = new Redis(server.port, '127.0.0.1');
  t.teardown(() => spy.disconnect());
  spy.on('message', (_: string, message: string) => wire.push(message));
  await spy.subscribe(channel);

  const revoked: Revoked[] = [{ kind: 'api_key', cacheKey: sha() }, { kind: 'session', cacheKey: randomUUID() }];
  const publishing = a.bus.publish(revoked);
  t.strictSame(heardA, [revoked], "A's listeners heard it before publish() returned");
  await publishing;
  await pollUntil(20_000, () => heardB.length > 0);
  t.strictSame(heardB, [revoked], "B's listeners heard it");

  await new Promise((resolve) => setTimeout(resolve, 800)); // a few heartbeats and A's own echo
  t.strictSame(heardA, [revoked], 'A ignored its own echo, and heartbeats told nobody anything');
  t.strictSame(heardB, [revoked]);

  const sent = wire.map((text) => JSON.parse(text) as { origin: string; seq: number; revoked: Revoked[] });
  const carrying = sent.filter((message) => message.revoked.length > 0);
  t.equal(carrying.length, 1);
  t.strictSame(Object.keys(carrying[0] ?? {}).sort(), ['origin', 'revoked', 'seq'], 'only an origin, a seq and what was revoked');
  t.strictSame(carrying[0]?.revoked, revoked);

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
  const publishing = bus.publish(revoked);
  t.strictSame(heard, [revoked], 'applied locally even though Redis is down');
  t.ok((await failure(publishing)) instanceof StoreUnavailable, 'publish() throws StoreUnavailable');
  await pollUntil(20_000, () => lost.length > 0);
  t.pass('onSubscriptionLost was called');

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

  heardByOther.length = 0;
  const after: Revoked[] = [{ kind: 'session', cacheKey: randomUUID() }];
  await bus.publish(after);
  await pollUntil(20_000, () => heardByOther.some((i) => i !== 'all' && i[0]?.cacheKey === after[0]?.cacheKey));
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
  const session = { id: randomUUID(), orgId: org.id, expiresAt: Date.now() + 3_600_000 };
  t.strictSame(await store.createOrganizationIfEmailFree(org), org);
  t.equal(await store.createApiKey(key), 'created');
  t.equal(await store.createSession(session), 'created');

  await own.kill();
  await own.restart();
  await pollUntil(10_000, () => store.ping().then(() => true, () => false));
  t.strictSame(await store.findOrganizationByEmail(org.email), org);
  t.strictSame(await store.findApiKeyByHash(key.hash), key);
  t.strictSame(await store.findSession(session.id), session);
  t.strictSame(await store.listApiKeys(org.id), [{ id: key.id, displayPrefix: key.displayPrefix, createdAt: key.createdAt }]);
});

async function checkEveryMethodFails(t: Test, store: Store & CounterStore, commandTimeoutMs: number): Promise<void> {
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

t.test('login limit keys: under the hash tag, counters with the window, the known set bounded in time', async (t) => {
  const { createLoginThrottle, DEFAULT_LIMITS, KNOWN_ADDRESS_TTL_MS } = await import('../../src/guards/login-throttle.js');
  const environment = `env-${randomUUID()}`;
  const { store } = await open(t, { environment });
  const keys = redisKeys(PREFIX, environment);
  const throttle = createLoginThrottle(store);
  await (await throttle.attempt('owner@example.com', '192.0.2.1')).succeeded();
  await throttle.attempt('owner@example.com', '2001:db8:1:2::/64');

  const names = ((await redisCommand(server.port, 'KEYS', `*${environment}*`)) as string[]).sort();
  t.ok(names.length > 0);
  for (const name of names) {
    t.ok(name.startsWith(keys.base), `${name} is under the environment's hash tag`);
    const type = await redisCommand(server.port, 'TYPE', name);
    const pttl = Number(await redisCommand(server.port, 'PTTL', name));
    t.notOk(name.includes('owner@example.com'), 'the e-mail is not in key names');
    if (name.startsWith(keys.counter('login:'))) {
      t.equal(type, 'string', name);
      t.ok(pttl > 0 && pttl <= DEFAULT_LIMITS.windowSeconds * 1000, `${name}: PTTL ${pttl}`);
    } else {
      t.ok(name.startsWith(keys.knownSet('login:')), `${name} is a known-address set`);
      t.equal(type, 'zset', name);
      t.ok(pttl > KNOWN_ADDRESS_TTL_MS - 60_000 && pttl <= KNOWN_ADDRESS_TTL_MS, `${name}: PTTL ${pttl}`);
      t.strictSame(await redisCommand(server.port, 'ZRANGE', name, '0', '-1'), ['192.0.2.1']);
    }
  }
  t.equal(names.filter((name) => name.startsWith(keys.knownSet(''))).length, 1, 'one known set');
});
