import type { ProblemName } from '../problems.js';
import { Problem as ProblemSchema, problemOf } from './schemas.js';

/**
 * The problems a whole family of routes answers alike, in one place, so that a new route of the
 * family documents the same set (the numeric keys order themselves: the OpenAPI documents are as
 * if written out in each route).
 */

/** A public route open to any credential holding a scope: no or a bad credential (401), the scope missing (403, with the route's own refusals after it). */
export function scopedRouteProblems(...forbidden: readonly ProblemName[]) {
  return { 401: ProblemSchema, 403: problemOf('insufficientScope', ...forbidden) };
}

/** An admin route on one organization: no or a wrong admin token (401), an unknown organization (404, with the route's own not-found codes after it), the admin token's refusal limit (429). */
export function adminOrganizationProblems(...notFound: readonly ProblemName[]) {
  return { 401: ProblemSchema, 404: problemOf('organizationNotFound', ...notFound), 429: problemOf('tooManyAdminRefusals') };
}
