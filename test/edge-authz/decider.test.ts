import t, { type Test } from 'tap';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { EdgeAllow, EdgeDecision, EdgeDeny, EdgeRequest } from '../../src/edge-authz/decision.js';
import type { RoutesFile } from '../../src/route-table/types.js';
import { ADMIN_TOKEN, eventually, send, startGateway, UA, type StartedGateway } from '../helpers/gateway.js';
import { tableOf } from '../helpers/routes.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * The edge proxies' decider (edge-authz/decider.ts) in a real gateway (memory store): every answer
 * it gives, and that it is the public port's decision (same headers upstream, same problems, one
 * rate-limit budget for both ports). The HTTP endpoints over it are tested in their own files.
 */

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts', 'reports:read': 'Read reports' },
  routes: [
    { id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } },
    { id: 'reports', path: '/reports', match: 'exact', credentials: ['api_key'], methods: { GET: 'reports:read' } },
    { id: 'limited', path: '/limited', match: 'exact', methods: { GET: 'accounts:read' }, rateLimit: '2/1h' },
    { id: 'health', path: '/healthz', match: 'exact', credentials: 'none', methods: { GET: 'public' } },
    { id: 'open', path: '/open', match: 'exact', credentials: 'none', methods: { GET: 'public' }, rateLimit: '2/1h' },
  ],
};

const edgeRequest = (target: string, credential?: string | string[], more: Partial<EdgeRequest> = {}): EdgeRequest => ({
  protocol: 'forward_auth',
  method: 'GET',
  target,
  authorization: credential === undefined ? [] : Array.isArray(credential) ? credential : [`Bearer ${credential}`],
  clientAddress: '192.0.2.10',
  clientHeaders: {},
  identityHeaderSent: false,
  requestId: undefined,
  ...more,
});

function allowed(t: Test, decision: EdgeDecision): EdgeAllow {
  t.equal(decision.allowed, true, decision.allowed ? 'allowed' : `allowed, not ${decision.status} ${decision.body}`);
  return decision as EdgeAllow;
}
function denied(t: Test, decision: EdgeDecision, status: number, code: number): EdgeDeny {
  t.equal(decision.allowed, false, 'denied');
  const deny = decision as EdgeDeny;
  t.equal(deny.status, status);
  t.equal(deny.headers['content-type'], 'application/problem+json');
  t.equal(deny.headers['cache-control'], 'no-store');
  const body = JSON.parse(deny.body) as { code: number; status: number };
  t.equal(body.code, code);
  t.equal(body.status, status);
  return deny;
}

type Setup = { gw: StartedGateway; org: { id: string; email: string; password: string }; token: string; key: { id: string; apiKey: string } };

