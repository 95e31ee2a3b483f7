import type { FastifyInstance } from 'fastify';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import type { SessionService } from '../services/sessions.js';
import { scopedRouteProblems } from './problem-sets.js';
import { NoContent, problemOf, SessionList, SessionParams, SessionsEnded } from './schemas.js';

/**
 * /auth/sessions (GET, DELETE) and /auth/sessions/:id (DELETE): the organization's login sessions,
 * always its own. Reading needs `keys:read`, ending `keys:write` (a login token holds both): an
 * organization ends a stolen token's session from anywhere, all of them at once if it must.
 */
export async function sessionRoutes(app: FastifyInstance, opts: { sessions: SessionService; audit: AuditTrail }) {
  const { sessions, audit } = opts;

  app.get('/auth/sessions', {
    config: { auth: 'any', scope: 'keys:read', routeLabel: '/auth/sessions' },
    schema: {
      operationId: 'listSessions',
      tags: ['auth'],
      summary: "The organization's live login sessions, the latest login first.",
      description: 'With a login token or an API key holding `keys:read`. Each with when it logged in and expires, and a coarse description of the client; never a token.',
      response: { 200: SessionList, ...scopedRouteProblems() },
    },
    handler: async (request, reply) => {
      const { orgId, via, credentialId } = request.principal!;
      const listed = await sessions.list(orgId, via === 'jwt' ? credentialId : undefined);
      return reply.header('cache-control', 'no-store').send({ sessions: listed });
    },
  });

  app.delete<{ Params: SessionParams }>('/auth/sessions/:id', {
    config: { auth: 'any', scope: 'keys:write', routeLabel: '/auth/sessions/:id' },
    schema: {
      operationId: 'endSession',
      tags: ['auth'],
      summary: 'End one login session of the organization.',
      description: "With a login token or an API key holding `keys:write`: the session's token is refused at once, on every replica. Another organization's session is not found.",
      params: SessionParams,
      response: { 204: NoContent, ...scopedRouteProblems(), 404: problemOf('sessionNotFound') },
    },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      await sessions.end(orgId, request.params.id);
      request.log.info({ event: 'session.ended', orgId, sessionId: request.params.id }, 'session ended');
      audit.record({ type: 'session.ended', orgId, ...actorOf(request), details: { sessionId: request.params.id } });
      return reply.code(204).send();
    },
  });

  app.delete('/auth/sessions', {
    config: { auth: 'any', scope: 'keys:write', routeLabel: '/auth/sessions' },
    schema: {
      operationId: 'endAllSessions',
      tags: ['auth'],
      summary: 'End every login session of the organization.',
      description: "With a login token (its own session ends too) or an API key holding `keys:write`. Every login token of the organization is refused at once, on every replica; API keys are not sessions and stay.",
      response: { 200: SessionsEnded, ...scopedRouteProblems() },
    },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      const ended = await sessions.endAll(orgId);
      request.log.info({ event: 'sessions.ended', orgId, sessions: ended }, 'every session ended');
      audit.record({ type: 'sessions.ended', orgId, ...actorOf(request), details: { sessions: ended } });
      return reply.header('cache-control', 'no-store').send({ ended });
    },
  });
}
