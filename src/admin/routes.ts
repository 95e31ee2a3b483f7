import type { FastifyInstance } from 'fastify';
import type { Logger } from '../observability/logging.js';
import type { OrganizationService } from '../services/organizations.js';
import { IdParams, NewOrganizationBody, OrganizationResponse, NoContent, Problem as ProblemSchema, problemOf } from '../routes/schemas.js';
import { createAdminTokenCheck } from './admin-token.js';

/** /admin/organizations: on the ops port only, behind the admin token. */
export async function adminRoutes(app: FastifyInstance, opts: { organizations: OrganizationService; adminToken: string; audit: Logger }) {
  const { organizations, audit } = opts;
  app.addHook('onRequest', createAdminTokenCheck(opts.adminToken));

  app.post<{ Body: NewOrganizationBody }>('/admin/organizations', {
    schema: {
      operationId: 'createOrganization',
      tags: ['organizations'],
      summary: 'Create an organization; its e-mail must be free.',
      description: 'The password (12 characters or more) is stored as an argon2id hash; the organization then logs in with POST /auth/login on the public port.',
      body: NewOrganizationBody,
      response: { 201: OrganizationResponse, 400: ProblemSchema, 401: ProblemSchema, 409: problemOf('emailTaken') },
    },
    handler: async (request, reply) => {
      const org = await organizations.create(request.body);
      audit.info({ event: 'organization.created', orgId: org.id }, 'organization created');
      return reply.code(201).send(org);
    },
  });

  app.get<{ Params: IdParams }>('/admin/organizations/:id', {
    schema: {
      operationId: 'getOrganization',
      tags: ['organizations'],
      summary: 'Read an organization.',
      description: 'Its id, name, e-mail and creation time; never its password hash.',
      params: IdParams,
      response: { 200: OrganizationResponse, 401: ProblemSchema, 404: problemOf('organizationNotFound') },
    },
    handler: async (request) => organizations.get(request.params.id),
  });

  app.delete<{ Params: IdParams }>('/admin/organizations/:id', {
    schema: {
      operationId: 'deleteOrganization',
      tags: ['organizations'],
      summary: 'Delete an organization with all its keys and sessions.',
      description: 'Its API keys and login tokens are refused from then on, on every replica.',
      params: IdParams,
      response: { 204: NoContent, 401: ProblemSchema, 404: problemOf('organizationNotFound') },
    },
    handler: async (request, reply) => {
      const { revoked } = await organizations.delete(request.params.id);
      audit.info({ event: 'organization.deleted', orgId: request.params.id, revokedCredentials: revoked }, 'organization deleted');
      return reply.code(204).send();
    },
  });
}
