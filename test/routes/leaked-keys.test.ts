import t from 'tap';
import { generateApiKey, parseApiKey } from '../../src/credentials/api-keys.js';
import { LEAK_REPORTS } from '../../src/routes/leaked-keys.js';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { StoreUnavailable } from '../../src/store/store.js';
import { eventually } from '../helpers/gateway.js';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * routes/leaked-keys.ts through the whole public pipeline, by inject: POST /auth/api-key/leaked,
 * what it refuses, what it revokes, what it logs and what it never says. Across replicas on
 * Redis, and the limit under a burst: test/e2e/leaked-keys.test.ts.
 */

const URL = '/auth/api-key/leaked';
const json = { 'content-type': 'application/json' };
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

t.test('bad input: a 4xx problem, nothing revoked', async (t) => {
  const gw = await injectGateway(t);
  const { apiKey } = await gw.signedUp();
  const report = (payload: string, headers: Record<string, string> = json) => gw.pub({ method: 'POST', url: URL, headers, payload });

  assertProblem(t, await report('{"keys": ['), 400, 1201, 'malformed JSON');
  assertProblem(t, await report(JSON.stringify({ keys: [apiKey] }), { 'content-type': 'text/plain' }), 415, 1202, 'not JSON');
  assertProblem(t, await gw.pub({ method: 'POST', url: URL }), 400, 1200, 'no body');
  assertProblem(t, await report('[]'), 400, 1200, 'not an object');
  assertProblem(t, await report('{}'), 400, 1200, 'no keys');
  assertProblem(t, await report(JSON.stringify({ keys: [] })), 400, 1200, 'an empty list');
  assertProblem(t, await report(JSON.stringify({ keys: apiKey })), 400, 1200, 'keys not a list');
  const tooMany = Array.from({ length: LEAK_REPORTS.maxKeys + 1 }, () => apiKey);
  assertProblem(t, await report(JSON.stringify({ keys: tooMany })), 400, 1200, `${LEAK_REPORTS.maxKeys + 1} keys`);
  assertProblem(t, await report(JSON.stringify({ keys: [apiKey, 42] })), 400, 1200, 'a non-string');
  assertProblem(t, await report(JSON.stringify({ keys: [apiKey, null] })), 400, 1200, 'a null');
  assertProblem(t, await report(JSON.stringify({ keys: [apiKey, 'x'.repeat(LEAK_REPORTS.maxKeyLength + 1)] })), 400, 1200, 'a 201-character string');
  assertProblem(t, await report(JSON.stringify({ keys: [apiKey], source: 'github' })), 400, 1200, 'an extra property');
  assertProblem(t, await report('{"keys": ["x"], "__proto__": {"a": 1}}'), 400, 1201, 'prototype poisoning (refused by the parser)');
  // Within the other routes' 64 KiB, over this route's own limit.
  const big = JSON.stringify({ keys: [apiKey], pad: 'x'.repeat(LEAK_REPORTS.bodyLimitBytes) });
  t.ok(big.length < 64 * 1024);
  assertProblem(t, await report(big), 413, 1203, `a body over ${LEAK_REPORTS.bodyLimitBytes / 1024} KiB`);
  assertProblem(t, await gw.pub({ method: 'POST', url: URL, headers: { ...json, 'user-agent': undefined }, payload: JSON.stringify({ keys: [apiKey] }), bare: true }), 403, 1010, 'no User-Agent');

  // GET is the route of one key (`/auth/api-key/:id`, id "leaked"): it wants a credential.
  assertProblem(t, await gw.pub({ url: URL }), 401, 1101, 'GET without a credential');
  const other = await gw.pub({ method: 'PUT', url: URL });
  assertProblem(t, other, 405, 1205, 'PUT');
  t.match(String(other.headers['allow']), /\bPOST\b/);

  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(apiKey) })).statusCode, 200, 'the key still works');
  t.notOk(gw.logs.records().some((r) => r['event'] === 'api_key.leaked'), 'nothing was revoked');
});

