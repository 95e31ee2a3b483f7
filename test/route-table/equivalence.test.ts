// Old table and new decide alike (issue 28): over random methods and paths (with %, ., //, case,
// trailing slashes, queries), today's forwarded-route table as fastify's router saw it (and as the
// fast lane picked its lane) gets the same decision as the compiled built-in table: the same route,
// the same 405 (with the same allowed methods), the same 404, behind the same path guard.
// Since issue 45 but for what it changed on purpose: a path with `;` or `//` is refused, and a
// letter-case or trailing-slash spelling is decided as the old table decided its declared spelling.
import t from 'tap';
import Fastify, { type FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';
import fc from 'fast-check';
import { allowedMethods } from '../../src/request/refusals.js';
import { isAmbiguousPath, isDoublyEncodedPath } from '../../src/request/path-guard.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes } from '../../src/route-table/compile.js';
import type { RouteTable } from '../../src/route-table/types.js';

/**
 * The forwarded-route table before issue 28 (src/config/forwarded-routes.ts, removed since), as it
 * was: the old decision this test holds the new table to.
 */
const readWrite = (read: string, write: string) => ({ GET: read, POST: write, PUT: write, PATCH: write, DELETE: write, OPTIONS: write });
const forwardedRoutes: readonly { path: string; subtree: boolean; methods: Record<string, string> }[] = [
  { path: '/accounts', subtree: true, methods: readWrite('accounts:read', 'accounts:write') },
  { path: '/organization/me', subtree: false, methods: { GET: 'organization:read' } },
];

/** Today's forwarded routes registered as proxy/forward.ts registered them, with the public server's router options. */
const ROUTER_OPTIONS = { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 200 } as const;

/**
 * fastify's router (find-my-way) on its own, with the same options and routes, to tell which
 * route was found (fastify's findRoute hides the route's own config).
 */
const router = FindMyWay(ROUTER_OPTIONS);

async function oldRouter(): Promise<FastifyInstance> {
  const app = Fastify({ routerOptions: ROUTER_OPTIONS });
  for (const route of forwardedRoutes) {
    const methodsByScope = new Map<string, string[]>();
    for (const [method, scope] of Object.entries(route.methods)) methodsByScope.set(scope, [...(methodsByScope.get(scope) ?? []), method]);
    const label = route.subtree ? `${route.path}/*` : route.path;
    for (const url of route.subtree ? [route.path, `${route.path}/*`] : [route.path]) {
      for (const methods of methodsByScope.values()) {
        app.route({ method: methods, url, handler: async () => label });
        // fastify answers HEAD from a GET route (exposeHeadRoutes).
        router.on(methods.includes('GET') ? [...methods, 'HEAD'] as 'GET'[] : methods as 'GET'[], url, () => undefined, { label });
      }
    }
  }
  await app.ready();
  return app;
}

/** proxy/fast-path.ts's laneOf as of the built-in table (main at "Route table core"): exact, then a subtree's prefix. */
function oldLane(path: string): string | undefined {
  for (const route of forwardedRoutes) if (route.path === path) return route.subtree ? `${route.path}/*` : route.path;
  for (const route of forwardedRoutes) if (route.subtree && path.startsWith(`${route.path}/`)) return `${route.path}/*`;
  return undefined;
}

/** The path guard, as both request paths run it first. */
function guard(url: string): string | undefined {
  if (isAmbiguousPath(url)) return '404';
  const query = url.indexOf('?');
  if (isDoublyEncodedPath(query === -1 ? url : url.slice(0, query))) return '400';
  return undefined;
}

function oldDecision(app: FastifyInstance, method: string, url: string): string {
  const refused = guard(url);
  if (refused !== undefined) return refused;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const found = app.findRoute({ method: method as 'GET', url: path });
  if (found !== null) {
    const label = (router.find(method as 'GET', path)?.store as { label?: string } | undefined)?.label;
    // The fast lane takes only a path without `%`; where it takes one, it is fastify's route.
    const lane = path.includes('%') ? undefined : oldLane(path);
    if (lane !== undefined && lane !== label) throw new Error(`the old lane (${lane}) and router (${label}) disagree on ${path}`);
    return `route ${label}`;
  }
  if (router.find(method as 'GET', path) !== null) throw new Error(`find-my-way finds ${method} ${path}, fastify does not`);
  const allowed = allowedMethods(app, path);
  return allowed.length === 0 ? '404' : `405 ${[...allowed].sort().join(',')}`;
}

function newDecision(table: RouteTable, method: string, url: string): string {
  const refused = guard(url);
  if (refused !== undefined) return refused;
  const query = url.indexOf('?');
  const reading = table.read(query === -1 ? url : url.slice(0, query));
  if (reading.refusal !== undefined) return `400 ${reading.refusal}`;
  const route = reading.route;
  if (route === undefined) return '404';
  if (route.methods.has(method)) return `route ${route.label}`;
  return `405 ${route.allow.split(', ').sort().join(',')}`;
}

/** A path lower-cased and without a trailing slash (or fragment): the spelling the built-in table declares. */
function declaredSpelling(path: string): string {
  const fragment = path.indexOf('#');
  const lower = (fragment === -1 ? path : path.slice(0, fragment)).toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

// Methods as node's parser lets them through: upper-case (it refuses `get` with 400 before any router).
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'];
const PIECES = ['/', '//', 'accounts', 'Accounts', 'ACCOUNTS', 'accountsX', 'organization', 'me', 'mex', 'Me', '1', 'x', '.', '..', '%2e', '%2E', '%2e%2e', '%2f', '%2F', '%5c', '\\', '%', '%61', '%41', '%65', '%25', '%252e', '%252f', '%20', ';', '?', '?a=/accounts', '&', '~', '-', 'http://h/'];

t.test('the old table (router and lane) and the compiled built-in table decide alike', async (t) => {
  const app = await oldRouter();
  t.teardown(() => app.close());
  const compiled = compileRoutes(BUILTIN_ROUTES_FILE, { defaultUpstreamUrl: 'http://upstream.test', upstreamTimeoutMs: 10_000, defaultAudience: undefined, source: undefined });
  if (!compiled.ok) throw new Error('the built-in table does not compile');
  const table = compiled.table;

  // The cases the issue names, then random ones.
  const named: [string, string, string, string?][] = [
    ['GET', '/accounts', 'route /accounts/*'],
    ['GET', '/accounts/', 'route /accounts/*'],
    ['HEAD', '/accounts/1', 'route /accounts/*'],
    ['GET', '/organization/me', 'route /organization/me'],
    ['DELETE', '/organization/me', '405 GET,HEAD'],
    ['GET', '/accountsX', '404'],
    ['GET', '/Accounts', '404', 'route /accounts/*'],
    ['GET', '//accounts', '404', '400 empty_path_segment'],
    ['GET', '/organization/me/', '404', 'route /organization/me'],
    ['GET', '/accounts/x;y', 'route /accounts/*', '400 path_parameter'],
    ['DELETE', '/ORGANIZATION/me/', '404', '405 GET,HEAD'],
    ['GET', '/organization/mex', '404'],
    ['GET', '/organization/me/x', '404'],
    ['GET', '/accounts/%2e%2e/keys', '404'],
    ['GET', '/accounts/..%2fx', '404'],
    ['GET', '/accounts%2f..', '404'],
    ['GET', '/accounts\\..', '404'],
    ['GET', '/accounts/%252e%252e/', '400'],
    ['GET', 'http://h/accounts', '404'],
    // An encoded unreserved character: the old router decoded it (and forwarded to /accounts); the path
    // guard now refuses it before any table is asked, for the old decision and the new alike.
    ['GET', '/%61ccounts/1', '404'],
  ];
  for (const [method, url, decision, since45 = decision] of named) {
    t.equal(oldDecision(app, method, url), decision, `old: ${method} ${url}`);
    t.equal(newDecision(table, method, url), since45, `new: ${method} ${url}`);
  }
  /** The old decision, or what issue 45 changed on purpose (see the top of this file). */
  const agrees = (method: string, url: string): string | undefined => {
    const before = oldDecision(app, method, url);
    const after = newDecision(table, method, url);
    if (before === after) return undefined;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (after.startsWith('400 ') && /;|\/\//.test(path)) return undefined;
    const spelled = oldDecision(app, method, declaredSpelling(path) + (query === -1 ? '' : url.slice(query)));
    return after === spelled ? undefined : `${method} ${url}: old ${before} (declared spelling: ${spelled}), new ${after}`;
  };

  fc.assert(
    fc.property(fc.constantFrom(...METHODS), fc.boolean(), fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }), (method, rooted, pieces) => {
      const url = `${rooted ? '/' : ''}${pieces.join('')}`;
      const disagreement = agrees(method, url);
      if (disagreement !== undefined) throw new Error(disagreement);
    }),
    { numRuns: 20_000 },
  );
  // Also near the routes: segments that are the routes' own, so matches are frequent.
  fc.assert(
    fc.property(
      fc.constantFrom(...METHODS),
      fc.constantFrom('/accounts', '/organization/me', '/organization', '/accounts/x'),
      fc.array(fc.constantFrom('', '/', '//', '/1', 'X', '/.', '/..', '/%2e', '%2f', '/%61', '/%zz', '?q', '?/..', ';a', '#f'), { maxLength: 3 }),
      (method, prefix, tail) => {
        const url = `${prefix}${tail.join('')}`;
        const disagreement = agrees(method, url);
        if (disagreement !== undefined) throw new Error(disagreement);
      },
    ),
    { numRuns: 20_000 },
  );
});
