import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import type { Invalidation } from '../../src/store/invalidation.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import { openRedisStorage, type OpenRedisStorageOptions, type RedisStorage } from '../../src/store/redis/store.js';
import { StoreUnavailable } from '../../src/store/store.js';
import { redisCommand, startCluster, startSentinelTopology } from '../helpers/redis.js';
import { newApiKey, newOrganization, pollUntil, storeContract } from './store-contract.js';

const PREFIX = 'authgate-test:';

type Where = Pick<OpenRedisStorageOptions, 'sentinels' | 'sentinelName' | 'clusterNodes'>;
type Opened = RedisStorage & { heard: Invalidation[] };

async function open(t: Test, where: Where, environment = `env-${randomUUID()}`): Promise<Opened> {
  const storage = await openRedisStorage({
    ...where,
    prefix: PREFIX,
    environment,
    commandTimeoutMs: 1000,
    invalidationHeartbeatMs: 200,
  });
  const heard: Invalidation[] = [];
  storage.bus.onInvalidation((invalidation) => heard.push(invalidation));
  t.teardown(() => storage.store.close());
  await pollUntil(15_000, () => storage.store.ping().then(() => true, () => false));
  return { ...storage, heard };
}

/**
 * Revokes a session on one storage (its script publishes the revocation) until another hears it
 * (pub/sub is at most once, and after a failover the other's subscriber may still be on its way
 * to the new master). The organization must exist.
 */
async function delivered(t: Test, from: Opened, to: Opened, orgId: string): Promise<void> {
  await pollUntil(15_000, async () => {
    const session = { id: randomUUID(), orgId, expiresAt: Date.now() + 60_000 };
    const revoked = await from.store
      .createSession(session)
      .then(() => from.store.deleteSession(session.id))
      .catch(() => undefined);
    if (revoked === undefined) return false;
    const heard = () => to.heard.some((i) => i !== 'all' && i[0]?.cacheKey === session.id);
    return pollUntil(1_000, heard).then(() => true, () => false);
  });
  t.pass('a revocation committed on one storage reached the other');
}

t.test('Sentinel: master, replica, three Sentinels', async (t) => {
  const topology = await startSentinelTopology();
  t.teardown(() => topology.stop());
  const where: Where = { sentinels: topology.sentinels, sentinelName: topology.name };

  t.test('the store contract', async (t) => {
    storeContract(t, async () => {
      const { store } = await open(t, where);
      return { store, close: () => store.close() };
    });
  });

  t.test('SENTINEL FAILOVER while reads and writes run', async (t) => {
    const environment = `env-${randomUUID()}`;
    const a = await open(t, where, environment);
    const b = await open(t, where, environment);
    const org = newOrganization();
    t.strictSame(await a.store.createOrganizationIfEmailFree(org), org);
    await delivered(t, a, b, org.id);

    const unexpected: unknown[] = [];
    let successes = 0;
    let unavailable = 0;
    let running = true;
    const loop = (async () => {
      while (running) {
        const key = newApiKey(org.id);
        try {
          if ((await a.store.createApiKey(key)) === 'created' && (await a.store.findApiKeyByHash(key.hash))) successes++;
        } catch (error) {
          if (error instanceof StoreUnavailable) unavailable++;
          else unexpected.push(error);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    // Sentinel closes the promoted server's client connections (CLIENT KILL TYPE normal) while it
    // reconfigures it, so a probe may see "Connection is closed.": that is a "not yet", not a failure.
    const probe = (port: number, ...command: [string, ...string[]]) => redisCommand(port, ...command).catch(() => undefined);
    const newMaster = topology.replica.port;
    const after = newApiKey(org.id);
    const afterKey = redisKeys(PREFIX, environment).apiKey(after.hash);
    try {
      await redisCommand(topology.sentinels[0]!.port, 'SENTINEL', 'FAILOVER', topology.name);
      await pollUntil(15_000, async () =>
        String(await probe(newMaster, 'INFO', 'replication')).includes('role:master'),
      );

      // Writes land on the new master within 15 s. Sentinel demotes the old master only seconds
      // later; the client must not wait for that (failoverDetector follows +switch-master).
      await pollUntil(15_000, async () => {
        const result = await a.store.createApiKey(after).catch(() => 'failed');
        return result === 'created' && (await probe(newMaster, 'EXISTS', afterKey)) === 1;
      });
      t.pass('a write succeeded against the new master');
      const successesBefore = successes;
      await pollUntil(20_000, () => successes > successesBefore);
    } finally {
      // Stopped whatever happened above, or the loop outlives the test and holds the file open.
      running = false;
      await loop;
    }

    t.strictSame(unexpected, [], 'only StoreUnavailable during the failover, never a raw error');
    t.ok(successes > 0, `${successes} writes and reads succeeded, ${unavailable} were refused`);
    t.strictSame(await a.store.findOrganizationById(org.id), org, 'data written before the failover is there');
    await pollUntil(20_000, async () => (await b.store.findApiKeyByHash(after.hash).catch(() => undefined)) !== undefined);
    t.strictSame(await b.store.findApiKeyByHash(after.hash), after, 'the other storage follows too');
    await delivered(t, a, b, org.id);
  });
});

t.test('Cluster: three masters', async (t) => {
  const cluster = await startCluster();
  t.teardown(() => cluster.stop());
  const where: Where = { clusterNodes: cluster.nodes };

  t.test('the store contract', async (t) => {
    storeContract(t, async () => {
      const { store } = await open(t, where);
      return { store, close: () => store.close() };
    });
  });

  t.test('every key of an environment is in one slot; the bus delivers between storages', async (t) => {
    const environment = `env-${randomUUID()}`;
    const a = await open(t, where, environment);
    const b = await open(t, where, environment);
    const org = newOrganization();
    await a.store.createOrganizationIfEmailFree(org);
    await a.store.createApiKey(newApiKey(org.id));
    await a.store.createSession({ id: randomUUID(), orgId: org.id, expiresAt: Date.now() + 60_000 });
    t.strictSame(await b.store.findOrganizationByEmail(org.email), org);

    const names: string[] = [];
    for (const node of cluster.nodes) {
      names.push(...((await redisCommand(node.port, 'KEYS', `*${environment}*`)) as string[]));
    }
    t.equal(names.length, 6, 'org, e-mail, key, key index, session, session index');
    const slots = new Set(
      await Promise.all(names.map((name) => redisCommand(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', name))),
    );
    t.equal(slots.size, 1, 'one slot');

    await delivered(t, a, b, org.id);
    await delivered(t, b, a, org.id);
    t.ok(a.bus.subscribed && b.bus.subscribed, 'both subscriptions confirmed: their caches are in use');
  });
});
