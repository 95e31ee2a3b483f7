/**
 * Reads the Lua scripts from their files (scripts/*.lua, next to this module: the build copies
 * them into dist/). A script file is its header, then its code:
 *
 *   -- <name>: what it does                    comment lines: the header, never sent to Redis
 *   -- keys: 2                                  how many KEYS it takes (`any`: the caller says)
 *   -- KEYS[1]  ...  / ARGV[1]  ...             what each key and argument is
 *   -- stem: ARGV[6]  ...                       (rare) an argument that key names are built from
 *   --@include lib/announce.lua                 a shared function, pasted in where it stands
 *   local entry = redis.call(...)               the code: from the first line that is no comment
 *
 * What is sent is each included function's code then the script's own, each after a newline:
 * byte for byte the text the scripts were when they lived in TypeScript strings, so their SHA1s
 * (and what EVALSHA runs) did not change with the move. A `stem` argument names keys of the
 * same shard tag as the script's KEYS (it is the tag's organization stem): the one way a script
 * may touch a key it was not given, checked by test/store/redis-scripts.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ScriptSource = Readonly<{
  /** The file's name without `.lua`: the command ioredis defines for it. */
  name: string;
  /** Fixed number of KEYS, or 'any' (then the caller passes the count). */
  keys: number | 'any';
  /** The text sent to Redis: included functions, then the script's code. */
  lua: string;
  /** The header, as written (comments). */
  header: string;
  /** ARGV indexes declared as key-name stems (`-- stem: ARGV[n]`). */
  stems: readonly number[];
  /** The library files it includes, as written (`lib/announce.lua`). */
  includes: readonly string[];
}>;

const INCLUDE = /^--@include (\S+)$/;
const KEYS_LINE = /^-- keys: (\d+|any)$/;
const STEM_LINE = /^-- stem: ARGV\[(\d+)\]/;

/** A file's header (its leading comment lines) and its code, split; `--@include` lines apart. */
function splitFile(text: string): { header: string[]; includes: string[]; code: string } {
  const lines = text.replace(/\n$/, '').split('\n');
  const header: string[] = [];
  const includes: string[] = [];
  let i = 0;
  for (; i < lines.length && lines[i]!.startsWith('--'); i++) {
    const include = INCLUDE.exec(lines[i]!);
    if (include !== null) includes.push(include[1]!);
    else header.push(lines[i]!);
  }
  return { header, includes, code: lines.slice(i).join('\n') };
}

/** One script file of `directory`, as it is sent. */
export function readScriptFile(directory: string, name: string): ScriptSource {
  const read = (file: string) => readFileSync(join(directory, file), 'utf8');
  const { header, includes, code } = splitFile(read(`${name}.lua`));
  const keysLine = header.map((line) => KEYS_LINE.exec(line)).find((match) => match !== null);
  if (keysLine === undefined) throw new Error(`${name}.lua: its header lacks "-- keys: <n or any>"`);
  const lua = includes.map((file) => `\n${splitFile(read(file)).code}`).join('') + `\n${code}`;
  const stems = header.map((line) => STEM_LINE.exec(line)).filter((match) => match !== null).map((match) => Number(match[1]));
  return {
    name,
    keys: keysLine[1] === 'any' ? 'any' : Number(keysLine[1]),
    lua,
    header: header.join('\n'),
    stems,
    includes,
  };
}

/** Every script file of a directory (its `*.lua`, not lib/), by name. */
export function readScriptDirectory(directory: string): Map<string, ScriptSource> {
  const names = readdirSync(directory).filter((file) => file.endsWith('.lua')).map((file) => file.slice(0, -'.lua'.length)).sort();
  return new Map(names.map((name) => [name, readScriptFile(directory, name)]));
}
