import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { CredentialRequirement } from '../config/forwarded-routes.js';
import { Problem } from '../problems.js';
import { BUILTIN_SCOPE_TABLE } from '../route-table/builtin.js';
import type { Scope } from './scopes.js';

export type AuthorizeHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * The route's requirement against request.principal, after authentication:
 * - 'login-token' (creating and rolling API keys, logging out) takes only a JWT from
 *   POST /auth/login, which holds every scope;
 * - 'any' takes either credential kind holding the route's scope: without it, 403 with code
 *   1106 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1).
 * A callback hook, not an async one: on every forwarded request it is one AND, and a promise
 * would cost more than the check.
 */
export function createAuthorize(requirement: Exclude<CredentialRequirement, 'none'>, scope: Scope | undefined): AuthorizeHook {
  if (requirement === 'login-token') {
    return function authorizeLoginToken(request, _reply, done) {
      if (request.principal?.via === 'jwt') return done();
      done(new Problem('loginTokenRequired', 'This operation needs a login token from POST /auth/login, not an API key.', 'login_token_required'));
    };
  }
  if (scope === undefined) throw new Error('a route open to API keys must name its scope');
  // The gateway's own keys:* by name (every table declares them); a forwarded route's through its table's rule.
  const rule = BUILTIN_SCOPE_TABLE.rule(scope);
  const detail = `This operation needs the scope ${scope}.`;
  return function authorizeScope(request, _reply, done) {
    const principal = request.principal;
    if (principal !== null && principal.scopes.holds(rule)) return done();
    done(new Problem('insufficientScope', detail, 'insufficient_scope', undefined, scope));
  };
}
