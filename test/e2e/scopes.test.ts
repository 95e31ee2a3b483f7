import t from 'tap';
import { LEGACY_SCOPES as SCOPES } from '../../src/authz/scopes.js';

/** A scope is a name. */
type Scope = string;
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';

type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
import { assertProblem, injectGateway, type InjectedGateway, type InjectOptions } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * Scopes, end to end: a whole gateway forwarding to a real upstream over loopback. Every
 * forwarded method of every forwarded route, and every gateway route open to API keys, is
 * called with a key holding exactly its scope (allowed) and with a key holding every other scope
 * (403 1106, and nothing reaches the upstream). A narrowing on one replica holds at once on
 * another that had the key cached.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function keyWith(gw: InjectedGateway, token: string, scopes: readonly Scope[] | undefined, name?: string) {
  const res = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { ...(scopes && { scopes }), ...(name && { name }) } });
  if (res.statusCode !== 201) throw new Error(`create key: ${res.statusCode} ${res.body}`);
  return res.json<{ id: string; apiKey: string; scopes: string[] }>();
}

/** Every forwarded (method, path, scope): HEAD with GET's scope, a path below each subtree too. */
function forwardedCalls(): Array<{ method: HttpMethod; url: string; scope: Scope }> {
  const calls: Array<{ method: HttpMethod; url: string; scope: Scope }> = [];
  for (const route of BUILTIN_ROUTES_FILE.routes) {
    const urls = route.match === 'subtree' ? [route.path, `${route.path}/acc_1/transactions?limit=2`] : [route.path];
    for (const [method, scope] of Object.entries(route.methods) as [HttpMethod, Scope][]) {
      for (const url of urls) {
        calls.push({ method, url, scope });
        if (method === 'GET') calls.push({ method: 'HEAD', url, scope });
      }
    }
  }
  return calls;
}

