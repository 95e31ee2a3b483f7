/**
 * What every edge proxy in front of authgate's authz listener must do, as tests over real HTTP:
 * a real proxy (nginx, Caddy) configured by the shipped snippet, in front of a real upstream,
 * asking a real gateway (on a real redis-server, shared by the file) on loopback. Each proxy's
 * test file calls `proxyContract` with how to start it and how its refusals look to a client.
 */
import type { IncomingMessage } from 'node:http';
import type { Test } from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { listenAuthz } from '../helpers/authz.js';
import { parseResponse, rawRequest } from '../helpers/raw-http.js';
import { eventually, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { freePort, startRedis } from '../helpers/redis.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import type { EdgeAddresses } from '../helpers/edge-snippets.js';

export const ROUTES: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts' },
  routes: [
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } },
    { id: 'health', path: '/healthz', match: 'exact', credentials: 'none', methods: { GET: 'public' } },
  ],
};

/** A running proxy: its base URL and how to stop it (and what to print when a test fails). */
export type RunningProxy = { url: string; diagnostics(): string; close(): Promise<void> };

export type ProxyUnderTest = Readonly<{
  name: string;
  start(addresses: EdgeAddresses): Promise<RunningProxy>;
  /** Whether the client sees authgate's problem body on a refusal (Caddy) or a body of the proxy's own (nginx). */
  passesProblemBody: boolean;
  /** Whether a 403 keeps authgate's WWW-Authenticate (nginx passes it on a 401 only). */
  keepsWwwAuthenticateOn403: boolean;
  /** Whether the shipped config drops x-organization-* and x-authgate-* before the check (Caddy); else authgate refuses them (nginx). */
  dropsIdentityFamilies: boolean;
}>;

/** A client's own identity headers, which must never reach the upstream. */
const FORGED = { 'x-organization-id': 'org_forged', 'x-organization-scopes': 'accounts:write', 'x-authgate-identity': 'forged.identity.jwt' };

type Context = {
  gw: StartedGateway;
  /** A second replica on the same Redis (no authz listener): where revocations are made. */
  replica: StartedGateway;
  upstream: RecordingUpstream;
  proxy: RunningProxy;
  orgId: string;
  token: string;
  key: string;
  readOnly: string;
  connections(): number;
  /**
   * The body headers of the last check node's server received since resetCheckBody(); the fast
   * front takes only checks that announce no body, so a check it took leaves both undefined.
   */
  lastCheckBody(): { contentLength: string | undefined; transferEncoding: string | undefined };
  resetCheckBody(): void;
  get(path: string, credential?: string, more?: Record<string, string>): Promise<Response>;
};

