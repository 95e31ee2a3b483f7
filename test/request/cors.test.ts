import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { createCors, CORS_EXPOSE_HEADERS, varyWithOrigin } from '../../src/request/cors.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { StoreUnavailable } from '../../src/store/store.js';
import { startGateway, UA } from '../helpers/gateway.js';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { parseResponse, rawRequest, requestText } from '../helpers/raw-http.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * request/cors.ts as the public port applies it (AUTHGATE_CORS_ORIGINS): preflights answered by
 * the gateway (204, never authenticated, never forwarded), the allowed origin's headers on every
 * answer to an actual request, refusals included, and the upstream's own CORS headers replaced.
 */

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

type Headers = LightMyRequestResponse['headers'];
const preflightHeaders = (origin: string, method = 'GET', requested?: string) => ({
  origin,
  'access-control-request-method': method,
  ...(requested !== undefined && { 'access-control-request-headers': requested }),
});
const allowHeadersOf = (headers: Headers) => Object.keys(headers).filter((name) => name.startsWith('access-control-allow-'));
const varyOf = (headers: Headers) => String(headers['vary'] ?? '').split(',').map((v) => v.trim().toLowerCase());

function noCredentials(t: Test, headers: Headers, what: string) {
  t.equal(headers['access-control-allow-credentials'], undefined, `${what}: never Access-Control-Allow-Credentials`);
}

/** Every path of the public API a browser app may preflight: gateway routes, forwarded routes, and an unknown one. */
const PATHS = ['/auth/login', '/auth/api-key', '/auth/api-key/some-id', '/auth/sessions', '/accounts', '/accounts/a/b?x=1', '/organization/me', '/nowhere'];

async function preflight(gw: InjectedGateway, url: string, origin: string, method = 'GET', requested?: string) {
  return gw.pub({ method: 'OPTIONS', url, headers: preflightHeaders(origin, method, requested) });
}

