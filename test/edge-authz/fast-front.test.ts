import t, { type Test } from 'tap';
import type { AddressInfo, Socket } from 'node:net';
import { createServer } from 'node:http';
import { createFastFront } from '../../src/edge-authz/fast-front.js';
import { simpleHeadEnd, startsAt } from '../../src/edge-authz/simple-head.js';
import { isSimpleHeadBytes, parseSimpleHead } from '../helpers/simple-head-reference.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { listenAuthz } from '../helpers/authz.js';
import { startGateway, send, UA, type StartedGateway } from '../helpers/gateway.js';
import { openRaw } from '../helpers/raw-http.js';
import { startRedis } from '../helpers/redis.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * The authorization port's fast front (edge-authz/fast-front.ts, hand-written for speed): the
 * bytes it writes are node's path's own, byte for byte but the Date value (node's path: the same
 * gateway's node server listening on a port of its own); every request it does not take is handed
 * to node's server and answered exactly as node answers it, in order with what it did take.
 */

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts' },
  routes: [{ id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } }],
};

/** The answers' bytes but what may differ between two sends of one request: the Date value and a refusal's random request id. */
const masked = (text: string) => text.replace(/\r\nDate: [^\r]+\r\n/g, '\r\nDate: <date>\r\n').replace(/\r\nx-request-id: [0-9a-f-]{36}\r\n/g, '\r\nx-request-id: <id>\r\n');

/** The length of the first `count` whole answers in `text` (heads and Content-Length bodies; none for HEAD), or -1. */
function answersLength(text: string, count: number, heads: readonly boolean[] = []): number {
  let at = 0;
  for (let i = 0; i < count; i++) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end === -1) return -1;
    const length = heads[i] === true ? 0 : Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(at, end))?.[1] ?? 0);
    if (text.length < end + 4 + length) return -1;
    at = end + 4 + length;
  }
  return at;
}

type Setup = Readonly<{ gw: StartedGateway; front: number; node: number; requests: () => number; handedOff: () => number; key: string; token: string; readOnly: string; limited: string }>;

async function setup(t: Test, env: Record<string, string> = {}): Promise<Setup> {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env: { AUTHGATE_AUTHZ_PORT: '0', ...env }, upstream, deps: { routes: tableOf(FILE, upstream.url) } });
  const front = (await listenAuthz(gw)).port;
  // node's path, as the port answered before the fast front: the same server, listening on its own.
  const http = gw.gateway.authzServer!.http;
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))));
  let requests = 0;
  let handedOff = 0;
  http.on('request', () => requests++);
  http.on('connection', () => handedOff++);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = (await gw.createApiKey(token)).apiKey;
  const make = async (body: object) => {
    const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json().apiKey as string;
  };
  const readOnly = await make({ scopes: ['accounts:read'] });
  const limited = await make({ scopes: ['accounts:read'], rateLimit: '2/1h' });
  return { gw, front, node: (http.address() as AddressInfo).port, requests: () => requests, handedOff: () => handedOff, key, token, readOnly, limited };
}

/** Writes `chunks` on one connection (each once the previous is written) and returns the first `count` answers' bytes; `closes`: also waits for the server to end the connection. */
async function exchange(port: number, chunks: readonly string[], count: number, options: { heads?: boolean[]; closes?: boolean } = {}): Promise<string> {
  const c = await openRaw(port);
  try {
    for (const chunk of chunks) c.write(chunk);
    const whole = await c.until((text) => answersLength(text, count, options.heads) !== -1, 8000);
    if (!whole) throw new Error(`not ${count} answer(s) within 8 s; so far: ${JSON.stringify(c.received())}`);
    if (options.closes === true && !(await c.closedWithin(5000))) throw new Error('the connection stayed open');
    return c.received();
  } finally {
    c.destroy();
  }
}

const check = (credential: string | undefined, method: string, uri: string) =>
  `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: ${method}\r\nX-Original-URI: ${uri}\r\nX-Real-IP: 203.0.113.9\r\n${credential === undefined ? '' : `Authorization: Bearer ${credential}\r\n`}\r\n`;
