/**
 * GET /openapi.json describes the live route table, whatever valid file it is (issue 46): an
 * exact route and a subtree on one path (a duplicate route to fastify, once), a `:` in a path, an
 * operationId the gateway's own routes already use; before and after a hot reload to another file
 * (real files, the gateway's own watcher, real HTTP). A table that cannot be documented shows in
 * /readyz's detail and in authgate_openapi_documented, and the document never keeps the previous
 * table's routes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { eventually, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { findingsOf, lint } from '../helpers/redocly.js';

type Operation = { operationId?: string; summary?: string; security?: unknown[]; parameters?: { in: string; name: string }[]; responses: Record<string, unknown> };
type Document = { paths: Record<string, Record<string, Operation>> };

/** The "orders" API of the issue: `/api/v2/orders` exact and as a subtree, a public `/status`, an admin area. */
const ORDERS = `version: 1
scopes:
  orders:read: "Read orders"
  orders:write: "Change orders"
  admin:all: "Administer"
routes:
  - id: orders
    path: /api/v2/orders
    match: exact
    methods: { GET: orders:read, POST: orders:write }
  - id: orders-tree
    path: /api/v2/orders
    match: subtree
    methods: { GET: orders:read, PATCH: orders:write }
  - id: status
    path: /status
    match: exact
    credentials: none
    methods: { GET: public }
  - id: batch
    path: /api/v2/items:batch
    match: exact
    methods: { POST: orders:write }
  - id: key-lookalike
    path: /api/key
    match: exact
    credentials: [login_token]
    methods: { GET: admin:all }
  - id: admin
    path: /admin
    match: subtree
    credentials: [api_key]
    methods: { GET: admin:all, DELETE: admin:all }
`;

/** Another file: invoices, again exact and subtree on one path, and nothing of the orders. */
const INVOICES = `version: 1
scopes:
  invoices:read: "Read invoices"
  invoices:write: "Create invoices"
routes:
  - id: invoices-tree
    path: /v3/invoices
    match: subtree
    methods: { GET: invoices:read }
  - id: invoices
    path: /v3/invoices
    match: exact
    methods: { GET: invoices:read, POST: invoices:write }
`;

function routesFile(t: Test, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-openapi-live-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, content);
  return file;
}