export function proxyContract(t: Test, proxy: ProxyUnderTest): void {
  t.test(`${proxy.name} in front of authgate's authz listener`, async (t) => {
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const upstream = await startRecordingUpstream();
    t.teardown(() => upstream.close());
    const gw = await startGateway(t, {
      env: { AUTHGATE_AUTHZ_PORT: '0', AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300' },
      upstream,
      deps: { routes: tableOf(ROUTES, upstream.url) },
    });
    const authz = await listenAuthz(gw);
    const replica = await startGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '300' }, upstream, deps: { routes: tableOf(ROUTES, upstream.url) } });
    let connections = 0;
    gw.gateway.authzServer!.server.on('connection', () => connections++);
    let lastCheckBody: ReturnType<Context['lastCheckBody']> = { contentLength: undefined, transferEncoding: undefined };
    // node's requests only (fast-front.ts takes a check that announces no body, and hands over any that does).
    gw.gateway.authzServer!.http.on('request', (request: IncomingMessage) => {
      lastCheckBody = { contentLength: request.headers['content-length'], transferEncoding: request.headers['transfer-encoding'] };
    });
    const running = await proxy.start({ listenPort: await freePort(), authzPort: authz.port, appPort: upstream.port, publicPort: Number(new URL(gw.publicUrl).port) });
    t.teardown(() => running.close());
    const org = await gw.createOrganization();
    const token = await gw.login(org.email, org.password);
    const key = (await gw.createApiKey(token)).apiKey;
    const limited = await send(`${gw.publicUrl}/auth/api-key`, {
      method: 'POST',
      headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['accounts:read'], rateLimit: '2/1h' }),
    });
    const c: Context = {
      gw,
      replica,
      upstream,
      proxy: running,
      orgId: org.id,
      token,
      key,
      readOnly: limited.json().apiKey as string,
      connections: () => connections,
      lastCheckBody: () => lastCheckBody,
      resetCheckBody: () => void (lastCheckBody = { contentLength: undefined, transferEncoding: undefined }),
      get: (path, credential, more = {}) => send(`${running.url}${path}`, { headers: { ...UA, ...(credential && { authorization: `Bearer ${credential}` }), ...more } }),
    };
    t.afterEach(async (t) => {
      if (t.passing()) return;
      t.comment(running.diagnostics().slice(-4000));
    });
    defineTests(t, proxy, c);
    // Last: Redis stops answering.
    t.test('store unavailable: 503 with Retry-After, nothing forwarded', async (t) => {
      // A key never used yet: no replica has it cached, so it must be read from the store.
      const fresh = (await c.gw.createApiKey(c.token)).apiKey;
      const before = c.upstream.requests.length;
      redis.pause();
      t.teardown(() => redis.resume());
      const res = await c.get('/accounts', fresh);
      t.equal(res.status, 503);
      t.match(res.headers['retry-after'], /^[1-9][0-9]*$/, 'Retry-After in seconds');
      t.equal(c.upstream.requests.length, before, 'the upstream saw nothing');
    });
  });
}

function identityOf(upstream: RecordingUpstream) {
  const last = upstream.requests.at(-1);
  if (last === undefined) throw new Error('nothing reached the upstream');
  return last;
}

