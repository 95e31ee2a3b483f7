import type { FastifyInstance } from 'fastify';
import { OPERATOR, type AuditTrail } from '../audit/trail.js';
import type { Logger } from '../observability/logging.js';
import { auditPageView, auditQueryOf } from '../routes/audit.js';
import { addressPrefix } from '../services/client-description.js';
import type { AuditStore } from '../store/audit.js';
import type { ApiKeyService } from '../services/api-keys.js';
import type { OrganizationService } from '../services/organizations.js';
import type { ProfileService } from '../services/organization-profiles.js';
import { recordProfileChange } from '../routes/organization.js';
import type { SessionService } from '../services/sessions.js';
import { pageOf } from '../routes/api-keys.js';
import { refuseSpoofingName } from '../routes/display-names.js';
import { adminOrganizationProblems } from '../routes/problem-sets.js';
import { PASSWORD_PROBLEMS, AdminAuditQuerySchema, ApiKeyList, ApiKeyListQuery, AuditPageSchema, IdParams, OrgSessionParams, SessionList, SessionsEnded, NewOrganizationBody, OrganizationChangeBody, OrganizationResponse, CreatedOrganizationResponse, NoContent, OrgKeyParams, Problem as ProblemSchema, problemOf } from '../routes/schemas.js';
import type { AdminRefusalThrottle } from '../guards/admin-refusal-throttle.js';
import { createAdminTokenCheck } from './admin-token.js';
import { organizationListRoute } from './organization-list.js';
import { passwordResetRoute } from './password-reset.js';
import { adminMfaRoutes } from './mfa.js';
import type { MfaService } from '../services/mfa.js';
import type { PlanService } from '../services/organization-plans.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import type { UsageReports } from '../services/usage-report.js';
import { adminUsageRoute } from '../routes/usage.js';
import type { MemberService } from '../services/members.js';
import { adminMemberRoutes } from './members.js';
import { adminMemberCredentialRoutes } from './member-credentials.js';

