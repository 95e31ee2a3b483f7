import t from 'tap';
import { generateApiKey } from '../../src/credentials/api-keys.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { eventually } from '../helpers/gateway.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * routes/api-keys.ts through the whole public pipeline, by inject: POST, GET and
 * DELETE /auth/api-key, always the caller's own organization's keys.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

t.test('POST /auth/api-key', async (t) => {
  const gw = await injectGateway(t);
  const { orgId, token, apiKey } = await gw.signedUp();

  t.test('with a login token: 201, the secret once, no-store; the store holds its hash only', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(token) });
    t.equal(res.statusCode, 201);
    t.equal(res.headers['cache-control'], 'no-store');
    const created = res.json<{ id: string; apiKey: string }>();
    t.same(Object.keys(created).sort(), ['apiKey', 'id']);
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
      const { keys } = res.json<{ keys: Array<{ id: string; prefix: string; createdAt: string }> }>();
      t.same(keys.map((key) => key.id).sort(), [a.keyId, second.id].sort(), 'its two keys, not b\'s');
      for (const key of keys) {
        t.same(Object.keys(key).sort(), ['createdAt', 'id', 'prefix']);
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
    t.same(res.json(), { keys: [] });
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
