import t from 'tap';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { createUnknownCredentials } from '../../src/credentials/unknown-credentials.js';
import { openRedisStorage } from '../../src/store/redis/store.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Issue 45, "Memory under a flood": unknown credentials are remembered in a table of fixed size
 * (credentials/unknown-credentials.ts), and a key created after it was asked for works at once on
 * every replica (its creation is announced like a revocation). No timing here: the flood's memory
 * and the trickle's p99 are the bench's (`npm run bench -- --only flood`).
 */

/** A metric's value (its one series) from /metrics. */
async function metric(gw: StartedGateway, name: string): Promise<number | undefined> {
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Store reads of API keys so far (the store's command timing counts every call). */
async function keyReads(gw: StartedGateway): Promise<number> {
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const line = text.split('\n').find((l) => l.startsWith('authgate_store_command_duration_seconds_count{') && l.includes('operation="find_api_key"'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

t.test('the table never holds more than its slots, and forgets what it is told to', async (t) => {
  const table = createUnknownCredentials(64);
  t.equal(table.capacity, 64);
  const keys = Array.from({ length: 5000 }, (_, i) => `a${shardTagOf(`org_${i}`)}.${i.toString(36).padStart(22, '0')}`);
  for (const key of keys) table.remember(key, 60_000);
  t.ok(table.size() <= 64, `at most 64 remembered (${table.size()})`);
  t.ok(table.has(keys.at(-1)!), 'the newest is remembered');
  table.forget(keys.at(-1)!);
  t.notOk(table.has(keys.at(-1)!), 'and forgotten when told');
  table.clear();
  t.equal(table.size(), 0);
  t.equal(createUnknownCredentials(0).size(), 0, 'AUTHGATE_NEGATIVE_CACHE_MAX=0 remembers nothing');
});

t.test('a flood of distinct unknown keys: one store read each, the negative cache within AUTHGATE_NEGATIVE_CACHE_MAX, principals kept', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { upstream, env: { AUTHGATE_NEGATIVE_CACHE_MAX: '100', AUTHGATE_CACHE_MAX: '50' } });
  const org = await gw.createOrganization();
  const key = (await gw.createApiKey(await gw.login(org.email, org.password))).apiKey;
  t.equal((await gw.get('/accounts', bearer(key))).status, 200);

  const readsBefore = await keyReads(gw);
  const garbage = Array.from({ length: 600 }, () => generateApiKey('sandbox', shardTagOf(`org_${Math.random()}`)).secret);
  for (let i = 0; i < garbage.length; i += 50) {
    const statuses = await Promise.all(garbage.slice(i, i + 50).map(async (k) => (await gw.get('/accounts', bearer(k))).status));
    t.ok(statuses.every((s) => s === 401), `batch ${i / 50}: every unknown key 401`);
  }
  t.equal((await keyReads(gw)) - readsBefore, garbage.length, 'one store read per distinct unknown key');
  const unknown = await metric(gw, 'authgate_credential_cache_unknown_entries');
  t.ok(unknown !== undefined && unknown > 0 && unknown <= 128, `unknown entries bounded by the table (${unknown}; 100 rounds up to 128 slots)`);
  t.ok((await metric(gw, 'authgate_credential_cache_entries'))! <= 128 + 50, 'the cache as a whole stays within its two bounds');
  t.equal(await metric(gw, 'authgate_credential_cache_evictions_total'), 0, 'no cached principal was pushed out by garbage');
  t.equal((await gw.get('/accounts', bearer(key))).status, 200, 'the valid key still answers');

  // Concurrent asks of one unknown key share one store read, and the next is answered without one.
  const reads = await keyReads(gw);
  const one = generateApiKey('sandbox', shardTagOf('org_same')).secret;
  const same = await Promise.all(Array.from({ length: 20 }, () => gw.get('/accounts', bearer(one))));
  t.ok(same.every((r) => r.status === 401));
  t.equal((await keyReads(gw)) - reads, 1, '20 concurrent asks of one unknown key: one store read');
  t.equal((await gw.get('/accounts', bearer(one))).status, 401);
  t.equal((await keyReads(gw)) - reads, 1, 'asked again: answered from the negative cache');
});

t.test('a key asked for before it existed works at once on two replicas once created (real Redis)', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  // A negative TTL far beyond the test: only the creation's announcement can explain a 200.
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS: '300' };
  const a = await startGateway(t, { upstream, env });
  const b = await startGateway(t, { upstream, env });
  for (const gw of [a, b]) {
    t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 15_000, 50), 'ready and subscribed');
  }
  const org = await a.createOrganization();
  const planned = generateApiKey('sandbox', shardTagOf(org.id));
  for (const gw of [a, b]) {
    const res = await gw.get('/accounts', bearer(planned.secret));
    t.equal(res.status, 401, 'unknown before its creation');
    t.match(res.body, /unknown_key|credential/, 'refused as unknown');
    t.equal((await gw.get('/accounts', bearer(planned.secret))).status, 401, 'and remembered as unknown');
  }

  // Created through the store from a third party (as another replica's API would), so neither
  // gateway applies it locally: each hears it on the revocation channel.
  const storage = await openRedisStorage({ url: redis.url, prefix: 'authgate:', environment: 'sandbox', commandTimeoutMs: 2000 });
  t.teardown(() => storage.store.close());
  t.ok(await eventually(async () => (await storage.store.ping().then(() => true, () => false)), 10_000, 50));
  const created = await storage.store.createApiKey({ id: planned.id, orgId: org.id, hash: planned.hash, displayPrefix: planned.displayPrefix, createdAt: new Date().toISOString() });
  t.equal(created, 'created');
  for (const [name, gw] of [['A', a], ['B', b]] as const) {
    t.ok(await eventually(async () => (await gw.get('/accounts', bearer(planned.secret))).status === 200, 15_000, 20), `works on ${name} long before the negative TTL`);
  }
});
