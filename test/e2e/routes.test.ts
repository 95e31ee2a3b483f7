import t, { type Test } from 'tap';
import type { RoutesFile } from '../../src/route-table/types.js';
import { send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';

/**
 * The route table on the wire (issue 28): a gateway started with a table of its own
 * (GatewayDeps.routes, compiled in-process), two real upstreams on loopback, real HTTP. Every
 * case is sent twice: as it is (the fast lane takes what it can) and with an `Origin` header (which
 * the fast lane always hands to the framework's catch-all), so both request paths answer alike.
 */

const FILE: RoutesFile = {
  version: 1,
  upstreams: { default: {}, reports: { url: 'http://placeholder.invalid/v2' } },
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts', 'organization:read': "Read the organization's identity" },
  routes: [
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } },
    { id: 'organization-me', path: '/organization/me', match: 'exact', methods: { GET: 'organization:read' } },
    // The second upstream, under its base path.
    { id: 'reports', path: '/v1/reports', match: 'subtree', upstream: 'reports', methods: { GET: 'organization:read' } },
    // Exact beats the subtree it sits in; a deeper subtree beats a shallower one, and decides the upstream.
    { id: 'reports-export', path: '/v1/reports/export', match: 'exact', upstream: 'reports', methods: { GET: 'accounts:write' } },
    { id: 'reports-archive', path: '/v1/reports/archive', match: 'subtree', methods: { POST: 'organization:read' } },
    { id: 'health', path: '/healthz', match: 'exact', credentials: 'none', methods: { GET: 'public' } },
    // One credential kind each.
    { id: 'people', path: '/people', match: 'subtree', credentials: ['login_token'], methods: { GET: 'accounts:read' } },
    { id: 'machines', path: '/machines', match: 'subtree', credentials: ['api_key'], methods: { GET: 'accounts:read' } },
  ],
};

type Setup = { gw: StartedGateway; a: RecordingUpstream; b: RecordingUpstream; apiKey: string; token: string; orgId: string; keyOf(scopes: string[]): Promise<string> };

async function setup(t: Test): Promise<Setup> {
  const a = await startRecordingUpstream();
  const b = await startRecordingUpstream();
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const file: RoutesFile = { ...FILE, upstreams: { default: {}, reports: { url: `${b.url}/v2` } } };
  const gw = await startGateway(t, { upstream: a, deps: { routes: tableOf(file, `${a.url}/a`) } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const keyOf = async (scopes: string[]) => {
    const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ scopes }) });
    if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.body}`);
    return res.json().apiKey as string;
  };
  return { gw, a, b, apiKey: (await gw.createApiKey(token)).apiKey, token, orgId: org.id, keyOf };
}

/** Both ways in: as sent (the fast lane's when it can), and with Origin (the framework's catch-all). */
const WAYS = [
  ['fast lane', {}],
  ['framework', { origin: 'http://elsewhere.example' }],
] as const;

function call(gw: StartedGateway, method: string, path: string, headers: Record<string, string>): Promise<Response> {
  return send(`${gw.publicUrl}${path}`, { method, headers: { ...UA, ...headers }, ...(method === 'POST' && { body: '{}' }) });
}

const SPOOFED = { 'x-organization-id': 'org_spoofed', 'x-organization-scopes': 'everything', 'x-authgate-identity': 'forged', x_organization_id: 'org_underscore', 'x-forwarded-for': '6.6.6.6' };

t.test('two upstreams: each route reaches only its upstream, under its base path, with the identity written and the client\'s copies stripped', async (t) => {
  const { gw, a, b, apiKey, orgId } = await setup(t);
  for (const [way, extra] of WAYS) {
    const cases = [
      { path: '/accounts/42?x=1', reaches: a, other: b, as: '/a/accounts/42?x=1' },
      { path: '/organization/me', reaches: a, other: b, as: '/a/organization/me' },
      { path: '/v1/reports/2026/q3?format=csv', reaches: b, other: a, as: '/v2/v1/reports/2026/q3?format=csv' },
    ];
    for (const { path, reaches, other, as } of cases) {
      const [before, otherBefore] = [reaches.requests.length, other.requests.length];
      const res = await call(gw, 'GET', path, { authorization: `Bearer ${apiKey}`, ...SPOOFED, ...extra });
      t.equal(res.status, 200, `${way} ${path}: ${res.body}`);
      t.equal(reaches.requests.length, before + 1, `${way} ${path}: reached its upstream`);
      t.equal(other.requests.length, otherBefore, `${way} ${path}: and not the other`);
      const seen = reaches.requests.at(-1)!;
      t.equal(seen.url, as, `${way} ${path}: under the upstream's base path`);
      t.equal(seen.headers['x-organization-id'], orgId, `${way}: the organization written`);
      t.equal(seen.headers['x-organization-scopes'], 'accounts:read accounts:write organization:read keys:read keys:write', `${way}: its scopes, in the table's order`);
      t.equal(seen.headers['x-forwarded-for'], '127.0.0.1', `${way}: the gateway's X-Forwarded-For`);
      for (const name of ['authorization', 'x_organization_id']) t.equal(seen.headers[name], undefined, `${way}: no ${name}`);
      t.equal(seen.headers.host, new URL(reaches.url).host, `${way}: the upstream's own Host`);
      // The gateway's identity assertion, never the client's, its `aud` the route's upstream's origin.
      const assertion = String(seen.headers['x-authgate-identity']);
      t.not(assertion, 'forged', `${way}: the client's x-authgate-identity is replaced`);
      const claims = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8')) as { aud?: string; sub?: string };
      t.equal(claims.aud, new URL(reaches.url).origin, `${way} ${path}: aud is its upstream's`);
      t.equal(claims.sub, orgId);
    }
  }
  // Signed once per audience on the framework's way; then the fast lane serves the second upstream's route too.
  t.equal((await call(gw, 'GET', '/v1/reports/again', { authorization: `Bearer ${apiKey}` })).status, 200);
  t.equal(b.requests.at(-1)!.url, '/v2/v1/reports/again');
  const lane = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_fast_lane_requests_total');
  t.match(lane, /route="\/v1\/reports\/\*"[^}]*\} 1/, 'the fast lane took the second upstream\'s route');
});

