import type { Server } from 'node:http';

/**
 * A bench server run as a child process: keep-alive above any client's, listening on a free
 * loopback port it reports to the parent, and closing its connections on SIGTERM.
 */
export function serveAsChild(server: Server): void {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    process.send?.({ port: address.port });
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