const forward = (credential: string | undefined, method: string, uri: string) =>
  `GET /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: ${method}\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: api.example.test\r\nX-Forwarded-Uri: ${uri}\r\nX-Forwarded-For: 198.51.100.7\r\n${credential === undefined ? '' : `Authorization: Bearer ${credential}\r\n`}\r\n`;
const envoy = (credential: string | undefined, method: string, uri: string) =>
  `${method} /authz/ext-authz${uri} HTTP/1.1\r\nHost: api.example.test\r\nx-request-id: 0f9e1d2c-3b4a-5968-7766-554433221100\r\n${credential === undefined ? '' : `Authorization: Bearer ${credential}\r\n`}\r\n`;
/** Envoy's check as Envoy sends it: with `Content-Length: 0` (research/forward-auth.md), taken by the front too. */
const envoyAsSent = (credential: string | undefined, method: string, uri: string) => envoy(credential, method, uri).replace('\r\n\r\n', '\r\nContent-Length: 0\r\n\r\n');
const PROTOCOLS = { 'nginx auth_request': check, 'Traefik/Caddy forward-auth': forward, 'Envoy ext_authz': envoy, 'Envoy ext_authz, Content-Length: 0': envoyAsSent } as const;

/** The same request to the front and to node's path: the same bytes, and the front took it (node saw no request). */
async function same(t: Test, s: Setup, name: string, text: string, options: { heads?: boolean[]; count?: number } = {}): Promise<string> {
  const before = s.requests();
  const count = options.count ?? 1;
  const fromFront = await exchange(s.front, [text], count, options);
  t.equal(s.requests(), before, `${name}: taken by the front`);
  const fromNode = await exchange(s.node, [text], count, options);
  t.equal(masked(fromFront), masked(fromNode), `${name}: node's bytes`);
  return fromFront;
}

t.test('parseSimpleHead: only a strictly simple head is taken', async (t) => {
  const socket = { remoteAddress: '127.0.0.1' };
  const taken = parseSimpleHead('GET /authz/auth-request?x=%20 HTTP/1.1\r\nHost: a\r\nX-Original-URI:  /a\tb \t\r\nconnection: Keep-Alive\r\nX-Empty:\r\n', socket);
  t.same(
    taken,
    {
      method: 'GET',
      url: '/authz/auth-request?x=%20',
      headers: { host: 'a', 'x-original-uri': '/a\tb', connection: 'Keep-Alive', 'x-empty': '' },
      rawHeaders: ['Host', 'a', 'X-Original-URI', '/a\tb', 'connection', 'Keep-Alive', 'X-Empty', ''],
      socket,
    },
    'names lower-cased, optional whitespace trimmed, HTAB kept inside a value',
  );
  const line = 'GET /authz/forward-auth HTTP/1.1\r\n';
  const host = 'Host: a\r\n';
  const notTaken: Record<string, string> = {
    'HTTP/1.0': `GET /x HTTP/1.0\r\n${host}`,
    'HTTP/1.1 in lower case': `GET /x http/1.1\r\n${host}`,
    'a method in lower case': `get /x HTTP/1.1\r\n${host}`,
    'a method node does not know': `BREW /x HTTP/1.1\r\n${host}`,
    'an asterisk target': `OPTIONS * HTTP/1.1\r\n${host}`,
    'an absolute target': `GET http://a/x HTTP/1.1\r\n${host}`,
    'HTAB in the target': `GET /x\ty HTTP/1.1\r\n${host}`,
    'two spaces': `GET  /x HTTP/1.1\r\n${host}`,
    'no Host': `${line}X-A: b\r\n`,
    'no header at all': line,
    'Host twice': `${line}${host}${host}`,
    'Authorization twice': `${line}${host}Authorization: Bearer a\r\nauthorization: Bearer b\r\n`,
    'an inherited name': `${line}${host}constructor: x\r\n`,
    'Content-Length other than 0': `${line}${host}Content-Length: 5\r\n`,
    'Content-Length: 00': `${line}${host}Content-Length: 00\r\n`,
    'Transfer-Encoding': `${line}${host}Transfer-Encoding: chunked\r\n`,
    Expect: `${line}${host}Expect: 100-continue\r\n`,
    Upgrade: `${line}${host}Upgrade: websocket\r\n`,
    'Connection: close': `${line}${host}Connection: close\r\n`,
    'Connection: keep-alive, Upgrade': `${line}${host}Connection: keep-alive, Upgrade\r\n`,
    'an obs-fold': `${line}${host}X-A: b\r\n c\r\n`,
    'a bare LF': `${line}${host}X-A: b\nX-B: c\r\n`,
    'a bare CR': `${line}${host}X-A: b\rc\r\n`,
    'a NUL': `${line}${host}X-A: b\x00\r\n`,
    DEL: `${line}${host}X-A: b\x7f\r\n`,
    'a byte beyond ASCII': `${line}${host}X-A: caf\xe9\r\n`,
    'whitespace before the colon': `${line}${host}X-A : b\r\n`,
    'no colon': `${line}${host}X-A b\r\n`,
    'an empty name': `${line}${host}: b\r\n`,
    'a name that is no token': `${line}${host}X(A): b\r\n`,
    'a leading empty line': `\r\n${line}${host}`,
    'too many headers': `${line}${host}${Array.from({ length: 64 }, (_, i) => `X-${i}: v\r\n`).join('')}`,
  };
  for (const [name, text] of Object.entries(notTaken)) t.equal(parseSimpleHead(text, socket), undefined, `not taken: ${name}`);
});

