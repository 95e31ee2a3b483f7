import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AuditTrail } from '../audit/trail.js';
import type { Logger } from '../observability/logging.js';
import { Problem } from '../problems.js';
import { OrgMemberParams } from '../routes/member-schemas.js';
import { MfaStatusSchema } from '../routes/mfa-schemas.js';
import { PasswordResetIssued, Problem as ProblemSchema, problemOf } from '../routes/schemas.js';
import type { MemberService, MemberView } from '../services/members.js';
import type { MfaService } from '../services/mfa.js';
import type { PasswordChangeService } from '../services/password-changes.js';

const MfaRemoved = Type.Object({
  removed: Type.Boolean({ description: 'false when the member had no factor (nothing changed, no session ended).' }),
  sessionsEnded: Type.Integer(),
});

/**
 * The operator's reset of one member's own credentials (issue 50), the siblings of an
 * organization's (password-reset.ts, mfa.ts) under /admin/organizations/:id/members/:memberId:
 * a one-time password-reset token, and the removal of its second factor, each ending the member's
 * sessions. The first member's are its organization's, so for it these do exactly what the
 * organization's routes do. Audited (and noticed) as those are, naming the member; never a secret.
 * Registered by adminRoutes, behind its admin-token check.
 */
export function adminMemberCredentialRoutes(
  app: FastifyInstance,
  opts: {
    members: Pick<MemberService, 'list'>;
    passwords: Pick<PasswordChangeService, 'issueReset'>;
    mfa: Pick<MfaService, 'status' | 'removeByOperator'>;
    trail: AuditTrail;
    audit: Logger;
    admin: (request: { ip?: string | undefined }) => { actor: 'admin'; network: string | undefined };
  },
): void {
  const { members, passwords, mfa, trail, audit, admin } = opts;

  /** The organization's member: 404 organizationNotFound or memberNotFound otherwise. */
  async function memberOf(orgId: string, memberId: string): Promise<MemberView> {
    const listed = await members.list(orgId);
    // An organization always has a member (an owner stays): none listed is no organization.
    if (listed.length === 0) throw new Problem('organizationNotFound');
    const member = listed.find((m) => m.id === memberId);
    if (member === undefined) throw new Problem('memberNotFound');
    return member;
  }

  app.post<{ Params: OrgMemberParams }>('/admin/organizations/:id/members/:memberId/password-reset', {
    schema: {
      operationId: 'resetOrganizationMemberPassword',
      tags: ['organizations'],
      summary: "End every login session of a member and issue a one-time reset token for the member's own password.",
      description:
        "As POST /admin/organizations/{id}/password-reset, for one member: the answer carries the reset token (`agr_…`) once; the member sets its own new password with it at POST /auth/password/reset, once, before `expiresAt`. The member's login sessions end now, on every replica (the organization's other members' stay); its current password works until the token is used; a newer token makes an earlier one worthless. For the first member this is the organization's own reset. Audited as `password.reset_issued` with the member's id and e-mail in its details, never with the token.",
      params: OrgMemberParams,
      response: { 200: PasswordResetIssued, 400: ProblemSchema, 401: ProblemSchema, 404: problemOf('organizationNotFound', 'memberNotFound'), 429: problemOf('tooManyAdminRefusals') },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      const member = await memberOf(orgId, request.params.memberId);
      const { resetToken, expiresAt, sessionsEnded } = await passwords.issueReset(orgId, member.id);
      audit.info({ event: 'password.reset_issued', orgId, memberId: member.id, sessionsEnded, expiresAt }, 'member password reset issued');
      trail.record({ type: 'password.reset_issued', orgId, ...admin(request), details: { sessionsEnded, expiresAt, memberId: member.id, memberEmail: member.email } });
      return reply.header('cache-control', 'no-store').send({ resetToken, expiresAt });
    },
  });

  app.get<{ Params: OrgMemberParams }>('/admin/organizations/:id/members/:memberId/mfa', {
    schema: {
      operationId: 'getOrganizationMemberMfa',
      tags: ['organizations'],
      summary: 'Whether a member has a second factor (never its secret).',
      params: OrgMemberParams,
      response: { 200: MfaStatusSchema, 400: ProblemSchema, 401: ProblemSchema, 404: problemOf('organizationNotFound', 'memberNotFound'), 429: problemOf('tooManyAdminRefusals') },
    },
    handler: async (request, reply) => {
      const member = await memberOf(request.params.id, request.params.memberId);
      return reply.header('cache-control', 'no-store').send(await mfa.status(request.params.id, member.id));
    },
  });

  app.delete<{ Params: OrgMemberParams }>('/admin/organizations/:id/members/:memberId/mfa', {
    schema: {
      operationId: 'removeOrganizationMemberMfa',
      tags: ['organizations'],
      summary: "Remove a member's second factor and its recovery codes; the member's login sessions end.",
      description: "As DELETE /admin/organizations/{id}/mfa, for one member that lost every factor and its recovery codes: its TOTP (pending too), passkeys, recovery codes and a pending passkey registration go; afterwards its password alone logs it in. Its login sessions end, on every replica; the other members' factors and sessions stay. For the first member this is the organization's own removal. Audited as `mfa.removed` with the member's id and e-mail in its details.",
      params: OrgMemberParams,
      response: { 200: MfaRemoved, 400: ProblemSchema, 401: ProblemSchema, 404: problemOf('organizationNotFound', 'memberNotFound'), 429: problemOf('tooManyAdminRefusals') },
    },
    handler: async (request, reply) => {
      const orgId = request.params.id;
      const member = await memberOf(orgId, request.params.memberId);
      const outcome = await mfa.removeByOperator(orgId, member.id);
      if (outcome.removed) {
        audit.info({ event: 'mfa.removed', orgId, memberId: member.id, sessionsEnded: outcome.sessionsEnded }, "a member's second factor removed by the operator");
        trail.record({ type: 'mfa.removed', orgId, ...admin(request), details: { sessionsEnded: outcome.sessionsEnded, memberId: member.id, memberEmail: member.email } });
      }
      return reply.send(outcome);
    },
  });
}
