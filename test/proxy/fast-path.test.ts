import { connect, createConnection, createServer as createNetServer, type Socket } from 'node:net';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { send, startGateway, UA } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw-http.js';
import { redisCommand, startRedis } from '../helpers/redis.js';

/**
 * The fast lane (proxy/fast-path.ts) over real sockets: it answers as fastify's path does (same
 * upstream request, same answer headers, same metrics and access line), the upstream request goes
 * when the client does, whenever it goes, and the gateway still closes.
 */

async function heldUpstream(t: Test) {
  const seen: { request: IncomingMessage; closedEarly: Promise<boolean> }[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const server = createServer((request, response) => {
    const closedEarly = new Promise<boolean>((resolve) => response.once('close', () => resolve(!response.writableFinished)));
    if (!/held|gone/.test(request.url ?? '')) return void response.end('{}');
    seen.push({ request, closedEarly });
    void held.then(() => {
      if (!response.destroyed) response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    release();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, release };
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A relay to Redis that, once armed, holds the connection's traffic from the first chunk with an
 * HGET in it (and everything after it, so the stream stays in order) until released: a credential
 * read under way for as long as a test needs, while everything sent before it has its answers.
 */
async function holdingRelay(t: Test, redisPort: number) {
  let armed = false;
  let holding = false;
  let held: { upstream: Socket; chunk: Buffer }[] = [];
  let reads = 0;
  const server = createNetServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: redisPort });
    for (const socket of [client, upstream]) socket.on('error', () => {});
    client.on('data', (chunk: Buffer) => {
      const hgets = chunk.toString('latin1').match(/hget/gi)?.length ?? 0;
      reads += hgets;
      if (armed && hgets > 0) holding = true;
      if (holding) held.push({ upstream, chunk });
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.close();
    for (const { upstream } of held) upstream.destroy();
  });
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get reads() {
      return reads;
    },
    arm: () => void (armed = true),
    release() {
      armed = holding = false;
      for (const { upstream, chunk } of held) upstream.write(chunk);
      held = [];
    },
  };
}

t.test('the client gone while the upstream holds its answer: the upstream request goes too, and the gateway closes', async (t) => {
  const upstream = await heldUpstream(t);
  const gw = await startGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  // Warm: the key cached and its assertion signed, so what follows takes the fast lane.
  t.equal((await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` })).status, 200);
  const port = Number(new URL(gw.publicUrl).port);

  const before = upstream.seen.length;
  const socket = connect(port, '127.0.0.1');
  socket.write(`GET /accounts/held HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
  await until('the request at the upstream', () => upstream.seen.length > before);
  socket.destroy();
  t.equal(await upstream.seen[before]!.closedEarly, true, 'the upstream request was aborted before its answer');

  // Gone before the request even left: many clients that write a request and vanish at once.
  // (The bytes after the request are no request: node answers 400 and closes the connection while
  // the forwarded request may still be on its way. The run with valid credentials in
  // test/e2e/fuzz.test.ts is what found a lane that waited forever for such a client's drain.)
  const seenBefore = upstream.seen.length;
  for (let i = 0; i < 50; i++) {
    const quick = connect(port, '127.0.0.1');
    quick.on('error', () => {});
    quick.end(`GET /accounts/gone-${i} HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nAuthorization: Bearer ${apiKey}\r\n\r\nnot a request\r\n\r\n`);
  }
  await until('some of them at the upstream', () => upstream.seen.length > seenBefore + 5);
  upstream.release();
  const closing = gw.gateway.close().then(() => 'closed');
  const bound = new Promise((resolve) => setTimeout(() => resolve('still open'), 15_000).unref());
  t.equal(await Promise.race([closing, bound]), 'closed', 'nothing left hanging: the gateway closes');
});

t.test('the fast lane answers as the framework does: the same upstream request, answer headers, metrics and access line', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_RATE_LIMIT: '1000/60s' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  // Warm: the key cached and its assertion signed (the first request goes the framework's way).
  await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` });

  const over = await gw.get('/accounts/fast?x=1', { authorization: `Bearer ${apiKey}`, 'x-request-id': 'fast-1' });
  const framework = await gw.gateway.publicServer.inject({ method: 'GET', url: '/accounts/fast?x=1', headers: { ...UA, authorization: `Bearer ${apiKey}`, 'x-request-id': 'slow-1' } });
  t.equal(over.status, 200);
  t.equal(framework.statusCode, 200);
  const upstreamOf = (id: string) => gw.upstream.requests.find((r) => r.headers['x-request-id'] === id)!;
  const fast = upstreamOf('fast-1');
  const slow = upstreamOf('slow-1');
  t.same(Object.keys(fast.headers).sort(), Object.keys(slow.headers).sort(), 'the same headers reach the upstream');
  for (const name of ['x-organization-id', 'x-organization-scopes', 'x-forwarded-proto', 'user-agent', 'host']) t.equal(fast.headers[name], slow.headers[name], name);
  t.equal(fast.headers['x-authgate-identity'], slow.headers['x-authgate-identity'], 'the same kept assertion');
  t.equal(fast.url, '/accounts/fast?x=1');
  const shown = (headers: Record<string, unknown>) => Object.keys(headers).filter((n) => !['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(n)).sort();
  t.same(shown(over.headers), shown(framework.headers), 'the same answer headers');
  t.equal(over.headers['x-request-id'], 'fast-1');
  t.match(over.headers['ratelimit'], /^"credential";r=\d+;t=\d+$/);
  t.equal(over.headers['ratelimit-policy'], '"credential";q=1000;w=60');

  // A header the client's Connection names is hop-by-hop: it stays on the client's side.
  await gw.get('/accounts/named', { authorization: `Bearer ${apiKey}`, 'x-request-id': 'fast-2', connection: 'keep-alive, x-named', 'x-named': 'hop' });
  const named = upstreamOf('fast-2');
  t.equal(named.headers['x-named'], undefined, 'a header named by Connection is not forwarded');
  t.equal(named.headers['connection'], 'keep-alive', "the upstream connection's own Connection, not the client's");

  const lines = gw.logs.records().filter((line) => line['reqId'] === 'fast-1');
  t.match(lines, [{ msg: 'request', method: 'GET', route: '/accounts/*', status: 200, orgId: org.id, credentialKind: 'api_key' }], 'its access line');
  const counted = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_http_requests_total');
  t.match(counted, /route="\/accounts\/\*",status_code="200"[^}]*\} ([3-9]|\d{2,})/, 'counted under its route');
});

/** How many requests the fast lane took, from the gateway's own metric. */
async function laneTaken(gw: Awaited<ReturnType<typeof startGateway>>): Promise<number> {
  const text = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_fast_lane_requests_total');
  let total = 0;
  for (const match of text.matchAll(/^authgate_fast_lane_requests_total\{[^}]*\} (\d+)$/gm)) total += Number(match[1]);
  return total;
}

t.test('writes take the lane: bodies stream whole to the upstream, with a length or chunked, and answer as the framework does', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  const auth = { ...UA, authorization: `Bearer ${apiKey}` };
  await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` }); // cached, assertion signed
  const upstreamOf = (id: string) => gw.upstream.requests.find((r) => r.headers['x-request-id'] === id)!;

  const before = await laneTaken(gw);
  const json = JSON.stringify({ name: 'ünïcode ✓', amount: 12 });
  const posted = await send(`${gw.publicUrl}/accounts/created?x=1`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), 'x-request-id': 'post-1' }, body: json });
  t.equal(posted.status, 201, "the upstream's status");
  t.equal(await laneTaken(gw), before + 1, 'the fast lane took it');
  const upstreamPost = upstreamOf('post-1');
  t.equal(upstreamPost.method, 'POST');
  t.equal(upstreamPost.url, '/accounts/created?x=1');
  t.equal(upstreamPost.body, json, 'the body, whole and unchanged');
  t.equal(upstreamPost.headers['content-type'], 'application/json');
  t.equal(upstreamPost.headers['content-length'], String(Buffer.byteLength(json)));
  t.equal(upstreamPost.headers['authorization'], undefined, 'never the credential');

  // The framework's answer to the same request: the same upstream request, the same answer.
  const framework = await gw.gateway.publicServer.inject({ method: 'POST', url: '/accounts/created?x=1', headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'post-2' }, payload: json });
  t.equal(framework.statusCode, 201);
  const upstreamFramework = upstreamOf('post-2');
  t.same(Object.keys(upstreamPost.headers).sort(), Object.keys(upstreamFramework.headers).sort(), 'the same headers reach the upstream');
  t.equal(upstreamFramework.body, json);
  const shown = (headers: Record<string, unknown>) => Object.keys(headers).filter((n) => !['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(n)).sort();
  t.same(shown(posted.headers), shown(framework.headers), 'the same answer headers');

  // Chunked, from a raw socket: whole at the upstream, framed by undici (chunked while the body is
  // still coming; with its length when the body had all arrived before the request left).
  const chunked = `PUT /accounts/acc_1 HTTP/1.1\r\nHost: gw\r\nUser-Agent: t\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nX-Request-Id: put-1\r\nConnection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n`;
  const put = await rawRequest(Number(new URL(gw.publicUrl).port), chunked);
  t.equal(put.status, 200);
  t.equal(upstreamOf('put-1').body, 'hello world');
  const framing = upstreamOf('put-1').headers;
  t.ok(framing['transfer-encoding'] === 'chunked' || framing['content-length'] === '11', `framed: ${framing['transfer-encoding'] ?? framing['content-length']}`);
  t.equal(await laneTaken(gw), before + 2, 'the fast lane took the chunked PUT');

  // A DELETE without a body, and an OPTIONS without Origin (not a preflight): forwarded too.
  const deleted = await send(`${gw.publicUrl}/accounts/acc_1`, { method: 'DELETE', headers: { ...auth, 'x-request-id': 'delete-1' } });
  t.equal(deleted.status, 200);
  t.equal(upstreamOf('delete-1').body, '');
  const options = await send(`${gw.publicUrl}/accounts`, { method: 'OPTIONS', headers: { ...auth, 'x-request-id': 'options-1' } });
  t.equal(options.status, 200);
  t.equal(upstreamOf('options-1').method, 'OPTIONS');
  t.equal(await laneTaken(gw), before + 4);

  // What the lane leaves to the framework: a method the route does not forward, a GET with a body, Expect.
  const notForwarded = await send(`${gw.publicUrl}/organization/me`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
  t.equal(notForwarded.status, 405, "a method the route does not forward: the framework's 405");
  const getWithBody = await send(`${gw.publicUrl}/accounts`, { method: 'GET', headers: { ...auth, 'content-type': 'text/plain', 'content-length': 2 }, body: 'hi' });
  t.equal(getWithBody.status, 200);
  // A transfer coding other than plain chunked: the framework's 400, never forwarded.
  const forwarded = gw.upstream.requests.length;
  const gzipped = await rawRequest(Number(new URL(gw.publicUrl).port), `POST /accounts HTTP/1.1\r\nHost: gw\r\nUser-Agent: t\r\nAuthorization: Bearer ${apiKey}\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`, 20_000);
  t.equal(gzipped.status, 400, 'Transfer-Encoding: gzip, chunked is refused');
  t.equal(gw.upstream.requests.length, forwarded, 'and not forwarded');
  t.equal(await laneTaken(gw), before + 4, 'none of them took the lane');

  // A key whose scopes do not cover writes: refused by the framework (403), never forwarded.
  const readOnly = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'] }) });
  const readKey = JSON.parse(readOnly.body).apiKey as string;
  await gw.get('/accounts/warm', { authorization: `Bearer ${readKey}` });
  const count = gw.upstream.requests.length;
  const refused = await send(`${gw.publicUrl}/accounts`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${readKey}`, 'content-type': 'application/json' }, body: '{}' });
  t.equal(refused.status, 403);
  t.equal(gw.upstream.requests.length, count, 'nothing reached the upstream');
});

t.test('a large body streams through the lane with backpressure, and a client gone mid-body takes the upstream request with it', async (t) => {
  // An upstream that reads slowly: the gateway may not buffer the body, it must wait for it.
  const received: { length: number; done: boolean; aborted: boolean }[] = [];
  const server = createServer((request, response) => {
    const entry = { length: 0, done: false, aborted: false };
    received.push(entry);
    request.on('data', (chunk: Buffer) => {
      entry.length += chunk.length;
      request.pause();
      setTimeout(() => request.resume(), 1);
    });
    request.on('aborted', () => (entry.aborted = true));
    request.on('close', () => {
      if (!entry.done && request.readableEnded === false) entry.aborted = true;
    });
    request.on('end', () => {
      entry.done = true;
      response.end(JSON.stringify({ length: entry.length }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const gw = await startGateway(t, { env: { AUTHGATE_UPSTREAM_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` });
  const before = await laneTaken(gw);

  const size = 4 * 1024 * 1024;
  const body = Buffer.alloc(size, 'a');
  const answer = await send(`${gw.publicUrl}/accounts/upload`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${apiKey}`, 'content-type': 'application/octet-stream', 'content-length': size }, body });
  t.equal(answer.status, 200);
  t.same(JSON.parse(answer.body), { length: size }, 'every byte reached the upstream');
  t.equal(await laneTaken(gw), before + 1, 'through the fast lane');

  // Half a body, then the client goes: the upstream request is aborted, and it is no upstream error.
  const port = Number(new URL(gw.publicUrl).port);
  const socket = connect(port, '127.0.0.1');
  socket.write(`POST /accounts/upload HTTP/1.1\r\nHost: gw\r\nUser-Agent: t\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`);
  socket.write(Buffer.alloc(64 * 1024, 'b'));
  const index = received.length;
  await until('the upstream receiving the body', () => received[index] !== undefined && received[index]!.length > 0);
  socket.destroy();
  await until('the upstream request aborted', () => received[index]!.aborted);
  t.equal(received[index]!.done, false, 'the upstream never saw a whole body');
  const errors = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_upstream_errors_total');
  t.notMatch(errors, /authgate_upstream_errors_total\{[^}]*\} [1-9]/, 'a client that went is not an upstream error');
  t.equal(await laneTaken(gw), before + 2);

  // The same on the framework's way (an Origin keeps a request off the lane): no upstream error either.
  const framed = connect(port, '127.0.0.1');
  framed.write(`POST /accounts/upload HTTP/1.1\r\nHost: gw\r\nUser-Agent: t\r\nOrigin: https://app.example.test\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`);
  framed.write(Buffer.alloc(64 * 1024, 'c'));
  const second = index + 1;
  await until('the upstream receiving the second body', () => received[second] !== undefined && received[second]!.length > 0);
  framed.destroy();
  await until('the second upstream request aborted', () => received[second]!.aborted);
  t.equal(await laneTaken(gw), before + 2, 'that one went the framework way');
  // As above: undici fails the request (and the gateway hears of it) before the upstream sees its socket go.
  const afterFramework = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_upstream_errors_total');
  t.notMatch(afterFramework, /authgate_upstream_errors_total\{[^}]*\} [1-9]/, 'nor on the framework way');
});