async function setup(t: Test, env: Record<string, string> = {}): Promise<Setup> {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(t, { env, upstream, deps: { routes: tableOf(FILE, upstream.url), keyUseFlushMs: 20 } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const key = await gw.createApiKey(token);
  return { gw, org, token, key };
}

const createKey = async (gw: StartedGateway, token: string, body: object) => {
  const res = await send(`${gw.publicUrl}/auth/api-key`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.body}`);
  return res.json() as { id: string; apiKey: string };
};

t.test('an allow carries what the public port sends upstream, and the signed identity for the route\'s upstream', async (t) => {
  const { gw, org, token, key } = await setup(t);
  const decide = gw.gateway.edge.decide;
  for (const credential of [token, key.apiKey]) {
    const allow = allowed(t, await decide(edgeRequest('/accounts/42?x=%20y', credential)));
    t.equal(allow.route, '/accounts/*');
    t.equal(allow.cacheSeconds, 0, 'no-store unless configured');
    t.same(allow.removeHeaders, [], 'every identity header is set');
    t.equal(allow.upstreamHeaders['x-organization-id'], org.id);
    const viaPublic = await gw.get('/accounts/42', { authorization: `Bearer ${credential}` });
    t.equal(viaPublic.status, 200);
    const seen = gw.upstream.requests.at(-1)!.headers;
    t.equal(allow.upstreamHeaders['x-organization-scopes'], seen['x-organization-scopes'], 'the scopes header the public port sends');
    const audience = new URL(gw.upstream.url).origin;
    const { payload } = await jwtVerify(allow.upstreamHeaders['x-authgate-identity']!, createRemoteJWKSet(new URL(`${gw.opsUrl}/.well-known/jwks.json`)), { issuer: 'authgate', audience });
    t.equal(payload.sub, org.id);
  }
  t.notOk(Object.keys((allowed(t, await decide(edgeRequest('/accounts', token))) ).upstreamHeaders).some((name) => name.startsWith('ratelimit')), 'no RateLimit headers without a limit');
  // A warm cache, a held assertion, no limit: decided without a promise.
  const warm = decide(edgeRequest('/accounts', key.apiKey));
  t.notOk(warm instanceof Promise, 'a warm decision is synchronous');
});

t.test('refusals: the public port\'s problems, statuses and WWW-Authenticate', async (t) => {
  const { gw, token, key } = await setup(t);
  const decide = gw.gateway.edge.decide;

  let deny = denied(t, await decide(edgeRequest('/accounts')), 401, 1101);
  t.equal(deny.headers['www-authenticate'], 'Bearer realm="authgate"');
  t.equal(deny.route, '/accounts/*');
  deny = denied(t, await decide(edgeRequest('/accounts', 'agk_test_nope')), 401, 1102);
  t.equal(deny.headers['www-authenticate'], 'Bearer realm="authgate", error="invalid_token"');
  deny = denied(t, await decide(edgeRequest('/accounts', 'not.a.jwt')), 401, 1102);
  t.equal(deny.headers['www-authenticate'], 'Bearer realm="authgate", error="invalid_token"');
  deny = denied(t, await decide(edgeRequest('/accounts', [`Bearer ${token}`, `Bearer ${key.apiKey}`])), 401, 1102);
  t.equal(deny.headers['www-authenticate'], 'Bearer realm="authgate", error="invalid_request"', 'two Authorization values: refused as duplicate');
  denied(t, await decide(edgeRequest('/accounts', [`Basic abc`])), 401, 1102);

  // The scope, and the route's credential kinds.
  const readOnly = await createKey(gw, token, { scopes: ['accounts:read'] });
  deny = denied(t, await decide(edgeRequest('/accounts', readOnly.apiKey, { method: 'POST' })), 403, 1106);
  t.equal(deny.headers['www-authenticate'], 'Bearer realm="authgate", error="insufficient_scope", scope="accounts:write"');
  deny = denied(t, await decide(edgeRequest('/reports', token)), 403, 1106);
  t.match(deny.body, /API keys only/);
  allowed(t, await decide(edgeRequest('/reports', key.apiKey)));

  // The route table and the path guard.
  deny = denied(t, await decide(edgeRequest('/nowhere', token)), 404, 1204);
  t.equal(deny.route, undefined);
  denied(t, await decide(edgeRequest('/auth/login', token)), 404, 1204);
  denied(t, await decide(edgeRequest('/accounts/../reports', key.apiKey)), 404, 1204);
  denied(t, await decide(edgeRequest('/%61ccounts', key.apiKey)), 404, 1204);
  denied(t, await decide(edgeRequest('http://example.test/accounts', key.apiKey)), 404, 1204);
  denied(t, await decide(edgeRequest('', key.apiKey)), 404, 1204);
  denied(t, await decide(edgeRequest('/accounts/%252e%252e/x', key.apiKey)), 400, 1200);
  deny = denied(t, await decide(edgeRequest('/healthz', undefined, { method: 'DELETE' })), 405, 1205);
  t.equal(deny.headers['allow'], 'GET, HEAD');
  deny = denied(t, await decide(edgeRequest('/accounts', token, { method: 'get' })), 405, 1205);
  t.equal(deny.headers['allow'], 'GET, HEAD, POST', 'methods are case-sensitive; Allow in the public port\'s order');
  t.equal((await send(`${gw.publicUrl}/accounts`, { method: 'PUT', headers: UA })).headers['allow'], 'GET, HEAD, POST', 'as the public port says it');

  // A revoked key: 401 at once.
  const revoked = await createKey(gw, token, {});
  allowed(t, await decide(edgeRequest('/accounts', revoked.apiKey)));
  t.equal((await send(`${gw.publicUrl}/auth/api-key/${revoked.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 204);
  denied(t, await decide(edgeRequest('/accounts', revoked.apiKey)), 401, 1102);
});

t.test('a public route reads no credential, and tells the proxy to drop every identity header', async (t) => {
  const { gw } = await setup(t);
  const decide = gw.gateway.edge.decide;
  for (const credential of [undefined, 'garbage']) {
    const allow = allowed(t, await decide(edgeRequest('/healthz', credential, { method: 'HEAD' })));
    t.same(allow.upstreamHeaders, {});
    t.same([...allow.removeHeaders].sort(), ['x-authgate-identity', 'x-organization-id', 'x-organization-scopes']);
    t.equal(allow.route, '/healthz');
  }
  // Its own limit counts per client address, as the proxy reported it.
  allowed(t, await decide(edgeRequest('/open')));
  allowed(t, await decide(edgeRequest('/open')));
  const deny = denied(t, await decide(edgeRequest('/open')), 429, 1110);
  t.ok(Number(deny.headers['retry-after']) > 3500);
  t.match(deny.body, /per client address/);
  allowed(t, await decide(edgeRequest('/open', undefined, { clientAddress: '192.0.2.11' }))); // another address: a window of its own
});

t.test('rate limits: the public port\'s budget, shared; RateLimit headers upstream; a 429 with Retry-After; never cached', async (t) => {
  const { gw, token } = await setup(t, { AUTHGATE_AUTHZ_CACHE_SECONDS: '3' });
  const decide = gw.gateway.edge.decide;
  t.equal(allowed(t, await decide(edgeRequest('/accounts', token))).cacheSeconds, 3, 'an unlimited allow may be kept as configured');

  const limitedKey = await createKey(gw, token, { rateLimit: '3/1h' });
  const first = allowed(t, await decide(edgeRequest('/accounts', limitedKey.apiKey)));
  t.equal(first.cacheSeconds, 0, 'a limited allow is never kept');
  t.match(first.upstreamHeaders['ratelimit-policy'], /q=3/);
  t.match(first.upstreamHeaders['ratelimit'], /r=2/);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${limitedKey.apiKey}` })).status, 200, 'the public port spends the same budget');
  allowed(t, await decide(edgeRequest('/accounts', limitedKey.apiKey)));
  let deny = denied(t, await decide(edgeRequest('/accounts', limitedKey.apiKey)), 429, 1110);
  t.ok(Number(deny.headers['retry-after']) > 3500, 'Retry-After: until the window ends');
  t.match(deny.headers['ratelimit'], /r=0/);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${limitedKey.apiKey}` })).status, 429, 'and the public port refuses it too');

  // The route's own limit, per credential: its allows are never kept either (issue 45), or a
  // proxy would serve requests the limit never counts.
  t.equal(allowed(t, await decide(edgeRequest('/limited', token))).cacheSeconds, 0, 'an allow under the route\'s own limit is never kept');
  allowed(t, await decide(edgeRequest('/limited', token)));
  deny = denied(t, await decide(edgeRequest('/limited', token)), 429, 1110);
  t.match(deny.body, /per credential/);
});

