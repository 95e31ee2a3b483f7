/**
 * The route of a path, by structure alone (issue 28; ../shared/research/routes.md §4): an exact
 * route on the whole path first; then the deepest subtree whose path is the request's path or
 * one of its ancestors by segments (so `/accounts` holds `/accounts`, `/accounts/`, `/accounts/1`
 * and never `/accountsX`). This is the lookup only: which spellings of a path are read, refused
 * or folded before it (letter case, a trailing slash, `;` parameters, `//`) is path-reading.ts's.
 *
 * Cost: one Map lookup per segment of the request's path at most, whatever the number of routes
 * (a 50-route table costs what a 2-route one does; the bench's `routes50` scenario).
 */
import { RESERVED_PREFIXES, type CompiledRoute } from './types.js';

export type RouteLookup = (path: string) => CompiledRoute | undefined;

/**
 * Whether `inner` is `outer` or below it by segments: `outer` then a `/`, read in place (no
 * `${outer}/` string per call: every request under a `/` subtree asks it of each reserved prefix).
 */
export function isWithin(inner: string, outer: string): boolean {
  return outer === '/' || inner === outer || (inner.length > outer.length && inner.charCodeAt(outer.length) === 47 && inner.startsWith(outer));
}

/**
 * `keyOf` turns a route's path into the key a path is looked up by: as written (the path as
 * sent), or lower-cased (its case-folded reading; compile.ts refuses two routes that fold alike).
 */
export function createLookup(routes: readonly CompiledRoute[], keyOf: (path: string) => string = (path) => path): RouteLookup {
  const exact = new Map<string, CompiledRoute>();
  const subtrees = new Map<string, CompiledRoute>();
  for (const route of routes) (route.match === 'exact' ? exact : subtrees).set(keyOf(route.path), route);
  const root = subtrees.get('/');
  return function lookup(path: string): CompiledRoute | undefined {
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
