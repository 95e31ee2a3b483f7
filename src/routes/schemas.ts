import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../credentials/passwords.js';
import { problems, type ProblemName } from '../problems.js';

/**
 * Shapes of bodies and responses: one definition validates the request, types the handler and
 * documents the route in the OpenAPI document. `additionalProperties: false` refuses anything
 * unexpected (including `__proto__` and `constructor` keys).
 */
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^\\s*[^@\\s]+@[^@\\s]+\\s*$' });

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const LoginResponse = Type.Object({ token: Type.String() }, { description: 'The login token: a bearer credential for one hour.' });

/** The longest `expiresIn`: 366 days in seconds (services/api-keys.ts MAX_API_KEY_LIFETIME_MS). */
export const MAX_API_KEY_EXPIRES_IN = 31_622_400;

export const NewApiKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label for people; shown in listings.' })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the key stops working (RFC 3339): in the future, at most 366 days ahead. Not with expiresIn.' })),
    expiresIn: Type.Optional(Type.Integer({ minimum: 60, maximum: MAX_API_KEY_EXPIRES_IN, description: 'Seconds from now until the key stops working (60 to 366 days). Not with expiresAt.' })),
  },
  { additionalProperties: false, description: 'Optional: without a body the key has no name and does not expire.' },
);
export type NewApiKeyBody = Static<typeof NewApiKeyBody>;

const KeyName = Type.Union([Type.String(), Type.Null()], { description: 'Its name; null when it was given none.' });
const KeyExpiry = Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
  description: 'When the key stops working (401 from then on, on every replica); null when it does not expire.',
});

export const ApiKeyCreated = Type.Object(
  { id: Type.String(), apiKey: Type.String(), name: KeyName, createdAt: Type.String({ format: 'date-time' }), expiresAt: KeyExpiry },
  { description: 'The new key: `apiKey` is its secret, shown this once.' },
);
export const ApiKeyListed = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it; not a secret.' }),
  name: KeyName,
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: KeyExpiry,
});
/** One key, as GET and PATCH /auth/api-key/:id answer it (ApiKeyListed with its own description). */
export const ApiKeyShown: typeof ApiKeyListed = { ...ApiKeyListed, description: 'The key, without its secret.' };
export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeyListed) }, { description: "The organization's API keys, without their secrets." });

export const ApiKeyChangeBody = Type.Object(
  {
    name: Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], { description: 'The new name; null removes it.' }),
  },
  { additionalProperties: false, description: 'What changes: only the name, for now.' },
);
export type ApiKeyChangeBody = Static<typeof ApiKeyChangeBody>;

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) }, { additionalProperties: false });
export type IdParams = Static<typeof IdParams>;

/** An organization's id and one of its API keys' ids (the admin API). */
export const OrgKeyParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }),
    keyId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }),
  },
  { additionalProperties: false },
);
export type OrgKeyParams = Static<typeof OrgKeyParams>;

export const NewOrganizationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    email: Email,
    password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
  },
  { additionalProperties: false },
);
export type NewOrganizationBody = Static<typeof NewOrganizationBody>;

export const OrganizationResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
}, { description: 'The organization.' });

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
 * route of a pipeline can answer are added to the document by http/openapi.ts.)
 */
export function problemOf(...names: readonly ProblemName[]): typeof Problem {
  return { ...Problem, description: describeProblems(names) };
}

/** 204: no body. */
export const NoContent = Type.Null({ description: 'No content' });