t.test('a public route forwards without a credential, and never with one\'s identity', async (t) => {
  const { gw, a, b, apiKey } = await setup(t);
  for (const [way, extra] of WAYS) {
    for (const authorization of [undefined, `Bearer ${apiKey}`, 'Bearer not-a-credential', 'Basic dXNlcjpwYXNz']) {
      const before = a.requests.length;
      const res = await call(gw, 'GET', '/healthz', { ...(authorization && { authorization }), ...SPOOFED, ...extra });
      t.equal(res.status, 200, `${way}, ${authorization ?? 'no credential'}: forwarded (${res.body})`);
      t.equal(a.requests.length, before + 1);
      const seen = a.requests.at(-1)!;
      t.equal(seen.url, '/a/healthz');
      for (const name of ['authorization', 'x-organization-id', 'x-organization-scopes', 'x-authgate-identity', 'x_organization_id']) {
        t.equal(seen.headers[name], undefined, `${way}, ${authorization ?? 'no credential'}: no ${name}`);
      }
      t.equal(seen.headers['x-forwarded-for'], '127.0.0.1', 'the gateway\'s X-Forwarded-For, not the claim');
      t.ok(seen.headers['x-request-id'], 'the request id');
    }
    const post = await call(gw, 'POST', '/healthz', { ...extra });
    t.equal(post.status, 405, `${way}: a method the public route does not list`);
    t.equal(post.headers.allow, 'GET, HEAD');
  }
  t.equal(b.requests.length, 0, 'the other upstream saw nothing');
  const lane = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_fast_lane_requests_total');
  t.match(lane, /route="\/healthz"[^}]*\} 4/, 'the fast lane took the public route, whatever Authorization came with it');
});

