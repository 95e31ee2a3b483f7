/**
 * Which keys a Redis script touches, for test/store/redis-scripts.test.ts: statically, from the
 * `redis.call`/`redis.pcall` calls in its text, and at run time, from what MONITOR shows it ran.
 * Which arguments of a command are keys comes from the real server (COMMAND INFO), not from a
 * table written here.
 */
import type { Redis } from 'ioredis';
import type { ScriptSource } from '../../src/store/redis/script-files.js';

/** Where a command's keys are (COMMAND INFO's first key, last key, step), per name and `name|sub`. */
export type KeySpecs = ReadonlyMap<string, Readonly<{ first: number; last: number; step: number }>>;

function specsOf(entries: unknown[], into: Map<string, { first: number; last: number; step: number }>): void {
  for (const entry of entries) {
    if (!Array.isArray(entry)) continue;
    const [name, , , first, last, step, , , , subcommands] = entry as unknown[];
    into.set(String(name).toLowerCase(), { first: Number(first), last: Number(last), step: Number(step) });
    if (Array.isArray(subcommands)) specsOf(subcommands, into);
  }
}

/** Every command's key positions, as the server says. */
export async function readKeySpecs(client: Redis): Promise<KeySpecs> {
  const specs = new Map<string, { first: number; last: number; step: number }>();
  specsOf((await client.call('COMMAND')) as unknown[], specs);
  return specs;
}

/** The argument indexes (argv[0] the command) that are keys, or undefined for an unknown command. */
export function keyIndexes(specs: KeySpecs, argv: readonly string[]): number[] | undefined {
  const name = unquote(argv[0] ?? '').toLowerCase();
  let spec = specs.get(name);
  // A container command (XINFO): its keys are its subcommand's.
  if (spec !== undefined && spec.first === 0 && argv[1] !== undefined && specs.has(`${name}|${unquote(argv[1]).toLowerCase()}`)) {
    spec = specs.get(`${name}|${unquote(argv[1]).toLowerCase()}`);
  }
  if (spec === undefined) return undefined;
  if (spec.first <= 0) return [];
  const last = spec.last < 0 ? argv.length + spec.last : spec.last;
  const indexes: number[] = [];
  for (let i = spec.first; i <= last && i < argv.length; i += Math.max(1, spec.step)) indexes.push(i);
  return indexes;
}

function unquote(text: string): string {
  return /^'.*'$|^".*"$/.test(text) ? text.slice(1, -1) : text;
}

