#!/usr/bin/env node
/**
 * authgate: the admin API of a running gateway from the command line, and the gateway's settings
 * table (`authgate config`).
 *
 * Exit codes: 0 done; 1 the gateway answered with an error or could not be reached;
 * 2 a usage or configuration error (nothing was sent); 130 interrupted at the password prompt.
 * The admin token and the password are never printed, and the password is never read from argv.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkConfig } from '../config/check.js';
import { settingsText } from '../config/settings-doc.js';
import { PasswordInputError, PromptInterrupted, promptNewPassword, readFirstLine } from './password-input.js';
import { ROUTES_USAGE, routesCommand } from './commands/routes.js';

const USAGE = `Usage: authgate <command> [options]

Commands:
  org create --name <name> --email <email>
                          Create an organization. The password is read from the first
                          line of stdin when stdin is not a terminal, otherwise prompted
                          for twice with echo off. It is never taken from the command line.
  org list [--email <email> | --name-prefix <prefix>]
                          Print the organizations as JSON, by e-mail (or by name with
                          --name-prefix, case-insensitive); --email finds one. Never a
                          password hash.
  org get <id>            Print an organization as JSON.
  org delete <id>         Delete an organization with all its keys and sessions.
  org limit <id> <limit>  Set an organization's rate limit per credential on forwarded
                          routes: <count>/<window> (e.g. 600/60s, 100/1m), off (none), or
                          default (AUTHGATE_RATE_LIMIT again). Prints the organization.
  org key-limit <id> <count>
                          Set how many API keys an organization may hold (1 to 1000000), or
                          default (AUTHGATE_MAX_KEYS_PER_ORGANIZATION again).
  keys list --org <id>    Print an organization's API keys as JSON, newest first: id,
                          prefix, name, scopes, creation, expiry and last use; never a secret.
  keys revoke --org <id> --key <keyId>
                          Revoke one API key of an organization, at once, everywhere.
  sessions list --org <id>
                          Print an organization's live login sessions as JSON, the latest
                          login first: id, login time, expiry and client; never a token.
  sessions end --org <id> --session <sessionId>
                          End one login session: its token is refused at once, everywhere.
  sessions end --org <id> --all
                          End every login session of the organization (its API keys stay).
  audit tail [--org <id>] [--follow]
                          Print the newest audit events (all organizations, or one), one
                          JSON line each, oldest first; with --follow, keep printing new
                          ones every 2 seconds until interrupted.
  config                  Print every setting the gateway reads: its default, what it
                          accepts and what it does. No value is read or shown.
  config check            Check this environment's settings as a gateway start would
                          (the same code: node dist/main.js --check), without listening
                          or connecting: every problem named by its setting, never its
                          value. Exit 0 valid, 1 not.
${ROUTES_USAGE}  help                    Print this help.

Options:
  -h, --help              Print this help.
  -V, --version           Print the version.

Environment:
  AUTHGATE_ADMIN_TOKEN    Admin API bearer token (required).
  AUTHGATE_ADMIN_URL      Base URL of the ops port
                          (default: http://127.0.0.1:\${AUTHGATE_OPS_PORT:-9090}).
  AUTHGATE_OPS_PORT       Ops port used by the default AUTHGATE_ADMIN_URL.

Exit status: 0 success, 1 error answered by the gateway or gateway unreachable,
2 usage or configuration error, 130 interrupted.

Examples:
  printf '%s\\n' "$PASSWORD" | authgate org create --name Acme --email ops@acme.example
  authgate org list --name-prefix acme
  authgate org get org_123
  authgate org limit org_123 600/60s
  authgate keys list --org org_123
  authgate keys revoke --org org_123 --key key_456
  authgate sessions end --org org_123 --all
`;

const REQUEST_TIMEOUT_MS = 30_000;

/** A failure that ends the CLI with `exitCode` after printing `message` (already safe to print). */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly usage: 'none' | 'hint' | 'full' = 'none',
  ) {
    super(message);
  }
}

