// authgate org members|member-role|remove-member (issue 50): an organization's members through the admin API.
import { call, orgPath, printJson, resolveTarget } from '../admin-client.js';
import type { Command, Refusal } from '../command-table.js';

const NOT_SESSIONS: Refusal = { flags: ['session', 'all'] };
const memberPath = (id: string, memberId: string) => orgPath(id, `/members/${encodeURIComponent(memberId)}`);

export const orgMembers: Command = {
  family: 'org',
  action: 'members',
  args: ['id'],
  argsWhat: 'an organization id',
  refuse: [NOT_SESSIONS, { flags: ['name', 'email'] }, { flags: ['org', 'key'], hint: 'the id is an argument' }],
  description: [
    "Print an organization's members as JSON (id, email, role, createdAt,",
    'first), its first member (its own e-mail and password) first.',
  ],
  examples: ['authgate org members org_123'],
  async run({ args: [id] }) {
    printJson((await call(resolveTarget(process.env), 'GET', orgPath(id!, '/members'))).body);
    return 0;
  },
};

// The gateway checks the role and keeps the last owner (400 or 409, exit 1).
export const orgMemberRole: Command = {
  family: 'org',
  action: 'member-role',
  args: ['id', 'memberId', 'role'],
  argsWhat: 'an organization id, a member id and a role',
  refuse: [NOT_SESSIONS, { flags: ['name', 'email', 'org', 'key'], hint: 'the ids and the role are arguments' }],
  description: [
    "Change a member's role (owner, admin, developer or viewer); its",
    'login sessions end. The last owner stays one. Prints the member.',
  ],
  examples: ['authgate org member-role org_123 mem_456 viewer'],
  async run({ args: [id, memberId, role] }) {
    printJson((await call(resolveTarget(process.env), 'PATCH', memberPath(id!, memberId!), { role })).body);
    return 0;
  },
};

export const orgRemoveMember: Command = {
  family: 'org',
  action: 'remove-member',
  args: ['id', 'memberId'],
  argsWhat: 'an organization id and a member id',
  flags: [{ name: 'revoke-keys', type: 'boolean' }],
  refuse: [NOT_SESSIONS, { flags: ['name', 'email', 'org', 'key'], hint: 'the ids are arguments' }],
  description: [
    'Remove a member: its login sessions end at once on every replica.',
    'The keys it created stay, or with --revoke-keys are revoked at once.',
    'The last owner stays.',
  ],
  examples: ['authgate org remove-member org_123 mem_456 --revoke-keys'],
  async run({ args: [id, memberId], values }) {
    await call(resolveTarget(process.env), 'DELETE', `${memberPath(id!, memberId!)}${values['revoke-keys'] === true ? '?revokeKeys=true' : ''}`);
    return 0;
  },
};
