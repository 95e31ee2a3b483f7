// authgate config [check]: the gateway's settings table, and a check of this environment against it.
import type { Command, Family } from '../command-table.js';

const table: Command = {
  family: 'config',
  extraArgs: 'config takes no arguments',
  refuse: [{ flags: 'all', message: 'config takes no arguments' }],
  description: [
    'Print every setting the gateway reads: its default, what it',
    'accepts and what it does. No value is read or shown.',
  ],
  async run() {
    // The table, never the environment: a secret cannot be printed because none is read.
    const { settingsText } = await import('../../config/settings-doc.js');
    process.stdout.write(settingsText());
    return 0;
  },
};

const check: Command = {
  family: 'config',
  action: 'check',
  extraArgs: 'config check takes no arguments',
  // The first CLI looked at no flag of `config check`; it still does not.
  ignores: 'all',
  description: [
    "Check this environment's settings as a gateway start would",
    '(the same code: node dist/main.js --check), without listening',
    'or connecting: every problem named by its setting, never its',
    'value. Exit 0 valid, 1 not.',
  ],
  async run() {
    // The gateway's own check (config/check.ts), on this process's environment: exit 0 or 1.
    // Imported here, not at the top: it loads most of the gateway, which no other command needs.
    const { checkConfig } = await import('../../config/check.js');
    return checkConfig(process.env, { stdout: (line) => process.stdout.write(`${line}\n`), stderr: (line) => process.stderr.write(`${line}\n`) });
  },
};

export const config: Family = { name: 'config', commands: [table, check] };