t.test('parseSimpleHead: names known from the head before are read as they are sent, whatever the order', async (t) => {
  const socket = { remoteAddress: '127.0.0.1' };
  // What the head says, read the plain way: every name lower-cased, every value trimmed.
  const reference = (lines: ReadonlyArray<readonly [string, string]>) => ({
    headers: Object.fromEntries(lines.map(([name, value]) => [name.toLowerCase(), value.trim()])),
    rawHeaders: lines.flatMap(([name, value]) => [name, value.trim()]),
  });
  const heads: Array<Array<[string, string]>> = [
    [['Host', 'a'], ['X-Original-Method', 'GET'], ['X-Original-URI', '/a'], ['Authorization', 'Bearer k']],
    [['Host', 'a'], ['X-Original-Method', 'POST'], ['X-Original-URI', '/b'], ['Authorization', 'Bearer k']],
    // Another order, a longer name that starts as the known one, another case, a name the known one starts.
    [['X-Original-Method', 'GET'], ['Host', 'b'], ['X-Original-URI-X', '/c'], ['authorization', 'Bearer j']],
    [['Hos', 'x'], ['Host', 'c'], ['X-Original-U', '/d'], ['AUTHORIZATION', 'Bearer i'], ['X-Extra', ' 1 ']],
    [['Host', 'a'], ['X-Original-Method', 'GET'], ['X-Original-URI', '/a'], ['Authorization', 'Bearer k']],
    [['host', 'd'], ['x-original-method', 'GET']],
  ];
  for (const lines of heads) {
    const text = `GET /authz/auth-request HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}\r\n`).join('')}`;
    const taken = parseSimpleHead(text, socket);
    t.same(taken && { headers: taken.headers, rawHeaders: taken.rawHeaders }, reference(lines), JSON.stringify(lines.map(([name]) => name)));
  }
  // A known name followed by anything but its colon is read in full, and refused where it must be.
  parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-A: b\r\n', socket);
  t.equal(parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-A : b\r\n', socket), undefined, 'whitespace before the colon');
  t.equal(parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-A(: b\r\n', socket), undefined, 'a name that is no token');
  t.equal(parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-A\r\n', socket), undefined, 'no colon');
  t.equal(parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nhost: b\r\n', socket), undefined, 'a known name twice in another case');
});

t.test('isSimpleHeadBytes: the same answer as the scan of the text it replaces on the front\'s path', async (t) => {
  // parseSimpleHead's own check of a text (the specification of the byte scan).
  const re = /[^\t\r\n\x20-\x7e]|\r(?!\n)|(?<!\r)\n/;
  const base = 'GET /x HTTP/1.1\r\nHost: a\r\nX-A: b\tc d\r\n';
  const texts = [base, '', '\r\n', '\r', '\n', '\n\r', 'a\r\r\n', 'a\r\n\n', 'a\r\nb\r'];
  // Every byte value at the start, in a value, before a CR, after a LF and at the very end.
  for (let c = 0; c < 256; c++) {
    const ch = String.fromCharCode(c);
    for (const at of [0, 20, base.length - 2, base.length - 1, base.length]) texts.push(base.slice(0, at) + ch + base.slice(at));
  }
  let checked = 0;
  for (const text of texts) {
    const bytes = Buffer.from(`..${text}..`, 'latin1');
    // Within a larger buffer, as the front reads a head out of a chunk.
    t.equal(isSimpleHeadBytes(bytes, 2, bytes.length - 2), !re.test(text), JSON.stringify(text));
    checked++;
  }
  t.ok(checked > 1000);
});

t.test('taken requests: node\'s bytes for allow, 401, 403, 404, 405, 429 and 400, on every protocol', async (t) => {
  for (const env of [{}, { AUTHGATE_AUTHZ_CACHE_SECONDS: '2' }] as Array<Record<string, string>>) {
    const s = await setup(t, env);
    const label = env['AUTHGATE_AUTHZ_CACHE_SECONDS'] === undefined ? 'no-store' : 'max-age';
    for (const [protocol, make] of Object.entries(PROTOCOLS)) {
      const n = `${protocol}, ${label}`;
      for (const [kind, credential] of [['API key', s.key], ['login token', s.token]] as const) {
        // The first answer (made now) and a kept one: the same bytes from both paths.
        for (const round of ['first', 'kept']) t.match(await same(t, s, `${n}, ${kind}, allow (${round})`, make(credential, 'GET', '/accounts/7?q=1')), /^HTTP\/1\.1 200 OK\r\n/);
      }
      t.match(await same(t, s, `${n}, 401`, make(undefined, 'GET', '/accounts')), /^HTTP\/1\.1 401 /);
      t.match(await same(t, s, `${n}, 401 bad key`, make('ag_nope', 'GET', '/accounts')), /^HTTP\/1\.1 401 /);
      t.match(await same(t, s, `${n}, 403`, make(s.readOnly, 'POST', '/accounts')), /^HTTP\/1\.1 403 /);
      t.match(await same(t, s, `${n}, 404`, make(s.key, 'GET', '/elsewhere')), /^HTTP\/1\.1 404 /);
      t.match(await same(t, s, `${n}, 405`, make(s.key, 'DELETE', '/accounts')), /^HTTP\/1\.1 405 /);
      t.match(await same(t, s, `${n}, HEAD 401 (no body)`, make(undefined, 'HEAD', '/accounts').replace(/^GET /, 'HEAD '), { heads: [true] }), /^HTTP\/1\.1 401 /);
    }
    t.match(await same(t, s, `${label}: the port's own 404`, 'GET /authz/nope HTTP/1.1\r\nHost: a\r\n\r\n'), /^HTTP\/1\.1 404 /);
    t.match(await same(t, s, `${label}: no original request, 400`, 'GET /authz/auth-request HTTP/1.1\r\nHost: a\r\n\r\n'), /^HTTP\/1\.1 400 /);
    // 429: the limit's numbers are seconds to the window's end, so both sends fall in one second (else once more).
    for (const protocol of Object.values(PROTOCOLS)) {
      const text = protocol(s.limited, 'GET', '/accounts');
      for (let i = 0; i < 2; i++) await exchange(s.front, [text], 1);
      let fromFront = '';
      let fromNode = '';
      for (let attempt = 0; attempt < 3 && (fromFront === '' || masked(fromFront) !== masked(fromNode)); attempt++) {
        fromFront = await exchange(s.front, [text], 1);
        fromNode = await exchange(s.node, [text], 1);
      }
      t.match(fromFront, /^HTTP\/1\.1 429 /);
      t.equal(masked(fromFront), masked(fromNode), `${label}: 429, node's bytes`);
    }
  }
});