t.test('an allowed origin', async (t) => {
  const gw = await injectGateway(t, { env: { AUTHGATE_CORS_ORIGINS: ` ${APP} , https://other.example.com:8443` } });
  const { apiKey, token, email, password } = await gw.signedUp();

  t.test('preflights: 204 with the allow headers, on any path, never authenticated nor forwarded', async (t) => {
    for (const url of PATHS) {
      for (const method of ['GET', 'POST', 'DELETE', 'OPTIONS']) {
        const res = await preflight(gw, url, APP, method);
        // Forwarded, it would be 502: nothing answers on the inject gateway's upstream.
        t.equal(res.statusCode, 204, `${method} ${url}: 204`);
        t.equal(res.body, '', 'no body');
        t.equal(res.headers['access-control-allow-origin'], APP, 'the origin itself');
        t.equal(res.headers['access-control-allow-methods'], METHODS);
        t.equal(res.headers['access-control-allow-headers'], 'authorization, content-type');
        t.equal(res.headers['access-control-max-age'], '600');
        t.ok(varyOf(res.headers).includes('origin'), 'Vary: Origin');
        t.equal(res.headers['www-authenticate'], undefined, 'not authenticated');
        t.ok(res.headers['x-request-id'], 'the request id as on every answer');
        noCredentials(t, res.headers, url);
      }
    }
    t.equal((await preflight(gw, '/accounts', 'https://other.example.com:8443')).headers['access-control-allow-origin'], 'https://other.example.com:8443', 'each listed origin');
  });

  t.test('a preflight carrying a credential is still a preflight: never authenticated, never forwarded', async (t) => {
    for (const credential of [apiKey, 'agk_not-a-key']) {
      const res = await gw.pub({ method: 'OPTIONS', url: '/accounts', headers: { ...preflightHeaders(APP, 'PUT'), authorization: `Bearer ${credential}` } });
      t.equal(res.statusCode, 204);
      t.equal(res.headers['access-control-allow-origin'], APP);
    }
  });

  t.test('requested headers: only the safe ones are allowed, never reflected blindly', async (t) => {
    const res = await preflight(gw, '/accounts', APP, 'POST', 'Content-Type, X-Request-Id, X-Evil, Idempotency-Key, cookie, x-organization-id, authorization,  If-Match ');
    t.equal(res.headers['access-control-allow-headers'], 'authorization, content-type, x-request-id, idempotency-key, if-match');
    t.ok(varyOf(res.headers).includes('access-control-request-headers'), 'the answer varies with the requested headers');
  });

  t.test('a preflight without a User-Agent is refused like every request (a browser always sends one)', async (t) => {
    const res = await gw.pub({ method: 'OPTIONS', url: '/accounts', bare: true, headers: preflightHeaders(APP) });
    assertProblem(t, res, 403, 1010);
    // A browser never shows an app its preflight's answer, only that the preflight failed.
    t.same(allowHeadersOf(res.headers), [], 'no allow header: the preflight failed');
  });

  t.test('actual requests: every answer carries the origin, Vary and the exposed headers', async (t) => {
    const origin = { origin: APP };
    const answers: Array<[string, LightMyRequestResponse, number]> = [
      ['login', await gw.pub({ method: 'POST', url: '/auth/login', headers: origin, payload: { email, password } }), 200],
      ['gateway route', await gw.pub({ url: '/auth/api-key', headers: { ...origin, authorization: `Bearer ${token}` } }), 200],
      ['401 without a credential', await gw.pub({ url: '/auth/api-key', headers: origin }), 401],
      ['401 on a forwarded route', await gw.pub({ url: '/accounts', headers: origin }), 401],
      ['401 with a bad credential', await gw.pub({ url: '/accounts', headers: { ...origin, authorization: 'Bearer agk_nope' } }), 401],
      ['403 without a User-Agent', await gw.pub({ url: '/accounts', bare: true, headers: origin }), 403],
      ['404', await gw.pub({ url: '/nowhere', headers: origin }), 404],
      ['405', await gw.pub({ method: 'DELETE', url: '/auth/login', headers: origin }), 405],
      ['400 malformed JSON', await gw.pub({ method: 'POST', url: '/auth/login', headers: { ...origin, 'content-type': 'application/json' }, payload: '{' }), 400],
      ['502 upstream unreachable', await gw.pub({ url: '/accounts', headers: { ...origin, authorization: `Bearer ${apiKey}` } }), 502],
    ];
    for (const [what, res, status] of answers) {
      t.equal(res.statusCode, status, `${what}: ${status}`);
      t.equal(res.headers['access-control-allow-origin'], APP, `${what}: Access-Control-Allow-Origin`);
      t.same(varyOf(res.headers), ['origin'], `${what}: Vary: Origin`);
      t.equal(res.headers['access-control-expose-headers'], CORS_EXPOSE_HEADERS, `${what}: the exposed headers`);
      t.equal(res.headers['access-control-allow-methods'], undefined, `${what}: no preflight headers`);
      noCredentials(t, res.headers, what);
    }
    t.match(answers[2]![1].headers['www-authenticate'], /^Bearer/, 'a 401 keeps its WWW-Authenticate (exposed)');
  });

  t.test('a real OPTIONS (no Access-Control-Request-Method) is an actual request: authenticated, then forwarded', async (t) => {
    const refused = await gw.pub({ method: 'OPTIONS', url: '/accounts', headers: { origin: APP } });
    assertProblem(t, refused, 401, 1101);
    t.equal(refused.headers['access-control-allow-origin'], APP);
    const forwarded = await gw.pub({ method: 'OPTIONS', url: '/accounts', headers: { origin: APP, authorization: `Bearer ${apiKey}` } });
    t.equal(forwarded.statusCode, 502, 'forwarded (nothing answers on this upstream)');
    t.equal(forwarded.headers['access-control-allow-origin'], APP);
  });

  t.test('another origin: the preflight is 204 without any allow header, and actual answers carry none', async (t) => {
    for (const url of PATHS) {
      const res = await preflight(gw, url, OTHER, 'POST', 'authorization');
      t.equal(res.statusCode, 204, `${url}: 204, not forwarded`);
      t.same(allowHeadersOf(res.headers), [], `${url}: no Access-Control-Allow-*`);
      t.equal(res.headers['access-control-max-age'], undefined);
    }
    for (const origin of [OTHER, 'null', `${APP}.evil.test`, 'http://app.example.com', `${APP}:443`, `${APP}/`]) {
      const res = await gw.pub({ url: '/auth/api-key', headers: { origin } });
      t.equal(res.statusCode, 401);
      t.same(Object.keys(res.headers).filter((name) => name.startsWith('access-control-')), [], `${origin}: no CORS header`);
      // Still varies on Origin (whatwg/fetch#564): a shared cache must not hand this copy to the app.
      t.equal(res.headers['vary'], 'Origin', `${origin}: Vary: Origin all the same`);
    }
  });

  t.test('without Origin: no CORS header, but Vary: Origin (the answer depends on it)', async (t) => {
    for (const res of [await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } }), await gw.pub({ url: '/accounts' })]) {
      t.same(Object.keys(res.headers).filter((name) => name.startsWith('access-control-')), []);
      t.equal(res.headers['vary'], 'Origin');
    }
  });
});

