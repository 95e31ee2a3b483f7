/**
 * Method-override headers (issue 45): many upstream frameworks (Express's method-override,
 * Rails/Rack, Laravel, ASP.NET's X-HTTP-Method-Override filter, OData's X-HTTP-Method) serve a
 * POST or GET as the method one of these headers names. A request is decided on its own method
 * and on every method its override headers name: each must be one its route forwards, and the
 * credential must satisfy each method's scope. Both ports ask this one function (the public
 * port's framework path and fast lane, and the authorization port's decider), so a key holding
 * only `accounts:read` never gets `GET /accounts/7` with `X-HTTP-Method-Override: DELETE` past
 * either. A checked override is forwarded as it is: the upstream may act on it, and may.
 */
import type { Principal } from '../credentials/principal.js';
import { Problem } from '../problems.js';
import type { CompiledPlan, CompiledRoute } from '../route-table/types.js';
import { routeRefusal } from './authorize.js';

/** The names upstream frameworks read (lower case, node's way). */
export const METHOD_OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;

/** Headers by lower-case name, as node (and the authorization port's readers) hold them. */
export type OverrideHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** An HTTP method is a token (RFC 9110 §9.1); frameworks upper-case the override's value. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Whether the request carries any override header: three lookups, the common answer no. */
export function hasMethodOverride(headers: OverrideHeaders): boolean {
  return headers['x-http-method-override'] !== undefined || headers['x-http-method'] !== undefined || headers['x-method-override'] !== undefined;
}

const refused = (detail: string) => new Problem('methodOverrideRefused', detail, 'method_override');

/**
 * Why the route refuses the methods the request's override headers name, or undefined when there
 * are none or each may go on: a value that is not one method (a repeated header is two, joined
 * by node), or a method the route does not forward, is 400 (1235); a method whose scope the
 * principal lacks is the route's own refusal (403, routeRefusal). `principal` is null on a public
 * route, which reads no credential (its methods have no scope). `plan`: the organization's (issue
 * 47), which each method's scope must be within too.
 */
export function methodOverrideRefusal(route: CompiledRoute, headers: OverrideHeaders, principal: Principal | null, plan?: CompiledPlan): Problem | undefined {
  if (!hasMethodOverride(headers)) return undefined;
  for (const name of METHOD_OVERRIDE_HEADERS) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !TOKEN.test(value)) return refused(`${name} must name one HTTP method.`);
    const rule = route.methods.get(value.toUpperCase());
    if (rule === undefined) return refused(`${name} names a method this path does not take; see the route's methods.`);
    if (principal !== null) {
      const refusal = routeRefusal(route, rule, principal, plan);
      if (refusal !== undefined) return refusal;
    }
  }
  return undefined;
}
