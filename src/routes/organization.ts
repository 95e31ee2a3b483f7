import type { FastifyInstance } from 'fastify';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import type { AuditEvent } from '../store/audit.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import { Problem } from '../problems.js';
import { emailDomain, type ProfileOutcome, type ProfileService } from '../services/organization-profiles.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import { firstMemberId, type Member } from '../store/members.js';
import type { Organization } from '../store/store.js';
import { refuseSpoofingName } from './display-names.js';
import { ProfileChangeBody, ProfileResponse } from './organization-schemas.js';
import { Problem as ProblemSchema, problemOf } from './schemas.js';
import { judgeCurrentPassword } from '../guards/current-password.js';
import { credentialOwner } from '../members/own-credentials.js';

/** What GET and PATCH /auth/organization answer: never the password hash; and the member asking (set by the role guard). */
export const profileView = (org: Organization, member?: Member) => ({
  id: org.id,
  name: org.name,
  email: org.email,
  createdAt: org.createdAt,
  // The first member's e-mail is the organization's: as it is after a PATCH that changed it.
  ...(member !== undefined && { member: { id: member.id, email: member.id === firstMemberId(org.id) ? org.email : member.email, role: member.role, first: member.id === firstMemberId(org.id) } }),
});

/**
 * The audit events of a change (both routes): `organization.name_changed`, and
 * `organization.email_changed` naming both domains only; the previous address goes to the notice
 * extras (audit/trail.ts), never to the trail or a log line.
 */
export function recordProfileChange(audit: AuditTrail, outcome: ProfileOutcome, who: Pick<AuditEvent, 'actor' | 'credential' | 'network' | 'member' | 'actorDetail'>): void {
  const orgId = outcome.organization.id;
  if (outcome.nameChanged) audit.record({ type: 'organization.name_changed', orgId, ...who });
  if (outcome.emailChanged) {
    const details = { previousDomain: emailDomain(outcome.previousEmail), newDomain: emailDomain(outcome.organization.email), sessionsEnded: outcome.sessionsEnded };
    audit.record({ type: 'organization.email_changed', orgId, ...who, details }, { previousEmail: outcome.previousEmail });
  }
}

/** GET and PATCH /auth/organization (login token): the organization's own name and e-mail (issue 31). */
export async function organizationRoutes(app: FastifyInstance, opts: { profiles: ProfileService; passwords: Pick<PasswordChangeService, 'verifyCurrent'>; throttle: LoginThrottle; audit: AuditTrail }) {
  const { profiles, passwords, throttle, audit } = opts;

  app.get('/auth/organization', {
    config: { auth: 'login-token', routeLabel: '/auth/organization' },
    schema: {
      operationId: 'getOwnOrganization',
      tags: ['auth'],
      summary: 'The organization of the login token: its id, name, e-mail and creation time, and the member the token acts as (its role).',
      response: { 200: ProfileResponse, 401: ProblemSchema, 403: problemOf('loginTokenRequired'), 503: problemOf('storeUnavailable', 'overloaded') },
    },
    handler: async (request, reply) => reply.header('cache-control', 'no-store').send(profileView(await profiles.current(request.principal!.orgId), request.member)),
  });

  app.patch<{ Body: ProfileChangeBody }>('/auth/organization', {
    config: { auth: 'login-token', routeLabel: '/auth/organization' },
    schema: {
      operationId: 'changeOwnOrganization',
      tags: ['auth'],
      summary: "Change the organization's name and/or e-mail; an e-mail change ends every other login session.",
      description:
        'Needs a login token, and at least one of `name` and `email` (400, 1222). An e-mail change needs the caller\'s own `currentPassword` (the signed-in member\'s; 400, 1223), even on a fresh token: a wrong one is a 403 (1217) counted against the login limits exactly as a failed login (429 1108 once spent). The new e-mail must be free across the whole store (409, 1303; of changes and sign-ups racing for one address exactly one wins); a concurrent change of this organization\'s own e-mail is 409 (1224) and changes nothing. On an e-mail change every login session of the organization ends on every replica except the one presented; a name change ends none. The upstream\'s identity assertion (x-authgate-identity) carries the new values at once on every replica. Audited as `organization.name_changed` and `organization.email_changed` (with both e-mails\' domains only). Answers the organization as GET /auth/organization does.',
      body: ProfileChangeBody,
      response: {
        200: ProfileResponse,
        400: problemOf('badRequest', 'nothingToChange', 'currentPasswordRequired'),
        401: ProblemSchema,
        403: problemOf('currentPasswordWrong', 'loginTokenRequired'),
        409: problemOf('emailTaken', 'profileChangeConflict'),
        415: ProblemSchema,
        429: problemOf('tooManyLoginAttempts'),
        503: problemOf('storeUnavailable', 'overloaded'),
      },
    },
    handler: async (request, reply) => {
      const { orgId, credentialId } = request.principal!;
      const { name, email, currentPassword } = request.body;
      if (name === undefined && email === undefined) throw new Problem('nothingToChange', 'Give `name`, `email` or both.');
      refuseSpoofingName('name', name);
      if (email !== undefined) {
        if (currentPassword === undefined) throw new Problem('currentPasswordRequired', 'Changing the e-mail needs `currentPassword`.');
        // Judged before the new e-mail is looked at: without the password, nobody learns whether an address is taken.
        // The caller's own password (issue 50): an owner other than the first proves its own.
        const org = credentialOwner(await profiles.current(orgId), request.member);
        const attempt = await judgeCurrentPassword({ throttle, passwords, audit }, request, org, currentPassword, 'organization.email_change_failed');
        await attempt.succeeded();
      }
      const outcome = await profiles.change(orgId, { name, email }, credentialId);
      // Never the addresses: which fields changed, and how many sessions ended.
      request.log.info({ event: 'organization.profile_changed', orgId, nameChanged: outcome.nameChanged, emailChanged: outcome.emailChanged, sessionsEnded: outcome.sessionsEnded }, 'organization profile changed');
      recordProfileChange(audit, outcome, actorOf(request));
      return reply.header('cache-control', 'no-store').send(profileView(outcome.organization, request.member));
    },
  });
}
