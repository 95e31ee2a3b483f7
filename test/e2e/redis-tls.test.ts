import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../../src/config/load.js';
import { UA, eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { createOrganizationAndLogin, startGatewayProcess } from '../helpers/gateway-process.js';
import { freePort, redisCommandOn, startCluster, startRedis, startSentinelTopology, waitFor } from '../helpers/redis.js';
import { makeCertificate, makeCertificateAuthority } from '../helpers/tls.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';

t.test('rediss:// with user and password from the URL', async (t) => {
  const cert = makeCertificate();
  t.teardown(cert.cleanup);
  const tlsPort = await freePort();
  const password = 'redis-acl-password-0123';
  // An ACL user for the gateway; the default user stays open for the harness's own readiness PING.
  const aclFile = join(cert.dir, 'users.acl');
  writeFileSync(aclFile, `user default on nopass ~* &* +@all\nuser authgate on >${password} ~authgate:* &* +@all\n`);
  const redis = await startRedis({
    args: ['--tls-port', String(tlsPort), '--tls-cert-file', cert.certFile, '--tls-key-file', cert.keyFile, '--tls-auth-clients', 'no', '--aclfile', aclFile],
  });
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());

  const gw = await startGatewayProcess(
    { AUTHGATE_REDIS_URL: `rediss://authgate:${password}@localhost:${tlsPort}`, AUTHGATE_UPSTREAM_URL: upstream.url, NODE_EXTRA_CA_CERTS: cert.certFile },
    { waitReady: false },
  );
  t.teardown(() => {
    gw.child.kill('SIGKILL');
  });
  t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`).catch(() => ({ status: 0 }))).status === 200, 15_000, 100), `ready over TLS with ACL auth ${gw.output().slice(-300)}`);
  const { orgStatus, loginStatus, token } = await createOrganizationAndLogin(gw, { name: 'TLS', email: 'tls@example.test' });
  t.equal(orgStatus, 201);
  t.equal(loginStatus, 200);
  const accounts = await send(`${gw.publicUrl}/accounts`, { headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(accounts.status, 200);
  t.notOk(gw.output().includes(password), 'the Redis password is never printed');
});

const hostPorts = (nodes: { host: string; port: number }[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',');
/** Ready, and not only because readiness is optimistic until the first store check: connected. */
const ready = (gw: StartedGateway) =>
  eventually(async () => gw.logs.text().includes('redis connection ready') && (await send(`${gw.opsUrl}/readyz`)).status === 200, 20_000, 100);
/** Handshakes a Redis server aborted because the client did not accept its certificate. */
const refusedHandshakes = (output: string) => output.split('Error accepting a client connection').length - 1;

/**
 * A gateway whose TLS settings do not verify the servers' certificate: it must never reach them.
 * Not "not ready after n seconds": we wait until its health check has found the store down and
 * the servers have seen it abort handshakes (it tried, and refused what it got); then it must
 * still be unready, and login (which needs the store) must be 503.
 */
async function refusedOverTls(t: Test, what: string, output: () => string, env: Env, upstream: RecordingUpstream): Promise<void> {
  const before = refusedHandshakes(output());
  const gw = await startGateway(t, { upstream, env });
  const readyz = () => send(`${gw.opsUrl}/readyz`);
  await waitFor(`${what}: readiness to report the store unavailable`, 30_000, async () => (await readyz()).body.includes('store_unavailable'));
  await waitFor(`${what}: handshakes refused by the client`, 30_000, () => refusedHandshakes(output()) >= before + 3);
  t.equal((await readyz()).status, 503, `${what}: never ready`);
  const login = await send(`${gw.publicUrl}/auth/login`, {
    method: 'POST',
    headers: { ...UA, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'nobody@example.test', password: 'long-enough-password' }),
  });
  t.equal(login.status, 503, `${what}: the store is unavailable, so login is 503`);
  t.notOk(gw.logs.text().includes('redis connection ready'), `${what}: no connection was ever ready`);
}

t.test('rediss:// to a server of a private CA: AUTHGATE_REDIS_TLS_CA_FILE, not NODE_EXTRA_CA_CERTS', async (t) => {
  const ca = makeCertificateAuthority();
  t.teardown(ca.cleanup);
  const tls = { caFile: ca.caFile, ...ca.issue('redis', { dns: ['localhost'] }), serverName: 'localhost' };
  const redis = await startRedis({ tls });
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env: Env = { AUTHGATE_REDIS_URL: `rediss://localhost:${redis.port}`, AUTHGATE_REDIS_TLS_CA_FILE: ca.caFile };
  const gw = await startGateway(t, { upstream, env });
  t.ok(await ready(gw), 'ready over TLS, trusting the CA file');
  const org = await gw.createOrganization();
  t.ok(await gw.login(org.email, org.password), 'login works');

  const other = makeCertificateAuthority(undefined, 'other-ca');
  t.teardown(other.cleanup);
  // The switch that turns verification off process-wide must not reach the Redis connections.
  const saved = process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
  process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
  t.teardown(() => {
    if (saved === undefined) delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    else process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = saved;
  });
  await refusedOverTls(t, 'a CA that did not sign it, with NODE_TLS_REJECT_UNAUTHORIZED=0', redis.output, { ...env, AUTHGATE_REDIS_TLS_CA_FILE: other.caFile }, upstream);
});

