import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../credentials/passwords.js';

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

export const LoginResponse = Type.Object({ token: Type.String() });

export const ApiKeyCreated = Type.Object({ id: Type.String(), apiKey: Type.String() });
export const ApiKeyListed = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it; not a secret.' }),
  createdAt: Type.String({ format: 'date-time' }),
});
export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeyListed) });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) }, { additionalProperties: false });
export type IdParams = Static<typeof IdParams>;

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
});

export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.Optional(Type.String()),
  code: Type.Integer(),
});

/** 204: no body. */
export const NoContent = Type.Null({ description: 'No content' });
