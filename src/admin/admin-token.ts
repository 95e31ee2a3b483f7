import type { FastifyRequest } from 'fastify';
import { readBearer } from '../credentials/bearer.js';
import { secretsEqual } from '../credentials/digest.js';
import { Problem } from '../problems.js';

/** The admin API's only credential: AUTHGATE_ADMIN_TOKEN, compared in constant time. */
export function createAdminTokenCheck(adminToken: string) {
  return async function checkAdminToken(request: FastifyRequest): Promise<void> {
    const bearer = readBearer(request.headers.authorization, request.raw.rawHeaders);
    if (!bearer.ok || !secretsEqual(bearer.token, adminToken)) {
      throw new Problem('adminTokenInvalid', 'Send Authorization: Bearer <AUTHGATE_ADMIN_TOKEN>.', bearer.ok ? 'bad_admin_token' : bearer.reason);
    }
  };
}
