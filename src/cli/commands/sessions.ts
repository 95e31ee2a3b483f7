// authgate sessions list|end: an organization's login sessions through the admin API; never a token.
import { call, orgPath, printJson, resolveTarget } from '../admin-client.js';
import type { Command, Family, Refusal } from '../command-table.js';
import { orgFlag } from './flags.js';

const NOT_ORG_OR_KEYS: Refusal = { flags: ['name', 'email', 'key'] };

const list: Command = {
  family: 'sessions',
  action: 'list',
  flags: [orgFlag],
  refuse: [NOT_ORG_OR_KEYS, { flags: ['session', 'all'] }],
  description: [
    "Print an organization's live login sessions as JSON, the latest",
    'login first: id, login time, expiry and client; never a token.',
  ],
  async run({ values }) {
    printJson((await call(resolveTarget(process.env), 'GET', orgPath(String(values.org), '/sessions'))).body);
    return 0;
  },
};

const end: Command = {
  family: 'sessions',
  action: 'end',
  flags: [
    orgFlag,
    {
      oneOf: [
        { name: 'session', type: 'string', value: 'sessionId' },
        { name: 'all', type: 'boolean' },
      ],
      required: true,
      descriptions: [
        ['End one login session: its token is refused at once, everywhere.'],
        ['End every login session of the organization (its API keys stay).'],
      ],
    },
  ],
  refuse: [NOT_ORG_OR_KEYS],
  description: ['End one login session, or all of them.'],
  examples: ['authgate sessions end --org org_123 --all'],
  async run({ values }) {
    const target = resolveTarget(process.env);
    const path = orgPath(String(values.org), '/sessions');
    if (values.all === true) printJson((await call(target, 'DELETE', path)).body);
    else await call(target, 'DELETE', `${path}/${encodeURIComponent(String(values.session))}`);
    return 0;
  },
};

export const sessions: Family = { name: 'sessions', commands: [list, end] };
