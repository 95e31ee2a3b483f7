/** The JSON schemas of the second-factor routes (issue 32), apart from schemas.ts to keep it small. */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH } from '../credentials/passwords.js';
import { Problem, describeProblems } from './schemas.js';
import { AuthenticationResponse, PasskeyRequestOptions, PasskeySchema } from './passkey-schemas.js';

const CurrentPassword = Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'The password in use: required even on a fresh token.' });
// Six digits; anything else is simply a wrong code (counted), not a malformed request.
const Code = Type.String({ minLength: 1, maxLength: 16, description: 'The 6-digit code the authenticator app shows now.' });
const RecoveryCode = Type.String({ minLength: 1, maxLength: 64, description: 'One unused recovery code (`xxxxx-xxxxx-xxxxx-xxxxx`; case, spaces and dashes do not matter).' });

/** POST /auth/login's 403 for an organization with a second factor: a problem with the challenge. */
export const MfaRequiredProblem = Type.Object(
  {
    ...Problem.properties,
    // Optional: the route's other 403s (no User-Agent) are plain problems.
    mfaToken: Type.Optional(Type.String({ description: 'Single use, 5 minutes: pass it to POST /auth/login/mfa with a code. Five wrong codes spend it.' })),
    methods: Type.Optional(Type.Array(Type.String(), { description: 'What can finish the login: `totp`, `recovery_code`, `passkey`.' })),
    expiresIn: Type.Optional(Type.Integer({ description: 'Seconds the mfaToken lives.' })),
    passkeyOptions: Type.Optional({ ...PasskeyRequestOptions, description: 'With `passkey` in methods: the options for startAuthentication; its challenge is this mfaToken\'s.' }),
  },
  { description: `${describeProblems(['mfaRequired'])} (with mfaToken, methods, expiresIn, and passkeyOptions when a passkey can finish it), or:\n${describeProblems(['missingUserAgent'])}` },
);

export const MfaLoginBody = Type.Object(
  {
    mfaToken: Type.String({ minLength: 1, maxLength: 200, description: 'The mfaToken POST /auth/login answered with.' }),
    code: Type.Optional(Code),
    recoveryCode: Type.Optional(RecoveryCode),
    passkey: Type.Optional(AuthenticationResponse),
  },
  { additionalProperties: false, minProperties: 2, maxProperties: 2, description: 'The mfaToken and exactly one of `code`, `recoveryCode` and `passkey` (the AuthenticationResponseJSON of startAuthentication with the passkeyOptions of POST /auth/login).' },
);
export type MfaLoginBody = Static<typeof MfaLoginBody>;

/**
 * An authenticator change (TOTP enrolment, recovery codes, a passkey added or removed): the
 * current password, and while a second factor is enrolled one proof of it (issue 45). Without a
 * factor the password alone, as before, so clients of organizations without one are unchanged.
 */
export const CurrentPasswordBody = Type.Object(
  {
    currentPassword: CurrentPassword,
    code: Type.Optional({ ...Code, description: 'While TOTP is enabled: the authenticator app\'s current code (or give `recoveryCode`).' }),
    recoveryCode: Type.Optional({ ...RecoveryCode, description: 'While a second factor is enrolled, instead of `code`: one unused recovery code (used up).' }),
    passkey: Type.Optional({ ...AuthenticationResponse, description: 'While a passkey is enrolled, instead of `code`: the AuthenticationResponseJSON of startAuthentication over the passkeyOptions of POST /auth/mfa/step-up.' }),
  },
  { additionalProperties: false, maxProperties: 2, description: 'The current password and, while the organization has a second factor, one of `code`, `recoveryCode` and `passkey` (403 1123 without; 1119 or 1120 when wrong).' },
);
export type CurrentPasswordBody = Static<typeof CurrentPasswordBody>;
export const TotpConfirmBody = Type.Object({ code: Code }, { additionalProperties: false });
export type TotpConfirmBody = Static<typeof TotpConfirmBody>;
export const TotpRemoveBody = Type.Object({ currentPassword: CurrentPassword, code: Code }, { additionalProperties: false });
export type TotpRemoveBody = Static<typeof TotpRemoveBody>;

export const TotpEnrolment = Type.Object(
  {
    secret: Type.String({ description: 'The base32 secret, shown this once: enter it in the authenticator app (or scan the URI as a QR code).' }),
    otpauthUri: Type.String({ description: '`otpauth://totp/…`: the same secret as a URI for a QR code.' }),
  },
  { description: 'Pending until POST /auth/mfa/totp/confirm with a right code.' },
);
const RecoveryCodeList = Type.Array(Type.String(), { description: 'Ten single-use codes, shown this once; the gateway keeps only their hashes.' });
export const RecoveryCodes = Type.Object({ recoveryCodes: RecoveryCodeList });
/** TOTP confirmed: the codes only when it is the organization's first factor (a passkey's codes stay). */
export const TotpConfirmed = Type.Object({ recoveryCodes: Type.Optional(RecoveryCodeList) });
export const MfaStatusSchema = Type.Object({
  methods: Type.Array(Type.String(), { description: 'What a login can finish with; empty when no factor is enrolled.' }),
  totp: Type.Object({ enabled: Type.Boolean(), pending: Type.Boolean({ description: 'An enrolment waits for its first code.' }) }),
  recoveryCodesLeft: Type.Integer(),
  passkeys: Type.Array(PasskeySchema, { description: 'The organization\'s passkeys, oldest first (never their keys).' }),
});

/** GET /auth/mfa: the status, and what this gateway lets the organization add (the admin's view has no `offered`). */
export const OwnMfaStatusSchema = Type.Object({
  ...MfaStatusSchema.properties,
  offered: Type.Object(
    {
      totp: Type.Boolean({ description: 'An authenticator app can be set up (in production: AUTHGATE_MFA_ENCRYPTION_KEY is set).' }),
      passkey: Type.Boolean({ description: 'A passkey can be added (in production: AUTHGATE_WEBAUTHN_RP_ID and AUTHGATE_WEBAUTHN_ORIGINS are set).' }),
    },
    { description: 'What this gateway lets an organization add; what it has already keeps working either way.' },
  ),
});

/** POST /auth/mfa/step-up: a passkey's proof for the session's next authenticator change. */
export const StepUpOptions = Type.Object({
  passkeyOptions: { ...PasskeyRequestOptions, description: 'The options for startAuthentication; pass its answer as `passkey` with the change (5 minutes, once).' },
  expiresIn: Type.Integer({ description: 'Seconds the challenge lives.' }),
});
