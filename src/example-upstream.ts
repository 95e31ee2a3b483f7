import { createServer, type Server } from 'node:http';

/**
 * A stand-in resource service for development, started by main.ts on loopback when no
 * AUTHGATE_UPSTREAM_URL is set, so the README walk-through works with nothing else installed.
 * It trusts x-organization-id because only the gateway can reach it.
 */
export async function startExampleUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const orgId = request.headers['x-organization-id'];
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (typeof orgId !== 'string') return send(401, { error: 'no organization' });
    if (path === '/organization/me') {
      return send(200, { id: orgId, name: 'Example organization', email: 'owner@example.test', note: 'served by the bundled example upstream' });
    }
    if (path === '/accounts' || path?.startsWith('/accounts/')) {
      return send(200, { accounts: [{ id: 'acc_example_1', organizationId: orgId, currency: 'EUR' }] });
    }
    return send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('example upstream has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
