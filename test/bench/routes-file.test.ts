/**
 * The bench's routes files (bench/routes-file.ts) hold issue 28's format: the 2-route file spells
 * out exactly today's built-in table, the 50-route one ends at /accounts, and both are closed,
 * with unique ids, distinct paths and every scope a route names declared. And the bench skips the
 * routes-table scenarios on a build without the setting.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { ROUTES_LAST_PATH, ROUTES_PROBE_PATH, routesFile, routesFileUnsupported } from '../../bench/routes-file.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';

const builtin = BUILTIN_ROUTES_FILE.routes;

type Route = { id: string; path: string; match: string; credentials: string[]; methods: Record<string, string> };
type File = { version: number; upstreams: Record<string, unknown>; scopes: Record<string, string>; routes: Route[] };

function checkShape(t: Test, file: File): void {
  t.same(Object.keys(file).sort(), ['routes', 'scopes', 'upstreams', 'version'], 'only the format’s top-level keys');
  t.equal(file.version, 1);
  t.same(file.upstreams, { default: {} }, 'one upstream, its URL from AUTHGATE_UPSTREAM_URL');
  const ids = file.routes.map((r) => r.id);
  const paths = file.routes.map((r) => r.path);
  t.equal(new Set(ids).size, ids.length, 'route ids unique');
  t.equal(new Set(paths).size, paths.length, 'paths distinct');
  for (const route of file.routes) {
    t.same(Object.keys(route).sort(), ['credentials', 'id', 'match', 'methods', 'path'], `${route.id}: only the format’s keys`);
    t.ok(['exact', 'subtree'].includes(route.match), `${route.id}: match`);
    t.same(route.credentials, ['login_token', 'api_key'], `${route.id}: credentialed`);
    for (const scope of Object.values(route.methods)) t.ok(scope in file.scopes, `${route.id}: ${scope} declared`);
  }
  for (const scope of Object.keys(file.scopes)) t.match(scope, /^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/, `${scope}: resource:action`);
}

t.test('the 2-route file is today’s built-in table, spelled out', async (t) => {
  const file = parse(routesFile(2)) as File;
  checkShape(t, file);
  t.same(
    file.routes.map((r) => ({ path: r.path, subtree: r.match === 'subtree', methods: r.methods })),
    builtin.map((r) => ({ path: r.path, subtree: r.match === 'subtree', methods: r.methods })),
  );
  t.ok(builtin.every((r) => JSON.stringify(r.credentials) === JSON.stringify(['login_token', 'api_key'])), 'today both routes take a login token or an API key, as the file says');
});

t.test('the 50-route file: 50 routes, the probe route among them, /accounts last with its scopes', async (t) => {
  const file = parse(routesFile(50)) as File;
  checkShape(t, file);
  t.equal(file.routes.length, 50);
  const last = file.routes.at(-1)!;
  t.equal(last.path, ROUTES_LAST_PATH);
  t.same(last.methods, builtin[0]!.methods, 'the last route asks what /accounts asks today');
  t.ok(file.routes.some((r) => r.path === ROUTES_PROBE_PATH && r.methods['GET'] !== undefined), 'the probe path is a GET route of the file only');
  t.notOk(builtin.some((r) => r.path === ROUTES_PROBE_PATH), 'and not of the built-in table');
});

t.test('a build without AUTHGATE_ROUTES_FILE is skipped with a reason; one with it is not', async (t) => {
  const dist = mkdtempSync(join(tmpdir(), 'authgate-bench-routes-'));
  t.teardown(() => rmSync(dist, { recursive: true, force: true }));
  mkdirSync(join(dist, 'config'));
  writeFileSync(join(dist, 'config', 'settings.js'), "export const settings = [{ name: 'AUTHGATE_UPSTREAM_URL' }];\n");
  t.match(routesFileUnsupported(join(dist, 'main.js')), /does not read AUTHGATE_ROUTES_FILE/);
  writeFileSync(join(dist, 'config', 'settings.js'), "export const settings = [{ name: 'AUTHGATE_ROUTES_FILE' }];\n");
  t.equal(routesFileUnsupported(join(dist, 'main.js')), undefined);
});

t.test('issue 47: the quota twin\'s file is the 2-route file with a plan every organization is on, a quota no run reaches, as the gateway loads it', async (t) => {
  const { loadRoutesText } = await import('../../src/route-table/load.js');
  const loaded = loadRoutesText(routesFile(2, true), 'routes-2-quota.yaml', { defaultUpstreamUrl: 'http://127.0.0.1:9', upstreamTimeoutMs: 5000, defaultAudience: undefined });
  t.ok(loaded.ok, JSON.stringify(loaded.ok ? [] : loaded.errors));
  if (!loaded.ok) return;
  t.equal(loaded.table.defaultPlan?.name, 'bench');
  t.same(loaded.table.defaultPlan?.quota, { requests: 1_000_000_000_000, per: 'month' });
  t.same(loaded.table.routes.map((route) => route.path), builtin.map((route) => route.path), 'the same routes as routes-2');
});
