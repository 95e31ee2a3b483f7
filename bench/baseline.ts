/**
 * The baseline: a bare reverse proxy. fastify + @fastify/http-proxy with their defaults, no
 * authentication, no logging, no metrics: what authgate's cost is measured against.
 */
import Fastify from 'fastify';
import httpProxy from '@fastify/http-proxy';

const upstream = process.argv[2];
if (upstream === undefined) throw new Error('usage: baseline.js <upstream url>');

const app = Fastify({ logger: false });
await app.register(httpProxy, { upstream, prefix: '/accounts', rewritePrefix: '/accounts' });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('no port');
process.send?.({ port: address.port });
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
