import type { FastifyInstance } from 'fastify';
import type { Logger } from '../observability/logging.js';
import type { OrganizationService } from '../services/organizations.js';
import { IdParams, NewOrganizationBody, OrganizationResponse, NoContent, Problem as ProblemSchema } from '../routes/schemas.js';
import { createAdminTokenCheck } from './admin-token.js';

/** /admin/organizations: on the ops port only, behind the admin token. */
export async function adminRoutes(app: FastifyInstance, opts: { organizations: OrganizationService; adminToken: string; audit: Logger }) {
  const { organizations, audit } = opts;
  app.addHook('onRequest', createAdminTokenCheck(opts.adminToken));

  app.post<{ Body: NewOrganizationBody }>('/admin/organizations', {
    schema: {
      summary: 'Create an organization; its e-mail must be free.',
      body: NewOrganizationBody,
      response: { 201: OrganizationResponse, 400: ProblemSchema, 401: ProblemSchema, 409: ProblemSchema },
    },
    handler: async (request, reply) => {
      const org = await organizations.create(request.body);
      audit.info({ event: 'organization.created', orgId: org.id }, 'organization created');
      return reply.code(201).send(org);
    },
  });

  app.get<{ Params: IdParams }>('/admin/organizations/:id', {
    schema: { summary: 'Read an organization.', params: IdParams, response: { 200: OrganizationResponse, 401: ProblemSchema, 404: ProblemSchema } },
    handler: async (request) => organizations.get(request.params.id),
  });

  app.delete<{ Params: IdParams }>('/admin/organizations/:id', {
    schema: { summary: 'Delete an organization with all its keys and sessions.', params: IdParams, response: { 204: NoContent, 401: ProblemSchema, 404: ProblemSchema } },
    handler: async (request, reply) => {
      const { revoked } = await organizations.delete(request.params.id);
      audit.info({ event: 'organization.deleted', orgId: request.params.id, revokedCredentials: revoked }, 'organization deleted');
      return reply.code(204).send();
    },
  });
}
