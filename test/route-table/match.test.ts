// The compiled table's matcher and compiler (route-table/match.ts, compile.ts): segment-bounded
// subtrees, exact over subtree, deeper over shallower, no fall back on a method miss, the
// gateway's own paths, nesting with `weakens`, and what an error may never echo.
import t from 'tap';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes, type CompileContext } from '../../src/route-table/compile.js';
import type { RoutesFile, RouteTable } from '../../src/route-table/types.js';

const context: CompileContext = { defaultUpstreamUrl: 'http://upstream.test:8000/v1', upstreamTimeoutMs: 10_000, defaultAudience: undefined, source: undefined };

function compiled(file: RoutesFile): RouteTable {
  const result = compileRoutes(file, context);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.table;
}

function errorsOf(file: RoutesFile): { pointer: string; message: string }[] {
  const result = compileRoutes(file, context);
  return result.ok ? [] : result.errors;
}

const routeOf = (table: RouteTable, path: string) => table.match(path)?.id;

t.test('boundaries of the built-in table: a subtree is bounded by segments, an exact path is exact, bytes are case-sensitive', async (t) => {
  const table = compiled(BUILTIN_ROUTES_FILE);
  for (const path of ['/accounts', '/accounts/', '/accounts/1', '/accounts/1/2/', '/accounts/%41']) t.equal(routeOf(table, path), 'accounts', `${path} is accounts'`);
  t.equal(routeOf(table, '/organization/me'), 'organization-me');
  for (const path of ['/accountsX', '//accounts', '/ accounts', '/organization/mex', '/organization/me/x', '/organization', '/organization/', '/', '', '/auth/keys', '/accounts%2f..', '/%zz']) {
    t.equal(routeOf(table, path), undefined, `${JSON.stringify(path)} is no route's`);
  }
  // Issue 45: a letter-case or trailing-slash spelling of a declared path is that route's (Express,
  // ASP.NET Core read them as it), once the path as sent has no route that asks more.
  for (const [path, id] of [['/Accounts', 'accounts'], ['/ACCOUNTS/1', 'accounts'], ['/organization/me/', 'organization-me'], ['/Organization/ME', 'organization-me']] as [string, string][]) {
    t.equal(routeOf(table, path), id, `${path} is ${id}'s`);
  }
  // An escape is the character it encodes, as the upstream reads it (decoded once).
  t.equal(routeOf(table, '/%61ccounts/1'), 'accounts');
  t.equal(routeOf(table, '/organization/m%65'), 'organization-me');
  t.equal(routeOf(table, '/%41ccounts'), 'accounts', 'decoded, then read as its route in any case');
  // A fragment is no part of the path, as fastify's router and upstreams read it; an encoded `#` is a character.
  t.equal(routeOf(table, '/organization/me#x'), 'organization-me');
  t.equal(routeOf(table, '/organization/me%23x'), undefined);
  // HEAD goes with GET; the Allow of a 405 names what the route forwards.
  const me = table.match('/organization/me')!;
  t.same([...me.methods.keys()], ['GET', 'HEAD']);
  t.equal(me.allow, 'GET, HEAD');
  t.equal(me.methods.get('HEAD'), me.methods.get('GET'));
  t.equal(table.match('/accounts/1')!.label, '/accounts/*');
  t.equal(table.match('/accounts/1')!.upstream.basePath, '/v1');
});

t.test('precedence: exact over subtree, the deepest subtree over shallower ones, and a method miss is a miss (no fall back)', async (t) => {
  const table = compiled({
    version: 1,
    scopes: { 'a:read': 'A', 'a:write': 'A', 'b:read': 'B' },
    routes: [
      { id: 'root', path: '/', match: 'subtree', methods: { GET: 'a:read', POST: 'a:write' } },
      { id: 'a', path: '/a', match: 'subtree', methods: { GET: 'a:read', DELETE: 'a:write' } },
      { id: 'ab', path: '/a/b', match: 'subtree', methods: { GET: 'b:read' } },
      { id: 'ab-exact', path: '/a/b', match: 'exact', methods: { PUT: 'a:write' } },
      { id: 'abc-exact', path: '/a/b/c', match: 'exact', methods: { GET: 'a:read' } },
    ],
  });
  const cases: [string, string | undefined][] = [
    ['/a/b', 'ab-exact'],
    // Issue 45: a trailing slash on an exact route's path is that route's (Express reads `/a/b/` as `/a/b`).
    ['/a/b/', 'ab-exact'],
    ['/a/b/c', 'abc-exact'],
    ['/a/b/c/', 'abc-exact'],
    ['/a/b/cd', 'ab'],
    ['/a/bc', 'a'],
    ['/a', 'a'],
    ['/ab', 'root'],
    ['/', 'root'],
    ['/x/y', 'root'],
    // The gateway's own paths are never a `/` subtree's.
    ['/auth', undefined],
    ['/auth/login', undefined],
    ['/.well-known/jwks.json', undefined],
    ['/console/', undefined],
    ['/authx', 'root'],
  ];
  for (const [path, id] of cases) t.equal(routeOf(table, path), id, `${path} → ${id ?? 'none'}`);
  // The most specific path decides: /a/b (exact) takes PUT only; GET there is a 405, never /a/b/*'s GET.
  t.notOk(table.match('/a/b')!.methods.has('GET'), 'no fall back to the subtree of the same path');
  t.notOk(table.match('/a/b/x')!.methods.has('DELETE'), 'no fall back to a shallower subtree');
  t.notOk(table.match('/x')!.methods.has('DELETE'));
});

