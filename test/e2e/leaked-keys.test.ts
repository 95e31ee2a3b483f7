import t, { type Test } from 'tap';
import { generateApiKey, parseApiKey } from '../../src/credentials/api-keys.js';
import { LEAK_REPORTS } from '../../src/routes/leaked-keys.js';
import { shardTagOf } from '../../src/store/shard-tag.js';
import { eventually, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

/**
 * POST /auth/api-key/leaked over sockets, on two replicas sharing one real Redis: a reported key
 * is revoked everywhere at once, the answer never says which strings were keys, nothing secret
 * is logged, and the per-address limit holds for a parallel burst spread over both replicas.
 */

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

async function twoReplicas(t: Test): Promise<[StartedGateway, StartedGateway]> {
  const redis: RedisServer = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const options = { upstream, env: { AUTHGATE_REDIS_URL: redis.url } };
  const replicas: [StartedGateway, StartedGateway] = [await startGateway(t, options), await startGateway(t, options)];
  for (const gw of replicas) {
    if (!(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 15_000, 50))) throw new Error('not ready');
  }
  return replicas;
}

const report = (gw: StartedGateway, keys: unknown[]): Promise<Response> =>
  send(`${gw.publicUrl}/auth/api-key/leaked`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ keys }) });

t.test('a key reported on replica A is refused on replica B at once; the answer says nothing; nothing secret is logged', async (t) => {
  const [a, b] = await twoReplicas(t);
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  const leaked = await a.createApiKey(token);
  const kept = await a.createApiKey(token);
  const deleted = await a.createApiKey(token);
  t.equal((await send(`${a.publicUrl}/auth/api-key/${deleted.id}`, { method: 'DELETE', headers: { ...UA, ...bearer(token) } })).status, 204);
  for (const key of [leaked, kept]) t.equal((await b.get('/accounts', bearer(key.apiKey))).status, 200, 'works on B, and is cached there');

  const invented = () => generateApiKey('sandbox', shardTagOf(org.id)).secret;
  const mixed = [
    leaked.apiKey,
    deleted.apiKey,
    invented(),
    'agk_test_this-is-not-a-key',
    generateApiKey('production', shardTagOf(org.id)).secret, // the other environment's
  ];
  const answer = await report(a, mixed);
  t.equal(answer.status, 202);
  t.same(answer.json(), { received: mixed.length });

  const inventedOnly = Array.from({ length: mixed.length }, invented);
  const control = await report(a, inventedOnly);
  t.equal(control.status, 202);
  t.equal(control.body, answer.body, 'the same body as a report of invented keys only');
  t.equal(control.headers['content-type'], answer.headers['content-type']);

  const startedAt = Date.now();
  // Far below the cache TTL (60 s): only the revocation message can explain a 401 on B.
  const refusedOnB = await eventually(async () => (await b.get('/accounts', bearer(leaked.apiKey))).status === 401, 15_000, 5);
  t.ok(refusedOnB, `reported on A → 401 on B (${Date.now() - startedAt} ms)`);
  t.equal((await a.get('/accounts', bearer(leaked.apiKey))).status, 401, 'and on A');
  t.equal((await b.get('/accounts', bearer(kept.apiKey))).status, 200, 'the organization\'s other key still works on B');
  t.equal((await a.get('/accounts', bearer(kept.apiKey))).status, 200, 'and on A');
  t.equal((await b.get('/accounts', bearer(token))).status, 200, 'and its login token');

  const audit = a.logs.records().filter((r) => r['event'] === 'api_key.leaked');
  t.equal(audit.length, 1, 'one audit line, on the replica that revoked');
  t.match(audit[0], { orgId: org.id, keyId: leaked.id, msg: String });
  t.ok(await eventually(async () => a.logs.records().filter((r) => r['route'] === '/auth/api-key/leaked').length === 2), 'both reports\' request lines');
  const logged = a.logs.text() + b.logs.text();
  for (const key of [...mixed, ...inventedOnly]) {
    t.notOk(logged.includes(key), 'no reported string is in the logs');
    const parsed = parseApiKey(key);
    if (parsed.ok) t.notOk(logged.includes(parsed.hash.split('.')[1]!), 'nor its hash');
  }
});

t.test(`a parallel burst of ${LEAK_REPORTS.perAddress + 10} reports from one address over two replicas: exactly ${LEAK_REPORTS.perAddress} taken`, async (t) => {
  const [a, b] = await twoReplicas(t);
  const total = LEAK_REPORTS.perAddress + 10;
  const answers = await Promise.all(Array.from({ length: total }, (_, i) => report(i % 2 === 0 ? a : b, [generateApiKey('sandbox', 'k3x').secret])));
  const accepted = answers.filter((r) => r.status === 202);
  const refused = answers.filter((r) => r.status === 429);
  t.equal(accepted.length, LEAK_REPORTS.perAddress, '202s');
  t.equal(refused.length, 10, '429s');
  for (const res of refused) {
    t.equal(res.json().code, 1109);
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    const retryAfter = Number(res.headers['retry-after']);
    t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= LEAK_REPORTS.windowSeconds, `Retry-After ${retryAfter}`);
  }
});
