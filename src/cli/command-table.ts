// One declarative row per CLI command: the dispatcher parses by it, checks by it and prints its help from it.
import { type CliError, quoted, usageError } from './cli-error.js';

/** A flag as a command takes it: `--org <id>` is { name: 'org', type: 'string', value: 'id' }. */
export type FlagSpec = {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  /** The placeholder in the usage (`<id>`); a string flag has one. */
  readonly value?: string;
  readonly required?: boolean;
  /**
   * Another command family given this flag is refused as `--follow is for audit tail` before
   * anything else of it is looked at (unless that family names the flag itself).
   */
  readonly onlyHere?: boolean;
  /**
   * The commands that do not take the flag accept and ignore it (the first CLI parsed every
   * flag for every command, and `--name-prefix` was never refused elsewhere).
   */
  readonly ignoredElsewhere?: boolean;
};

/** Two flags of which one at most (optional: `[--a | --b]`) or exactly one (required) is given. */
export type OneOf = {
  readonly oneOf: readonly [FlagSpec, FlagSpec];
  readonly required: boolean;
  /** Required alternatives are two usage entries, each with its description. */
  readonly descriptions?: readonly [readonly string[], readonly string[]];
};

export type FlagUse = FlagSpec | OneOf;

/** Flags refused by one message: `<command> takes no --a or --b (hint)`, or `message` as is. */
export type Refusal = { readonly flags: readonly string[] | 'all'; readonly hint?: string; readonly message?: string };

export type Values = Readonly<Record<string, string | boolean | undefined>>;

export type CommandContext = {
  /** The flags given, by name (`values.org`); only the command's own are looked at. */
  readonly values: Values;
  /** The positional arguments after the command's name, as many as its `args`. */
  readonly args: readonly string[];
};

export type Command = {
  readonly family: string;
  /** The subcommand (`create`); none for a family's bare command (`authgate config`). */
  readonly action?: string;
  /** Positional arguments, in order, as the usage names them (`<id>`). */
  readonly args?: readonly string[];
  /** How a missing or extra positional is named: `missing an organization id`. Default: the command. */
  readonly argsWhat?: string;
  /** The message for positionals when the command takes none, instead of `unexpected extra argument…`. */
  readonly extraArgs?: string;
  readonly flags?: readonly FlagUse[];
  /** Wording of refused flags, checked in this order; a flag in none is `<command> takes no --x`. */
  readonly refuse?: readonly Refusal[];
  /** Flags accepted and ignored: 'all' for a command that looks at none. */
  readonly ignores?: 'all';
  /** The help text, as printed from column 26: lines of at most 70 characters. */
  readonly description: readonly string[];
  /** Example lines for the usage (`authgate org get org_123`). */
  readonly examples?: readonly string[];
  /** Exit code; an error is a thrown CliError. */
  run(context: CommandContext): Promise<number>;
};

export type Family = { readonly name: string; readonly commands: readonly Command[] };

const isOneOf = (use: FlagUse): use is OneOf => 'oneOf' in use;

export const commandName = (command: Command) => (command.action === undefined ? command.family : `${command.family} ${command.action}`);

/** Every flag a command takes, one-of alternatives included. */
export function flagsOf(command: Command): FlagSpec[] {
  return (command.flags ?? []).flatMap((use) => (isOneOf(use) ? [...use.oneOf] : [use]));
}

