import type { FastifyInstance } from 'fastify';
import { DEFAULT_PAGE_SIZE } from '../services/api-keys.js';
import type { AuditPage, AuditStore, StoredAuditEvent } from '../store/audit.js';
import { AuditPageSchema, AuditQuerySchema, Problem as ProblemSchema } from './schemas.js';

/** An entry as answered: absent parts as null, the time as RFC 3339. */
function entryView(event: StoredAuditEvent) {
  return {
    id: event.id,
    type: event.type,
    at: new Date(event.at).toISOString(),
    orgId: event.orgId ?? null,
    actor: event.actor,
    credential: event.credential ?? null,
    network: event.network ?? null,
    ...(event.member !== undefined && { member: event.member }),
    ...(event.actorDetail !== undefined && { actorDetail: event.actorDetail }),
    details: event.details ?? {},
  };
}

export function auditPageView(page: AuditPage) {
  return { events: page.events.map(entryView), nextCursor: page.next };
}

/** A page request from a query (limit as digits: the schema checked them). */
export function auditQueryOf(query: AuditQuerySchema): { limit: number; before?: string; types?: string[]; memberId?: string } {
  return {
    limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
    ...(query.cursor !== undefined && { before: query.cursor }),
    ...(query.type !== undefined && { types: [query.type] }),
    ...(query.member !== undefined && { memberId: query.member }),
  };
}

/** GET /auth/audit: the organization's own security events, newest first (a login token). */
export async function auditRoutes(app: FastifyInstance, opts: { auditLog: Pick<AuditStore, 'readAuditEvents'> }) {
  app.get<{ Querystring: AuditQuerySchema }>('/auth/audit', {
    config: { auth: 'login-token', routeLabel: '/auth/audit' },
    schema: {
      operationId: 'listAuditEvents',
      tags: ['auth'],
      summary: "The organization's audit trail: its security events, newest first.",
      description: 'Needs a login token. Logins, logouts, sessions ended, keys created, changed, rolled, deleted or reported leaked, and what the admin did to the organization; never a secret. A page holds up to `limit` events (100 unless given); `nextCursor` reads older ones (a page may hold fewer and still have one).',
      querystring: AuditQuerySchema,
      response: { 200: AuditPageSchema, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema },
    },
    handler: async (request, reply) => {
      const page = await opts.auditLog.readAuditEvents({ ...auditQueryOf(request.query), orgId: request.principal!.orgId });
      return reply.header('cache-control', 'no-store').send(auditPageView(page));
    },
  });
}
