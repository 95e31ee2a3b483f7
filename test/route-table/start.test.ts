// AUTHGATE_ROUTES_FILE at start: config load checks the file (every error, named by the setting,
// with its line), `--check` says the same, the gateway's first table is the file's, and the ops
// port serves the schema.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { routesSchemaJson } from '../../src/route-table/schema.js';
import { injectGateway } from '../helpers/inject.js';
import { testConfig } from '../helpers/gateway.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

t.test('config load refuses a bad file with every error, each on one line under the setting\'s name', async (t) => {
  const file = `${fixtures}invalid/unknown-route-key.yaml`;
  const loaded = loadConfig({ AUTHGATE_ROUTES_FILE: file });
  t.same(loaded.ok ? [] : loaded.errors, [
    `AUTHGATE_ROUTES_FILE ${file}:5: /routes/0/match: is required (a route needs id, path, match, methods)`,
    `AUTHGATE_ROUTES_FILE ${file}:7: /routes/0/mathc: unknown key "mathc" (a route takes id, path, match, credentials, methods, upstream, rateLimit, weakens, cost)`,
  ]);
  const missing = loadConfig({ AUTHGATE_ROUTES_FILE: `${fixtures}nothing-here.yaml` });
  t.same(missing.ok ? [] : missing.errors, [`AUTHGATE_ROUTES_FILE ${fixtures}nothing-here.yaml: cannot be read (ENOENT)`]);
  // The environment counts: an upstream without a url is fine for `default` only.
  t.ok(loadConfig({ AUTHGATE_ROUTES_FILE: `${fixtures}valid/example.yaml` }).ok, 'default from AUTHGATE_UPSTREAM_URL (or development\'s example upstream)');
  const unset = loadConfig({});
  t.equal(unset.ok && unset.config.routesFile, undefined, 'unset: the built-in table');
});

t.test('the gateway\'s first table is the file\'s; unset, the built-in one', async (t) => {
  const file = `${fixtures}valid/example.yaml`;
  const gw = await injectGateway(t, { env: { AUTHGATE_ROUTES_FILE: file, AUTHGATE_UPSTREAM_URL: 'http://127.0.0.1:9/base' } });
  const table = gw.gateway.routes.current();
  t.equal(table.source, file);
  t.same(table.routes.map((r) => r.id), ['accounts', 'organization-me', 'reports', 'health']);
  t.equal(table.upstreams.get('default')!.basePath, '/base', 'default takes AUTHGATE_UPSTREAM_URL');
  t.equal(table.upstreams.get('reports')!.timeoutMs, 30_000);
  t.same(table.scopes.names, ['accounts:read', 'accounts:write', 'organization:read', 'reports:read', 'keys:read', 'keys:write']);

  const builtin = await injectGateway(t);
  t.equal(builtin.gateway.routes.current().source, undefined);
  t.same(builtin.gateway.routes.current().routes.map((r) => r.id), ['accounts', 'organization-me']);
  t.equal(testConfig().routesFile, undefined);
});

t.test('the ops port serves the routes file\'s JSON Schema', async (t) => {
  const gw = await injectGateway(t);
  const res = await gw.ops({ url: '/routes.schema.json', bare: true });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^application\/schema\+json/);
  t.same(res.json(), routesSchemaJson());
  const pub = await gw.pub({ url: '/routes.schema.json' });
  t.equal(pub.statusCode, 404, 'never on the public port');
});

t.test('node dist/main.js --check fails on a bad file with every error, and names a good one', async (t) => {
  const env = { PATH: process.env.PATH ?? '', AUTHGATE_SHED_EVENT_LOOP_DELAY_MS: '0' };
  const bad = spawnSync(process.execPath, [MAIN, '--check'], { env: { ...env, AUTHGATE_ROUTES_FILE: `${fixtures}invalid/weakens-unsaid.yaml` }, encoding: 'utf8', timeout: 60_000 });
  t.equal(bad.status, 1);
  t.match(bad.stderr, /authgate: AUTHGATE_ROUTES_FILE \S+weakens-unsaid\.yaml:10: \/routes\/1: route accounts-status .* add weakens: accounts\n/);
  t.match(bad.stderr, /configuration check failed: 1 problem;/);
  const good = spawnSync(process.execPath, [MAIN, '--check'], { env: { ...env, AUTHGATE_ROUTES_FILE: `${fixtures}valid/example.yaml` }, encoding: 'utf8', timeout: 60_000 });
  t.equal(good.status, 0, good.stderr);
  t.match(good.stdout, /configuration is valid: .*, routes \S+example\.yaml \(4\)\n/);
});