t.test('origins are compared as browsers send them: normalized when configured', async (t) => {
  const gw = await injectGateway(t, { env: { AUTHGATE_CORS_ORIGINS: 'HTTPS://App.Example.COM:443' } });
  t.equal((await preflight(gw, '/accounts', APP)).headers['access-control-allow-origin'], APP);
  t.equal((await gw.pub({ url: '/accounts', headers: { origin: APP } })).headers['access-control-allow-origin'], APP);
});

t.test('`*`: any origin, answered with `*`, still without credentials', async (t) => {
  const gw = await injectGateway(t, { env: { AUTHGATE_CORS_ORIGINS: '*' } });
  for (const origin of [APP, OTHER, 'null']) {
    const pre = await preflight(gw, '/auth/api-key', origin, 'POST', 'content-type');
    t.equal(pre.statusCode, 204);
    t.equal(pre.headers['access-control-allow-origin'], '*');
    t.equal(pre.headers['access-control-allow-headers'], 'authorization, content-type');
    noCredentials(t, pre.headers, `preflight from ${origin}`);
    const res = await gw.pub({ url: '/auth/api-key', headers: { origin } });
    assertProblem(t, res, 401, 1101);
    t.equal(res.headers['access-control-allow-origin'], '*');
    t.equal(res.headers['access-control-expose-headers'], CORS_EXPOSE_HEADERS);
    noCredentials(t, res.headers, `answer to ${origin}`);
  }
  const plain = await gw.pub({ url: '/auth/api-key' });
  t.equal(plain.headers['access-control-allow-origin'], undefined, 'no Origin, no CORS header');
});

t.test('none configured (the default): preflights are 204 without allow headers, never forwarded', async (t) => {
  const gw = await injectGateway(t);
  const { apiKey } = await gw.signedUp();
  for (const url of PATHS) {
    const res = await preflight(gw, url, APP, 'PUT');
    t.equal(res.statusCode, 204, `${url}: 204`);
    t.same(Object.keys(res.headers).filter((name) => name.startsWith('access-control-') || name === 'vary'), [], `${url}: no CORS header`);
  }
  for (const res of [await gw.pub({ url: '/accounts', headers: { origin: APP } }), await gw.pub({ url: '/accounts', headers: { origin: APP, authorization: `Bearer ${apiKey}` } })]) {
    t.same(Object.keys(res.headers).filter((name) => name.startsWith('access-control-') || name === 'vary'), []);
  }
});

