// authgate audit tail [--org] [--member] [--follow]: the newest audit events as JSON lines, then new ones as they come.
import { call, resolveTarget, type Target } from '../admin-client.js';
import type { Command, Family } from '../command-table.js';

/** How often --follow asks for new events (the help says 2 seconds). */
const FOLLOW_INTERVAL_MS = 2000;

/** An audit position `<ms>-<seq>` as a comparable pair. */
function positionOf(id: string): [number, number] {
  const [ms = '0', seq = '0'] = id.split('-');
  return [Number(ms), Number(seq)];
}

const isAfter = (id: string, last: string | undefined) => {
  if (last === undefined) return true;
  const [a, b] = [positionOf(id), positionOf(last)];
  return a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1];
};

/** Prints what is newer than `last` of the newest page, oldest first; returns the new last. */
async function printNewer(target: Target, query: string, last: string | undefined): Promise<string | undefined> {
  const page = (await call(target, 'GET', query)).body as { events?: Array<{ id: string }> } | undefined;
  // The page is newest first; printed oldest first, only what is newer than the last printed.
  for (const event of [...(page?.events ?? [])].reverse()) {
    if (!isAfter(event.id, last)) continue;
    process.stdout.write(`${JSON.stringify(event)}\n`);
    last = event.id;
  }
  return last;
}

const tail: Command = {
  family: 'audit',
  action: 'tail',
  flags: [
    { name: 'org', type: 'string', value: 'id' },
    { name: 'member', type: 'string', value: 'memberId', onlyHere: true },
    { name: 'follow', type: 'boolean', onlyHere: true },
  ],
  refuse: [{ flags: 'all', message: 'audit tail takes only --org, --member and --follow' }],
  description: [
    'Print the newest audit events (all organizations, or one), one',
    'JSON line each, oldest first; with --follow, keep printing new',
    'ones every 2 seconds until interrupted. --member: only what that',
    'member did (issue 50).',
  ],
  examples: ['authgate audit tail --org org_123 --member mem_456'],
  async run({ values }) {
    const target = resolveTarget(process.env);
    const query = `admin/audit?limit=100${typeof values.org === 'string' ? `&org=${encodeURIComponent(values.org)}` : ''}${typeof values.member === 'string' ? `&member=${encodeURIComponent(values.member)}` : ''}`;
    let last = await printNewer(target, query, undefined);
    if (values.follow !== true) return 0;
    // Until interrupted (Ctrl-C, SIGTERM): the exit code is the interruption's.
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS));
      last = await printNewer(target, query, last);
    }
  },
};

export const audit: Family = { name: 'audit', commands: [tail] };
