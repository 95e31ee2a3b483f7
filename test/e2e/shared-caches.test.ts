import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ADMIN_TOKEN, send, startGateway, UA, type Response } from '../helpers/gateway.js';
import { parseResponse, rawRequest, requestText } from '../helpers/raw-http.js';
import { startSharedCache } from '../helpers/shared-cache.js';

/**
 * Caches between the client and the gateway (issue 26): a CDN or a browser's cache in front of a
 * real gateway, over real HTTP, with a real upstream, on both ways a forwarded request goes (the
 * fast lane and fastify's path). An answer to one credential is never served to another, nor to
 * a request without one; with AUTHGATE_CORS_ORIGINS, an answer made for one Origin is never
 * served to another.
 */

const APP = 'https://app.example.com';

/**
 * An upstream whose answer headers are the test's to choose: the JSON in the request's
 * `x-test-answer` (forwarded by the gateway like any request header), or `destroy` for a lost
 * connection. The body names the organization the gateway said the request was for.
 */
async function choosingUpstream(t: Test) {
  const server = createServer((request, response) => {
    const chosen = request.headers['x-test-answer'];
    if (chosen === 'destroy') return void request.socket.destroy();
    const headers = (chosen === undefined ? {} : JSON.parse(String(chosen))) as OutgoingHttpHeaders;
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify({ orgId: request.headers['x-organization-id'] ?? null, url: request.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // What startGateway takes for an upstream; this one records nothing, and the test closes it.
  return { url, port: Number(new URL(url).port), requests: [], holdAnswers: () => () => {}, close: async () => {} };
}

/** How many requests the fast lane took, from the gateway's own metric. */
async function laneTaken(gw: Awaited<ReturnType<typeof startGateway>>): Promise<number> {
  const text = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_fast_lane_requests_total');
  let total = 0;
  for (const match of text.matchAll(/^authgate_fast_lane_requests_total\{[^}]*\} (\d+)$/gm)) total += Number(match[1]);
  return total;
}

async function twoTenants(t: Test, env: Record<string, string> = {}) {
  const upstream = await choosingUpstream(t);
  const gw = await startGateway(t, { upstream, env: { AUTHGATE_IDENTITY_ASSERTION: 'off', ...env } });
  const tenants = [];
  for (const name of ['A', 'B']) {
    const org = await gw.createOrganization({ name: `Tenant ${name}` });
    const { apiKey } = await gw.createApiKey(await gw.login(org.email, org.password));
    // Warm: the credential is cached, so the fast lane may take its next requests.
    await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` });
    tenants.push({ id: org.id, apiKey });
  }
  return { gw, a: tenants[0]!, b: tenants[1]! };
}

const varyOf = (res: Response) =>
  String(res.headers['vary'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');

/**
 * The two ways a forwarded request goes: the fast lane takes a request without Origin whose
 * credential is cached; a path with a percent-encoded byte always goes fastify's way (the lane
 * leaves decoding to the router), so the same request there takes the framework's path.
 */
const PATHS = [
  { name: 'the fast lane', path: '/accounts/shared', lane: true },
  { name: "fastify's path", path: '/accounts/shared%20', lane: false },
] as const;

t.test("an upstream's public answer to one tenant is never served by a CDN to another tenant, or to no credential", async (t) => {
  const { gw, a, b } = await twoTenants(t);
  const cdn = await startSharedCache(gw.publicUrl);
  t.teardown(() => cdn.close());
  for (const answer of [{ 'cache-control': 'public, max-age=60' }, { 'cache-control': 'max-age=60, s-maxage=600' }, { 'cache-control': 'max-age=60, must-revalidate' }]) {
    for (const { name, path, lane } of PATHS) {
      const what = `${name}, ${answer['cache-control']}`;
      const url = `${cdn.url}${path}?case=${encodeURIComponent(answer['cache-control'])}`;
      const ask = (apiKey?: string) =>
        send(url, { headers: { ...UA, 'x-test-answer': JSON.stringify(answer), ...(apiKey !== undefined && { authorization: `Bearer ${apiKey}` }) } });
      const before = await laneTaken(gw);
      const first = await ask(a.apiKey);
      t.equal(first.status, 200, `${what}: A's answer`);
      t.equal(first.json().orgId, a.id);
      t.equal((await laneTaken(gw)) - before, lane ? 1 : 0, `${what}: taken by ${name}`);

      const other = await ask(b.apiKey);
      t.equal(other.headers['x-test-cache'], 'MISS', `${what}: B's request is not answered from the CDN`);
      t.equal(other.json().orgId, b.id, `${what}: B gets its own answer`);
      const anonymous = await ask();
      t.equal(anonymous.headers['x-test-cache'], 'MISS', `${what}: a request without a credential is not answered from the CDN`);
      t.equal(anonymous.status, 401, `${what}: it is the gateway's 401`);
    }
  }
  t.equal(cdn.hits, 0, 'the CDN served nothing from its cache');
});

t.test("a browser's own cache never answers one credential with another's answer", async (t) => {
  // A private cache may keep private answers and answers to requests with Authorization; only
  // Vary: Authorization keeps an app that switches credentials (one user, two organizations)
  // from reading the first organization's answer with the second's credential.
  const { gw, a, b } = await twoTenants(t);
  const browser = await startSharedCache(gw.publicUrl, { shared: false });
  t.teardown(() => browser.close());
  for (const cacheControl of ['public, max-age=60', 'private, max-age=60', 'max-age=60']) {
    for (const { name, path } of PATHS) {
      const url = `${browser.url}${path}?private=${encodeURIComponent(cacheControl)}`;
      const ask = (apiKey: string) => send(url, { headers: { ...UA, authorization: `Bearer ${apiKey}`, 'x-test-answer': JSON.stringify({ 'cache-control': cacheControl }) } });
      t.equal((await ask(a.apiKey)).json().orgId, a.id);
      const again = await ask(a.apiKey);
      t.equal(again.headers['x-test-cache'], 'HIT', `${name}, ${cacheControl}: the same credential may reuse its own answer`);
      const other = await ask(b.apiKey);
      t.equal(other.headers['x-test-cache'], 'MISS', `${name}, ${cacheControl}: another credential is not answered from the cache`);
      t.equal(other.json().orgId, b.id);
    }
  }
});

t.test('with AUTHGATE_CORS_ORIGINS, an answer made without Origin is never served to the listed app by a CDN', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_CORS_ORIGINS: APP, AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'on' } });
  const cdn = await startSharedCache(gw.publicUrl);
  t.teardown(() => cdn.close());
  // The JWKS is public and cacheable (5 minutes): the first request without Origin is stored.
  const plain = await send(`${cdn.url}/.well-known/jwks.json`, { headers: UA });
  t.equal(plain.status, 200);
  t.equal(plain.headers['access-control-allow-origin'], undefined);
  const fromApp = await send(`${cdn.url}/.well-known/jwks.json`, { headers: { ...UA, origin: APP } });
  t.equal(fromApp.headers['x-test-cache'], 'MISS', 'the app is not answered with the copy made without Origin');
  t.equal(fromApp.headers['access-control-allow-origin'], APP, 'so the browser lets the app read it');
  const again = await send(`${cdn.url}/.well-known/jwks.json`, { headers: { ...UA, origin: APP } });
  t.equal(again.headers['x-test-cache'], 'HIT', 'the app then reuses its own copy');
  t.equal(again.headers['access-control-allow-origin'], APP);
  const unlisted = await send(`${cdn.url}/.well-known/jwks.json`, { headers: { ...UA, origin: 'https://evil.example.net' } });
  t.equal(unlisted.headers['x-test-cache'], 'MISS', "an unlisted origin does not get the app's copy");
  t.equal(unlisted.headers['access-control-allow-origin'], undefined);
});

