/**
 * How a request's path is read before a route decides it, in one place for every request path:
 * the public port's framework hook and fast lane (proxy/forward.ts, proxy/fast-path.ts), the
 * authorization port's HTTP endpoints and gRPC check (edge-authz/decider.ts), `routes explain`.
 *
 * The rule (issue 45): a request whose path a common server would read as a route's path is never
 * decided by a weaker route. Servers read one path in several ways authgate's lookup (match.ts)
 * does not: Tomcat, Jetty and Spring drop `;` path parameters (`/admin;x/users` is
 * `/admin/users`, `/accounts/..;/organization/me` is `/organization/me`); nginx's merge_slashes
 * and Tomcat merge empty segments (`//admin/users`); Express's default routing ignores a trailing
 * slash (`/v1/invoices/`) and letter case (`/ADMIN/users`), as ASP.NET Core does case. Under a
 * public `/` subtree each of those was the public route's here and `/admin`'s upstream. So:
 * - a `;` or an empty segment is refused (400, 1240) unless the routes file says every upstream
 *   reads it so (`paths.parameters: strip`, `paths.emptySegments: merge`): then the path is
 *   matched as that reading (and a dot segment it makes is refused), forwarded as sent;
 * - a letter-case or trailing-slash spelling of a declared path is decided by that route: the
 *   path is looked up as sent and lower-cased without its trailing slash; where the two readings
 *   differ, the folded one (always the more specific route) decides, unless it asks less than the
 *   route of the path as sent (a case-sensitive upstream may read it as that one): then refused.
 */
import { Problem } from '../problems.js';
import { createLookup, type RouteLookup } from './match.js';
import type { CompiledRoute, PathReading, PathRefusal, PathsSpec, RouteCredentials } from './types.js';

export type PathReader = (path: string) => PathReading;

const ENCODED_SEPARATOR = /%2f|%5c/i;
const PARAMETER = /;[^/]*/g;
const EMPTY_SEGMENTS = /\/{2,}/g;
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/**
 * A capital, or any character beyond ASCII (its lower case may be an ASCII letter: the Kelvin sign
 * is `k`): /[A-Z]|[^\x00-\x7f]/ by UTF-16 unit, as a loop, which is cheaper for the short path of
 * every request (the warm API-key path's profile: the reading cost 2.8× the lookup it replaced).
 */
export function hasFoldable(path: string): boolean {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 0x7f) return true;
  }
  return false;
}

/**
 * A path that every step of the reading below leaves as it is, so its reading is the route of the
 * path as sent: no `#`, `%`, `;` or `//`, no trailing slash (but `/` itself), nothing foldable
 * (hasFoldable). One pass, where the steps make four scans and a lookup more.
 */
export function isPlain(path: string): boolean {
  let previous = 0;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    // '#' 35, '%' 37, ';' 59, a second '/' 47 in a row, 'A'–'Z', beyond ASCII.
    if (c === 35 || c === 37 || c === 59 || (c === 47 && previous === 47) || (c >= 65 && c <= 90) || c > 0x7f) return false;
    previous = c;
  }
  return path.length <= 1 || previous !== 47;
}

const NOTHING: PathReading = {};
const REFUSED: Readonly<Record<PathRefusal, PathReading>> = {
  path_parameter: { refusal: 'path_parameter' },
  empty_path_segment: { refusal: 'empty_path_segment' },
  path_variant_weaker: { refusal: 'path_variant_weaker' },
};

/** A route path's key in the folded lookup: lower case (a path in a file has no trailing slash). */
export function foldedKey(path: string): string {
  return path.toLowerCase();
}

/**
 * The table's two ways to ask: `read`, the route or why none may decide (the refusal's answer),
 * and `match`, the route alone (undefined also for a refused path), for the fast lane, which
 * hands anything without a route to the framework: the same reading, without a reading object
 * to find per request.
 */
export type PathReaders = Readonly<{ read: PathReader; match: RouteLookup }>;

