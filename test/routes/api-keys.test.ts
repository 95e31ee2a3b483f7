import t from 'tap';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { eventually } from '../helpers/gateway.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * routes/api-keys.ts through the whole public pipeline, by inject: POST and GET /auth/api-key,
 * GET, PATCH and DELETE /auth/api-key/:id, always the caller's own organization's keys.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
/** Every scope, in the documented order: what a key created without `scopes` holds. */
const ALL_SCOPES = ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'];
const isDateTime = (value: unknown) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) && !Number.isNaN(Date.parse(value));

t.test('POST /auth/api-key', async (t) => {
  const gw = await injectGateway(t);
  const { orgId, token, apiKey } = await gw.signedUp();

  t.test('with a login token: 201, the secret once, no-store; the store holds its hash only', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token) });
    t.equal(res.statusCode, 201);
    t.equal(res.headers['cache-control'], 'no-store');
    const created = res.json<{ id: string; apiKey: string; name: string | null; scopes: string[]; createdAt: string; expiresAt: string | null }>();
    t.same(Object.keys(created).sort(), ['apiKey', 'createdAt', 'createdBy', 'expiresAt', 'id', 'name', 'quota', 'rateLimit', 'scopes']);
    t.equal(created.name, null, 'no name without a body');
    t.strictSame(created.scopes, ALL_SCOPES, 'and every scope');
    t.equal(created.expiresAt, null, 'and no expiry');
    t.ok(!Number.isNaN(Date.parse(created.createdAt)));
    t.match(created.apiKey, /^agk_test_/, 'a sandbox key (the test config is sandbox)');
    t.match(created.apiKey, new RegExp(`^agk_test_${shardTagOf(orgId)}_[0-9A-Za-z]{36}$`), 'carrying its organization\'s shard tag');
    const listed = await gw.gateway.storage.store.listApiKeys(orgId);
    t.ok(listed.some((key) => key.id === created.id), 'stored under its organization');
    t.notOk(JSON.stringify(listed).includes(created.apiKey), 'never the secret');
    const logged = gw.logs.records().find((r) => r['event'] === 'api_key.created' && r['keyId'] === created.id);
    t.ok(logged, 'the creation is logged by id');
    t.notOk(gw.logs.text().includes(created.apiKey), 'the secret is never logged');
    // The new key authenticates.
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(created.apiKey) })).statusCode, 200);
  });

  t.test('with an API key: 403 1103, and no key is made', async (t) => {
    const before = (await gw.gateway.storage.store.listApiKeys(orgId)).length;
    const res = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(apiKey) });
    assertProblem(t, res, 403, 1103);
    t.equal((await gw.gateway.storage.store.listApiKeys(orgId)).length, before);
  });

  t.test('without a credential, or with a bad one: 401', async (t) => {
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key' }), 401, 1101, 'none');
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer('agk_test_notakey') }), 401, 1102, 'an unknown key');
    // A key of the first format (agk_test_ + 36 base62, no shard tag): refused as malformed, never looked up.
    const firstFormat = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: { ...bearer(`agk_test_${'A'.repeat(36)}`), 'x-request-id': 'first-format-key' } });
    assertProblem(t, firstFormat, 401, 1102, 'a key of the first format');
    const line = () => gw.logs.records().find((r) => r['msg'] === 'request' && r['reqId'] === 'first-format-key');
    t.ok(await eventually(async () => line() !== undefined), 'its request is logged');
    t.match(line(), { status: 401, credentialKind: 'api_key', authReason: 'malformed_key' });
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: { authorization: `Basic ${token}` } }), 401, 1102, 'not Bearer');
  });

  t.test('a well-formed production key on this sandbox gateway: 401 1104', async (t) => {
    const res = await gw.pub({ url: '/auth/api-key', headers: bearer(generateApiKey('production', shardTagOf(orgId)).secret) });
    assertProblem(t, res, 401, 1104);
  });

  t.test('for an organization deleted since the token was issued: 401, and no orphan key', async (t) => {
    const other = await gw.signedUp();
    // The session is gone with the organization; the token is refused before the handler runs.
    t.equal((await gw.ops({ method: 'DELETE', url: `/admin/organizations/${other.orgId}` })).statusCode, 204);
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(other.token) }), 401, 1102);
    t.same(await gw.gateway.storage.store.listApiKeys(other.orgId), []);
  });
});