t.test("the upstream's cache headers as the client gets them: exact, on both forwarding paths, with and without CORS", async (t) => {
  // [what the upstream sends, Cache-Control the client gets, Vary without CORS]; with CORS, Vary
  // gets `Origin` after the rest.
  const cases: Array<[OutgoingHttpHeaders, string | undefined, string | undefined]> = [
    [{ 'cache-control': 'public, max-age=60' }, 'private, max-age=60', 'Authorization'],
    [{ 'cache-control': 'max-age=60, s-maxage=600, must-revalidate' }, 'private, max-age=60, must-revalidate', 'Authorization'],
    [{ 'cache-control': 'Public,Max-Age=5' }, 'private, Max-Age=5', 'Authorization'],
    [{ 'cache-control': 'max-age=60' }, 'private, max-age=60', 'Authorization'],
    [{ 'cache-control': 'no-cache' }, 'private, no-cache', 'Authorization'],
    [{ 'cache-control': 'private, max-age=60' }, 'private, max-age=60', 'Authorization'],
    [{ 'cache-control': 'private="set-cookie", max-age=5' }, 'private, max-age=5', 'Authorization'],
    [{ 'cache-control': 'no-cache="x-a, private", public' }, 'private, no-cache="x-a, private"', 'Authorization'],
    [{ 'cache-control': 'no-store' }, 'no-store', undefined],
    [{ 'cache-control': 'public, no-store' }, 'public, no-store', undefined],
    [{ expires: 'Thu, 01 Jan 2099 00:00:00 GMT' }, 'private', 'Authorization'],
    [{ 'cache-control': 'public, max-age=60', vary: 'Accept-Encoding' }, 'private, max-age=60', 'Accept-Encoding, Authorization'],
    [{ 'cache-control': 'max-age=60', vary: 'authorization, accept' }, 'private, max-age=60', 'authorization, accept'],
    [{ 'cache-control': 'max-age=60', vary: '*' }, 'private, max-age=60', '*'],
    [{ vary: 'Accept' }, undefined, 'Accept'],
    [{}, undefined, undefined],
  ];
  for (const cors of [false, true]) {
    const { gw, a } = await twoTenants(t, cors ? { AUTHGATE_CORS_ORIGINS: APP } : {});
    for (const [answer, cacheControl, vary] of cases) {
      for (const { name, path, lane } of PATHS) {
        const what = `${cors ? 'CORS' : 'no CORS'}, ${name}, ${JSON.stringify(answer)}`;
        const before = await laneTaken(gw);
        const res = await send(`${gw.publicUrl}${path}`, { headers: { ...UA, authorization: `Bearer ${a.apiKey}`, 'x-test-answer': JSON.stringify(answer) } });
        t.equal(res.status, 200, what);
        t.equal((await laneTaken(gw)) - before, lane ? 1 : 0, `${what}: taken by ${name}`);
        t.equal(res.headers['cache-control'], cacheControl, `${what}: Cache-Control`);
        const expected = cors ? (vary === '*' ? '*' : vary === undefined ? 'Origin' : `${vary}, Origin`) : vary;
        t.equal(res.headers['vary'], expected, `${what}: Vary`);
      }
    }
  }
});