t.test('429 and 503 refusals carry the origin too', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const store = createMemoryStore();
  let failing = false;
  const storage = {
    store: { ...store, findApiKeyByHash: (hash: string) => (failing ? Promise.reject(new StoreUnavailable('store down')) : store.findApiKeyByHash(hash)) },
    bus: createLocalInvalidationBus(),
  };
  const gw = await injectGateway(t, {
    deps: { storage },
    env: { AUTHGATE_UPSTREAM_URL: upstream.url, AUTHGATE_CORS_ORIGINS: APP, AUTHGATE_RATE_LIMIT: '1/60s', AUTHGATE_CACHE_TTL_SECONDS: '0', AUTHGATE_NEGATIVE_CACHE_TTL_SECONDS: '0' },
  });
  const { apiKey } = await gw.signedUp();
  const ask = () => gw.pub({ url: '/accounts', headers: { origin: APP, authorization: `Bearer ${apiKey}` } });
  const first = await ask();
  t.equal(first.statusCode, 200);
  t.equal(first.headers['access-control-allow-origin'], APP);
  t.ok(first.headers['ratelimit'], 'RateLimit, which the app may read');
  const limited = await ask();
  assertProblem(t, limited, 429, 1110);
  t.equal(limited.headers['access-control-allow-origin'], APP);
  t.ok(limited.headers['retry-after']);
  // Without Origin: no CORS header, but the refusal varies on Origin all the same.
  const limitedPlain = await gw.pub({ url: '/accounts', headers: { authorization: `Bearer ${apiKey}` } });
  assertProblem(t, limitedPlain, 429, 1110);
  t.equal(limitedPlain.headers['vary'], 'Origin');
  t.equal(limitedPlain.headers['access-control-allow-origin'], undefined);
  failing = true;
  const downPlain = await gw.pub({ url: '/accounts', headers: { authorization: `Bearer ${apiKey}` } });
  assertProblem(t, downPlain, 503, 1503);
  t.equal(downPlain.headers['vary'], 'Origin');
  const down = await ask();
  assertProblem(t, down, 503, 1503);
  t.equal(down.headers['access-control-allow-origin'], APP);
  t.equal(down.headers['access-control-expose-headers'], CORS_EXPOSE_HEADERS);
  t.equal(upstream.requests.length, 1, 'only the first reached the upstream');
});

t.test("the upstream's own CORS headers never reach the client: the gateway's setting decides", async (t) => {
  const server = createServer((_request, response) => {
    response.writeHead(200, {
      'content-type': 'application/json',
      'access-control-allow-origin': '*',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'TRACE',
      'access-control-allow-headers': '*',
      'access-control-expose-headers': 'x-upstream-secret',
      'access-control-max-age': '86400',
      vary: 'Accept-Encoding',
    });
    response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  for (const origins of [APP, undefined]) {
    const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: url, ...(origins !== undefined && { AUTHGATE_CORS_ORIGINS: origins }) } });
    const { apiKey } = await gw.signedUp();
    const what = origins === undefined ? 'none configured' : 'an allowed origin';
    const res = await gw.pub({ url: '/accounts', headers: { origin: APP, authorization: `Bearer ${apiKey}` } });
    t.equal(res.statusCode, 200);
    noCredentials(t, res.headers, what);
    t.equal(res.headers['access-control-allow-methods'], undefined, `${what}: the upstream's dropped`);
    t.equal(res.headers['access-control-allow-headers'], undefined);
    t.equal(res.headers['access-control-max-age'], undefined);
    if (origins === undefined) {
      t.equal(res.headers['access-control-allow-origin'], undefined, `${what}: the upstream's * is dropped`);
      t.equal(res.headers['access-control-expose-headers'], undefined);
      t.equal(res.headers['vary'], 'Accept-Encoding', "the upstream's Vary as it is");
    } else {
      t.equal(res.headers['access-control-allow-origin'], APP, `${what}: the gateway's, not the upstream's *`);
      t.equal(res.headers['access-control-expose-headers'], CORS_EXPOSE_HEADERS);
      t.same(varyOf(res.headers), ['accept-encoding', 'origin'], "the upstream's Vary keeps Origin");
    }
    const plain = await gw.pub({ url: '/accounts', headers: { authorization: `Bearer ${apiKey}` } });
    t.same(Object.keys(plain.headers).filter((name) => name.startsWith('access-control-')), [], `${what}, no Origin: no CORS header at all`);
  }
});

