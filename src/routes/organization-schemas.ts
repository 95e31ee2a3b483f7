// The JSON schemas of GET and PATCH /auth/organization (issue 31): the organization's own name and e-mail.
import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH } from '../credentials/passwords.js';
import { Role } from './member-schemas.js';
import { Email, OrganizationName } from './schemas.js';

/** PATCH /auth/organization (issue 31). */
export const ProfileChangeBody = Type.Object(
  {
    name: Type.Optional({ ...OrganizationName, description: 'The new name: 1 to 200 characters, trimmed; no control, bidirectional or invisible format character.' }),
    email: Type.Optional({ ...Email, description: 'The new e-mail (trimmed, lower-cased): free across the whole store (409, 1303). Needs `currentPassword`.' }),
    currentPassword: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'The password in use: required with `email` (400, 1223), even on a fresh token.' })),
  },
  { additionalProperties: false },
);
export type ProfileChangeBody = Static<typeof ProfileChangeBody>;

/** GET and PATCH /auth/organization: the organization as it sees itself. */
export const ProfileResponse = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    member: Type.Optional(Type.Object(
      {
        id: Type.String({ description: '`mem_…`' }),
        email: Type.String(),
        role: Role,
        first: Type.Boolean({ description: "true for the organization's first member: its own e-mail and password." }),
      },
      { description: 'The member the login token acts as (issue 50), with the role that decides what it may do: what a client such as the console shows or hides by.' },
    )),
  },
  { description: 'The organization: its id, name, e-mail and creation time, and the member asking.' },
);