t.test("the upstream's instructions to CDNs alone never reach the client", async (t) => {
  const { gw, a } = await twoTenants(t);
  const targeted = {
    'cdn-cache-control': 'public, max-age=600',
    'cloudflare-cdn-cache-control': 'max-age=600',
    'surrogate-control': 'max-age=600',
    'edge-control': 'cache-maxage=600s',
    'x-accel-expires': '600',
  };
  for (const { name, path } of PATHS) {
    const res = await send(`${gw.publicUrl}${path}`, { headers: { ...UA, authorization: `Bearer ${a.apiKey}`, 'x-test-answer': JSON.stringify({ ...targeted, etag: '"e"' }) } });
    t.equal(res.status, 200);
    for (const header of Object.keys(targeted)) t.equal(res.headers[header], undefined, `${name}: ${header} dropped`);
    t.equal(res.headers['etag'], '"e"', `${name}: the rest as it came`);
  }
});

t.test('with AUTHGATE_CORS_ORIGINS every answer varies on Origin, whatever the Origin and whoever answers', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_CORS_ORIGINS: APP, AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'on' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  await gw.get('/accounts/warm', { authorization: `Bearer ${apiKey}` });
  const json = { 'content-type': 'application/json' };
  for (const origin of [undefined, 'https://evil.example.net', APP]) {
    const headers = { ...UA, ...(origin !== undefined && { origin }) };
    const answers: Array<[string, Response, number]> = [
      ['login', await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...headers, ...json }, body: JSON.stringify({ email: org.email, password: org.password }) }), 200],
      ['a gateway route', await send(`${gw.publicUrl}/auth/api-key`, { headers: { ...headers, authorization: `Bearer ${token}` } }), 200],
      ['a forwarded answer', await send(`${gw.publicUrl}/accounts/1`, { headers: { ...headers, authorization: `Bearer ${apiKey}` } }), 200],
      ['401', await send(`${gw.publicUrl}/accounts/1`, { headers }), 401],
      ['403 without a User-Agent', await send(`${gw.publicUrl}/accounts/1`, { headers: origin === undefined ? {} : { origin } }), 403],
      ['404', await send(`${gw.publicUrl}/nowhere`, { headers }), 404],
      ['405', await send(`${gw.publicUrl}/auth/login`, { method: 'DELETE', headers }), 405],
      ['400 malformed JSON', await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...headers, ...json }, body: '{' }), 400],
      ["the router's 400", await send(`${gw.publicUrl}/accounts/%zz`, { headers }), 400],
      ['the JWKS', await send(`${gw.publicUrl}/.well-known/jwks.json`, { headers }), 200],
      ['a preflight', await send(`${gw.publicUrl}/accounts`, { method: 'OPTIONS', headers: { ...headers, 'access-control-request-method': 'GET' } }), origin === undefined ? 401 : 204],
    ];
    for (const [what, res, status] of answers) {
      t.equal(res.status, status, `${what}, Origin ${origin}: ${status}`);
      t.ok(varyOf(res).includes('origin'), `${what}, Origin ${origin}: Vary names Origin (${res.headers['vary']})`);
    }
  }
  // Answers written outside fastify: node's parser's refusal, and an Expect the gateway does not take.
  const port = Number(new URL(gw.publicUrl).port);
  const malformed = parseResponse((await rawRequest(port, 'GET /accounts HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n')).raw);
  t.equal(malformed.status, 400);
  t.equal(malformed.headers['vary'], 'Origin', "node's parser's 400 varies on Origin too");
  const expectation = parseResponse((await rawRequest(port, requestText('GET', '/accounts', [['User-Agent', UA['user-agent']], ['Expect', 'x-unknown']]))).raw);
  t.equal(expectation.status, 417);
  t.equal(expectation.headers['vary'], 'Origin', 'the 417 varies on Origin too');

  const console = await send(`${gw.publicUrl}/console/`, { headers: { ...UA, 'accept-encoding': 'gzip' } });
  t.equal(console.status, 200);
  t.same(varyOf(console), ['origin', 'accept-encoding'], "the console's files keep the gateway's Origin beside their own Accept-Encoding");
});

