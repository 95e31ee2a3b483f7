import type { FastifyInstance } from 'fastify';
import { actingMember, actorOf, type AuditTrail } from '../audit/trail.js';
import type { MemberService } from '../services/members.js';
import { normalizeEmail } from '../services/organizations.js';
import type { SessionService } from '../services/sessions.js';
import type { AuditEvent } from '../store/audit.js';
import { AcceptBody, InvitationBody, InvitationCreated, InvitationList, MemberList, MemberParams, MemberSchema, RemoveMemberQuery, RoleChangeBody } from './member-schemas.js';
import { IdParams, LoginResponse, NoContent, Problem as ProblemSchema, problemOf } from './schemas.js';

const forbidden = problemOf('memberRoleForbidden', 'insufficientScope');
/** What changing a member's role and removing a member both refuse: the same guards (members/role-guard.ts) and the same last-owner rule. */
const memberChangeProblems = { 400: ProblemSchema, 401: ProblemSchema, 403: forbidden, 404: problemOf('memberNotFound'), 409: problemOf('lastOwner') };

/** A removal in the trail: `member.removed`, and each key revoked with it as `api_key.deleted` (reason `member_removed`). */
export function recordRemoval(audit: AuditTrail, who: Omit<AuditEvent, 'type' | 'at' | 'details'> & { orgId: string }, member: { id: string; role: string }, sessionsEnded: number, keysRevoked: readonly string[]): void {
  for (const keyId of keysRevoked) audit.record({ type: 'api_key.deleted', ...who, details: { keyId, reason: 'member_removed', memberId: member.id } });
  audit.record({ type: 'member.removed', ...who, details: { memberId: member.id, role: member.role, sessionsEnded, keysRevoked: keysRevoked.length } });
}

/**
 * /auth/members and /auth/invitations (issue 50): the organization's people. Every route but
 * accepting needs a login token; what the member's role allows is checked before (members/role-guard.ts).
 */
export async function memberRoutes(app: FastifyInstance, opts: { members: MemberService; sessions: SessionService; audit: AuditTrail }) {
  const { members, sessions, audit } = opts;

  app.get('/auth/members', {
    config: { auth: 'login-token', routeLabel: '/auth/members' },
    schema: { operationId: 'listMembers', tags: ['members'], summary: "The organization's members, the first one first.", response: { 200: MemberList, 401: ProblemSchema, 403: forbidden } },
    handler: async (request, reply) => reply.header('cache-control', 'no-store').send({ members: await members.list(request.principal!.orgId) }),
  });

  app.patch<{ Params: IdParams; Body: RoleChangeBody }>('/auth/members/:id', {
    config: { auth: 'login-token', routeLabel: '/auth/members/:id' },
    schema: {
      operationId: 'changeMemberRole',
      tags: ['members'],
      summary: "Change a member's role; its sessions end.",
      description: 'Owner or admin (an admin neither changes an owner nor makes one). Demoting the last owner is 409 lastOwner.',
      params: MemberParams,
      body: RoleChangeBody,
      response: { 200: MemberSchema, ...memberChangeProblems },
    },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      const { member, before, sessionsEnded } = await members.changeRole(request.member, orgId, request.params.id, request.body.role);
      audit.record({ type: 'member.role_changed', orgId, ...actorOf(request), details: { memberId: member.id, from: before, to: member.role, sessionsEnded } });
      return reply.header('cache-control', 'no-store').send(member);
    },
  });

  app.delete<{ Params: IdParams; Querystring: RemoveMemberQuery }>('/auth/members/:id', {
    config: { auth: 'login-token', routeLabel: '/auth/members/:id' },
    schema: {
      operationId: 'removeMember',
      tags: ['members'],
      summary: 'Remove a member: its sessions end at once on every replica; the keys it created stay, or are revoked with ?revokeKeys=true.',
      params: MemberParams,
      querystring: RemoveMemberQuery,
      response: { 204: NoContent, ...memberChangeProblems },
    },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      const { member, sessionsEnded, keysRevoked } = await members.remove(request.member, orgId, request.params.id, { revokeKeys: request.query.revokeKeys === 'true' });
      recordRemoval(audit, { orgId, ...actorOf(request) }, member, sessionsEnded, keysRevoked);
      return reply.code(204).send();
    },
  });

  app.post<{ Body: InvitationBody }>('/auth/invitations', {
    config: { auth: 'login-token', routeLabel: '/auth/invitations' },
    schema: {
      operationId: 'inviteMember',
      tags: ['members'],
      summary: 'Invite a person by e-mail with a role; the token is in this answer only (and in the member.invited notice).',
      body: InvitationBody,
      response: { 201: InvitationCreated, 400: ProblemSchema, 401: ProblemSchema, 403: forbidden, 409: problemOf('emailTaken') },
    },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      const issued = await members.invite(request.member!, orgId, normalizeEmail(request.body.email), request.body.role);
      // The token to the operator's mailer only (the notice's extras): never in the trail.
      audit.record(
        { type: 'member.invited', orgId, ...actorOf(request), details: { invitationId: issued.id, role: issued.role, expiresAt: issued.expiresAt } },
        { invitation: { email: issued.email, role: issued.role, token: issued.token, expiresAt: issued.expiresAt } },
      );
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  });

  app.get('/auth/invitations', {
    config: { auth: 'login-token', routeLabel: '/auth/invitations' },
    schema: { operationId: 'listInvitations', tags: ['members'], summary: "The organization's pending invitations, oldest first; never their tokens.", response: { 200: InvitationList, 401: ProblemSchema, 403: forbidden } },
    handler: async (request, reply) => reply.header('cache-control', 'no-store').send({ invitations: await members.listInvitations(request.principal!.orgId) }),
  });

  app.delete<{ Params: IdParams }>('/auth/invitations/:id', {
    config: { auth: 'login-token', routeLabel: '/auth/invitations/:id' },
    schema: { operationId: 'revokeInvitation', tags: ['members'], summary: 'Revoke a pending invitation.', params: IdParams, response: { 204: NoContent, 401: ProblemSchema, 403: forbidden, 404: problemOf('invitationNotFound') } },
    handler: async (request, reply) => {
      const orgId = request.principal!.orgId;
      await members.revokeInvitation(orgId, request.params.id);
      audit.record({ type: 'member.invitation_revoked', orgId, ...actorOf(request), details: { invitationId: request.params.id } });
      return reply.code(204).send();
    },
  });

  app.post<{ Body: AcceptBody }>('/auth/invitations/accept', {
    config: { auth: 'none', routeLabel: '/auth/invitations/accept' },
    schema: {
      operationId: 'acceptInvitation',
      tags: ['members'],
      summary: 'Accept an invitation with a password: the member is created and logged in.',
      description: 'Needs no credential. A used, revoked, expired or unknown token is one answer (400 invitationInvalid). The password policy applies.',
      body: AcceptBody,
      response: { 200: LoginResponse, 400: ProblemSchema, 409: problemOf('emailTaken', 'sessionLimitReached') },
    },
    handler: async (request, reply) => {
      const member = await members.accept(request.body.token, request.body.password);
      const token = await sessions.open(member.orgId, { userAgent: request.headers['user-agent'], address: request.ip }, member.id);
      audit.record({ type: 'member.joined', orgId: member.orgId, ...actorOf(request), ...actingMember(member.orgId, member), details: { memberId: member.id, role: member.role } });
      return reply.header('cache-control', 'no-store').send({ token });
    },
  });
}
