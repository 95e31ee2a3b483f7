import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { Problem as ProblemSchema } from './schemas.js';
import type { UsageReports } from '../services/usage-report.js';

/** The query both usage routes take (checked by services/usage-report.ts: every bad one a 400). */
export const USAGE_QUERY_DESCRIPTION =
  'Query: `granularity` hour|day (default day), `from` and `to` UTC dates or times (default: the last 30 days, or 24 hours), `keyId` one of the organization\'s keys. Days are kept 90 days, hours 7. Each bucket counts the forwarded requests by outcome: admitted, credential, scope, rate_limit, quota. `quota`: this period\'s quota under the plan (used includes what replicas leased ahead, at most a slice each), null without one.';

const count = (what: string) => Type.Integer({ minimum: 0, description: what });

export const UsageReportSchema = Type.Object(
  {
    granularity: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
    from: Type.String({ description: 'The first bucket\'s start (UTC).' }),
    to: Type.String({ description: 'The last bucket\'s start (UTC).' }),
    keyId: Type.Union([Type.String(), Type.Null()], { description: 'The key whose figures these are; null: the organization\'s, every credential together.' }),
    buckets: Type.Array(
      Type.Object({
        start: Type.String({ description: 'The hour\'s or day\'s start (UTC).' }),
        admitted: count('Forwarded requests admitted.'),
        credential: count('Refused: a credential kind the route does not take.'),
        scope: count('Refused: the scope (the credential\'s, or the plan\'s).'),
        rate_limit: count('Refused: the credential\'s or the route\'s rate limit.'),
        quota: count('Refused: the quota.'),
      }),
      { description: 'Every bucket of the range, oldest first, zeros included.' },
    ),
    quota: Type.Union([
      Type.Object({
        plan: Type.String(),
        requests: Type.Integer(),
        per: Type.Union([Type.Literal('day'), Type.Literal('month')]),
        periodStart: Type.String(),
        periodEnd: Type.String(),
        used: count('Counted this period (what replicas leased ahead included).'),
        left: count('What the period has left.'),
      }),
      Type.Null(),
    ], { description: 'This period\'s quota under the organization\'s plan; null without one.' }),
    keyQuota: Type.Union([
      Type.Object({
        requests: Type.Integer(),
        per: Type.Union([Type.Literal('day'), Type.Literal('month')]),
        used: count('Counted on the key this period (exact: a key\'s quota is never leased ahead).'),
        left: count('What the key has left this period.'),
      }),
      Type.Null(),
    ], { description: 'With keyId: the key\'s own quota this period (the plan\'s period), used and left; null without one.' }),
  },
  { description: 'Usage figures and quota.' },
);

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
      response: { 200: UsageReportSchema, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema },
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
      response: { 200: UsageReportSchema, 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema },
    },
    handler: async (request, reply) => {
      await opts.organizations.get(request.params.id); // 404 (organizationNotFound) for an unknown one
      return reply.header('cache-control', 'no-store').send(await opts.usage.report(request.params.id, request.query));
    },
  });
}
