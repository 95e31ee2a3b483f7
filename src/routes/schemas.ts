import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH } from '../credentials/passwords.js';
import { problems, type ProblemName } from '../problems.js';
import { RateLimitText } from './api-key-schemas.js';

export * from './api-key-schemas.js';

/**
 * Shapes of bodies and responses: one definition validates the request, types the handler and
 * documents the route in the OpenAPI document. `additionalProperties: false` refuses anything
 * unexpected (including `__proto__` and `constructor` keys).
 */
export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^\\s*[^@\\s]+@[^@\\s]+\\s*$' });

/** An organization's or an API key's id in a path (`org_…`, `key_…`); an unknown one is a 404. */
const PathId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });
/** A session's id in a path: `<shard tag>.<22 base64url>`, or any id of that alphabet (an unknown one is a 404). */
const SessionId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]+$' });

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const LoginResponse = Type.Object({ token: Type.String() }, { description: 'The login token: a bearer credential for one hour.' });

export const LogoutBody = Type.Object(
  { everywhere: Type.Optional(Type.Boolean({ description: 'true: end every login session of the organization, not only this one.' })) },
  { additionalProperties: false, description: 'Optional.' },
);
export type LogoutBody = Static<typeof LogoutBody>;

export const SessionShown = Type.Object({
  id: Type.String({ description: "The session's id (a login token's `sub`); not a credential." }),
  createdAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it logged in.' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When its token expires.' }),
  client: Type.Union([Type.String(), Type.Null()], { description: 'The client that logged in, coarsely: its user agent family and its network (`curl from 203.0.113.0/24`).' }),
  current: Type.Boolean({ description: 'Whether this is the session of the token that asked.' }),
});
export const SessionList = Type.Object({ sessions: Type.Array(SessionShown) }, { description: "The organization's live login sessions, the latest login first; never a token." });
export const SessionsEnded = Type.Object({ ended: Type.Integer({ description: 'How many sessions ended.' }) });

/** A session's id: `<shard tag>.<22 base64url>`, or any id of that alphabet (an unknown one is a 404). */
export const SessionParams = Type.Object({ id: SessionId }, { additionalProperties: false });
export type SessionParams = Static<typeof SessionParams>;
export const OrgSessionParams = Type.Object({ id: PathId, sessionId: SessionId }, { additionalProperties: false });
export type OrgSessionParams = Static<typeof OrgSessionParams>;

export const IdParams = Type.Object({ id: PathId }, { additionalProperties: false });
export type IdParams = Static<typeof IdParams>;

/** An organization's id and one of its API keys' ids (the admin API). */
export const OrgKeyParams = Type.Object({ id: PathId, keyId: PathId }, { additionalProperties: false });
export type OrgKeyParams = Static<typeof OrgKeyParams>;

/**
 * A password being set. Its length is the policy's to judge (credentials/password-policy.ts), not
 * the schema's: each reason has its own code, so the schema bounds nothing but the type (the body
 * limit bounds the rest).
 */
export const NewPassword = Type.String({
  description:
    'The password: at least AUTHGATE_PASSWORD_MIN_LENGTH (default 15) and at most 128 characters, counted in Unicode code points; never truncated, no composition rules. Refused (400) when too short (1213), too long (1214), a common or breached password (1215, compared case-insensitively) or when it contains the organization\'s name or its e-mail\'s local part (1216). Stored only as an argon2id hash.',
});

/** What a route that sets a password may answer 400 with. */
export const PASSWORD_PROBLEMS = ['passwordTooShort', 'passwordTooLong', 'passwordBlocklisted', 'passwordContainsContext'] as const satisfies readonly ProblemName[];

export const PasswordChangeBody = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'The password in use: required even on a fresh token.' }),
    newPassword: NewPassword,
  },
  { additionalProperties: false },
);
export type PasswordChangeBody = Static<typeof PasswordChangeBody>;