t.test('boundaries: segment-bounded, no normalisation; the upstreams see nothing of a miss; another spelling is its route\'s', async (t) => {
  const { gw, a, b, apiKey } = await setup(t);
  for (const [way, extra] of WAYS) {
    for (const path of ['/accounts', '/accounts/', '/accounts/1', '/v1/reports', '/v1/reports/']) {
      const res = await call(gw, 'GET', path, { authorization: `Bearer ${apiKey}`, ...extra });
      t.equal(res.status, 200, `${way}: ${path} matches`);
    }
    const [beforeA, beforeB] = [a.requests.length, b.requests.length];
    const misses = [
      '/accountsX',
      '//accounts',
      '/organization/mex',
      '/organization/me/x',
      '/v1/reportsX',
      '/v1',
      '/',
      '/accounts/%2e%2e/keys',
      '/accounts/..%2fx',
      '/accounts%2f..',
      '/accounts/%252e%252e/',
      '/%61ccounts',
    ];
    for (const path of misses) {
      const res = await call(gw, 'GET', path, { authorization: `Bearer ${apiKey}`, ...extra });
      t.ok(res.status === 404 || res.status === 400, `${way}: ${path} is refused (${res.status})`);
      t.match(res.headers['content-type'], /^application\/problem\+json/);
    }
    t.equal(a.requests.length, beforeA, `${way}: upstream A saw none of them`);
    t.equal(b.requests.length, beforeB, `${way}: upstream B saw none of them`);
    // Issue 45: a letter-case or trailing-slash spelling is the route's it spells, forwarded as sent to that route's upstream.
    for (const [path, reaches, as] of [['/Accounts', a, '/a/Accounts'], ['/organization/me/', a, '/a/organization/me/'], ['/V1/reports', b, '/v2/V1/reports'], ['/healthz/', a, '/a/healthz/']] as const) {
      const res = await call(gw, 'GET', path, { authorization: `Bearer ${apiKey}`, ...extra });
      t.equal(res.status, 200, `${way}: ${path} is decided by the route it spells`);
      t.equal(reaches.requests.at(-1)?.url, as, `${way}: ${path} forwarded as sent`);
    }
  }
});

t.test('precedence: exact over subtree, deeper over shallower, a method miss is 405 and never a fall back', async (t) => {
  const { gw, a, b, keyOf } = await setup(t);
  const organizationOnly = await keyOf(['organization:read']);
  for (const [way, extra] of WAYS) {
    const auth = { authorization: `Bearer ${organizationOnly}`, ...extra };
    t.equal((await call(gw, 'GET', '/v1/reports/x', auth)).status, 200, `${way}: the subtree, with its scope`);

    const before = b.requests.length;
    const exact = await call(gw, 'GET', '/v1/reports/export', auth);
    t.equal(exact.status, 403, `${way}: the exact route decides, and asks another scope`);
    t.equal(exact.json().code, 1106);
    t.match(exact.headers['www-authenticate'], /scope="accounts:write"/);
    t.equal(b.requests.length, before, `${way}: nothing forwarded`);
    t.equal((await call(gw, 'GET', '/v1/reports/export/x', auth)).status, 200, `${way}: below the exact path, the subtree again`);

    const deeperBefore = a.requests.length;
    const archived = await call(gw, 'POST', '/v1/reports/archive/2025', { ...auth, 'content-type': 'application/json' });
    t.equal(archived.status, 200, `${way}: the deeper subtree takes it`);
    t.equal(a.requests.at(-1)!.url, '/a/v1/reports/archive/2025', `${way}: to its own upstream`);
    t.equal(a.requests.length, deeperBefore + 1);

    const [beforeA, beforeB] = [a.requests.length, b.requests.length];
    const miss = await call(gw, 'GET', '/v1/reports/archive/2025', auth);
    t.equal(miss.status, 405, `${way}: GET is not the deeper route's, and the shallower one does not take it`);
    t.equal(miss.headers.allow, 'POST');
    t.equal(miss.json().code, 1205);
    t.equal(a.requests.length + b.requests.length, beforeA + beforeB, `${way}: nothing forwarded`);

    const trace = await call(gw, 'DELETE', '/organization/me', auth);
    t.equal(trace.status, 405);
    t.equal(trace.headers.allow, 'GET, HEAD');
  }
  const own = await call(gw, 'GET', '/auth/login', {});
  t.equal(own.status, 405, 'the gateway\'s own paths still answer 405 with their own methods');
  t.equal(own.headers.allow, 'POST');
  t.equal((await call(gw, 'GET', '/auth/nothing', {})).status, 404, 'and 404 below them');
});