const given = (values: Values, name: string) => values[name] !== undefined;
const blank = (value: string | boolean | undefined) => value === undefined || (typeof value === 'string' && value.trim() === '');
const flagText = (flag: FlagSpec) => (flag.value === undefined ? `--${flag.name}` : `--${flag.name} <${flag.value}>`);
const list = (words: readonly string[]) => (words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words.at(-1)!}`);

/** Whether `command` has a word for `flag`: takes it, refuses it by a message, or ignores every flag. */
export function mentions(command: Command, flag: string): boolean {
  if (command.ignores === 'all' || flagsOf(command).some((f) => f.name === flag)) return true;
  return (command.refuse ?? []).some((r) => r.flags === 'all' || r.flags.includes(flag));
}

/**
 * The checks the table implies, in the order the first CLI made them: flags it does not take
 * (`ignoredAnywhere`: flags other commands declare ignoredElsewhere), then the positionals, then
 * the required flags, then the one-of groups. Returns nothing; throws the usage error.
 */
export function checkUsage(command: Command, values: Values, positionals: readonly string[], ignoredAnywhere: ReadonlySet<string>): void {
  const name = commandName(command);
  const takes = new Set(flagsOf(command).map((f) => f.name));
  if (command.ignores !== 'all') {
    const refused = Object.keys(values).filter((flag) => given(values, flag) && !takes.has(flag) && !ignoredAnywhere.has(flag));
    for (const refusal of command.refuse ?? []) {
      if (refused.some((flag) => refusal.flags === 'all' || refusal.flags.includes(flag))) throw refusalError(name, refusal);
    }
    if (refused.length > 0) throw usageError(`${name} takes no --${refused[0]}`);
  }
  const args = command.args ?? [];
  const what = command.argsWhat ?? name;
  if (positionals.length < args.length) throw usageError(`missing ${what}`);
  if (positionals.length > args.length) {
    // Extra positionals are not echoed: a mistyped password could be among them.
    const extra = positionals.length - args.length;
    throw usageError(command.extraArgs ?? `unexpected extra argument${extra > 1 ? 's' : ''} after ${what}`);
  }
  for (const use of command.flags ?? []) {
    if (!isOneOf(use)) {
      if (use.required === true && blank(values[use.name])) throw usageError(`${name} needs ${flagText(use)}`);
      continue;
    }
    const [a, b] = use.oneOf;
    if (use.required && given(values, a.name) === given(values, b.name)) throw usageError(`${name} needs one of ${flagText(a)} or ${flagText(b)}`);
    if (!use.required && given(values, a.name) && given(values, b.name)) throw usageError(`${name} takes --${a.name} or --${b.name}, not both`);
    for (const flag of use.oneOf) if (use.required && given(values, flag.name) && blank(values[flag.name])) throw usageError(`${name} needs ${flagText(flag)}`);
  }
}

function refusalError(name: string, refusal: Refusal): CliError {
  if (refusal.message !== undefined) return usageError(refusal.message);
  const flags = refusal.flags === 'all' ? [] : refusal.flags.map((f) => `--${f}`);
  return usageError(`${name} takes no ${list(flags)}${refusal.hint !== undefined ? ` (${refusal.hint})` : ''}`);
}

/** `missing org subcommand (create, list or get)` / `unknown org subcommand 'x'`, with the full usage. */
export function subcommandError(family: Family, action: string | undefined): CliError {
  if (action !== undefined) return usageError(`unknown ${family.name} subcommand ${quoted(action)}`, true);
  const actions = family.commands.flatMap((c) => (c.action === undefined ? [] : [c.action]));
  return usageError(`missing ${family.name} subcommand (${list(actions)})`, true);
}

/** The synopses of a command: one, or one per alternative of a required one-of group. */
function synopses(command: Command): Array<{ synopsis: string; description: readonly string[] }> {
  const head = [commandName(command), ...(command.args ?? []).map((a) => `<${a}>`)];
  let variants: Array<{ words: string[]; description: readonly string[] }> = [{ words: head, description: command.description }];
  for (const use of command.flags ?? []) {
    if (!isOneOf(use)) {
      const text = flagText(use);
      for (const v of variants) v.words.push(use.required === true ? text : `[${text}]`);
    } else if (!use.required) {
      for (const v of variants) v.words.push(`[${flagText(use.oneOf[0])} | ${flagText(use.oneOf[1])}]`);
    } else {
      variants = variants.flatMap((v) =>
        use.oneOf.map((flag, i) => ({ words: [...v.words, flagText(flag)], description: use.descriptions?.[i] ?? v.description })),
      );
    }
  }
  return variants.map((v) => ({ synopsis: v.words.join(' '), description: v.description }));
}

const COLUMN = 26;

/** One entry of the usage: the synopsis, and the description from column 26 (on its own line when the synopsis is long). */
export function usageEntry(synopsis: string, description: readonly string[]): string {
  const indent = ' '.repeat(COLUMN);
  const first = `  ${synopsis}`;
  const [head = '', ...rest] = description;
  const lines = first.length + 2 <= COLUMN ? [first.padEnd(COLUMN) + head] : [first, indent + head];
  return [...lines, ...rest.map((line) => indent + line)].join('\n') + '\n';
}

/** A command's help: each of its usage entries. */
export function commandHelp(command: Command): string {
  return synopses(command)
    .map(({ synopsis, description }) => usageEntry(synopsis, description))
    .join('');
}
