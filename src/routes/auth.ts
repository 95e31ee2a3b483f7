import type { FastifyInstance } from 'fastify';
import { actingMember, actorOf, emailDigest, GATEWAY, type AuditTrail } from '../audit/trail.js';
import { firstMemberId } from '../store/members.js';
import { throttleAddress } from '../guards/client-address.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import { Problem } from '../problems.js';
import { normalizeEmail } from '../services/organizations.js';
import { LoginRefused, type SessionService } from '../services/sessions.js';
import type { MfaService } from '../services/mfa.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../request/error-handler.js';
import { LoginBody, LoginResponse, LogoutBody, NoContent, Problem as ProblemSchema, problemOf } from './schemas.js';
import { MfaRequiredProblem } from './mfa-schemas.js';
import { absentBodyIsEmpty } from './optional-body.js';

/** POST /auth/login and POST /auth/logout. */
export async function authRoutes(app: FastifyInstance, opts: { sessions: SessionService; throttle: LoginThrottle; audit: AuditTrail; mfa?: Pick<MfaService, 'challengeFor'> }) {
  const { sessions, throttle, audit, mfa } = opts;

  app.post<{ Body: LoginBody }>('/auth/login', {
    config: { auth: 'none', routeLabel: '/auth/login' },
    schema: {
      operationId: 'login',
      tags: ['auth'],
      summary: 'Log in with the organization\'s e-mail and password; returns a 1-hour token.',
      description: 'Needs no credential. The token answers as a bearer credential on every route; only a login token (not an API key) can create API keys or log out. Failed logins are limited per e-mail and per client address (429 with Retry-After).',
      body: LoginBody,
      response: {
        200: LoginResponse,
        400: ProblemSchema,
        401: problemOf('loginFailed'),
        403: MfaRequiredProblem,
        415: ProblemSchema,
        409: problemOf('sessionLimitReached'),
        429: problemOf('tooManyLoginAttempts', 'tooManyLogins', 'tooManyMfaTokens'),
        503: problemOf('storeUnavailable', 'overloaded'),
      },
    },
    handler: async (request, reply) => {
      const email = normalizeEmail(request.body.email);
      const address = throttleAddress(request.ip);
      // Counted before the password is judged (429 here when a limit is spent): see login-throttle.ts.
      const attempt = await throttle.attempt(email, address);
      let token: string;
      let orgId: string;
      let member: { id: string; email: string } | undefined;
      let who: ReturnType<typeof actingMember> | undefined;
      try {
        const org = await sessions.checkPassword(email, request.body.password);
        orgId = org.id;
        // An organization with a second factor: the password was right, but this is no login yet.
        // The second factor of whose password it was: the organization's (its first member's) or the member's own (issue 50).
        const challenge = mfa === undefined ? undefined : await mfa.challengeFor(org);
        if (challenge !== undefined) {
          // Not settled as a success (issue 45): the attempt stays counted until the second factor
          // succeeds (POST /auth/login/mfa settles it), or a right password would reset the
          // counts and let login → wrong codes → login again guess codes without end.
          audit.record({ type: 'login.mfa_required', orgId, ...actorOf(request) });
          return reply.code(403).header('content-type', PROBLEM_CONTENT_TYPE).header('cache-control', 'no-store')
            .send({ ...problemBody('mfaRequired', 'This organization has a second factor: finish at POST /auth/login/mfa with the mfaToken and a code.'), ...challenge });
        }
        token = await sessions.open(orgId, { userAgent: request.headers['user-agent'], address: request.ip }, org.memberId);
        if (org.memberId !== undefined) member = { id: org.memberId, email: org.memberEmail ?? '' };
        who = actingMember(orgId, member ?? { id: firstMemberId(orgId), email: org.email });
      } catch (error) {
        // The password was not judged, or was right and the organization's own limit refused the
        // session: nothing to count against the e-mail or the address.
        if (error instanceof Problem && (error.problem === 'overloaded' || error.problem === 'tooManyLogins' || error.problem === 'sessionLimitReached')) await attempt.notJudged();
        if (error instanceof Problem && error.problem === 'loginFailed') {
          // The organization whose e-mail it was sees the attempt in its own trail; an unknown
          // e-mail's stays the operator's (no orgId). The answer is the same either way, and the
          // record is queued off the request path, so neither tells the client which it was.
          const orgOf = error instanceof LoginRefused && error.orgId !== undefined ? { orgId: error.orgId } : {};
          // The e-mail only as a digest: the trail must not become a list of who tried what.
          audit.record({ type: 'login.failed', ...orgOf, ...actorOf(request), details: { reason: 'bad_password', emailDigest: emailDigest(email) } });
          if (attempt.exhausted) {
            request.log.warn({ event: 'login.throttled', address }, 'repeated failed logins');
            audit.record({ type: 'login.throttled', ...orgOf, ...actorOf(request), actorDetail: GATEWAY, details: { emailDigest: emailDigest(email) } });
          }
        }
        throw error;
      }
      audit.record({ type: 'login.succeeded', orgId, ...actorOf(request), ...(member !== undefined && { member }), ...who });
      await attempt.succeeded();
      return reply.header('cache-control', 'no-store').send({ token });
    },
  });

  app.post<{ Body: LogoutBody | undefined }>('/auth/logout', {
    config: { auth: 'login-token', routeLabel: '/auth/logout' },
    schema: {
      operationId: 'logout',
      tags: ['auth'],
      summary: 'End the login session of the token presented, or every session of the organization.',
      description: 'Needs a login token: the token is revoked at once, on every replica. With `{"everywhere": true}`, every login session of the organization ends (this one too); API keys are not sessions and stay.',
      body: LogoutBody,
      response: { 204: NoContent, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 415: ProblemSchema },
    },
    // No body (or an empty one): this session only.
    preValidation: absentBodyIsEmpty,
    handler: async (request, reply) => {
      const { orgId, credentialId } = request.principal!;
      if (request.body?.everywhere === true) {
        const ended = await sessions.endAll(orgId);
        request.log.info({ event: 'sessions.ended', orgId, sessions: ended, by: 'logout' }, 'logged out everywhere');
        audit.record({ type: 'sessions.ended', orgId, ...actorOf(request), details: { sessions: ended, by: 'logout' } });
      } else {
        await sessions.logout(credentialId);
        request.log.info({ event: 'logout', orgId }, 'logged out');
        audit.record({ type: 'logout', orgId, ...actorOf(request) });
      }
      return reply.code(204).send();
    },
  });
}
