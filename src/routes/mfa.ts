/**
 * The second factor's routes (issue 32): the login's second step (POST
 * /auth/login/mfa, no credential: the mfaToken is it) and the organization's own management of
 * TOTP and recovery codes (login token). Wrong codes and wrong current passwords count against
 * the login limits as failed logins do (guards/login-throttle.ts), per e-mail and per address;
 * every proof of the second factor also counts against the organization's own bound
 * (guards/second-factor-bound.ts, issue 45), and an authenticator change while a factor is
 * enrolled proves it (step-up.ts; POST /auth/mfa/step-up gives a passkey its challenge). Each
 * member manages its own second factor (issue 50, members/own-credentials.ts): the first member's
 * is the organization's.
 */
import type { FastifyInstance } from 'fastify';
import { actingMember, actorOf, GATEWAY, type AuditTrail } from '../audit/trail.js';
import { firstMemberId } from '../store/members.js';
import { throttleAddress } from '../guards/client-address.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import { Problem } from '../problems.js';
import { MFA_TOKEN_TTL_SECONDS, type MfaService } from '../services/mfa.js';
import { normalizeEmail } from '../services/organizations.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import type { Organization } from '../store/store.js';
import { CurrentPasswordBody, MfaLoginBody, OwnMfaStatusSchema, StepUpOptions, RecoveryCodes, TotpConfirmBody, TotpConfirmed, TotpEnrolment, TotpRemoveBody } from './mfa-schemas.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { LoginResponse, NoContent, Problem as ProblemSchema, problemOf } from './schemas.js';
import { auditWrongProof, authenticatorChecks, STEP_UP_REFUSALS } from './step-up.js';
import { callersMemberId, credentialOwner } from '../members/own-credentials.js';

