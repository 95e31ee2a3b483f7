// authgate org create|list|get|update|delete|limit|key-limit|plan|reset-password|mfa|remove-mfa|usage|external-ids|set-external-id|remove-external-id|members|member-role|remove-member: organizations through the admin API.
// reset-password, mfa and remove-mfa take --member for one member's own password or second factor (issue 50).
import { allPages, call, orgPath, printJson, resolveTarget } from '../admin-client.js';
import { CliError, usageError } from '../cli-error.js';
import type { Command, Family, FlagSpec } from '../command-table.js';
import { readFirstLine, promptNewPassword } from '../password-input.js';
import { orgExternalIds, orgRemoveExternalId, orgSetExternalId } from './org-external-ids.js';
import { ID_ONLY, NOT_SESSIONS, ONE_ORGANIZATION } from './org-id.js';
import { orgMemberRole, orgMembers, orgRemoveMember } from './org-members.js';
import { orgUsage } from './org-usage.js';

async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    return promptNewPassword({ input: process.stdin, output: process.stderr });
  }
  const line = await readFirstLine(process.stdin);
  if (line === undefined || line === '') throw new CliError('no password on stdin: pipe it as the first line, or run in a terminal to be prompted', 2);
  return line;
}

const create: Command = {
  family: 'org',
  action: 'create',
  extraArgs: 'org create takes no positional arguments',
  flags: [
    { name: 'name', type: 'string', value: 'name', required: true },
    { name: 'email', type: 'string', value: 'email', required: true },
  ],
  refuse: [NOT_SESSIONS, { flags: ['org', 'key'] }],
  description: [
    'Create an organization. The password is read from the first',
    'line of stdin when stdin is not a terminal, otherwise prompted',
    'for twice with echo off. It is never taken from the command line.',
  ],
  examples: [`printf '%s\\n' "$PASSWORD" | authgate org create --name Acme --email ops@acme.example`],
  async run({ values }) {
    const target = resolveTarget(process.env);
    const password = await readNewPassword();
    printJson((await call(target, 'POST', 'admin/organizations', { name: values.name, email: values.email, password })).body);
    return 0;
  },
};

const list: Command = {
  family: 'org',
  action: 'list',
  flags: [
    {
      oneOf: [
        { name: 'email', type: 'string', value: 'email' },
        { name: 'name-prefix', type: 'string', value: 'prefix', ignoredElsewhere: true },
      ],
      required: false,
    },
  ],
  refuse: [NOT_SESSIONS, { flags: ['name', 'org', 'key'], hint: 'search with --email or --name-prefix' }],
  description: [
    'Print the organizations as JSON, by e-mail (or by name with',
    '--name-prefix, case-insensitive); --email finds one. Never a',
    'password hash.',
  ],
  examples: ['authgate org list --name-prefix acme'],
  async run({ values }) {
    const target = resolveTarget(process.env);
    const { email, 'name-prefix': prefix } = values;
    const search = typeof email === 'string' ? `&email=${encodeURIComponent(email)}` : typeof prefix === 'string' ? `&namePrefix=${encodeURIComponent(prefix)}` : '';
    printJson({ organizations: await allPages(target, 'admin/organizations', 'organizations', search) });
    return 0;
  },
};

/** `org get <id>` and `org delete <id>`: the same checks, one call each. */
function byId(action: 'get' | 'delete', description: string, example?: string): Command {
  return {
    ...ONE_ORGANIZATION,
    action,
    refuse: ID_ONLY,
    description: [description],
    ...(example !== undefined && { examples: [example] }),
    async run({ args: [id] }) {
      const target = resolveTarget(process.env);
      if (action === 'get') printJson((await call(target, 'GET', orgPath(id!))).body);
      else await call(target, 'DELETE', orgPath(id!));
      return 0;
    },
  };
}

/** `org limit <id> <limit>`, `org key-limit <id> <count>` and `org plan <id> <plan>`: one PATCH of the organization, printed. */
function setter(action: 'limit' | 'key-limit' | 'plan', value: string, what: string, body: (given: string) => Record<string, unknown>, description: string[], examples?: string[]): Command {
  return {
    family: 'org',
    action,
    args: ['id', value],
    argsWhat: `${ONE_ORGANIZATION.argsWhat} and ${what}`,
    refuse: [NOT_SESSIONS, { flags: ['name', 'email', 'org', 'key'], hint: `the id and the ${value} are arguments` }],
    description,
    ...(examples !== undefined && { examples }),
    async run({ args: [id, given] }) {
      const target = resolveTarget(process.env);
      printJson((await call(target, 'PATCH', orgPath(id!), body(given!))).body);
      return 0;
    },
  };
}

// The gateway checks the form and says what is wrong with it (400, exit 1).
const limit = setter('limit', 'limit', 'a limit (e.g. 600/60s, off or default)', (given) => ({ rateLimit: given === 'default' ? null : given }), [
  "Set an organization's rate limit per credential on forwarded",
  'routes: <count>/<window> (e.g. 600/60s, 100/1m), off (none), or',
  'default (AUTHGATE_RATE_LIMIT again). Prints the organization.',
], ['authgate org limit org_123 600/60s']);

