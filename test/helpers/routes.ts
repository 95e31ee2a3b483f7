import { compileRoutes } from '../../src/route-table/compile.js';
import type { RoutesFile, RouteTable } from '../../src/route-table/types.js';

/**
 * A route table compiled in-process, handed to a gateway through GatewayDeps.routes: the tests of
 * several upstreams, public routes and precedence need no routes file.
 */
export function tableOf(file: RoutesFile, upstreamUrl: string, options: { timeoutMs?: number; audience?: string } = {}): RouteTable {
  const compiled = compileRoutes(file, { defaultUpstreamUrl: upstreamUrl, upstreamTimeoutMs: options.timeoutMs ?? 30_000, defaultAudience: options.audience, source: undefined });
  if (!compiled.ok) throw new Error(`the test's table does not compile: ${JSON.stringify(compiled.errors)}`);
  return compiled.table;
}