t.test('a report: real keys of this environment revoked, the rest ignored, the same answer', async (t) => {
  const gw = await injectGateway(t);
  const a = await gw.signedUp();
  const other = await gw.createApiKey(a.token); // the organization's other key
  const b = await gw.signedUp();
  const gone = await gw.createApiKey(b.token);
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${gone.id}`, headers: bearer(b.token) })).statusCode, 204);
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(a.apiKey) })).statusCode, 200, 'the key works, and is cached');

  const invented = generateApiKey('sandbox', shardTagOf(a.orgId)).secret;
  const production = generateApiKey('production', shardTagOf(b.orgId)).secret;
  const mistyped = `${b.apiKey.slice(0, -1)}${b.apiKey.endsWith('A') ? 'B' : 'A'}`; // a bad checksum
  const reported = [a.apiKey, gone.apiKey, invented, 'agk_test_not-a-key', production, mistyped, '', a.apiKey];
  const res = await gw.pub({ method: 'POST', url: URL, payload: { keys: reported }, headers: bearer('ignored') });
  t.equal(res.statusCode, 202);
  t.equal(res.headers['cache-control'], 'no-store');
  t.same(res.json(), { received: reported.length }, 'how many strings, nothing about them');

  const none = await gw.pub({ method: 'POST', url: URL, payload: { keys: Array.from({ length: reported.length }, () => generateApiKey('sandbox', shardTagOf(b.orgId)).secret) } });
  t.equal(none.statusCode, 202);
  t.equal(none.body, res.body, 'a report of invented keys only gets the same answer, byte for byte');
  t.equal(none.headers['content-type'], res.headers['content-type']);

  assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: bearer(a.apiKey) }), 401, 1102, 'the reported key, at once');
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(other.apiKey) })).statusCode, 200, 'the organization\'s other key works');
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(a.token) })).statusCode, 200, 'and its login token');
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(b.apiKey) })).statusCode, 200, 'a key with a mistyped checksum reported: the real one works');
  t.same((await gw.gateway.storage.store.listApiKeys(a.orgId)).map((k) => k.id), [other.id], 'only the reported key is gone');

  const audit = gw.logs.records().filter((r) => r['event'] === 'api_key.leaked');
  t.equal(audit.length, 1, 'one audit line: the one key revoked (reported twice)');
  t.match(audit[0], { orgId: a.orgId, keyId: a.keyId, level: 30 });
  const text = gw.logs.text();
  for (const key of [...reported, ...none.json<{ keys?: string[] }>().keys ?? []].filter((k) => k !== '')) {
    t.notOk(text.includes(key), 'no reported string is logged');
  }
  const hash = (parseApiKey(a.apiKey) as { hash: string }).hash;
  t.notOk(text.includes(hash), 'nor the key\'s hash');
  t.notOk(text.includes(hash.split('.')[1]!), 'nor its digest');
  // The request line is there, by route template.
  t.ok(await eventually(async () => gw.logs.records().some((r) => r['msg'] === 'request' && r['route'] === URL && r['status'] === 202)));
});

t.test('a key of this environment reported to the other environment\'s gateway is not revoked', async (t) => {
  const sandbox = await injectGateway(t);
  const production = await injectGateway(t, { env: { AUTHGATE_ENVIRONMENT: 'production' } });
  const { apiKey } = await sandbox.signedUp();
  t.equal((await production.pub({ method: 'POST', url: URL, payload: { keys: [apiKey] } })).statusCode, 202);
  t.equal((await sandbox.pub({ url: '/auth/api-key', headers: bearer(apiKey) })).statusCode, 200);
});

t.test('the store does not answer: 503 with Retry-After, never 202', async (t) => {
  const store = createMemoryStore();
  let failing = false;
  const gw = await injectGateway(t, {
    deps: {
      storage: {
        store: {
          ...store,
          findApiKeyByHash: (hash) => (failing ? Promise.reject(new StoreUnavailable()) : store.findApiKeyByHash(hash)),
        },
        bus: createLocalInvalidationBus(),
      },
    },
  });
  const { apiKey } = await gw.signedUp();
  failing = true;
  const res = await gw.pub({ method: 'POST', url: URL, payload: { keys: [apiKey] } });
  assertProblem(t, res, 503, 1503);
  t.ok(res.headers['retry-after']);
  failing = false;
  t.equal((await gw.pub({ method: 'POST', url: URL, payload: { keys: [apiKey] } })).statusCode, 202, 'and when it answers again, 202');
  assertProblem(t, await gw.pub({ url: '/auth/api-key', headers: bearer(apiKey) }), 401, 1102);
});

t.test(`more than ${LEAK_REPORTS.perAddress} reports a minute from one address: 429 1109 with Retry-After`, async (t) => {
  const gw = await injectGateway(t);
  const { apiKey } = await gw.signedUp();
  const report = () => gw.pub({ method: 'POST', url: URL, payload: { keys: ['agk_test_nothing'] } });
  for (let i = 0; i < LEAK_REPORTS.perAddress; i++) t.equal((await report()).statusCode, 202);
  const refused = await report();
  const body = assertProblem(t, refused, 429, 1109);
  const retryAfter = Number(refused.headers['retry-after']);
  t.ok(retryAfter >= 1 && retryAfter <= LEAK_REPORTS.windowSeconds, `Retry-After ${retryAfter}`);
  t.match(body.detail, /try again in \d+ seconds/);
  // A refused report revokes nothing.
  t.equal((await gw.pub({ method: 'POST', url: URL, payload: { keys: [apiKey] } })).statusCode, 429);
  t.equal((await gw.pub({ url: '/auth/api-key', headers: bearer(apiKey) })).statusCode, 200);
  // Another address has its own count.
  const elsewhere = await gw.gateway.publicServer.inject({ method: 'POST', url: URL, remoteAddress: '203.0.113.9', headers: { 'user-agent': 'scanner/1' }, payload: { keys: ['x'] } });
  t.equal(elsewhere.statusCode, 202);
});
