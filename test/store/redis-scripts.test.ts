/**
 * The Redis scripts as files (src/store/redis/scripts/*.lua): each loads (SCRIPT LOAD) on a real
 * redis-server, documents its KEYS and ARGV, and touches only the keys it was given, so it runs
 * on Redis Cluster (which places a script by its KEYS). Checked twice: statically, every key
 * argument of every redis.call is derived from KEYS (or from a stem the header declares, which
 * carries the KEYS' shard tag); and at run time, the whole store contract runs on a server
 * watched by MONITOR, and every key each script call touched is one of the KEYS it was given (or,
 * from a declared stem, of their shard tag). A planted bad script shows the checks can fail.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import t from 'tap';
import { openRedisStorage } from '../../src/store/redis/store.js';
import { readScriptDirectory, readScriptFile, type ScriptSource } from '../../src/store/redis/script-files.js';
import { loadScripts, SCRIPT_NAMES, SCRIPTS_DIRECTORY } from '../../src/store/redis/scripts.js';
import { hashTagOf, keyIndexes, parseMonitorLine, readKeySpecs, scriptKeyProblems, type KeySpecs, type MonitorLine } from '../helpers/lua-keys.js';
import { startRedis } from '../helpers/redis.js';
import { pollUntil, storeContract } from './store-contract.js';

const server = await startRedis();
t.teardown(() => server.stop());
const client = new Redis(server.url);
t.teardown(() => client.quit());
const specs = await readKeySpecs(client);

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** SCRIPT LOAD on the real server: the SHA1 it answers, or the error it gives. */
async function scriptLoad(lua: string): Promise<string> {
  try {
    return String(await client.call('SCRIPT', 'LOAD', lua));
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

/** What is wrong with the scripts of a directory: loading, headers, keys. */
async function problemsOf(scripts: Iterable<ScriptSource>): Promise<string[]> {
  const problems: string[] = [];
  for (const source of scripts) {
    const loaded = await scriptLoad(source.lua);
    if (loaded !== sha1(source.lua)) problems.push(`${source.name}: SCRIPT LOAD ${loaded}`);
    problems.push(...scriptKeyProblems(source, specs));
  }
  return problems;
}

t.test('every script file is the store\'s, loads with SCRIPT LOAD, documents its KEYS and ARGV, and names only keys it was given', async (t) => {
  const sources = loadScripts();
  t.strictSame(Object.keys(sources).sort(), [...SCRIPT_NAMES].sort(), 'one file per script the store runs');
  t.strictSame(await problemsOf(Object.values(sources)), [], 'no problem in any script');
  for (const lib of ['announce', 'readMs', 'entryParts']) {
    const text = readFileSync(join(SCRIPTS_DIRECTORY, 'lib', `${lib}.lua`), 'utf8');
    t.match(await scriptLoad(text), /^[0-9a-f]{40}$/, `lib/${lib}.lua loads on its own`);
  }
  // The scripts paste the digest's length (packing.ts DIGEST_LENGTH = 22) as a number.
  t.ok(Object.values(sources).filter((s) => /\b22\b/.test(s.lua)).every((s) => s.header.includes('DIGEST_LENGTH') || s.includes.includes('lib/entryParts.lua')), 'where a script holds the digest length, its header says so');
});

t.test('the build copies the scripts next to the built module', async (t) => {
  const built = join(SCRIPTS_DIRECTORY.replace(/\/src\/store\/redis\/scripts\/?$/, '/dist/store/redis/scripts'));
  t.ok(existsSync(built), `${built} exists (npm run build)`);
  for (const name of SCRIPT_NAMES) {
    t.equal(readFileSync(join(built, `${name}.lua`), 'utf8'), readFileSync(join(SCRIPTS_DIRECTORY, `${name}.lua`), 'utf8'), `${name}.lua as in src/`);
  }
});

t.test('the checks fail on a planted bad script', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'authgate-lua-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'lib'));
  await writeFile(join(dir, 'lib', 'announce.lua'), readFileSync(join(SCRIPTS_DIRECTORY, 'lib', 'announce.lua')));
  const bad: Record<string, string> = {
    fromArgv: "-- keys: 1\n-- KEYS[1]  a hash\n-- ARGV[1]  a field\nreturn redis.call('GET', ARGV[1])\n",
    literal: "-- keys: 1\n-- KEYS[1]  a hash\nredis.call('DEL', 'authgate:{x}:literal')\nreturn redis.call('HGET', KEYS[1], 'f')\n",
    viaLocal: "-- keys: 1\n-- KEYS[1]  a hash\n-- ARGV[1]  a name\nlocal name = ARGV[1]\nreturn redis.call('EXISTS', KEYS[1], name)\n",
    undeclaredStem: "-- keys: 1\n-- KEYS[1]  a hash\n-- ARGV[1]  a stem\nreturn redis.call('HDEL', ARGV[1] .. 'x:s', 'f')\n",
    beyondKeys: "-- keys: 1\n-- KEYS[1]  a hash\n-- KEYS[2]  another\nreturn redis.call('GET', KEYS[2])\n",
    undocumented: "-- keys: 1\n-- KEYS[1]  a hash\nreturn redis.call('HGET', KEYS[1], ARGV[1])\n",
    notLua: "-- keys: 1\n-- KEYS[1]  a hash\nreturn redis.call('GET', KEYS[1]\n",
    stemElsewhere: "-- keys: 1\n-- KEYS[1]  a hash\n-- ARGV[1]  a stem\n-- stem: ARGV[1]  claimed to carry KEYS[1]'s tag\nreturn redis.call('HDEL', ARGV[1] .. 'y:s', 'f')\n",
    good: "-- keys: 1\n-- KEYS[1]  a hash\n-- ARGV[1]  channel\n-- ARGV[2]  head\n--@include lib/announce.lua\nannounce(ARGV[1], ARGV[2], {})\nreturn redis.call('HGET', KEYS[1], 'f')\n",
  };
  for (const [name, text] of Object.entries(bad)) await writeFile(join(dir, `${name}.lua`), text);
  const problems = await problemsOf(readScriptDirectory(dir).values());
  const of = (name: string) => problems.filter((problem) => problem.startsWith(`${name}:`));
  t.match(of('fromArgv'), [/touches a key it was not given: ARGV\[1\]/]);
  t.match(of('literal'), [/touches a key it was not given: 'authgate:\{x\}:literal'/]);
  t.match(of('viaLocal'), [/touches a key it was not given: name/]);
  t.match(of('undeclaredStem'), [/touches a key it was not given: ARGV\[1\] \.\. 'x:s'/]);
  t.match(of('beyondKeys'), [/KEYS\[2\] beyond its 1 keys/]);
  t.match(of('undocumented'), [/ARGV\[1\] is not documented/]);
  t.match(of('notLua'), [/SCRIPT LOAD error/]);
  t.strictSame(of('good'), [], 'a good script (with an include) passes');
  t.strictSame(of('stemElsewhere'), [], 'a declared stem passes the static check: the run-time check is what holds it to its tag');

  // At run time: the scripts run on the server under MONITOR, given a key of one tag.
  const planted = readScriptDirectory(dir);
  const monitor = await watch();
  t.teardown(monitor.stop);
  const run = (name: string, args: string[]) => client.call('EVAL', planted.get(name)!.lua, 1, 'authgate-test:{a}:h', ...args).catch(() => undefined);
  await run('fromArgv', ['authgate-test:{b}:other']);
  await run('stemElsewhere', ['authgate-test:{b}:o:']);
  await run('stemElsewhere', ['authgate-test:{a}:o:']);
  await run('good', ['authgate-test:{a}:channel', 'head']);
  await pollUntil(5_000, () => monitor.lines.filter((line) => line.client === 'lua').length >= 5);
  const byDigest = new Map([...planted.values()].map((source) => [sha1(source.lua), source]));
  const { problems: seen, ran } = runtimeProblems(monitor.lines, specs, byDigest);
  t.strictSame(seen, [
    'fromArgv: GET touched authgate-test:{b}:other, not among its KEYS authgate-test:{a}:h',
    'stemElsewhere: HDEL touched authgate-test:{b}:o:y:s, not among its KEYS authgate-test:{a}:h',
  ], 'the run-time check names the key from an argument and the stem of another tag; the stem of its own tag passes');
  t.strictSame([...ran].sort(), ['fromArgv', 'good', 'stemElsewhere']);
  t.equal(readScriptFile(dir, 'good').lua, `\n${readFileSync(join(SCRIPTS_DIRECTORY, 'lib', 'announce.lua'), 'utf8').split('\n').filter((l) => !l.startsWith('--')).join('\n').replace(/\n$/, '')}\nannounce(ARGV[1], ARGV[2], {})\nreturn redis.call('HGET', KEYS[1], 'f')`, 'what is sent: the include, then the code, no header');
});

/** MONITOR's lines, from a plain connection of its own (its lines read as the server writes them). */
async function watch(): Promise<{ lines: MonitorLine[]; stop(): void }> {
  const socket = connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  const lines: MonitorLine[] = [];
  const ok = new Promise<void>((resolve) => {
    createInterface({ input: socket }).on('line', (line) => {
      if (line === '+OK') resolve();
      const parsed = line.startsWith('+') ? parseMonitorLine(line.slice(1)) : undefined;
      if (parsed !== undefined) lines.push(parsed);
    });
  });
  socket.write('MONITOR\r\n');
  await ok;
  return { lines, stop: () => socket.destroy() };
}

/** Every key a script call touched that it was not given (nor, from a declared stem, of its tag). */
function runtimeProblems(lines: readonly MonitorLine[], specs: KeySpecs, byDigest: ReadonlyMap<string, ScriptSource>) {
  const problems: string[] = [];
  const ran = new Set<string>();
  let call: { source: ScriptSource; keys: string[]; argv: string[] } | undefined;
  for (const { client, argv } of lines) {
    const command = (argv[0] ?? '').toLowerCase();
    if (client !== 'lua') {
      call = undefined;
      if (command !== 'evalsha' && command !== 'eval') continue;
      const digest = command === 'eval' ? createHash('sha1').update(argv[1] ?? '').digest('hex') : argv[1] ?? '';
      const source = byDigest.get(digest);
      if (source === undefined) continue; // not one of the store's scripts (the harness's own)
      const count = Number(argv[2]);
      call = { source, keys: argv.slice(3, 3 + count), argv: argv.slice(3 + count) };
      ran.add(source.name);
      continue;
    }
    if (call === undefined) continue;
    const indexes = keyIndexes(specs, argv);
    if (indexes === undefined) {
      problems.push(`${call.source.name}: ran ${argv[0]}, which this server does not know`);
      continue;
    }
    for (const i of indexes) {
      const key = argv[i]!;
      if (call.keys.includes(key)) continue;
      const stem = call.source.stems.map((n) => call!.argv[n - 1]).find((value) => value !== undefined && key.startsWith(value));
      if (stem !== undefined && call.keys.every((given) => hashTagOf(given) === hashTagOf(key))) continue;
      problems.push(`${call.source.name}: ${argv[0]} touched ${key}, not among its KEYS ${call.keys.join(' ')}`);
    }
  }
  return { problems: [...new Set(problems)], ran };
}

t.test('at run time: the store contract, watched by MONITOR, touches only the keys each script was given', async (t) => {
  const byDigest = new Map(Object.values(loadScripts()).map((source) => [sha1(source.lua), source]));
  const monitor = await watch();
  t.teardown(monitor.stop);
  await t.test('the contract', async (t) => {
    storeContract(t, async () => {
      const storage = await openRedisStorage({ url: server.url, prefix: 'authgate-test:', environment: `env-${randomUUID()}`, commandTimeoutMs: 1000, invalidationHeartbeatMs: 200 });
      await pollUntil(10_000, () => storage.store.ping().then(() => true, () => false));
      return { store: storage.store, close: () => storage.store.close() };
    });
  });
  const { problems, ran } = runtimeProblems(monitor.lines, specs, byDigest);
  t.ok(monitor.lines.length > 0, `MONITOR saw ${monitor.lines.length} commands`);
  t.strictSame(problems, [], 'no script touched a key it was not given');
  t.strictSame([...SCRIPT_NAMES].filter((name) => !ran.has(name)), [], 'every script ran at least once');
});

t.test('a MONITOR line is read as redis-server writes it', async (t) => {
  t.strictSame(parseMonitorLine('1795653026.019643 [0 lua] "SET" "a{b}" "x \\"y\\"\\n"'), { client: 'lua', argv: ['SET', 'a{b}', 'x "y"\n'] });
  t.equal(hashTagOf('authgate:{env:k3x}:o:abc:s'), 'env:k3x');
});