t.test('a table swapped in: the next request follows it on both ways; one held across the swap completes where it was going', async (t) => {
  const { gw, a, b, apiKey } = await setup(t);
  const release = a.holdAnswers();
  const held = call(gw, 'GET', '/accounts/held', { authorization: `Bearer ${apiKey}` });
  const reached = async () => a.requests.some((r) => r.url === '/a/accounts/held');
  for (const deadline = Date.now() + 10_000; !(await reached()); ) {
    if (Date.now() > deadline) throw new Error('the held request never reached A');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // Every route now to B (its `default`), and /accounts asks another scope.
  const moved: RoutesFile = { ...FILE, upstreams: { default: { url: `${b.url}/moved` } }, routes: [{ id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'organization:read' } }] };
  gw.gateway.routes.swap(tableOf(moved, a.url));
  for (const [way, extra] of WAYS) {
    const res = await call(gw, 'GET', '/accounts/1', { authorization: `Bearer ${apiKey}`, ...extra });
    t.equal(res.status, 200, `${way}: ${res.body}`);
    t.equal(b.requests.at(-1)!.url, '/moved/accounts/1', `${way}: to the new table's upstream`);
    t.equal((await call(gw, 'GET', '/organization/me', { authorization: `Bearer ${apiKey}`, ...extra })).status, 404, `${way}: a route the new table does not have`);
  }
  release();
  const answer = await held;
  t.equal(answer.status, 200, 'the request held across the swap completed');
  t.equal(answer.json().url, '/a/accounts/held');
});

t.test('an upstream that cannot be reached: 502 on its routes only, counted under its name; the document lists the table\'s routes', async (t) => {
  const a = await startRecordingUpstream();
  t.teardown(() => a.close());
  const file: RoutesFile = { ...FILE, upstreams: { default: {}, reports: { url: 'http://127.0.0.1:9/v2' } } };
  const gw = await startGateway(t, { upstream: a, deps: { routes: tableOf(file, a.url) } });
  const org = await gw.createOrganization();
  const apiKey = (await gw.createApiKey(await gw.login(org.email, org.password))).apiKey;
  for (const [way, extra] of WAYS) {
    const res = await call(gw, 'GET', '/v1/reports/x', { authorization: `Bearer ${apiKey}`, ...extra });
    t.equal(res.status, 502, `${way}: the unreachable upstream's route`);
    t.equal(res.json().code, 1502);
    t.equal((await call(gw, 'GET', '/accounts/1', { authorization: `Bearer ${apiKey}`, ...extra })).status, 200, `${way}: the other upstream's routes still answer`);
  }
  const errors = await gw.gateway.metrics.registry.getSingleMetricAsString('authgate_upstream_errors_total');
  t.match(errors, /authgate_upstream_errors_total\{route="\/v1\/reports\/\*",kind="upstream_unavailable",upstream="reports"[^}]*\} [1-9]/, 'counted under the upstream\'s name');
  t.notMatch(errors, /upstream="default"[^}]*\} [1-9]/, 'nothing under the other upstream');

  const document = (await send(`${gw.opsUrl}/openapi.json`, {})).json() as { paths: Record<string, Record<string, { security?: unknown[]; summary?: string }>> };
  t.ok(document.paths['/v1/reports/{path}']?.get, 'a subtree of the table, below its path');
  t.match(document.paths['/v1/reports/export']?.get?.summary, /the upstream reports/, 'its upstream named');
  t.same(document.paths['/healthz']?.get?.security, [], 'a public route needs no credential');
  t.notOk(document.paths['/{path}'], 'the catch-all itself is not documented');
  t.notOk(document.paths['/organization/me/{path}'], 'an exact route has no subtree');
});

t.test('a route\'s credential kinds: a login-token route refuses API keys (403 1103), an API-key route login tokens (403 1106)', async (t) => {
  const { gw, a, apiKey, token } = await setup(t);
  for (const [way, extra] of WAYS) {
    const before = a.requests.length;
    const people = await call(gw, 'GET', '/people/1', { authorization: `Bearer ${apiKey}`, ...extra });
    t.equal(people.status, 403, `${way}: an API key on a login-token route`);
    t.equal(people.json().code, 1103);
    const machines = await call(gw, 'GET', '/machines/1', { authorization: `Bearer ${token}`, ...extra });
    t.equal(machines.status, 403, `${way}: a login token on an API-key route`);
    t.equal(machines.json().code, 1106);
    t.match(machines.json().detail, /API keys only/);
    t.equal(a.requests.length, before, `${way}: neither forwarded`);
    t.equal((await call(gw, 'GET', '/people/1', { authorization: `Bearer ${token}`, ...extra })).status, 200, `${way}: the login token where it is taken`);
    t.equal((await call(gw, 'GET', '/machines/1', { authorization: `Bearer ${apiKey}`, ...extra })).status, 200, `${way}: the API key where it is taken`);
    t.equal(a.requests.length, before + 2);
  }
});
