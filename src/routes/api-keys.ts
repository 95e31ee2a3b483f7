import type { FastifyInstance } from 'fastify';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import { creatorOf } from '../members/key-creators.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { InvitationStore } from '../store/members.js';
import { refuseSpoofingName } from './display-names.js';
import { scopedRouteProblems } from './problem-sets.js';
import { absentBodyIsEmpty } from './optional-body.js';
import {
  ApiKeyChangeBody,
  ApiKeyCreated,
  ApiKeyList,
  ApiKeyListQuery,
  ApiKeyRollBody,
  ApiKeyRolled,
  ApiKeyShown,
  IdParams,
  NewApiKeyBody,
  NoContent,
  Problem as ProblemSchema,
  problemOf,
} from './schemas.js';

/**
 * /auth/api-key (POST, GET), /auth/api-key/:id (GET, PATCH, DELETE) and /auth/api-key/:id/roll:
 * the organization's keys, always its own. Creating and rolling need a login token; the rest
 * takes any credential with the scope (keys:read, keys:write).
 */
export async function apiKeyRoutes(app: FastifyInstance, opts: { apiKeys: ApiKeyService; audit: AuditTrail; keyCreators?: Pick<InvitationStore, 'recordKeyCreator'> }) {
  const { apiKeys, audit } = opts;

  app.post<{ Body: NewApiKeyBody | undefined }>('/auth/api-key', {
    config: { auth: 'login-token', routeLabel: '/auth/api-key' },
    schema: {
      operationId: 'createApiKey',
      tags: ['auth'],
      summary: 'Create an API key; its secret is in this answer only.',
      description: 'Needs a login token (an API key cannot create another). The key (`agk_…`) is a bearer credential until it is deleted or, when given an expiry, until then; only its digest is stored. The body is optional: a name, scopes (default: all), and at most one of expiresAt or expiresIn.',
      body: NewApiKeyBody,
      response: { 201: ApiKeyCreated, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 409: problemOf('apiKeyLimitReached'), 415: ProblemSchema, 429: problemOf('tooManyKeyCreations') },
    },
    // No body (or an empty one) is no options: validated as {}.
    preValidation: absentBodyIsEmpty,
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      refuseSpoofingName('name', request.body?.name);
      const created = await apiKeys.create(orgId, request.body ?? {}, request.member && creatorOf(request.member));
      // Its creator (issue 50): a developer manages the keys it created (members/role-guard.ts).
      if (request.member !== undefined) await opts.keyCreators?.recordKeyCreator(orgId, created.id, request.member.id);
      request.log.info({ event: 'api_key.created', orgId, keyId: created.id, scopes: created.scopes, expiresAt: created.expiresAt }, 'API key created');
      audit.record({ type: 'api_key.created', orgId, ...actorOf(request), details: { keyId: created.id, name: created.name, scopes: created.scopes, expiresAt: created.expiresAt, rateLimit: created.rateLimit, quota: created.quota === null ? null : `${created.quota.requests}/${created.quota.per}` } });
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  });

  app.get<{ Querystring: ApiKeyListQuery }>('/auth/api-key', {
    config: { auth: 'any', scope: 'keys:read', routeLabel: '/auth/api-key' },
    schema: {
      operationId: 'listApiKeys',
      tags: ['auth'],
      summary: 'List the organization\'s API keys, newest first, never their secrets.',
      description: 'With a login token or an API key holding `keys:read`. A page holds 100 keys unless `limit` says otherwise (at most 500); `nextCursor` fetches the next.',
      querystring: ApiKeyListQuery,
      response: { 200: ApiKeyList, 400: ProblemSchema, ...scopedRouteProblems() },
    },
    handler: async (request, reply) => {
      const page = await apiKeys.list(request.principal!.orgId, pageOf(request.query));
      return reply.header('cache-control', 'no-store').send(page);
    },
  });

  app.get<{ Params: IdParams }>('/auth/api-key/:id', {
    config: { auth: 'any', scope: 'keys:read', routeLabel: '/auth/api-key/:id' },
    schema: {
      operationId: 'getApiKey',
      tags: ['auth'],
      summary: 'One API key of the organization, never its secret.',
      description: 'With a login token or an API key holding `keys:read`. Another organization\'s key is not found.',
      params: IdParams,
      response: { 200: ApiKeyShown, ...scopedRouteProblems(), 404: problemOf('apiKeyNotFound') },
    },
    handler: async (request, reply) => {
      return reply.header('cache-control', 'no-store').send(await apiKeys.get(request.principal!.orgId, request.params.id));
    },
  });

  app.patch<{ Params: IdParams; Body: ApiKeyChangeBody }>('/auth/api-key/:id', {
    config: { auth: 'any', scope: 'keys:write', routeLabel: '/auth/api-key/:id' },
    schema: {
      operationId: 'updateApiKey',
      tags: ['auth'],
      summary: 'Rename an API key, narrow its scopes or bring its expiry closer.',
      description: 'With a login token or an API key holding `keys:write`. Only narrows: fewer scopes, an earlier end (400 otherwise, and nothing changes). The key and its secret stay; a change of scopes or end holds on every replica from the answer on. Another organization\'s key is not found.',
      params: IdParams,
      body: ApiKeyChangeBody,
      response: { 200: ApiKeyShown, 400: ProblemSchema, ...scopedRouteProblems('scopesOutsidePlan'), 404: problemOf('apiKeyNotFound'), 415: ProblemSchema },
    },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      refuseSpoofingName('name', request.body.name);
      const changed = await apiKeys.change(orgId, request.params.id, request.body);
      request.log.info({ event: 'api_key.changed', orgId, keyId: changed.id, changed: Object.keys(request.body), scopes: changed.scopes, expiresAt: changed.expiresAt }, 'API key changed');
      audit.record({ type: 'api_key.changed', orgId, ...actorOf(request), details: { keyId: changed.id, changed: Object.keys(request.body), name: changed.name, scopes: changed.scopes, expiresAt: changed.expiresAt, rateLimit: changed.rateLimit, quota: changed.quota === null ? null : `${changed.quota.requests}/${changed.quota.per}` } });
      return reply.header('cache-control', 'no-store').send(changed);
    },
  });

  app.post<{ Params: IdParams; Body: ApiKeyRollBody | undefined }>('/auth/api-key/:id/roll', {
    config: { auth: 'login-token', routeLabel: '/auth/api-key/:id/roll' },
    schema: {
      operationId: 'rollApiKey',
      tags: ['auth'],
      summary: 'Roll an API key: a successor with its name and scopes, the old key ending after a grace.',
      description: 'Needs a login token. The successor\'s secret is in this answer only. The rolled key keeps working for `graceSeconds` (24 hours unless given; 0 revokes it at once; at most 7 days), never longer than it would have; both work meanwhile, on every replica. One atomic step.',
      params: IdParams,
      body: ApiKeyRollBody,
      response: { 201: ApiKeyRolled, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: problemOf('apiKeyNotFound'), 415: ProblemSchema, 429: problemOf('tooManyKeyCreations') },
    },
    preValidation: absentBodyIsEmpty,
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      const rolled = await apiKeys.roll(orgId, request.params.id, request.body ?? {}, request.member && creatorOf(request.member));
      if (request.member !== undefined) await opts.keyCreators?.recordKeyCreator(orgId, rolled.id, request.member.id);
      request.log.info({ event: 'api_key.rolled', orgId, keyId: rolled.rolled.id, successorId: rolled.id, expiresAt: rolled.rolled.expiresAt }, 'API key rolled');
      request.log.info({ event: 'api_key.created', orgId, keyId: rolled.id, rolledFrom: rolled.rolled.id, scopes: rolled.scopes, expiresAt: rolled.expiresAt }, 'API key created');
      audit.record({ type: 'api_key.rolled', orgId, ...actorOf(request), details: { keyId: rolled.rolled.id, successorId: rolled.id, expiresAt: rolled.rolled.expiresAt } });
      return reply.code(201).header('cache-control', 'no-store').send(rolled);
    },
  });

  app.delete<{ Params: IdParams }>('/auth/api-key/:id', {
    config: { auth: 'any', scope: 'keys:write', routeLabel: '/auth/api-key/:id' },
    schema: {
      operationId: 'deleteApiKey',
      tags: ['auth'],
      summary: 'Revoke an API key of the organization.',
      description: 'With a login token or an API key holding `keys:write`; the key is refused at once, on every replica. Another organization\'s key is not found.',
      params: IdParams,
      response: { 204: NoContent, ...scopedRouteProblems(), 404: problemOf('apiKeyNotFound') },
    },
    handler: async (request, reply) => {
      await apiKeys.revoke(request.principal!.orgId, request.params.id);
      request.log.info({ event: 'api_key.deleted', orgId: request.principal!.orgId, keyId: request.params.id }, 'API key deleted');
      audit.record({ type: 'api_key.deleted', orgId: request.principal!.orgId, ...actorOf(request), details: { keyId: request.params.id } });
      return reply.code(204).send();
    },
  });
}

/** A listing's query as the service takes it (`limit` arrives as digits: the schema checked them). */
export function pageOf(query: ApiKeyListQuery): { limit?: number; cursor?: string } {
  return {
    ...(query.limit !== undefined && { limit: Number(query.limit) }),
    ...(query.cursor !== undefined && { cursor: query.cursor }),
  };
}
