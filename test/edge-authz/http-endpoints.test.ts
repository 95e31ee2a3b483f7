import t, { type Test } from 'tap';
import { Agent, request as httpRequest } from 'node:http';
import type { RoutesFile } from '../../src/route-table/types.js';
import { startAuthzGateway } from '../helpers/authz.js';
import { send, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import net from 'node:net';
import { parseResponse, rawRequest } from '../helpers/raw-http.js';

/**
 * The authorization port's HTTP endpoints (edge-authz/http-server.ts) over real loopback HTTP, as
 * each proxy calls them: nginx's auth_request sub-request, Traefik's ForwardAuth request replayed
 * header for header (traefik pkg/middlewares/auth/forward.go), Envoy's HTTP ext_authz check request
 * (ext_authz_http_impl.cc: original method, path_prefix + path, only Host, :method, :path,
 * Authorization and Content-Length: 0). Memory store; Redis (replicas, store down) has its own file.
 */

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts' },
  routes: [
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } },
    { id: 'health', path: '/healthz', match: 'exact', credentials: 'none', methods: { GET: 'public' } },
    { id: 'open', path: '/open', match: 'exact', credentials: 'none', methods: { GET: 'public' }, rateLimit: '1/1h' },
    { id: 'limited', path: '/limited', match: 'exact', methods: { GET: 'accounts:read' }, rateLimit: '50/1h' },
  ],
};

type Setup = { gw: StartedGateway; authz: { url: string; port: number }; token: string; key: string; readOnly: string };

async function setup(t: Test, env: Record<string, string> = {}): Promise<Setup> {
  const { gw, authz, token, key } = await startAuthzGateway(t, FILE, env);
  const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'], rateLimit: '2/1h' }) });
  return { gw, authz, token, key, readOnly: res.json().apiKey as string };
}

/** nginx's auth_request sub-request: GET, the client's headers, X-Original-* as the documented snippet sets them. */
const nginx = (s: Setup, method: string, uri: string, credential?: string, more: Record<string, string> = {}) =>
  send(`${s.authz.url}/authz/auth-request`, { headers: { 'x-original-method': method, 'x-original-uri': uri, 'x-real-ip': '203.0.113.9', ...UA, ...(credential && { authorization: `Bearer ${credential}` }), ...more } });

/** Traefik's ForwardAuth request (forward.go): GET, client headers minus hop-by-hop, X-Forwarded-*. */
const traefik = (s: Setup, method: string, uri: string, credential?: string, more: Record<string, string> = {}) =>
  send(`${s.authz.url}/authz/forward-auth`, {
    headers: {
      'User-Agent': 'curl/8.5.0',
      Accept: '*/*',
      'Accept-Encoding': 'gzip',
      ...(credential && { Authorization: `Bearer ${credential}` }),
      ...more,
      'X-Forwarded-For': '198.51.100.7',
      'X-Forwarded-Host': 'api.example.test',
      'X-Forwarded-Method': method,
      'X-Forwarded-Port': '443',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Server': 'traefik-1',
      'X-Forwarded-Uri': uri,
      'X-Real-Ip': '198.51.100.7',
    },
  });

/** Envoy's HTTP ext_authz check: the original method, path_prefix + path, only these headers. */
const envoy = (s: Setup, method: string, path: string, credential?: string) =>
  send(`${s.authz.url}/authz/ext-authz${path}`, { method, headers: { host: 'api.example.test', ...(credential && { authorization: `Bearer ${credential}` }), 'content-length': '0' } });

/**
 * Sends raw bytes and resolves with what has arrived once an answer's head is in (the connection
 * left open: the point is that the answer does not wait for it to end), or '' after timeoutMs.
 */
function firstAnswer(port: number, text: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    const done = (value: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(''), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      out += chunk.toString('latin1');
      if (out.includes('\r\n\r\n')) done(out);
    });
    socket.on('error', () => done(out));
  });
}

const problemCode = (res: Response) => (res.json() as { code: number }).code;

function isAllow(t: Test, res: Response): void {
  t.equal(res.status, 200, 'exactly 200');
  t.equal(res.body, '', 'no body');
  t.equal(res.headers['content-length'], '0');
  t.equal(res.headers['cache-control'], 'no-store');
}

