import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes } from '../../src/route-table/compile.js';
import { createLiveRouteTable, type LiveRouteTable } from '../../src/route-table/live.js';
import type { RouteTable, RoutesFile } from '../../src/route-table/types.js';

/** A routes file compiled as the gateway would (its `default` upstream `upstreamUrl`); throws on a bad file. */
export function compiledTable(file: RoutesFile = BUILTIN_ROUTES_FILE, upstreamUrl = 'http://127.0.0.1:9'): RouteTable {
  const compiled = compileRoutes(file, { defaultUpstreamUrl: upstreamUrl, upstreamTimeoutMs: 5000, defaultAudience: undefined, source: undefined });
  if (!compiled.ok) throw new Error(`the test's routes file does not compile: ${JSON.stringify(compiled.errors)}`);
  return compiled.table;
}

/**
 * The built-in file (its routes and scopes kept) with more scopes, in this order, and a route
 * using each, as an operator's file would; `without` drops built-in file scopes (and their routes).
 */
export function fileWithScopes(scopes: Readonly<Record<string, string>>, without: readonly string[] = []): RoutesFile {
  const kept = Object.entries(BUILTIN_ROUTES_FILE.scopes ?? {}).filter(([name]) => !without.includes(name));
  const builtinRoutes = BUILTIN_ROUTES_FILE.routes.filter((route) => Object.values(route.methods).every((scope) => !without.includes(scope)));
  return {
    ...BUILTIN_ROUTES_FILE,
    scopes: { ...Object.fromEntries(kept), ...scopes },
    routes: [...builtinRoutes, ...Object.keys(scopes).map((name, i) => ({ id: `r${i}`, path: `/r${i}`, match: 'exact' as const, methods: { GET: name } }))],
  };
}

export function liveTable(file?: RoutesFile): LiveRouteTable {
  return createLiveRouteTable(compiledTable(file));
}
