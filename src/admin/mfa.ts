import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AuditTrail } from '../audit/trail.js';
import type { Logger } from '../observability/logging.js';
import type { MfaService } from '../services/mfa.js';
import { MfaStatusSchema } from '../routes/mfa-schemas.js';
import { adminOrganizationProblems } from '../routes/problem-sets.js';
import { IdParams } from '../routes/schemas.js';

const MfaRemoved = Type.Object({
  removed: Type.Boolean({ description: 'false when the organization had no factor (nothing changed, no session ended).' }),
  sessionsEnded: Type.Integer(),
});

/**
 * GET and DELETE /admin/organizations/:id/mfa (issue 32): the operator sees whether an
 * organization has a second factor and removes it for one that lost every factor and its
 * recovery codes (audited, every login session ended). The admin API never sees a secret.
 * Registered by adminRoutes, behind its admin-token check.
 */
export function adminMfaRoutes(
  app: FastifyInstance,
  opts: { mfa: MfaService; trail: AuditTrail; audit: Logger; admin: (request: { ip?: string | undefined }) => { actor: 'admin'; network: string | undefined } },
): void {
  const { mfa, trail, audit, admin } = opts;
  app.get<{ Params: IdParams }>('/admin/organizations/:id/mfa', {
    schema: {
      operationId: 'getOrganizationMfa',
      tags: ['organizations'],
      summary: 'Whether an organization has a second factor (never its secret).',
      params: IdParams,
      response: { 200: MfaStatusSchema, ...adminOrganizationProblems() },
    },
    handler: async (request, reply) => {
      await mfa.requireOrganization(request.params.id);
      return reply.header('cache-control', 'no-store').send(await mfa.status(request.params.id));
    },
  });
  app.delete<{ Params: IdParams }>('/admin/organizations/:id/mfa', {
    schema: {
      operationId: 'removeOrganizationMfa',
      tags: ['organizations'],
      summary: 'Remove an organization\'s second factor and its recovery codes; every login session ends.',
      description: 'For an organization that lost every factor and its recovery codes: afterwards its password alone logs in. Every login session ends, on every replica; API keys stay. Audited as `mfa.removed`.',
      params: IdParams,
      response: { 200: MfaRemoved, ...adminOrganizationProblems() },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      const outcome = await mfa.removeByOperator(orgId);
      if (outcome.removed) {
        audit.info({ event: 'mfa.removed', orgId, sessionsEnded: outcome.sessionsEnded }, 'second factor removed by the operator');
        trail.record({ type: 'mfa.removed', orgId, ...admin(request), details: { sessionsEnded: outcome.sessionsEnded } });
      }
      return reply.send(outcome);
    },
  });
}