export function createPathReader(routes: readonly CompiledRoute[], paths: PathsSpec | undefined): PathReaders {
  const asSent = createLookup(routes);
  const folded = createLookup(routes, foldedKey);
  const strip = paths?.parameters === 'strip';
  const merge = paths?.emptySegments === 'merge';
  // A route declared with capitals (`/Reports`) is found by its folded key only: then every path is folded.
  const foldAlways = routes.some((route) => route.path !== foldedKey(route.path));
  const readings = new WeakMap<CompiledRoute, PathReading>();

  /** The route that decides `raw`, the refusal, or undefined for none. */
  function decide(raw: string): CompiledRoute | PathRefusal | undefined {
    // Nearly every path is plain (isPlain): then it is read as sent, by one pass and one lookup.
    if (!foldAlways && isPlain(raw)) return asSent(raw);
    // A fragment is no part of the path (a client should never send one; fastify's router and the
    // upstream's parser both cut it off): `/admin#x` is /admin, never a broader route's.
    const fragment = raw.indexOf('#');
    let path = fragment === -1 ? raw : raw.slice(0, fragment);
    // A percent-encoded character reads as itself (decoded once, as an upstream reads it): `/%61dmin`
    // is `/admin`. An encoded separator, or what does not decode, is the path guard's to refuse:
    // it matches nothing here, whoever calls.
    if (path.includes('%')) {
      if (ENCODED_SEPARATOR.test(path)) return undefined;
      try {
        path = decodeURIComponent(path);
      } catch {
        return undefined;
      }
    }
    if (path.includes(';')) {
      if (!strip) return 'path_parameter';
      path = path.replace(PARAMETER, '');
      // `..;` is `..` to a server that drops parameters: the path guard's dot segment, refused too.
      if (DOT_SEGMENT.test(path)) return 'path_parameter';
    }
    if (path.includes('//')) {
      if (!merge) return 'empty_path_segment';
      path = path.replace(EMPTY_SEGMENTS, '/');
    }
    const sent = asSent(path);
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const variant = hasFoldable(trimmed) ? trimmed.toLowerCase() : trimmed;
    if (variant === path && !foldAlways) return sent;
    const other = folded(variant);
    if (other === undefined || other === sent) return sent;
    if (sent !== undefined && asksLess(other.credentials, sent.credentials)) return 'path_variant_weaker';
    return other;
  }

  return {
    read(raw) {
      const decided = decide(raw);
      if (decided === undefined) return NOTHING;
      if (typeof decided === 'string') return REFUSED[decided];
      let reading = readings.get(decided);
      if (reading === undefined) readings.set(decided, (reading = { route: decided }));
      return reading;
    },
    match(raw) {
      const decided = decide(raw);
      return typeof decided === 'string' ? undefined : decided;
    },
  };
}

/** Whether `inner` lets in a credential `outer` would not (a public route asks less than any other). */
export function asksLess(inner: RouteCredentials, outer: RouteCredentials): boolean {
  if (outer.kind === 'none') return false;
  if (inner.kind === 'none') return true;
  if ((inner.loginToken && !outer.loginToken) || (inner.apiKey && !outer.apiKey)) return true;
  // An issuer's tokens (issue 49) are a credential of their own: taking one the outer route does not is asking less.
  for (const name of inner.issuers) if (!outer.issuers.has(name)) return true;
  return false;
}

const DETAILS: Readonly<Record<PathRefusal, string>> = {
  path_parameter: 'The path holds a ";" parameter, which some servers drop before routing: it is not forwarded (see the routes file\'s paths.parameters).',
  empty_path_segment: 'The path holds an empty segment ("//"), which some servers merge: it is not forwarded (see the routes file\'s paths.emptySegments).',
  path_variant_weaker: 'Another spelling of this path (letter case, a trailing slash) is a route that asks less than the route of the path as sent: it is not forwarded.',
};

/** The answer to a refused path, the same on every port (never echoing the path). */
export function pathRefusalProblem(refusal: PathRefusal): Problem {
  return new Problem('ambiguousPath', DETAILS[refusal], refusal);
}