t.test('GET /auth/api-key', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const b = await gw.signedUp();
  const second = await gw.createApiKey(a.token);

  t.test('with a login token or an API key: the organization\'s own keys, id, prefix and date, never a secret', async (t) => {
    for (const credential of [a.token, a.apiKey]) {
      const res = await gw.pub({ url: '/auth/api-key', headers: bearer(credential) });
      t.equal(res.statusCode, 200);
      t.equal(res.headers['cache-control'], 'no-store');
      const { keys, nextCursor } = res.json<{ keys: Array<{ id: string; prefix: string; name: string | null; scopes: string[]; createdAt: string; expiresAt: string | null; lastUsedAt: string | null }>; nextCursor: string | null }>();
      t.same(keys.map((key) => key.id).sort(), [a.keyId, second.id].sort(), 'its two keys, not b\'s');
      const newestFirst = [...keys].sort((x, y) => y.createdAt.localeCompare(x.createdAt) || y.id.localeCompare(x.id));
      t.same(keys.map((key) => key.id), newestFirst.map((key) => key.id), 'newest first (createdAt, then id, descending)');
      t.equal(nextCursor, null, 'one page');
      for (const key of keys) {
        t.same(Object.keys(key).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'quota', 'rateLimit', 'scopes']);
        t.equal(key.name, null);
        t.equal(key.expiresAt, null);
        t.strictSame(key.scopes, ALL_SCOPES, 'a key created without scopes holds all five');
        t.ok(key.lastUsedAt === null || isDateTime(key.lastUsedAt), `lastUsedAt null or a date-time (${key.lastUsedAt})`);
        if (key.id === second.id) t.equal(key.lastUsedAt, null, 'never used: null');
        if (key.id === a.keyId && credential === a.apiKey) t.ok(isDateTime(key.lastUsedAt), 'listed with the key itself: it was used');
        t.ok(a.apiKey.startsWith(key.prefix) || second.apiKey.startsWith(key.prefix), 'the prefix is the start of the key');
        t.ok(key.prefix.length < second.apiKey.length / 2, 'and much shorter than it');
        t.ok(!Number.isNaN(Date.parse(key.createdAt)));
      }
      t.notOk(res.body.includes(a.apiKey) || res.body.includes(second.apiKey), 'no secret');
    }
  });

  t.test('without a credential: 401 1101', async (t) => {
    assertProblem(t, await gw.pub({ url: '/auth/api-key' }), 401, 1101);
  });

  t.test('an organization with no keys lists none', async (t) => {
    const org = await gw.createOrganization();
    const token = await gw.login(org.email, org.password);
    const res = await gw.pub({ url: '/auth/api-key', headers: bearer(token) });
    t.strictSame(res.json(), { keys: [], nextCursor: null });
    t.not(b.orgId, org.id);
  });
});

t.test('DELETE /auth/api-key/:id', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const b = await gw.signedUp();

  t.test('another organization\'s key: 404 1301, as for an unknown one; the key lives on', async (t) => {
    const res = await gw.pub({ method: 'DELETE', url: `/auth/api-key/${b.keyId}`, headers: bearer(a.token) });
    const body = assertProblem(t, res, 404, 1301, 'another organization\'s key');
    const unknown = await gw.pub({ method: 'DELETE', url: '/auth/api-key/key_doesnotexist', headers: bearer(a.token) });
    t.same(assertProblem(t, unknown, 404, 1301, 'an unknown key'), body, 'the same answer');
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(b.apiKey) })).statusCode, 200, 'b\'s key still works');
  });

  t.test('an id that does not fit the pattern: 400 1200', async (t) => {
    for (const id of ['key%20x', 'a.b', 'x'.repeat(129)]) {
      assertProblem(t, await gw.pub({ method: 'DELETE', url: `/auth/api-key/${id}`, headers: bearer(a.token) }), 400, 1200, id.slice(0, 20));
    }
  });

  t.test('without a credential: 401, and nothing is deleted', async (t) => {
    assertProblem(t, await gw.pub({ method: 'DELETE', url: `/auth/api-key/${a.keyId}` }), 401, 1101);
    t.equal((await gw.gateway.storage.store.listApiKeys(a.orgId)).length, 1);
  });

  t.test('its own key, with the key itself: 204; gone from the store, refused at once', async (t) => {
    // Authenticate once so the key sits in the credential cache: the revocation must evict it.
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(a.apiKey) })).statusCode, 200);
    const res = await gw.pub({ method: 'DELETE', url: `/auth/api-key/${a.keyId}`, headers: bearer(a.apiKey) });
    t.equal(res.statusCode, 204);
    t.equal(res.body, '');
    t.same(await gw.gateway.storage.store.listApiKeys(a.orgId), []);
    assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: bearer(a.apiKey) }), 401, 1102, 'the revoked key, at once');
    assertProblem(t, await gw.pub({ method: 'DELETE', url: `/auth/api-key/${a.keyId}`, headers: bearer(a.token) }), 404, 1301, 'revoking twice');
    t.ok(gw.logs.records().some((r) => r['event'] === 'api_key.deleted' && r['keyId'] === a.keyId));
  });
});

