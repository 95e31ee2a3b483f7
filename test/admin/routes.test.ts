import t from 'tap';
import { ADMIN_TOKEN } from '../helpers/gateway.js';
import { parseApiKey } from '../../src/credentials/api-keys.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * admin/routes.ts and admin/admin-token.ts through the ops port's pipeline, by inject:
 * /admin/organizations behind AUTHGATE_ADMIN_TOKEN, and what the store holds afterwards.
 */

t.test('the admin token check', async (t) => {
  const gw = await injectGateway(t);
  const refusals: Array<[string, Record<string, string>]> = [
    ['no Authorization', {}],
    ['a wrong token', { authorization: 'Bearer wrong-admin-token-0123456789' }],
    ['the token with one character more', { authorization: `Bearer ${ADMIN_TOKEN}x` }],
    ['a prefix of the token', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` }],
    ['Basic', { authorization: `Basic ${ADMIN_TOKEN}` }],
    ['no scheme', { authorization: ADMIN_TOKEN }],
    ['empty bearer', { authorization: 'Bearer ' }],
  ];
  for (const method of ['GET', 'DELETE'] as const) {
    for (const [what, headers] of refusals) {
      const res = await gw.ops({ method, url: '/admin/organizations/org_x', headers, bare: true });
      const body = assertProblem(t, res, 401, 1107, `${method} ${what}`);
      t.equal(res.headers['www-authenticate'], 'Bearer realm="authgate-admin"', `${what}: the admin realm`);
      t.notOk(res.body.includes(ADMIN_TOKEN.slice(0, 12)), `${what}: nothing of the token echoed`);
      t.match(body.detail, /AUTHGATE_ADMIN_TOKEN/);
    }
  }
  t.test('the token is checked before the body is read', async (t) => {
    const res = await gw.ops({ method: 'POST', url: '/admin/organizations', headers: { 'content-type': 'application/json' }, payload: '{"broken":', bare: true });
    assertProblem(t, res, 401, 1107);
  });
  t.test('a login token or API key of the public port is not an admin token', async (t) => {
    const { token, apiKey } = await gw.signedUp();
    for (const credential of [token, apiKey]) {
      assertProblem(t, await gw.ops({ url: '/admin/organizations/org_x', headers: { authorization: `Bearer ${credential}` }, bare: true }), 401, 1107);
    }
  });
  t.test('the health and metrics endpoints need no token', async (t) => {
    for (const url of ['/livez', '/readyz', '/metrics', '/openapi.json', '/openapi/admin.json']) {
      t.equal((await gw.ops({ url, bare: true })).statusCode, 200, url);
    }
  });
});

t.test('POST /admin/organizations', async (t) => {
  const gw = await injectGateway(t);

  t.test('201 with the view; the organization can log in; the creation is audited without the password', async (t) => {
    const res = await gw.ops({ method: 'POST', url: '/admin/organizations', payload: { name: 'Acme', email: 'Admin.Created@Example.test', password: 'admin-created-password' } });
    t.equal(res.statusCode, 201);
    const org = res.json<{ id: string; name: string; email: string; createdAt: string }>();
    t.same(Object.keys(org).sort(), ['createdAt', 'effectiveKeyLimit', 'effectiveRateLimit', 'email', 'id', 'keyLimit', 'name', 'rateLimit']);
    t.equal(org.email, 'admin.created@example.test');
    t.equal((await gw.gateway.storage.store.findOrganizationById(org.id))?.name, 'Acme');
    t.ok(await gw.login('admin.created@example.test', 'admin-created-password'));
    t.ok(gw.logs.records().some((r) => r['event'] === 'organization.created' && r['orgId'] === org.id));
    t.notOk(gw.logs.text().includes('admin-created-password'));
  });

  t.test('the same e-mail again, in another case: 409 1303', async (t) => {
    const res = await gw.ops({ method: 'POST', url: '/admin/organizations', payload: { name: 'Again', email: 'ADMIN.created@example.test', password: 'admin-created-password' } });
    assertProblem(t, res, 409, 1303);
  });

  t.test('bodies that do not fit: 400 1200, and nothing is stored', async (t) => {
    // A short password fits the schema since the password policy (issue 31): 1213, its own code.
    assertProblem(t, await gw.ops({ method: 'POST', url: '/admin/organizations', payload: { name: 'A', email: 'short@example.test', password: 'short' } }), 400, 1213, 'a short password');
    const cases: Array<[string, unknown]> = [
      ['no name', { email: 'noname@example.test', password: 'long-enough-password' }],
      ['a blank name', { name: '   ', email: 'blank@example.test', password: 'long-enough-password' }],
      ['a bad e-mail', { name: 'A', email: 'no-at-sign', password: 'long-enough-password' }],
      ['an extra property', { name: 'A', email: 'extra@example.test', password: 'long-enough-password', id: 'org_mine' }],
    ];
    for (const [what, payload] of cases) {
      const res = await gw.ops({ method: 'POST', url: '/admin/organizations', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      assertProblem(t, res, 400, 1200, what);
    }
    for (const email of ['short@example.test', 'noname@example.test', 'blank@example.test', 'extra@example.test', 'proto@example.test']) {
      t.equal(await gw.gateway.storage.store.findOrganizationByEmail(email), undefined, `${email} not stored`);
    }
    assertProblem(t, await gw.ops({ method: 'POST', url: '/admin/organizations', headers: { 'content-type': 'application/json' }, payload: '{"name":' }), 400, 1201, 'malformed JSON');
    // Prototype poisoning is refused by the parser itself (onProtoPoisoning/onConstructorPoisoning: 'error').
    for (const key of ['__proto__', 'constructor']) {
      const payload = `{"name":"A","email":"proto@example.test","password":"long-enough-password","${key}":{"prototype":{"polluted":true}}}`;
      assertProblem(t, await gw.ops({ method: 'POST', url: '/admin/organizations', headers: { 'content-type': 'application/json' }, payload }), 400, 1201, key);
    }
    t.equal(({} as Record<string, unknown>)['polluted'], undefined, 'no prototype was polluted');
    assertProblem(t, await gw.ops({ method: 'POST', url: '/admin/organizations', headers: { 'content-type': 'text/plain' }, payload: 'x' }), 415, 1202, 'text/plain');
  });
});

t.test('GET and DELETE /admin/organizations/:id', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();

  t.test('GET: the view, never the hash', async (t) => {
    const res = await gw.ops({ url: `/admin/organizations/${a.orgId}` });
    t.equal(res.statusCode, 200);
    t.match(res.json(), { id: a.orgId, email: a.email });
    t.notOk(res.body.includes('argon2'));
  });

  t.test('unknown or malformed ids: 404 1302 or 400 1200', async (t) => {
    assertProblem(t, await gw.ops({ url: '/admin/organizations/org_unknown' }), 404, 1302, 'GET unknown');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: '/admin/organizations/org_unknown' }), 404, 1302, 'DELETE unknown');
    assertProblem(t, await gw.ops({ url: '/admin/organizations/a.b' }), 400, 1200, 'a dot');
  });

  t.test('DELETE: 204; the organization, its keys and sessions are gone and refused at once', async (t) => {
    // Used once, so both credentials sit in the cache the deletion must clear.
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${a.apiKey}` } })).statusCode, 200);
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${a.token}` } })).statusCode, 200);
    const res = await gw.ops({ method: 'DELETE', url: `/admin/organizations/${a.orgId}` });
    t.equal(res.statusCode, 204);
    t.equal(res.body, '');
    const store = gw.gateway.storage.store;
    t.equal(await store.findOrganizationById(a.orgId), undefined);
    t.same(await store.listApiKeys(a.orgId), []);
    for (const credential of [a.apiKey, a.token]) {
      assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${credential}` } }), 401, 1102);
    }
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: a.email, password: a.password } }), 401, 1105, 'no more logins');
    t.match(gw.logs.records().find((r) => r['event'] === 'organization.deleted'), { orgId: a.orgId, revokedCredentials: 2 });
    assertProblem(t, await gw.ops({ url: `/admin/organizations/${a.orgId}` }), 404, 1302, 'then GET');
  });
});