// A count as a number; anything else goes as is, and the gateway says what is wrong (400, exit 1).
const keyLimit = setter('key-limit', 'count', 'a count of keys (e.g. 5000, or default)', (given) => ({ keyLimit: given === 'default' ? null : /^\d{1,9}$/.test(given) ? Number(given) : given }), [
  'Set how many API keys an organization may hold (1 to 1000000), or',
  'default (AUTHGATE_MAX_KEYS_PER_ORGANIZATION again).',
]);

// The gateway knows the routes file's plans and says which it declares (400, exit 1).
const plan = setter('plan', 'plan', 'a plan of the routes file (or default)', (given) => ({ plan: given === 'default' ? null : given }), [
  "Move an organization to another of the routes file's plans, or to",
  'default (its defaultPlan again): what its keys and login tokens may',
  'do, on every replica within a second. Prints the organization.',
], ['authgate org plan org_123 partner']);

/** `org update <id> --name --email`: one PATCH of the organization, printed. */
const update: Command = {
  ...ONE_ORGANIZATION,
  action: 'update',
  flags: [
    { name: 'name', type: 'string', value: 'name' },
    { name: 'email', type: 'string', value: 'email' },
  ],
  refuse: [NOT_SESSIONS, { flags: ['org', 'key'], hint: 'the id is an argument' }],
  description: [
    "Change an organization's name and/or e-mail (at least one). An",
    'e-mail change ends every login session of the organization; the',
    'e-mail must be free. Prints the organization.',
  ],
  examples: ['authgate org update org_123 --name "Acme Ltd" --email ops@acme.example'],
  async run({ args: [id], values }) {
    const { name, email } = values;
    if (typeof name !== 'string' && typeof email !== 'string') throw usageError('org update needs --name, --email or both');
    const target = resolveTarget(process.env);
    printJson((await call(target, 'PATCH', orgPath(id!), { ...(typeof name === 'string' && { name }), ...(typeof email === 'string' && { email }) })).body);
    return 0;
  },
};

/** `--member <memberId>`: one member's own password or second factor instead of the organization's (issue 50). */
const MEMBER: FlagSpec = { name: 'member', type: 'string', value: 'memberId' };

/** The organization's path, or its member's (`/members/<memberId>`), then `below`. */
function ownerPath(id: string, member: string | boolean | undefined, below: string): string {
  return typeof member === 'string' ? orgPath(id, `/members/${encodeURIComponent(member)}${below}`) : orgPath(id, below);
}

/** `org reset-password <id> [--member <memberId>]`: the one-time reset token, printed once (POST .../password-reset). */
const resetPassword: Command = {
  ...ONE_ORGANIZATION,
  action: 'reset-password',
  flags: [MEMBER],
  refuse: ID_ONLY,
  description: [
    'End every login session of an organization and print a one-time',
    'password-reset token (resetToken, expiresAt) as JSON: shown this',
    'once; hand it to the organization over a channel you trust. With',
    '--member, the member\'s own password: only its sessions end.',
  ],
  examples: ['authgate org reset-password org_123', 'authgate org reset-password org_123 --member mem_456'],
  async run({ args: [id], values }) {
    const target = resolveTarget(process.env);
    printJson((await call(target, 'POST', ownerPath(id!, values.member, '/password-reset'))).body);
    return 0;
  },
};
/** `org mfa <id>` and `org remove-mfa <id>` (issue 32): the second factors' status, or the removal of all. */
function mfaCommand(action: 'mfa' | 'remove-mfa', description: string[], example: string): Command {
  return {
    ...ONE_ORGANIZATION,
    action,
    flags: [MEMBER],
    refuse: ID_ONLY,
    description,
    examples: [example],
    async run({ args: [id], values }) {
      const target = resolveTarget(process.env);
      printJson((await call(target, action === 'mfa' ? 'GET' : 'DELETE', ownerPath(id!, values.member, '/mfa'))).body);
      return 0;
    },
  };
}

export const org: Family = {
  name: 'org',
  commands: [
    create,
    list,
    byId('get', 'Print an organization as JSON.', 'authgate org get org_123'),
    update,
    byId('delete', 'Delete an organization with all its keys and sessions.'),
    limit,
    keyLimit,
    plan,
    resetPassword,
    mfaCommand('mfa', [
      'Print whether an organization has a second factor: TOTP, its passkeys',
      '(names, dates), recovery codes left (never a secret or a key). With',
      '--member, the member\'s own.',
    ], 'authgate org mfa org_123'),
    mfaCommand('remove-mfa', [
      'Remove every second factor of an organization (TOTP, passkeys,',
      'recovery codes), for one that lost them all; every login session ends.',
      'Audited as mfa.removed. With --member, the member\'s own: only its',
      'sessions end.',
    ], 'authgate org remove-mfa org_123'),
    orgUsage,
    orgExternalIds,
    orgSetExternalId,
    orgRemoveExternalId,
    orgMembers,
    orgMemberRole,
    orgRemoveMember,
  ],
};