t.test('GET /auth/api-key/:id', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const b = await gw.signedUp();
  const named = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(a.token), payload: { name: 'CI key', expiresIn: 3600 } })).json<{ id: string; apiKey: string; createdAt: string; expiresAt: string }>();

  t.test('with a login token or an API key: 200, the view as listed, no-store, never a secret', async (t) => {
    for (const credential of [a.token, a.apiKey]) {
      const { keys } = (await gw.pub({ url: '/auth/api-key', headers: bearer(credential) })).json<{ keys: Array<Record<string, unknown>> }>();
      for (const id of [a.keyId, named.id]) {
        const res = await gw.pub({ url: `/auth/api-key/${id}`, headers: bearer(credential) });
        t.equal(res.statusCode, 200, id);
        t.equal(res.headers['cache-control'], 'no-store');
        t.same(Object.keys(res.json()).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'quota', 'rateLimit', 'scopes']);
        const { lastUsedAt, ...shown } = res.json<Record<string, unknown>>();
        const { lastUsedAt: listedLastUsedAt, ...listed } = keys.find((key) => key['id'] === id)!;
        t.strictSame(shown, listed, 'as the list shows it');
        if (credential === a.apiKey && id === a.keyId) {
          // Used again by this very request: the same use, or a later one, than the list showed.
          t.ok(isDateTime(lastUsedAt) && isDateTime(listedLastUsedAt) && Date.parse(lastUsedAt as string) >= Date.parse(listedLastUsedAt as string), 'lastUsedAt: the key\'s own use, at or after the listing\'s');
        } else {
          t.equal(lastUsedAt, listedLastUsedAt, 'lastUsedAt as the list shows it');
        }
        t.notOk(res.body.includes(a.apiKey) || res.body.includes(named.apiKey), 'no secret');
        t.notOk(/hash|apiKey/.test(res.body), 'no hash, no secret field');
      }
    }
    const one = (await gw.pub({ url: `/auth/api-key/${named.id}`, headers: bearer(a.token) })).json();
    t.match(one, { id: named.id, name: 'CI key', scopes: ALL_SCOPES, createdAt: named.createdAt, expiresAt: named.expiresAt, lastUsedAt: null });
  });

  t.test('another organization\'s key or an unknown one: 404 1301, the same answer', async (t) => {
    const other = assertProblem(t, await gw.pub({ url: `/auth/api-key/${b.keyId}`, headers: bearer(a.token) }), 404, 1301, 'another organization\'s key');
    const unknown = assertProblem(t, await gw.pub({ url: '/auth/api-key/key_doesnotexist', headers: bearer(a.apiKey) }), 404, 1301, 'an unknown key');
    t.same(unknown, other, 'the same answer');
  });

  t.test('a bad id: 400 1200; no credential: 401 1101', async (t) => {
    for (const id of ['key%20x', 'a.b', 'x'.repeat(129)]) {
      assertProblem(t, await gw.pub({ url: `/auth/api-key/${id}`, headers: bearer(a.token) }), 400, 1200, id.slice(0, 20));
    }
    assertProblem(t, await gw.pub({ url: `/auth/api-key/${a.keyId}` }), 401, 1101);
  });
});