export async function mfaRoutes(app: FastifyInstance, opts: {
  mfa: MfaService;
  passwords: Pick<PasswordChangeService, 'verifyCurrent'>;
  findOrganization: (orgId: string) => Promise<Organization | undefined>;
  throttle: LoginThrottle;
  audit: AuditTrail;
  /** false in production without AUTHGATE_MFA_ENCRYPTION_KEY: no enrolment (1228). */
  enrolment: boolean;
  /** false in production without AUTHGATE_WEBAUTHN_RP_ID and _ORIGINS: no passkey registration (1231). */
  passkeysOffered: boolean;
}) {
  const { mfa, passwords, throttle, audit } = opts;

  const checks = authenticatorChecks({ throttle, passwords, audit, findOrganization: opts.findOrganization, mfa });

  app.post<{ Body: MfaLoginBody }>('/auth/login/mfa', {
    config: { auth: 'none', routeLabel: '/auth/login/mfa' },
    schema: {
      operationId: 'loginSecondFactor',
      tags: ['auth'],
      summary: 'Finish a login with a second factor: the mfaToken and a TOTP code, a recovery code or a passkey.',
      description: 'Needs no credential: the mfaToken POST /auth/login answered with (403, 1116) is it, single use, for 5 minutes. A right code (now, or one 30-second step either side, each step accepted once), an unused recovery code or a passkey\'s assertion over the login\'s passkeyOptions (user verified, its signature counter above the last one) gives a 1-hour token as POST /auth/login does. A wrong code or an assertion that does not verify is 401 (1117) and counts against the login limits as a failed login (429, 1108) and against the organization\'s bound on wrong proofs (AUTHGATE_MFA_FAILURE_LIMIT in a row, every replica and address: then 429 1121, the right code too, until 24 hours after the first); the fifth spends the mfaToken (401, 1118, as for an unknown, used or expired one). The password\'s attempt is settled (the login limits given back) only here, on success.',
      body: MfaLoginBody,
      response: {
        200: LoginResponse,
        400: ProblemSchema,
        401: problemOf('mfaCodeWrong', 'mfaTokenInvalid'),
        409: problemOf('sessionLimitReached'),
        415: ProblemSchema,
        429: problemOf('tooManyLoginAttempts', 'tooManyLogins', 'tooManySecondFactorFailures'),
        503: problemOf('storeUnavailable', 'overloaded'),
      },
    },
    handler: async (request, reply) => {
      const found = await mfa.challenge(request.body.mfaToken);
      const orgId = found.org.id;
      const address = throttleAddress(request.ip);
      const attempt = await throttle.attempt(normalizeEmail(found.org.email), address);
      let outcome: { token: string; used: 'totp' | 'recovery_code' | 'passkey' };
      try {
        // The schema bounds the passkey's shape; the library reads it as what the browser sent.
        const passkey = request.body.passkey as AuthenticationResponseJSON | undefined;
        outcome = await mfa.finishLogin(found, { code: request.body.code, recoveryCode: request.body.recoveryCode, passkey }, { userAgent: request.headers['user-agent'], address: request.ip });
      } catch (error) {
        if (error instanceof Problem && (error.problem === 'mfaCodeWrong' || error.problem === 'mfaTokenInvalid')) {
          audit.record({ type: 'login.failed', orgId, ...actorOf(request), details: { reason: 'bad_second_factor' } });
          if (attempt.exhausted) audit.record({ type: 'login.throttled', orgId, ...actorOf(request), actorDetail: GATEWAY });
        } else if (error instanceof Problem) {
          await attempt.notJudged();
        }
        throw error;
      }
      await attempt.succeeded();
      // Whose second factor it was (issue 50): the organization's (its first member's) or a member's own.
      const who = actingMember(orgId, { id: found.org.memberId ?? firstMemberId(orgId), email: found.org.email });
      if (outcome.used === 'recovery_code') audit.record({ type: 'mfa.recovery_code_used', orgId, ...actorOf(request), ...who });
      audit.record({ type: 'login.succeeded', orgId, ...actorOf(request), ...who, details: { secondFactor: outcome.used } });
      return reply.header('cache-control', 'no-store').send({ token: outcome.token });
    },
  });

  app.get('/auth/mfa', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa' },
    schema: {
      operationId: 'getSecondFactors',
      tags: ['auth'],
      summary: 'What second factors the caller has enrolled (its own: the organization\'s, or a member\'s).',
      response: { 200: OwnMfaStatusSchema, 401: ProblemSchema, 403: problemOf('loginTokenRequired') },
    },
    handler: async (request, reply) => {
      const status = await mfa.status(request.principal!.orgId, callersMemberId(request));
      // What may be added here, so a page offers only what works (the operator's settings, never the organization's).
      return reply.header('cache-control', 'no-store').send({ ...status, offered: { totp: opts.enrolment, passkey: opts.passkeysOffered } });
    },
  });

  app.post('/auth/mfa/step-up', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/step-up' },
    schema: {
      operationId: 'beginStepUp',
      tags: ['auth'],
      summary: 'Passkey options to prove the second factor for the next authenticator change of this session.',
      description: 'Needs a login token of an organization with a passkey (404 1230 without one). The assertion over these options goes as `passkey` in the body of the change (adding or removing TOTP or a passkey, new recovery codes), once, within 5 minutes; a new call replaces it. A code or a recovery code needs no call here.',
      response: { 200: StepUpOptions, 401: ProblemSchema, 403: problemOf('loginTokenRequired'), 404: problemOf('passkeyNotFound') },
    },
    handler: async (request, reply) => {
      const found = await opts.findOrganization(request.principal!.orgId);
      if (found === undefined) throw new Problem('credentialInvalid', undefined, 'organization_gone');
      const passkeyOptions = await mfa.stepUpOptions(credentialOwner(found, request.member), request.principal!.credentialId);
      if (passkeyOptions === undefined) throw new Problem('passkeyNotFound', 'The organization has no passkey to prove: give `code` or `recoveryCode` with the change.');
      return reply.header('cache-control', 'no-store').send({ passkeyOptions, expiresIn: MFA_TOKEN_TTL_SECONDS });
    },
  });

  app.post<{ Body: CurrentPasswordBody }>('/auth/mfa/totp', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/totp' },
    schema: {
      operationId: 'enrolTotp',
      tags: ['auth'],
      summary: 'Start TOTP enrolment: a new secret, pending until confirmed with a code.',
      description: 'Needs a login token and the current password (403 1217, counted as a failed login), and beside a passkey a proof of the second factor (`code`, `recoveryCode` or `passkey`: 403 1123 without, 1119 or 1120 when wrong). Answers the secret once; it works only after POST /auth/mfa/totp/confirm. A new call replaces a pending secret; with TOTP already enabled 409 (1225).',
      body: CurrentPasswordBody,
      response: {
        200: TotpEnrolment,
        400: ProblemSchema,
        401: ProblemSchema,
        ...STEP_UP_REFUSALS,
        409: problemOf('totpAlreadyEnabled', 'mfaNotConfigured'),
        415: ProblemSchema,
      },
    },
    handler: async (request, reply) => {
      if (!opts.enrolment) throw new Problem('mfaNotConfigured', 'The operator has not set AUTHGATE_MFA_ENCRYPTION_KEY: second factors cannot be enrolled.');
      const org = await checks.stepUp(request, request.body, 'totp_enrolment');
      const enrolment = await mfa.beginTotp(org);
      return reply.header('cache-control', 'no-store').send(enrolment);
    },
  });

  app.post<{ Body: TotpConfirmBody }>('/auth/mfa/totp/confirm', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/totp/confirm' },
    schema: {
      operationId: 'confirmTotp',
      tags: ['auth'],
      summary: 'Activate the pending TOTP secret with a code; answers the recovery codes once.',
      description: 'The recovery codes come only when TOTP is the organization\'s first factor (beside a passkey its codes stay, and none are answered). The code\'s time step counts as used. A wrong code is 403 (1119); without a pending enrolment 409 (1226). From now on POST /auth/login answers 403 (1116) with an mfaToken. Audited as `mfa.totp_enabled`.',
      body: TotpConfirmBody,
      response: {
        200: TotpConfirmed,
        400: ProblemSchema,
        401: ProblemSchema,
        403: problemOf('mfaCodeRejected', 'loginTokenRequired'),
        409: problemOf('totpNotPending'),
        415: ProblemSchema,
      },
    },
    handler: async (request, reply) => {
      const { orgId } = request.principal!;
      const recoveryCodes = await mfa.confirmTotp(orgId, request.body.code, callersMemberId(request));
      request.log.info({ event: 'mfa.totp_enabled', orgId }, 'TOTP enabled');
      audit.record({ type: 'mfa.totp_enabled', orgId, ...actorOf(request) });
      return reply.header('cache-control', 'no-store').send(recoveryCodes === undefined ? {} : { recoveryCodes });
    },
  });

  app.delete<{ Body: TotpRemoveBody }>('/auth/mfa/totp', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/totp' },
    schema: {
      operationId: 'removeTotp',
      tags: ['auth'],
      summary: 'Remove TOTP (and its recovery codes), with the current password and a code.',
      description: 'Wrong password 403 (1217, counted as a failed login); wrong code 403 (1119, audited as `mfa.code_failed` and counted under the organization\'s bound on wrong proofs: 429 1121 once spent); no TOTP 409 (1227). Audited as `mfa.totp_disabled`.',
      body: TotpRemoveBody,
      response: {
        204: NoContent,
        400: ProblemSchema,
        401: ProblemSchema,
        403: problemOf('currentPasswordWrong', 'mfaCodeRejected', 'loginTokenRequired'),
        409: problemOf('totpNotEnabled'),
        415: ProblemSchema,
        429: problemOf('tooManyLoginAttempts', 'tooManySecondFactorFailures'),
      },
    },
    handler: async (request, reply) => {
      const org = await checks.currentPassword(request, request.body.currentPassword);
      try {
        await mfa.disableTotp(org.id, request.body.code, org.memberId);
      } catch (error) {
        auditWrongProof(audit, request, org.id, error, 'totp_removal');
        throw error;
      }
      request.log.info({ event: 'mfa.totp_disabled', orgId: org.id }, 'TOTP removed');
      audit.record({ type: 'mfa.totp_disabled', orgId: org.id, ...actorOf(request) });
      return reply.code(204).send();
    },
  });

  app.post<{ Body: CurrentPasswordBody }>('/auth/mfa/recovery-codes', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/recovery-codes' },
    schema: {
      operationId: 'regenerateRecoveryCodes',
      tags: ['auth'],
      summary: 'New recovery codes (the old ones stop working), with the current password.',
      description: 'Works while any second factor (TOTP or a passkey) is active, with a proof of it beside the password (`code`, `recoveryCode` or `passkey`: 403 1123 without, 1119 or 1120 when wrong, counted under the organization\'s bound). Wrong password 403 (1217, counted); no factor 409 (1227). Audited as `mfa.recovery_codes_regenerated`.',
      body: CurrentPasswordBody,
      response: {
        200: RecoveryCodes,
        400: ProblemSchema,
        401: ProblemSchema,
        ...STEP_UP_REFUSALS,
        409: problemOf('totpNotEnabled'),
        415: ProblemSchema,
      },
    },
    handler: async (request, reply) => {
      const org = await checks.stepUp(request, request.body, 'recovery_codes');
      const recoveryCodes = await mfa.regenerateRecoveryCodes(org.id, org.memberId);
      audit.record({ type: 'mfa.recovery_codes_regenerated', orgId: org.id, ...actorOf(request) });
      return reply.header('cache-control', 'no-store').send({ recoveryCodes });
    },
  });
}
