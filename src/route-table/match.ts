/**
 * The route of a path, by structure alone (issue 28; ../shared/research/routes.md §4): an exact
 * route on the whole path first; then the deepest subtree whose path is the request's path or
 * one of its ancestors by segments (so `/accounts` holds `/accounts`, `/accounts/`, `/accounts/1`
 * and never `/accountsX`). Characters compare as they are, case-sensitive, percent-escapes decoded
 * once; the path guard has already refused anything a server might read two ways (encoded
 * separators, dot segments, double encoding), so nothing here normalises.
 *
 * Cost: one Map lookup per segment of the request's path at most, whatever the number of routes
 * (a 50-route table costs what a 2-route one does; the bench's `routes50` scenario).
 */
import { RESERVED_PREFIXES, type CompiledRoute } from './types.js';

const ENCODED_SEPARATOR = /%2f|%5c/i;

export type RouteMatcher = (path: string) => CompiledRoute | undefined;

/** Whether `inner` is `outer` or below it by segments. */
export function isWithin(inner: string, outer: string): boolean {
  return outer === '/' || inner === outer || inner.startsWith(`${outer}/`);
}

export function createMatcher(routes: readonly CompiledRoute[]): RouteMatcher {
  const exact = new Map<string, CompiledRoute>();
  const subtrees = new Map<string, CompiledRoute>();
  for (const route of routes) (route.match === 'exact' ? exact : subtrees).set(route.path, route);
  const root = subtrees.get('/');
  return function match(raw: string): CompiledRoute | undefined {
    // A percent-encoded character matches as itself (decoded once, as fastify's router did and as
    // an upstream reads it): `/%61dmin` is `/admin`, never a miss that a broader route (a public
    // `/` subtree) would take while the upstream serves /admin. The path guard has refused what
    // decodes to a separator or a dot segment; what does not decode matches nothing.
    // A fragment is no part of the path (a client should never send one; fastify's router and the
    // upstream's parser both cut it off): `/admin#x` is /admin, never a broader route's.
    const fragment = raw.indexOf('#');
    let path = fragment === -1 ? raw : raw.slice(0, fragment);
    if (path.includes('%')) {
      // An encoded separator is the path guard's to refuse; here too it matches nothing, whoever calls.
      if (ENCODED_SEPARATOR.test(path)) return undefined;
      try {
        path = decodeURIComponent(path);
      } catch {
        return undefined;
      }
    }
    const found = exact.get(path);
    if (found !== undefined) return found;
    if (subtrees.size === 0) return undefined;
    // The path itself, then each ancestor: cut at the last '/', deepest first.
    let end = path.length;
    while (end > 1) {
      const candidate = end === path.length ? path : path.slice(0, end);
      const route = subtrees.get(candidate);
      if (route !== undefined) return route;
      end = path.lastIndexOf('/', end - 1);
      if (end <= 0) break;
    }
    // A `/` subtree holds every path but the gateway's own (fastify's routes answer those).
    return root !== undefined && RESERVED_PREFIXES.some((prefix) => isWithin(path, prefix)) ? undefined : root;
  };
}