/** /admin/organizations (and their API keys): on the ops port only, behind the admin token. */
export async function adminRoutes(
  app: FastifyInstance,
  opts: {
    organizations: OrganizationService;
    /** Name and e-mail changes (services/organization-profiles.ts). */
    profiles: ProfileService;
    apiKeys: ApiKeyService;
    sessions: SessionService;
    /** Password resets (services/password-changes.ts). */
    passwords: PasswordChangeService;
    /** Second factors (issue 32): seen and removed, never read. */
    mfa: MfaService;
    /** Moving organizations between the routes file's plans (issue 47). */
    plans: PlanService;
    /** Members (issue 50): listed, their roles changed, removed. */
    members?: MemberService;
    /** The audit trail: every admin action is recorded in it; GET /admin/audit reads it. */
    trail: AuditTrail;
    auditLog: Pick<AuditStore, 'readAuditEvents'>;
    adminToken: string;
    /** Refused admin requests per client address (guards/admin-refusal-throttle.ts). */
    refusals: AdminRefusalThrottle;
    /** authgate_admin_refusals_total. */
    countRefusal: (reason: string) => void;
    audit: Logger;
    /** Usage figures and quota (services/usage-report.ts): GET /admin/organizations/:id/usage. */
    usage: UsageReports;
  },
) {
  const { organizations, apiKeys, sessions, trail, audit } = opts;
  const admin = (request: { ip?: string | undefined }) => ({ actor: 'admin' as const, network: addressPrefix(request.ip), actorDetail: OPERATOR });
  app.addHook('onRequest', createAdminTokenCheck({ adminToken: opts.adminToken, throttle: opts.refusals, countRefusal: opts.countRefusal, trail }));
  organizationListRoute(app, organizations);
  passwordResetRoute(app, { passwords: opts.passwords, trail, audit, admin });
  adminMfaRoutes(app, { mfa: opts.mfa, trail, audit, admin });
  adminUsageRoute(app, { usage: opts.usage, organizations });
  if (opts.members !== undefined) adminMemberRoutes(app, { members: opts.members, trail, admin });
  if (opts.members !== undefined) adminMemberCredentialRoutes(app, { members: opts.members, passwords: opts.passwords, mfa: opts.mfa, trail, audit, admin });

  app.post<{ Body: NewOrganizationBody }>('/admin/organizations', {
    schema: {
      operationId: 'createOrganization',
      tags: ['organizations'],
      summary: 'Create an organization; its e-mail must be free.',
      description:
        'Without `password`, the answer carries a one-time `resetToken` (and `resetExpiresAt`) as POST /admin/organizations/{id}/password-reset makes: the organization sets its own password with it (POST /auth/password/reset) and cannot log in before, so the operator never chooses one. A password given must pass the password policy (at least AUTHGATE_PASSWORD_MIN_LENGTH characters, default 15; at most 128; not a common or breached password; not containing the name or the e-mail\'s local part): each refusal is a 400 with its own code. It is stored as an argon2id hash, never logged or echoed; the organization then logs in with POST /auth/login on the public port.',
      body: NewOrganizationBody,
      response: { 201: CreatedOrganizationResponse, 400: problemOf('badRequest', ...PASSWORD_PROBLEMS), 401: ProblemSchema, 429: problemOf('tooManyAdminRefusals'), 409: problemOf('emailTaken') },
    },
    handler: async (request, reply) => {
      refuseSpoofingName('name', request.body.name);
      const org = await organizations.create(request.body);
      audit.info({ event: 'organization.created', orgId: org.id }, 'organization created');
      trail.record({ type: 'organization.created', orgId: org.id, ...admin(request) });
      if (request.body.password !== undefined) return reply.code(201).send(org);
      // A second step: should it fail, the organization exists without a password, and
      // POST .../password-reset gives it a token (docs/operations.md).
      const { resetToken, expiresAt } = await opts.passwords.issueReset(org.id);
      trail.record({ type: 'password.reset_issued', orgId: org.id, ...admin(request), details: { sessionsEnded: 0, expiresAt } });
      return reply.code(201).header('cache-control', 'no-store').send({ ...org, resetToken, resetExpiresAt: expiresAt });
    },
  });

  app.get<{ Params: IdParams }>('/admin/organizations/:id', {
    schema: {
      operationId: 'getOrganization',
      tags: ['organizations'],
      summary: 'Read an organization.',
      description: 'Its id, name, e-mail and creation time; never its password hash.',
      params: IdParams,
      response: { 200: OrganizationResponse, 401: ProblemSchema, 429: problemOf('tooManyAdminRefusals'), 404: problemOf('organizationNotFound') },
    },
    handler: async (request) => organizations.get(request.params.id),
  });

  app.patch<{ Params: IdParams; Body: OrganizationChangeBody }>('/admin/organizations/:id', {
    schema: {
      operationId: 'changeOrganization',
      tags: ['organizations'],
      summary: "Change an organization's name, e-mail, rate limit, API-key limit or plan.",
      description: '`name` and `email` as PATCH /auth/organization changes them, without a password (the admin token is the authority): the e-mail must be free across the whole store (409, 1303; 1224 for a concurrent change of its e-mail), an e-mail change ends every login session of the organization, and the identity assertion carries the new values at once on every replica; audited as `organization.name_changed` and `organization.email_changed` (both domains only). They are changed first: a refusal there changes nothing else. `rateLimit`: the limit each of its credentials gets on forwarded routes (a key may have a lower one of its own): every replica applies it within the revocation bound. `keyLimit`: how many API keys it may hold, instead of AUTHGATE_MAX_KEYS_PER_ORGANIZATION. `plan`: one of the routes file\'s plans (400, 1250 for another), or null for its defaultPlan: what its credentials may hold from the next request on every replica (within a second), no key rewritten; audited and noticed as `organization.plan_changed`.',
      params: IdParams,
      body: OrganizationChangeBody,
      response: { 200: OrganizationResponse, 400: ProblemSchema, 401: ProblemSchema, 429: problemOf('tooManyAdminRefusals'), 404: problemOf('organizationNotFound'), 409: problemOf('emailTaken', 'profileChangeConflict', 'externalIdTaken') },
    },
    handler: async (request) => {
      const { rateLimit, keyLimit, name, email, plan, externalIds } = request.body;
      if (name !== undefined || email !== undefined) {
        refuseSpoofingName('name', name);
        const outcome = await opts.profiles.change(request.params.id, { name, email });
        // Never the addresses: which fields changed, and how many sessions ended.
        audit.info({ event: 'organization.profile_changed', orgId: request.params.id, nameChanged: outcome.nameChanged, emailChanged: outcome.emailChanged, sessionsEnded: outcome.sessionsEnded, by: 'admin' }, 'organization profile changed');
        recordProfileChange(trail, outcome, admin(request));
      }
      // Checked before the limits change: an unknown plan changes nothing else.
      if (plan !== undefined) {
        const moved = await opts.plans.change(request.params.id, plan);
        if (moved.from !== moved.to) {
          audit.info({ event: 'organization.plan_changed', orgId: moved.orgId, from: moved.from, to: moved.to, by: 'admin' }, 'organization moved to another plan');
          trail.record({ type: 'organization.plan_changed', orgId: moved.orgId, ...admin(request), details: { from: moved.from, to: moved.to } });
        }
      }
      let org = externalIds === undefined ? undefined : await organizations.setExternalIds(request.params.id, externalIds);
      if (externalIds !== undefined) trail.record({ type: 'organization.changed', orgId: request.params.id, ...admin(request), details: { externalIds: Object.keys(externalIds) } });
      if (rateLimit !== undefined) org = await organizations.setRateLimit(request.params.id, rateLimit);
      if (keyLimit !== undefined) org = await organizations.setKeyLimit(request.params.id, keyLimit);
      org ??= await organizations.get(request.params.id);
      if (rateLimit !== undefined || keyLimit !== undefined) {
        audit.info({ event: 'organization.changed', orgId: org.id, rateLimit: org.rateLimit, keyLimit: org.keyLimit }, 'organization changed');
        trail.record({ type: 'organization.changed', orgId: org.id, ...admin(request), details: { rateLimit: org.rateLimit, keyLimit: org.keyLimit } });
      }
      return org;
    },
  });

  app.delete<{ Params: IdParams }>('/admin/organizations/:id', {
    schema: {
      operationId: 'deleteOrganization',
      tags: ['organizations'],
      summary: 'Delete an organization with all its keys and sessions.',
      description: 'Its API keys and login tokens are refused from then on, on every replica.',
      params: IdParams,
      response: { 204: NoContent, ...adminOrganizationProblems() },
    },
    handler: async (request, reply) => {
      const { revoked } = await organizations.delete(request.params.id);
      audit.info({ event: 'organization.deleted', orgId: request.params.id, revokedCredentials: revoked }, 'organization deleted');
      trail.record({ type: 'organization.deleted', orgId: request.params.id, ...admin(request), details: { revokedCredentials: revoked } });
      return reply.code(204).send();
    },
  });

  app.get<{ Params: IdParams; Querystring: ApiKeyListQuery }>('/admin/organizations/:id/api-keys', {
    schema: {
      operationId: 'listOrganizationApiKeys',
      tags: ['organizations'],
      summary: "List an organization's API keys, never their secrets.",
      description: 'The same view and pages as GET /auth/api-key on the public port: id, prefix, name, scopes, creation, expiry and last use, newest first; never a secret or a hash.',
      params: IdParams,
      querystring: ApiKeyListQuery,
      response: { 200: ApiKeyList, 400: ProblemSchema, ...adminOrganizationProblems() },
    },
    handler: async (request, reply) => {
      await organizations.get(request.params.id); // 404 for an unknown organization, not an empty list
      return reply.header('cache-control', 'no-store').send(await apiKeys.list(request.params.id, pageOf(request.query)));
    },
  });

  app.delete<{ Params: OrgKeyParams }>('/admin/organizations/:id/api-keys/:keyId', {
    schema: {
      operationId: 'deleteOrganizationApiKey',
      tags: ['organizations'],
      summary: 'Revoke one API key of an organization.',
      description: "The key is refused at once, on every replica. Another organization's key is not found.",
      params: OrgKeyParams,
      response: { 204: NoContent, ...adminOrganizationProblems('apiKeyNotFound') },
    },
    handler: async (request, reply) => {
      const { id: orgId, keyId } = request.params;
      await organizations.get(orgId); // an unknown organization is its own 404
      await apiKeys.revoke(orgId, keyId);
      audit.info({ event: 'api_key.deleted', orgId, keyId, by: 'admin' }, 'API key deleted');
      trail.record({ type: 'api_key.deleted', orgId, ...admin(request), details: { keyId } });
      return reply.code(204).send();
    },
  });

  app.get<{ Params: IdParams }>('/admin/organizations/:id/sessions', {
    schema: {
      operationId: 'listOrganizationSessions',
      tags: ['organizations'],
      summary: "List an organization's live login sessions, never their tokens.",
      description: 'The same view as GET /auth/sessions on the public port (`current` is always false here).',
      params: IdParams,
      response: { 200: SessionList, ...adminOrganizationProblems() },
    },
    handler: async (request, reply) => {
      await organizations.get(request.params.id); // 404 for an unknown organization, not an empty list
      return reply.header('cache-control', 'no-store').send({ sessions: await sessions.list(request.params.id) });
    },
  });

  app.delete<{ Params: OrgSessionParams }>('/admin/organizations/:id/sessions/:sessionId', {
    schema: {
      operationId: 'endOrganizationSession',
      tags: ['organizations'],
      summary: 'End one login session of an organization.',
      description: "Its token is refused at once, on every replica. Another organization's session is not found.",
      params: OrgSessionParams,
      response: { 204: NoContent, ...adminOrganizationProblems('sessionNotFound') },
    },
    handler: async (request, reply) => {
      const { id: orgId, sessionId } = request.params;
      await organizations.get(orgId);
      await sessions.end(orgId, sessionId);
      audit.info({ event: 'session.ended', orgId, sessionId, by: 'admin' }, 'session ended');
      trail.record({ type: 'session.ended', orgId, ...admin(request), details: { sessionId } });
      return reply.code(204).send();
    },
  });

  app.delete<{ Params: IdParams }>('/admin/organizations/:id/sessions', {
    schema: {
      operationId: 'endOrganizationSessions',
      tags: ['organizations'],
      summary: 'End every login session of an organization.',
      description: 'Every login token of the organization is refused at once, on every replica; its API keys stay.',
      params: IdParams,
      response: { 200: SessionsEnded, ...adminOrganizationProblems() },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      await organizations.get(orgId);
      const ended = await sessions.endAll(orgId);
      audit.info({ event: 'sessions.ended', orgId, sessions: ended, by: 'admin' }, 'every session ended');
      trail.record({ type: 'sessions.ended', orgId, ...admin(request), details: { sessions: ended } });
      return reply.header('cache-control', 'no-store').send({ ended });
    },
  });

  app.get<{ Querystring: AdminAuditQuerySchema }>('/admin/audit', {
    schema: {
      operationId: 'listAllAuditEvents',
      tags: ['organizations'],
      summary: 'The audit trail of every organization, newest first.',
      description: 'Filterable by organization (`org`) and type (`type`); paged as GET /auth/audit. Failed logins by an e-mail no organization has appear here only (their `orgId` is null, the e-mail a digest); those on an organization\'s e-mail are that organization\'s. Refused admin requests (`admin.refused`) have no organization.',
      querystring: AdminAuditQuerySchema,
      response: { 200: AuditPageSchema, 400: ProblemSchema, 401: ProblemSchema, 429: problemOf('tooManyAdminRefusals') },
    },
    handler: async (request, reply) => {
      const { org, ...query } = request.query;
      const page = await opts.auditLog.readAuditEvents({ ...auditQueryOf(query), ...(org !== undefined && { orgId: org }) });
      return reply.header('cache-control', 'no-store').send(auditPageView(page));
    },
  });
}