t.test('every forwarded method needs its scope: exactly it passes (and is told upstream), every other scope is 403 1106 and reaches nothing', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await injectGateway(t, { env: { AUTHGATE_UPSTREAM_URL: upstream.url } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const only = new Map<Scope, string>();
  const allBut = new Map<Scope, string>();
  for (const scope of SCOPES) {
    only.set(scope, (await keyWith(gw, token, [scope])).apiKey);
    allBut.set(scope, (await keyWith(gw, token, SCOPES.filter((s) => s !== scope))).apiKey);
  }
  const calls = forwardedCalls();
  t.ok(calls.length >= 14, `${calls.length} calls`);
  for (const { method, url, scope } of calls) {
    const body = method === 'GET' || method === 'HEAD' ? undefined : '{"amount":1}';
    const request = (credential: string): InjectOptions => ({
      method,
      url,
      headers: { ...bearer(credential), ...(body && { 'content-type': 'application/json' }), 'x-organization-scopes': 'keys:write' },
      ...(body !== undefined && { payload: body }),
    });
    const before = upstream.requests.length;
    const allowed = await gw.pub(request(only.get(scope)!));
    t.equal(allowed.statusCode, 200, `${method} ${url} with only ${scope}`);
    t.equal(upstream.requests.length, before + 1, 'reached the upstream');
    const received = upstream.requests.at(-1)!;
    t.equal(received.headers['x-organization-scopes'], scope, "the upstream is told the key's scopes, not the client's claim");
    t.equal(received.headers['x-organization-id'], org.id);

    const refused = await gw.pub(request(allBut.get(scope)!));
    if (method === 'HEAD') {
      t.equal(refused.statusCode, 403, `${method} ${url} without ${scope}: 403, no body`);
    } else {
      const problem = assertProblem(t, refused, 403, 1106, `${method} ${url} without ${scope}`);
      t.equal(problem.detail, `This operation needs the scope ${scope}.`);
    }
    t.equal(refused.headers['www-authenticate'], `Bearer realm="authgate", error="insufficient_scope", scope="${scope}"`);
    t.equal(upstream.requests.length, before + 1, 'nothing reached the upstream');

    const withToken = await gw.pub(request(token));
    t.equal(withToken.statusCode, 200, 'a login token holds every scope');
    t.equal(upstream.requests.at(-1)!.headers['x-organization-scopes'], SCOPES.join(' '));
  }
});

t.test("the gateway's key routes: keys:read lists and reads, keys:write changes and deletes; creating and rolling stay login-token only", async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const target = await keyWith(gw, token, undefined, 'target');
  const reader = await keyWith(gw, token, ['keys:read']);
  const writer = await keyWith(gw, token, ['keys:write']);
  const accounts = await keyWith(gw, token, ['accounts:read', 'accounts:write', 'organization:read']);

  for (const url of ['/auth/api-key', `/auth/api-key/${target.id}`]) {
    t.equal((await gw.pub({ url, headers: bearer(reader.apiKey) })).statusCode, 200, `GET ${url} with keys:read`);
    for (const key of [writer, accounts]) {
      const refused = await gw.pub({ url, headers: bearer(key.apiKey) });
      assertProblem(t, refused, 403, 1106, `GET ${url} without keys:read`);
      t.equal(refused.headers['www-authenticate'], 'Bearer realm="authgate", error="insufficient_scope", scope="keys:read"');
    }
  }
  for (const key of [reader, accounts]) {
    assertProblem(t, await gw.pub({ method: 'PATCH', url: `/auth/api-key/${target.id}`, headers: bearer(key.apiKey), payload: { name: 'stolen' } }), 403, 1106, 'PATCH without keys:write');
    assertProblem(t, await gw.pub({ method: 'DELETE', url: `/auth/api-key/${target.id}`, headers: bearer(key.apiKey) }), 403, 1106, 'DELETE without keys:write');
  }
  const shown = await gw.pub({ url: `/auth/api-key/${target.id}`, headers: bearer(token) });
  t.match(shown.json(), { id: target.id, name: 'target' }, 'nothing the refused requests asked for happened');
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/api-key/${target.id}`, headers: bearer(writer.apiKey), payload: { name: 'renamed' } })).statusCode, 200, 'PATCH with keys:write');

  for (const key of [reader, writer, accounts]) {
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(key.apiKey) }), 403, 1103, 'an API key never creates one');
    assertProblem(t, await gw.pub({ method: 'POST', url: `/auth/api-key/${target.id}/roll`, headers: bearer(key.apiKey) }), 403, 1103, 'nor rolls one');
  }
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${target.id}`, headers: bearer(writer.apiKey) })).statusCode, 204, 'DELETE with keys:write');
  assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: bearer(target.apiKey) }), 401, 1102, 'the deleted key');
});

t.test('creating with scopes: the table\'s names, at least one, no repeats; the answer and the listing say them in the table\'s order', async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const made = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes: ['keys:read', 'accounts:read'] } });
  t.equal(made.statusCode, 201);
  t.same(made.json().scopes, ['accounts:read', 'keys:read']);
  t.same((await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token) })).json().scopes, SCOPES, 'no body: every scope');
  t.same((await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes: [...SCOPES] } })).json().scopes, SCOPES, 'every scope named');
  for (const scopes of [[], ['accounts:read', 'accounts:read'], 'accounts:read', [1], ['ACCOUNTS:READ'], [...SCOPES, 'x']]) {
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes } }), 400, 1200, `scopes ${JSON.stringify(scopes)}`);
  }
  // Shaped as a name, but not one the table declares: 1212, naming each unknown one.
  const unknown = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes: ['accounts:read', 'accounts:admin', 'invoices:read'] } });
  assertProblem(t, unknown, 400, 1212, 'undeclared scopes');
  t.match(unknown.json().detail, /accounts:admin, invoices:read/);
  const listed = (await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json<{ keys: Array<{ scopes: string[] }> }>();
  t.same(listed.keys.map((key) => key.scopes), [SCOPES, SCOPES, ['accounts:read', 'keys:read']], 'newest first, each with its scopes');
});

