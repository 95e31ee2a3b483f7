import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { compileRoutes } from '../../src/route-table/compile.js';
import { createLiveRouteTable, type LiveRouteTable } from '../../src/route-table/live.js';
import type { RouteTable, RoutesFile } from '../../src/route-table/types.js';

/** A routes file compiled as the gateway would (upstream on loopback); throws on a bad file. */
export function compiledTable(file: RoutesFile = BUILTIN_ROUTES_FILE): RouteTable {
  const compiled = compileRoutes(file, { defaultUpstreamUrl: 'http://127.0.0.1:9', upstreamTimeoutMs: 5000, defaultAudience: undefined, source: undefined });
  if (!compiled.ok) throw new Error(`the test's routes file does not compile: ${JSON.stringify(compiled.errors)}`);
  return compiled.table;
}

/** The built-in file with other scopes (in this order) and a route using each, as an operator's file would. */
export function fileWithScopes(scopes: Readonly<Record<string, string>>): RoutesFile {
  const names = Object.keys(scopes);
  return {
    ...BUILTIN_ROUTES_FILE,
    scopes,
    routes: names.map((name, i) => ({ id: `r${i}`, path: `/r${i}`, match: 'exact' as const, methods: { GET: name } })),
  };
}

export function liveTable(file?: RoutesFile): LiveRouteTable {
  return createLiveRouteTable(compiledTable(file));
}