t.test('503: the store does not answer (a decision that waits, on the front too)', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const s = await setup(t, { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300' });
  // Keys never used: no cache knows them, so each decision reads the store.
  const fresh = await Promise.all(Object.keys(PROTOCOLS).map(async () => (await s.gw.createApiKey(s.token)).apiKey));
  redis.pause();
  t.teardown(() => redis.resume());
  for (const [i, make] of Object.values(PROTOCOLS).entries()) {
    t.match(await same(t, s, `503 ${i}`, make(fresh[i], 'GET', '/accounts')), /^HTTP\/1\.1 503 /);
  }
  redis.resume();
  // Pipelined behind a waiting decision: answered after it, in order.
  const key = (await s.gw.createApiKey(s.token)).apiKey;
  const text = check(key, 'GET', '/accounts') + check(undefined, 'GET', '/accounts') + check(s.key, 'GET', '/accounts');
  const answers = await same(t, s, 'a cache miss, then two', text, { count: 3 });
  t.same([...answers.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]), ['200', '401', '200']);
  // A request with a body behind a waiting decision: handed to node once that answer is written, in order.
  const [one, two] = await Promise.all([s.gw.createApiKey(s.token), s.gw.createApiKey(s.token)]);
  const withBody = (key: string) => check(key, 'GET', '/accounts') + envoy(s.key, 'POST', '/accounts').replace('\r\n\r\n', '\r\nContent-Length: 3\r\n\r\nabc') + check(undefined, 'GET', '/accounts');
  const handedOff = s.handedOff();
  const fromFront = await exchange(s.front, [withBody(one.apiKey)], 3);
  t.equal(s.handedOff(), handedOff + 1, 'handed off after the waiting decision');
  const fromNode = await exchange(s.node, [withBody(two.apiKey)], 3);
  t.same([...fromFront.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]), ['200', '200', '401']);
  t.equal(masked(fromFront).replace(/\r\nx-authgate-identity: [^\r]+/g, ''), masked(fromNode).replace(/\r\nx-authgate-identity: [^\r]+/g, ''), 'node\'s bytes (but each key\'s own assertion), in order');

  // close() while a taken request waits on the store: its answer says Connection: close, then the connection ends.
  redis.pause();
  // fresh[0] was refused 503 above: still in no cache.
  const waiting = fresh[0];
  let closed: Promise<void> | undefined;
  s.gw.gateway.authzServer!.server.once('connection', (socket: Socket) => {
    // After the front's own 'data' listener: the decision is then in flight.
    socket.once('data', () => (closed = s.gw.gateway.authzServer!.close()));
  });
  const answer = await exchange(s.front, [check(waiting, 'GET', '/accounts')], 1, { closes: true });
  t.match(answer, /^HTTP\/1\.1 503 .*\r\nconnection: close\r\n/s, 'answered with Connection: close');
  t.notMatch(answer, /keep-alive/i);
  t.ok(closed, 'close() was called while the decision waited');
  await closed;
  redis.resume();
});