t.test('nginx auth_request: allow with the identity headers, refusals with their problems', async (t) => {
  const s = await setup(t);
  let res = await nginx(s, 'GET', '/accounts/7?q=a%20b', s.key);
  isAllow(t, res);
  t.match(res.headers['x-organization-id'], /^org_/);
  t.ok(res.headers['x-organization-scopes']);
  t.match(res.headers['x-authgate-identity'], /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.notOk('x-envoy-auth-headers-to-remove' in res.headers, 'an Envoy header only for Envoy');
  res = await nginx(s, 'GET', '/accounts', s.key, { 'x-request-id': 'nginx-req-1' });
  t.equal(res.status, 200);
  t.match(s.gw.logs.records().find((line) => line.reqId === 'nginx-req-1'), { msg: 'request', protocol: 'auth_request', method: 'GET', route: '/accounts/*', status: 200 }, 'the access line: the proxy\'s request id, the protocol');
  // ingress-nginx: X-Original-URL (absolute) and X-Original-Method.
  res = await send(`${s.authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'HEAD', 'x-original-url': 'https://api.example.test/accounts?x=1', authorization: `Bearer ${s.token}` } });
  isAllow(t, res);
  res = await nginx(s, 'POST', '/accounts', s.readOnly);
  t.equal(res.status, 403);
  t.equal(problemCode(res), 1106);
  t.equal(res.headers['www-authenticate'], 'Bearer realm="authgate", error="insufficient_scope", scope="accounts:write"');
  res = await nginx(s, 'GET', '/accounts');
  t.equal(res.status, 401);
  t.equal(res.headers['www-authenticate'], 'Bearer realm="authgate"', 'nginx passes WWW-Authenticate on: always sent');
  t.equal(res.headers['content-type'], 'application/problem+json');
  t.equal(res.headers['cache-control'], 'no-store');
  res = await nginx(s, 'GET', '/nowhere', s.key);
  t.equal(res.status, 404);
  res = await nginx(s, 'DELETE', '/healthz');
  t.equal(res.status, 405);
  t.equal(res.headers['allow'], 'GET, HEAD');
  // What the proxy failed to say: 400, never a decision.
  for (const [headers, code] of [
    [{ 'x-original-uri': '/accounts' }, 1220],
    [{ 'x-original-method': 'GET' }, 1220],
    [{ 'x-original-method': 'GET', 'x-original-url': 'ftp://x/accounts' }, 1221],
    [{ 'x-original-method': 'G E T', 'x-original-uri': '/accounts' }, 1221],
  ] as const) {
    res = await send(`${s.authz.url}/authz/auth-request`, { headers: { ...headers, authorization: `Bearer ${s.key}` } });
    t.equal(res.status, 400);
    t.equal(problemCode(res), code);
  }
  const twice = await rawRequest(s.authz.port, `GET /authz/auth-request HTTP/1.1\r\nHost: a\r\nConnection: close\r\nX-Original-Method: GET\r\nX-Original-URI: /healthz\r\nX-Original-URI: /accounts\r\n\r\n`);
  t.equal(twice.status, 400, 'X-Original-URI twice: which one was the request? neither');
  t.match(parseResponse(twice.raw).body, /"code":1221/);
});

t.test('Traefik ForwardAuth replayed: 200 with headers to copy, refusals with status, headers and body to copy to the client', async (t) => {
  const s = await setup(t);
  let res = await traefik(s, 'GET', '/accounts/42?filter=a%2Cb', s.key, { 'X-Organization-Id': 'org_forged' });
  t.equal(res.status, 400, 'a client\'s own identity header: refused (Traefik passes every client header on to the service)');
  t.match(res.json(), { code: 1234 });
  res = await traefik(s, 'GET', '/accounts/42?filter=a%2Cb', s.key);
  isAllow(t, res);
  t.match(res.headers['x-organization-id'], /^org_/, 'the decision\'s organization');
  res = await traefik(s, 'GET', '/healthz');
  isAllow(t, res);
  t.notOk('x-organization-id' in res.headers, 'a public route: no identity (Traefik deletes the client\'s copy of a listed header the answer lacks)');
  res = await traefik(s, 'GET', '/accounts', 'agk_test_forged');
  t.equal(res.status, 401);
  t.equal(res.headers['www-authenticate'], 'Bearer realm="authgate", error="invalid_token"');
  t.match(res.json(), { type: 'urn:authgate:problem:credential-invalid', status: 401, code: 1102 });
  res = await traefik(s, 'PATCH', '/accounts', s.key);
  t.equal(res.status, 405);
  // Caddy's forward_auth sends the same X-Forwarded-Method and -Uri.
  res = await send(`${s.authz.url}/authz/forward-auth`, { headers: { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/accounts', authorization: `Bearer ${s.token}` } });
  isAllow(t, res);
  res = await send(`${s.authz.url}/authz/forward-auth`, { headers: { 'x-forwarded-method': 'GET', authorization: `Bearer ${s.token}` } });
  t.equal(res.status, 400);
  t.equal(problemCode(res), 1220);
});

t.test('Envoy HTTP ext_authz replayed: the method is the request\'s, the path the suffix; 200 only on allow', async (t) => {
  const s = await setup(t);
  let res = await envoy(s, 'POST', '/accounts/1?x=%2F', s.key);
  isAllow(t, res);
  t.notOk('x-envoy-auth-headers-to-remove' in res.headers, 'every identity header is set: nothing to remove');
  res = await envoy(s, 'GET', '/healthz');
  isAllow(t, res);
  t.equal(res.headers['x-envoy-auth-headers-to-remove'], 'x-organization-id, x-organization-scopes, x-authgate-identity', 'a public route: the client\'s own identity headers go');
  res = await envoy(s, 'HEAD', '/accounts', s.token);
  t.equal(res.status, 200);
  res = await envoy(s, 'POST', '/accounts', s.readOnly);
  t.equal(res.status, 403);
  res = await envoy(s, 'GET', '', s.key);
  t.equal(res.status, 404, '/authz/ext-authz alone is the path /');
  res = await envoy(s, 'GET', '?x=1', s.key);
  t.equal(res.status, 404);
  res = await send(`${s.authz.url}/authz/ext-authzaccounts`, { headers: { authorization: `Bearer ${s.key}` } });
  t.equal(res.status, 404);
  t.equal(res.headers['content-type'], 'application/problem+json');
});

t.test('never 202 or 204; anything else on the port is a 404 problem', async (t) => {
  const s = await setup(t);
  const statuses = new Set<number>();
  for (const credential of [undefined, s.key, s.readOnly, 'agk_test_x']) {
    for (const path of ['/accounts', '/healthz', '/nowhere', '/accounts/%2e%2e/x']) {
      for (const method of ['GET', 'HEAD', 'POST', 'DELETE']) {
        statuses.add((await envoy(s, method, path, credential)).status);
        statuses.add((await traefik(s, method, path, credential)).status);
      }
    }
  }
  t.same([...statuses].filter((status) => status >= 200 && status < 300), [200], 'the only success is 200');
  t.notOk([...statuses].some((status) => status >= 500), 'no 5xx on anything a client can send');
  for (const path of ['/', '/authz', '/authz/auth-request/x', '/metrics', '/accounts']) {
    const res = await send(`${s.authz.url}${path}`, { headers: { authorization: `Bearer ${s.key}` } });
    t.equal(res.status, 404, path);
    t.equal(problemCode(res), 1204);
  }
});

t.test('a peer that is not a trusted proxy gets 403 without a decision', async (t) => {
  const s = await setup(t, { AUTHGATE_AUTHZ_TRUSTED_PROXIES: '192.0.2.1' });
  const before = (await send(`${s.gw.opsUrl}/metrics`)).body.match(/authgate_auth_decisions_total\{[^}]*outcome="allowed"[^}]*\} (\d+)/g);
  for (const res of [await nginx(s, 'GET', '/accounts', s.key), await traefik(s, 'GET', '/accounts', s.key), await envoy(s, 'GET', '/accounts', s.key), await send(`${s.authz.url}/elsewhere`)]) {
    t.equal(res.status, 403);
    t.equal(problemCode(res), 1114);
    t.notOk('x-organization-id' in res.headers);
  }
  const metrics = (await send(`${s.gw.opsUrl}/metrics`)).body;
  t.same(metrics.match(/authgate_auth_decisions_total\{[^}]*outcome="allowed"[^}]*\} (\d+)/g), before, 'no credential was checked');
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="forward_auth",outcome="denied",route="unmatched"[^}]*\} 1/);
});

t.test('the body is never waited for: a GET announcing one is answered at once', async (t) => {
  const s = await setup(t);
  // nginx without `proxy_set_header Content-Length ""`: the client's length, no body. Answered, and the connection closed.
  const head = (path: string, extra: string) => `GET ${path} HTTP/1.1\r\nHost: authz\r\nAuthorization: Bearer ${s.key}\r\n${extra}Content-Length: 1000\r\n\r\n`;
  let answer = parseResponse(await firstAnswer(s.authz.port, head('/authz/auth-request', 'X-Original-Method: POST\r\nX-Original-URI: /accounts\r\n')));
  t.equal(answer.status, 200, 'decided without a byte of the body');
  t.equal(answer.headers['connection'], 'close', 'the announced bytes will never come: the connection ends after the answer');
  // Traefik with forwardBody sends a body: answered at once all the same, before it arrives.
  answer = parseResponse(await firstAnswer(s.authz.port, head('/authz/forward-auth', 'X-Forwarded-Method: GET\r\nX-Forwarded-Uri: /accounts\r\n')));
  t.equal(answer.status, 200, 'answered before any byte of the body');
  t.not(answer.headers['connection'], 'close', 'and the connection stays (the body, when it comes, is discarded)');
  // Expect: 100-continue: decided without inviting the body.
  const raw = await firstAnswer(s.authz.port, `GET /authz/ext-authz/accounts HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${s.key}\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n`);
  t.match(raw, /^HTTP\/1\.1 200 /, 'the final answer first, no 100 Continue');
  // A WebSocket handshake's sub-request inherits Upgrade and Connection: decided like any other.
  const handshake = await firstAnswer(s.authz.port, `GET /authz/auth-request HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts/ws\r\nAuthorization: Bearer ${s.key}\r\n\r\n`);
  t.match(handshake, /^HTTP\/1\.1 200 /, 'a handshake is decided, never upgraded here');
});

t.test('keep-alive: many decisions on few connections, an idle timeout above the proxies\'', async (t) => {
  const s = await setup(t);
  const { server, http } = s.gw.gateway.authzServer!;
  t.ok(http.keepAliveTimeout >= 120_000, 'at least 120 s');
  t.ok(http.headersTimeout > http.keepAliveTimeout, 'headersTimeout above it');
  let connections = 0;
  server.on('connection', () => connections++);
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  t.teardown(() => agent.destroy());
  const ask = (credential?: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: s.authz.port, path: '/authz/forward-auth', agent, headers: { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/accounts', ...(credential && { authorization: `Bearer ${credential}` }) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) statuses.push(await ask(i % 5 === 0 ? undefined : s.key));
  t.ok(statuses.every((status) => status === 200 || status === 401));
  t.ok(connections <= 2, `50 decisions, allows and refusals, on ${connections} connection(s)`);
});

t.test('AUTHGATE_AUTHZ_CACHE_SECONDS: an allow may be kept that long; a refusal never', async (t) => {
  const s = await setup(t, { AUTHGATE_AUTHZ_CACHE_SECONDS: '2' });
  let res = await nginx(s, 'GET', '/accounts', s.key);
  t.equal(res.status, 200);
  t.equal(res.headers['cache-control'], 'max-age=2');
  t.equal(res.headers['x-accel-expires'], '2');
  res = await nginx(s, 'GET', '/accounts', s.readOnly);
  t.equal(res.status, 200);
  t.equal(res.headers['cache-control'], 'no-store', 'a rate-limited allow is never kept');
  t.notOk('x-accel-expires' in res.headers);
  res = await nginx(s, 'GET', '/accounts');
  t.equal(res.status, 401);
  t.equal(res.headers['cache-control'], 'no-store');
  t.notOk('x-accel-expires' in res.headers);
});

t.test('rate limits: 429 with Retry-After and RateLimit; the public route counts per client address as the proxy reported it', async (t) => {
  const s = await setup(t);
  const first = await nginx(s, 'GET', '/accounts', s.readOnly);
  t.equal(first.status, 200);
  t.match(first.headers['ratelimit-policy'], /q=2/, 'RateLimit headers for the proxy to copy');
  t.equal((await nginx(s, 'GET', '/accounts', s.readOnly)).status, 200);
  const refused = await nginx(s, 'GET', '/accounts', s.readOnly);
  t.equal(refused.status, 429);
  t.equal(problemCode(refused), 1110);
  t.ok(Number(refused.headers['retry-after']) > 3500);
  t.equal(refused.headers['cache-control'], 'no-store');

  // /open allows 1 per hour per address: X-Real-IP (nginx), the last X-Forwarded-For entry (Traefik).
  t.equal((await nginx(s, 'GET', '/open', undefined, { 'x-real-ip': '203.0.113.1' })).status, 200);
  t.equal((await nginx(s, 'GET', '/open', undefined, { 'x-real-ip': '203.0.113.1' })).status, 429);
  t.equal((await nginx(s, 'GET', '/open', undefined, { 'x-real-ip': '203.0.113.2' })).status, 200);
  const viaTraefik = (forwardedFor: string) => send(`${s.authz.url}/authz/forward-auth`, { headers: { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/open', 'x-forwarded-for': forwardedFor, 'x-real-ip': '203.0.113.50' } });
  t.equal((await viaTraefik('203.0.113.1, 198.51.100.20')).status, 200, 'the address the proxy appended, not the client\'s claim');
  t.equal((await viaTraefik('203.0.113.3, 198.51.100.20')).status, 429);
});

t.test('issue 45: X-Original-URI and X-Original-URL must agree; X-Original-URL\'s path starts right after its host', async (t) => {
  const s = await setup(t);
  const ask = (headers: Record<string, string>) => send(`${s.authz.url}/authz/auth-request`, { headers: { 'x-original-method': 'GET', ...headers } });
  // ingress-nginx sets X-Original-URL and passes the client's X-Original-URI on: a public path there must not decide /accounts.
  let res = await ask({ 'x-original-url': 'http://api.example.test/accounts', 'x-original-uri': '/healthz' });
  t.equal(res.status, 400, 'a client\'s X-Original-URI that disagrees: refused');
  t.equal(problemCode(res), 1221);
  // With auth-method, ingress-nginx sets both, equal.
  res = await ask({ 'x-original-url': 'http://api.example.test/accounts?x=1', 'x-original-uri': '/accounts?x=1', authorization: `Bearer ${s.key}` });
  isAllow(t, res);
  for (const url of ['http://api.example.com:1?/accounts', 'http://x#/accounts', 'http://x', 'http://x?', 'https://x#']) {
    res = await ask({ 'x-original-url': url });
    t.equal(res.status, 400, `${url}: no path right after the host: refused, never decided as /`);
    t.equal(problemCode(res), 1221);
  }
});

t.test('issue 45: a client\'s identity-family or underscore header is refused on every HTTP endpoint, and the access line says so', async (t) => {
  const s = await setup(t);
  for (const [name, value] of [['x-organization-role', 'admin'], ['x-authgate-foo', 'x'], ['x-organization-id', 'org_forged'], ['x_organization_id', 'org_forged'], ['x-custom_name', 'y']] as const) {
    for (const res of [await nginx(s, 'GET', '/accounts', s.key, { [name]: value }), await traefik(s, 'GET', '/healthz', undefined, { [name]: value })]) {
      t.equal(res.status, 400, `${name}: refused`);
      t.equal(problemCode(res), 1234);
    }
  }
  t.ok(s.gw.logs.records().some((record) => record.msg === 'request' && record.status === 400 && record.authReason === 'identity_header'), 'the access line names the refusal');
});

t.test('issue 45: a method override is decided too (both methods\' scopes), or refused', async (t) => {
  const s = await setup(t);
  for (const name of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) {
    let res = await nginx(s, 'GET', '/accounts/7', s.readOnly, { [name]: 'POST' });
    t.equal(res.status, 403, `${name}: POST needs accounts:write, which the key lacks`);
    res = await nginx(s, 'GET', '/accounts/7', s.key, { [name]: 'post' });
    isAllow(t, res);
    res = await nginx(s, 'GET', '/accounts/7', s.key, { [name]: 'DELETE' });
    t.equal(res.status, 400, `${name}: a method the route does not forward`);
    t.equal(problemCode(res), 1235);
    res = await traefik(s, 'GET', '/healthz', undefined, { [name]: 'GET, DELETE' });
    t.equal(res.status, 400, `${name}: not one method`);
    t.equal(problemCode(res), 1235);
  }
});

t.test('issue 45: an allow under the route\'s own rateLimit is never cacheable', async (t) => {
  const s = await setup(t, { AUTHGATE_AUTHZ_CACHE_SECONDS: '5' });
  let res = await nginx(s, 'GET', '/accounts', s.key);
  t.equal(res.headers['cache-control'], 'max-age=5', 'an unlimited allow: cacheable as configured');
  for (let i = 0; i < 2; i++) {
    res = await nginx(s, 'GET', '/limited', s.key);
    t.equal(res.status, 200);
    t.equal(res.headers['cache-control'], 'no-store', 'the route\'s limit must count every request');
    t.notOk('x-accel-expires' in res.headers);
  }
});
