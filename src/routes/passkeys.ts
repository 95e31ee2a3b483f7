/**
 * The organization's own management of its passkeys (issue 32; login token, `no-store`):
 * registration in two steps (the options, with the current password; then the authenticator's
 * response), rename, removal (with the current password). The login's passkey step is POST
 * /auth/login/mfa (routes/mfa.ts). A wrong current password counts against the login limits as
 * on the TOTP routes (guards/current-password.ts). Each member's passkeys are its own (issue 50).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { actorOf, type AuditTrail } from '../audit/trail.js';
import { refuseSpoofingName } from './display-names.js';
import type { LoginThrottle } from '../guards/login-throttle.js';
import { Problem } from '../problems.js';
import type { PasskeyService } from '../services/passkeys.js';
import type { PasswordChangeService } from '../services/password-changes.js';
import type { Organization } from '../store/store.js';
import { CurrentPasswordBody } from './mfa-schemas.js';
import type { MfaService } from '../services/mfa.js';
import { authenticatorChecks, STEP_UP_REFUSALS } from './step-up.js';
import { callersMemberId } from '../members/own-credentials.js';
import { PasskeyCreationOptions, PasskeyName, PasskeySchema, RegistrationResponse } from './passkey-schemas.js';
import { NoContent, Problem as ProblemSchema, problemOf } from './schemas.js';

const PasskeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1400, pattern: '^[A-Za-z0-9_-]+$' }) }, { additionalProperties: false });
type PasskeyParams = Static<typeof PasskeyParams>;
const FinishBody = Type.Object({ response: RegistrationResponse, name: Type.Optional(PasskeyName) }, { additionalProperties: false });
type FinishBody = Static<typeof FinishBody>;
const RenameBody = Type.Object({ name: PasskeyName }, { additionalProperties: false });
/** One passkey's path, renamed or removed there: one route label (its metrics) and a login token for both. */
const ONE_PASSKEY = { auth: 'login-token', routeLabel: '/auth/mfa/passkeys/:id' } as const;
type RenameBody = Static<typeof RenameBody>;

