/**
 * A percent-encoded unreserved character (RFC 3986 §2.3: `%61` is `a`) is refused before the route
 * table is asked: the table compares raw bytes, so `/%61ccounts` is not `/accounts` to it, while an
 * upstream that decodes reads `/accounts`. Under a public `/` subtree the request would reach the
 * upstream as public, past the credentialed `/accounts` route. Raw bytes on a socket, both ways in
 * (the fast lane hands any `%` path to the framework, whose path guard refuses it).
 */
import t from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { startGateway } from '../helpers/gateway.js';
import { parseResponse, rawRequest, requestText } from '../helpers/raw-http.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts' },
  routes: [
    { id: 'site', path: '/', match: 'subtree', credentials: 'none', methods: { GET: 'public' } },
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read' } },
  ],
};

t.test('encoded unreserved characters never reach the upstream, under a public / subtree', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { upstream, deps: { routes: tableOf(FILE, upstream.url) } });
  const port = Number(new URL(gw.publicUrl).port);

  // The public route itself is forwarded: the refusals below are the guard's, not the table's.
  const plain = await rawRequest(port, requestText('GET', '/about', [['User-Agent', 'test']]));
  t.equal(plain.status, 200, 'a plain public path is forwarded');
  const forwarded = upstream.requests.length;

  for (const target of ['/%61ccounts', '/%41ccounts', '/accounts%2D1', '/a%7Eb', '/%5fx', '/x/%30', '/%2561ccounts']) {
    for (const origin of [[], [['Origin', 'http://elsewhere.example']]] as [string, string][][]) {
      const res = parseResponse((await rawRequest(port, requestText('GET', target, [['User-Agent', 'test'], ...origin]))).raw);
      t.ok(res.status === 404 || res.status === 400, `${target}${origin.length ? ' (framework)' : ''}: refused (${res.status})`);
      t.match(res.headers['content-type'] ?? '', /application\/problem\+json/, `${target}: a problem`);
    }
  }
  t.equal(upstream.requests.length, forwarded, 'the upstream saw none of them');

  // What clients do encode (a space, UTF-8, reserved characters) is still forwarded as it came.
  for (const target of ['/files/a%20b', '/files/%C3%A9', '/files/a%3Fb']) {
    const res = await rawRequest(port, requestText('GET', target, [['User-Agent', 'test']]));
    t.equal(res.status, 200, `${target}: forwarded`);
  }
  t.same(upstream.requests.slice(forwarded).map((r) => r.url), ['/files/a%20b', '/files/%C3%A9', '/files/a%3Fb'], 'as they came');
});
