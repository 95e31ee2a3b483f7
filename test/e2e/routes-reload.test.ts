/**
 * Reloading the routes file without a restart (issue 28), on real files, real HTTP and one real
 * Redis: a valid edit applies within a second on both replicas (each watching the file), an
 * invalid edit keeps the table in use on both (the error counted, one log line, still ready), a
 * ConfigMap-style symlink swap is seen, and SIGHUP reloads a real process (and, without a
 * file, leaves it running: node's default for SIGHUP is to exit).
 *
 * What the table changes for forwarded requests is in routes-reload-requests.test.ts.
 */
import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { startRedis } from '../helpers/redis.js';
import { ACCOUNTS, BUILTIN_YAML, ORGANIZATION_ME, REPORTS, configMapVolume, routesYaml } from '../helpers/routes-files.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

function workDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-routes-reload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const readyz = async (opsUrl: string) => {
  const res = await send(`${opsUrl}/readyz`);
  return { status: res.status, hash: (res.json() as { routes?: { hash?: string } }).routes?.hash };
};

/** A series' value from /metrics: `name{label="value",…}` matches the line of that name holding those labels (beside the default ones). */
async function metric(opsUrl: string, series: string): Promise<number | undefined> {
  const name = series.slice(0, series.indexOf('{'));
  const labels = series.slice(series.indexOf('{') + 1, -1).split(',');
  const line = (await send(`${opsUrl}/metrics`)).body.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
const OK = 'authgate_routes_reloads_total{result="ok"}';
const ERROR = 'authgate_routes_reloads_total{result="error"}';

/**
 * The built gateway as a process, killed at teardown whatever happens; ready within a minute (the
 * machine may be busy: the bound is for a hang, not for speed).
 */
async function startProcess(t: Test, env: Record<string, string>) {
  const gw = await startGatewayProcess(env, { waitReady: false });
  t.teardown(() => {
    gw.child.kill('SIGKILL');
  });
  const up = await eventually(async () => gw.child.exitCode === null && (await readyz(gw.opsUrl).catch(() => ({ status: 0 }))).status === 200, 60_000, 50);
  if (!up) throw new Error(`the gateway did not become ready: ${gw.output()}`);
  return gw;
}

const paths = (gw: StartedGateway) => gw.gateway.routes.current().routes.map((r) => r.path);

t.test('two replicas of one Redis: a valid edit applies within a second on both; an invalid one keeps the table on both', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const file = join(workDir(t), 'routes.yaml');
  writeFileSync(file, BUILTIN_YAML);
  const options = { upstream, env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_ROUTES_FILE: file } };
  const replicas = [await startGateway(t, options), await startGateway(t, options)];
  for (const gw of replicas) t.ok(await eventually(async () => (await readyz(gw.opsUrl)).status === 200, 15_000, 50), 'ready');
  const first = replicas[0]!.gateway.routes.current().hash;
  for (const gw of replicas) {
    t.strictSame(paths(gw), ['/accounts', '/organization/me'], 'the file is served');
    t.equal((await readyz(gw.opsUrl)).hash, first, '/readyz shows its hash');
    t.equal(await metric(gw.opsUrl, `authgate_routes_table_info{hash="${first}"}`), 1, 'and so does the metric');
  }

  // A valid edit: a route more.
  const startedAt = Date.now();
  writeFileSync(file, routesYaml([ACCOUNTS, ORGANIZATION_ME, REPORTS]));
  const applied = await eventually(async () => replicas.every((gw) => paths(gw).includes('/v1/reports')), 5_000, 5);
  const took = Date.now() - startedAt;
  t.ok(applied, 'applied on both replicas');
  t.ok(took < 1000, `within a second (${took} ms)`);
  const second = replicas[0]!.gateway.routes.current().hash;
  t.not(second, first, 'a new table');
  for (const gw of replicas) {
    t.equal(gw.gateway.routes.current().hash, second, 'both replicas converged on one hash');
    t.same(await readyz(gw.opsUrl), { status: 200, hash: second }, '/readyz shows the new hash');
    t.equal(await metric(gw.opsUrl, `authgate_routes_table_info{hash="${second}"}`), 1);
    t.equal(await metric(gw.opsUrl, `authgate_routes_table_info{hash="${first}"}`), undefined, 'the old hash is gone from the metric');
    t.equal(await metric(gw.opsUrl, OK), 1, 'one reload, ok');
    t.match(gw.logs.records().find((r) => r['event'] === 'routes_reloaded'), { trigger: 'file', hash: second, previous: first, source: file });
  }

  // An invalid edit: a misspelt key and an undeclared scope.
  writeFileSync(file, `${routesYaml([ACCOUNTS, ORGANIZATION_ME, REPORTS])}  - id: broken\n    path: /broken\n    mathc: exact\n    methods: { GET: nope:read }\n`);
  t.ok(await eventually(async () => (await Promise.all(replicas.map((gw) => metric(gw.opsUrl, ERROR)))).every((n) => n === 1), 5_000, 10), 'counted as an error on both');
  for (const gw of replicas) {
    t.equal(gw.gateway.routes.current().hash, second, 'the table in use stays');
    t.same(await readyz(gw.opsUrl), { status: 200, hash: second }, 'ready, with the old hash');
    const failed = gw.logs.records().filter((r) => r['event'] === 'routes_reload_failed');
    t.equal(failed.length, 1, 'one log line');
    t.match(failed[0], { level: 50, trigger: 'file', hash: second, errors: [new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: /routes/3`)] }, 'naming the file, the line and the place');
  }

  // Fixed again: served.
  writeFileSync(file, BUILTIN_YAML);
  t.ok(await eventually(async () => replicas.every((gw) => gw.gateway.routes.current().hash === first), 5_000, 5), 'back to the first table on both');
  for (const gw of replicas) t.equal(await metric(gw.opsUrl, OK), 2);
});

t.test('a ConfigMap update (the ..data symlink swapped over) is seen', async (t) => {
  const volume = configMapVolume(workDir(t));
  volume.publish(BUILTIN_YAML);
  const gw = await startGateway(t, { env: { AUTHGATE_ROUTES_FILE: volume.path } });
  t.strictSame(paths(gw), ['/accounts', '/organization/me']);
  volume.publish(routesYaml([ACCOUNTS, REPORTS]));
  t.ok(await eventually(async () => paths(gw).includes('/v1/reports'), 5_000, 5), 'the new table is served');
  t.strictSame(paths(gw), ['/accounts', '/v1/reports']);
  volume.publish(routesYaml([ACCOUNTS, ORGANIZATION_ME, REPORTS]));
  t.ok(await eventually(async () => paths(gw).includes('/organization/me'), 5_000, 5), 'and the next one (the first timestamped directory is gone)');
  t.equal(await metric(gw.opsUrl, OK), 2);
});

t.test('SIGHUP reloads the file of a real process (a change its watcher cannot see)', async (t) => {
  // The file is a symlink into another directory: the watcher watches the link's directory, so
  // an edit of the target is seen only when the operator says so.
  const dir = workDir(t);
  mkdirSync(join(dir, 'watched'));
  mkdirSync(join(dir, 'elsewhere'));
  const target = join(dir, 'elsewhere', 'routes.yaml');
  writeFileSync(target, BUILTIN_YAML);
  const link = join(dir, 'watched', 'routes.yaml');
  symlinkSync(target, link);
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startProcess(t, { AUTHGATE_UPSTREAM_URL: upstream.url, AUTHGATE_ROUTES_FILE: link });
  const first = (await readyz(gw.opsUrl)).hash;
  t.match(first, /^[0-9a-f]{16}$/);

  writeFileSync(target, routesYaml([ACCOUNTS, ORGANIZATION_ME, REPORTS]));
  gw.child.kill('SIGHUP');
  t.ok(await eventually(async () => (await readyz(gw.opsUrl)).hash !== first, 5_000, 10), 'the new table after SIGHUP');
  t.equal(await metric(gw.opsUrl, OK), 1);
  // Log lines leave in batches up to 10 ms after the event (log-sink.ts): waited for, bounded.
  t.ok(await eventually(async () => /"event":"routes_reloaded","trigger":"signal"/.test(gw.output()), 5_000, 10), 'logged as the signal\'s');

  writeFileSync(target, 'version: 2\nroutes: []\n');
  gw.child.kill('SIGHUP');
  t.ok(await eventually(async () => (await metric(gw.opsUrl, ERROR)) === 1, 5_000, 10), 'a bad file on SIGHUP: counted');
  t.equal((await readyz(gw.opsUrl)).status, 200, 'still ready');
  t.ok(await eventually(async () => /"event":"routes_reload_failed","trigger":"signal"/.test(gw.output()), 5_000, 10), 'logged as the signal\'s failure');
  t.equal(gw.child.exitCode, null, 'and running');
});

t.test('SIGHUP without a routes file: nothing to reload, the process keeps running and ready', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startProcess(t, { AUTHGATE_UPSTREAM_URL: upstream.url });
  gw.child.kill('SIGHUP');
  t.ok(await eventually(async () => gw.output().includes('"event":"routes_reload_skipped"'), 5_000, 10), 'said so');
  t.equal(gw.child.exitCode, null, 'still running');
  t.equal((await readyz(gw.opsUrl)).status, 200, 'and ready');
});
