/**
 * What a reload of the routes file changes for forwarded requests (issue 28), on two replicas of
 * one Redis, real files, real HTTP: a route added by an edit is forwarded by both within a
 * second, a route removed is 404 on both (nothing reaches the upstream), and a request held at
 * the upstream across the swap completes on the route it matched.
 *
 * Needs both request paths on the live table (helper "proxy"): on the reload branch alone the
 * request paths still read the built-in routes.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { ACCOUNTS, BUILTIN_YAML, ORGANIZATION_ME, REPORTS, routesYaml } from '../helpers/routes-files.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

async function twoReplicasOnAFile(t: Test, content: string) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const dir = mkdtempSync(join(tmpdir(), 'authgate-routes-reload-requests-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, content);
  const options = { upstream, env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_ROUTES_FILE: file } };
  const replicas: [StartedGateway, StartedGateway] = [await startGateway(t, options), await startGateway(t, options)];
  for (const gw of replicas) {
    if (!(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 200, 15_000, 50))) throw new Error('not ready');
  }
  const [a] = replicas;
  const org = await a.createOrganization();
  const token = await a.login(org.email, org.password);
  // Created without scopes: holds every scope, present and future (the file's new ones too).
  const key = await a.createApiKey(token);
  return { replicas, upstream, file, auth: { authorization: `Bearer ${key.apiKey}` } };
}

t.test('an edit adds a route: both replicas forward it within a second; removed, it is 404 and reaches nothing', async (t) => {
  const { replicas, upstream, file, auth } = await twoReplicasOnAFile(t, BUILTIN_YAML);
  for (const gw of replicas) t.equal((await gw.get('/v1/reports/q3', auth)).status, 404, 'not a route yet');
  t.equal(upstream.requests.length, 0);

  const startedAt = Date.now();
  writeFileSync(file, routesYaml([ACCOUNTS, ORGANIZATION_ME, REPORTS]));
  const forwarded = await eventually(async () => (await Promise.all(replicas.map((gw) => gw.get('/v1/reports/q3', auth)))).every((res) => res.status === 200), 5_000, 5);
  const took = Date.now() - startedAt;
  t.ok(forwarded, 'forwarded by both replicas');
  t.ok(took < 1000, `within a second (${took} ms)`);
  t.ok(upstream.requests.some((r) => r.url === '/v1/reports/q3'), 'the upstream got it');

  writeFileSync(file, routesYaml([ACCOUNTS, REPORTS]));
  t.ok(await eventually(async () => (await Promise.all(replicas.map((gw) => gw.get('/organization/me', auth)))).every((res) => res.status === 404), 5_000, 5), 'a removed route is 404 on both');
  const seen = upstream.requests.length;
  for (const gw of replicas) t.equal((await gw.get('/organization/me', auth)).status, 404);
  t.equal(upstream.requests.length, seen, 'and nothing reached the upstream');
  for (const gw of replicas) t.equal((await gw.get('/v1/reports', auth)).status, 200, 'the rest is served');

  // An invalid edit: both keep forwarding what they forwarded.
  writeFileSync(file, 'version: 1\nroutes:\n  - id: accounts\n    path: accounts\n');
  t.ok(await eventually(async () => replicas.every((gw) => gw.logs.records().some((r) => r['event'] === 'routes_reload_failed')), 5_000, 10), 'refused on both');
  for (const gw of replicas) {
    t.equal((await gw.get('/v1/reports', auth)).status, 200, 'the old table is served');
    t.equal((await gw.get('/organization/me', auth)).status, 404);
  }
});

t.test('a request held at the upstream across the swap completes on the route it matched', async (t) => {
  const { replicas, upstream, file, auth } = await twoReplicasOnAFile(t, BUILTIN_YAML);
  const [a] = replicas;
  const release = upstream.holdAnswers();
  const held = a.get('/accounts/held', auth);
  t.ok(await eventually(async () => upstream.requests.some((r) => r.url === '/accounts/held'), 10_000, 5), 'the request is at the upstream');

  // /accounts goes away while it is there. New requests are sent only once both replicas show the
  // new table's hash (a request sent before would be forwarded, and held by the upstream too).
  const hashOf = async (gw: StartedGateway) => ((await send(`${gw.opsUrl}/readyz`)).json() as { routes?: { hash?: string } }).routes?.hash;
  const before = await hashOf(a);
  writeFileSync(file, routesYaml([ORGANIZATION_ME, REPORTS]));
  t.ok(await eventually(async () => (await Promise.all(replicas.map(hashOf))).every((hash) => hash !== undefined && hash !== before), 5_000, 5), 'both replicas swapped');
  for (const gw of replicas) t.equal((await gw.get('/accounts/next', auth)).status, 404, 'a new request is 404');
  release();
  const answer = await held;
  t.equal(answer.status, 200, 'the held request completes');
  t.equal(answer.json().url, '/accounts/held');
});
