import type { StartedGateway } from './gateway.js';

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