export const PasswordResetBody = Type.Object(
  {
    resetToken: Type.String({ minLength: 1, maxLength: 200, description: 'The one-time reset token (`agr_…`) the operator was given.' }),
    newPassword: NewPassword,
  },
  { additionalProperties: false },
);
export type PasswordResetBody = Static<typeof PasswordResetBody>;

export const PasswordResetIssued = Type.Object(
  {
    resetToken: Type.String({ description: 'The one-time reset token (`agr_…`, 128 random bits): shown this once, stored only as a hash. Hand it to the organization over a channel you trust.' }),
    expiresAt: Type.String({ format: 'date-time', description: 'After this it is refused (AUTHGATE_PASSWORD_RESET_TTL_SECONDS after issue).' }),
  },
);

/** An organization's name: 1 to 200 characters, not only spaces (trimmed when stored). */
export const OrganizationName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

export const NewOrganizationBody = Type.Object(
  {
    name: OrganizationName,
    email: Email,
    password: Type.Optional(NewPassword),
  },
  { additionalProperties: false },
);
export type NewOrganizationBody = Static<typeof NewOrganizationBody>;

export const OrganizationResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  rateLimit: Type.Union([Type.String(), Type.Null()], { description: 'Its own rate limit per credential (`600/60s`, or `off` for none); null: AUTHGATE_RATE_LIMIT applies.' }),
  effectiveRateLimit: Type.Union([Type.String(), Type.Null()], { description: 'What each of its credentials gets unless a key has a lower limit of its own; null: no limit.' }),
  keyLimit: Type.Union([Type.Integer(), Type.Null()], { description: 'Its own limit of API keys held; null: AUTHGATE_MAX_KEYS_PER_ORGANIZATION applies.' }),
  effectiveKeyLimit: Type.Union([Type.Integer(), Type.Null()], { description: 'How many API keys it may hold (expired ones count until deleted).' }),
  externalIds: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Its id at each trusted issuer of the routes file (issue 49), when it has any.' })),
  plan: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "Only when the routes file has plans: its own plan; null: the file's defaultPlan applies." })),
  effectivePlan: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Only when the routes file has plans: the plan its requests are decided by (its own, or defaultPlan when it has none or its own was removed from the file); null: none, every scope.' })),
}, { description: 'The organization.' });

/** What creating an organization answers: with a reset token when it was created without a password. */
export const CreatedOrganizationResponse = Type.Object({
  ...OrganizationResponse.properties,
  resetToken: Type.Optional(Type.String({ description: 'Only when the request had no `password`: a one-time reset token (`agr_…`) for POST /auth/password/reset, shown this once. The organization cannot log in until it is used.' })),
  resetExpiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When that reset token stops working.' })),
}, { description: 'The organization, and its reset token when it was created without a password.' });

export const OrganizationChangeBody = Type.Object(
  {
    name: Type.Optional({ ...OrganizationName, description: 'Its new name (trimmed). Audited as `organization.name_changed`.' }),
    email: Type.Optional({ ...Email, description: 'Its new e-mail (trimmed, lower-cased), free across the whole store (409, 1303): every login session of the organization ends. Audited as `organization.email_changed` with both domains only.' }),
    rateLimit: Type.Optional(Type.Union([{ ...RateLimitText, pattern: `${RateLimitText.pattern}|^off$` }, Type.Null()], {
      description: `Its credentials' rate limit on forwarded routes: ${RateLimitText.description} \`off\` exempts it from AUTHGATE_RATE_LIMIT; null returns it to AUTHGATE_RATE_LIMIT.`,
    })),
    keyLimit: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], {
      description: 'How many API keys it may hold, 1 to 1000000 (raise or lower; keys above a lowered limit stay, no new one is made until below it); null returns it to AUTHGATE_MAX_KEYS_PER_ORGANIZATION.',
    })),
    externalIds: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 40 }), Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]), {
      description: 'Its id at each named trusted issuer (routes file `issuers:`), which a provider token\'s organization claim names; null removes it. Unique per issuer across the store (409, 1340); setting one at an issuer the file does not declare is 400 (1260); removing one is taken for any issuer.',
    })),
    plan: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
      description: "Its plan, one the routes file declares under `plans` (400, 1250 for another); null returns it to the file's defaultPlan. Every replica applies it within a second, no key rewritten; audited and noticed as `organization.plan_changed`.",
    })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type OrganizationChangeBody = Static<typeof OrganizationChangeBody>;

