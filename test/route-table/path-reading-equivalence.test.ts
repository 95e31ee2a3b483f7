// The path reading made cheaper for the fast lane (route-table/path-reading.ts: match() without a
// reading object per request, a plain path read in one pass, the letter-case check as a loop; match.ts: isWithin without a string
// per call) decides every path as the reading before it did: over random paths (capitals, non-ASCII,
// `;`, `//`, `%`, `#`, dot segments, trailing slashes, the gateway's own prefixes) and several
// tables, read() gives what the previous code gave, and match() is read()'s route.
import t from 'tap';
import fc from 'fast-check';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes } from '../../src/route-table/compile.js';
import { createLookup, isWithin } from '../../src/route-table/match.js';
import { asksLess, foldedKey, hasFoldable } from '../../src/route-table/path-reading.js';
import type { CompiledRoute, PathRefusal, PathsSpec, RoutesFile, RouteTable } from '../../src/route-table/types.js';
import { PUBLIC_ROOT_ROUTES } from '../helpers/path-readings.js';

/** The reading as it was (path-reading.ts before the change): the route's id, `refused: <reason>`, or undefined. */
function previousReader(routes: readonly CompiledRoute[], paths: PathsSpec | undefined): (raw: string) => string | undefined {
  const asSent = createLookup(routes);
  const folded = createLookup(routes, foldedKey);
  const strip = paths?.parameters === 'strip';
  const merge = paths?.emptySegments === 'merge';
  const foldAlways = routes.some((route) => route.path !== foldedKey(route.path));
  const refused = (reason: PathRefusal) => `refused: ${reason}`;
  return (raw) => {
    const fragment = raw.indexOf('#');
    let path = fragment === -1 ? raw : raw.slice(0, fragment);
    if (path.includes('%')) {
      if (/%2f|%5c/i.test(path)) return undefined;
      try {
        path = decodeURIComponent(path);
      } catch {
        return undefined;
      }
    }
    if (path.includes(';')) {
      if (!strip) return refused('path_parameter');
      path = path.replace(/;[^/]*/g, '');
      if (/(?:^|\/)\.{1,2}(?:\/|$)/.test(path)) return refused('path_parameter');
    }
    if (path.includes('//')) {
      if (!merge) return refused('empty_path_segment');
      path = path.replace(/\/{2,}/g, '/');
    }
    const sent = asSent(path);
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const variant = /[A-Z]|[^\x00-\x7f]/.test(trimmed) ? trimmed.toLowerCase() : trimmed;
    if (variant === path && !foldAlways) return sent?.id;
    const other = folded(variant);
    if (other === undefined || other === sent) return sent?.id;
    if (sent !== undefined && asksLess(other.credentials, sent.credentials)) return refused('path_variant_weaker');
    return other.id;
  };
}

function tableOf(file: RoutesFile): RouteTable {
  const result = compileRoutes(file, { defaultUpstreamUrl: 'http://upstream.test', upstreamTimeoutMs: 10_000, defaultAudience: undefined, source: undefined });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.table;
}

const CAPITALS: RoutesFile = {
  version: 1,
  scopes: { 'reports:read': 'Read reports' },
  routes: [
    { id: 'site', path: '/', match: 'subtree', credentials: 'none', methods: { GET: 'public' } },
    { id: 'reports', path: '/Reports', match: 'subtree', methods: { GET: 'reports:read' } },
    { id: 'kelvin', path: '/k', match: 'exact', methods: { GET: 'reports:read' } },
  ],
};
const FILES: Record<string, RoutesFile> = {
  'public root': PUBLIC_ROOT_ROUTES,
  'public root, strip and merge': { ...PUBLIC_ROOT_ROUTES, paths: { parameters: 'strip', emptySegments: 'merge' } },
  'a route with capitals': CAPITALS,
  'the built-in table': BUILTIN_ROUTES_FILE,
};