const documentOf = async (gw: StartedGateway) => (await send(`${gw.opsUrl}/openapi.json`)).json() as Document;
const readiness = async (gw: StartedGateway) => (await send(`${gw.opsUrl}/readyz`)).json() as { status: string; routes: { hash: string; openapi: string } };
const documentedGauge = async (gw: StartedGateway) => {
  const line = (await send(`${gw.opsUrl}/metrics`)).body.split('\n').find((l) => l.startsWith('authgate_openapi_documented{'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};
const forwardedPaths = (doc: Document) => Object.keys(doc.paths).filter((path) => Object.values(doc.paths[path]!).some((op) => op.summary?.startsWith('Forwarded')));
const methodsOf = (doc: Document, path: string) => Object.keys(doc.paths[path] ?? {}).sort();

/** Writes the file anew and waits (bounded) for the gateway's watcher to serve a table other than `from`. */
async function reloadTo(t: Test, gw: StartedGateway, file: string, content: string, from: string): Promise<void> {
  writeFileSync(file, content);
  t.ok(await eventually(async () => (await readiness(gw)).routes.hash !== from, 15_000, 20), 'the new file is served');
}

t.test('an exact route and a subtree on one path: documented at start and after a hot reload to another file', async (t) => {
  const file = routesFile(t, ORDERS);
  const gw = await startGateway(t, { env: { AUTHGATE_ROUTES_FILE: file } });

  const before = await documentOf(gw);
  t.same(methodsOf(before, '/api/v2/orders'), ['get', 'post'], 'the path itself: the exact route\'s methods (it wins there)');
  t.same(methodsOf(before, '/api/v2/orders/{path}'), ['get', 'patch'], 'below it: the subtree\'s');
  t.same(before.paths['/api/v2/orders/{path}']?.get?.parameters?.map((p) => [p.in, p.name]), [['path', 'path']], 'with its path parameter');
  t.same(before.paths['/status']?.get?.security, [], 'the public route needs no credential');
  t.same(methodsOf(before, '/api/v2/items:batch'), ['post'], 'a `:` in a path is a path, not a parameter');
  t.same(methodsOf(before, '/admin/{path}'), ['delete', 'get'], 'the admin area');
  const ids = Object.values(before.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
  t.same(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'no operationId twice, the gateway\'s own included');
  t.equal(before.paths['/api/key']?.get?.operationId, 'getApiKey2', 'a forwarded GET /api/key does not take GET /auth/api-key/{id}\'s id');
  for (const path of ['/api/v2/orders', '/api/v2/orders/{path}']) {
    t.ok((before.paths[path]?.get?.responses['403'] as { content?: unknown } | undefined)?.content, `${path}: its refusals are documented`);
  }
  t.notMatch(gw.logs.text(), /routes\.openapi_failed/, 'no documentation failure logged');
  t.equal((await readiness(gw)).routes.openapi, 'documented', '/readyz: documented');
  t.equal(await documentedGauge(gw), 1, 'authgate_openapi_documented 1');

  // The document of this file lints as clean as the built-in table's (test/openapi/document.test.ts).
  const lintFile = join(mkdtempSync(join(tmpdir(), 'authgate-openapi-lint-')), 'public.json');
  t.teardown(() => rmSync(lintFile, { force: true }));
  writeFileSync(lintFile, JSON.stringify(before));
  t.same(findingsOf(await lint(lintFile)), [], 'Redocly\'s recommended rules: no finding');

  await reloadTo(t, gw, file, INVOICES, gw.gateway.routes.current().hash);
  const after = await documentOf(gw);
  t.same(forwardedPaths(after).sort(), ['/v3/invoices', '/v3/invoices/{path}'], 'the new table\'s routes, and only those');
  t.same(methodsOf(after, '/v3/invoices'), ['get', 'post'], 'the exact route on its path');
  t.same(methodsOf(after, '/v3/invoices/{path}'), ['get'], 'the subtree below it');
  t.notOk(after.paths['/api/v2/orders'], 'the previous table is gone from the document');
  t.notMatch(gw.logs.text(), /routes\.openapi_failed/, 'still no documentation failure logged');
  t.equal((await readiness(gw)).routes.openapi, 'documented');
});

t.test('a table that cannot be documented: readiness detail and metric say so; the document keeps no previous routes', async (t) => {
  const file = routesFile(t, ORDERS);
  const { describeTable } = await import('../../src/proxy/forwarded-docs.js');
  // Nothing of a valid file makes the documentation fail today: a describer that fails on the invoices stands in.
  const gw = await startGateway(t, {
    env: { AUTHGATE_ROUTES_FILE: file },
    deps: {
      openApiPaths: (table) => {
        if (table.routes.some((route) => route.id === 'invoices')) throw new Error('cannot document the invoices');
        return describeTable(table);
      },
    },
  });
  t.equal(await documentedGauge(gw), 1, 'documented at start');

  await reloadTo(t, gw, file, INVOICES, gw.gateway.routes.current().hash);
  const ready = await readiness(gw);
  t.equal(ready.status, 'ready', 'still ready: the table is served all the same');
  t.match(ready.routes.openapi, /^failed/, '/readyz\'s detail says the document failed');
  t.equal(await documentedGauge(gw), 0, 'authgate_openapi_documented 0');
  t.match(gw.logs.text(), /routes\.openapi_failed/, 'and the log line is there');
  t.same(forwardedPaths(await documentOf(gw)), [], 'the document lists no forwarded route, never the previous table\'s');

  await reloadTo(t, gw, file, ORDERS, gw.gateway.routes.current().hash);
  t.equal((await readiness(gw)).routes.openapi, 'documented', 'documented again with a table that can be');
  t.equal(await documentedGauge(gw), 1, 'authgate_openapi_documented 1');
  t.ok((await documentOf(gw)).paths['/api/v2/orders'], 'its routes are back');
});
