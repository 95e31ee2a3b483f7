// Who is signed in (GET /auth/organization's `member`, issue 50) and what the role lets the pages
// offer: a control the role cannot use is not shown. The API decides anyway (403, code 1124); this
// only spares a member buttons that would be refused. Read once per sign-in: a changed role ends
// the member's sessions, so the next sign-in reads it again.
import { call } from './api.js';

export type Role = 'owner' | 'admin' | 'developer' | 'viewer';
export type SignedInMember = Readonly<{ id: string; email: string; role: Role; first: boolean }>;

let member: Promise<SignedInMember | undefined> | undefined;

/** The signed-in member; undefined when the gateway did not say (an older gateway): then every control is shown. */
export function signedInMember(): Promise<SignedInMember | undefined> {
  member ??= call<{ member?: SignedInMember }>('GET', '/auth/organization').then(
    (org) => org.member,
    () => {
      member = undefined; // asked again on the next page
      return undefined;
    },
  );
  return member;
}

export function forgetMember(): void {
  member = undefined;
}

const MANAGERS: readonly Role[] = ['owner', 'admin'];

/** What a role may do, as docs/members.md's table says (src/members/roles.ts decides). */
export const may = {
  createKeys: (m: SignedInMember | undefined) => m === undefined || m.role !== 'viewer',
  /** Roll or revoke a key: a developer only the keys it created. */
  manageKey: (m: SignedInMember | undefined, createdBy: { id: string } | undefined) =>
    m === undefined || MANAGERS.includes(m.role) || (m.role === 'developer' && createdBy?.id === m.id),
  manageSessions: (m: SignedInMember | undefined) => m === undefined || MANAGERS.includes(m.role),
  manageMembers: (m: SignedInMember | undefined) => m === undefined || MANAGERS.includes(m.role),
  /** The organization's name and e-mail (PATCH /auth/organization): owners only. */
  changeOrganization: (m: SignedInMember | undefined) => m === undefined || m.role === 'owner',
  /** Change or remove a member of this role, or hand this role out: an admin never touches owners. */
  manageRole: (m: SignedInMember | undefined, role: Role) => m === undefined || m.role === 'owner' || (m.role === 'admin' && role !== 'owner'),
};
