import type { FastifyInstance } from 'fastify';
import { Problem as ProblemSchema } from './schemas.js';
import type { UsageReports } from '../services/usage-report.js';

/** The query both usage routes take (checked by services/usage-report.ts: every bad one a 400). */
export const USAGE_QUERY_DESCRIPTION =
  'Query: `granularity` hour|day (default day), `from` and `to` UTC dates or times (default: the last 30 days, or 24 hours), `keyId` one of the organization\'s keys. Days are kept 90 days, hours 7. Each bucket counts the forwarded requests by outcome: admitted, credential, scope, rate_limit, quota. `quota`: this period\'s quota under the plan (used includes what replicas leased ahead, at most a slice each), null without one.';

/**
 * GET /auth/usage (issue 47): the caller's organization's usage figures and quota. A login token,
 * or an API key with keys:read (what lists the keys the figures are by). no-store: a live count.
 */
export async function usageRoutes(app: FastifyInstance, opts: { usage: UsageReports }) {
  app.get<{ Querystring: Record<string, unknown> }>('/auth/usage', {
    config: { auth: 'any', scope: 'keys:read', routeLabel: '/auth/usage' },
    schema: {
      operationId: 'readUsage',
      tags: ['auth'],
      summary: 'The organization\'s requests by hour or day and outcome, and this period\'s quota.',
      description: USAGE_QUERY_DESCRIPTION,
      response: { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema },
    },
    handler: async (request, reply) => reply.header('cache-control', 'no-store').send(await opts.usage.report(request.principal!.orgId, request.query)),
  });
}

/** GET /admin/organizations/:id/usage: the same figures of any organization, on the ops port behind the admin token. */
export function adminUsageRoute(app: FastifyInstance, opts: { usage: UsageReports; organizations: { get(orgId: string): Promise<unknown> } }) {
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/admin/organizations/:id/usage', {
    schema: {
      operationId: 'readOrganizationUsage',
      tags: ['organizations'],
      summary: 'An organization\'s requests by hour or day and outcome, and this period\'s quota.',
      description: USAGE_QUERY_DESCRIPTION,
      response: { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema },
    },
    handler: async (request, reply) => {
      await opts.organizations.get(request.params.id); // 404 (organizationNotFound) for an unknown one
      return reply.header('cache-control', 'no-store').send(await opts.usage.report(request.params.id, request.query));
    },
  });
}
