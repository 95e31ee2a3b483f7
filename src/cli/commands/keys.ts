// authgate keys list|revoke: an organization's API keys through the admin API; never a secret.
import { allPages, call, orgPath, printJson, resolveTarget } from '../admin-client.js';
import type { Command, Family, Refusal } from '../command-table.js';
import { orgFlag } from './flags.js';

const REFUSE: Refusal[] = [{ flags: ['name', 'email'] }, { flags: ['session', 'all'] }];

const list: Command = {
  family: 'keys',
  action: 'list',
  flags: [orgFlag],
  refuse: REFUSE,
  description: [
    "Print an organization's API keys as JSON, newest first: id,",
    'prefix, name, scopes, creation, expiry and last use; never a secret.',
  ],
  examples: ['authgate keys list --org org_123'],
  async run({ values }) {
    const target = resolveTarget(process.env);
    printJson({ keys: await allPages(target, orgPath(String(values.org), '/api-keys'), 'keys') });
    return 0;
  },
};

const revoke: Command = {
  family: 'keys',
  action: 'revoke',
  flags: [orgFlag, { name: 'key', type: 'string', value: 'keyId', required: true }],
  refuse: REFUSE,
  description: ['Revoke one API key of an organization, at once, everywhere.'],
  examples: ['authgate keys revoke --org org_123 --key key_456'],
  async run({ values }) {
    const target = resolveTarget(process.env);
    await call(target, 'DELETE', orgPath(String(values.org), `/api-keys/${encodeURIComponent(String(values.key))}`));
    return 0;
  },
};

export const keys: Family = { name: 'keys', commands: [list, revoke] };