export async function passkeyRoutes(app: FastifyInstance, opts: {
  passkeys: PasskeyService;
  /** The step-up proof of an authenticator change while a second factor is enrolled (issue 45). */
  mfa: Pick<MfaService, 'proveSecondFactor'>;
  passwords: Pick<PasswordChangeService, 'verifyCurrent'>;
  findOrganization: (orgId: string) => Promise<Organization | undefined>;
  throttle: LoginThrottle;
  audit: AuditTrail;
}) {
  const { passkeys, passwords, throttle, audit, mfa } = opts;

  const checks = authenticatorChecks({ throttle, passwords, audit, findOrganization: opts.findOrganization, mfa });

  app.post<{ Body: CurrentPasswordBody }>('/auth/mfa/passkeys/registration', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/passkeys/registration' },
    schema: {
      operationId: 'beginPasskeyRegistration',
      tags: ['auth'],
      summary: 'Start registering a passkey: the options for navigator.credentials.create().',
      description: 'Needs a login token and the current password (403 1217, counted as a failed login), and while a second factor is enrolled a proof of it (`code`, `recoveryCode` or `passkey`: 403 1123 without, 1119 or 1120 when wrong). Answers `{options}` (user verification required, the organization\'s passkeys excluded); its challenge is kept by the gateway for 5 minutes, one pending registration per organization (a new call replaces it). Finish with POST /auth/mfa/passkeys. In production without the WebAuthn settings 409 (1231); at 10 passkeys 409 (1233).',
      body: CurrentPasswordBody,
      response: {
        200: Type.Object({ options: PasskeyCreationOptions }),
        400: ProblemSchema,
        401: ProblemSchema,
        ...STEP_UP_REFUSALS,
        409: problemOf('passkeysNotConfigured', 'passkeyLimitReached'),
        415: ProblemSchema,
      },
    },
    handler: async (request, reply) => {
      if (!passkeys.offered) throw new Problem('passkeysNotConfigured', 'The operator has not set AUTHGATE_WEBAUTHN_RP_ID and AUTHGATE_WEBAUTHN_ORIGINS: passkeys cannot be registered.');
      const org = await checks.stepUp(request, request.body, 'passkey_registration');
      const options = await passkeys.beginRegistration(org);
      return reply.header('cache-control', 'no-store').send({ options });
    },
  });

  app.post<{ Body: FinishBody }>('/auth/mfa/passkeys', {
    config: { auth: 'login-token', routeLabel: '/auth/mfa/passkeys' },
    schema: {
      operationId: 'registerPasskey',
      tags: ['auth'],
      summary: 'Finish registering a passkey with the authenticator\'s response.',
      description: 'The response of startRegistration over the pending registration\'s options, and an optional name (default `Passkey N`). Answers 201 `{passkey}`, with `recoveryCodes` (ten, shown once) when it is the organization\'s first second factor. The pending registration is used up either way: none pending (never begun, expired, used) 400 (1229); a response that does not verify (another origin or RP ID, another challenge, user not verified) 403 (1120); already registered 409 (1232). Nothing is stored on a refusal. Audited as `mfa.passkey_added`.',
      body: FinishBody,
      response: {
        201: Type.Object({ passkey: PasskeySchema, recoveryCodes: Type.Optional(Type.Array(Type.String(), { description: 'Only with the first factor: ten single-use codes, shown this once.' })) }),
        400: problemOf('badRequest', 'malformedJson', 'passkeyRegistrationInvalid'),
        401: ProblemSchema,
        403: problemOf('passkeyRejected', 'loginTokenRequired'),
        409: problemOf('passkeysNotConfigured', 'passkeyAlreadyRegistered', 'passkeyLimitReached'),
        415: ProblemSchema,
      },
    },
    handler: async (request, reply) => {
      const { orgId } = request.principal!;
      refuseSpoofingName('body/name', request.body.name);
      // The schema bounds the response's shape; the library reads it as what the browser sent.
      const added = await passkeys.finishRegistration(orgId, request.body.response as unknown as RegistrationResponseJSON, request.body.name, callersMemberId(request));
      request.log.info({ event: 'mfa.passkey_added', orgId }, 'passkey registered');
      audit.record({ type: 'mfa.passkey_added', orgId, ...actorOf(request), details: { name: added.passkey.name } });
      return reply.code(201).header('cache-control', 'no-store').send(added);
    },
  });

  app.patch<{ Params: PasskeyParams; Body: RenameBody }>('/auth/mfa/passkeys/:id', {
    config: ONE_PASSKEY,
    schema: {
      operationId: 'renamePasskey',
      tags: ['auth'],
      summary: 'Rename a passkey.',
      description: 'Unknown id (or another organization\'s) 404 (1230).',
      params: PasskeyParams,
      body: RenameBody,
      response: { 200: PasskeySchema, 400: ProblemSchema, 401: ProblemSchema, 403: problemOf('loginTokenRequired'), 404: problemOf('passkeyNotFound'), 415: ProblemSchema },
    },
    handler: async (request, reply) => {
      refuseSpoofingName('body/name', request.body.name);
      const renamed = await passkeys.rename(request.principal!.orgId, request.params.id, request.body.name, callersMemberId(request));
      return reply.header('cache-control', 'no-store').send(renamed);
    },
  });

  app.delete<{ Params: PasskeyParams; Body: CurrentPasswordBody }>('/auth/mfa/passkeys/:id', {
    config: ONE_PASSKEY,
    schema: {
      operationId: 'removePasskey',
      tags: ['auth'],
      summary: 'Remove a passkey, with the current password and a proof of the second factor.',
      description: 'Wrong password 403 (1217, counted as a failed login); a proof of the second factor is needed too (`code`, `recoveryCode` or `passkey`: 403 1123 without, 1119 or 1120 when wrong); unknown id 404 (1230). Removing the organization\'s last factor removes its recovery codes too: the password alone logs in again. Audited as `mfa.passkey_removed`.',
      params: PasskeyParams,
      body: CurrentPasswordBody,
      response: {
        204: NoContent,
        400: ProblemSchema,
        401: ProblemSchema,
        ...STEP_UP_REFUSALS,
        404: problemOf('passkeyNotFound'),
        415: ProblemSchema,
      },
    },
    handler: async (request, reply) => {
      const org = await checks.stepUp(request, request.body, 'passkey_removal');
      await passkeys.remove(org.id, request.params.id, org.memberId);
      request.log.info({ event: 'mfa.passkey_removed', orgId: org.id }, 'passkey removed');
      audit.record({ type: 'mfa.passkey_removed', orgId: org.id, ...actorOf(request) });
      return reply.code(204).header('cache-control', 'no-store').send();
    },
  });
}
