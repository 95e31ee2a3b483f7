import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../services/api-keys.js';
import { ApiKeyChangeBody, ApiKeyCreated, ApiKeyList, ApiKeyShown, IdParams, NewApiKeyBody, NoContent, Problem as ProblemSchema, problemOf } from './schemas.js';

/** /auth/api-key (POST, GET) and /auth/api-key/:id (GET, PATCH, DELETE): the organization's keys, always its own. */
export async function apiKeyRoutes(app: FastifyInstance, opts: { apiKeys: ApiKeyService }) {
  const { apiKeys } = opts;

  app.post<{ Body: NewApiKeyBody | undefined }>('/auth/api-key', {
    config: { auth: 'login-token', routeLabel: '/auth/api-key' },
    schema: {
      operationId: 'createApiKey',
      tags: ['auth'],
      summary: 'Create an API key; its secret is in this answer only.',
      description: 'Needs a login token (an API key cannot create another). The key (`agk_…`) is a bearer credential until it is deleted or, when given an expiry, until then; only its digest is stored. The body is optional: a name, and at most one of expiresAt or expiresIn.',
      body: NewApiKeyBody,
      response: { 201: ApiKeyCreated, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 415: ProblemSchema },
    },
    // No body (or an empty one) is no options: validated as {}.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {};
    },
    handler: async (request, reply) => {
      const created = await apiKeys.create(request.principal!.orgId, request.body ?? {});
      request.log.info({ event: 'api_key.created', orgId: request.principal!.orgId, keyId: created.id }, 'API key created');
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  });

  app.get('/auth/api-key', {
    config: { auth: 'any', routeLabel: '/auth/api-key' },
    schema: {
      operationId: 'listApiKeys',
      tags: ['auth'],
      summary: 'List the organization\'s API keys, never their secrets.',
      description: 'With a login token or an API key of the organization.',
      response: { 200: ApiKeyList, 401: ProblemSchema },
    },
    handler: async (request, reply) => {
      return reply.header('cache-control', 'no-store').send({ keys: await apiKeys.list(request.principal!.orgId) });
    },
  });

  app.get<{ Params: IdParams }>('/auth/api-key/:id', {
    config: { auth: 'any', routeLabel: '/auth/api-key/:id' },
    schema: {
      operationId: 'getApiKey',
      tags: ['auth'],
      summary: 'One API key of the organization, never its secret.',
      description: 'With a login token or an API key of the organization. Another organization\'s key is not found.',
      params: IdParams,
      response: { 200: ApiKeyShown, 401: ProblemSchema, 404: problemOf('apiKeyNotFound') },
    },
    handler: async (request, reply) => {
      return reply.header('cache-control', 'no-store').send(await apiKeys.get(request.principal!.orgId, request.params.id));
    },
  });

  app.patch<{ Params: IdParams; Body: ApiKeyChangeBody }>('/auth/api-key/:id', {
    config: { auth: 'any', routeLabel: '/auth/api-key/:id' },
    schema: {
      operationId: 'updateApiKey',
      tags: ['auth'],
      summary: 'Rename an API key of the organization.',
      description: 'With a login token or an API key of the organization. Only the name changes (null removes it): the key, its secret and its expiry stay as they are. An expiry cannot be extended; scopes come later. Another organization\'s key is not found.',
      params: IdParams,
      body: ApiKeyChangeBody,
      response: { 200: ApiKeyShown, 400: ProblemSchema, 401: ProblemSchema, 404: problemOf('apiKeyNotFound'), 415: ProblemSchema },
    },
    handler: async (request, reply) => {
      const changed = await apiKeys.rename(request.principal!.orgId, request.params.id, request.body.name);
      request.log.info({ event: 'api_key.changed', orgId: request.principal!.orgId, keyId: request.params.id }, 'API key changed');
      return reply.header('cache-control', 'no-store').send(changed);
    },
  });

  app.delete<{ Params: IdParams }>('/auth/api-key/:id', {
    config: { auth: 'any', routeLabel: '/auth/api-key/:id' },
    schema: {
      operationId: 'deleteApiKey',
      tags: ['auth'],
      summary: 'Revoke an API key of the organization.',
      description: 'With a login token or an API key of the organization; the key is refused at once, on every replica. Another organization\'s key is not found.',
      params: IdParams,
      response: { 204: NoContent, 401: ProblemSchema, 404: problemOf('apiKeyNotFound') },
    },
    handler: async (request, reply) => {
      await apiKeys.revoke(request.principal!.orgId, request.params.id);
      request.log.info({ event: 'api_key.deleted', orgId: request.principal!.orgId, keyId: request.params.id }, 'API key deleted');
      return reply.code(204).send();
    },
  });
}