t.test('handed to node\'s server, answered exactly as node answers', async (t) => {
  const s = await setup(t);
  const body = (head: string, rest: string) => head.replace('\r\n\r\n', `\r\n${rest}`);
  const cases: Array<[string, string[], number, { closes?: boolean }?]> = [
    ['chunked body', [body(envoy(s.key, 'POST', '/accounts'), 'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n') + envoy(s.key, 'GET', '/accounts')], 2],
    ['Content-Length body', [body(envoy(s.key, 'POST', '/accounts'), 'Content-Length: 5\r\n\r\nhello') + envoy(undefined, 'GET', '/accounts')], 2],
    ['nginx with an announced body (ends the connection)', [body(check(s.key, 'GET', '/accounts'), 'Content-Length: 9\r\n\r\n')], 1, { closes: true }],
    ['Expect: 100-continue', [body(envoy(s.key, 'POST', '/accounts'), 'Expect: 100-continue\r\nContent-Length: 10\r\n\r\n')], 1],
    ['HTTP/1.0', [forward(s.key, 'GET', '/accounts').replace('HTTP/1.1', 'HTTP/1.0')], 1, { closes: true }],
    ['Connection: close', [body(forward(s.key, 'GET', '/accounts'), 'Connection: close\r\n\r\n')], 1, { closes: true }],
    ['Connection: keep-alive, Upgrade', [body(check(s.key, 'GET', '/ws'), 'Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n')], 1],
    ['obs-fold', [forward(s.key, 'GET', '/accounts').replace('X-Forwarded-Proto: https\r\n', 'X-Forwarded-Proto: https\r\n  ,http\r\n')], 1, { closes: true }],
    ['bare LF', ['GET /authz/forward-auth HTTP/1.1\nHost: a\nX-Forwarded-Method: GET\nX-Forwarded-Uri: /accounts\n\n'], 1, { closes: true }],
    ['bare CR in a value', [forward(s.key, 'GET', '/accounts').replace('https', 'ht\rtps')], 1, { closes: true }],
    ['oversized head: 431', [forward(s.key, 'GET', '/accounts').replace('\r\n\r\n', `\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`)], 1, { closes: true }],
    ['malformed: 400', ['GET /authz/forward-auth HTTP/1.1\r\nHost a\r\n\r\n'], 1, { closes: true }],
    ['no Host: 400', ['GET /authz/forward-auth HTTP/1.1\r\nX-Forwarded-Method: GET\r\nX-Forwarded-Uri: /accounts\r\n\r\n'], 1, { closes: true }],
    ['a method node does not know: 400', ['BREW /authz/ext-authz/accounts HTTP/1.1\r\nHost: a\r\n\r\n'], 1, { closes: true }],
    ['duplicate Authorization: the decider\'s refusal', [body(check(s.key, 'GET', '/accounts'), `Authorization: Bearer ${s.key}\r\n\r\n`)], 1],
    ['a value beyond ASCII', [body(forward(s.key, 'GET', '/accounts'), 'X-Name: caf\xe9\r\n\r\n')], 1],
  ];
  for (const [name, chunks, count, options] of cases) {
    const handedOff = s.handedOff();
    const fromFront = await exchange(s.front, chunks, count, options);
    t.equal(s.handedOff(), handedOff + 1, `${name}: handed to node's server`);
    const fromNode = await exchange(s.node, chunks, count, options);
    t.equal(masked(fromFront), masked(fromNode), `${name}: node's bytes (${fromFront.slice(0, 20)}…)`);
  }
  const duplicate = await exchange(s.front, cases.find(([name]) => name.startsWith('duplicate'))![1], 1);
  t.match(duplicate, /^HTTP\/1\.1 (400|401) /, 'the duplicate Authorization refused by the decider');
});

