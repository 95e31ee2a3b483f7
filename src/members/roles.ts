/**
 * What each member role may do on the organization's management routes (issue 50), as one table
 * the role guard (role-guard.ts) reads: `owner` everything; `admin` keys, sessions, members and
 * invitations (never an owner); `developer` creates keys and manages the ones it created, reads
 * the rest; `viewer` reads. A route of the auth scope not listed here needs no role.
 */
import type { MemberRole } from '../store/members.js';

export type Permission =
  | 'read'
  | 'keys.create'
  /** Change, roll or delete a key: a developer only the keys it created (role-guard.ts). */
  | 'keys.manage'
  | 'sessions.manage'
  | 'members.manage'
  | 'organization.manage'
  /**
   * The caller's own password and second factor: every member its own (the first member's are
   * the organization's), whatever its role; decided by who, never by role (members/own-credentials.ts).
   */
  | 'own-credentials';

/** `METHOD routeLabel` → what it needs. */
export const ROUTE_PERMISSIONS: Readonly<Record<string, Permission>> = {
  'POST /auth/api-key': 'keys.create',
  'GET /auth/api-key': 'read',
  'GET /auth/api-key/:id': 'read',
  'PATCH /auth/api-key/:id': 'keys.manage',
  'DELETE /auth/api-key/:id': 'keys.manage',
  'POST /auth/api-key/:id/roll': 'keys.manage',
  'GET /auth/sessions': 'read',
  'DELETE /auth/sessions': 'sessions.manage',
  'DELETE /auth/sessions/:id': 'sessions.manage',
  'GET /auth/audit': 'read',
  'GET /auth/organization': 'read',
  'PATCH /auth/organization': 'organization.manage',
  'GET /auth/members': 'read',
  'PATCH /auth/members/:id': 'members.manage',
  'DELETE /auth/members/:id': 'members.manage',
  'POST /auth/invitations': 'members.manage',
  'GET /auth/invitations': 'members.manage',
  'DELETE /auth/invitations/:id': 'members.manage',
  'POST /auth/password': 'own-credentials',
  'GET /auth/mfa': 'read',
  'POST /auth/mfa/step-up': 'own-credentials',
  'POST /auth/mfa/totp': 'own-credentials',
  'POST /auth/mfa/totp/confirm': 'own-credentials',
  'DELETE /auth/mfa/totp': 'own-credentials',
  'POST /auth/mfa/recovery-codes': 'own-credentials',
  'POST /auth/mfa/passkeys/registration': 'own-credentials',
  'POST /auth/mfa/passkeys': 'own-credentials',
  'PATCH /auth/mfa/passkeys/:id': 'own-credentials',
  'DELETE /auth/mfa/passkeys/:id': 'own-credentials',
};

const GRANTS: Readonly<Record<MemberRole, ReadonlySet<Permission>>> = {
  owner: new Set(['read', 'keys.create', 'keys.manage', 'sessions.manage', 'members.manage', 'organization.manage']),
  admin: new Set(['read', 'keys.create', 'keys.manage', 'sessions.manage', 'members.manage']),
  developer: new Set(['read', 'keys.create', 'keys.manage']),
  viewer: new Set(['read']),
};

/** Whether the role holds the permission ('own-credentials' is every member's own, not a role's). */
export function roleAllows(role: MemberRole, permission: Permission): boolean {
  return GRANTS[role].has(permission);
}

/** Which roles an actor of this role may hand out or take away: an admin never touches owners. */
export function mayManageRole(actor: MemberRole, target: MemberRole): boolean {
  return actor === 'owner' || (actor === 'admin' && target !== 'owner');
}