t.test('PATCH /auth/api-key/:id', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const b = await gw.signedUp();
  const patch = (credential: string, id: string, payload: unknown, headers: Record<string, string> = {}) =>
    gw.pub({ method: 'PATCH', url: `/auth/api-key/${id}`, headers: { ...bearer(credential), ...headers }, payload: payload as object });
  const listed = async (id: string) =>
    (await gw.pub({ url: '/auth/api-key', headers: bearer(a.token) })).json<{ keys: Array<{ id: string; name: string | null }> }>().keys.find((key) => key.id === id);
  const created = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(a.token), payload: { name: 'old', expiresIn: 3600 } })).json<{ id: string; apiKey: string; createdAt: string; expiresAt: string }>();

  t.test('a new name: 200 the key as it now is; listed so; only the name changed; audited', async (t) => {
    const before = (await gw.pub({ url: `/auth/api-key/${created.id}`, headers: bearer(a.token) })).json<Record<string, unknown>>();
    const res = await patch(a.apiKey, created.id, { name: 'déploiement prod ✓' });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['cache-control'], 'no-store');
    t.strictSame(res.json(), { ...before, name: 'déploiement prod ✓' }, 'only the name changed');
    t.notOk(res.body.includes(created.apiKey) || res.body.includes(a.apiKey), 'no secret');
    t.notOk(/hash|apiKey/.test(res.body), 'no hash, no secret field');
    t.equal((await listed(created.id))?.name, 'déploiement prod ✓', 'the list shows the new name');
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(created.apiKey) })).statusCode, 200, 'the key still works');
    t.match(gw.logs.records().find((r) => r['event'] === 'api_key.changed' && r['keyId'] === created.id), { orgId: a.orgId, keyId: created.id });
    t.notOk(gw.logs.text().includes(created.apiKey), 'the secret is never logged');
  });

  t.test('null removes the name; with a login token too', async (t) => {
    const res = await patch(a.token, created.id, { name: null });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { id: created.id, name: null, createdAt: created.createdAt, expiresAt: created.expiresAt });
    t.equal((await listed(created.id))?.name, null);
  });

  t.test('another organization\'s key or an unknown one: 404 1301, and b\'s key keeps its name', async (t) => {
    const other = assertProblem(t, await patch(a.token, b.keyId, { name: 'mine now' }), 404, 1301, 'another organization\'s key');
    const unknown = assertProblem(t, await patch(a.token, 'key_doesnotexist', { name: 'x' }), 404, 1301, 'an unknown key');
    t.same(unknown, other, 'the same answer');
    t.equal((await gw.pub({ url: `/auth/api-key/${b.keyId}`, headers: bearer(b.token) })).json<{ name: string | null }>().name, null);
    t.notOk(gw.logs.records().some((r) => r['event'] === 'api_key.changed' && r['keyId'] === b.keyId), 'not audited');
  });

  t.test('bad bodies: 400 1200 and the name stays', async (t) => {
    await patch(a.token, created.id, { name: 'kept' });
    const bad: Array<[string, unknown]> = [
      ['an empty object (at least one property)', {}],
      ['an empty name', { name: '' }],
      ['a name of 101 characters', { name: 'x'.repeat(101) }],
      ['a name that is not a string', { name: 5 }],
      ['a later expiry (expiresAt)', { name: 'x', expiresAt: '2099-01-01T00:00:00Z' }],
      ['a later expiry (expiresIn, after the key\'s 3600 s have begun)', { expiresIn: 3600 }],
      ['a scope outside the set', { name: 'x', scopes: ['read'] }],
      ['an unknown field', { name: 'x', owner: 'someone' }],
      ['an array', []],
    ];
    for (const [what, payload] of bad) assertProblem(t, await patch(a.token, created.id, payload), 400, 1200, what);
    assertProblem(t, await patch(a.token, created.id, '{"name":', { 'content-type': 'application/json' }), 400, 1201, 'malformed JSON');
    assertProblem(t, await patch(a.token, 'a.b', { name: 'x' }), 400, 1200, 'a bad id');
    t.equal((await listed(created.id))?.name, 'kept');
    t.equal((await patch(a.token, created.id, { name: 'x'.repeat(100) })).statusCode, 200, '100 characters');
  });

  t.test('without a credential: 401 1101', async (t) => {
    assertProblem(t, await gw.pub({ method: 'PATCH', url: `/auth/api-key/${created.id}`, payload: { name: 'x' } }), 401, 1101);
  });
});