t.test('pipelined, taken and handed-off requests mixed in one write: answered in order', async (t) => {
  const s = await setup(t);
  const text =
    check(s.key, 'GET', '/accounts') +
    check(undefined, 'GET', '/accounts') +
    forward(s.readOnly, 'POST', '/accounts') +
    // Not taken: from here node's server parses the rest of the connection.
    envoy(s.key, 'POST', '/accounts').replace('\r\n\r\n', '\r\nContent-Length: 3\r\n\r\nabc') +
    envoy(s.key, 'DELETE', '/accounts') +
    check(s.key, 'GET', '/accounts');
  const fromFront = await exchange(s.front, [text], 6);
  const fromNode = await exchange(s.node, [text], 6);
  t.same([...fromFront.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]), ['200', '401', '403', '200', '405', '200']);
  t.equal(masked(fromFront), masked(fromNode), 'node\'s bytes, in the same order');
});

t.test('a head split across writes: handed off with its first part, answered as node answers', async (t) => {
  const s = await setup(t);
  const text = check(s.key, 'GET', '/accounts');
  const c = await openRaw(s.front);
  t.teardown(() => c.destroy());
  // A whole request first: taken.
  c.write(text);
  t.ok(await c.until((received) => answersLength(received, 1) !== -1));
  const handedOff = s.handedOff();
  c.write(text.slice(0, 40));
  // The front hands the connection over once it sees the incomplete head (node's 'connection').
  for (let i = 0; i < 500 && s.handedOff() === handedOff; i++) await new Promise((resolve) => setImmediate(resolve));
  t.equal(s.handedOff(), handedOff + 1, 'handed to node\'s server with the first part');
  c.write(text.slice(40));
  t.ok(await c.until((received) => answersLength(received, 2) !== -1), 'the rest parsed after the first part');
  c.write(forward(s.key, 'GET', '/accounts'));
  t.ok(await c.until((received) => answersLength(received, 3) !== -1));
  const received = c.received();
  const second = received.slice(answersLength(received, 1), answersLength(received, 2));
  t.equal(masked(second), masked(received.slice(0, answersLength(received, 1))), 'node\'s answer, the same bytes as the front\'s');
  t.equal(s.requests(), 2, 'node answered the split request and the next');
});

