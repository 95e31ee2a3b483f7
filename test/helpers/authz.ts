import type { Test } from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { startGateway, type StartedGateway } from './gateway.js';
import { tableOf } from './routes.js';
import { startRecordingUpstream } from './upstream.js';

/**
 * Starts a started gateway's authorization port (edge-authz/http-server.ts; the gateway must have
 * been built with AUTHGATE_AUTHZ_PORT set, e.g. '0') on a free loopback port, closed with the
 * gateway; returns its base URL and port.
 */
export async function listenAuthz(gw: StartedGateway, host = '127.0.0.1'): Promise<{ url: string; port: number }> {
  const authz = gw.gateway.authzServer;
  if (authz === undefined) throw new Error('the gateway has no authorization port: build it with AUTHGATE_AUTHZ_PORT set');
  await new Promise<void>((resolve, reject) => authz.server.once('error', reject).listen(0, host, () => resolve()));
  const port = (authz.server.address() as { port: number }).port;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port };
}

/**
 * A gateway on `routes` in front of a recording upstream, its authorization port listening, and
 * an organization's login token and API key: what the authorization port's tests start from.
 */
export async function startAuthzGateway(t: Test, routes: RoutesFile, env: Record<string, string> = {}) {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0', ...env }, upstream, deps: { routes: tableOf(routes, upstream.url) } });
  const authz = await listenAuthz(gw);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = (await gw.createApiKey(token)).apiKey;
  return { gw, authz, token, key };
}
