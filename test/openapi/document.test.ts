import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { send, startGateway } from '../helpers/gateway.js';
import { lint } from '../helpers/redocly.js';

/**
 * Both OpenAPI documents, as the ops port serves them, linted by Redocly's CLI with the
 * repository's redocly.yaml (the recommended rules): not one error, not one warning
 * (test/helpers/redocly.ts). The document of a routes file of one's own: openapi-live-table.test.ts.
 */

type Operation = { operationId?: string; security?: Record<string, string[]>[]; responses: Record<string, { content?: Record<string, unknown> }>; parameters?: { name: string; in: string }[] };
type Document = { servers?: unknown[]; paths: Record<string, Record<string, Operation>> };

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));

t.test('the OpenAPI documents lint clean under Redocly\'s recommended rules', async (t) => {
  const gw = await startGateway(t);
  const dir = await mkdtemp(join(tmpdir(), 'authgate-openapi-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));

  const documents: Record<string, Document> = {};
  for (const [name, path] of [['public', '/openapi.json'], ['admin', '/openapi/admin.json']] as const) {
    const res = await send(`${gw.opsUrl}${path}`);
    t.equal(res.status, 200, `${path} is served`);
    documents[name] = res.json() as Document;
    const file = join(dir, `${name}.json`);
    await writeFile(file, res.body);
    const report = await lint(file);
    const findings = report.problems.map((p) => `${p.ruleId} at ${p.location?.[0]?.pointer ?? '?'}: ${p.message}`);
    t.same({ errors: report.totals.errors, warnings: report.totals.warnings, findings }, { errors: 0, warnings: 0, findings: [] }, `${path}: no error, no warning`);
  }

  const pub = documents.public!;
  const admin = documents.admin!;
  t.ok(pub.servers?.length, 'the public document names its server');
  t.ok(admin.servers?.length, 'the admin document names its server');

  t.test('every operation has an operationId, unique across both documents, and the stable ones are there', async (t) => {
    const ids = [...operations(pub), ...operations(admin)].map(({ path, method, operation }) => operation.operationId ?? `(none: ${method} ${path})`);
    t.same(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'no operationId twice');
    t.notOk(ids.some((id) => id.startsWith('(none')), 'none missing');
    for (const id of ['login', 'logout', 'createApiKey', 'listApiKeys', 'getApiKey', 'updateApiKey', 'deleteApiKey', 'reportLeakedApiKeys', 'getAccounts', 'postAccounts', 'getAccountsPath', 'deleteAccountsPath', 'getOrganizationMe', 'createOrganization', 'getOrganization', 'deleteOrganization', 'listOrganizationApiKeys', 'deleteOrganizationApiKey']) {
      t.ok(ids.includes(id), id);
    }
    const listKeys = admin.paths['/admin/organizations/{id}/api-keys']?.get;
    t.equal(listKeys?.operationId, 'listOrganizationApiKeys', 'GET /admin/organizations/{id}/api-keys');
    t.ok(listKeys?.responses['200']?.content?.['application/json'], 'the key list is documented');
    t.ok(listKeys?.responses['404']?.content?.['application/problem+json'], 'an unknown organization is a problem');
    const deleteKey = admin.paths['/admin/organizations/{id}/api-keys/{keyId}']?.delete;
    t.equal(deleteKey?.operationId, 'deleteOrganizationApiKey', 'DELETE /admin/organizations/{id}/api-keys/{keyId}');
    t.same(deleteKey?.parameters?.map((p) => [p.in, p.name]).sort(), [['path', 'id'], ['path', 'keyId']], 'both path parameters');
    t.ok(deleteKey?.responses['204'], 'revoked: 204');
    for (const status of ['401', '404']) t.ok(deleteKey?.responses[status]?.content?.['application/problem+json'], `revoke: ${status} is a problem`);
    // The admin token's refusal limit (guards/admin-refusal-throttle.ts) can answer any admin route.
    for (const { path, method, operation } of operations(admin)) {
      if (path.startsWith('/admin/')) t.ok(operation.responses['429']?.content?.['application/problem+json'], `${method} ${path}: 429 is a problem`);
    }
    const oneKey = pub.paths['/auth/api-key/{id}'];
    t.same(Object.keys(oneKey ?? {}).sort(), ['delete', 'get', 'patch'], 'GET, PATCH and DELETE /auth/api-key/{id}');
    t.equal(oneKey?.get?.operationId, 'getApiKey', 'GET /auth/api-key/{id}');
    t.equal(oneKey?.patch?.operationId, 'updateApiKey', 'PATCH /auth/api-key/{id}');
    for (const method of ['get', 'patch'] as const) {
      t.same(oneKey?.[method]?.security, [{ bearer: [] }], `${method}: a bearer credential`);
      t.ok(oneKey?.[method]?.responses['200']?.content?.['application/json'], `${method}: the key is documented`);
      for (const status of ['401', '404']) t.ok(oneKey?.[method]?.responses[status]?.content?.['application/problem+json'], `${method}: ${status} is a problem`);
    }
    t.ok(oneKey?.patch?.responses['400']?.content?.['application/problem+json'], 'patch: 400 is a problem');
    t.same(pub.paths['/auth/login']?.post?.security, [], 'login needs no credential');
    const leaked = pub.paths['/auth/api-key/leaked']?.post;
    t.same(leaked?.security, [], 'a leak report needs no credential');
    t.same(Object.keys(leaked?.responses ?? {}).sort(), ['202', '400', '403', '413', '415', '429', '503'], 'a leak report\'s answers');
    for (const status of ['400', '413', '429', '503']) t.ok(leaked?.responses[status]?.content?.['application/problem+json'], `leak report: ${status} is a problem`);
  });

  t.test('the forwarded routes, as a user of the upstream calls them', async (t) => {
    t.notOk(Object.keys(pub.paths).some((path) => path.includes('*')), 'no wildcard in a path');
    const below = pub.paths['/accounts/{path}'];
    t.ok(below, '/accounts/{path} is a path template');
    t.same(below?.get?.parameters?.map((p) => [p.in, p.name]), [['path', 'path']], 'with its one path parameter');
    const forwarded = operations(pub).filter(({ path }) => path === '/accounts' || path.startsWith('/accounts/') || path === '/organization/me');
    t.same(new Set(forwarded.filter(({ path }) => path !== '/organization/me').map(({ method }) => method)).size, 6, 'every forwarded method of /accounts');
    for (const { path, method, operation } of forwarded) {
      t.same(operation.security, [{ bearer: [] }], `${method} ${path}: a bearer credential`);
      for (const status of ['401', '403', '502', '503', '504']) {
        t.ok(operation.responses[status]?.content?.['application/problem+json'], `${method} ${path}: ${status} is a problem`);
      }
      t.ok(operation.responses['2XX'], `${method} ${path}: the upstream's answer`);
    }
  });
});