/** The code without its comments (`--` to the end of the line, outside strings). */
function withoutComments(code: string): string {
  let out = '';
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === '\'' || c === '"') {
      const end = stringEnd(code, i);
      out += code.slice(i, end);
      i = end - 1;
    } else if (c === '-' && code[i + 1] === '-') {
      while (i < code.length && code[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

/** The index just past the string literal starting at `start`. */
function stringEnd(code: string, start: number): number {
  const quote = code[start];
  let i = start + 1;
  while (i < code.length && code[i] !== quote) i += code[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** Each redis.call / redis.pcall in the code: its arguments as written, split at the top level. */
export function redisCalls(code: string): string[][] {
  const text = withoutComments(code);
  const calls: string[][] = [];
  const pattern = /redis\.p?call\s*\(/g;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const args: string[] = [];
    let depth = 0;
    let current = '';
    let i = match.index + match[0].length;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\'' || c === '"') {
        const end = stringEnd(text, i);
        current += text.slice(i, end);
        i = end - 1;
        continue;
      }
      if (c === '(' || c === '{' || c === '[') depth++;
      if (c === ')' || c === '}' || c === ']') {
        if (depth === 0) break;
        depth--;
      }
      if (c === ',' && depth === 0) {
        args.push(current.trim());
        current = '';
        continue;
      }
      current += c;
    }
    args.push(current.trim());
    calls.push(args);
  }
  return calls;
}

/**
 * What breaks the rule "a script touches only the keys it was given" in a script's text: every
 * key argument of every call must be `KEYS[...]` itself, a local bound to one (`local set =
 * KEYS[...]`, `for _, key in ipairs(KEYS)`), or begin with a declared stem (`-- stem: ARGV[n]`,
 * which carries the KEYS' shard tag). A key from any other argument or a literal could be on
 * another Cluster slot. Also: the command must be a literal the server knows, a literal KEYS
 * index within the declared count, and every literal KEYS[n] / ARGV[n] documented in the header.
 */
export function scriptKeyProblems(source: ScriptSource, specs: KeySpecs): string[] {
  const problems: string[] = [];
  const code = source.lua;
  const bound = new Set<string>();
  for (const match of code.matchAll(/local\s+(\w+)\s*=\s*KEYS\[[^\]]+\]/g)) bound.add(match[1]!);
  for (const match of code.matchAll(/for\s+\w+\s*,\s*(\w+)\s+in\s+ipairs\(KEYS\)/g)) bound.add(match[1]!);
  const stems = source.stems.map((n) => new RegExp(`^ARGV\\[${n}\\]\\s*\\.\\.`));
  for (const argv of redisCalls(code)) {
    const command = argv[0] ?? '';
    if (!/^'[A-Za-z]+'$/.test(command)) {
      problems.push(`${source.name}: a call whose command is not a literal: ${argv.join(', ')}`);
      continue;
    }
    if (argv.some((arg) => /\bunpack\s*\(/.test(arg))) {
      problems.push(`${source.name}: ${command} with unpacked arguments: its keys cannot be checked`);
      continue;
    }
    const indexes = keyIndexes(specs, argv);
    if (indexes === undefined) {
      problems.push(`${source.name}: ${command} is no command this server knows`);
      continue;
    }
    for (const i of indexes) {
      const arg = argv[i]!;
      if (/^KEYS\[[^\]]+\]$/.test(arg) || bound.has(arg) || stems.some((stem) => stem.test(arg))) continue;
      problems.push(`${source.name}: ${command} touches a key it was not given: ${arg}`);
    }
  }
  for (const [, index] of code.matchAll(/KEYS\[(\d+)\]/g)) {
    if (source.keys !== 'any' && Number(index) > source.keys) problems.push(`${source.name}: KEYS[${index}] beyond its ${source.keys} keys`);
    if (!source.header.includes(`KEYS[${index}]`)) problems.push(`${source.name}: KEYS[${index}] is not documented in its header`);
  }
  for (const [, index] of code.matchAll(/ARGV\[(\d+)\]/g)) {
    if (!source.header.includes(`ARGV[${index}]`)) problems.push(`${source.name}: ARGV[${index}] is not documented in its header`);
  }
  if (!/^-- (KEYS|ARGV)/m.test(source.header)) problems.push(`${source.name}: its header documents no KEYS or ARGV`);
  return [...new Set(problems)];
}

/** One line of MONITOR: who ran it (`lua` for a script's own calls) and its arguments. */
export type MonitorLine = Readonly<{ client: string; argv: string[] }>;

/** Parses a MONITOR line: `<time> [<db> <client>] "arg" "arg" ...`, the args as sdscatrepr writes them. */
export function parseMonitorLine(line: string): MonitorLine | undefined {
  const head = /^\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line);
  if (head === null) return undefined;
  const argv: string[] = [];
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] !== '"') {
      i++;
      continue;
    }
    let arg = '';
    i++;
    while (i < line.length && line[i] !== '"') {
      if (line[i] === '\\') {
        const next = line[i + 1]!;
        if (next === 'x') {
          arg += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
          i += 4;
          continue;
        }
        arg += ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[next] ?? next;
        i += 2;
        continue;
      }
      arg += line[i];
      i++;
    }
    argv.push(arg);
    i++;
  }
  return { client: head[1]!, argv };
}

/** The hash tag a Cluster places a key by: the text in its first braces, or the whole key. */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