t.test('Sentinel over TLS only, the Sentinels with their own password', async (t) => {
  const ca = makeCertificateAuthority();
  t.teardown(ca.cleanup);
  const server = ca.issue('redis', { dns: ['localhost'], ips: ['127.0.0.1'] });
  const tls = { caFile: ca.caFile, ...server, serverName: 'localhost' };
  const dataPassword = 'data-node-password-0123';
  const sentinelPassword = 'sentinel-password-0123';
  const topology = await startSentinelTopology({ tls, password: dataPassword, sentinelPassword });
  t.teardown(() => topology.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env: Env = {
    AUTHGATE_REDIS_SENTINELS: hostPorts(topology.sentinels),
    AUTHGATE_REDIS_SENTINEL_NAME: topology.name,
    AUTHGATE_REDIS_SENTINEL_PASSWORD: sentinelPassword,
    AUTHGATE_REDIS_PASSWORD: dataPassword,
    AUTHGATE_REDIS_TLS: 'on',
    AUTHGATE_REDIS_TLS_CA_FILE: ca.caFile,
  };

  const gw = await startGateway(t, { upstream, env });
  t.ok(await ready(gw), 'ready: Sentinels and master reached over TLS with their passwords');
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200);

  // A failover is followed over TLS too: +switch-master from the Sentinels, then the new master.
  t.ok(await eventually(() => redisCommandOn(topology.sentinelTargets[0]!, 'SENTINEL', 'FAILOVER', topology.name).then(() => true, () => false), 5000, 200), 'failover requested');
  t.ok(
    await eventually(async () => String(await redisCommandOn(topology.replica.target, 'INFO', 'replication').catch(() => '')).includes('role:master'), 20_000, 100),
    'the replica was promoted',
  );
  const written = await eventually(async () => {
    const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
    return res.status === 201;
  }, 20_000, 200);
  t.ok(written, 'a key is written to the new master over TLS');
  t.ok(Number(await redisCommandOn(topology.replica.target, 'DBSIZE')) > 0, 'the data is on the new master');
  const logs = gw.logs.text();
  t.notOk(logs.includes(dataPassword) || logs.includes(sentinelPassword), 'no password in the logs');

  const other = makeCertificateAuthority(undefined, 'other-ca');
  t.teardown(other.cleanup);
  await refusedOverTls(t, 'a CA that did not sign them', topology.output, { ...env, AUTHGATE_REDIS_TLS_CA_FILE: other.caFile }, upstream);
});

t.test('Cluster over TLS only, certificates naming a host name, not the addresses', async (t) => {
  const ca = makeCertificateAuthority();
  t.teardown(ca.cleanup);
  // Cluster nodes are handed out by IP address; their certificates name only the service.
  const serverName = 'redis.authgate.test';
  const tls = { caFile: ca.caFile, ...ca.issue('redis', { dns: [serverName] }), serverName };
  const password = 'cluster-password-0123';
  const cluster = await startCluster({ tls, password });
  t.teardown(() => cluster.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env: Env = {
    AUTHGATE_REDIS_CLUSTER_NODES: hostPorts(cluster.nodes),
    AUTHGATE_REDIS_PASSWORD: password,
    AUTHGATE_REDIS_TLS: 'on',
    AUTHGATE_REDIS_TLS_CA_FILE: ca.caFile,
    AUTHGATE_REDIS_TLS_SERVER_NAME: serverName,
  };

  // Two gateways: data and revocations (pub/sub) cross between them over TLS.
  const a = await startGateway(t, { upstream, env });
  const b = await startGateway(t, { upstream, env });
  for (const gw of [a, b]) t.ok(await ready(gw), 'ready on the Cluster over TLS');
  const org = await a.createOrganization();
  const token = await b.login(org.email, org.password);
  const key = await a.createApiKey(token);
  t.equal((await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status, 200, 'a key made on A works on B');
  t.equal((await send(`${a.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 204);
  t.ok(await eventually(async () => (await b.get('/accounts', { authorization: `Bearer ${key.apiKey}` })).status === 401, 5000, 5), 'revoked on B');
  t.notOk(a.logs.text().includes(password), 'no password in the logs');

  const other = makeCertificateAuthority(undefined, 'other-ca');
  t.teardown(other.cleanup);
  await refusedOverTls(t, 'a CA that did not sign them', cluster.output, { ...env, AUTHGATE_REDIS_TLS_CA_FILE: other.caFile }, upstream);
  const { AUTHGATE_REDIS_TLS_SERVER_NAME: _, ...noServerName } = env;
  await refusedOverTls(t, 'certificates checked against 127.0.0.1', cluster.output, noServerName, upstream);
});