/** Exit 2; the whole usage text for a missing or unknown command, a pointer to it otherwise. */
const usageError = (message: string, fullUsage = false) => new CliError(message, 2, fullUsage ? 'full' : 'hint');

function readVersion(): string {
  try {
    // dist/cli/authgate.js and src/cli/authgate.ts both sit two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const VERSION = readVersion();

type Target = { base: URL; token: string };

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function resolveTarget(env: NodeJS.ProcessEnv): Target {
  const token = nonEmpty(env.AUTHGATE_ADMIN_TOKEN);
  if (token === undefined) throw new CliError('AUTHGATE_ADMIN_TOKEN is not set; it must hold the admin API token of the gateway', 2);
  const raw = nonEmpty(env.AUTHGATE_ADMIN_URL) ?? `http://127.0.0.1:${nonEmpty(env.AUTHGATE_OPS_PORT) ?? '9090'}`;
  let base: URL;
  try {
    base = new URL(raw);
  } catch {
    throw new CliError('AUTHGATE_ADMIN_URL is not a valid URL', 2);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new CliError('AUTHGATE_ADMIN_URL must be an http: or https: URL', 2);
  if (base.username !== '' || base.password !== '') throw new CliError('AUTHGATE_ADMIN_URL must not carry credentials; the token goes in AUTHGATE_ADMIN_TOKEN', 2);
  // Keep any path prefix (a gateway behind a proxy) and resolve relative to it.
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  return { base, token };
}

/** The target as it may be shown: never the token, never credentials (refused above anyway). */
function display(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

type ApiResult = { status: number; body: unknown };

async function call(target: Target, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<ApiResult> {
  const url = new URL(path, target.base);
  const headers: Record<string, string> = {
    authorization: `Bearer ${target.token}`,
    'user-agent': `authgate-cli/${VERSION}`,
    accept: 'application/json, application/problem+json',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
      redirect: 'manual', // never replay the token (or a password) to wherever a redirect points
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new CliError(`cannot reach the gateway at ${display(target.base)}: ${describeFetchError(error)}`, 1);
  }
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) throw new CliError(formatHttpError(response, parsed), 1);
  return { status: response.status, body: parsed };
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000}s`;
    // undici hides the reason (ECONNREFUSED, ENOTFOUND, ...) in `cause`.
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as NodeJS.ErrnoException).code;
      return code !== undefined ? `${code}` : cause.message;
    }
    return error.message;
  }
  return String(error);
}

function formatHttpError(response: Response, problem: unknown): string {
  let title = response.statusText || 'HTTP error';
  let detail: string | undefined;
  if (typeof problem === 'object' && problem !== null) {
    const p = problem as { title?: unknown; detail?: unknown };
    if (typeof p.title === 'string' && p.title !== '') title = p.title;
    if (typeof p.detail === 'string' && p.detail !== '') detail = p.detail;
  }
  if (response.status >= 300 && response.status < 400) detail ??= 'the admin URL redirects; point AUTHGATE_ADMIN_URL at the ops port itself';
  return `${response.status} ${oneLine(title)}${detail !== undefined ? `: ${oneLine(detail)}` : ''}`;
}

/** Server text goes to a terminal: no control characters, no line breaks. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}

function printJson(value: unknown): void {
  if (value === undefined) return; // an empty or non-JSON success body: nothing to show
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

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

async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    return promptNewPassword({ input: process.stdin, output: process.stderr });
  }
  const line = await readFirstLine(process.stdin);
  if (line === undefined || line === '') throw new CliError('no password on stdin: pipe it as the first line, or run in a terminal to be prompted', 2);
  return line;
}

type Parsed = {
  positionals: string[];
  values: { help?: boolean; version?: boolean; name?: string; email?: string; org?: string; key?: string; session?: string; all?: boolean; follow?: boolean; 'name-prefix'?: string };
};

function parse(args: string[]): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
        name: { type: 'string' },
        email: { type: 'string' },
        org: { type: 'string' },
        key: { type: 'string' },
        session: { type: 'string' },
        all: { type: 'boolean' },
        follow: { type: 'boolean' },
        'name-prefix': { type: 'string' },
      },
    });
    return { values, positionals };
  } catch (error) {
    // parseArgs names the option (never its value); safe to show.
    throw usageError(error instanceof Error ? error.message : String(error));
  }
}

/** Extra positionals are not echoed: a mistyped password could be among them. */
function expectPositionals(positionals: string[], count: number, what: string): void {
  if (positionals.length < count) throw usageError(`missing ${what}`);
  if (positionals.length > count) throw usageError(`unexpected extra argument${positionals.length - count > 1 ? 's' : ''} after ${what}`);
}

function idPath(id: string): string {
  return `admin/organizations/${encodeURIComponent(id)}`;
}

function keysPath(orgId: string, keyId?: string): string {
  return `${idPath(orgId)}/api-keys${keyId !== undefined ? `/${encodeURIComponent(keyId)}` : ''}`;
}

/** A required option's value: a usage error when it is missing or blank. */
function required(value: string | undefined, what: string): string {
  if (value === undefined || value.trim() === '') throw usageError(what);
  return value;
}

async function keysCommand(action: string | undefined, rest: string[], values: Parsed['values']): Promise<number> {
  if (action === undefined) throw usageError('missing keys subcommand (list or revoke)', true);
  if (action !== 'list' && action !== 'revoke') throw usageError(`unknown keys subcommand '${oneLine(action).slice(0, 40)}'`, true);
  if (values.name !== undefined || values.email !== undefined) throw usageError(`keys ${action} takes no --name or --email`);
  if (values.session !== undefined || values.all !== undefined) throw usageError(`keys ${action} takes no --session or --all`);
  if (rest.length > 0) throw usageError(`unexpected extra argument${rest.length > 1 ? 's' : ''} after keys ${action}`);
  const orgId = required(values.org, `keys ${action} needs --org <id>`);
  if (action === 'list') {
    if (values.key !== undefined) throw usageError('keys list takes no --key');
    const target = resolveTarget(process.env);
    // Every page, newest first, as one list: the admin API gives them 500 at a time.
    const keys: unknown[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=500${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = (await call(target, 'GET', keysPath(orgId) + query)).body as { keys?: unknown[]; nextCursor?: string | null } | undefined;
      keys.push(...(page?.keys ?? []));
      cursor = page?.nextCursor ?? null;
    } while (cursor !== null);
    printJson({ keys });
    return 0;
  }
  const keyId = required(values.key, 'keys revoke needs --key <keyId>');
  const target = resolveTarget(process.env);
  await call(target, 'DELETE', keysPath(orgId, keyId));
  return 0;
}

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

async function auditCommand(action: string | undefined, rest: string[], values: Parsed['values']): Promise<number> {
  if (action !== 'tail') throw usageError(action === undefined ? 'missing audit subcommand (tail)' : `unknown audit subcommand '${oneLine(action).slice(0, 40)}'`, true);
  if (values.name !== undefined || values.email !== undefined || values.key !== undefined || values.session !== undefined || values.all !== undefined) {
    throw usageError('audit tail takes only --org and --follow');
  }
  if (rest.length > 0) throw usageError(`unexpected extra argument${rest.length > 1 ? 's' : ''} after audit tail`);
  const target = resolveTarget(process.env);
  const query = `admin/audit?limit=100${values.org === undefined ? '' : `&org=${encodeURIComponent(values.org)}`}`;
  let last: string | undefined;
  const printNew = async () => {
    const page = (await call(target, 'GET', query)).body as { events?: Array<{ id: string }> } | undefined;
    // The page is newest first; printed oldest first, only what is newer than the last printed.
    for (const event of [...(page?.events ?? [])].reverse()) {
      if (!isAfter(event.id, last)) continue;
      process.stdout.write(`${JSON.stringify(event)}\n`);
      last = event.id;
    }
  };
  await printNew();
  if (values.follow !== true) return 0;
  // Until interrupted (Ctrl-C, SIGTERM): the exit code is the interruption's.
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await printNew();
  }
}

async function sessionsCommand(action: string | undefined, rest: string[], values: Parsed['values']): Promise<number> {
  if (action === undefined) throw usageError('missing sessions subcommand (list or end)', true);
  if (action !== 'list' && action !== 'end') throw usageError(`unknown sessions subcommand '${oneLine(action).slice(0, 40)}'`, true);
  if (values.name !== undefined || values.email !== undefined || values.key !== undefined) throw usageError(`sessions ${action} takes no --name, --email or --key`);
  if (rest.length > 0) throw usageError(`unexpected extra argument${rest.length > 1 ? 's' : ''} after sessions ${action}`);
  const orgId = required(values.org, `sessions ${action} needs --org <id>`);
  const path = `${idPath(orgId)}/sessions`;
  if (action === 'list') {
    if (values.session !== undefined || values.all !== undefined) throw usageError('sessions list takes no --session or --all');
    printJson((await call(resolveTarget(process.env), 'GET', path)).body);
    return 0;
  }
  if ((values.session !== undefined) === (values.all === true)) throw usageError('sessions end needs one of --session <sessionId> or --all');
  const target = resolveTarget(process.env);
  if (values.all === true) {
    printJson((await call(target, 'DELETE', path)).body);
  } else {
    await call(target, 'DELETE', `${path}/${encodeURIComponent(required(values.session, 'sessions end needs --session <sessionId>'))}`);
  }
  return 0;
}

async function main(args: string[]): Promise<number> {
  refusePasswordFlag(args);
  // Offline, with options of its own (--file): commands/routes.ts parses its arguments itself.
  if (args[0] === 'routes') return routesCommand(args.slice(1), { env: process.env, stdout: (line) => process.stdout.write(`${line}\n`), stderr: (line) => process.stderr.write(`${line}\n`) });
  const { values, positionals } = parse(args);

  if (values.version) {
    process.stdout.write(`authgate-cli ${VERSION}\n`);
    return 0;
  }
  const [group, action, ...rest] = positionals;
  if (values.help || group === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (group === undefined) throw usageError('missing command', true);
  if (group === 'config' && action === 'check') {
    if (rest.length > 0) throw usageError('config check takes no arguments');
    // The gateway's own check (config/check.ts), on this process's environment: exit 0 or 1.
    return checkConfig(process.env, { stdout: (line) => process.stdout.write(`${line}\n`), stderr: (line) => process.stderr.write(`${line}\n`) });
  }
  if (group === 'config') {
    if (action !== undefined || values.name !== undefined || values.email !== undefined || values.org !== undefined || values.key !== undefined || values.session !== undefined || values.all !== undefined || values.follow !== undefined) {
      throw usageError('config takes no arguments');
    }
    // The table, never the environment: a secret cannot be printed because none is read.
    process.stdout.write(settingsText());
    return 0;
  }
  if (values.follow !== undefined && group !== 'audit') throw usageError('--follow is for audit tail');
  if (group === 'keys') return keysCommand(action, rest, values);
  if (group === 'sessions') return sessionsCommand(action, rest, values);
  if (group === 'audit') return auditCommand(action, rest, values);
  if (group !== 'org') throw usageError(`unknown command '${oneLine(group).slice(0, 40)}'`, true);
  if (action === undefined) throw usageError('missing org subcommand (create, list, get, limit, key-limit or delete)', true);
  if (values.session !== undefined || values.all !== undefined) throw usageError(`org ${oneLine(action).slice(0, 40)} takes no --session or --all`);

  switch (action) {
    case 'create': {
      if (rest.length > 0) throw usageError('org create takes no positional arguments');
      if (values.org !== undefined || values.key !== undefined) throw usageError('org create takes no --org or --key');
      const name = values.name;
      const email = values.email;
      if (name === undefined || name.trim() === '') throw usageError('org create needs --name <name>');
      if (email === undefined || email.trim() === '') throw usageError('org create needs --email <email>');
      const target = resolveTarget(process.env);
      const password = await readNewPassword();
      const { body } = await call(target, 'POST', 'admin/organizations', { name, email, password });
      printJson(body);
      return 0;
    }
    case 'list': {
      if (values.name !== undefined || values.org !== undefined || values.key !== undefined) throw usageError('org list takes no --name, --org or --key (search with --email or --name-prefix)');
      if (values.email !== undefined && values['name-prefix'] !== undefined) throw usageError('org list takes --email or --name-prefix, not both');
      expectPositionals(rest, 0, 'org list');
      const target = resolveTarget(process.env);
      const search = values.email !== undefined ? `&email=${encodeURIComponent(values.email)}` : values['name-prefix'] !== undefined ? `&namePrefix=${encodeURIComponent(values['name-prefix'])}` : '';
      // Every page as one list: the admin API gives them 500 at a time.
      const organizations: unknown[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?limit=500${search}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const page = (await call(target, 'GET', `admin/organizations${query}`)).body as { organizations?: unknown[]; nextCursor?: string | null } | undefined;
        organizations.push(...(page?.organizations ?? []));
        cursor = page?.nextCursor ?? null;
      } while (cursor !== null);
      printJson({ organizations });
      return 0;
    }
    case 'get':
    case 'delete': {
      if (values.name !== undefined || values.email !== undefined) throw usageError(`org ${action} takes no --name or --email`);
      if (values.org !== undefined || values.key !== undefined) throw usageError(`org ${action} takes no --org or --key (the id is an argument)`);
      expectPositionals(rest, 1, 'an organization id');
      const id = rest[0]!;
      const target = resolveTarget(process.env);
      if (action === 'get') {
        printJson((await call(target, 'GET', idPath(id))).body);
      } else {
        await call(target, 'DELETE', idPath(id));
      }
      return 0;
    }
    case 'limit': {
      if (values.name !== undefined || values.email !== undefined || values.org !== undefined || values.key !== undefined) {
        throw usageError('org limit takes no --name, --email, --org or --key (the id and the limit are arguments)');
      }
      expectPositionals(rest, 2, 'an organization id and a limit (e.g. 600/60s, off or default)');
      const [id, limit] = rest as [string, string];
      const target = resolveTarget(process.env);
      // The gateway checks the form and says what is wrong with it (400, exit 1).
      printJson((await call(target, 'PATCH', idPath(id), { rateLimit: limit === 'default' ? null : limit })).body);
      return 0;
    }
    case 'key-limit': {
      if (values.name !== undefined || values.email !== undefined || values.org !== undefined || values.key !== undefined) {
        throw usageError('org key-limit takes no --name, --email, --org or --key (the id and the count are arguments)');
      }
      expectPositionals(rest, 2, 'an organization id and a count of keys (e.g. 5000, or default)');
      const [id, count] = rest as [string, string];
      const target = resolveTarget(process.env);
      // A count as a number; anything else goes as is, and the gateway says what is wrong (400, exit 1).
      const keyLimit = count === 'default' ? null : /^\d{1,9}$/.test(count) ? Number(count) : count;
      printJson((await call(target, 'PATCH', idPath(id), { keyLimit })).body);
      return 0;
    }
    default:
      throw usageError(`unknown org subcommand '${oneLine(action).slice(0, 40)}'`, true);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`authgate: ${error.message}\n`);
      if (error.usage === 'full') process.stderr.write(`\n${USAGE}`);
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
