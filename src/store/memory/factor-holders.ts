/**
 * Whose second factor and password reset a memory-store entry is (issue 50): the organization's
 * own (its first member's) under its id, exactly as before members; another member's under
 * `<orgId> <memberId>`. A removed member's and a deleted organization's members' go with them.
 */
import { otherMemberId } from '../members.js';
import type { MemoryState } from './state.js';

export function factorHolder(orgId: string, memberId?: string): string {
  const other = otherMemberId(orgId, memberId);
  return other === undefined ? orgId : `${orgId} ${other}`;
}

/** The organization and member of a holder key. */
export function holderParts(holder: string): { orgId: string; memberId?: string } {
  const space = holder.indexOf(' ');
  return space < 0 ? { orgId: holder } : { orgId: holder.slice(0, space), memberId: holder.slice(space + 1) };
}

/** Whether a factor may be stored for it: its organization exists, and its member when another's. */
export function holderExists(state: MemoryState, orgId: string, memberId?: string): boolean {
  const other = otherMemberId(orgId, memberId);
  if (!state.orgsById.has(orgId)) return false;
  return other === undefined || state.members.membersByOrg.get(orgId)?.has(other) === true;
}

/** Forgets the holder's second factor and its pending password reset. */
export function dropHolder(state: MemoryState, holder: string): void {
  for (const kept of [state.totpByOrg, state.recoveryCodesByOrg, state.passkeysByOrg, state.passkeyRegistrations, state.resetsByOrg]) kept.delete(holder);
}

/** Forgets every other member's second factor and reset of a deleted organization. */
export function dropMemberHolders(state: MemoryState, orgId: string): void {
  for (const kept of [state.totpByOrg, state.recoveryCodesByOrg, state.passkeysByOrg, state.passkeyRegistrations, state.resetsByOrg]) {
    for (const holder of kept.keys()) if (holder.startsWith(`${orgId} `)) kept.delete(holder);
  }
}
