import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Principal } from '../credentials/principal.js';
import type { CredentialRequirement } from '../request/request-context.js';
import { Problem } from '../problems.js';
import { planAllows } from '../route-table/plans.js';
import type { CompiledPlan, CompiledRoute, RouteCredentials } from '../route-table/types.js';
import type { ScopeRule } from './scopes.js';

export type AuthorizeHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * The route's requirement against request.principal, after authentication, on the gateway's own routes:
 * - 'login-token' (creating and rolling API keys, logging out) takes only a JWT from
 *   POST /auth/login, which holds every scope;
 * - 'any' takes either credential kind holding the route's scope: without it, 403 with code
 *   1106 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1).
 * The gateway's own scopes (keys:*) are built into every route table, so they are checked by
 * name; the forwarded routes are checked by their table's rule (routeRefusal below).
 */
export function createAuthorize(requirement: Exclude<CredentialRequirement, 'none' | 'route-table'>, scope: string | undefined): AuthorizeHook {
  if (requirement === 'login-token') {
    return function authorizeLoginToken(request, _reply, done) {
      if (request.principal?.via === 'jwt') return done();
      done(loginTokenRequired());
    };
  }
  if (scope === undefined) throw new Error('a route open to API keys must name its scope');
  const detail = `This operation needs the scope ${scope}.`;
  return function authorizeScope(request, _reply, done) {
    const principal = request.principal;
    if (principal !== null && principal.scopes.holdsName(scope)) return done();
    done(new Problem('insufficientScope', detail, 'insufficient_scope', undefined, scope));
  };
}

/** Whether a credentialed route takes this principal's kind of credential (and, for a provider token, its issuer). */
export function takesCredential(credentials: Extract<RouteCredentials, { kind: 'bearer' }>, principal: Principal): boolean {
  switch (principal.via) {
    case 'jwt':
      return credentials.loginToken;
    case 'api_key':
      return credentials.apiKey;
    case 'issuer_token':
      return credentials.issuers.has(principal.issuer!);
  }
}

const loginTokenRequired = () => new Problem('loginTokenRequired', 'This operation needs a login token from POST /auth/login, not an API key.', 'login_token_required');

/**
 * Why a credentialed route of the table refuses an authenticated principal for a method whose
 * scope is `rule`, or undefined when it may go on: the route's credential kinds first (a login
 * token where only those are taken: 403 1103; an API key alone where a login token is not taken:
 * 403 1106 naming the scope), then the scope, one AND, and the organization's plan (`plan`, from
 * plans/organization-plans.ts planOf; undefined: no plan), one more: what a credential holds is
 * its own scopes within its plan's (issue 47). Both request paths and the authorization port ask
 * it (the fast lane hands a refusal to the framework, which answers it).
 */
export function routeRefusal(route: CompiledRoute, rule: ScopeRule | null, principal: Principal, plan: CompiledPlan | undefined): Problem | undefined {
  const credentials = route.credentials;
  if (credentials.kind === 'none' || rule === null) return undefined;
  if (principal.via === 'issuer_token') {
    if (!takesCredential(credentials, principal)) return new Problem('issuerNotAccepted', 'This route does not take tokens of this issuer.', 'issuer_not_accepted');
  } else if (!takesCredential(credentials, principal)) {
    if (!credentials.apiKey) return loginTokenRequired();
    return new Problem('insufficientScope', `This route takes API keys only (with the scope ${rule.name}), not a login token.`, 'insufficient_scope', undefined, rule.name);
  }
  if (principal.scopes.holds(rule)) {
    if (planAllows(plan, rule)) return undefined;
    return new Problem('insufficientScope', `This operation needs the scope ${rule.name}, which the organization's plan (${plan!.name}) does not include.`, 'insufficient_scope', undefined, rule.name);
  }
  return new Problem('insufficientScope', `This operation needs the scope ${rule.name}.`, 'insufficient_scope', undefined, rule.name);
}