t.test('real HTTP: a preflight to /accounts never reaches the upstream; a real OPTIONS with a credential does', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_CORS_ORIGINS: APP } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  const port = Number(new URL(gw.publicUrl).port);
  const userAgent: [string, string] = ['User-Agent', UA['user-agent']];

  const preflights = [
    [userAgent, ['Origin', APP], ['Access-Control-Request-Method', 'DELETE'], ['Access-Control-Request-Headers', 'authorization']],
    [userAgent, ['Origin', OTHER], ['Access-Control-Request-Method', 'PUT']],
    [userAgent, ['Origin', APP], ['Access-Control-Request-Method', 'GET'], ['Authorization', `Bearer ${apiKey}`]],
  ] as Array<Array<[string, string]>>;
  for (const [i, headers] of preflights.entries()) {
    const answer = parseResponse((await rawRequest(port, requestText('OPTIONS', '/accounts/1', headers))).raw);
    t.equal(answer.status, 204, `preflight ${i}: 204`);
    t.equal(answer.headers['access-control-allow-origin'], i === 1 ? undefined : APP);
  }
  t.equal(gw.upstream.requests.length, 0, 'no preflight reached the upstream');

  const real = parseResponse((await rawRequest(port, requestText('OPTIONS', '/accounts/1', [userAgent, ['Origin', APP], ['Authorization', `Bearer ${apiKey}`]]))).raw);
  t.equal(real.status, 200, 'the real OPTIONS is forwarded');
  t.equal(real.headers['access-control-allow-origin'], APP);
  t.same(gw.upstream.requests.map((r) => `${r.method} ${r.url}`), ['OPTIONS /accounts/1']);
  const noOrigin = parseResponse((await rawRequest(port, requestText('OPTIONS', '/accounts/1', [userAgent, ['Authorization', `Bearer ${apiKey}`]]))).raw);
  t.equal(noOrigin.status, 200);
  t.equal(gw.upstream.requests.length, 2, 'and one without Origin too');

  // The router's own refusal (an undecodable target) is answered outside the hooks: still stamped.
  const undecodable = parseResponse((await rawRequest(port, requestText('GET', '/accounts/%zz', [userAgent, ['Origin', APP]]))).raw);
  t.equal(undecodable.status, 400);
  t.equal(undecodable.headers['access-control-allow-origin'], APP, "the router's refusal carries the origin too");
  t.equal(gw.upstream.requests.length, 2);
});

t.test('createCors and varyWithOrigin', async (t) => {
  t.test('none configured: stamp does nothing at all', async (t) => {
    const cors = createCors([]);
    let touched = false;
    const request = new Proxy({}, { get: () => ((touched = true), undefined) });
    cors.stamp(request as never, {} as never);
    t.notOk(touched, 'not even a header read');
  });
  t.equal(varyWithOrigin(undefined), 'Origin');
  t.equal(varyWithOrigin('Accept-Encoding'), 'Accept-Encoding, Origin');
  t.equal(varyWithOrigin('accept-encoding, origin'), 'accept-encoding, origin');
  t.equal(varyWithOrigin(['Accept', 'Origin']), 'Accept, Origin');
  t.equal(varyWithOrigin('*'), '*');
  t.equal(varyWithOrigin('X-Origin-Thing'), 'X-Origin-Thing, Origin');
});