export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.Optional(Type.String()),
  code: Type.Integer(),
});

/** The problems' codes as a response's description: one line each, e.g. `- 1301: API key not found`. */
export function describeProblems(names: readonly ProblemName[]): string {
  return names.map((name) => `- ${problems[name].code}: ${problems[name].title}`).join('\n');
}

/**
 * A route's own problem answer for a status, with the problems it stands for. The description
 * is documentation only: what is serialized is `Problem`'s, unchanged. (The problems every
 * route of a pipeline can answer are added to the document by openapi/document.ts.)
 */
export function problemOf(...names: readonly ProblemName[]): typeof Problem {
  return { ...Problem, description: describeProblems(names) };
}

/** 204: no body. */
export const NoContent = Type.Null({ description: 'No content' });

/** An audit entry as answered: the event and its position (`id`), never a secret. */
export const AuditEntry = Type.Object(
  {
    id: Type.String({ description: 'Its position in the log (pass as `cursor` to read older ones).' }),
    type: Type.String(),
    at: Type.String({ format: 'date-time' }),
    orgId: Type.Union([Type.String(), Type.Null()]),
    actor: Type.String({ description: '`organization`, `admin` or `anonymous`.' }),
    credential: Type.Union([Type.Object({ kind: Type.String(), id: Type.String() }), Type.Null()], { description: 'The acting credential: its kind and id, never the secret.' }),
    network: Type.Union([Type.String(), Type.Null()], { description: "The client's network (/24 or /48)." }),
    member: Type.Optional(Type.Object({ id: Type.String(), email: Type.String() }, { description: 'The member who acted, where a member did (issue 50); absent for the first member\'s sessions, API keys and the operator.' })),
    actorDetail: Type.Optional(Type.Object(
      { type: Type.String(), id: Type.Optional(Type.String()), email: Type.Optional(Type.String()), createdBy: Type.Optional(Type.String()) },
      { description: 'Who acted (issue 50): `member` (`id`, `email`; the first member too), `api_key` (`id`, `createdBy`: the member who created it), `issuer_token` (`id`), `operator` (the admin API), `gateway` (the gateway itself: a key revoked on a leak report, a lockout) or `anonymous` (no credential). Absent on entries written before it.' },
    )),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export const AuditPageSchema = Type.Object(
  { events: Type.Array(AuditEntry), nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for older events; null at the end of the log.' }) },
  { description: 'Security events, newest first.' },
);
export const AuditQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', description: 'How many events per page, 1 to 500: 100 unless given.' })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}-[0-9]{1,20}$', description: 'The `nextCursor` of the previous page.' })),
    type: Type.Optional(Type.String({ pattern: '^[a-z_.]{1,64}$', description: 'Only events of this type (e.g. `api_key.created`).' })),
    member: Type.Optional(Type.String({ pattern: '^mem_[A-Za-z0-9_-]{1,64}$', description: 'Only events this member did (`mem_…`, as GET /auth/members lists it; the first member\'s include its sessions\' entries of before members).' })),
  },
  { additionalProperties: false },
);
export type AuditQuerySchema = Static<typeof AuditQuerySchema>;
export const AdminAuditQuerySchema = Type.Object(
  { ...AuditQuerySchema.properties, org: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$', description: 'Only this organization\'s events.' })) },
  { additionalProperties: false },
);
export type AdminAuditQuerySchema = Static<typeof AdminAuditQuerySchema>;
