import { connect } from 'node:net';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { startGateway, UA } from '../helpers/gateway.js';

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
