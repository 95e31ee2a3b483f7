/**
 * A reference row of issue 18: the smallest authenticating gateway one can write in Node with
 * the pieces authgate's fast lane uses, to show the floor of that design on this machine. A
 * node:http server, the key service's check (a User-Agent, `Authorization: Bearer <key>`,
 * SHA-256 of the key, one Map lookup of the digest), `x-organization-id` added, and the request
 * sent on through an undici Pool with `dispatch`, its answer streamed back with backpressure.
 * Nothing else: no access line, no metrics, no request id, no scopes, no rate limit, no identity
 * assertion, no hop-by-hop hygiene beyond what the sockets need, no problem bodies.
 *
 * With BENCH_REDIS_URL and BENCH_REDIS_HASH (the `node-gateway-cold` row), the digest is looked
 * up with one HGET per request instead (ioredis with auto-pipelining, as authgate's store has it):
 * the floor of a forwarding core that reads its credential from Redis every time, issue 18's
 * "cache off" target measured without authgate in it.
 *
 * usage: node-gateway.js <upstream url>; BENCH_KEY_DIGESTS as for the key service.
 */
import * as crypto from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { serveAsChild } from './lib/child-server.js';

const upstream = process.argv[2];
if (upstream === undefined) throw new Error('usage: node-gateway.js <upstream url>');
const pairs = JSON.parse(process.env['BENCH_KEY_DIGESTS'] ?? '[]') as [string, string][];
if (pairs.length === 0) throw new Error('node-gateway: BENCH_KEY_DIGESTS names no key');
const organizations = new Map<string, string>(pairs);
const sha256 = (value: string) => crypto.hash('sha256', value, 'base64url');
const redisUrl = process.env['BENCH_REDIS_URL'];
const redisHash = process.env['BENCH_REDIS_HASH'] ?? '';
const redis = redisUrl === undefined ? undefined : new Redis(redisUrl, { enableAutoPipelining: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });

const pool = new Pool(upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 });
const host = new URL(upstream).host;

const server = createServer((request, response) => {
  const headers = request.headers;
  const userAgent = headers['user-agent'];
  if (userAgent === undefined || userAgent === '') {
    response.writeHead(403, { 'content-length': 0 }).end();
    return;
  }
  const authorization = headers.authorization;
  const digest = authorization !== undefined && authorization.startsWith('Bearer ') ? sha256(authorization.slice(7)) : undefined;
  if (redis === undefined || digest === undefined) return forward(request, response, digest === undefined ? undefined : organizations.get(digest));
  redis.hget(redisHash, digest).then(
    (organization) => forward(request, response, organization ?? undefined),
    () => void response.writeHead(503, { 'content-length': 0 }).end(),
  );
});

function forward(request: IncomingMessage, response: ServerResponse, organization: string | undefined): void {
  const headers = request.headers;
  if (organization === undefined) {
    response.writeHead(401, { 'content-length': 0 }).end();
    return;
  }
  const outgoing: IncomingHttpHeaders = { ...headers, host, 'x-organization-id': organization };
  delete outgoing.authorization;
  delete outgoing.connection;
  let gone = false;
  response.once('close', () => {
    gone = !response.writableFinished;
  });
  pool.dispatch(
    { path: request.url ?? '/', method: request.method as 'GET', headers: outgoing as Record<string, string>, body: null },
    {
      onRequestStart() {}, // undici tells its handler APIs apart by this method
      onResponseStart(_c, statusCode, answer) {
        const out = answer as Record<string, string | string[]>;
        delete out['connection'];
        delete out['keep-alive'];
        delete out['transfer-encoding'];
        response.writeHead(statusCode, out);
      },
      onResponseData(c, chunk) {
        if (!gone && !response.write(chunk)) {
          c.pause();
          response.once('drain', () => c.resume());
        }
      },
      onResponseEnd() {
        response.end();
      },
      onResponseError() {
        if (response.headersSent) response.destroy();
        else response.writeHead(502, { 'content-length': 0 }).end();
      },
    },
  );
}

serveAsChild(server);