t.test('many requests on one connection, sequential and pipelined', async (t) => {
  const s = await setup(t);
  let connections = 0;
  s.gw.gateway.authzServer!.server.on('connection', () => connections++);
  const c = await openRaw(s.front);
  t.teardown(() => c.destroy());
  const text = check(s.key, 'GET', '/accounts');
  for (let i = 1; i <= 100; i++) {
    c.write(text);
    if (!(await c.until((received) => answersLength(received, i) !== -1, 5000))) break;
  }
  t.equal(answersLength(c.received(), 100), c.received().length, '100 answers, one after the other');
  t.equal(s.requests(), 0, 'all taken by the front');
  // 500 in one write (~75 KB: more than one read, so a head may be cut and the rest handed to node): all in order.
  const pipelined = await exchange(s.front, [text.repeat(500) + check(undefined, 'GET', '/accounts')], 501);
  const statuses = [...pipelined.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
  t.equal(statuses.length, 501);
  t.ok(statuses.slice(0, 500).every((status) => status === '200') && statuses[500] === '401', '500 allows then the refusal, in order');
  t.equal(connections, 2);
});

t.test('an untrusted peer: 403 from node\'s path, before anything is read', async (t) => {
  const s = await setup(t, { AUTHGATE_AUTHZ_TRUSTED_PROXIES: '192.0.2.1' });
  const text = check(s.key, 'GET', '/accounts');
  const fromFront = await exchange(s.front, [text], 1);
  t.match(fromFront, /^HTTP\/1\.1 403 /);
  t.equal(s.requests(), 1, 'answered by node\'s server');
  t.equal(masked(fromFront), masked(await exchange(s.node, [text], 1)));
});

t.test('close(): idle connections end, taken and handed off, and it resolves', async (t) => {
  const s = await setup(t);
  const taken = await openRaw(s.front);
  const handed = await openRaw(s.front);
  t.teardown(() => (taken.destroy(), handed.destroy()));
  taken.write(check(s.key, 'GET', '/accounts'));
  handed.write(forward(s.key, 'GET', '/accounts').replace('\r\n\r\n', '\r\nX-Name: caf\xe9\r\n\r\n'));
  t.ok(await taken.until((received) => answersLength(received, 1) !== -1));
  t.ok(await handed.until((received) => answersLength(received, 1) !== -1));
  const closed = s.gw.gateway.authzServer!.close();
  t.ok(await taken.closedWithin(5000), 'the idle taken connection ends');
  t.ok(await handed.closedWithin(5000), 'the idle handed-off connection ends');
  await closed;
  t.pass('close() resolved');
});

t.test('the keep-alive idle timeout: a taken connection idle that long is ended by the front', async (t) => {
  // A front of its own with a short timeout (the port's is 125 s): the sweep, not a socket timer, ends it.
  const http = createServer((_request, response) => response.end());
  const front = createFastFront({ http, takes: () => true, respond: () => ({ status: 204, headers: {}, body: '' }), keepAliveTimeoutMs: 300 });
  await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (front.closeAllConnections(), front.close()));
  const port = (front.server.address() as AddressInfo).port;
  const c = await openRaw(port);
  t.teardown(() => c.destroy());
  c.write('GET /x HTTP/1.1\r\nHost: a\r\n\r\n');
  t.ok(await c.until((received) => received.includes('\r\n\r\n'), 5000), 'answered by the front');
  t.match(c.received(), /^HTTP\/1\.1 204 No Content\r\nDate: [^\r]+\r\nConnection: keep-alive\r\nKeep-Alive: timeout=0\r\n\r\n$/);
  t.ok(await c.closedWithin(10_000), 'the idle connection is ended');
});

