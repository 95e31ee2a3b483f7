import t from 'tap';
import { Agent, request as httpRequest } from 'node:http';
import { createOrganizationAndLogin, startGatewayProcess } from '../helpers/gateway-process.js';
import { eventually } from '../helpers/gateway.js';
import { freePort } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * main.ts listens on AUTHGATE_AUTHZ_PORT when it is set, and drains it on SIGTERM: a proxy's
 * kept-alive idle connection (kept 125 s otherwise) does not hold the exit back.
 */
t.test('the built gateway serves the authorization port, and exits on SIGTERM with a proxy\'s connection kept alive', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const authzPort = await freePort();
  const gw = await startGatewayProcess({ AUTHGATE_UPSTREAM_URL: upstream.url, AUTHGATE_AUTHZ_PORT: String(authzPort), AUTHGATE_AUTHZ_HOST: '127.0.0.1' });
  t.teardown(() => {
    gw.child.kill('SIGKILL');
  });
  t.ok(await eventually(async () => gw.output().includes(`"authzPort":${authzPort}`), 15_000, 20), 'the start line names the port');
  const { token } = await createOrganizationAndLogin(gw, { name: 'Edge', email: 'edge@example.test' });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const ask = () =>
    new Promise<{ status: number; organization: string | undefined }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: authzPort, path: '/authz/auth-request', agent, headers: { 'x-original-method': 'GET', 'x-original-uri': '/accounts', authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, organization: res.headers['x-organization-id'] as string | undefined }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const answer = await ask();
  t.equal(answer.status, 200);
  t.match(answer.organization, /^org_/);
  t.equal((await ask()).status, 200, 'again, on the kept-alive connection');
  gw.child.kill('SIGTERM');
  const exit = await Promise.race([gw.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000).unref())]);
  t.same(exit, { code: 0, signal: null }, 'exit 0, long before the idle timeout would have closed the proxy\'s connection');
});