t.test("the fast lane's own refusal (the upstream's connection lost) varies on Origin too", async (t) => {
  const { gw, a } = await twoTenants(t, { AUTHGATE_CORS_ORIGINS: APP });
  const before = await laneTaken(gw);
  const res = await send(`${gw.publicUrl}/accounts/fail`, { headers: { ...UA, authorization: `Bearer ${a.apiKey}`, 'x-test-answer': 'destroy' } });
  t.equal(res.status, 502);
  t.equal((await laneTaken(gw)) - before, 1, 'answered by the lane');
  t.equal(res.headers['vary'], 'Origin');
  t.equal(res.headers['cache-control'], 'no-store');
});

t.test('without AUTHGATE_CORS_ORIGINS nothing varies on Origin', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  for (const origin of [undefined, APP]) {
    const headers = { ...UA, ...(origin !== undefined && { origin }) };
    for (const res of [
      await send(`${gw.publicUrl}/auth/api-key`, { headers: { ...headers, authorization: `Bearer ${token}` } }),
      await send(`${gw.publicUrl}/accounts/1`, { headers: { ...headers, authorization: `Bearer ${apiKey}` } }),
      await send(`${gw.publicUrl}/accounts/1`, { headers }),
      await send(`${gw.publicUrl}/console/`, { headers }),
    ]) {
      t.notOk(varyOf(res).includes('origin'), `Origin ${origin}: no Vary: Origin (${res.headers['vary']})`);
    }
  }
});

