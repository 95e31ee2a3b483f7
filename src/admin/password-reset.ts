import type { FastifyInstance } from 'fastify';
import type { AuditTrail } from '../audit/trail.js';
import type { Logger } from '../observability/logging.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import { IdParams, PasswordResetIssued, Problem as ProblemSchema, problemOf } from '../routes/schemas.js';

/**
 * POST /admin/organizations/:id/password-reset (issue 31): the admin API never sets or learns a
 * password; it hands out a one-time reset token the organization uses on the public port.
 * Registered by adminRoutes, behind its admin-token check.
 */
export function passwordResetRoute(
  app: FastifyInstance,
  opts: { passwords: PasswordChangeService; trail: AuditTrail; audit: Logger; admin: (request: { ip?: string | undefined }) => { actor: 'admin'; network: string | undefined } },
): void {
  const { passwords, trail, audit, admin } = opts;
  app.post<{ Params: IdParams }>('/admin/organizations/:id/password-reset', {
    schema: {
      operationId: 'resetOrganizationPassword',
      tags: ['organizations'],
      summary: 'End every login session of an organization and issue a one-time password-reset token.',
      description:
        'The answer carries the reset token (`agr_…`, 128 random bits) once: the gateway keeps only its SHA-256. The organization sets a new password with it at POST /auth/password/reset on the public port, once, before `expiresAt` (AUTHGATE_PASSWORD_RESET_TTL_SECONDS, 24 hours by default). Every login session ends now, on every replica; the current password keeps working until the token is used. A newer token makes an earlier one worthless. API keys are not revoked. Audited as `password.reset_issued`, never with the token.',
      params: IdParams,
      response: { 200: PasswordResetIssued, 401: ProblemSchema, 404: problemOf('organizationNotFound'), 429: problemOf('tooManyAdminRefusals') },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      const { resetToken, expiresAt, sessionsEnded } = await passwords.issueReset(orgId);
      audit.info({ event: 'password.reset_issued', orgId, sessionsEnded, expiresAt }, 'password reset issued');
      trail.record({ type: 'password.reset_issued', orgId, ...admin(request), details: { sessionsEnded, expiresAt } });
      return reply.header('cache-control', 'no-store').send({ resetToken, expiresAt });
    },
  });
}