t.test('behind trusted proxies the lane sends the X-Forwarded-* the framework computes', async (t) => {
  for (const trust of ['1', '127.0.0.1/8', 'true']) {
    await t.test(`AUTHGATE_TRUST_PROXY=${trust}`, async (t) => {
      const gw = await startGateway(t, { env: { AUTHGATE_TRUST_PROXY: trust } });
      const org = await gw.createOrganization();
      const token = await gw.login(org.email, org.password);
      const { apiKey } = await gw.createApiKey(token);
      await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` });
      const claims = { 'x-forwarded-for': '203.0.113.7, 198.51.100.2', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.test' };
      const before = await laneTaken(gw);
      const fast = await gw.get('/accounts/fwd', { authorization: `Bearer ${apiKey}`, 'x-request-id': 'fwd-fast', ...claims });
      t.equal(fast.status, 200);
      t.equal(await laneTaken(gw), before + 1, 'the fast lane took it');
      const framework = await gw.gateway.publicServer.inject({ method: 'GET', url: '/accounts/fwd', headers: { ...UA, authorization: `Bearer ${apiKey}`, 'x-request-id': 'fwd-framework', ...claims } });
      t.equal(framework.statusCode, 200);
      const upstreamOf = (id: string) => gw.upstream.requests.find((r) => r.headers['x-request-id'] === id)!;
      for (const name of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']) {
        t.equal(upstreamOf('fwd-fast').headers[name], upstreamOf('fwd-framework').headers[name], name);
      }
      t.equal(upstreamOf('fwd-fast').headers['x-forwarded-proto'], 'https', 'the trusted proxy said https');
      t.equal(upstreamOf('fwd-fast').headers['x-forwarded-host'], 'api.example.test');
      t.match(upstreamOf('fwd-fast').headers['x-forwarded-for'], /^(203\.0\.113\.7|198\.51\.100\.2), .*127\.0\.0\.1$|^198\.51\.100\.2, 127\.0\.0\.1$/);
    });
  }
});

t.test('a cache miss takes the lane after one store read; a request refused after that read costs no second one', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const relay = await holdingRelay(t, redis.port);
  // The cache off: every request reads its credential from Redis (the bench's "cache off" row).
  const gw = await startGateway(t, { env: { AUTHGATE_REDIS_URL: relay.url, AUTHGATE_CACHE_MAX: '0' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` }); // its assertion signed
  const reads = async () => Number(/cmdstat_hget:calls=(\d+)/.exec(String(await redisCommand(redis.port, 'INFO', 'commandstats')))?.[1] ?? 0);

  // A parallel burst, each a miss: all through the lane, one HGET each.
  let before = await reads();
  const taken = await laneTaken(gw);
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => gw.get(`/accounts/miss-${i}`, { authorization: `Bearer ${apiKey}` })));
  t.same(answers.map((a) => a.status), answers.map(() => 200));
  t.equal(await laneTaken(gw), taken + 40, 'the fast lane took every miss');
  t.equal((await reads()) - before, 40, 'one store read per request');
  const logged = new Set(gw.logs.records().filter((line) => line['msg'] === 'request' && line['route'] === '/accounts/*' && line['status'] === 200).map((line) => line['reqId']));
  t.ok(answers.every((a) => logged.has(a.headers['x-request-id'])), 'each with its access line');

  // Refused after its read: a read-only key writing (403), an unknown key (401). Never forwarded,
  // and the framework answers with the lane's read, not one of its own.
  const readOnly = JSON.parse((await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'] }) })).body).apiKey as string;
  const forwarded = gw.upstream.requests.length;
  before = await reads();
  const refused = await send(`${gw.publicUrl}/accounts`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' }, body: '{}' });
  t.equal(refused.status, 403);
  t.equal(JSON.parse(refused.body).code, 1106, 'insufficient scope');
  t.equal((await reads()) - before, 1, 'the 403 cost one store read');
  const deleted = await gw.createApiKey(token);
  t.equal((await send(`${gw.publicUrl}/auth/api-key/${deleted.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } })).status < 300, true, 'a key deleted');
  before = await reads();
  const denied = await gw.get('/accounts', { authorization: `Bearer ${deleted.apiKey}` });
  t.equal(denied.status, 401);
  t.equal(JSON.parse(denied.body).code, 1102, 'invalid credential');
  t.equal((await reads()) - before, 1, 'the 401 cost one store read');
  t.equal(gw.upstream.requests.length, forwarded, 'neither reached the upstream');

  // The read held, and the client gone meanwhile: nothing reaches the upstream
  // for it once the store answers, and nothing is left hanging.
  const port = Number(new URL(gw.publicUrl).port);
  const beforeGone = gw.upstream.requests.length;
  // The gateway's side of this client's connection, to see when the gateway has seen it go.
  const accepted: { serverSide: Socket; clientPort: number | undefined }[] = [];
  const onConnection = (serverSide: Socket) => void accepted.push({ serverSide, clientPort: serverSide.remotePort });
  gw.gateway.publicServer.server.on('connection', onConnection);
  t.teardown(() => void gw.gateway.publicServer.server.off('connection', onConnection));
  relay.arm();
  const sent = relay.reads;
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(`GET /accounts/gone HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
  await until('the read sent', () => relay.reads > sent);
  const localPort = socket.localPort;
  socket.destroy();
  await until('the gateway seeing the client go', () => accepted.some((a) => a.clientPort === localPort && a.serverSide.destroyed));
  relay.release();
  const after = await gw.get('/accounts/after', { authorization: `Bearer ${apiKey}` });
  t.equal(after.status, 200, 'the store answers again');
  t.notOk(gw.upstream.requests.slice(beforeGone).some((r) => r.url === '/accounts/gone'), 'the gone client\'s request was not forwarded');

  // The store not answering: the lane hands its failure to the framework, which answers 503.
  redis.pause();
  const unavailable = await gw.get('/accounts/down', { authorization: `Bearer ${apiKey}` });
  redis.resume();
  t.equal(unavailable.status, 503);
  t.equal(JSON.parse(unavailable.body).code, 1503, 'credential store unavailable');
});

t.test('shutdown begun while the lane reads a credential: the request is in flight, and answered as such', async (t) => {
  // One gateway per case (a gateway closes once): a request the lane forwards after its read, and
  // one it hands to the framework after it (a read-only key writing: 403).
  for (const kind of ['forwarded', 'refused'] as const) {
    await t.test(kind, async (t) => {
      const redis = await startRedis();
      t.teardown(() => redis.stop());
      const relay = await holdingRelay(t, redis.port);
      // The read waits for the test to release it, never for its timeout.
      const gw = await startGateway(t, { env: { AUTHGATE_REDIS_URL: relay.url, AUTHGATE_CACHE_MAX: '0', AUTHGATE_REDIS_TIMEOUT_MS: '60000' } });
      const org = await gw.createOrganization();
      const token = await gw.login(org.email, org.password);
      const { apiKey } = await gw.createApiKey(token);
      const readOnly = JSON.parse((await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'] }) })).body).apiKey as string;
      await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` }); // its assertion signed
      const port = Number(new URL(gw.publicUrl).port);

      relay.arm();
      const sent = relay.reads;
      const answering =
        kind === 'forwarded'
          ? gw.get('/accounts/in-flight', { authorization: `Bearer ${apiKey}`, 'x-request-id': 'in-flight-1' })
          : send(`${gw.publicUrl}/accounts`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' }, body: '{}' });
      await until('the read sent', () => relay.reads > sent);
      const closed = gw.gateway.close();
      // close() has begun once the listener is gone: a new connection is refused.
      for (const deadline = Date.now() + 20_000; ; ) {
        const refusedConnect = await new Promise<boolean>((resolve) => {
          const probe = connect(port, '127.0.0.1');
          probe.once('connect', () => (probe.destroy(), resolve(false)));
          probe.once('error', () => resolve(true));
        });
        if (refusedConnect) break;
        if (Date.now() > deadline) throw new Error('timed out waiting for the gateway to start closing');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      relay.release();
      const answer = await answering;
      if (kind === 'forwarded') {
        t.equal(answer.status, 200, `served (${answer.body.slice(0, 120)})`);
        t.ok(gw.upstream.requests.some((r) => r.headers['x-request-id'] === 'in-flight-1'), 'and it reached the upstream');
      } else {
        t.equal(answer.status, 403, `its own answer, not the shutdown 503 (${answer.body.slice(0, 120)})`);
        t.equal(JSON.parse(answer.body).code, 1106);
      }
      await closed;
    });
  }
});