t.test('answers carrying a secret or a token are never stored: no-store on the admin API and the public auth answers', async (t) => {
  const gw = await startGateway(t);
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const created = await send(`${gw.opsUrl}/admin/organizations`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'Stored nowhere', email: `no-store-${process.pid}@example.test`, password: 'password-long-enough-1' }),
  });
  t.equal(created.status, 201);
  t.equal(created.headers['cache-control'], 'no-store', 'POST /admin/organizations');
  const orgId = created.json().id as string;
  for (const [method, path, status] of [
    ['GET', `/admin/organizations/${orgId}`, 200],
    ['PATCH', `/admin/organizations/${orgId}`, 200],
    ['GET', '/admin/organizations/nope', 404],
  ] as const) {
    const res = await send(`${gw.opsUrl}${path}`, { method, headers: admin, ...(method === 'PATCH' && { body: JSON.stringify({ rateLimit: null }) }) });
    t.equal(res.status, status, `${method} ${path}`);
    t.equal(res.headers['cache-control'], 'no-store', `${method} ${path}: every admin answer, whatever route (a mechanism, not one route)`);
  }

  const login = await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email: `no-store-${process.pid}@example.test`, password: 'password-long-enough-1' }) });
  t.equal(login.status, 200);
  t.equal(login.headers['cache-control'], 'no-store', 'the login token');
  const token = login.json().token as string;
  const key = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(key.status, 201);
  t.equal(key.headers['cache-control'], 'no-store', 'a new key secret');
  const rolled = await send(`${gw.publicUrl}/auth/api-key/${key.json().id}/roll`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(rolled.status, 201);
  t.equal(rolled.headers['cache-control'], 'no-store', 'a rolled key secret');
  const sessions = await send(`${gw.publicUrl}/auth/sessions`, { headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(sessions.headers['cache-control'], 'no-store', "the gateway's own API answers, every one");
});

/**
 * A real CDN-like cache: nginx's proxy_cache in front of the gateway, as configured by default
 * (it honours Cache-Control, Expires and Vary, and ignores RFC 9111 §3.5: it stores an answer to
 * a request with Authorization on `max-age` alone, which is why `max-age` is made private too).
 */
async function startNginxCache(t: Test, target: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'authgate-nginx-'));
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `${name}_temp_path ${dir}/${name};`).join(' ');
  await writeFile(
    join(dir, 'nginx.conf'),
    `daemon off; master_process off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events {}
http {
  access_log off; ${temp}
  proxy_cache_path ${dir}/cache keys_zone=authgate:1m;
  server {
    listen 127.0.0.1:${port};
    location / { proxy_cache authgate; proxy_pass ${target}; proxy_set_header Host $host; add_header x-test-cache $upstream_cache_status always; }
  }
}
`,
  );
  const nginx = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: 'ignore' });
  t.teardown(async () => {
    if (nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await send(`${url}/livez-probe`, { headers: UA });
      return url;
    } catch (error) {
      if (Date.now() > deadline || nginx.exitCode !== null) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const hasNginx = spawnSync('nginx', ['-v']).status === 0;

t.test('behind a real nginx proxy_cache: no tenant gets another tenant\'s answer, the app never gets the copy made without Origin', { skip: hasNginx ? false : 'nginx is not installed' }, async (t) => {
  const { gw, a, b } = await twoTenants(t, { AUTHGATE_CORS_ORIGINS: APP, AUTHGATE_IDENTITY_ASSERTION: 'on', AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: 'on' });
  const cdn = await startNginxCache(t, gw.publicUrl);
  for (const cacheControl of ['max-age=60', 'public, max-age=60']) {
    for (const { name, path } of PATHS) {
      const url = `${cdn}${path}?nginx=${encodeURIComponent(cacheControl)}`;
      const ask = (apiKey?: string) =>
        send(url, { headers: { ...UA, 'x-test-answer': JSON.stringify({ 'cache-control': cacheControl }), ...(apiKey !== undefined && { authorization: `Bearer ${apiKey}` }) } });
      t.equal((await ask(a.apiKey)).json().orgId, a.id);
      const other = await ask(b.apiKey);
      t.not(other.headers['x-test-cache'], 'HIT', `${name}, ${cacheControl}: B is not answered from nginx's cache`);
      t.equal(other.json().orgId, b.id, `${name}, ${cacheControl}: B gets its own answer`);
      const anonymous = await ask();
      t.equal(anonymous.status, 401, `${name}, ${cacheControl}: no credential, the gateway's 401`);
    }
  }
  const plain = await send(`${cdn}/.well-known/jwks.json`, { headers: UA });
  t.equal(plain.status, 200);
  const fromApp = await send(`${cdn}/.well-known/jwks.json`, { headers: { ...UA, origin: APP } });
  t.not(fromApp.headers['x-test-cache'], 'HIT', 'the app is not answered with the copy made without Origin');
  t.equal(fromApp.headers['access-control-allow-origin'], APP);
});
