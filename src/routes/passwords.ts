import type { FastifyInstance } from 'fastify';
import { actorOf, memberById, type AuditTrail } from '../audit/trail.js';
import { firstMemberId } from '../store/members.js';
import { throttleAddress } from '../guards/client-address.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import type { ResetThrottle } from '../guards/reset-throttle.js';
import { Problem } from '../problems.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import { LoginResponse, NoContent, PASSWORD_PROBLEMS, PasswordChangeBody, PasswordResetBody, Problem as ProblemSchema, problemOf } from './schemas.js';
import { judgeCurrentPassword } from '../guards/current-password.js';
import { callersMemberId } from '../members/own-credentials.js';

/** POST /auth/password (change, login token) and POST /auth/password/reset (no credential): issue 31. */
export async function passwordRoutes(app: FastifyInstance, opts: { passwords: PasswordChangeService; throttle: LoginThrottle; resets: ResetThrottle; audit: AuditTrail }) {
  const { passwords, throttle, resets, audit } = opts;

  app.post<{ Body: PasswordChangeBody }>('/auth/password', {
    config: { auth: 'login-token', routeLabel: '/auth/password' },
    schema: {
      operationId: 'changePassword',
      tags: ['auth'],
      summary: 'Change the caller\'s own password (the organization\'s, or a member\'s); its other login sessions end; returns a new token.',
      description:
        'Needs a login token and the current password, even on a fresh token. Each member changes its own password (issue 50); the organization\'s own e-mail and password are its first member\'s. A wrong current password is a 403 (1217; not 401: the token is still good) and counts against the login limits exactly as a failed login (per e-mail and per client address, across replicas: 429 1108 once spent). The new password goes through the password policy with the organization\'s name and e-mail as context (400, 1213-1216). On success the password is replaced and every login session of the organization (a member\'s: every one of that member) ends at once on every replica, the one presented included: the answer carries the token of a new session, which replaces it. **API keys are not revoked**: they are separate credentials; delete or roll them (DELETE /auth/api-keys/{id}) if they may have leaked too. Audited as `password.changed`, never with a password.',
      body: PasswordChangeBody,
      response: {
        200: LoginResponse,
        400: problemOf('badRequest', ...PASSWORD_PROBLEMS),
        401: ProblemSchema,
        403: problemOf('currentPasswordWrong', 'loginTokenRequired'),
        409: problemOf('sessionLimitReached'),
        415: ProblemSchema,
        429: problemOf('tooManyLoginAttempts', 'tooManyLogins'),
        503: problemOf('storeUnavailable', 'overloaded'),
      },
    },
    handler: async (request, reply) => {
      const { orgId } = request.principal!;
      const { currentPassword, newPassword } = request.body;
      // The caller's own: a member's (issue 50), or the organization's (its first member's).
      const memberId = callersMemberId(request);
      // The policy first: a refused new password costs no argon2 slot and no login attempt.
      const org = await passwords.enforcePolicy(orgId, newPassword, memberId);
      const attempt = await judgeCurrentPassword({ throttle, passwords, audit }, request, org, currentPassword, 'password.change_failed');
      const { token, sessionsEnded } = await passwords.change(orgId, newPassword, { userAgent: request.headers['user-agent'], address: request.ip }, memberId);
      await attempt.succeeded();
      request.log.info({ event: 'password.changed', orgId, sessionsEnded }, 'password changed');
      audit.record({ type: 'password.changed', orgId, ...actorOf(request), details: { sessionsEnded } });
      return reply.header('cache-control', 'no-store').send({ token });
    },
  });

  app.post<{ Body: PasswordResetBody }>('/auth/password/reset', {
    config: { auth: 'none', routeLabel: '/auth/password/reset' },
    schema: {
      operationId: 'resetPassword',
      tags: ['auth'],
      summary: 'Set a new password with a one-time reset token from the operator; signs in nowhere (204).',
      description:
        'Needs no credential: the reset token (`agr_…`, made by POST /admin/organizations/{id}/password-reset, by POST /admin/organizations/{id}/members/{memberId}/password-reset for a member, or by creating an organization without a password) is it. It works once, until it expires (AUTHGATE_PASSWORD_RESET_TTL_SECONDS, 24 hours by default), and only while it is the organization\'s newest. The new password goes through the password policy (400, 1213-1216; the token stays usable). On success every login session of the organization ends (of a member\'s token: every session of that member); answered 204 with no body: log in with POST /auth/login. A malformed, unknown, used, replaced or expired token is one answer (400, 1218); attempts are limited per client address across replicas (429, 1219, with Retry-After), a success giving its count back. API keys are not revoked.',
      body: PasswordResetBody,
      response: {
        204: NoContent,
        400: problemOf('badRequest', 'resetTokenInvalid', ...PASSWORD_PROBLEMS),
        415: ProblemSchema,
        429: problemOf('tooManyResetAttempts'),
        503: problemOf('storeUnavailable', 'overloaded'),
      },
    },
    handler: async (request, reply) => {
      const address = throttleAddress(request.ip);
      const attempt = await resets.attempt(address);
      let outcome: { orgId: string; memberId?: string; sessionsEnded: number };
      try {
        outcome = await passwords.reset(request.body.resetToken, request.body.newPassword);
      } catch (error) {
        if (error instanceof Problem && error.problem === 'resetTokenInvalid') {
          // Never the token, nor a digest of it: the address's network only.
          request.log.info({ event: 'password.reset_refused' }, 'reset token refused');
          audit.record({ type: 'password.reset_refused', ...actorOf(request) });
        }
        throw error;
      }
      await attempt.succeeded();
      const { orgId, memberId, sessionsEnded } = outcome;
      request.log.info({ event: 'password.reset', orgId, memberId, sessionsEnded }, 'password reset');
      // The reset token's holder acted: the member whose token it was (the first member's is the organization's).
      audit.record({ type: 'password.reset', orgId, ...actorOf(request), actorDetail: memberById(memberId ?? firstMemberId(orgId)), details: { sessionsEnded, ...(memberId !== undefined && { memberId }) } });
      return reply.code(204).send();
    },
  });
}