const PIECES = ['/', '/', '/', 'admin', 'ADMIN', 'Admin', 'users', 'api', 'docs', 'DOCS', 'v1', 'invoices', 'accounts', 'organization', 'me', 'reports', 'Reports', 'k', 'K', '\u212a', 'é', 'ǅ', '..', '.', ';', ';x=1', '//', '%2f', '%2F', '%5c', '%61', '%3B', '%E2%84%AA', '%', '%zz', '#', '#frag', 'auth', '.well-known', 'console', 'authx', '?q=1'];
/** Any run of pieces: the odd spellings mixed anyhow. */
const pieces = fc.array(fc.constantFrom(...PIECES), { minLength: 0, maxLength: 8 }).map((parts) => `/${parts.join('')}`);
/** Segments of the tables' own paths, some spelt otherwise, joined by `/` (now and then `//`), a trailing slash or not. */
const SEGMENTS = ['admin', 'users', 'api', 'docs', 'v1', 'invoices', 'accounts', '7', 'organization', 'me', 'reports', 'Reports', 'k', 'auth', 'login', '.well-known', 'jwks.json', 'console', 'about', 'x'];
const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SEGMENTS) },
  { weight: 1, arbitrary: fc.constantFrom(...SEGMENTS).map((s) => s.toUpperCase()) },
  { weight: 1, arbitrary: fc.constantFrom(...SEGMENTS).map((s) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`) },
  { weight: 1, arbitrary: fc.constantFrom(...PIECES) },
);
const segmented = fc
  .tuple(fc.array(fc.tuple(segment, fc.constantFrom('/', '/', '/', '/', '//')), { minLength: 1, maxLength: 4 }), fc.boolean(), fc.constantFrom('', '', '#x', ';p'))
  .map(([parts, trailing, end]) => `${parts.map(([s, sep]) => `${sep}${s}`).join('')}${trailing ? '/' : ''}${end}`);
const paths = fc.oneof({ weight: 1, arbitrary: pieces }, { weight: 3, arbitrary: segmented });

t.test('read() decides every path as before, and match() is its route', async (t) => {
  for (const [name, file] of Object.entries(FILES)) {
    const table = tableOf(file);
    const previous = previousReader(table.routes, file.paths);
    const now = (path: string) => {
      const reading = table.read(path);
      return reading.refusal !== undefined ? `refused: ${reading.refusal}` : reading.route?.id;
    };
    fc.assert(
      fc.property(paths, (path) => {
        if (now(path) !== previous(path)) throw new Error(`${name}: ${JSON.stringify(path)} read ${String(now(path))}, before ${String(previous(path))}`);
        if (table.match(path) !== table.read(path).route) throw new Error(`${name}: ${JSON.stringify(path)}: match() is not read()'s route`);
      }),
      { numRuns: 10_000 },
    );
    t.pass(`${name}: 10,000 paths read as before, match() agreeing`);
  }
});

t.test('hasFoldable is /[A-Z]|[^\\x00-\\x7f]/, on every UTF-16 unit and on strings of them', async (t) => {
  const previous = /[A-Z]|[^\x00-\x7f]/;
  let differ = 0;
  for (let unit = 0; unit <= 0xffff; unit++) {
    const text = String.fromCharCode(unit);
    if (hasFoldable(text) !== previous.test(text) || hasFoldable(`/a/${text}/b`) !== previous.test(`/a/${text}/b`)) differ++;
  }
  t.equal(differ, 0, 'every one of the 65,536 units alike');
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => hasFoldable(text) === previous.test(text)), { numRuns: 5000 });
  t.equal(hasFoldable(''), false);
});

t.test('isWithin as before (the segment boundary without a string made per call)', async (t) => {
  const previous = (inner: string, outer: string) => outer === '/' || inner === outer || inner.startsWith(`${outer}/`);
  const segment = fc.constantFrom('/', '/a', '/auth', '/authx', '/auth/', '/auth/x', '/console', '/.well-known', '/.well-known/jwks.json', '', 'a', '/a/b', '//');
  fc.assert(fc.property(segment, segment, fc.string({ maxLength: 6 }), (a, b, c) => isWithin(a + c, b) === previous(a + c, b) && isWithin(b, a) === previous(b, a)), { numRuns: 5000 });
  t.pass('5,000 pairs alike');
});