t.test('every decision is counted by protocol, outcome and route, in the auth-decision metric and the access line', async (t) => {
  const { gw, key, org } = await setup(t);
  const decide = gw.gateway.edge.decide;
  await decide(edgeRequest('/accounts', key.apiKey, { protocol: 'auth_request', requestId: 'req-edge-1' }));
  await decide(edgeRequest('/accounts', undefined, { protocol: 'ext_authz_http' }));
  await decide(edgeRequest('/nowhere', key.apiKey, { protocol: 'ext_authz_grpc' }));
  const metrics = (await send(`${gw.opsUrl}/metrics`)).body;
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="auth_request",outcome="allowed",route="\/accounts\/\*"[^}]*\} 1/);
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="ext_authz_http",outcome="denied",route="\/accounts\/\*"[^}]*\} 1/);
  t.match(metrics, /authgate_authz_decisions_total\{[^}]*protocol="ext_authz_grpc",outcome="denied",route="unmatched"[^}]*\} 1/);
  t.match(metrics, /authgate_auth_decisions_total\{[^}]*kind="none",outcome="denied",reason="missing"/);
  const line = gw.logs.records().find((record) => record.reqId === 'req-edge-1');
  t.match(line, { msg: 'request', protocol: 'auth_request', method: 'GET', route: '/accounts/*', status: 200, orgId: org.id, credentialKind: 'api_key', keyId: key.id });
  t.notOk(gw.logs.text().includes(key.apiKey), 'never the key itself');
  // lastUsedAt, as on the public port.
  t.ok(
    await eventually(async () => {
      const res = await send(`${gw.opsUrl}/admin/organizations/${org.id}/api-keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return res.status === 200 && JSON.stringify(res.json()).includes('"lastUsedAt":"');
    }, 5000),
    'the key\'s use is noted',
  );
});

t.test('a kept allow: the same object while credential, table, route and assertion are; never for a counted limit', async (t) => {
  const { gw, token, key } = await setup(t);
  const decide = gw.gateway.edge.decide;
  for (const credential of [token, key.apiKey]) {
    const first = allowed(t, await decide(edgeRequest('/accounts/1', credential)));
    const again = allowed(t, await decide(edgeRequest('/accounts/2?q=1', credential, { protocol: 'auth_request' })));
    t.equal(again, first, 'the same allow object for the same credential and route (http-server.ts keeps its header block with it)');
    // Another route: its own allow, with its own label; back again: equal to the first.
    const other = allowed(t, await decide(edgeRequest('/limited', credential)));
    t.not(other, first);
    t.equal(other.route, '/limited');
    const back = allowed(t, await decide(edgeRequest('/accounts', credential)));
    t.same(back, first, 'the same answer, made anew after another route');
  }
  // Another credential of the same organization with fewer scopes: never the first one's allow.
  const narrow = await createKey(gw, token, { scopes: ['accounts:read'] });
  const wide = allowed(t, await decide(edgeRequest('/accounts', key.apiKey)));
  const narrowAllow = allowed(t, await decide(edgeRequest('/accounts', narrow.apiKey)));
  t.not(narrowAllow, wide);
  t.equal(narrowAllow.upstreamHeaders['x-organization-scopes'], 'accounts:read');
  t.not(narrowAllow.upstreamHeaders['x-authgate-identity'], wide.upstreamHeaders['x-authgate-identity'], 'each credential its own assertion');
  // A credential with a counted limit: a new allow (and RateLimit) every time.
  const limited = await createKey(gw, token, { rateLimit: '5/1h' });
  const one = allowed(t, await decide(edgeRequest('/accounts', limited.apiKey)));
  const two = allowed(t, await decide(edgeRequest('/accounts', limited.apiKey)));
  t.not(two, one);
  t.match(one.upstreamHeaders['ratelimit'], /r=4/);
  t.match(two.upstreamHeaders['ratelimit'], /r=3/);
});
