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
  // The Sentinels' +switch-master reaches the gateway on its own time, possibly after the write
  // above already found the new master through READONLY: the reconnect it causes may refuse a
  // read or two as the store being unavailable (503 with Retry-After, the documented answer),
  // never anything else, and reads then come from the new master.
  const refusals: Array<{ status: number; code: unknown; retryAfter: string | undefined }> = [];
  let keyCount = 0;
  const read = await eventually(async () => {
    const keys = await gw.get('/auth/api-key', { authorization: `Bearer ${token}` });
    if (keys.status === 200) {
      keyCount = (keys.json().keys as unknown[]).length;
      return true;
    }
    refusals.push({ status: keys.status, code: keys.json().code, retryAfter: keys.headers['retry-after'] as string | undefined });
    return false;
  }, 20_000, 100);
  t.ok(read, 'the API keys are read after the failover');
  t.ok(keyCount >= 2, `reads come from the new master (${keyCount} keys)`);
  t.ok(refusals.every((r) => r.status === 503 && r.retryAfter !== undefined), `any refusal meanwhile is a 503 with Retry-After (${JSON.stringify(refusals)})`);
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