t.test('GET and DELETE /admin/organizations/:id/api-keys', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const b = await gw.signedUp();
  const second = await gw.createApiKey(a.token);
  const lookupHash = (key: string) => {
    const parsed = parseApiKey(key);
    if (!parsed.ok) throw new Error('not a key');
    return parsed.hash;
  };

  t.test('the admin token is required: 401 without, nothing revoked', async (t) => {
    for (const [method, url] of [['GET', `/admin/organizations/${a.orgId}/api-keys`], ['DELETE', `/admin/organizations/${a.orgId}/api-keys/${a.keyId}`]] as const) {
      assertProblem(t, await gw.ops({ method, url, bare: true }), 401, 1107, `${method} without a token`);
      assertProblem(t, await gw.ops({ method, url, headers: { authorization: `Bearer ${a.token}` }, bare: true }), 401, 1107, `${method} with a login token`);
    }
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${a.apiKey}` } })).statusCode, 200, 'the key still works');
  });

  t.test('GET: the keys\' metadata, the same view as GET /auth/api-key, never a secret or a hash', async (t) => {
    const res = await gw.ops({ url: `/admin/organizations/${a.orgId}/api-keys` });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['cache-control'], 'no-store');
    const { keys, nextCursor } = res.json<{ keys: Array<Record<string, unknown>>; nextCursor: string | null }>();
    t.same(keys.map((k) => k['id']).sort(), [a.keyId, second.id].sort());
    const newestFirst = [...keys].sort((x, y) => String(y['createdAt']).localeCompare(String(x['createdAt'])) || String(y['id']).localeCompare(String(x['id'])));
    t.same(keys.map((k) => k['id']), newestFirst.map((k) => k['id']), 'newest first (createdAt, then id, descending)');
    t.equal(nextCursor, null, 'one page');
    for (const key of keys) {
      t.same(Object.keys(key).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'quota', 'rateLimit', 'scopes']);
      t.same(key['scopes'], ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'], 'a default key holds all five scopes');
      const lastUsedAt = key['lastUsedAt'];
      t.ok(lastUsedAt === null || (typeof lastUsedAt === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(lastUsedAt)), `lastUsedAt null or a date-time (${String(lastUsedAt)})`);
    }
    t.equal(keys.find((k) => k['id'] === second.id)?.['lastUsedAt'], null, 'a key never used: lastUsedAt null');
    const own = await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${a.token}` } });
    t.same(res.json(), own.json(), 'what the organization itself sees');
    for (const secret of [a.apiKey, second.apiKey]) {
      t.notOk(res.body.includes(secret), 'no secret');
      t.notOk(res.body.includes(lookupHash(secret)), 'no lookup hash');
    }
    t.same((await gw.ops({ url: `/admin/organizations/${b.orgId}/api-keys` })).json<{ keys: Array<{ id: string }> }>().keys.map((k) => k.id), [b.keyId], 'another organization: its own keys only');
  });

  t.test('unknown organization or key: 404', async (t) => {
    assertProblem(t, await gw.ops({ url: '/admin/organizations/org_unknown/api-keys' }), 404, 1302, 'GET unknown organization');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/org_unknown/api-keys/${a.keyId}` }), 404, 1302, 'DELETE unknown organization');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${a.orgId}/api-keys/key_unknown` }), 404, 1301, 'DELETE unknown key');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${a.orgId}/api-keys/${b.keyId}` }), 404, 1301, 'DELETE another organization\'s key');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${a.orgId}/api-keys/a.b` }), 400, 1200, 'a malformed key id');
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${b.apiKey}` } })).statusCode, 200, 'b\'s key still works');
  });

  t.test('DELETE: 204; the key is refused at once; audited without the key or its hash', async (t) => {
    // Used once, so the key sits in the cache the revocation must clear.
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${a.apiKey}` } })).statusCode, 200);
    const res = await gw.ops({ method: 'DELETE', url: `/admin/organizations/${a.orgId}/api-keys/${a.keyId}` });
    t.equal(res.statusCode, 204);
    t.equal(res.body, '');
    assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${a.apiKey}` } }), 401, 1102, 'the revoked key');
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${second.apiKey}` } })).statusCode, 200, 'the other key still works');
    t.same((await gw.ops({ url: `/admin/organizations/${a.orgId}/api-keys` })).json<{ keys: Array<{ id: string }> }>().keys.map((k) => k.id), [second.id]);
    t.match(gw.logs.records().find((r) => r['event'] === 'api_key.deleted'), { orgId: a.orgId, keyId: a.keyId, by: 'admin' });
    t.notOk(gw.logs.text().includes(a.apiKey), 'the key is not logged');
    t.notOk(gw.logs.text().includes(lookupHash(a.apiKey)), 'nor its hash');
    assertProblem(t, await gw.ops({ method: 'DELETE', url: `/admin/organizations/${a.orgId}/api-keys/${a.keyId}` }), 404, 1301, 'again');
  });
});
