#!/usr/bin/env node
/**
 * authgate: the admin API of a running gateway from the command line, and the gateway's settings
 * table (`authgate config`). This file dispatches: each command family is a module of
 * commands/, each command one row of the command table (command-table.ts) that its arguments
 * are parsed and checked by and its help is printed from. A new family is one entry in
 * FAMILIES (families.ts).
 *
 * Exit codes: 0 done; 1 the gateway answered with an error or could not be reached;
 * 2 a usage or configuration error (nothing was sent); 130 interrupted at the password prompt.
 * The admin token and the password are never printed, and the password is never read from argv.
 */
import { parseArgs } from 'node:util';
import { VERSION } from './admin-client.js';
import { CliError, quoted, usageError } from './cli-error.js';
import { checkUsage, commandName, flagsOf, mentions, subcommandError, type Values } from './command-table.js';
import { FAMILIES, parserOptions } from './families.js';
import { PasswordInputError, PromptInterrupted } from './password-input.js';
import { usageText } from './usage.js';

/** `--password` / `--password=...` anywhere before `--`: refused before anything else is parsed. */
function refusePasswordFlag(args: string[]): void {
  for (const arg of args) {
    if (arg === '--') return;
    if (arg === '--password' || arg.startsWith('--password=')) {
      throw new CliError(
        'refusing --password: a password on the command line leaks into shell history and the process list. ' +
          'Pipe it on stdin (first line) or run in a terminal to be prompted. Nothing was sent.',
        2,
      );
    }
  }
}

function parse(args: string[]): { values: Values; positionals: string[] } {
  try {
    // No option is `multiple`, so every value is a string or a boolean.
    return parseArgs({ args, allowPositionals: true, strict: true, options: parserOptions(FAMILIES) }) as { values: Values; positionals: string[] };
  } catch (error) {
    // parseArgs names the option (never its value); safe to show.
    throw usageError(error instanceof Error ? error.message : String(error));
  }
}

async function main(args: string[]): Promise<number> {
  refusePasswordFlag(args);
  const { values, positionals } = parse(args);
  if (values.version === true) {
    process.stdout.write(`authgate-cli ${VERSION}\n`);
    return 0;
  }
  const [group, action, ...rest] = positionals;
  if (values.help === true || group === 'help') {
    process.stdout.write(usageText(FAMILIES));
    return 0;
  }
  if (group === undefined) throw usageError('missing command', true);
  const commands = FAMILIES.flatMap((f) => f.commands);
  const family = FAMILIES.find((f) => f.name === group);
  // A flag only one command takes (--follow), given to a family that has no word for it.
  for (const owner of commands) {
    for (const flag of flagsOf(owner)) {
      if (flag.onlyHere === true && values[flag.name] !== undefined && owner.family !== group && !(family?.commands ?? []).some((c) => mentions(c, flag.name))) {
        throw usageError(`--${flag.name} is for ${commandName(owner)}`);
      }
    }
  }
  if (family === undefined) throw usageError(`unknown command ${quoted(group)}`, true);
  // The subcommand by name; else the family's bare command (`config`) with every word as an argument.
  const named = family.commands.find((c) => c.action !== undefined && c.action === action);
  const command = named ?? family.commands.find((c) => c.action === undefined);
  if (command === undefined) throw subcommandError(family, action);
  const given = named !== undefined ? rest : positionals.slice(1);
  const ignoredAnywhere = new Set(commands.flatMap((c) => flagsOf(c).filter((f) => f.ignoredElsewhere === true).map((f) => f.name)));
  checkUsage(command, values, given, ignoredAnywhere);
  return command.run({ values, args: given });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`authgate: ${error.message}\n`);
      if (error.usage === 'full') process.stderr.write(`\n${usageText(FAMILIES)}`);
      else if (error.usage === 'hint') process.stderr.write(`Run 'authgate --help' for usage.\n`);
      process.exitCode = error.exitCode;
    } else if (error instanceof PromptInterrupted) {
      process.exitCode = 130;
    } else if (error instanceof PasswordInputError) {
      process.stderr.write(`authgate: ${error.message}\n`);
      process.exitCode = 2;
    } else {
      // Unforeseen (a stdin read error, say): the message only, no stack, no values.
      process.stderr.write(`authgate: ${error instanceof Error ? error.message : 'unexpected failure'}\n`);
      process.exitCode = 1;
    }
  },
);