function defineTests(t: Test, proxy: ProxyUnderTest, c: Context): void {
  t.test('allow: the upstream sees authgate\'s identity, never the client\'s, nor the credential', async (t) => {
    for (const [kind, credential] of [['API key', c.key], ['login token', c.token]] as const) {
      const res = await c.get('/accounts/42?q=%20a%2Fb&x=%C3%A9&y=1+2', credential);
      t.equal(res.status, 200, kind);
      const seen = identityOf(c.upstream);
      t.equal(seen.url, '/accounts/42?q=%20a%2Fb&x=%C3%A9&y=1+2', `${kind}: path and encoded query as the client sent them`);
      t.equal(seen.headers['x-organization-id'], c.orgId, `${kind}: the organization`);
      t.match(seen.headers['x-organization-scopes'], /accounts:read/, `${kind}: the scopes`);
      t.match(seen.headers['x-authgate-identity'], /^[\w-]+\.[\w-]+\.[\w-]+$/, `${kind}: the signed identity`);
      t.not(seen.headers['x-authgate-identity'], FORGED['x-authgate-identity']);
      t.equal(seen.headers['authorization'], undefined, `${kind}: the credential stays at the edge`);
    }
  });

  t.test('the gateway\'s own paths go to its public port: log in through the proxy, then use the token', async (t) => {
    const org = await c.gw.createOrganization();
    const login = await send(`${c.proxy.url}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email: org.email, password: org.password }) });
    t.equal(login.status, 200, 'POST /auth/login through the proxy');
    const token = login.json().token as string;
    t.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a login token');
    const res = await c.get('/accounts/1', token);
    t.equal(res.status, 200, 'the token works through the proxy');
    t.equal(identityOf(c.upstream).headers['x-organization-id'], org.id);
    const keys = await send(`${c.proxy.url}/auth/sessions`, { headers: { ...UA, authorization: `Bearer ${token}` } });
    t.equal(keys.status, 200, 'the gateway\'s own API through the proxy');
    t.equal((await c.get('/.well-known/jwks.json')).status, 200, 'the JWKS');
    t.equal((await c.get('/console/')).status, 200, 'the console');
  });

  t.test('a client\'s identity-family and underscore headers never reach the upstream (raw bytes)', async (t) => {
    const port = Number(new URL(c.proxy.url).port);
    const sent = (headers: Array<[string, string]>, id: string) =>
      rawRequest(port, `GET /accounts/7 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nUser-Agent: curl/8.5.0\r\nAuthorization: Bearer ${c.key}\r\nX-Request-ID: ${id}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 10_000);
    const families: Array<[string, string]> = [['X-Organization-Role', 'admin'], ['X-Authgate-Foo', 'x'], ...Object.entries(FORGED)];
    for (const [name, value] of families) {
      const before = c.upstream.requests.length;
      const res = await sent([[name, value]], `family-${name}`);
      if (proxy.dropsIdentityFamilies) {
        t.equal(res.status, 200, `${name}: dropped by the proxy before the check`);
        // The three authgate sets are its own values now; any other is gone.
        t.not(identityOf(c.upstream).headers[name.toLowerCase()], value, `${name}: never the client's value`);
      } else {
        t.equal(res.status, 400, `${name}: refused`);
        t.equal(c.upstream.requests.length, before, `${name}: nothing reached the upstream`);
      }
    }
    // nginx drops an underscore name itself (ignore_invalid_headers); Caddy passes it on, and authgate refuses it.
    const before = c.upstream.requests.length;
    const res = await sent([['X-Custom_Name', 'y']], 'underscore');
    t.ok(res.status === 400 || res.status === 200, `an underscore name: ${res.status}`);
    if (res.status === 400) t.equal(c.upstream.requests.length, before, 'nothing reached the upstream');
    else t.equal(identityOf(c.upstream).headers['x-custom_name'], undefined, 'not passed on');
  });

  t.test('a method override is decided too: a read-only key never gets a POST past the proxy (raw bytes)', async (t) => {
    const port = Number(new URL(c.proxy.url).port);
    const fresh = await send(`${c.gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${c.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['accounts:read'] }) });
    const readOnly = fresh.json().apiKey as string;
    for (const name of ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override']) {
      const before = c.upstream.requests.length;
      const res = await rawRequest(port, `GET /accounts/7 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nUser-Agent: curl/8.5.0\r\nAuthorization: Bearer ${readOnly}\r\n${name}: POST\r\n\r\n`, 10_000);
      t.equal(res.status, 403, `${name}: POST needs accounts:write`);
      t.equal(c.upstream.requests.length, before, `${name}: nothing reached the upstream`);
    }
    const res = await rawRequest(port, `GET /accounts/7 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nUser-Agent: curl/8.5.0\r\nAuthorization: Bearer ${c.key}\r\nX-HTTP-Method-Override: POST\r\n\r\n`, 10_000);
    t.equal(parseResponse(res.raw).status, 200, 'a key holding both scopes: forwarded');
    t.equal(identityOf(c.upstream).headers['x-http-method-override'], 'POST');
  });

  t.test('public route: the client\'s identity headers never reach the upstream', async (t) => {
    // A proxy that does not drop them has authgate refuse them (above).
    const res = await c.get('/healthz', undefined, proxy.dropsIdentityFamilies ? FORGED : {});
    t.equal(res.status, 200);
    const seen = identityOf(c.upstream);
    t.equal(seen.url, '/healthz');
    for (const name of Object.keys(FORGED)) t.equal(seen.headers[name], undefined, `${name} absent`);
  });

  t.test('401 with WWW-Authenticate: no credential, an unknown key', async (t) => {
    const before = c.upstream.requests.length;
    for (const credential of [undefined, `${c.key.slice(0, -1)}${c.key.endsWith('A') ? 'B' : 'A'}`]) {
      const res = await c.get('/accounts', credential);
      t.equal(res.status, 401);
      t.match(res.headers['www-authenticate'], /^Bearer realm="authgate"/);
      if (proxy.passesProblemBody) t.match(res.json(), { status: 401 }, 'the problem body');
    }
    t.equal(c.upstream.requests.length, before, 'the upstream saw nothing');
  });

  t.test('403: a credential without the route\'s scope', async (t) => {
    const before = c.upstream.requests.length;
    const res = await send(`${c.proxy.url}/accounts`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${c.readOnly}`, 'content-type': 'application/json' }, body: '{}' });
    t.equal(res.status, 403);
    if (proxy.keepsWwwAuthenticateOn403) t.match(res.headers['www-authenticate'], /insufficient_scope/);
    if (proxy.passesProblemBody) t.match(res.json(), { status: 403 });
    t.equal(c.upstream.requests.length, before, 'the upstream saw nothing');
  });

  t.test('404: a path outside the route table', async (t) => {
    const res = await c.get('/elsewhere', c.key);
    t.equal(res.status, 404);
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    t.match(res.json(), { status: 404 });
  });

  t.test('429 with Retry-After: the credential\'s rate limit', async (t) => {
    const answers: Response[] = [];
    for (let i = 0; i < 3; i++) answers.push(await c.get('/accounts', c.readOnly));
    t.same(answers.map((a) => a.status), [200, 200, 429]);
    t.match(answers[2]!.headers['retry-after'], /^[1-9][0-9]*$/);
    t.match(answers[2]!.headers['content-type'], /^application\/problem\+json/);
    t.match(answers[2]!.json(), { status: 429 });
  });

  t.test('POST with a chunked body: the body reaches the upstream; authgate is never sent one', async (t) => {
    const body = 'x'.repeat(256 * 1024);
    c.resetCheckBody();
    const res = await send(`${c.proxy.url}/accounts`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${c.key}`, 'content-type': 'text/plain' }, body });
    t.equal(res.status, 200);
    const seen = identityOf(c.upstream);
    t.equal(seen.method, 'POST');
    t.equal(seen.body.length, body.length, 'the whole body');
    t.equal(seen.headers['x-organization-id'], c.orgId);
    const check = c.lastCheckBody();
    t.equal(check.transferEncoding, undefined, 'the check announced no chunked body');
    t.ok(check.contentLength === undefined || check.contentLength === '0', `the check announced no body (content-length ${check.contentLength})`);
  });

  t.test('HEAD: decided as HEAD, forwarded as HEAD', async (t) => {
    const res = await send(`${c.proxy.url}/accounts`, { method: 'HEAD', headers: { ...UA, authorization: `Bearer ${c.key}` } });
    t.equal(res.status, 200);
    t.equal(res.body, '');
    t.equal(identityOf(c.upstream).method, 'HEAD');
  });

  t.test('keep-alive: many checks over few connections to authgate', async (t) => {
    // Settle first: connections opened by the tests above are counted before this one starts.
    await c.get('/accounts', c.key);
    const before = c.connections();
    const requests = 40;
    for (let i = 0; i < requests; i++) t.equal((await c.get('/accounts', c.key)).status, 200);
    const opened = c.connections() - before;
    t.ok(opened <= 2, `${opened} new connection(s) to authgate for ${requests} checks`);
  });

  t.test('revoked on another replica: refused through the proxy within the usual bound', async (t) => {
    const created = await c.gw.createApiKey(c.token);
    t.equal((await c.get('/accounts', created.apiKey)).status, 200, 'allowed, and now cached by the deciding replica');
    const revoked = await send(`${c.replica.publicUrl}/auth/api-key/${created.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${c.token}` } });
    t.equal(revoked.status, 204, 'revoked on the other replica');
    t.ok(await eventually(async () => (await c.get('/accounts', created.apiKey)).status === 401, 5000), 'refused through the proxy');
  });

  t.test('405 with Allow: a listed path with another method', async (t) => {
    const res = await send(`${c.proxy.url}/healthz`, { method: 'DELETE', headers: { ...UA } });
    t.equal(res.status, 405);
    t.match(res.headers['allow'], /GET/);
    t.match(res.json(), { status: 405 });
  });

  t.test('POST with Content-Length: the body reaches the upstream', async (t) => {
    const body = JSON.stringify({ note: 'x'.repeat(4096) });
    const res = await send(`${c.proxy.url}/accounts`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body });
    t.equal(res.status, 200);
    t.equal(identityOf(c.upstream).body, body);
  });
}
