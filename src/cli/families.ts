// The CLI's command families, in the order the usage lists them: adding a family is one entry here.
import type { ParseArgsOptionsConfig } from 'node:util';
import { commandName, type Family, flagsOf } from './command-table.js';
import { audit } from './commands/audit.js';
import { config } from './commands/config.js';
import { keys } from './commands/keys.js';
import { org } from './commands/org.js';
import { routes } from './commands/routes-family.js';
import { sessions } from './commands/sessions.js';

/** Every command family, in the order the usage lists them. */
export const FAMILIES: readonly Family[] = [org, keys, sessions, audit, config, routes];

/** The options parseArgs knows: -h, -V and every flag of every command (one type per name). */
export function parserOptions(families: readonly Family[]): ParseArgsOptionsConfig {
  const options: ParseArgsOptionsConfig = { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'V' } };
  for (const command of families.flatMap((f) => f.commands)) {
    for (const flag of flagsOf(command)) {
      const known = options[flag.name];
      if (known !== undefined && known.type !== flag.type) throw new Error(`--${flag.name} is a ${known.type} in one command and a ${flag.type} in ${commandName(command)}`);
      options[flag.name] = { type: flag.type };
    }
  }
  return options;
}