t.test('a peer that resets mid-request never throws out of the front', async (t) => {
  const s = await setup(t);
  for (let i = 0; i < 20; i++) {
    const c = await openRaw(s.front);
    c.write(check(s.key, 'GET', '/accounts').repeat(50));
    c.destroy();
  }
  // Still answering.
  t.match(await exchange(s.front, [check(s.key, 'GET', '/accounts')], 1), /^HTTP\/1\.1 200 /);
});

t.test('startsAt: what String#startsWith(part, at) answers at every place of a text; names known by place against names that start alike', async (t) => {
  const texts = ['', 'H', 'Host: a\r\n', 'GET /x HTTP/1.1\r\nHost: a\r\nX-A: b\r\n', 'X-Original-URI: /a\r\nX-Original-URIx: b\r\n'];
  const parts = ['', 'H', 'Host', 'Hostx', ' HTTP/1.1', 'X-Original-URI', 'X-Original-URIx', 'x', '\r\n'];
  let mismatches = 0;
  for (const text of texts) for (const part of parts) for (let at = 0; at <= text.length; at++) if (startsAt(text, part, at) !== text.startsWith(part, at)) mismatches++;
  t.equal(mismatches, 0);
  // The names known by place, against names that only start alike, and the version.
  const socket = { remoteAddress: '127.0.0.1' };
  parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-Original-URI: /a\r\n', socket);
  t.same(parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-Original-URIx: /b\r\n', socket)?.headers, { host: 'a', 'x-original-urix': '/b' });
  t.same(parseSimpleHead('GET /x HTTP/1.1\r\nHost: a\r\nX-Original-UR: /c\r\n', socket)?.headers, { host: 'a', 'x-original-ur': '/c' });
  t.equal(parseSimpleHead('GET /x HTTP/1.12\r\nHost: a\r\n', socket), undefined);
  t.equal(parseSimpleHead('GET /x HTTP/1.0\r\nHost: a\r\n', socket), undefined);
});

t.test('simpleHeadEnd: the end the front found before (indexOf CRLFCRLF, within the limit, its bytes checked), in one pass', async (t) => {
  const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
  // The front's path before its fifth step.
  const before = (bytes: Buffer, from: number, limit: number) => {
    const end = bytes.indexOf(CRLFCRLF, from);
    return end === -1 || end + 4 - from > limit || !isSimpleHeadBytes(bytes, from, end + 2) ? -1 : end;
  };
  const pieces = ['GET /x HTTP/1.1', '\r\n', '\r\n\r\n', '\r', '\n', 'Host: a', '\t', ' ', '\x00', '\x7f', '\xe9', 'x', 'X-A: b'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % pieces.length;
  let mismatches = 0;
  let found = 0;
  let checked = 0;
  for (let n = 0; n < 20_000; n++) {
    let text = '';
    for (let k = 2 + (n % 9); k > 0; k--) text += pieces[next()];
    const bytes = Buffer.from(`..${text}`, 'latin1');
    for (const limit of [4, 8, 16, 32, 64, 16 * 1024]) {
      checked++;
      const want = before(bytes, 2, limit);
      if (want !== -1) found++;
      if (simpleHeadEnd(bytes, 2, limit) !== want) mismatches++;
    }
  }
  t.equal(mismatches, 0, `${checked} cases, ${found} with an end`);
  t.ok(found > 10_000, 'many of them with a head to take');
});