t.test('nesting: a route asking less than the subtree it is in needs weakens: <that subtree>', async (t) => {
  const base = (inner: Partial<RoutesFile['routes'][number]>): RoutesFile => ({
    version: 1,
    scopes: { 'a:read': 'A' },
    routes: [
      { id: 'outer', path: '/a', match: 'subtree', credentials: ['login_token'], methods: { GET: 'a:read' } },
      { id: 'inner', path: '/a/b', match: 'exact', methods: { GET: 'a:read' }, ...inner },
    ],
  });
  t.match(errorsOf(base({})), [{ pointer: '/routes/1', message: /route inner \(\/a\/b\) is under route outer \(\/a\) and takes credentials it does not \(login_token, api_key against login_token\); if that is meant, add weakens: outer/ }]);
  t.same(errorsOf(base({ weakens: 'outer' })), []);
  t.same(errorsOf(base({ credentials: ['login_token'] })), [], 'asking the same is no weakening');
  t.match(errorsOf(base({ credentials: 'none', methods: { GET: 'public' } })), [{ pointer: '/routes/1' }]);
  t.same(errorsOf(base({ credentials: 'none', methods: { GET: 'public' }, weakens: 'outer' })), []);
  // An exact route at the subtree's own path sits in it: it may weaken it, on purpose.
  t.match(errorsOf(base({ path: '/a', credentials: 'none', methods: { GET: 'public' } })), [{ pointer: '/routes/1', message: /add weakens: outer/ }]);
  t.same(errorsOf(base({ path: '/a', credentials: 'none', methods: { GET: 'public' }, weakens: 'outer' })), [], 'and saying so is accepted');
  t.match(errorsOf(base({ path: '/b', weakens: 'outer' })), [{ pointer: '/routes/1/weakens', message: 'weakens names outer, which is no subtree route above /b' }]);
});

t.test('an upstream URL is never echoed in an error: it may carry a password', async (t) => {
  const file = (url: string): RoutesFile => ({ version: 1, upstreams: { reports: { url } }, scopes: { 'a:read': 'A' }, routes: [{ id: 'r', path: '/r', match: 'exact', upstream: 'reports', methods: { GET: 'a:read' } }] });
  for (const url of ['http://svc:hunter2-secret@reports.internal/', 'http://svc:hunter2-secret@[bad/', 'ftp://svc:hunter2-secret@reports.internal/']) {
    const errors = errorsOf(file(url));
    t.equal(errors.length, 1, url);
    t.equal(errors[0]!.pointer, '/upstreams/reports/url');
    t.notOk(JSON.stringify(errors).includes('hunter2'), 'no password in the error');
  }
});

t.test('a route naming an undeclared upstream is told so, whatever other upstream is wrong', async (t) => {
  // `rep` is no upstream; `reports` (whose name `rep` prefixes) has a bad URL of its own.
  const errors = errorsOf({ version: 1, upstreams: { reports: { url: 'nope' } }, scopes: { 'a:read': 'A' }, routes: [{ id: 'r', path: '/r', match: 'exact', upstream: 'rep', methods: { GET: 'a:read' } }] });
  t.same(errors.map((e) => e.pointer), ['/upstreams/reports/url', '/routes/0/upstream']);
});

t.test('several upstreams: base paths, timeouts, audiences; equal files hash equal whatever their key order', async (t) => {
  const file: RoutesFile = {
    version: 1,
    upstreams: { default: {}, reports: { url: 'http://reports.internal:8080/v2/', timeoutMs: 30_000 }, billing: { url: 'https://billing.internal', audience: 'urn:billing' } },
    scopes: { 'reports:read': 'R', 'billing:read': 'B' },
    routes: [
      { id: 'reports', path: '/v1/reports', match: 'subtree', upstream: 'reports', methods: { GET: 'reports:read' }, rateLimit: '60/1m' },
      { id: 'billing', path: '/billing', match: 'exact', upstream: 'billing', methods: { GET: 'billing:read' } },
    ],
  };
  const table = compiled(file);
  const reports = table.upstreams.get('reports')!;
  t.match(reports, { basePath: '/v2', origin: 'http://reports.internal:8080', host: 'reports.internal:8080', timeoutMs: 30_000, audience: 'http://reports.internal:8080' });
  t.match(table.upstreams.get('billing')!, { basePath: '', timeoutMs: 10_000, audience: 'urn:billing' });
  t.match(table.upstreams.get('default')!, { basePath: '/v1', origin: 'http://upstream.test:8000' });
  t.same(table.match('/v1/reports/7')!.rateLimit, { count: 60, windowSeconds: 60 });
  const same = compiled(JSON.parse(JSON.stringify({ routes: file.routes, version: 1, upstreams: file.upstreams, scopes: file.scopes })) as RoutesFile);
  t.equal(same.hash, table.hash, 'the same file with its keys in another order');
});
