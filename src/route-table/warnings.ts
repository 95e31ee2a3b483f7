/**
 * What `authgate routes check` warns of (issue 45): a file the gateway takes, whose shape still
 * lets a path mean one thing here and another upstream.
 * - A route inside a subtree that asks less (a public `/` around a credentialed `/admin`): the
 *   spellings of /admin authgate knows are decided by /admin (path-reading.ts), but a reading of
 *   some upstream's that it does not know (a suffix pattern, a trimmed character) falls to the
 *   weaker route. Failing closed takes a default that asks more, with public exceptions.
 * - A route that asks less than the subtree around it (`weakens`): its spellings in another
 *   letter case or with a trailing slash are refused, since a case-sensitive upstream reads them
 *   as the stronger route's paths; clients must spell it exactly.
 * Warnings never fail the check; they are pointed at the route as errors are.
 */
import { isWithin } from './match.js';
import { asksLess } from './path-reading.js';
import { describeCredentials as describe } from './compile.js';
import type { CompiledRoute, RouteFileError, RoutesFile, RouteTable } from './types.js';

export function routeWarnings(table: RouteTable, file: RoutesFile): RouteFileError[] {
  const warnings: RouteFileError[] = [];
  const pointerOf = (route: CompiledRoute) => `/routes/${file.routes.findIndex((spec) => spec.id === route.id)}`;
  for (const inner of table.routes) {
    const outer = enclosing(table.routes, inner);
    if (outer === undefined) continue;
    const names = `route ${inner.id} (${inner.match} ${inner.path}) sits in route ${outer.id} (${outer.match} ${outer.path})`;
    if (asksLess(outer.credentials, inner.credentials)) {
      warnings.push({
        pointer: pointerOf(inner),
        message: `warning: ${names}, which asks less (${describe(outer.credentials)} against ${describe(inner.credentials)}): the spellings of ${inner.path} authgate knows are ${inner.id}'s or refused, but one an upstream reads as ${inner.path} in a way authgate does not know would be ${outer.id}'s; a default that asks more, with public routes as exceptions, fails closed`,
      });
    } else if (asksLess(inner.credentials, outer.credentials)) {
      const spellings = variantsOf(inner).filter((path) => table.read(path).refusal === 'path_variant_weaker');
      if (spellings.length === 0) continue;
      warnings.push({
        pointer: pointerOf(inner),
        message: `warning: ${names} and asks less: ${spellings.join(', ')} and other spellings in another letter case${inner.match === 'exact' ? ' or with a trailing slash' : ''} are refused (400, 1240), as a case-sensitive upstream reads them as ${outer.id}'s; clients must spell ${inner.path} exactly`,
      });
    }
  }
  return warnings;
}

/** The nearest subtree around a route (its parent, as compile.ts's nesting check finds it). */
function enclosing(routes: readonly CompiledRoute[], inner: CompiledRoute): CompiledRoute | undefined {
  let parent: CompiledRoute | undefined;
  for (const outer of routes) {
    if (outer === inner || outer.match !== 'subtree' || !isWithin(inner.path, outer.path)) continue;
    if (inner.path === outer.path && inner.match === 'subtree') continue;
    if (parent === undefined || outer.path.length > parent.path.length) parent = outer;
  }
  return parent;
}

/** The route's path with its last segment in upper case, and with a trailing slash if exact. */
function variantsOf(route: CompiledRoute): string[] {
  const cut = route.path.lastIndexOf('/');
  const upper = route.path.slice(0, cut + 1) + route.path.slice(cut + 1).toUpperCase();
  return [upper, ...(route.match === 'exact' ? [`${route.path}/`] : [])].filter((path) => path !== route.path);
}
