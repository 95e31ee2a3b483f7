import t from 'tap';
import { UA, eventually, send, startGateway } from '../helpers/gateway.js';
import { redisCommand, startCluster, startSentinelTopology } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const hostPorts = (nodes: { host: string; port: number }[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',');

t.test('Sentinel: the gateway keeps answering through a failover, then writes to the new master', async (t) => {
  const topology = await startSentinelTopology();
  t.teardown(() => topology.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, {
    upstream,
    env: { AUTHGATE_REDIS_SENTINELS: hostPorts(topology.sentinels), AUTHGATE_REDIS_SENTINEL_NAME: topology.name, AUTHGATE_REDIS_TIMEOUT_MS: '500' },
  });
  t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 15_000, 100), 'ready on Sentinel');
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);

  let stop = false;
  const statuses: number[] = [];
  const traffic = (async () => {
    while (!stop) {
      // A failed request counts as status 0, so it fails the assertion below instead of escaping.
      statuses.push(await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` }).then((r) => r.status, () => 0));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const asked = await eventually(() => redisCommand(topology.sentinels[0]!.port, 'SENTINEL', 'FAILOVER', topology.name).then(() => true, () => false), 5000, 200);
  t.ok(asked, 'failover requested');
  // Redis drops client connections while roles change: a refused poll is "not yet".
  const promoted = await eventually(
    async () => String(await redisCommand(topology.replica.port, 'INFO', 'replication').catch(() => '')).includes('role:master'),
    20_000,
    100,
  );
  t.ok(promoted, 'the replica was promoted');

  // After the failover, a write must land on the new master.
  const written = await eventually(async () => {
    const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
    return res.status === 201;
  }, 20_000, 200);
  // A quick failover may be over in fewer requests: keep the traffic going until there are some.
  await eventually(async () => statuses.length >= 5, 20_000, 20);
  stop = true;
  await traffic;
  t.ok(written, 'key creation works against the new master');
  t.ok(statuses.length >= 5, `${statuses.length} requests during and after the failover`);
  t.ok(statuses.every((s) => s === 200), `a cached credential kept being answered throughout (${[...new Set(statuses)].join(',')})`);
  const keys = await gw.get('/auth/api-key', { authorization: `Bearer ${token}` });
  t.equal(keys.status, 200);
  t.ok((keys.json().keys as unknown[]).length >= 2, 'reads come from the new master');
});

t.test('Cluster: two gateways share credentials and revocations', async (t) => {
  const cluster = await startCluster();
  t.teardown(() => cluster.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_CLUSTER_NODES: hostPorts(cluster.nodes) };
  const a = await startGateway(t, { upstream, env });
  const b = await startGateway(t, { upstream, env });
  for (const gw of [a, b]) t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 15_000, 100), 'ready on Cluster');
  const org = await a.createOrganization();
  const token = await b.login(org.email, org.password);
  const key = await a.createApiKey(token);
  t.equal((await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'a key made on A works on B');
  t.equal((await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 204);
  t.ok(await eventually(async () => (await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status === 401, 15_000, 5), 'revoked on B long before the cache TTL (60 s)');
});
