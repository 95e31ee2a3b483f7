// How a path is read before a route decides it (route-table/path-reading.ts, issue 45): `;` and
// `//` refused unless the file's `paths` says how the upstreams read them, a letter-case or
// trailing-slash spelling decided by the route it spells (refused where that one asks less).
import t from 'tap';
import { problems } from '../../src/problems.js';
import { compileRoutes } from '../../src/route-table/compile.js';
import { pathRefusalProblem } from '../../src/route-table/path-reading.js';
import type { PathRefusal, PathsSpec, RoutesFile, RouteTable } from '../../src/route-table/types.js';
import { PUBLIC_ROOT_ROUTES } from '../helpers/path-readings.js';

function tableOf(file: RoutesFile): RouteTable {
  const result = compileRoutes(file, { defaultUpstreamUrl: 'http://upstream.test', upstreamTimeoutMs: 10_000, defaultAudience: undefined, source: undefined });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.table;
}

/** The route id a path is decided by, or `refused: <reason>`, or none. */
function reading(table: RouteTable, path: string): string | undefined {
  const read = table.read(path);
  if (read.refusal !== undefined) {
    t.equal(table.match(path), undefined, `${path}: match() takes no refused path either`);
    return `refused: ${read.refusal}`;
  }
  return read.route?.id;
}

const cases = (table: RouteTable, expected: Record<string, string | undefined>) => {
  for (const [path, want] of Object.entries(expected)) t.equal(reading(table, path), want, `${path} → ${want ?? 'none'}`);
};

t.test('by default: ";" and "//" refused, another spelling decided by the route it spells', async () => {
  cases(tableOf(PUBLIC_ROOT_ROUTES), {
    '/about': 'site',
    '/admin/users': 'admin',
    '/v1/invoices': 'invoices',
    '/admin;x/users': 'refused: path_parameter',
    '/admin;/users': 'refused: path_parameter',
    '/admin%3Bx/users': 'refused: path_parameter', // decoded once, as an upstream reads it
    '/accounts/..;/organization/me': 'refused: path_parameter',
    '/about;v=1': 'refused: path_parameter', // refused wherever it is: no server's reading is assumed
    '//admin/users': 'refused: empty_path_segment',
    '/admin//users': 'refused: empty_path_segment',
    '//': 'refused: empty_path_segment',
    '/v1/invoices/': 'invoices',
    '/V1/INVOICES': 'invoices',
    '/V1/Invoices/': 'invoices',
    '/ADMIN/users': 'admin',
    '/Admin': 'admin',
    '/ORGANIZATION/me': 'organization-me',
    '/organization/me/': 'organization-me',
    '/\u212Admin': 'site', // not a spelling of /admin (U+212A is a K, lower-cased k: /kdmin)
    '/\u212Ay': 'site',
    '/v1/invoices/x': 'site', // an exact route holds only its own path
    '/v1/invoicesx/': 'site',
    '/admin#x': 'admin',
    '/ADMIN/#x': 'admin',
    // A public route nested on purpose (weakens): its other spellings are the credentialed /api's
    // as sent and its own folded, so neither decides them.
    '/api/docs': 'api-docs',
    '/api/DOCS': 'refused: path_variant_weaker',
    '/api/docs/': 'refused: path_variant_weaker',
    '/API/DOCS': 'api-docs', // no route as sent but the public root: the folded reading asks more than that
    '/api/x': 'api',
    // The gateway's own paths stay no route's in any case; a capitalised one is the site's, as fastify's case-sensitive router does not take it.
    '/auth/login': undefined,
    '/AUTH/login': 'site',
  });
});

t.test('paths: { parameters: strip, emptySegments: merge } reads as servlet containers and nginx do', async () => {
  const table = tableOf({ ...PUBLIC_ROOT_ROUTES, paths: { parameters: 'strip', emptySegments: 'merge' } });
  cases(table, {
    '/admin;x/users': 'admin',
    '/admin;jsessionid=ABC/users': 'admin',
    '/about;v=1': 'site',
    '/v1/invoices;x': 'invoices',
    '/accounts/..;/organization/me': 'refused: path_parameter', // `..` once stripped: refused still
    '/accounts/.;/x': 'refused: path_parameter',
    '//admin/users': 'admin',
    '/admin//users': 'admin',
    '/;x/admin': 'admin', // stripped, then merged
    '/V1//INVOICES/': 'invoices',
  });
  // One opt-in does not imply the other.
  cases(tableOf({ ...PUBLIC_ROOT_ROUTES, paths: { parameters: 'strip' } }), { '/admin;x/users': 'admin', '//admin/users': 'refused: empty_path_segment', '/;x/admin': 'refused: empty_path_segment' });
  cases(tableOf({ ...PUBLIC_ROOT_ROUTES, paths: { emptySegments: 'merge' } }), { '//admin/users': 'admin', '/admin;x/users': 'refused: path_parameter' });
  const refuseAll: PathsSpec = { parameters: 'refuse', emptySegments: 'refuse' };
  cases(tableOf({ ...PUBLIC_ROOT_ROUTES, paths: refuseAll }), { '/admin;x/users': 'refused: path_parameter', '//admin/users': 'refused: empty_path_segment' });
  t.not(tableOf({ ...PUBLIC_ROOT_ROUTES, paths: { parameters: 'strip' } }).hash, tableOf(PUBLIC_ROOT_ROUTES).hash, 'paths is part of the table\'s hash');
});

t.test('a route declared with capitals is found in any spelling; two routes differing only in case do not load', async () => {
  const file: RoutesFile = {
    version: 1,
    scopes: { 'reports:read': 'Read reports' },
    routes: [
      { id: 'site', path: '/', match: 'subtree', credentials: 'none', methods: { GET: 'public' } },
      { id: 'reports', path: '/Reports', match: 'subtree', methods: { GET: 'reports:read' } },
    ],
  };
  cases(tableOf(file), { '/Reports/1': 'reports', '/reports/1': 'reports', '/REPORTS': 'reports', '/other': 'site' });
  const twice = compileRoutes({ ...file, routes: [...file.routes, { id: 'lower', path: '/reports', match: 'exact', methods: { GET: 'reports:read' } }] }, { defaultUpstreamUrl: 'http://u.test', upstreamTimeoutMs: 1000, defaultAudience: undefined, source: undefined });
  t.same(twice.ok ? [] : twice.errors, [{ pointer: '/routes/2/path', message: "path /reports differs from route 1's /Reports only in letter case, and a case-insensitive upstream reads them as one" }]);
});

t.test('the refusal: 400, code 1240, its reason, and never the path', async () => {
  for (const refusal of ['path_parameter', 'empty_path_segment', 'path_variant_weaker'] as PathRefusal[]) {
    const problem = pathRefusalProblem(refusal);
    t.equal(problem.problem, 'ambiguousPath');
    t.equal(problems[problem.problem].status, 400);
    t.equal(problems[problem.problem].code, 1240);
    t.equal(problem.reason, refusal);
    t.notMatch(problem.detail ?? '', /\/admin|\/api/);
  }
});
