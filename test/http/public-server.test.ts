import t from 'tap';
import { eventually } from '../helpers/gateway.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * http/public-server.ts: the order in which a request meets the pipeline, by inject. The
 * stamped headers first, then the User-Agent guard, the path guard, authentication and
 * authorization, and only then the body; after the answer, one metric and one log line.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('pipeline order', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url } });
  const { token, apiKey } = await gw.signedUp();

  t.test('every answer carries x-request-id and x-authgate-environment, refusals included', async (t) => {
    const answers = [
      await gw.pub({ url: '/accounts', bare: true }),
      await gw.pub({ url: '/nowhere' }),
      await gw.pub({ url: '/accounts' }),
      await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${apiKey}` } }),
    ];
    t.same(answers.map((res) => res.statusCode), [403, 404, 401, 200]);
    for (const res of answers) {
      t.match(res.headers['x-request-id'], UUID);
      t.equal(res.headers['x-authgate-environment'], 'sandbox');
      t.equal(res.headers['strict-transport-security'], undefined, 'no HSTS without TLS');
    }
  });

  t.test('1. the User-Agent guard comes before routing, the path guard, authentication and the body', async (t) => {
    const cases: Array<[string, Parameters<typeof gw.pub>[0]]> = [
      ['an unknown path', { url: '/nowhere' }],
      ['a known path, another method', { method: 'DELETE', url: '/auth/login' }],
      ['an ambiguous forwarded path', { url: '/accounts/a%2fb' }],
      ['a forwarded route without a credential', { url: '/accounts' }],
      ['a forwarded route with a valid credential', { url: '/accounts', headers: { authorization: `Bearer ${apiKey}` } }],
      ['a malformed login body', { method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"x":' }],
    ];
    for (const [what, options] of cases) {
      for (const userAgent of [undefined, '', '   ']) {
        const headers = { ...options.headers, ...(userAgent !== undefined && { 'user-agent': userAgent }) };
        const res = await gw.pub({ ...options, headers, bare: true });
        assertProblem(t, res, 403, 1010, `${what}, User-Agent ${JSON.stringify(userAgent)}`);
      }
    }
    t.equal(upstream.requests.length, 0, 'nothing reached the upstream');
  });

  t.test('2. the path guard comes before authentication: an ambiguous path is a 404 to anyone', async (t) => {
    // (Dot segments are resolved by inject itself: the raw-socket suites send those.)
    for (const url of ['/accounts/a%2fb', '/accounts/a%2Fb/c', '/accounts/a%5cb', '/accounts/%2e%2e%2fx']) {
      assertProblem(t, await gw.pub({ url }), 404, 1204, `${url} without a credential`);
      assertProblem(t, await gw.pub({ url, headers: { authorization: `Bearer ${apiKey}` } }), 404, 1204, `${url} with one`);
    }
    assertProblem(t, await gw.pub({ url: '/accounts/%252e%252e/x' }), 400, 1200, 'doubly encoded, before authentication');
    t.equal(upstream.requests.length, 0, 'nothing reached the upstream');
  });

  t.test('3. authentication and authorization come before the body is read', async (t) => {
    const malformed = { 'content-type': 'application/json' };
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: malformed, payload: '{"x":' }), 401, 1101, 'no credential');
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: { ...malformed, authorization: `Bearer ${apiKey}` }, payload: '{"x":' }), 403, 1103, 'an API key where a login token is needed');
    const big = 'x'.repeat(200 * 1024);
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/logout', headers: { 'content-type': 'text/plain' }, payload: big }), 401, 1101, 'an oversized body of another type');
    assertProblem(t, await gw.pub({ method: 'PUT', url: '/accounts/1', headers: { 'content-type': 'application/json' }, payload: big }), 401, 1101, 'a forwarded body without a credential');
    t.equal(upstream.requests.length, 0, 'nothing reached the upstream');
  });

  t.test('4. the gateway\'s own routes take strict JSON bodies', async (t) => {
    const login = (headers: Record<string, string>, payload: string) => gw.pub({ method: 'POST', url: '/auth/login', headers, payload });
    const body = JSON.stringify({ email: 'x@example.test', password: 'whatever' });
    assertProblem(t, await login({ 'content-type': 'application/json', 'content-encoding': 'gzip' }, body), 415, 1202, 'a compressed body');
    assertProblem(t, await login({ 'content-type': 'application/json' }, JSON.stringify({ email: 'x@example.test', password: 'p'.repeat(70 * 1024) })), 413, 1203, 'over 64 KiB');
    assertProblem(t, await login({ 'content-type': 'application/json' }, ''), 400, 1200, 'an empty body is no body');
    // Absurd nesting: a 400 either way, never a 5xx (whether the parser or the schema refuses it).
    const nested = await login({ 'content-type': 'application/json' }, `{"email":${'['.repeat(20000)}${']'.repeat(20000)}}`);
    t.equal(nested.statusCode, 400, 'absurd nesting: 400');
    t.match(String(nested.headers['content-type']), /^application\/problem\+json/);
    t.ok([1200, 1201].includes(nested.json<{ code: number }>().code), 'absurd nesting: a request problem');
    assertProblem(t, await login({ 'content-type': 'text/plain' }, body), 415, 1202, 'text/plain');
    t.equal((await login({ 'content-type': 'application/json', 'content-encoding': 'identity' }, body)).statusCode, 401, 'identity is no encoding: judged');
  });

  t.test('5. the router: 404 for an unknown path, 405 with Allow for a known one', async (t) => {
    assertProblem(t, await gw.pub({ url: '/accounts-and-more' }), 404, 1204, 'not under the /accounts prefix');
    // Issue 45: another letter case or a trailing slash is the route it spells (its credential asked for), `//` refused.
    assertProblem(t, await gw.pub({ url: '/Accounts' }), 401, 1101, 'another letter case: the route it spells');
    assertProblem(t, await gw.pub({ url: '/organization/me/' }), 401, 1101, 'a trailing slash: the route it spells');
    assertProblem(t, await gw.pub({ url: '//accounts' }), 400, 1240, 'an empty segment');
    const wrongMethod = await gw.pub({ method: 'POST', url: '/organization/me', headers: { authorization: `Bearer ${token}` } });
    assertProblem(t, wrongMethod, 405, 1205);
    t.equal(wrongMethod.headers['allow'], 'GET, HEAD');
    t.equal(upstream.requests.length, 0, 'nothing reached the upstream');
  });

  t.test('6. after the answer: one access-log line and the metric, by route template', async (t) => {
    const res = await gw.pub({ url: '/accounts/42/orders?secret-query=1', headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': 'trace-abc.123' } });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['x-request-id'], 'trace-abc.123', 'a sane client request id is kept');
    const line = () => gw.logs.records().filter((r) => r['reqId'] === 'trace-abc.123' && r['msg'] === 'request');
    t.ok(await eventually(async () => line().length === 1), 'one access-log line');
    t.match(line()[0], { method: 'GET', route: '/accounts/*', status: 200, credentialKind: 'api_key', keyId: /^key_/, orgId: /^org_/ });
    t.notOk(gw.logs.text().includes(apiKey), 'never the credential');
    t.notOk(gw.logs.text().includes('secret-query'), 'never the raw path or query');

    await gw.pub({ url: '/nowhere/raw-path-marker' });
    const metrics = (await gw.ops({ url: '/metrics', bare: true })).body;
    t.match(metrics, /authgate_http_requests_total\{[^}]*route="\/accounts\/\*"[^}]*status_code="200"[^}]*\} 1/);
    t.match(metrics, /authgate_http_requests_total\{[^}]*route="unmatched"[^}]*status_code="404"/);
    t.notOk(metrics.includes('raw-path-marker'), 'the raw path is never a label');
    t.match(metrics, /authgate_auth_decisions_total\{[^}]*kind="api_key",outcome="allowed",reason="ok"/);
    t.match(metrics, /authgate_upstream_request_duration_seconds_count\{[^}]*route="\/accounts\/\*"/);
  });

  t.test('an insane client request id is replaced', async (t) => {
    for (const id of ['has space', 'x'.repeat(129), 'quote"d', '']) {
      const res = await gw.pub({ url: '/nowhere', headers: { 'x-request-id': id } });
      t.match(res.headers['x-request-id'], UUID, JSON.stringify(id.slice(0, 20)));
    }
  });
});

t.test('with TLS offloaded, no HSTS either; the environment header follows the config', async (t) => {
  const gw = await injectGateway(t, { env: { AUTHGATE_ENVIRONMENT: 'production', AUTHGATE_TLS: 'offloaded' } });
  const res = await gw.pub({ url: '/nowhere' });
  t.equal(res.headers['x-authgate-environment'], 'production');
  t.equal(res.headers['strict-transport-security'], undefined);
});
