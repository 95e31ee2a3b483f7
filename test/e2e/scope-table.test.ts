import t, { type Test } from 'tap';
import { decodeJwt } from 'jose';
import { assertProblem, injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { compiledTable, fileWithScopes } from '../helpers/route-tables.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';

/**
 * Scopes are the route table's (issue 28): keys are given names the live table declares (400,
 * 1212, otherwise), hold them by name whatever the file later says, show and assert the held ones
 * the table declares in its order, and a key made without `scopes` holds the scopes of every
 * later table too. GET /auth/scopes lists the table's scopes. On both stores: the memory store
 * and a real Redis (the same reads of a stored key either way).
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
type Listed = { id: string; scopes: string[] };

const INVOICES = { 'invoices:read': 'Read invoices', 'reports.monthly:read': 'Read the monthly reports' };

async function gatewayOn(t: Test, store: 'memory' | 'redis'): Promise<{ gw: InjectedGateway; upstream: RecordingUpstream }> {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  let env: Record<string, string> = { AUTHGATE_UPSTREAM_URL: upstream.url };
  if (store === 'redis') {
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    env = { ...env, AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
  }
  return { gw: await injectGateway(t, { env }), upstream };
}

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store} store: editing the file never changes what a key holds; a removed scope is ignored, and back when declared again; a key without scopes holds later ones`, async (t) => {
    const { gw, upstream } = await gatewayOn(t, store);
    const swap = (file: Parameters<typeof compiledTable>[0]) => gw.gateway.routes.swap(compiledTable(file, upstream.url));
    const org = await gw.createOrganization();
    const token = await gw.login(org.email, org.password);
    const create = (payload: object) => gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload });

    // Before the file declares it, `invoices:read` is no scope a key can be given.
    const early = await create({ scopes: ['accounts:read', 'invoices:read'] });
    assertProblem(t, early, 400, 1212, 'not declared yet');
    t.match(early.json().detail, /invoices:read/);
    t.notMatch(early.json().detail, /accounts:read/, 'only the unknown names are named');

    swap(fileWithScopes(INVOICES));
    const made = await create({ scopes: ['keys:read', 'invoices:read', 'accounts:read'] });
    t.equal(made.statusCode, 201, 'declared now: given at once');
    const key = made.json<{ id: string; apiKey: string; scopes: string[] }>();
    t.strictSame(key.scopes, ['accounts:read', 'invoices:read', 'keys:read'], "in the table's order: the file's scopes, then the built-in ones");
    const every = (await create({})).json<{ id: string; apiKey: string; scopes: string[] }>();
    t.strictSame(every.scopes, ['accounts:read', 'accounts:write', 'organization:read', 'invoices:read', 'reports.monthly:read', 'keys:read', 'keys:write'], 'no scopes: every one declared');

    const shown = async (id: string) => (await gw.pub({ url: `/auth/api-key/${id}`, headers: bearer(token) })).json<Listed>().scopes;
    // What upstreams are told the key holds: the identity assertion's `scope` claim, under the live table.
    const asserted = async (apiKey: string) => {
      const res = await gw.pub({ url: '/accounts', headers: bearer(apiKey) });
      t.equal(res.statusCode, 200, 'forwarded');
      return String(decodeJwt(String(upstream.requests.at(-1)?.headers['x-authgate-identity'])).scope);
    };
    t.equal(await asserted(key.apiKey), 'accounts:read invoices:read keys:read');

    // The file reordered, with a new scope: the key holds what it held, in the new order; the key
    // made without scopes holds the new one too.
    swap(fileWithScopes({ 'reports.monthly:read': 'Monthly', 'invoices:write': 'Change invoices', 'invoices:read': 'Read invoices' }));
    t.strictSame(await shown(key.id), ['accounts:read', 'invoices:read', 'keys:read'], 'the same names');
    t.strictSame(await shown(every.id), ['accounts:read', 'accounts:write', 'organization:read', 'reports.monthly:read', 'invoices:write', 'invoices:read', 'keys:read', 'keys:write'], 'a key without scopes holds the new invoices:write');
    t.equal(await asserted(key.apiKey), 'accounts:read invoices:read keys:read', 'and is told upstream so');
    t.match(await asserted(every.apiKey), /invoices:write/);

    // invoices:read removed from the file: ignored where the key names it, never another scope in its place.
    swap(fileWithScopes({ 'invoices:write': 'Change invoices' }));
    t.strictSame(await shown(key.id), ['accounts:read', 'keys:read'], 'a removed scope is not shown');
    t.equal(await asserted(key.apiKey), 'accounts:read keys:read', 'nor held');
    const listed = (await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json<{ keys: Listed[] }>();
    t.strictSame(listed.keys.find((k) => k.id === key.id)?.scopes, ['accounts:read', 'keys:read'], 'in the listing neither');
    assertProblem(t, await gw.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(token), payload: { scopes: ['invoices:read'] } }), 400, 1212, 'nor can a key be narrowed to it');
    t.equal((await gw.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(token), payload: { scopes: ['invoices:write'] } })).statusCode, 400, 'a declared scope the key never held: wider');

    // Declared again: the key still names it (the store kept the name).
    swap(fileWithScopes(INVOICES));
    t.strictSame(await shown(key.id), ['accounts:read', 'invoices:read', 'keys:read'], 'held again, as it always was');
    t.equal(await asserted(key.apiKey), 'accounts:read invoices:read keys:read');

    // Narrowed by name under the live table; a roll copies the names.
    const narrowed = await gw.pub({ method: 'PATCH', url: `/auth/api-key/${key.id}`, headers: bearer(token), payload: { scopes: ['invoices:read', 'accounts:read'] } });
    t.equal(narrowed.statusCode, 200);
    t.strictSame(narrowed.json<Listed>().scopes, ['accounts:read', 'invoices:read']);
    const rolled = await gw.pub({ method: 'POST', url: `/auth/api-key/${key.id}/roll`, headers: bearer(token), payload: { graceSeconds: 0 } });
    t.strictSame(rolled.json<Listed>().scopes, ['accounts:read', 'invoices:read'], 'the successor holds the same names');
  });
}

t.test('GET /auth/scopes: the live table\'s scopes with their descriptions, in its order; any credential, no scope needed; none is 401', async (t) => {
  const { gw, upstream } = await gatewayOn(t, 'memory');
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const narrow = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token), payload: { scopes: ['organization:read'] } })).json<{ apiKey: string }>();
  const scopes = async (credential: string) => {
    const res = await gw.pub({ url: '/auth/scopes', headers: bearer(credential) });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['cache-control'], 'no-store');
    return res.json<{ scopes: { name: string; description: string }[] }>().scopes;
  };
  t.strictSame(await scopes(token), [
    { name: 'accounts:read', description: 'Read accounts' },
    { name: 'accounts:write', description: 'Change accounts' },
    { name: 'organization:read', description: "Read the organization's identity" },
    { name: 'keys:read', description: 'List and read API keys and login sessions' },
    { name: 'keys:write', description: 'Change and revoke API keys and end login sessions' },
  ], 'the built-in table');
  t.strictSame(await scopes(narrow.apiKey), await scopes(token), 'a key holding neither keys:read nor any other scope listed');
  gw.gateway.routes.swap(compiledTable(fileWithScopes(INVOICES), upstream.url));
  t.strictSame((await scopes(narrow.apiKey)).map((scope) => scope.name), ['accounts:read', 'accounts:write', 'organization:read', 'invoices:read', 'reports.monthly:read', 'keys:read', 'keys:write'], 'a new table at once');
  t.equal((await scopes(token)).find((scope) => scope.name === 'reports.monthly:read')?.description, 'Read the monthly reports');
  assertProblem(t, await gw.pub({ url: '/auth/scopes' }), 401, 1101, 'no credential');
  assertProblem(t, await gw.pub({ url: '/auth/scopes', headers: bearer('agk_test_nope') }), 401, 1102, 'a bad one');
});

t.test('the OpenAPI document lists the live table\'s scopes where a key is given them', async (t) => {
  const { gw, upstream } = await gatewayOn(t, 'memory');
  type Doc = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, { items: { enum?: string[] }; description: string }> } }> } }>> };
  const scopesOf = (doc: Doc, path: string, method: string) => doc.paths[path]![method]!.requestBody!.content['application/json']!.schema.properties['scopes']!;
  const before = (await gw.ops({ url: '/openapi.json' })).json<Doc>();
  t.strictSame(scopesOf(before, '/auth/api-key', 'post').items.enum, ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write']);
  t.match(scopesOf(before, '/auth/api-key/{id}', 'patch').description, /`organization:read` \(Read the organization's identity\)/);
  t.ok(before.paths['/auth/scopes']?.['get'], 'GET /auth/scopes is documented');
  gw.gateway.routes.swap(compiledTable(fileWithScopes(INVOICES), upstream.url));
  const after = (await gw.ops({ url: '/openapi.json' })).json<Doc>();
  t.match(scopesOf(after, '/auth/api-key', 'post').items.enum, ['accounts:read', 'accounts:write', 'organization:read', 'invoices:read', 'reports.monthly:read', 'keys:read', 'keys:write']);
  t.match(scopesOf(after, '/auth/api-key', 'post').description, /`invoices:read` \(Read invoices\)/);
});
