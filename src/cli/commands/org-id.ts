import type { Refusal } from '../command-table.js';

/** What every `org <action> <id>` command has: one organization, named by its id (orgPath). */
export const ONE_ORGANIZATION = { family: 'org', args: ['id'], argsWhat: 'an organization id' } as const;

/** Every org subcommand refuses these first: they belong to keys and sessions. */
export const NOT_SESSIONS: Refusal = { flags: ['session', 'all'] };

/** The refusals of an org command that takes the id and nothing else. */
export const ID_ONLY: readonly Refusal[] = [NOT_SESSIONS, { flags: ['name', 'email'] }, { flags: ['org', 'key'], hint: 'the id is an argument' }];
