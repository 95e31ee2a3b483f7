/**
 * Every answer the gateway gives that is not a success, in one table. The `code` of each is a
 * public contract: never renumbered, never reused (test/problems.test.ts checks that each is
 * documented in the README). Only request/error-handler.ts renders them.
 */
type ProblemSpec = { readonly status: number; readonly code: number; readonly title: string };

export const problems = {
  // 1010 is fixed by the interface: the bot-protection answer to a missing User-Agent.
  missingUserAgent: { status: 403, code: 1010, title: 'User-Agent header required' },

  // Credentials
  credentialMissing: { status: 401, code: 1101, title: 'Bearer credential required' },
  credentialInvalid: { status: 401, code: 1102, title: 'Invalid bearer credential' },
  loginTokenRequired: { status: 403, code: 1103, title: 'This operation needs a login token' },
  wrongEnvironment: { status: 401, code: 1104, title: 'Credential of another environment' },
  loginFailed: { status: 401, code: 1105, title: 'Invalid e-mail or password' },
  // The credential is valid but lacks the route's scope (authz/authorize.ts).
  insufficientScope: { status: 403, code: 1106, title: 'Insufficient scope' },
  adminTokenInvalid: { status: 401, code: 1107, title: 'Admin token required' },
  tooManyLoginAttempts: { status: 429, code: 1108, title: 'Too many failed logins' },
  tooManyLeakReports: { status: 429, code: 1109, title: 'Too many leak reports' },
  // The credential's rate limit on forwarded routes (limits/).
  rateLimited: { status: 429, code: 1110, title: 'Rate limit exceeded' },
  // The organization's (or the key's own) quota for this period (issue 47, limits/quota.ts).
  quotaExceeded: { status: 429, code: 1125, title: 'Quota exceeded' },
  // One organization's growth (issue 26): keys and sessions made per window, across replicas.
  tooManyKeyCreations: { status: 429, code: 1111, title: 'Too many API keys created' },
  tooManyLogins: { status: 429, code: 1112, title: 'Too many logins' },
  // Too many refused admin requests from one client address (guards/admin-refusal-throttle.ts).
  tooManyAdminRefusals: { status: 429, code: 1113, title: 'Too many refused admin requests' },
  // The edge proxies' authorization port (issue 30, edge-authz/): a peer not in AUTHGATE_AUTHZ_TRUSTED_PROXIES.
  authzUntrustedPeer: { status: 403, code: 1114, title: 'Not a trusted proxy' },
  // The second factor (issue 32): a right password of an organization with a factor is not yet a
  // login; the mfaToken it answers with is finished at POST /auth/login/mfa.
  mfaRequired: { status: 403, code: 1116, title: 'Second factor required' },
  mfaCodeWrong: { status: 401, code: 1117, title: 'Invalid second-factor code' },
  mfaTokenInvalid: { status: 401, code: 1118, title: 'Invalid or expired mfaToken' },
  // 403, not 401: a logged-in caller's wrong code when enrolling or removing; the token is still good.
  mfaCodeRejected: { status: 403, code: 1119, title: 'Second-factor code wrong' },
  // A passkey registration whose response does not verify (origin, RP ID, challenge, user
  // verification, signature): 403 as 1119, the caller's token is still good; nothing is stored.
  passkeyRejected: { status: 403, code: 1120, title: 'Passkey not accepted' },
  // Provider tokens (issue 49, src/issuers/): a verified token whose organization claim names no
  // organization here, and a token of an issuer the route does not list.
  issuerOrganizationUnknown: { status: 401, code: 1140, title: 'No organization for this token' },
  issuerNotAccepted: { status: 403, code: 1141, title: 'Issuer not accepted on this route' },
  // Issue 45 (guards/second-factor-bound.ts): an organization's consecutive wrong second-factor
  // proofs reached their bound (every replica, every address), and the mfaTokens issued to it.
  tooManySecondFactorFailures: { status: 429, code: 1121, title: 'Too many wrong second-factor codes' },
  tooManyMfaTokens: { status: 429, code: 1122, title: 'Too many second-factor challenges' },
  // A change to the authenticators while a second factor is enrolled, without proving it.
  secondFactorRequired: { status: 403, code: 1123, title: 'Second factor required for this change' },
  // Members (issue 50): the signed-in member's role does not allow this; the detail names the role.
  memberRoleForbidden: { status: 403, code: 1124, title: "Not allowed for the member's role" },
  // Plans (issue 47): a key given (created or narrowed with) a scope its organization's plan does not include.
  scopesOutsidePlan: { status: 403, code: 1130, title: 'Scope outside the plan' },

  // Requests
  badRequest: { status: 400, code: 1200, title: 'Invalid request' },
  malformedJson: { status: 400, code: 1201, title: 'Malformed JSON body' },
  // An organization moved to a plan the routes file does not declare (issue 47).
  unknownPlan: { status: 400, code: 1250, title: 'Unknown plan' },
  unsupportedMediaType: { status: 415, code: 1202, title: 'Unsupported media type' },
  payloadTooLarge: { status: 413, code: 1203, title: 'Request body too large' },
  notFound: { status: 404, code: 1204, title: 'Not found' },
  methodNotAllowed: { status: 405, code: 1205, title: 'Method not allowed' },
  headersTooLarge: { status: 431, code: 1206, title: 'Request header fields too large' },
  requestTimeout: { status: 408, code: 1207, title: 'Request timeout' },
  expectationFailed: { status: 417, code: 1208, title: 'Expectation failed' },
  // RFC 9112 §3.2: Host must be there (HTTP/1.1), once, and a host (request/admission.ts).
  duplicateHost: { status: 400, code: 1209, title: 'More than one Host header' },
  missingHost: { status: 400, code: 1210, title: 'Host header required' },
  invalidHost: { status: 400, code: 1211, title: 'Invalid Host header' },
  // Scopes a credential is given must be ones the live route table declares (issue 28).
  unknownScope: { status: 400, code: 1212, title: 'Unknown scope' },
  // A password being set that the policy refuses (credentials/password-policy.ts), one code per reason.
  passwordTooShort: { status: 400, code: 1213, title: 'Password too short' },
  passwordTooLong: { status: 400, code: 1214, title: 'Password too long' },
  passwordBlocklisted: { status: 400, code: 1215, title: 'Common or breached password' },
  passwordContainsContext: { status: 400, code: 1216, title: "Password contains the organization's name or e-mail" },
  // Changing and resetting a password (issue 31). 403, not 401: the caller's token is still good.
  currentPasswordWrong: { status: 403, code: 1217, title: 'Current password wrong' },
  // One answer for a reset token that is malformed, unknown, used, replaced or expired.
  resetTokenInvalid: { status: 400, code: 1218, title: 'Invalid or expired reset token' },
  tooManyResetAttempts: { status: 429, code: 1219, title: 'Too many password-reset attempts' },
  // The edge proxies' authorization port (issue 30): the proxy did not say (or said twice) which request to decide.
  originalRequestMissing: { status: 400, code: 1220, title: 'Original request not described' },
  originalRequestInvalid: { status: 400, code: 1221, title: 'Original request not readable' },
  // Members (issue 50): one answer for an invitation token that is malformed, unknown, used, revoked or expired.
  invitationInvalid: { status: 400, code: 1236, title: 'Invalid or expired invitation' },
  // Changing an organization's name and e-mail (PATCH /auth/organization, issue 31).
  nothingToChange: { status: 400, code: 1222, title: 'Nothing to change' },
  currentPasswordRequired: { status: 400, code: 1223, title: 'Current password required' },
  profileChangeConflict: { status: 409, code: 1224, title: 'E-mail changed meanwhile' },
  // Enrolling and removing TOTP (issue 32).
  totpAlreadyEnabled: { status: 409, code: 1225, title: 'TOTP already enabled' },
  totpNotPending: { status: 409, code: 1226, title: 'No TOTP enrolment pending' },
  totpNotEnabled: { status: 409, code: 1227, title: 'TOTP not enabled' },
  // Production without AUTHGATE_MFA_ENCRYPTION_KEY: nothing can be sealed, so nothing is enrolled.
  mfaNotConfigured: { status: 409, code: 1228, title: 'Second factor not configured' },
  // Passkeys (issue 32): a registration finished without one pending (never begun, expired, used).
  passkeyRegistrationInvalid: { status: 400, code: 1229, title: 'No passkey registration pending' },
  passkeyNotFound: { status: 404, code: 1230, title: 'Passkey not found' },
  // Production without AUTHGATE_WEBAUTHN_RP_ID and AUTHGATE_WEBAUTHN_ORIGINS: no relying party.
  passkeysNotConfigured: { status: 409, code: 1231, title: 'Passkeys not configured' },
  passkeyAlreadyRegistered: { status: 409, code: 1232, title: 'Passkey already registered' },
  passkeyLimitReached: { status: 409, code: 1233, title: 'Passkey limit reached' },
  // The edge proxies' authorization port (issue 45): the client sent a header only authgate sets
  // (x-organization-*, x-authgate-*, an underscore name), which a proxy cannot drop by prefix.
  identityHeaderSent: { status: 400, code: 1234, title: 'Identity header sent by the client' },
  // Both ports (issue 45): a method-override header that is not one method the route forwards.
  methodOverrideRefused: { status: 400, code: 1235, title: 'Method override refused' },
  // An external id (issue 49) set at an issuer the routes file does not declare.
  unknownIssuer: { status: 400, code: 1260, title: 'Unknown issuer' },
  // A path some servers read as another route's (issue 45, route-table/path-reading.ts): a `;`
  // parameter, an empty segment, or a spelling whose route asks less than the path's own.
  ambiguousPath: { status: 400, code: 1240, title: 'Ambiguous path' },

  // Resources
  apiKeyNotFound: { status: 404, code: 1301, title: 'API key not found' },
  organizationNotFound: { status: 404, code: 1302, title: 'Organization not found' },
  emailTaken: { status: 409, code: 1303, title: 'E-mail already registered' },
  sessionNotFound: { status: 404, code: 1304, title: 'Session not found' },
  // What one organization may hold (issue 26): a key or a session beyond its limit.
  apiKeyLimitReached: { status: 409, code: 1305, title: 'API key limit reached' },
  sessionLimitReached: { status: 409, code: 1306, title: 'Session limit reached' },
  // Members (issue 50).
  memberNotFound: { status: 404, code: 1307, title: 'Member not found' },
  lastOwner: { status: 409, code: 1308, title: 'The last owner stays' },
  invitationNotFound: { status: 404, code: 1309, title: 'Invitation not found' },
  // An external id (issue 49) another organization holds at that issuer.
  externalIdTaken: { status: 409, code: 1340, title: 'External id taken' },

  // The gateway and what it depends on
  internalError: { status: 500, code: 1500, title: 'Internal error' },
  upstreamUnavailable: { status: 502, code: 1502, title: 'Upstream unavailable' },
  storeUnavailable: { status: 503, code: 1503, title: 'Credential store unavailable' },
  upstreamTimeout: { status: 504, code: 1504, title: 'Upstream timed out' },
  overloaded: { status: 503, code: 1509, title: 'Gateway overloaded' },
  shuttingDown: { status: 503, code: 1510, title: 'Gateway shutting down' },
  // AUTHGATE_REDIS_WAIT_REPLICAS: the write was made but too few replicas acknowledged it.
  writeNotReplicated: { status: 503, code: 1511, title: 'Write not replicated' },
  // A provider token whose issuer's keys have not arrived yet, or are older than its maxStaleSeconds (issue 49).
  issuerKeysUnavailable: { status: 503, code: 1540, title: "Issuer's keys unavailable" },
  // An opaque provider token whose issuer's introspection endpoint did not answer (issue 49, RFC 7662).
  issuerIntrospectionUnavailable: { status: 503, code: 1541, title: 'Token introspection unavailable' },
} as const satisfies Record<string, ProblemSpec>;

export type ProblemName = keyof typeof problems;

/** Throw this anywhere on a request's path; the error handler renders it. */
export class Problem extends Error {
  readonly problem: ProblemName;
  /** Shown to the client: must never carry a secret, an e-mail or anything it did not send. */
  readonly detail: string | undefined;
  /** A bounded reason for the log line and the auth-decision metric. */
  readonly reason: string | undefined;
  /** For 429 and 503: when to come back. */
  readonly retryAfterSeconds: number | undefined;
  /** For insufficientScope: the scope the operation needs (in WWW-Authenticate). */
  readonly requiredScope: string | undefined;

  constructor(problem: ProblemName, detail?: string, reason?: string, retryAfterSeconds?: number, requiredScope?: string) {
    // A problem is an answer, not a fault: its stack would never be read (an internal error
    // logs the error it came from), and capturing one was most of the cost of refusing a request.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(problem);
    Error.stackTraceLimit = stackTraceLimit;
    this.problem = problem;
    this.detail = detail;
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
    this.requiredScope = requiredScope;
    this.name = 'Problem';
  }
}
