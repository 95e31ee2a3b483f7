import type { FastifyRequest } from 'fastify';
import type { CredentialRequirement } from '../config/forwarded-routes.js';
import { Problem } from '../problems.js';

/**
 * The route's requirement against request.principal. 'any' takes either credential kind;
 * 'login-token' (creating API keys, logging out) takes only a JWT from POST /auth/login.
 */
export function createAuthorize(requirement: Exclude<CredentialRequirement, 'none'>) {
  if (requirement === 'any') return undefined; // nothing to check: no hook at all
  return async function authorize(request: FastifyRequest): Promise<void> {
    if (request.principal?.via !== 'jwt') {
      throw new Problem('loginTokenRequired', 'This operation needs a login token from POST /auth/login, not an API key.', 'login_token_required');
    }
  };
}
