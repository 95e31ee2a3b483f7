import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { Invalidation } from '../../src/store/invalidation.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import { openRedisStorage, type OpenRedisStorageOptions, type RedisStorage } from '../../src/store/redis/store.js';
import { StoreUnavailable, type ApiKeyRecord } from '../../src/store/store.js';
import { redisCommand, startCluster, startSentinelTopology } from '../helpers/redis.js';
import { SHARD_TAG_LENGTH, shardTagOf } from '../../src/store/shard-tag.js';
import { found, newApiKey, newOrganization, newSession, pollUntil, storeContract } from './store-contract.js';

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
    const session = newSession(orgId, 60_000);
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
    const afterHash = redisKeys(PREFIX, environment).shard(shardTagOf(org.id)).apiKeys;
    try {
      await redisCommand(topology.sentinels[0]!.port, 'SENTINEL', 'FAILOVER', topology.name);
      await pollUntil(15_000, async () =>
        String(await probe(newMaster, 'INFO', 'replication')).includes('role:master'),
      );

      // Writes land on the new master within 15 s. Sentinel demotes the old master only seconds
      // later; the client must not wait for that (failoverDetector follows +switch-master).
      await pollUntil(15_000, async () => {
        const result = await a.store.createApiKey(after).catch(() => 'failed');
        return result === 'created' && (await probe(newMaster, 'HEXISTS', afterHash, after.hash.slice(SHARD_TAG_LENGTH + 1))) === 1;
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
    t.strictSame(await b.store.findApiKeyByHash(after.hash), found(after), 'the other storage follows too');
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

  t.test('an environment spreads over every master; the bus delivers from each', async (t) => {
    const environment = `env-${randomUUID()}`;
    const a = await open(t, where, environment);
    const b = await open(t, where, environment);
    const orgs = Array.from({ length: 1000 }, () => newOrganization());
    // 50 at a time: each sign-up is two or three round trips, to two shards.
    for (let i = 0; i < orgs.length; i += 50) {
      await Promise.all(orgs.slice(i, i + 50).map(async (org) => {
        await a.store.createOrganizationIfEmailFree(org);
        await a.store.createApiKey(newApiKey(org.id));
        await a.store.createSession(newSession(org.id));
      }));
    }
    const counts = await Promise.all(cluster.nodes.map(async (node) =>
      ((await redisCommand(node.port, 'KEYS', `*${environment}*`)) as string[]).length));
    const total = counts.reduce((sum, n) => sum + n, 0);
    t.ok(total >= 4000, `${total} keys: organizations, claims, key and session hashes and indexes`);
    for (const [i, count] of counts.entries()) {
      t.ok(count >= total * 0.2, `master ${i + 1} holds ${count} of ${total} keys (${Math.round((100 * count) / total)}%): at least 20%`);
    }
    t.strictSame(await b.store.findOrganizationByEmail(orgs[0]!.email), orgs[0], 'the other storage reads them');

    // One organization per master: a revocation committed on any shard reaches the other storage.
    const slotOwner = await slotOwners(cluster.nodes[0]!.port);
    const byMaster = new Map<number, string>();
    for (const org of orgs) {
      const slot = Number(await redisCommand(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', `{${environment}:${shardTagOf(org.id)}}`));
      const master = slotOwner(slot);
      if (!byMaster.has(master)) byMaster.set(master, org.id);
      if (byMaster.size === cluster.nodes.length) break;
    }
    t.equal(byMaster.size, cluster.nodes.length, 'organizations on every master');
    for (const orgId of byMaster.values()) {
      await delivered(t, a, b, orgId);
      await delivered(t, b, a, orgId);
    }
    t.ok(a.bus.subscribed && b.bus.subscribed, 'both subscriptions confirmed: their caches are in use');
  });
});

/** Which master port serves a slot, from CLUSTER SLOTS. */
async function slotOwners(port: number): Promise<(slot: number) => number> {
  const ranges = (await redisCommand(port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
  return (slot) => {
    const range = ranges.find(([first, last]) => slot >= first && slot <= last);
    if (range === undefined) throw new Error(`slot ${slot} is served by no master`);
    return range[2][1];
  };
}

t.test('Cluster: three masters with a replica each, a master failover with writes in flight', async (t) => {
  const cluster = await startCluster({ replicas: 1 });
  t.teardown(() => cluster.stop());
  const where: Where = { clusterNodes: cluster.nodes };
  // A node being demoted, killed or promoted may cut a probe's connection: that is a "not yet".
  const probe = (port: number, command: string, ...args: (string | number)[]) => redisCommand(port, command, ...args).catch(() => undefined);
  const isMaster = async (port: number) => String(await probe(port, 'INFO', 'replication')).includes('role:master');
  /** An API key's field in its shard's hash of keys: its lookup hash after `<tag>.`. */
  const apiKeyField = (key: ApiKeyRecord) => key.hash.slice(shardTagOf(key.orgId).length + 1);
  /** Servers a subtest failed over: the next one picks another master. */
  const involved = new Set<number>();

  /** A master that has a replica and took no part in an earlier subtest, and that replica. */
  async function masterWithReplica(): Promise<{ master: number; replica: number }> {
    for (const role of await cluster.roles()) {
      if (role.role !== 'master' || involved.has(role.port)) continue;
      const [replica] = await cluster.replicasOf(role.port);
      if (replica === undefined) continue;
      involved.add(role.port).add(replica);
      return { master: role.port, replica };
    }
    throw new Error(`no master with a replica left: ${JSON.stringify(await cluster.roles())}`);
  }

  /** A new organization (created through storage) whose shard tag's slot is served by master. */
  async function organizationOn(storage: Opened, environment: string, master: number) {
    const owner = await slotOwners(master);
    for (let i = 0; i < 1000; i++) {
      const org = newOrganization();
      const slot = Number(await redisCommand(master, 'CLUSTER', 'KEYSLOT', `{${environment}:${shardTagOf(org.id)}}`));
      if (owner(slot) !== master) continue;
      if ((await storage.store.createOrganizationIfEmailFree(org)) === 'email-taken') throw new Error('fresh e-mail taken');
      return org;
    }
    throw new Error(`no organization of 1000 landed on master ${master}`);
  }

  type Acknowledged = { key: ApiKeyRecord; epoch: number };
  /**
   * Creates API keys for orgId on storage, one after the other, each read back once created.
   * Every 'created' answer is kept, with the loop's epoch when the call started (the test bumps
   * it), to check after the failover that none of them is lost.
   */
  function writeLoop(storage: Opened, orgId: string) {
    const state = {
      epoch: 0,
      acknowledged: [] as Acknowledged[],
      /** createApiKey answered StoreUnavailable. */
      refused: [] as ApiKeyRecord[],
      /** 'created', then found by findApiKeyByHash. */
      successes: 0,
      /** 'created', then not found by the read that followed (an answer, not an error). */
      readBackMissing: [] as string[],
      unexpected: [] as unknown[],
      /** The longest createApiKey call, answered or not (ms). */
      slowestMs: 0,
    };
    let running = true;
    const done = (async () => {
      while (running) {
        const key = newApiKey(orgId);
        const epoch = state.epoch;
        let created = false;
        const startedAt = Date.now();
        try {
          const result = await storage.store.createApiKey(key).finally(() => {
            state.slowestMs = Math.max(state.slowestMs, Date.now() - startedAt);
          });
          if (result !== 'created') throw new Error(`createApiKey answered ${result}`);
          created = true;
          state.acknowledged.push({ key, epoch });
          if ((await storage.store.findApiKeyByHash(key.hash)) === undefined) state.readBackMissing.push(key.hash);
          else state.successes++;
        } catch (error) {
          if (!(error instanceof StoreUnavailable)) state.unexpected.push(error);
          else if (!created) state.refused.push(key);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    return Object.assign(state, {
      async stop() {
        running = false;
        await done;
      },
    });
  }

  /** The keys findApiKeyByHash does not answer exactly (an error counts as not found). */
  async function missingOn(storage: Opened, keys: readonly ApiKeyRecord[]): Promise<string[]> {
    const missing: string[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      await Promise.all(keys.slice(i, i + 100).map(async (key) => {
        const got = await storage.store.findApiKeyByHash(key.hash).catch((error: unknown) => error);
        if (JSON.stringify(got) !== JSON.stringify(found(key))) missing.push(key.hash);
      }));
    }
    return missing;
  }

  /** How many of keys Redis has, read straight from the master serving them. */
  async function presentOn(port: number, apiKeys: string, keys: readonly ApiKeyRecord[]): Promise<number> {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      const replies = await Promise.all(keys.map((key) => client.hexists(apiKeys, apiKeyField(key))));
      return replies.filter((reply) => reply === 1).length;
    } finally {
      client.disconnect();
    }
  }

  t.test('CLUSTER FAILOVER (coordinated, manual): nothing acknowledged is lost', async (t) => {
    const environment = `env-${randomUUID()}`;
    const a = await open(t, where, environment);
    const b = await open(t, where, environment);
    const { master, replica } = await masterWithReplica();
    const org = await organizationOn(a, environment, master);
    const apiKeys = redisKeys(PREFIX, environment).shard(shardTagOf(org.id)).apiKeys;
    await delivered(t, a, b, org.id);

    const writes = writeLoop(a, org.id);
    const after = newApiKey(org.id);
    try {
      await pollUntil(15_000, () => writes.successes >= 20);
      // A manual failover is coordinated: the master stops its clients' writes, hands the replica
      // its replication offset, and the replica takes over only once it has applied everything
      // up to that offset. Redis documents no loss of acknowledged writes for it (unlike a
      // crash, see the next subtest): every 'created' of the loop must still be there after.
      t.equal(await redisCommand(replica, 'CLUSTER', 'FAILOVER'), 'OK', `replica ${replica} of master ${master} asked to take over`);
      // The replica gives a manual failover up after 5 s (CLUSTER_MF_TIMEOUT); on a machine that
      // busy, it is asked again rather than the test failing on the weather.
      let askedAt = Date.now();
      await pollUntil(30_000, async () => {
        if (await isMaster(replica)) return true;
        if (Date.now() - askedAt > 6_000) {
          askedAt = Date.now();
          await probe(replica, 'CLUSTER', 'FAILOVER');
        }
        return false;
      });
      writes.epoch = 1;
      t.pass('the replica reports role:master');

      // A write lands on the new master: the client follows MOVED and its refreshed slot table.
      await pollUntil(30_000, async () => {
        const result = await a.store.createApiKey(after).catch(() => 'failed');
        return result === 'created' && (await probe(replica, 'HEXISTS', apiKeys, apiKeyField(after))) === 1;
      });
      t.pass('a write succeeded against the new master');
      const successesBefore = writes.successes;
      await pollUntil(20_000, () => writes.successes > successesBefore);
    } finally {
      // Stopped whatever happened above, or the loop outlives the test and holds the file open.
      await writes.stop();
    }

    t.strictSame(writes.unexpected, [], 'only StoreUnavailable during the failover, never a raw error or another answer');
    t.strictSame(writes.readBackMissing, [], 'every created key was found by the read that followed');
    const acknowledged = [...writes.acknowledged.map(({ key }) => key), after];
    const sinceFailover = writes.acknowledged.filter(({ epoch }) => epoch === 1).length;
    t.ok(sinceFailover > 0, `${acknowledged.length} keys acknowledged (${sinceFailover} after the promotion), ${writes.refused.length} refused`);
    await pollUntil(20_000, async () => (await b.store.findApiKeyByHash(after.hash).catch(() => undefined)) !== undefined);
    t.strictSame(await missingOn(a, acknowledged), [], `all ${acknowledged.length} acknowledged keys are found by the storage that wrote them`);
    t.strictSame(await missingOn(b, acknowledged), [], `all ${acknowledged.length} acknowledged keys are found by the other storage`);
    t.equal(await presentOn(replica, apiKeys, acknowledged), acknowledged.length, 'and all are on the new master');
    t.comment(`the slowest write took ${writes.slowestMs} ms (the master holds writes while its replica catches up)`);
    // A refusal says the answer did not come in time, not that the write did not happen.
    const written = await presentOn(replica, apiKeys, writes.refused);
    t.comment(`${written} of the ${writes.refused.length} keys refused with StoreUnavailable are on the new master all the same`);
    await pollUntil(30_000, async () => (await cluster.replicasOf(replica)).includes(master));
    t.pass('the old master replicates the new one');
    await delivered(t, a, b, org.id);
    await delivered(t, b, a, org.id);
  });

  t.test('a master killed (SIGKILL) while writes run: automatic failover', async (t) => {
    const environment = `env-${randomUUID()}`;
    const a = await open(t, where, environment);
    const b = await open(t, where, environment);
    const { master, replica } = await masterWithReplica();
    const server = cluster.servers.find((s) => s.port === master)!;
    const org = await organizationOn(a, environment, master);
    const shard = redisKeys(PREFIX, environment).shard(shardTagOf(org.id));
    await delivered(t, a, b, org.id);

    // A connection of our own to the master, for WAIT: it counts the replicas that acknowledged
    // this connection's own writes, so it writes a marker first.
    const raw = new Redis({ host: '127.0.0.1', port: master, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    raw.on('error', () => {});
    await raw.connect();

    const writes = writeLoop(a, org.id);
    const after = newApiKey(org.id);
    let replicated = 0;
    let killedAt = 0;
    try {
      await pollUntil(15_000, () => writes.successes >= 20);
      // The master runs commands one at a time and replicates them in that order: a key whose
      // 'created' came back before the marker was sent is in the stream before the marker, so
      // once a replica acknowledges the marker it has those keys too.
      replicated = writes.acknowledged.length;
      await raw.set(`${shard.base}replicated`, String(replicated));
      t.equal(await raw.call('WAIT', 1, 10_000), 1, `the replica has the first ${replicated} acknowledged keys`);
      raw.disconnect();
      await server.kill();
      killedAt = Date.now();
      // A call started from now on can only be answered by the new master.
      writes.epoch = 1;

      // cluster-node-timeout is 2000 ms: the master is marked failed after that, then its replica
      // is elected (after a delay of its own) and promoted.
      await pollUntil(30_000, () => isMaster(replica));
      t.pass(`the replica promoted itself ${Date.now() - killedAt} ms after the kill`);
      await pollUntil(30_000, async () => {
        const result = await a.store.createApiKey(after).catch(() => 'failed');
        return result === 'created' && (await probe(replica, 'HEXISTS', shard.apiKeys, apiKeyField(after))) === 1;
      });
      t.pass(`a write succeeded against the new master ${Date.now() - killedAt} ms after the kill`);
      const successesBefore = writes.successes;
      await pollUntil(20_000, () => writes.successes > successesBefore);
    } finally {
      raw.disconnect();
      await writes.stop();
    }

    t.strictSame(writes.unexpected, [], 'only StoreUnavailable during the failover, never a raw error or another answer');
    // Redis Cluster replicates asynchronously: the master answers a write before any replica has
    // it, so a write acknowledged in the moment before a crash, not yet replicated, is lost when
    // the replica takes over (the documented window, "Redis Cluster is not able to guarantee
    // strong consistency"). What WAIT saw replicated, and whatever the new master acknowledged,
    // must stay.
    const kept = [...writes.acknowledged.slice(0, replicated), ...writes.acknowledged.slice(replicated).filter(({ epoch }) => epoch === 1)]
      .map(({ key }) => key)
      .concat(after);
    const window = writes.acknowledged.slice(replicated).filter(({ epoch }) => epoch === 0).map(({ key }) => key);
    const sinceKill = writes.acknowledged.filter(({ epoch }) => epoch === 1).length;
    t.ok(sinceKill > 0, `${replicated} keys replicated before the kill, ${sinceKill} acknowledged by the new master, ${writes.refused.length} refused`);
    await pollUntil(20_000, async () => (await b.store.findApiKeyByHash(after.hash).catch(() => undefined)) !== undefined);
    t.strictSame(await missingOn(a, kept), [], `all ${kept.length} of them are found by the storage that wrote them`);
    t.strictSame(await missingOn(b, kept), [], `all ${kept.length} of them are found by the other storage`);
    const survivors = await presentOn(replica, shard.apiKeys, window);
    t.comment(`${window.length} keys acknowledged by the old master between the WAIT and the kill: ${survivors} survived (the rest is the asynchronous-replication window)`);
    t.comment(`${writes.readBackMissing.length} keys created and then not found by the read that followed`);
    // A refusal says the answer did not come in time, not that the write did not happen.
    const written = await presentOn(replica, shard.apiKeys, writes.refused);
    t.comment(`${written} of the ${writes.refused.length} keys refused with StoreUnavailable are on the new master all the same`);
    await delivered(t, a, b, org.id);
    await delivered(t, b, a, org.id);
  });
});