t.test('PATCH only narrows: fewer scopes and an earlier end pass, more scopes or a later end are 400 and change nothing', async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const made = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes: ['accounts:read', 'accounts:write', 'keys:write'], expiresIn: 3600 } });
  const key = made.json<{ id: string; apiKey: string; expiresAt: string }>();
  const patch = (payload: object, credential = token) => gw.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(credential), payload });

  const wider = await patch({ scopes: ['accounts:read', 'keys:read'] });
  t.match(assertProblem(t, wider, 400, 1200, 'a scope it does not hold').detail, /only be narrowed/);
  const later = await patch({ expiresAt: new Date(Date.parse(key.expiresAt) + 60_000).toISOString() });
  t.match(assertProblem(t, later, 400, 1200, 'a later end').detail, /only be moved earlier/);
  assertProblem(t, await patch({ expiresIn: 7200, name: 'x' }), 400, 1200, 'a later end, with a name: nothing changes');
  assertProblem(t, await patch({}), 400, 1200, 'nothing to change');
  assertProblem(t, await patch({ scopes: [] }), 400, 1200, 'no scopes at all');
  const unchanged = (await gw.pub({ url: `/auth/api-key/${key.id}`, headers: bearer(token) })).json();
  t.match(unchanged, { name: null, scopes: ['accounts:read', 'accounts:write', 'keys:write'], expiresAt: key.expiresAt });

  // The key narrows itself (it holds keys:write), and loses the right to do it again.
  const narrowed = await patch({ scopes: ['accounts:read'], expiresIn: 1800, name: 'reader' }, key.apiKey);
  t.equal(narrowed.statusCode, 200, narrowed.body);
  t.match(narrowed.json(), { id: key.id, name: 'reader', scopes: ['accounts:read'] });
  t.ok(Date.parse(narrowed.json().expiresAt) < Date.parse(key.expiresAt), 'an earlier end');
  assertProblem(t, await patch({ name: 'again' }, key.apiKey), 403, 1106, 'without keys:write now');
  const logged = gw.logs.records().filter((line) => line.event === 'api_key.changed');
  t.equal(logged.length, 1, 'one audit line for the one change made');
  t.match(logged[0], { orgId: org.id, keyId: key.id, scopes: ['accounts:read'] });
  t.notOk(gw.logs.text().includes(key.apiKey), 'the secret is in no log line');
});

t.test('a narrowing on one replica holds at once on another that has the key cached', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000', AUTHGATE_UPSTREAM_URL: upstream.url };
  const a = await injectGateway(t, { env });
  const b = await injectGateway(t, { env });
  const subscribed = () => a.gateway.storage.bus.subscribed && b.gateway.storage.bus.subscribed;
  for (let i = 0; i < 400 && !subscribed(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  t.ok(subscribed(), 'both replicas trust their caches');

  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const key = await keyWith(a, token, ['accounts:read', 'accounts:write']);
  const post = () => b.pub({ method: 'POST', url: '/accounts', headers: { ...bearer(key.apiKey), 'content-type': 'application/json' }, payload: '{}' });
  t.equal((await post()).statusCode, 200, 'B allows the write, and caches the key');
  t.equal((await post()).statusCode, 200, 'from its cache');
  const narrowed = await a.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(token), payload: { scopes: ['accounts:read'] } });
  t.equal(narrowed.statusCode, 200);
  // The revocation travels over Redis pub/sub: B drops its copy when it arrives.
  let refused = await post();
  for (let i = 0; i < 400 && refused.statusCode !== 403; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    refused = await post();
  }
  assertProblem(t, refused, 403, 1106, 'B refuses the write');
  const reads = await b.pub({ url: '/accounts', headers: bearer(key.apiKey) });
  t.equal(reads.statusCode, 200, 'and still allows the read');
  t.equal(upstream.requests.at(-1)?.headers['x-organization-scopes'], 'accounts:read');
});
