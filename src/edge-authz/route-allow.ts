import { METHOD_ORDER } from '../request/refusals.js';
import type { CompiledRoute } from '../route-table/types.js';

const rank = (method: string) => (METHOD_ORDER.indexOf(method) + 1 || METHOD_ORDER.length + 1);
const made = new WeakMap<CompiledRoute, string>();

/** A route's Allow in the public port's order (request/refusals.ts allowedMethods), made once per route: the decider's 405. */
export function allowOf(route: CompiledRoute): string {
  let allow = made.get(route);
  if (allow === undefined) {
    allow = [...route.methods.keys()].sort((a, b) => rank(a) - rank(b)).join(', ');
    made.set(route, allow);
  }
  return allow;
}
