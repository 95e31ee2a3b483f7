import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH } from '../credentials/passwords.js';
import { MEMBER_ROLES } from '../store/members.js';
import { Email, IdParams } from './schemas.js';

/** Shapes of the members and invitations routes (issue 50). */
export const Role = Type.Union(MEMBER_ROLES.map((role) => Type.Literal(role)), { description: '`owner`, `admin`, `developer` or `viewer` (docs/api.md, "Members and roles").' });

export const MemberSchema = Type.Object(
  {
    id: Type.String({ description: '`mem_…`' }),
    email: Type.String(),
    role: Role,
    createdAt: Type.String({ format: 'date-time' }),
    first: Type.Boolean({ description: "true for the organization's first member: its own e-mail and password." }),
  },
  { additionalProperties: false },
);
export const MemberList = Type.Object({ members: Type.Array(MemberSchema) });
export const MemberParams = IdParams;
const PathIdPattern = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });
/** An organization's id and one of its members' (the admin API). */
export const OrgMemberParams = Type.Object({ id: PathIdPattern, memberId: PathIdPattern }, { additionalProperties: false });
export type OrgMemberParams = Static<typeof OrgMemberParams>;
/** DELETE …/members/{id}?revokeKeys=true: also revoke the keys the member created (default false: they stay). */
export const RemoveMemberQuery = Type.Object(
  { revokeKeys: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: '`true` also revokes the keys the member created, at once on every replica; `false` (the default) keeps them.' })) },
  { additionalProperties: false },
);
export type RemoveMemberQuery = Static<typeof RemoveMemberQuery>;
export const RoleChangeBody = Type.Object({ role: Role }, { additionalProperties: false });
export type RoleChangeBody = Static<typeof RoleChangeBody>;

export const InvitationSchema = Type.Object(
  {
    id: Type.String({ description: '`inv_…`' }),
    email: Type.String(),
    role: Role,
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.String({ format: 'date-time' }),
    invitedBy: Type.String({ description: 'The id of the member who invited.' }),
  },
  { additionalProperties: false },
);
export const InvitationCreated = Type.Object(
  { ...InvitationSchema.properties, token: Type.String({ description: 'The invitation token (`agi_…`): shown here once, and sent in the member.invited notice.' }) },
  { additionalProperties: false },
);
export const InvitationList = Type.Object({ invitations: Type.Array(InvitationSchema) });
export const InvitationBody = Type.Object({ email: Email, role: Role }, { additionalProperties: false });
export type InvitationBody = Static<typeof InvitationBody>;
export const AcceptBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }) },
  { additionalProperties: false },
);
export type AcceptBody = Static<typeof AcceptBody>;
