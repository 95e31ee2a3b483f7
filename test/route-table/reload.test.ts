/**
 * route-table/reload.ts against an injected load(): a good file swaps the live table in one step,
 * a bad one keeps it (one log line, the error counted), the same table again swaps nothing, and
 * reloads asked for while one runs are done once after it, never overlapping.
 */
import t from 'tap';
import { Registry } from 'prom-client';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes } from '../../src/route-table/compile.js';
import { createLiveRouteTable } from '../../src/route-table/live.js';
import { createRouteReloader, type RouteLoadOutcome } from '../../src/route-table/reload.js';
import type { RoutesFile, RouteTable } from '../../src/route-table/types.js';
import { createLogger } from '../../src/observability/logging.js';
import { registerRouteMetrics } from '../../src/observability/route-metrics.js';
import { captureLogs } from '../helpers/log-capture.js';

function table(file: RoutesFile): RouteTable {
  const compiled = compileRoutes(file, { defaultUpstreamUrl: 'http://127.0.0.1:1', upstreamTimeoutMs: 1000, defaultAudience: undefined, source: '/etc/authgate/routes.yaml' });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
  return compiled.table;
}

const BUILTIN = table(BUILTIN_ROUTES_FILE);
const WITH_HEALTH = table({ ...BUILTIN_ROUTES_FILE, routes: [...BUILTIN_ROUTES_FILE.routes, { id: 'health', path: '/healthz', match: 'exact', credentials: 'none', methods: { GET: 'public' } }] });

function setup(load: () => RouteLoadOutcome | Promise<RouteLoadOutcome>) {
  const logs = captureLogs();
  const routes = createLiveRouteTable(BUILTIN);
  const registry = new Registry();
  const metrics = registerRouteMetrics(registry, routes);
  const reloader = createRouteReloader({ routes, load, logger: createLogger('info', logs.destination), count: metrics.countReload });
  const metric = async (name: string) => (await registry.metrics()).split('\n').filter((line) => line.startsWith(name)).join('\n');
  return { logs, routes, reloader, metric };
}

t.test('a good file is swapped in whole, logged and counted ok; the hash metric follows', async (t) => {
  const { logs, routes, reloader, metric } = setup(() => ({ ok: true, table: WITH_HEALTH }));
  const swaps: string[] = [];
  routes.onSwap((next, previous) => swaps.push(`${previous.hash}->${next.hash}`));
  t.match(await metric('authgate_routes_table_info'), `authgate_routes_table_info{hash="${BUILTIN.hash}"} 1`);
  t.strictSame(await reloader.reload('signal'), { result: 'applied', hash: WITH_HEALTH.hash, previous: BUILTIN.hash });
  t.equal(routes.current(), WITH_HEALTH, 'the new table is live');
  t.strictSame(swaps, [`${BUILTIN.hash}->${WITH_HEALTH.hash}`], 'one swap');
  t.match(await metric('authgate_routes_reloads_total'), 'authgate_routes_reloads_total{result="ok"} 1');
  t.match(await metric('authgate_routes_reloads_total'), 'authgate_routes_reloads_total{result="error"} 0');
  t.equal(await metric('authgate_routes_table_info'), `authgate_routes_table_info{hash="${WITH_HEALTH.hash}"} 1`, 'one series: the live table');
  const line = logs.records().find((r) => r['event'] === 'routes_reloaded');
  t.match(line, { level: 30, trigger: 'signal', hash: WITH_HEALTH.hash, previous: BUILTIN.hash, routes: 3 });
});

t.test('a bad file keeps the table in use: one error line with every error, counted error', async (t) => {
  const errors = ['routes.yaml:4: /routes/0/path: must start with /', 'routes.yaml:9: /routes/1/methods/GET: scope nope:read is not declared'];
  const { logs, routes, reloader, metric } = setup(() => ({ ok: false, errors }));
  const swaps: unknown[] = [];
  routes.onSwap((next) => swaps.push(next));
  t.strictSame(await reloader.reload('file'), { result: 'error', hash: BUILTIN.hash, errors });
  t.equal(routes.current(), BUILTIN, 'the old table stays');
  t.equal(swaps.length, 0, 'nothing swapped');
  t.match(await metric('authgate_routes_reloads_total'), 'authgate_routes_reloads_total{result="error"} 1');
  t.match(await metric('authgate_routes_reloads_total'), 'authgate_routes_reloads_total{result="ok"} 0');
  const failed = logs.records().filter((r) => r['event'] === 'routes_reload_failed');
  t.equal(failed.length, 1, 'one line');
  t.match(failed[0], { level: 50, trigger: 'file', hash: BUILTIN.hash, errors, errorCount: 2 });
  t.equal(logs.lines.length, 1, 'and nothing else');
});

t.test('a loader that throws is a refused reload, never a crash', async (t) => {
  const { routes, reloader, metric, logs } = setup(() => {
    throw new Error('EIO: i/o error');
  });
  const outcome = await reloader.reload('signal');
  t.equal(outcome.result, 'error');
  t.equal(routes.current(), BUILTIN);
  t.match(await metric('authgate_routes_reloads_total'), 'authgate_routes_reloads_total{result="error"} 1');
  t.match(logs.records()[0], { event: 'routes_reload_failed', errors: [/EIO/] });
});

t.test('the same table again swaps nothing (counted ok)', async (t) => {
  const { routes, reloader, metric } = setup(() => ({ ok: true, table: table(BUILTIN_ROUTES_FILE) }));
  const swaps: unknown[] = [];
  routes.onSwap((next) => swaps.push(next));
  t.strictSame(await reloader.reload('file'), { result: 'unchanged', hash: BUILTIN.hash });
  t.equal(routes.current(), BUILTIN, 'the table object in use stays');
  t.equal(swaps.length, 0);
  t.match(await metric('authgate_routes_reloads_total'), 'authgate_routes_reloads_total{result="ok"} 1');
});

t.test('at most 50 errors on the line, the count of all of them beside', async (t) => {
  const errors = Array.from({ length: 500 }, (_, i) => `routes.yaml:${i + 1}: /routes/${i}: bad`);
  const { reloader, logs } = setup(() => ({ ok: false, errors }));
  await reloader.reload('file');
  const line = logs.records()[0]!;
  t.equal((line['errors'] as unknown[]).length, 50);
  t.equal(line['errorCount'], 500);
});

t.test('reloads never overlap: asked for during one, one more runs after it, shared by every caller', async (t) => {
  let active = 0;
  let most = 0;
  let calls = 0;
  const gates: (() => void)[] = [];
  const { reloader } = setup(async () => {
    calls++;
    active++;
    most = Math.max(most, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active--;
    return { ok: true, table: calls === 1 ? WITH_HEALTH : BUILTIN };
  });
  const first = reloader.reload('signal');
  const second = reloader.reload('file');
  const third = reloader.reload('signal');
  t.equal(second, third, 'the queued reload is shared');
  // Bounded wait for each load to be under way, then let it finish.
  for (let i = 0; i < 2; i++) {
    for (const deadline = Date.now() + 2000; gates.length === 0 && Date.now() < deadline; ) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()?.();
  }
  t.match(await first, { result: 'applied', hash: WITH_HEALTH.hash });
  t.match(await second, { result: 'applied', hash: BUILTIN.hash, previous: WITH_HEALTH.hash });
  t.equal(calls, 2, 'two loads for three asks');
  t.equal(most, 1, 'never two at once');
});
