// authgate org usage <id>: an organization's usage figures and this period's quota (issue 47), through the admin API.
import { call, orgPath, printJson, resolveTarget } from '../admin-client.js';
import type { Command } from '../command-table.js';
import { NOT_SESSIONS, ONE_ORGANIZATION } from './org-id.js';

export const orgUsage: Command = {
  ...ONE_ORGANIZATION,
  action: 'usage',
  flags: [
    { name: 'granularity', type: 'string', value: 'hour|day' },
    { name: 'from', type: 'string', value: 'date' },
    { name: 'to', type: 'string', value: 'date' },
    { name: 'key', type: 'string', value: 'keyId' },
  ],
  refuse: [NOT_SESSIONS, { flags: ['name', 'email'] }, { flags: ['org'], hint: 'the id is an argument' }],
  description: [
    "Print an organization's forwarded requests by UTC day (default: the",
    'last 30) or hour, by outcome, and this period\'s quota used and left.',
  ],
  examples: ['authgate org usage org_123 --granularity hour --key key_456'],
  async run({ args: [id], values }) {
    const target = resolveTarget(process.env);
    const query = new URLSearchParams();
    if (typeof values.granularity === 'string') query.set('granularity', values.granularity);
    if (typeof values.from === 'string') query.set('from', values.from);
    if (typeof values.to === 'string') query.set('to', values.to);
    if (typeof values.key === 'string') query.set('keyId', values.key);
    const text = query.toString();
    printJson((await call(target, 'GET', orgPath(id!, `/usage${text === '' ? '' : `?${text}`}`))).body);
    return 0;
  },
};
