import type { FastifyInstance } from 'fastify';
import type { AuditTrail } from '../audit/trail.js';
import { MemberList, MemberSchema, OrgMemberParams, RemoveMemberQuery, RoleChangeBody } from '../routes/member-schemas.js';
import { recordRemoval } from '../routes/members.js';
import { NoContent, Problem as ProblemSchema, problemOf } from '../routes/schemas.js';
import type { MemberService } from '../services/members.js';
import { IdParams } from '../routes/schemas.js';
import { Problem } from '../problems.js';

/** What changing a member's role and removing a member both refuse, by the same last-owner rule. */
const memberChangeProblems = { 400: ProblemSchema, 401: ProblemSchema, 404: problemOf('memberNotFound'), 409: problemOf('lastOwner'), 429: problemOf('tooManyAdminRefusals') };

/**
 * The operator's view of an organization's members (issue 50): list them, change a role, remove
 * one (its sessions end on every replica). The last owner stays here too (409). Registered by
 * adminRoutes, behind its admin-token check.
 */
export function adminMemberRoutes(
  app: FastifyInstance,
  opts: { members: MemberService; trail: AuditTrail; admin: (request: { ip?: string | undefined }) => { actor: 'admin'; network: string | undefined } },
): void {
  const { members, trail, admin } = opts;

  app.get<{ Params: IdParams }>('/admin/organizations/:id/members', {
    schema: { operationId: 'listOrganizationMembers', tags: ['organizations'], summary: "An organization's members, the first one first.", params: IdParams, response: { 200: MemberList, 401: ProblemSchema, 404: problemOf('organizationNotFound'), 429: problemOf('tooManyAdminRefusals') } },
    handler: async (request, reply) => {
      // An organization always has a member (an owner stays): none listed is no organization.
      const listed = await members.list(request.params.id);
      if (listed.length === 0) throw new Problem('organizationNotFound');
      return reply.header('cache-control', 'no-store').send({ members: listed });
    },
  });

  app.patch<{ Params: OrgMemberParams; Body: RoleChangeBody }>('/admin/organizations/:id/members/:memberId', {
    schema: {
      operationId: 'changeOrganizationMemberRole',
      tags: ['organizations'],
      summary: "Change a member's role (its sessions end); demoting the last owner is 409.",
      params: OrgMemberParams,
      body: RoleChangeBody,
      response: { 200: MemberSchema, ...memberChangeProblems },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      const { member, before, sessionsEnded } = await members.changeRole(undefined, orgId, request.params.memberId, request.body.role);
      trail.record({ type: 'member.role_changed', orgId, ...admin(request), details: { memberId: member.id, from: before, to: member.role, sessionsEnded } });
      return reply.header('cache-control', 'no-store').send(member);
    },
  });

  app.delete<{ Params: OrgMemberParams; Querystring: RemoveMemberQuery }>('/admin/organizations/:id/members/:memberId', {
    schema: {
      operationId: 'removeOrganizationMember',
      tags: ['organizations'],
      summary: 'Remove a member: its sessions end at once on every replica; with ?revokeKeys=true the keys it created are revoked too; removing the last owner is 409.',
      params: OrgMemberParams,
      querystring: RemoveMemberQuery,
      response: { 204: NoContent, ...memberChangeProblems },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      const { member, sessionsEnded, keysRevoked } = await members.remove(undefined, orgId, request.params.memberId, { revokeKeys: request.query.revokeKeys === 'true' });
      recordRemoval(trail, { orgId, ...admin(request) }, member, sessionsEnded, keysRevoked);
      return reply.code(204).send();
    },
  });
}