t.test('POST /auth/api-key with a name and an expiry', async (t) => {
  let clock = Date.parse('2030-01-01T00:00:00.000Z');
  const gw = await injectGateway(t, { deps: { now: () => clock } });
  const { orgId, token, email } = await gw.signedUp();
  const create = (payload?: unknown, headers: Record<string, string> = {}) =>
    gw.pub({ method: 'POST', url: '/auth/api-key', headers: { ...bearer(token), ...headers }, ...(payload !== undefined && { payload: payload as object }) });
  type Created = { id: string; apiKey: string; name: string | null; scopes: string[]; createdAt: string; expiresAt: string | null };
  type Listed = { id: string; prefix: string; name: string | null; scopes: string[]; createdAt: string; expiresAt: string | null; lastUsedAt: string | null };

  t.test('an empty body, or an empty object, is no options', async (t) => {
    for (const [what, res] of [
      ['an empty JSON body', await create(undefined, { 'content-type': 'application/json' })],
      ['{}', await create({})],
    ] as const) {
      t.equal(res.statusCode, 201, what);
      t.match(res.json(), { name: null, expiresAt: null, createdAt: '2030-01-01T00:00:00.000Z' }, what);
    }
  });

  t.test('name and expiresIn: 201 with both; listed with both', async (t) => {
    const res = await create({ name: 'CI deploy key', expiresIn: 3600 });
    t.equal(res.statusCode, 201);
    const created = res.json<Created>();
    t.same(Object.keys(created).sort(), ['apiKey', 'createdAt', 'createdBy', 'expiresAt', 'id', 'name', 'quota', 'rateLimit', 'scopes']);
    t.match(created, { name: 'CI deploy key', createdAt: '2030-01-01T00:00:00.000Z', expiresAt: '2030-01-01T01:00:00.000Z' });
    t.strictSame(created.scopes, ALL_SCOPES);
    const { keys } = (await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json<{ keys: Listed[] }>();
    t.strictSame(keys.find((key) => key.id === created.id), { id: created.id, prefix: keys.find((key) => key.id === created.id)?.prefix, name: 'CI deploy key', scopes: ALL_SCOPES, createdAt: '2030-01-01T00:00:00.000Z', expiresAt: '2030-01-01T01:00:00.000Z', lastUsedAt: null, rateLimit: null, quota: null, createdBy: { id: `mem_${orgId.slice(4)}`, email } });
  });

  t.test('expiresAt: 201, normalized; a name alone: no expiry', async (t) => {
    const at = await create({ expiresAt: '2030-06-01T12:00:00+02:00' });
    t.equal(at.statusCode, 201);
    t.match(at.json(), { name: null, expiresAt: '2030-06-01T10:00:00.000Z' });
    const named = await create({ name: 'x'.repeat(100) });
    t.equal(named.statusCode, 201);
    t.match(named.json(), { name: 'x'.repeat(100), expiresAt: null });
    const edge = await create({ expiresAt: new Date(clock + 366 * 86_400_000).toISOString() });
    t.equal(edge.statusCode, 201, 'exactly 366 days ahead');
    t.equal((await create({ expiresIn: 31_622_400 })).statusCode, 201, 'expiresIn at its maximum');
    t.equal((await create({ expiresIn: 60 })).statusCode, 201, 'expiresIn at its minimum');
  });

  t.test('bad bodies: 400 1200 and no key is made', async (t) => {
    const before = (await gw.gateway.storage.store.listApiKeys(orgId)).length;
    const bad: Array<[string, unknown]> = [
      ['an empty name', { name: '' }],
      ['a name of 101 characters', { name: 'x'.repeat(101) }],
      ['a name that is not a string', { name: 5 }],
      ['both expiresAt and expiresIn', { expiresAt: '2030-02-01T00:00:00Z', expiresIn: 3600 }],
      ['expiresAt in the past', { expiresAt: '2029-12-31T23:59:59Z' }],
      ['expiresAt now', { expiresAt: '2030-01-01T00:00:00.000Z' }],
      ['expiresAt beyond 366 days', { expiresAt: new Date(clock + 366 * 86_400_000 + 1000).toISOString() }],
      ['expiresAt not a date-time', { expiresAt: 'tomorrow' }],
      ['expiresAt without a time zone', { expiresAt: '2030-02-01T00:00:00' }],
      ['expiresIn below 60', { expiresIn: 59 }],
      ['expiresIn above 366 days', { expiresIn: 31_622_401 }],
      ['expiresIn not an integer', { expiresIn: 90.5 }],
      ['expiresIn as a string', { expiresIn: '3600' }],
      ['a scope outside the set', { scopes: ['read'] }],
      ['no scope', { scopes: [] }],
      ['a scope twice', { scopes: ['keys:read', 'keys:read'] }],
      ['an unknown field', { owner: 'someone' }],
      ['an array', []],
    ];
    for (const [what, payload] of bad) assertProblem(t, await create(payload), 400, 1200, what);
    assertProblem(t, await create('{"name":', { 'content-type': 'application/json' }), 400, 1201, 'malformed JSON');
    t.equal((await gw.gateway.storage.store.listApiKeys(orgId)).length, before);
  });

  t.test('an expired key: 401 1102 from its expiresAt on, with its own reason; still listed', async (t) => {
    const created = (await create({ name: 'short-lived', expiresIn: 60 })).json<Created>();
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(created.apiKey) })).statusCode, 200, 'works, and is now cached');
    clock += 59_999;
    t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(created.apiKey) })).statusCode, 200, 'a millisecond before');
    clock += 1;
    const res = await gw.pub({ url: '/auth/api-key', headers: { ...bearer(created.apiKey), 'x-request-id': 'expired-key' } });
    const body = assertProblem(t, res, 401, 1102, 'at its expiresAt');
    t.match(res.headers['www-authenticate'], /error="invalid_token"/);
    t.match(body.detail, /expired/);
    const line = () => gw.logs.records().find((r) => r['msg'] === 'request' && r['reqId'] === 'expired-key');
    t.ok(await eventually(async () => line() !== undefined), 'its request is logged');
    t.match(line(), { status: 401, credentialKind: 'api_key', authReason: 'expired_key' });
    const { keys } = (await gw.pub({ url: '/auth/api-key', headers: bearer(token) })).json<{ keys: Listed[] }>();
    t.match(keys.find((key) => key.id === created.id), { name: 'short-lived', expiresAt: '2030-01-01T00:01:00.000Z' }, 'kept, and listed, until deleted');
    t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${created.id}`, headers: bearer(token) })).statusCode, 204, 'and deletable');
  });
});

t.test('scopes and pages of GET /auth/api-key', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const created = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(a.token), payload: { name: 'write-only', scopes: ['keys:write', 'accounts:read'] } });
  t.equal(created.statusCode, 201);
  const narrow = created.json<{ id: string; apiKey: string; scopes: string[] }>();
  t.strictSame(narrow.scopes, ['accounts:read', 'keys:write'], 'the scopes given, in the documented order');

  const refused = await gw.pub({ url: '/auth/api-key', headers: bearer(narrow.apiKey) });
  const body = assertProblem(t, refused, 403, 1106, 'a key without keys:read lists nothing');
  t.equal(body.title, 'Insufficient scope');
  t.equal(refused.headers['www-authenticate'], 'Bearer realm="authgate", error="insufficient_scope", scope="keys:read"');
  assertProblem(t, await gw.pub({ url: `/auth/api-key/${a.keyId}`, headers: bearer(narrow.apiKey) }), 403, 1106, 'nor shows one');

  const { keys: all } = (await gw.pub({ url: '/auth/api-key', headers: bearer(a.token) })).json<{ keys: Array<{ id: string; scopes: string[] }> }>();
  t.strictSame(all.find((key) => key.id === narrow.id)?.scopes, ['accounts:read', 'keys:write'], 'listed with its scopes');
  const first = (await gw.pub({ url: '/auth/api-key?limit=1', headers: bearer(a.token) })).json<{ keys: Array<{ id: string }>; nextCursor: string | null }>();
  t.equal(first.keys.length, 1, 'limit=1: one key');
  t.equal(first.keys[0]?.id, all[0]?.id, 'the newest');
  t.type(first.nextCursor, 'string', 'and a cursor');
  const next = (await gw.pub({ url: `/auth/api-key?limit=1&cursor=${encodeURIComponent(first.nextCursor!)}`, headers: bearer(a.token) })).json<{ keys: Array<{ id: string }>; nextCursor: string | null }>();
  t.same(next.keys.map((key) => key.id), [all[1]?.id], 'the next page: the next key');
  t.equal(next.nextCursor, null, 'the last page');
  for (const limit of ['0', '501', 'x', '-1']) assertProblem(t, await gw.pub({ url: `/auth/api-key?limit=${limit}`, headers: bearer(a.token) }), 400, 1200, `limit=${limit}`);
});
