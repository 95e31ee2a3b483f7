import { Type, type Static } from '@sinclair/typebox';
import { MAX_SCOPE_NAME_LENGTH, SCOPE_NAME_PATTERN } from '../authz/scopes.js';
import { MAX_ROLL_GRACE_SECONDS } from '../services/api-keys.js';
import { KeyQuotaChange, KeyQuotaInput, KeyQuotaShown } from './key-quota-schemas.js';

/**
 * Shapes of the API-key routes' bodies and answers (routes/api-keys.ts; schemas.ts re-exports
 * them): one definition validates, types and documents each, as in schemas.ts.
 */

/** The longest `expiresIn`: 366 days in seconds (services/api-keys.ts MAX_API_KEY_LIFETIME_MS). */
export const MAX_API_KEY_EXPIRES_IN = 31_622_400;

const KeyNameText = Type.String({ minLength: 1, maxLength: 100, description: 'A label for people; shown in listings.' });
/** The most scopes one request may name (a bound on the request, not on the table). */
export const MAX_SCOPES_PER_KEY = 256;
/**
 * Scope names as a request gives them: shaped as names here; whether the live route table
 * declares them is the service's check (400, code 1212, naming the unknown ones), since a reload
 * changes the table and a route's schema is compiled once.
 */
const ScopeList = Type.Array(Type.String({ pattern: SCOPE_NAME_PATTERN, maxLength: MAX_SCOPE_NAME_LENGTH }), {
  minItems: 1,
  maxItems: MAX_SCOPES_PER_KEY,
  uniqueItems: true,
  description: 'Scopes the route table declares (GET /auth/scopes lists them; an unknown one is 400, code 1212).',
});
const ExpiresAtInput = Type.String({ format: 'date-time', description: 'When the key stops working (RFC 3339): in the future, at most 366 days ahead. Not with expiresIn.' });
const ExpiresInInput = Type.Integer({ minimum: 60, maximum: MAX_API_KEY_EXPIRES_IN, description: 'Seconds from now until the key stops working (60 to 366 days). Not with expiresAt.' });

/** A rate limit as written: `<count>/<window>`, the window in s, m or h (limits/rate-limit.ts checks the ranges). */
export const RateLimitText = Type.String({
  pattern: '^[1-9][0-9]{0,9}/[1-9][0-9]{0,5}[smh]$',
  maxLength: 20,
  description: 'Requests per window, e.g. `600/60s`, `100/1m`, `5000/1h` (at most 1000000000 per 24 h).',
});
const KeyRateLimitInput = { ...RateLimitText, description: `The key's own rate limit on forwarded routes, never above its organization's. ${RateLimitText.description}` };

export const NewApiKeyBody = Type.Object(
  {
    name: Type.Optional(KeyNameText),
    scopes: Type.Optional({ ...ScopeList, description: `What the key may do (default: every scope, including scopes added later). ${ScopeList.description}` }),
    expiresAt: Type.Optional(ExpiresAtInput),
    expiresIn: Type.Optional(ExpiresInInput),
    rateLimit: Type.Optional(KeyRateLimitInput),
    quota: Type.Optional(KeyQuotaInput),
  },
  { additionalProperties: false, description: "Optional: without a body the key has no name, every scope, does not expire, and has its organization's rate limit." },
);
export type NewApiKeyBody = Static<typeof NewApiKeyBody>;

const KeyName = Type.Union([Type.String(), Type.Null()], { description: 'Its name; null when it was given none.' });
const KeyScopes = Type.Array(Type.String(), { description: 'The scopes it holds that the route table declares, in the table\'s order (GET /auth/scopes).' });
const KeyExpiry = Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
  description: 'When the key stops working (401 from then on, on every replica); null when it does not expire.',
});
const KeyRateLimit = Type.Union([Type.String(), Type.Null()], { description: "Its own rate limit (`600/60s`); null when its organization's applies." });

