import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UA, eventually, send } from '../helpers/gateway.js';
import { createOrganizationAndLogin, startGatewayProcess } from '../helpers/gateway-process.js';
import { freePort, startRedis } from '../helpers/redis.js';
import { makeCertificate } from '../helpers/tls.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

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
