import { randomUUID } from 'node:crypto';
import t from 'tap';
import { WriteNotReplicated } from '../../src/store/durability.js';
import { openRedisStorage } from '../../src/store/redis/store.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { redisCommand, startCluster } from '../helpers/redis.js';
import { newApiKey, newOrganization, newSession, pollUntil } from './store-contract.js';

/**
 * AUTHGATE_REDIS_WAIT_REPLICAS on a real Cluster (three masters with a replica each): WAIT goes
 * to the master that took the write, not to any node. With one master's replica paused, the
 * writes of an organization on that master are not acknowledged (WriteNotReplicated), while an
 * organization on another master writes as usual; the paused replica resumed, they go through.
 */
t.test('Cluster: WAIT on the node that took the write', async (t) => {
  const cluster = await startCluster({ replicas: 1 });
  t.teardown(() => cluster.stop());
  const environment = `env-${randomUUID()}`;
  const storage = await openRedisStorage({ clusterNodes: cluster.nodes, prefix: 'authgate-test:', environment, commandTimeoutMs: 2000, waitReplicas: 1 });
  t.teardown(() => storage.store.close());
  await pollUntil(15_000, () => storage.store.ping().then(() => true, () => false));

  const ranges = (await redisCommand(cluster.nodes[0]!.port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
  const masterOf = async (orgId: string) => {
    const slot = Number(await redisCommand(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', `{${environment}:${shardTagOf(orgId)}}`));
    return ranges.find(([first, last]) => slot >= first && slot <= last)![2][1];
  };
  // Organizations (created while every replica runs: each one acknowledged) until two masters have one.
  const byMaster = new Map<number, string>();
  for (let i = 0; i < 200 && byMaster.size < 2; i++) {
    const org = newOrganization();
    t.not(await storage.store.createOrganizationIfEmailFree(org), 'email-taken');
    const master = await masterOf(org.id);
    if (!byMaster.has(master)) byMaster.set(master, org.id);
  }
  const [[pausedMaster, stalled], [, flowing]] = [...byMaster] as [[number, string], [number, string]];
  const [replicaPort] = await cluster.replicasOf(pausedMaster);
  const replica = cluster.servers.find((server) => server.port === replicaPort)!;

  replica.pause();
  try {
    await t.rejects(storage.store.createApiKey(newApiKey(stalled)), WriteNotReplicated, 'a key on the master whose replica is paused is not acknowledged');
    await t.rejects(storage.store.createSession(newSession(stalled)), WriteNotReplicated, 'nor a login');
    t.equal(await storage.store.createApiKey(newApiKey(flowing)), 'created', 'a key on another master is, at once');
  } finally {
    replica.resume();
  }
  t.equal(await storage.store.createApiKey(newApiKey(stalled)), 'created', 'the replica back: acknowledged');
});