/** Who created a key (issue 50; members/key-creators.ts). */
const KeyCreatedBy = Type.Object(
  {
    id: Type.String({ description: 'The member (`mem_…`).' }),
    email: Type.Union([Type.String(), Type.Null()], { description: "The member's e-mail; null when the member has since been removed (the key stays, for an admin to review)." }),
  },
  { description: 'The member who created the key. A key created before members (by the organization\'s e-mail and password) is its first member\'s.' },
);

export const ApiKeyCreated = Type.Object(
  { id: Type.String(), apiKey: Type.String(), name: KeyName, scopes: KeyScopes, createdAt: Type.String({ format: 'date-time' }), expiresAt: KeyExpiry, rateLimit: KeyRateLimit, quota: KeyQuotaShown, createdBy: KeyCreatedBy },
  { description: 'The new key: `apiKey` is its secret, shown this once.' },
);
export const ApiKeyListed = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it; not a secret.' }),
  name: KeyName,
  scopes: KeyScopes,
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: KeyExpiry,
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When it was last used, to within a minute (each replica writes uses once a minute); null when never.',
  }),
  rateLimit: KeyRateLimit,
  quota: KeyQuotaShown,
  createdBy: KeyCreatedBy,
});
/** One key, as GET and PATCH /auth/api-key/:id answer it (ApiKeyListed with its own description). */
export const ApiKeyShown: typeof ApiKeyListed = { ...ApiKeyListed, description: 'The key, without its secret.' };
export const ApiKeyList = Type.Object(
  {
    keys: Type.Array(ApiKeyListed),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { description: "The organization's API keys, newest first, a page at a time, without their secrets." },
);

export const ApiKeyListQuery = Type.Object(
  {
    // A string: query values are not coerced (http/server-options.ts); the service reads it.
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', description: 'How many keys per page, 1 to 500: 100 unless given.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'The `nextCursor` of the previous page.' })),
  },
  { additionalProperties: false },
);
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>;

export const ApiKeyChangeBody = Type.Object(
  {
    name: Type.Optional(Type.Union([KeyNameText, Type.Null()], { description: 'The new name; null removes it.' })),
    scopes: Type.Optional({ ...ScopeList, description: `Fewer scopes than the key holds, never more. ${ScopeList.description}` }),
    expiresAt: Type.Optional({ ...ExpiresAtInput, description: 'An earlier end than the key has (any, for a key without one), in the future. Not with expiresIn.' }),
    expiresIn: Type.Optional({ ...ExpiresInInput, description: 'An earlier end, in seconds from now. Not with expiresAt.' }),
    rateLimit: Type.Optional(Type.Union([KeyRateLimitInput, Type.Null()], { description: `${KeyRateLimitInput.description} null removes it.` })),
    quota: Type.Optional(KeyQuotaChange),
  },
  { additionalProperties: false, minProperties: 1, description: "What changes; what is left out stays. Scopes and end can only narrow: fewer scopes, an earlier end; the key's rate limit may be anything up to its organization's." },
);
export type ApiKeyChangeBody = Static<typeof ApiKeyChangeBody>;

export const ApiKeyRollBody = Type.Object(
  {
    graceSeconds: Type.Optional(Type.Integer({
      minimum: 0,
      maximum: MAX_ROLL_GRACE_SECONDS,
      description: 'How long the rolled key keeps working: 86400 (24 hours) unless given, 0 revokes it at once, at most 604800 (7 days).',
    })),
    expiresAt: Type.Optional({ ...ExpiresAtInput, description: "The successor's end. Without expiresAt or expiresIn it gets the rolled key's lifetime from now, or none." }),
    expiresIn: Type.Optional({ ...ExpiresInInput, description: "The successor's end, in seconds from now. Not with expiresAt." }),
  },
  { additionalProperties: false, description: 'Optional.' },
);
export type ApiKeyRollBody = Static<typeof ApiKeyRollBody>;

export const ApiKeyRolled = Type.Object(
  {
    ...ApiKeyCreated.properties,
    rolled: Type.Object({
      id: Type.String(),
      expiresAt: Type.String({ format: 'date-time', description: 'When the rolled key stops working: now for a grace of 0.' }),
    }),
  },
  { description: 'The successor (its `apiKey` shown this once, its name and scopes those of the rolled key), and the rolled key\'s end.' },
);
