/**
 * The role guard (issue 50): on the organization's management routes, a login token acts as the
 * member its session was opened by (store/members.ts), and the member's role must allow the
 * route (roles.ts); otherwise 403 memberRoleForbidden naming the role. The role is read from the
 * store on each such request, not kept in the token, so a changed role counts at once on every
 * replica. API keys are not members: their scopes decide, as before.
 */
import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { Problem } from '../problems.js';
import { firstMemberId, type InvitationStore, type Member, type MemberStore } from '../store/members.js';
import { ROUTE_PERMISSIONS, roleAllows, type Permission } from './roles.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The member a login token acts as, on the routes the role guard covers; undefined otherwise. */
    member?: Member;
  }
}

export type RoleGuardStore = Pick<MemberStore, 'sessionMemberId' | 'findMember'> & Pick<InvitationStore, 'keyCreators' | 'recordKeyCreator'>;

/** The member a login token's session acts as: its linked member, else the organization's first. */
export async function memberOfSession(store: RoleGuardStore, orgId: string, sessionId: string): Promise<Member> {
  const memberId = (await store.sessionMemberId(orgId, sessionId)) ?? firstMemberId(orgId);
  const member = await store.findMember(orgId, memberId);
  // Removed (its sessions are being ended): its token is no credential any more.
  if (member === undefined) throw new Problem('credentialInvalid', undefined, 'member_removed');
  return member;
}

function permissionOf(request: FastifyRequest): Permission | undefined {
  const label = request.routeOptions.config?.routeLabel;
  if (label === undefined) return undefined;
  if (label === '/auth/logout') {
    // Logging out everywhere ends every member's sessions: a session manager's step.
    const body = request.body as { everywhere?: unknown } | undefined;
    return body?.everywhere === true ? 'sessions.manage' : undefined;
  }
  return ROUTE_PERMISSIONS[`${request.method} ${label}`];
}

function refusal(member: Member, what: string): Problem {
  return new Problem('memberRoleForbidden', `The role ${member.role} may not ${what}.`, `role_${member.role}`);
}

export function createRoleGuard(store: RoleGuardStore): preValidationAsyncHookHandler {
  return async (request) => {
    const principal = request.principal;
    if (principal === null || principal === undefined || principal.via !== 'jwt') return;
    const permission = permissionOf(request);
    // A logout needs no role, but its audit entry names the member who logged out.
    const named = permission === undefined && request.routeOptions.config?.routeLabel === '/auth/logout';
    if (permission === undefined && !named) return;
    const member = await memberOfSession(store, principal.orgId, principal.credentialId);
    request.member = member;
    if (permission === undefined) return;
    // Every member changes its own password and second factor (the route acts on request.member's).
    if (permission === 'own-credentials') return;
    if (!roleAllows(member.role, permission)) throw refusal(member, `do this (${permission})`);
    if (permission === 'keys.manage' && member.role === 'developer') {
      const keyId = (request.params as { id?: string } | undefined)?.id;
      const creators = await store.keyCreators(principal.orgId);
      // A key of no recorded creator is from before members: the first member's, who alone could create it.
      const creator = keyId === undefined ? undefined : (creators[keyId] ?? firstMemberId(principal.orgId));
      if (creator !== member.id) throw refusal(member, 'change a key another member created');
    }
  };
}
