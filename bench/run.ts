/**
 * `npm run bench`: what authgate costs on top of a bare reverse proxy, as ratios measured in one
 * run. See docs/performance.md for what each scenario means and how to read the table.
 *
 *   node dist-bench/bench/run.js [--quick] [--json FILE] [--rounds N] [--slice SECONDS]
 *                                [--connections N] [--cpu-prof DIR] [--only apikey,jwt,...] [--env KEY=VALUE]
 *                                [--gateway FILE] [--compare FILE] [--node-flag FLAG] [--scale-max N]
 *
 * One process tree on loopback: a keep-alive upstream, the baseline proxy, five authgate
 * processes (production build, Redis store: main, cache off, access log off, identity assertion
 * off, a replica) on a redis-server of our own, and the load generator. The gateways sign the
 * identity assertion with a P-256 key made for this run (a temporary file, removed at the end).
 * Servers run on core 0 and the generator on core 1 (taskset). Scenarios run in short interleaved
 * slices; each ratio is the median of same-round ratios. Every process is stopped by pid at the end.
 * The scale phase (bench/scale.ts; alone with --only scale) runs last, on redis-servers of its own.
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Agent, metricValue, send, sendJson } from './lib/http.js';
import { findRedisServer, startBenchRedis, type BenchRedis } from './lib/redis.js';
import { findNginx, startBenchNginx } from './lib/nginx.js';
import { cpuMs, firstMessage, freePort, hasTaskset, pinSelf, rssKiB, sleep, startProcess, stopAll, waitFor, type Started } from './lib/proc.js';
import { median, percentiles } from './lib/stats.js';
import type { RunResult, RunSpec } from './loadgen.js';
import type { ScaleResult } from './scale.js';

// ---------------------------------------------------------------------------------------------
// Options

type Options = {
  quick: boolean;
  json: string | undefined;
  rounds: number;
  sliceS: number;
  warmS: number;
  connections: number;
  loginS: number;
  burstS: number;
  revocations: number;
  cpuProfDir: string | undefined;
  /** Development aid: only these load scenarios (and the baseline), no extra phases. */
  only: ScenarioId[] | undefined;
  /** Negative cache, revocation, login and memory: off with --only. */
  extras: boolean;
  /** The load scenarios and their gateways: off with `--only scale`. */
  load: boolean;
  /** Redis memory per stored credential and lookups at 1k vs many keys: in the full run, or `--only scale`. */
  scale: boolean;
  /** The largest number of API keys (and of sessions) the scale phase stores: 1,000,000 (--quick: 100,000). */
  scaleMax: number;
  /** Development aid: more environment for every authgate process (--env KEY=VALUE, repeatable). */
  env: Record<string, string>;
  /** Development aid: another build of authgate's entry instead of dist/main.js (--gateway FILE). */
  gatewayMain: string;
  /** Development aid: another build's entry, measured as an extra API-key scenario in the same rounds (--compare FILE). */
  compareMain: string | undefined;
  /** Development aid: more node flags for the main authgate process (--node-flag FLAG, repeatable), e.g. --perf-basic-prof. */
  nodeFlags: string[];
};

function parseOptions(argv: readonly string[]): Options {
  const quick = argv.includes('--quick');
  const value = (name: string) => {
    const i = argv.indexOf(name);
    if (i === -1) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value`);
    return v;
  };
  const number = (name: string, fallback: number) => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`);
    return n;
  };
  const known = new Set(['--quick', '--json', '--rounds', '--slice', '--connections', '--cpu-prof', '--only', '--env', '--gateway', '--compare', '--node-flag', '--scale-max', '--help']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || argv[i - 1] === '--node-flag') continue;
    if (!known.has(arg)) throw new Error(`unknown option ${arg}`);
  }
  if (argv.includes('--help')) {
    process.stdout.write('usage: npm run bench -- [--quick] [--json FILE] [--rounds N] [--slice SECONDS] [--connections N] [--cpu-prof DIR] [--only apikey,jwt,apikey-ident,jwt-ident,apikey-noident,jwt-noident,apikey-limited,cold,garbage,upstream,nolog,nginx-auth,node-gateway,node-gateway-cold,scale] [--env KEY=VALUE]... [--gateway dist/main.js] [--compare other/dist/main.js] [--node-flag FLAG]... [--scale-max N]\n');
    process.exit(0);
  }
  const onlyList = value('--only');
  const ids: readonly ScenarioId[] = ['upstream', 'baseline', 'apikey', 'nolog', 'jwt', 'apikey-ident', 'jwt-ident', 'apikey-noident', 'jwt-noident', 'apikey-ident-b', 'jwt-ident-b', 'apikey-noident-b', 'jwt-noident-b', 'apikey-limited', 'cold', 'garbage', 'nginx-auth', 'node-gateway', 'node-gateway-cold'];
  const onlyItems = onlyList?.split(',');
  const only = onlyItems?.filter((id) => id !== 'scale').map((id) => {
    if (!ids.includes(id as ScenarioId)) throw new Error(`--only: unknown scenario ${id}`);
    return id as ScenarioId;
  });
  const env: Record<string, string> = {};
  argv.forEach((arg, i) => {
    if (arg !== '--env') return;
    const pair = argv[i + 1] ?? '';
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error('--env needs KEY=VALUE');
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  });
  const nodeFlags = argv.flatMap((arg, i) => (arg === '--node-flag' && argv[i + 1] !== undefined ? [argv[i + 1]!] : []));
  return {
    nodeFlags,
    env,
    gatewayMain: value('--gateway') ?? GATEWAY_MAIN,
    compareMain: value('--compare'),
    quick,
    json: value('--json'),
    rounds: Math.round(number('--rounds', quick ? 3 : 9)),
    sliceS: Math.round(number('--slice', quick ? 1 : 2)),
    warmS: quick ? 1 : 2,
    connections: Math.round(number('--connections', 50)),
    loginS: quick ? 2 : 5,
    burstS: quick ? 2 : 6,
    revocations: 200,
    cpuProfDir: value('--cpu-prof'),
    only,
    extras: only === undefined,
    load: only === undefined || only.length > 0,
    scale: onlyItems === undefined || onlyItems.includes('scale'),
    scaleMax: Math.round(number('--scale-max', quick ? 100_000 : 1_000_000)),
  };
}

// ---------------------------------------------------------------------------------------------
// Machine

type Machine = { nproc: number; cpuModel: string; node: string; memGiB: number; taskset: boolean; redis: string };

function machine(redisBinary: string): Machine {
  let cpuModel = 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line !== undefined) cpuModel = line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // not Linux
  }
  return { nproc: availableParallelism(), cpuModel, node: process.version, memGiB: Math.round(totalmem() / 2 ** 30), taskset: hasTaskset, redis: redisBinary };
}

// ---------------------------------------------------------------------------------------------
// Processes

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GATEWAY_MAIN = `${ROOT}dist/main.js`;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const SERVER_CORE = 0;
const GENERATOR_CORE = 1;

type Gateway = { name: string; proc: Started; publicUrl: string; opsUrl: string };

/** Temporary directories of this run (the identity key's, Redis's), removed once every process stopped. */
const temporary: string[] = [];

function removeTemporary(): void {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * The identity assertion's signing key for every gateway of this run: P-256, PKCS#8 PEM in a
 * file of a private temporary directory (production refuses to start without one while the
 * assertion is on). Its public JWK is what the main gateway's JWKS must show.
 */
function makeIdentityKey(): { file: string; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const dir = mkdtempSync(join(tmpdir(), 'authgate-bench-'));
  temporary.push(dir);
  const file = join(dir, 'identity-key.pem');
  writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  return { file, publicJwk: publicKey.export({ format: 'jwk' }) };
}

/** The settings the loader refuses while AUTHGATE_IDENTITY_ASSERTION=off (config/load.ts), and the rest it ignores then. */
const withoutIdentity = (env: Record<string, string>): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('AUTHGATE_IDENTITY_'))),
  AUTHGATE_IDENTITY_ASSERTION: 'off',
});

async function startNodeChild(name: string, script: string, args: string[], core: number): Promise<{ proc: Started; port: number }> {
  const proc = startProcess(name, process.execPath, [script, ...args], { core, ipc: true });
  const { port } = await firstMessage<{ port: number }>(proc);
  return { proc, port };
}

async function startGateway(name: string, main: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<Gateway> {
  const port = await freePort();
  const opsPort = await freePort();
  const proc = startProcess(name, process.execPath, [...nodeFlags, main], {
    core: SERVER_CORE,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      NODE_ENV: 'production',
      AUTHGATE_HOST: '127.0.0.1',
      AUTHGATE_OPS_HOST: '127.0.0.1',
      AUTHGATE_PORT: String(port),
      AUTHGATE_OPS_PORT: String(opsPort),
      AUTHGATE_TLS: 'offloaded',
      AUTHGATE_SHUTDOWN_DELAY_SECONDS: '0',
      AUTHGATE_SHUTDOWN_GRACE_SECONDS: '5',
      ...env,
    },
  });
  const gateway = { name, proc, publicUrl: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}` };
  await waitFor(`${name} ready`, 20_000, async () => (await send(`${gateway.opsUrl}/readyz`)).status === 200, proc);
  return gateway;
}

/** The generator child: runs specs over IPC, several at once when asked. */
class LoadGenerator {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(results: RunResult[]): void; reject(error: Error): void }>();
  constructor(private readonly proc: Started) {
    proc.child.on('message', (message: { id?: number; results?: RunResult[]; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      if (waiter === undefined) return;
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`load generator: ${message.error}`));
      else waiter.resolve(message.results ?? []);
    });
    proc.child.on('exit', () => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`load generator exited:\n${proc.output()}`));
      this.waiting.clear();
    });
  }
  static async start(): Promise<LoadGenerator> {
    const proc = startProcess('loadgen', process.execPath, [here('./loadgen.js')], { core: GENERATOR_CORE, ipc: true });
    await firstMessage(proc);
    return new LoadGenerator(proc);
  }
  run(...runs: RunSpec[]): Promise<RunResult[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.proc.child.send({ id, runs });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

type ScenarioId = 'upstream' | 'baseline' | 'apikey' | 'nolog' | 'jwt' | 'apikey-ident' | 'jwt-ident' | 'apikey-noident' | 'jwt-noident' | 'apikey-ident-b' | 'jwt-ident-b' | 'apikey-noident-b' | 'jwt-noident-b' | 'apikey-limited' | 'cold' | 'garbage' | 'nginx-auth' | 'node-gateway' | 'node-gateway-cold' | 'compare';
/** `server`: the process whose CPU time per request is reported (the proxy, or the upstream itself). */
type Scenario = { id: ScenarioId; title: string; spec: Omit<RunSpec, 'durationS' | 'label'>; server: number };
type Slice = {
  round: number;
  scenario: ScenarioId;
  result: RunResult;
  reads: number;
  scripts: number;
  /** CPU time of the proxy process under test, and of every server process, per answered request. */
  cpuUsPerRequest: number;
  cpuUsPerRequestByProcess: Record<string, number>;
  /** Resident memory of every server process when the slice ended, KiB (/proc/<pid>/status VmRSS). */
  rssKiBByProcess: Record<string, number>;
};

/** Processes whose CPU time is read around each slice, by name. */
const watched = new Map<string, number>();

const UA = 'authgate-bench/1.0';
/** Pause after each slice: in-flight work ends before the next slice and before reads are counted. */
const SETTLE_MS = 150;

/** Credential reads are HGETs of one field (docs/redis-layout.md); scripts are EVALSHA. */
async function readsOf(redis: BenchRedis): Promise<{ hget: number; evalsha: number }> {
  const calls = await redis.commandCalls();
  return { hget: calls['hget'] ?? 0, evalsha: calls['evalsha'] ?? 0 };
}

async function runSlice(load: LoadGenerator, redis: BenchRedis, scenario: Scenario, durationS: number, round: number): Promise<Slice> {
  const before = await readsOf(redis);
  const cpuBefore = new Map([...watched].map(([name, pid]) => [name, cpuMs(pid)]));
  const [result] = await load.run({ ...scenario.spec, label: scenario.id, durationS });
  // Requests still in flight when the generator stopped finish first (their reads count here).
  await sleep(SETTLE_MS);
  const after = await readsOf(redis);
  const answered = Math.max(1, result!.requests);
  const cpuUsPerRequestByProcess: Record<string, number> = {};
  for (const [name, pid] of watched) cpuUsPerRequestByProcess[name] = ((cpuMs(pid) - cpuBefore.get(name)!) * 1000) / answered;
  const rssKiBByProcess: Record<string, number> = {};
  for (const [name, pid] of watched) rssKiBByProcess[name] = rssKiB(pid);
  const serverName = [...watched].find(([, pid]) => pid === scenario.server)?.[0] ?? '';
  return {
    round,
    scenario: scenario.id,
    result: result!,
    reads: after.hget - before.hget,
    scripts: after.evalsha - before.evalsha,
    cpuUsPerRequest: cpuUsPerRequestByProcess[serverName] ?? Number.NaN,
    cpuUsPerRequestByProcess,
    rssKiBByProcess,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

type Verdict = 'PASS' | 'MISS' | 'SKIPPED' | '';
type Row = { scenario: string; rps: string; p50: string; p99: string; ratio: string; target: string; result: Verdict };

const fmt = {
  rps: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—'),
  ms: (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : '—'),
  ratio: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '—'),
};

function table(rows: readonly Row[]): string {
  const columns = ['scenario', 'rps', 'p50', 'p99', 'ratio', 'target', 'result'] as const;
  const header: Record<(typeof columns)[number], string> = { scenario: 'scenario', rps: 'req/s', p50: 'p50 ms', p99: 'p99 ms', ratio: 'ratio to baseline', target: 'target', result: 'PASS/MISS' };
  const lines = [header, ...rows].map((row) => `| ${columns.map((c) => row[c]).join(' | ')} |`);
  lines.splice(1, 0, `|${columns.map((c) => (c === 'scenario' || c === 'target' ? ':---|' : '---:|')).join('')}`);
  return lines.join('\n');
}

const verdict = (ok: boolean): Verdict => (ok ? 'PASS' : 'MISS');

type Summary = {
  title: string;
  rps: number;
  p50: number;
  p99: number;
  ratio: number;
  p99Ratio: number;
  /** CPU time of the proxy process per request (median over rounds), and its ratio to the baseline's. */
  cpuUsPerRequest: number;
  cpuRatio: number;
  storeReadsPer1000: number;
  unexpected: number;
};

/** Medians over rounds; ratios are medians of same-round ratios to the baseline. */
function summarize(scenarios: readonly Scenario[], slices: readonly Slice[]): Partial<Record<ScenarioId, Summary>> {
  const of = (id: ScenarioId) => slices.filter((s) => s.scenario === id);
  const baselineOf = (round: number) => slices.find((b) => b.round === round && b.scenario === 'baseline')!;
  const unexpected = (id: ScenarioId, slice: Slice) =>
    slice.result.errors +
    slice.result.timeouts +
    Object.entries(slice.result.statusCodes)
      .filter(([code]) => code !== '200' && !(id === 'garbage' && code === '401'))
      .reduce((n, [, count]) => n + count, 0);
  const out: Partial<Record<ScenarioId, Summary>> = {};
  for (const { id, title } of scenarios) {
    const mine = of(id);
    out[id] = {
      title,
      rps: median(mine.map((x) => x.result.rps)),
      p50: median(mine.map((x) => x.result.p50)),
      p99: median(mine.map((x) => x.result.p99)),
      ratio: median(mine.map((x) => x.result.rps / baselineOf(x.round).result.rps)),
      p99Ratio: median(mine.map((x) => x.result.p99 / baselineOf(x.round).result.p99)),
      cpuUsPerRequest: median(mine.map((x) => x.cpuUsPerRequest)),
      cpuRatio: median(mine.map((x) => x.cpuUsPerRequest / baselineOf(x.round).cpuUsPerRequest)),
      storeReadsPer1000: (1000 * mine.reduce((n, x) => n + x.reads, 0)) / Math.max(1, mine.reduce((n, x) => n + x.result.requests, 0)),
      unexpected: mine.reduce((n, x) => n + unexpected(id, x), 0),
    };
  }
  return out;
}

const TARGETS: Record<ScenarioId, { target: string; ok(s: Summary): boolean; ratio?(s: Summary): string }> = {
  upstream: { target: '(reference)', ok: () => true },
  baseline: { target: '(baseline)', ok: () => true },
  nolog: { target: '(reference: the access log’s cost)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  apikey: { target: '≥ 0.90, p99 ≤ 1.3× baseline', ok: (s) => s.ratio >= 0.9 && s.p99Ratio <= 1.3, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  jwt: { target: '≥ 0.85', ok: (s) => s.ratio >= 0.85 },
  'apikey-ident': { target: '(reference: the identity assertion’s cost)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  'jwt-ident': { target: '(reference: the identity assertion’s cost)', ok: () => true },
  'apikey-noident': { target: '(reference: the identity assertion’s cost)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  'jwt-noident': { target: '(reference: the identity assertion’s cost)', ok: () => true },
  'apikey-ident-b': { target: '(reference: the identity assertion’s cost, second pair)', ok: () => true },
  'jwt-ident-b': { target: '(reference: the identity assertion’s cost, second pair)', ok: () => true },
  'apikey-noident-b': { target: '(reference: the identity assertion’s cost, second pair)', ok: () => true },
  'jwt-noident-b': { target: '(reference: the identity assertion’s cost, second pair)', ok: () => true },
  'apikey-limited': { target: '(reference: the rate limit’s cost)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  cold: { target: '≥ 0.60', ok: (s) => s.ratio >= 0.6 },
  garbage: { target: '≥ 0.85', ok: (s) => s.ratio >= 0.85 },
  'nginx-auth': { target: '(reference: issue 18)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  'node-gateway': { target: '(reference: issue 18, the floor of a Node forwarding core)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
  'node-gateway-cold': { target: '(reference: issue 18, that floor with a Redis read per request)', ok: () => true },
  compare: { target: '(development aid)', ok: () => true, ratio: (s) => `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` },
};
/** Reference scenarios: shown without a verdict. */
const REFERENCES: ReadonlySet<ScenarioId> = new Set(['upstream', 'baseline', 'nolog', 'apikey-ident', 'jwt-ident', 'apikey-noident', 'jwt-noident', 'apikey-ident-b', 'jwt-ident-b', 'apikey-noident-b', 'jwt-noident-b', 'apikey-limited', 'nginx-auth', 'node-gateway', 'node-gateway-cold', 'compare']);

/**
 * Each identity-assertion pair: twin gateways started alike (neither is the main gateway, which
 * also does the setup and serves every other scenario: compared with a twin, it was favoured by
 * about 0.04 in an A/A run), one with the assertion and one without. Two twins of the same build
 * and settings differed by up to 0.04 too, and which one was ahead varied, so there are two pairs
 * started in mirrored order (with, without; then without, with): the cost is the mean of both
 * pairs' differences, in which the favour of a process's place cancels out rather than adds.
 */
const IDENTITY_PAIRS = [
  { with: 'apikey-ident', without: 'apikey-noident', withB: 'apikey-ident-b', withoutB: 'apikey-noident-b', name: 'API key' },
  { with: 'jwt-ident', without: 'jwt-noident', withB: 'jwt-ident-b', withoutB: 'jwt-noident-b', name: 'JWT' },
] as const;
/** The second pair comes with the first. */
const SECOND_PAIR: Partial<Record<ScenarioId, ScenarioId>> = Object.fromEntries(IDENTITY_PAIRS.flatMap((p) => [[p.withB, p.with], [p.withoutB, p.without]]));
/** The most the assertion may take off a ratio to the baseline (issue: within 0.03). */
const IDENTITY_COST_LIMIT = -0.03;

/**
 * The rate limit's cost: a twin with AUTHGATE_RATE_LIMIT on (too high to refuse anything; budget
 * leased a thousand requests at a time) against its twin without, both with the assertion on and
 * neither the main gateway. The issue: within 0.05 of the API-key scenario.
 */
const LIMIT_PAIR = { with: 'apikey-limited', without: 'apikey-ident', name: 'API key' } as const;
const LIMIT_COST_LIMIT = -0.05;
/** High enough never to refuse in a benchmark, yet counted: every request spends leased budget. */
const BENCH_RATE_LIMIT = '1000000000/60s';

/**
 * Median over rounds of (ratio with − ratio without), both to the same round's baseline; with a
 * second, mirrored pair, of the mean of both pairs' differences in the round.
 */
function identityCost(slices: readonly Slice[], withId: ScenarioId, withoutId: ScenarioId, second?: readonly [ScenarioId, ScenarioId]): number {
  const rounds = [...new Set(slices.map((s) => s.round))];
  const differences = rounds.flatMap((round) => {
    const at = (id: ScenarioId) => slices.find((s) => s.round === round && s.scenario === id);
    const base = at('baseline');
    if (base === undefined) return [];
    const difference = (w: ScenarioId, wo: ScenarioId) => {
      const withSlice = at(w);
      const withoutSlice = at(wo);
      return withSlice === undefined || withoutSlice === undefined ? undefined : withSlice.result.rps / base.result.rps - withoutSlice.result.rps / base.result.rps;
    };
    const first = difference(withId, withoutId);
    if (first === undefined) return [];
    const other = second === undefined ? undefined : difference(second[0], second[1]);
    return [other === undefined ? first : (first + other) / 2];
  });
  return differences.length === 0 ? Number.NaN : median(differences);
}

/**
 * Issue 18's targets (a forwarding core as fast as nginx auth_request), as verdict rows of their
 * own beside the standing targets, which stay as they are:
 * - API key and JWT, warm cache, ≥ 1.5× the baseline's req/s with p99 ≤ the baseline's; cache off ≥ 1.0×;
 * - API key ≥ 0.9× the nginx auth_request reference (moonshot 1.0×): median of same-round ratios;
 * - the authgate process's CPU per request, API key, ≤ 0.6× the baseline's (median of same-round ratios);
 * - RSS of authgate under load ≤ 1.2× the baseline's: each process's peak over the ends of the
 *   slices in which it was the server under load.
 */
const ISSUE18 = { rps: 1.5, p99: 1.0, cold: 1.0, versusNginx: 0.9, versusNginxMoonshot: 1.0, cpu: 0.6, rss: 1.2 };

function issue18Rows(
  scenarios: readonly Scenario[],
  slices: readonly Slice[],
  summary: Partial<Record<ScenarioId, Summary>>,
  nginxSkipped: boolean,
): { rows: Row[]; notes: string[]; report: Record<string, unknown> } {
  const rows: Row[] = [];
  const notes: string[] = [];
  const report: Record<string, unknown> = {};
  const has = (id: ScenarioId) => scenarios.some((s) => s.id === id);
  const blank = { rps: '', p50: '', p99: '' };
  const label = 'issue 18 target:';
  for (const [id, name] of [['apikey', 'authgate, API key, warm cache'], ['jwt', 'authgate, JWT, warm cache']] as const) {
    if (!has(id)) continue;
    const s = summary[id]!;
    rows.push({
      scenario: `${label} ${name}`,
      ...blank,
      ratio: `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})`,
      target: `≥ ${ISSUE18.rps.toFixed(2)}, p99 ≤ baseline's`,
      result: verdict(s.ratio >= ISSUE18.rps && s.p99Ratio <= ISSUE18.p99 && s.unexpected === 0),
    });
  }
  if (has('cold')) {
    const s = summary.cold!;
    rows.push({ scenario: `${label} authgate, cache off (Redis read per request)`, ...blank, ratio: fmt.ratio(s.ratio), target: `≥ ${ISSUE18.cold.toFixed(2)}`, result: verdict(s.ratio >= ISSUE18.cold && s.unexpected === 0) });
  }

  // Against nginx auth_request: the median of same-round ratios apikey / nginx-auth.
  if (has('apikey') && (has('nginx-auth') || nginxSkipped)) {
    const scenario = `${label} authgate, API key, warm cache ÷ nginx auth_request (median of same-round ratios; moonshot ≥ ${ISSUE18.versusNginxMoonshot.toFixed(2)})`;
    if (nginxSkipped) {
      rows.push({ scenario, ...blank, ratio: '—', target: `≥ ${ISSUE18.versusNginx.toFixed(2)} × nginx-auth`, result: 'SKIPPED' });
    } else {
      const rounds = [...new Set(slices.map((x) => x.round))];
      const ratios = rounds.flatMap((round) => {
        const a = slices.find((x) => x.round === round && x.scenario === 'apikey');
        const n = slices.find((x) => x.round === round && x.scenario === 'nginx-auth');
        return a === undefined || n === undefined ? [] : [a.result.rps / n.result.rps];
      });
      const p99Ratios = rounds.flatMap((round) => {
        const a = slices.find((x) => x.round === round && x.scenario === 'apikey');
        const n = slices.find((x) => x.round === round && x.scenario === 'nginx-auth');
        return a === undefined || n === undefined ? [] : [a.result.p99 / n.result.p99];
      });
      const ratio = median(ratios);
      const p99Ratio = median(p99Ratios);
      const clean = summary.apikey!.unexpected === 0 && summary['nginx-auth']!.unexpected === 0;
      rows.push({
        scenario: `${scenario}${ratio >= ISSUE18.versusNginxMoonshot ? ': moonshot reached' : ''}`,
        ...blank,
        ratio: `${fmt.ratio(ratio)} (p99 ×${fmt.ratio(p99Ratio)})`,
        target: `≥ ${ISSUE18.versusNginx.toFixed(2)} × nginx-auth`,
        result: verdict(clean && ratio >= ISSUE18.versusNginx),
      });
      report['apikeyVersusNginx'] = { ratio, p99Ratio, ratios };
    }
  }

  // authgate against the floor of its design (bench/node-gateway.ts), warm and with a store read
  // per request: how much of what Node can do on this machine authgate's own work leaves.
  const floorShares = ([['apikey', 'node-gateway', 'API key, warm cache'], ['cold', 'node-gateway-cold', 'cache off']] as const).flatMap(([mine, floor, name]) => {
    if (!has(mine) || !has(floor)) return [];
    const rounds = [...new Set(slices.map((x) => x.round))];
    const shares = rounds.flatMap((round) => {
      const a = slices.find((x) => x.round === round && x.scenario === mine);
      const f = slices.find((x) => x.round === round && x.scenario === floor);
      return a === undefined || f === undefined ? [] : [a.result.rps / f.result.rps];
    });
    report[`${mine}VersusFloor`] = shares;
    return [`${name} ×${fmt.ratio(median(shares))} of ${floor} (CPU ${fmt.ms(summary[mine]!.cpuUsPerRequest)} against ${fmt.ms(summary[floor]!.cpuUsPerRequest)} µs)`];
  });
  if (floorShares.length > 0) notes.push(`authgate against the floor of a Node forwarding core (median of same-round ratios): ${floorShares.join('; ')}`);

  // CPU per request of the authgate process, API key, against the baseline process's.
  if (has('apikey')) {
    const s = summary.apikey!;
    rows.push({
      scenario: `${label} CPU per request of the authgate process, API key, warm cache: ${fmt.ms(s.cpuUsPerRequest)} µs against the baseline's ${fmt.ms(summary.baseline!.cpuUsPerRequest)} µs (median of same-round ratios)`,
      ...blank,
      ratio: fmt.ratio(s.cpuRatio),
      target: `≤ ${ISSUE18.cpu.toFixed(2)}× baseline's CPU`,
      result: verdict(s.cpuRatio <= ISSUE18.cpu),
    });
  }
  if (has('nginx-auth')) {
    const mine = slices.filter((x) => x.scenario === 'nginx-auth');
    const nginxUs = median(mine.map((x) => x.cpuUsPerRequestByProcess['nginx'] ?? Number.NaN));
    const keyServiceUs = median(mine.map((x) => x.cpuUsPerRequestByProcess['keyservice'] ?? Number.NaN));
    const bothRatio = median(
      mine.map((x) => {
        const base = slices.find((b) => b.round === x.round && b.scenario === 'baseline')!;
        return ((x.cpuUsPerRequestByProcess['nginx'] ?? Number.NaN) + (x.cpuUsPerRequestByProcess['keyservice'] ?? Number.NaN)) / base.cpuUsPerRequest;
      }),
    );
    notes.push(`nginx-auth: CPU per request nginx ${fmt.ms(nginxUs)} µs + key service ${fmt.ms(keyServiceUs)} µs (both together ×${fmt.ratio(bothRatio)} of the baseline process's); upstream ${fmt.ms(median(mine.map((x) => x.cpuUsPerRequestByProcess['upstream'] ?? Number.NaN)))} µs`);
    report['nginxCpu'] = { nginxUs, keyServiceUs, bothRatioToBaseline: bothRatio };
  }

  // RSS under load: each server's peak at the ends of the slices in which it was under load.
  const serverOf = new Map(scenarios.map((s) => [s.id, s.server]));
  const peakRss = (name: string): number => {
    const pid = watched.get(name);
    if (pid === undefined) return Number.NaN;
    const values = slices
      .filter((x) => serverOf.get(x.scenario) === pid || (name === 'keyservice' && x.scenario === 'nginx-auth'))
      .map((x) => x.rssKiBByProcess[name] ?? Number.NaN)
      .filter((v) => Number.isFinite(v));
    return values.length === 0 ? Number.NaN : Math.max(...values);
  };
  const mib = (kib: number) => (Number.isFinite(kib) ? (kib / 1024).toFixed(1) : '—');
  const peaks = Object.fromEntries([...watched.keys()].map((name) => [name, peakRss(name)]));
  const baselineRss = peaks['baseline'] ?? Number.NaN;
  const rssNames = [...watched.keys()].filter((name) => name !== 'redis' && Number.isFinite(peaks[name]!));
  notes.push(
    `RSS under load (VmRSS, peak at the ends of the slices each process served, MiB): ${rssNames
      .map((name) => `${name} ${mib(peaks[name]!)}${name === 'baseline' || name === 'upstream' || name === 'keyservice' ? '' : ` (×${fmt.ratio(peaks[name]! / baselineRss)})`}`)
      .join(', ')}`,
  );
  report['rssKiB'] = peaks;
  if (has('apikey') || has('jwt')) {
    const authgateRss = peaks['authgate'] ?? Number.NaN;
    const ratio = authgateRss / baselineRss;
    const served = scenarios.filter((s) => s.server === watched.get('authgate')).map((s) => s.id);
    rows.push({
      scenario: `${label} RSS of the authgate process under load: ${mib(authgateRss)} MiB against the baseline's ${mib(baselineRss)} MiB (VmRSS, peak at the ends of its ${served.join('/')} slices)`,
      ...blank,
      ratio: fmt.ratio(ratio),
      target: `≤ ${ISSUE18.rss.toFixed(2)}× baseline's RSS`,
      result: verdict(ratio <= ISSUE18.rss),
    });
  }
  return { rows, notes, report };
}

const signed = (n: number) => (Number.isFinite(n) ? `${n < 0 ? '−' : '+'}${Math.abs(n).toFixed(2)}` : '—');

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = performance.now();
  const log = (text: string) => process.stderr.write(`bench: [${((performance.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${text}\n`);

  const redisBinary = findRedisServer();
  if (redisBinary === undefined) {
    const line = 'redis-server is not installed (Debian: apt-get install redis-server); skipping the benchmark: authgate is measured on its Redis store.';
    process.stdout.write(`bench: SKIPPED: ${line}\n`);
    if (options.json !== undefined) writeFileSync(options.json, `${JSON.stringify({ skipped: line }, null, 2)}\n`);
    return 0;
  }
  const host = machine(redisBinary);
  if (!hasTaskset) log('taskset not found: processes are not pinned, so server and generator share cores (numbers are noisier)');
  else pinSelf(GENERATOR_CORE);
  log(`${host.nproc} cores, ${host.cpuModel}, node ${host.node}; ${options.rounds} rounds × ${options.sliceS} s slices, ${options.connections} connections`);

  if (!options.load) {
    // `--only scale`: no gateways, no load.
    const rows: Row[] = [];
    const notes: string[] = [];
    const report: Record<string, unknown> = { machine: host, options };
    await scalePhase(options, redisBinary, log, rows, notes, report);
    return finish(options, host, startedAt, log, rows, notes, report);
  }

  // Processes -------------------------------------------------------------------------------
  // The memory measurement needs no load and no server: it runs while the servers start, and is
  // over before any load does.
  const memoryMeasured = options.extras ? measureMemory() : undefined;
  memoryMeasured?.catch(() => {}); // awaited below; a failure is reported there
  const redis = await startBenchRedis(redisBinary, SERVER_CORE);
  temporary.push(redis.dir); // stopped with every other process, then its directory removed
  const upstream = await startNodeChild('upstream', here('./upstream.js'), [], SERVER_CORE);
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const baseline = await startNodeChild('baseline', here('./baseline.js'), [upstreamUrl], SERVER_CORE);
  const baselineUrl = `http://127.0.0.1:${baseline.port}`;

  const adminToken = randomBytes(24).toString('base64url');
  // Production refuses to start without a signing key while the assertion is on (the default).
  // An older build (--compare, --gateway) warns about the unknown setting and goes on.
  const identityKey = makeIdentityKey();
  const identityOff = options.env['AUTHGATE_IDENTITY_ASSERTION'] === 'off';
  const common: Record<string, string> = {
    AUTHGATE_JWT_SECRET: randomBytes(48).toString('base64url'),
    AUTHGATE_ADMIN_TOKEN: adminToken,
    AUTHGATE_UPSTREAM_URL: upstreamUrl,
    AUTHGATE_REDIS_URL: redis.url,
    ...(identityOff ? {} : { AUTHGATE_IDENTITY_KEY_FILE: identityKey.file }),
    ...options.env,
  };
  const profileFlags = [...(options.cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir]), ...options.nodeFlags];
  // The rate limit's cost is measured against its twin (LIMIT_PAIR), which comes with it.
  const wanted = (id: ScenarioId): boolean =>
    options.only === undefined ||
    options.only.includes(id) ||
    id === 'baseline' ||
    (id === LIMIT_PAIR.without && options.only.includes(LIMIT_PAIR.with)) ||
    (SECOND_PAIR[id] !== undefined && options.only.includes(SECOND_PAIR[id]!));
  // The gateways start side by side (each mostly waits for its Redis connection and readiness).
  const optional = (wantedHere: boolean, start: () => Promise<Gateway>) => (wantedHere ? start() : Promise.resolve(undefined));
  const [gwA, gwCold, gwQuiet, gwIdentity, gwNoIdentity, gwLimited, gwNoIdentityB, gwIdentityB, gwReplica, gwCompare] = await Promise.all([
    startGateway('authgate-a', options.gatewayMain, common, profileFlags),
    optional(wanted('cold'), () => startGateway('authgate-cold', options.gatewayMain, { ...common, AUTHGATE_CACHE_MAX: '0' })),
    // The same build without its one log line per request: what the access log costs.
    optional(wanted('nolog'), () => startGateway('authgate-quiet', options.gatewayMain, { ...common, LOG_LEVEL: 'warn' })),
    // The same build without the identity assertion (and so without its key): what the assertion
    // costs. It shares the Redis and the JWT secret, so the main gateway's key and token work here.
    // Its twin with the assertion, started alike: the pair the assertion's cost is measured on.
    optional(wanted('apikey-ident') || wanted('jwt-ident') || wanted('apikey-limited'), () => startGateway('authgate-ident', options.gatewayMain, common)),
    optional(wanted('apikey-noident') || wanted('jwt-noident'), () => startGateway('authgate-noident', options.gatewayMain, withoutIdentity(common))),
    // The twin of authgate-ident with the rate limit on: the pair the limit's cost is measured on.
    optional(wanted('apikey-limited'), () => startGateway('authgate-limited', options.gatewayMain, { ...common, AUTHGATE_RATE_LIMIT: BENCH_RATE_LIMIT })),
    // The mirrored pair (IDENTITY_PAIRS): started in the other order, without the assertion first.
    optional(wanted('apikey-noident-b') || wanted('jwt-noident-b'), () => startGateway('authgate-noident-b', options.gatewayMain, withoutIdentity(common))),
    optional(wanted('apikey-ident-b') || wanted('jwt-ident-b'), () => startGateway('authgate-ident-b', options.gatewayMain, common)),
    optional(options.extras, () => startGateway('authgate-replica', options.gatewayMain, common)),
    optional(options.compareMain !== undefined, () => startGateway('authgate-compare', options.compareMain!, common)),
  ]);
  const load = await LoadGenerator.start();
  log(`pids: authgate ${gwA.proc.pid}, baseline ${baseline.proc.pid}, upstream ${upstream.proc.pid}, redis ${redis.pid}`);

  // Data ------------------------------------------------------------------------------------
  const email = `bench-${randomBytes(4).toString('hex')}@bench.test`;
  const password = randomBytes(18).toString('base64url');
  const org = await sendJson(`${gwA.opsUrl}/admin/organizations`, {
    headers: { authorization: `Bearer ${adminToken}` },
    body: { name: 'Bench', email, password },
    expect: 201,
  });
  const { token } = await sendJson(`${gwA.publicUrl}/auth/login`, { body: { email, password }, expect: 200 });
  const bearer = { authorization: `Bearer ${token}` };
  const { apiKey } = await sendJson(`${gwA.publicUrl}/auth/api-key`, { headers: bearer, expect: 201 });
  // The request every scenario sends: the same path and headers through every hop.
  const headersWith = (credential: string) => ({ 'user-agent': UA, authorization: `Bearer ${credential}` });

  // The reference of issue 18: nginx auth_request → a node:http key service that knows this key.
  const nginxFound = wanted('nginx-auth') ? findNginx() : undefined;
  const nginxSkipped = wanted('nginx-auth') && nginxFound === undefined;
  let nginx: { url: string; pid: number; keyServicePid: number; version: string } | undefined;
  if (nginxFound !== undefined) {
    const digest = createHash('sha256').update(apiKey).digest('base64url');
    const keyServiceProc = startProcess('keyservice', process.execPath, [here('./keyservice.js')], {
      core: SERVER_CORE,
      ipc: true,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', NODE_ENV: 'production', BENCH_KEY_DIGESTS: JSON.stringify([[digest, org.id]]) },
    });
    const { port: keyServicePort } = await firstMessage<{ port: number }>(keyServiceProc);
    const started = await startBenchNginx(nginxFound.binary, upstream.port, keyServicePort, hasTaskset ? SERVER_CORE : undefined);
    temporary.push(started.dir);
    const url = `http://127.0.0.1:${started.port}`;
    try {
      await waitFor('nginx ready', 10_000, async () => (await send(`${url}/accounts`, { headers: headersWith(apiKey) })).status === 200, started.proc);
    } catch (error) {
      let errorLog = '';
      try {
        errorLog = readFileSync(join(started.dir, 'error.log'), 'utf8').slice(-4000);
      } catch {
        // none written
      }
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nnginx error.log:\n${errorLog}`);
    }
    // The key service refuses what authgate refuses, and nginx passes its refusals on.
    const unknownKey = await send(`${url}/accounts`, { headers: headersWith(`${apiKey.slice(0, -1)}${apiKey.endsWith('A') ? 'B' : 'A'}`) });
    const noBearer = await send(`${url}/accounts`, { headers: { 'user-agent': UA } });
    const noUserAgent = await send(`${url}/accounts`, { headers: { 'user-agent': '', authorization: `Bearer ${apiKey}` } });
    if (unknownKey.status !== 401 || noBearer.status !== 401 || noUserAgent.status !== 403) {
      throw new Error(`nginx-auth: refusals answered ${unknownKey.status} (unknown key), ${noBearer.status} (no credential), ${noUserAgent.status} (no User-Agent); expected 401, 401, 403`);
    }
    nginx = { url, pid: started.proc.pid, keyServicePid: keyServiceProc.pid, version: nginxFound.version };
    log(`nginx ${nginx.version}: pid ${nginx.pid} on ${url}, key service pid ${keyServiceProc.pid}`);
  } else if (nginxSkipped) {
    log('nginx (with auth_request) not found on the PATH: the nginx-auth reference row is SKIPPED (Debian: apt-get install nginx-light)');
  }

  // The other reference of issue 18: the smallest Node gateway with the fast lane's pieces; and
  // the same reading the digest from Redis on every request (cache off's floor).
  const digest = createHash('sha256').update(apiKey).digest('base64url');
  const startNodeGateway = async (name: string, env: Record<string, string>) => {
    const proc = startProcess(name, process.execPath, [here('./node-gateway.js'), upstreamUrl], {
      core: SERVER_CORE,
      ipc: true,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', NODE_ENV: 'production', BENCH_KEY_DIGESTS: JSON.stringify([[digest, org.id]]), ...env },
    });
    const started = { proc, port: (await firstMessage<{ port: number }>(proc)).port };
    log(`${name}: pid ${proc.pid} on port ${started.port}`);
    return started;
  };
  const nodeGateway = wanted('node-gateway') ? await startNodeGateway('node-gateway', {}) : undefined;
  let nodeGatewayCold: { proc: Started; port: number } | undefined;
  if (wanted('node-gateway-cold')) {
    const hash = 'bench:node-gateway';
    await redis.client.hset(hash, digest, org.id);
    nodeGatewayCold = await startNodeGateway('node-gateway-cold', { BENCH_REDIS_URL: redis.url, BENCH_REDIS_HASH: hash });
  }
  const nodeGatewayUrl = nodeGateway === undefined ? '' : `http://127.0.0.1:${nodeGateway.port}`;
  const nodeGatewayColdUrl = nodeGatewayCold === undefined ? '' : `http://127.0.0.1:${nodeGatewayCold.port}`;

  const checks: [string, string, Record<string, string>][] = [
    ['upstream', upstreamUrl, headersWith(apiKey)],
    ['baseline', baselineUrl, headersWith(apiKey)],
    ['authgate (API key)', gwA.publicUrl, headersWith(apiKey)],
    ['authgate (JWT)', gwA.publicUrl, headersWith(token)],
    ...(gwCold === undefined ? [] : [['authgate (cache off)', gwCold.publicUrl, headersWith(apiKey)] as [string, string, Record<string, string>]]),
    ...(gwQuiet === undefined ? [] : [['authgate (access log off)', gwQuiet.publicUrl, headersWith(apiKey)] as [string, string, Record<string, string>]]),
    ...(gwIdentity === undefined
      ? []
      : ([
          ['authgate twin (identity assertion on, API key)', gwIdentity.publicUrl, headersWith(apiKey)],
          ['authgate twin (identity assertion on, JWT)', gwIdentity.publicUrl, headersWith(token)],
        ] as [string, string, Record<string, string>][])),
    ...(gwLimited === undefined ? [] : [['authgate twin (rate limit on, API key)', gwLimited.publicUrl, headersWith(apiKey)] as [string, string, Record<string, string>]]),
    ...(gwNoIdentity === undefined
      ? []
      : ([
          ['authgate (identity assertion off, API key)', gwNoIdentity.publicUrl, headersWith(apiKey)],
          ['authgate (identity assertion off, JWT)', gwNoIdentity.publicUrl, headersWith(token)],
        ] as [string, string, Record<string, string>][])),
    ...(nginx === undefined ? [] : [['nginx auth_request (API key)', nginx.url, headersWith(apiKey)] as [string, string, Record<string, string>]]),
    ...(nodeGateway === undefined ? [] : [['node-gateway (API key)', nodeGatewayUrl, headersWith(apiKey)] as [string, string, Record<string, string>]]),
    ...(nodeGatewayCold === undefined ? [] : [['node-gateway-cold (API key)', nodeGatewayColdUrl, headersWith(apiKey)] as [string, string, Record<string, string>]]),
  ];
  for (const [what, url, headers] of checks) {
    const answer = await send(`${url}/accounts`, { headers });
    if (answer.status !== 200) throw new Error(`${what}: GET /accounts answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    if ((what.startsWith('authgate') || what.startsWith('nginx') || what.startsWith('node-gateway')) && !answer.body.includes(org.id)) throw new Error(`${what}: the upstream did not see x-organization-id`);
  }
  // The upstream echoes only the organization id (its hot path stays one header read), so
  // x-authgate-identity itself is not checked there; the keys are, through each JWKS (ops port).
  const identityNote = await checkIdentityKeys(gwA, gwNoIdentity, identityOff ? undefined : identityKey.publicJwk);
  log(identityNote);

  const spec = (url: string, credential: string) => ({ url, path: '/accounts', method: 'GET', headers: headersWith(credential), connections: options.connections });
  const allScenarios: Scenario[] = [
    { id: 'upstream', title: 'upstream direct', spec: spec(upstreamUrl, apiKey), server: upstream.proc.pid },
    { id: 'baseline', title: 'baseline: fastify + @fastify/http-proxy, no auth', spec: spec(baselineUrl, apiKey), server: baseline.proc.pid },
    { id: 'apikey', title: 'authgate, API key, warm cache', spec: spec(gwA.publicUrl, apiKey), server: gwA.proc.pid },
    { id: 'nolog', title: 'authgate, API key, warm cache, access log off (LOG_LEVEL=warn)', spec: spec(gwQuiet?.publicUrl ?? '', apiKey), server: gwQuiet?.proc.pid ?? -1 },
    { id: 'jwt', title: 'authgate, JWT, warm cache', spec: spec(gwA.publicUrl, token), server: gwA.proc.pid },
    { id: 'apikey-ident', title: 'authgate twin, API key, warm cache, identity assertion on', spec: spec(gwIdentity?.publicUrl ?? '', apiKey), server: gwIdentity?.proc.pid ?? -1 },
    { id: 'jwt-ident', title: 'authgate twin, JWT, warm cache, identity assertion on', spec: spec(gwIdentity?.publicUrl ?? '', token), server: gwIdentity?.proc.pid ?? -1 },
    { id: 'apikey-noident', title: 'authgate, API key, warm cache, identity assertion off', spec: spec(gwNoIdentity?.publicUrl ?? '', apiKey), server: gwNoIdentity?.proc.pid ?? -1 },
    { id: 'jwt-noident', title: 'authgate, JWT, warm cache, identity assertion off', spec: spec(gwNoIdentity?.publicUrl ?? '', token), server: gwNoIdentity?.proc.pid ?? -1 },
    { id: 'apikey-ident-b', title: 'authgate twin B, API key, identity assertion on', spec: spec(gwIdentityB?.publicUrl ?? '', apiKey), server: gwIdentityB?.proc.pid ?? -1 },
    { id: 'jwt-ident-b', title: 'authgate twin B, JWT, identity assertion on', spec: spec(gwIdentityB?.publicUrl ?? '', token), server: gwIdentityB?.proc.pid ?? -1 },
    { id: 'apikey-noident-b', title: 'authgate twin B, API key, identity assertion off', spec: spec(gwNoIdentityB?.publicUrl ?? '', apiKey), server: gwNoIdentityB?.proc.pid ?? -1 },
    { id: 'jwt-noident-b', title: 'authgate twin B, JWT, identity assertion off', spec: spec(gwNoIdentityB?.publicUrl ?? '', token), server: gwNoIdentityB?.proc.pid ?? -1 },
    { id: 'apikey-limited', title: `authgate twin, API key, warm cache, identity assertion on, rate limit ${BENCH_RATE_LIMIT}`, spec: spec(gwLimited?.publicUrl ?? '', apiKey), server: gwLimited?.proc.pid ?? -1 },
    { id: 'cold', title: 'authgate, cache off (Redis read per request)', spec: spec(gwCold?.publicUrl ?? '', apiKey), server: gwCold?.proc.pid ?? -1 },
    { id: 'nginx-auth', title: `nginx auth_request → node:http key service (${nginx?.version ?? 'nginx'}, one process; SHA-256 + Map lookup)`, spec: spec(nginx?.url ?? '', apiKey), server: nginx?.pid ?? -1 },
    { id: 'node-gateway', title: 'node:http + undici Pool, the key service’s check, nothing else (the floor of a Node forwarding core)', spec: spec(nodeGatewayUrl, apiKey), server: nodeGateway?.proc.pid ?? -1 },
    { id: 'node-gateway-cold', title: 'the same, the digest read from Redis per request (one HGET, ioredis auto-pipelined)', spec: spec(nodeGatewayColdUrl, apiKey), server: nodeGatewayCold?.proc.pid ?? -1 },
    { id: 'garbage', title: 'authgate, 10% garbage keys (distinct, valid checksum)', spec: { ...spec(gwA.publicUrl, apiKey), garbage: { every: 10, environment: 'production' } }, server: gwA.proc.pid },
  ];
  watched.set('upstream', upstream.proc.pid).set('baseline', baseline.proc.pid).set('authgate', gwA.proc.pid).set('redis', redis.pid);
  if (gwCold !== undefined) watched.set('authgate-cold', gwCold.proc.pid);
  if (gwQuiet !== undefined) watched.set('authgate-quiet', gwQuiet.proc.pid);
  if (gwIdentity !== undefined) watched.set('authgate-ident', gwIdentity.proc.pid);
  if (gwNoIdentity !== undefined) watched.set('authgate-noident', gwNoIdentity.proc.pid);
  if (gwLimited !== undefined) watched.set('authgate-limited', gwLimited.proc.pid);
  if (gwIdentityB !== undefined) watched.set('authgate-ident-b', gwIdentityB.proc.pid);
  if (gwNoIdentityB !== undefined) watched.set('authgate-noident-b', gwNoIdentityB.proc.pid);
  if (nginx !== undefined) watched.set('nginx', nginx.pid).set('keyservice', nginx.keyServicePid);
  if (nodeGateway !== undefined) watched.set('node-gateway', nodeGateway.proc.pid);
  if (nodeGatewayCold !== undefined) watched.set('node-gateway-cold', nodeGatewayCold.proc.pid);
  if (gwCompare !== undefined) {
    // Its own organization and key, made through its own API: another build may name its data
    // or format its keys differently (as the shard-tag layout did), and must read its own.
    const compareEmail = `bench-${randomBytes(4).toString('hex')}@bench.test`;
    await sendJson(`${gwCompare.opsUrl}/admin/organizations`, {
      headers: { authorization: `Bearer ${adminToken}` },
      body: { name: 'Bench compare', email: compareEmail, password },
      expect: 201,
    });
    const compareLogin = await sendJson(`${gwCompare.publicUrl}/auth/login`, { body: { email: compareEmail, password }, expect: 200 });
    const compareKey = await sendJson(`${gwCompare.publicUrl}/auth/api-key`, { headers: { authorization: `Bearer ${compareLogin.token}` }, expect: 201 });
    allScenarios.push({ id: 'compare', title: `compare: ${options.compareMain}, API key, warm cache`, spec: spec(gwCompare.publicUrl, compareKey.apiKey), server: gwCompare.proc.pid });
    watched.set('authgate-compare', gwCompare.proc.pid);
  }
  const scenarios = allScenarios.filter((s) => (wanted(s.id) && (s.id !== 'nginx-auth' || nginx !== undefined)) || s.id === 'compare');
  const apikeySpec = allScenarios.find((s) => s.id === 'apikey')!.spec;

  // Warm-up, then interleaved rounds -------------------------------------------------------
  // Nothing else may run on the servers' core once load starts.
  await memoryMeasured;
  log('warming up');
  for (const scenario of scenarios) await runSlice(load, redis, scenario, options.warmS, -1);
  const slices: Slice[] = [];
  for (let round = 0; round < options.rounds; round++) {
    // Rotate the order each round, so no scenario always follows the same one.
    const order = scenarios.map((_, i) => scenarios[(i + round) % scenarios.length]!);
    for (const scenario of order) slices.push(await runSlice(load, redis, scenario, options.sliceS, round));
    const base = slices.find((s) => s.round === round && s.scenario === 'baseline')!;
    const line = scenarios
      .map((s) => {
        const x = slices.find((y) => y.round === round && y.scenario === s.id)!;
        return `${s.id} ${fmt.ratio(x.result.rps / base.result.rps)} (cpu ×${fmt.ratio(x.cpuUsPerRequest / base.cpuUsPerRequest)})`;
      })
      .join(', ');
    const nginxSlice = slices.find((y) => y.round === round && y.scenario === 'nginx-auth');
    const apikeySlice = slices.find((y) => y.round === round && y.scenario === 'apikey');
    const versusNginx = nginxSlice !== undefined && apikeySlice !== undefined ? `; apikey/nginx-auth ${fmt.ratio(apikeySlice.result.rps / nginxSlice.result.rps)}` : '';
    log(`round ${round + 1}/${options.rounds}: ${line}${versusNginx}`);
  }
  const summary = summarize(scenarios, slices);
  const baselineRps = summary.baseline!.rps;
  const rows: Row[] = scenarios.map(({ id }) => {
    const s = summary[id]!;
    const t = TARGETS[id];
    return {
      scenario: s.title,
      rps: fmt.rps(s.rps),
      p50: fmt.ms(s.p50),
      p99: fmt.ms(s.p99),
      ratio: t.ratio?.(s) ?? fmt.ratio(s.ratio),
      target: t.target,
      result: REFERENCES.has(id) ? '' : verdict(t.ok(s) && s.unexpected === 0),
    };
  });
  if (nginxSkipped) {
    rows.push({ scenario: 'nginx auth_request → node:http key service: no nginx with auth_request on the PATH (Debian: nginx-light)', rps: '', p50: '', p99: '', ratio: '', target: '(reference: issue 18)', result: 'SKIPPED' });
  }
  // The identity assertion's cost: each pair measured in the same rounds, one row for both.
  const pairs = IDENTITY_PAIRS.filter((p) => scenarios.some((s) => s.id === p.with) && scenarios.some((s) => s.id === p.without));
  const hasPair = (a: ScenarioId, b: ScenarioId) => scenarios.some((s) => s.id === a) && scenarios.some((s) => s.id === b);
  const identityCosts = Object.fromEntries(pairs.map((p) => [p.with, identityCost(slices, p.with, p.without, hasPair(p.withB, p.withoutB) ? [p.withB, p.withoutB] : undefined)]));
  if (pairs.length > 0) {
    const costs = pairs.map((p) => identityCosts[p.with]!);
    const clean = pairs.every((p) => summary[p.with]!.unexpected === 0 && summary[p.without]!.unexpected === 0);
    rows.push({
      scenario: `identity assertion cost: ${pairs.map((p) => `${p.name} ${signed(identityCosts[p.with]!)}`).join(', ')} (median of same-round differences of the ratio with and without it, averaged over two mirrored pairs of twins)`,
      rps: '',
      p50: '',
      p99: '',
      ratio: signed(Math.min(...costs)),
      target: `≥ ${signed(IDENTITY_COST_LIMIT)}`,
      result: verdict(clean && costs.every((c) => c >= IDENTITY_COST_LIMIT)),
    });
  }
  // The rate limit's cost, the same way against its twin without it.
  const limited = scenarios.some((s) => s.id === LIMIT_PAIR.with) && scenarios.some((s) => s.id === LIMIT_PAIR.without);
  const limitCost = limited ? identityCost(slices, LIMIT_PAIR.with, LIMIT_PAIR.without) : undefined;
  if (limitCost !== undefined) {
    const clean = summary[LIMIT_PAIR.with]!.unexpected === 0 && summary[LIMIT_PAIR.without]!.unexpected === 0;
    rows.push({
      scenario: `rate limit cost: ${LIMIT_PAIR.name} ${signed(limitCost)} (median of same-round differences of the ratio with and without it)`,
      rps: '',
      p50: '',
      p99: '',
      ratio: signed(limitCost),
      target: `≥ ${signed(LIMIT_COST_LIMIT)}`,
      result: verdict(clean && limitCost >= LIMIT_COST_LIMIT),
    });
  }
  const issue18 = issue18Rows(scenarios, slices, summary, nginxSkipped);
  rows.push(...issue18.rows);
  const report: Record<string, unknown> = { machine: host, options, summary, slices, identityCost: identityCosts, ...(limitCost !== undefined && { rateLimitCost: limitCost }), issue18: issue18.report };
  const notes: string[] = [
    identityNote,
    ...issue18.notes,
    `Redis reads (HGET) per 1000 requests: ${scenarios.filter(({ id }) => id !== 'upstream' && id !== 'baseline').map(({ id }) => `${id} ${fmt.ratio(summary[id]!.storeReadsPer1000)}`).join(', ')}`,
    `CPU time per request of the process under test (µs; ×baseline): ${scenarios.map(({ id }) => `${id} ${fmt.ms(summary[id]!.cpuUsPerRequest)} (×${fmt.ratio(summary[id]!.cpuRatio)})`).join(', ')}`,
  ];
  for (const { id } of scenarios) {
    const s = summary[id]!;
    if (s.unexpected > 0) notes.push(`WARNING: ${id}: ${s.unexpected} unexpected answers or errors`);
  }

  if (options.extras) {
    // Redis reads under garbage keys: distinct keys (above), and a fixed set sent again and again.
    const garbageSlices = slices.filter((s) => s.scenario === 'garbage');
    const garbageSent = garbageSlices.reduce((n, s) => n + s.result.garbageSent, 0);
    const garbageReads = garbageSlices.reduce((n, s) => n + s.reads, 0);
    const readsPerGarbageKey = garbageReads / garbageSent;
    log('negative cache');
    const negativeKeys = 200;
    const negBefore = await readsOf(redis);
    const [negative] = await load.run({ ...apikeySpec, label: 'negative', amount: negativeKeys * 10, garbage: { every: 1, pool: negativeKeys, environment: 'production' } });
    await sleep(SETTLE_MS);
    const negativeReads = (await readsOf(redis)).hget - negBefore.hget;
    // The valid key's own entry expires with the cache TTL (60 s) and is read again: at most one
    // such read per slice, since a slice is shorter than the TTL.
    const validKeyAllowance = garbageSlices.length;
    rows.push({
      scenario: `Redis reads per distinct garbage key (${garbageReads} for ${garbageSent}, the valid key's TTL refreshes included); ${negativeKeys} keys × 10 within 5 s: ${negativeReads} reads`,
      rps: '',
      p50: '',
      p99: '',
      ratio: fmt.ratio(Math.max(readsPerGarbageKey, negativeReads / negativeKeys)),
      target: '≤ 1 per key per negative-cache period',
      result: verdict(garbageReads <= garbageSent + validKeyAllowance && negativeReads <= negativeKeys),
    });
    report['garbage'] = { sent: garbageSent, reads: garbageReads, readsPerKey: readsPerGarbageKey, negative: { keys: negativeKeys, requests: negative?.requests, reads: negativeReads } };

    // Revocation propagation: DELETE on one replica, then the first 401 on the other.
    log(`revocation propagation (${options.revocations} keys)`);
    const revocation = await measureRevocation(gwA, gwReplica!, bearer, headersWith, options.revocations);
    rows.push({
      scenario: `revocation propagation to the other replica (${revocation.count} revocations, max ${fmt.ms(revocation.maxMs)} ms)`,
      rps: '',
      p50: fmt.ms(revocation.p50Ms),
      p99: fmt.ms(revocation.p99Ms),
      ratio: '',
      target: 'p99 ≤ 50 ms',
      result: verdict(revocation.count === options.revocations && revocation.p99Ms <= 50),
    });
    report['revocation'] = revocation;

    // Login: throughput with the gateway's own event-loop delay, then a burst next to proxied traffic.
    log('login');
    const eventLoop = async () => {
      const text = (await send(`${gwA.opsUrl}/metrics`)).body; // reading also starts a new window
      return {
        p99: (metricValue(text, 'nodejs_eventloop_lag_p99_seconds') ?? Number.NaN) * 1000,
        p50: (metricValue(text, 'nodejs_eventloop_lag_p50_seconds') ?? Number.NaN) * 1000,
        max: (metricValue(text, 'nodejs_eventloop_lag_max_seconds') ?? Number.NaN) * 1000,
      };
    };
    const loginSpec: Omit<RunSpec, 'label'> = {
      url: gwA.publicUrl,
      path: '/auth/login',
      method: 'POST',
      headers: { 'user-agent': UA, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
      connections: 8,
    };
    await sleep(500);
    await eventLoop();
    await sleep(options.quick ? 1000 : 3000);
    const idleLoop = await eventLoop();
    const [login] = await load.run({ ...loginSpec, label: 'login', durationS: options.loginS });
    const loginLoop = await eventLoop();
    const [burstLogin, burstProxied] = await load.run(
      { ...loginSpec, label: 'burst-login', durationS: options.burstS },
      { ...apikeySpec, label: 'burst-proxied', durationS: options.burstS },
    );
    const burstLoop = await eventLoop();
    const loginOk = login !== undefined && (login.statusCodes['200'] ?? 0) > 0 && Object.keys(login.statusCodes).every((c) => c === '200');
    const burstFlows = burstProxied !== undefined && burstProxied.perSecondMin > 0 && burstProxied.errors === 0 && burstProxied.timeouts === 0 && Object.keys(burstProxied.statusCodes).every((c) => c === '200');
    rows.push({
      scenario: `POST /auth/login at full speed (8 connections): gateway event-loop delay p99 ${fmt.ms(loginLoop.p99)} ms (idle ${fmt.ms(idleLoop.p99)} ms)`,
      rps: fmt.rps(login?.rps ?? Number.NaN),
      p50: fmt.ms(login?.p50 ?? Number.NaN),
      p99: fmt.ms(login?.p99 ?? Number.NaN),
      ratio: '',
      target: 'event-loop delay p99 ≤ 20 ms',
      result: verdict(loginOk && loginLoop.p99 <= 20),
    });
    rows.push({
      scenario: `proxied (API key) during a login burst (${fmt.rps(burstLogin?.rps ?? Number.NaN)} logins/s beside it; fewest answers in a second: ${burstProxied?.perSecondMin ?? 0})`,
      rps: fmt.rps(burstProxied?.rps ?? Number.NaN),
      p50: fmt.ms(burstProxied?.p50 ?? Number.NaN),
      p99: fmt.ms(burstProxied?.p99 ?? Number.NaN),
      ratio: fmt.ratio((burstProxied?.rps ?? Number.NaN) / baselineRps),
      target: 'keeps flowing: every second answered, no errors',
      result: verdict(burstFlows),
    });
    notes.push(`login: event-loop delay (prom-client, 10 ms sampling interval included) p50 ${fmt.ms(loginLoop.p50)} ms, p99 ${fmt.ms(loginLoop.p99)} ms, max ${fmt.ms(loginLoop.max)} ms; idle p99 ${fmt.ms(idleLoop.p99)} ms; during the burst p99 ${fmt.ms(burstLoop.p99)} ms`);
    report['login'] = { result: login, eventLoopMs: loginLoop, idleEventLoopMs: idleLoop };
    report['burst'] = { login: burstLogin, proxied: burstProxied, eventLoopMs: burstLoop };

    // Memory: the cache module from dist/, 100 000 credentials, heap after gc.
    log('memory (100 000 cached credentials)');
    const memory = await memoryMeasured!;
    const gatewayRss = metricValue((await send(`${gwA.opsUrl}/metrics`)).body, 'process_resident_memory_bytes') ?? Number.NaN;
    rows.push({
      scenario: `memory: heap per cached credential, 100 000 cached (API key; a JWT: ${Math.round(memory.jwt.heapBytesPerCredential)} B)`,
      rps: `${Math.round(memory.apiKey.heapBytesPerCredential)} B`,
      p50: '',
      p99: '',
      ratio: '',
      target: '≤ 1 KiB',
      result: verdict(memory.apiKey.heapBytesPerCredential <= 1024 && memory.jwt.heapBytesPerCredential <= 1024),
    });
    notes.push(`memory: RSS per cached credential ${Math.round(memory.apiKey.rssBytesPerCredential)} B (API key), ${Math.round(memory.jwt.rssBytesPerCredential)} B (JWT); RSS of the main authgate process at the end ${fmt.rps(gatewayRss / 2 ** 20)} MiB`);
    report['memory'] = { ...memory, gatewayRssBytes: gatewayRss };
  }

  // Scale last: its fills load Redis and the generator's core for a few minutes.
  if (options.scale) await scalePhase(options, redisBinary, log, rows, notes, report);
  return finish(options, host, startedAt, log, rows, notes, report);
}

/** Prints the table, the machine, the notes, and the JSON when asked. */
function finish(options: Options, host: Machine, startedAt: number, log: (text: string) => void, rows: readonly Row[], notes: readonly string[], report: Record<string, unknown>): number {
  const elapsedS = (performance.now() - startedAt) / 1000;
  process.stdout.write(`\n${table(rows)}\n\n`);
  process.stdout.write(`machine: nproc ${host.nproc}, ${host.cpuModel}, node ${host.node}, ${host.memGiB} GiB; ${host.taskset ? 'servers pinned to core 0, generator to core 1' : 'not pinned (no taskset)'}\n`);
  if (options.load) process.stdout.write(`run: ${options.rounds} rounds × ${options.sliceS} s per scenario, ${options.connections} connections; ratios are medians of same-round ratios; ${elapsedS.toFixed(0)} s in all\n`);
  else process.stdout.write(`run: scale phase only; ${elapsedS.toFixed(0)} s in all\n`);
  for (const note of notes) process.stdout.write(`${note}\n`);
  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify({ ...report, elapsedS, rows, notes }, null, 2)}\n`);
    log(`wrote ${options.json}`);
  }
  return 0; // a MISS is a finding, not a failure of the bench: the table and the JSON say it
}

const SCALE_TARGETS = { apiKeyBytes: 300, sessionBytes: 250, lookupRatio: 0.9 };

/**
 * Scale (bench/scale.ts): Redis memory per stored API key and per live session, from the real
 * Redis store on a redis-server of its own, and API-key lookups (cache off, at the store) with
 * 1,000 vs the most keys stored. Rows beside the others, figures in the JSON under `scale`.
 */
async function scalePhase(options: Options, redisBinary: string, log: (text: string) => void, rows: Row[], notes: string[], report: Record<string, unknown>): Promise<void> {
  const { measureScale } = await import('./scale.js');
  const max = options.scaleMax;
  const first = Math.min(100_000, max);
  const perOrganization = 10;
  log(`scale: Redis memory per credential up to ${max.toLocaleString('en-US')}, and lookups at 1,000 vs ${max.toLocaleString('en-US')} keys`);
  const scale: ScaleResult = await measureScale({
    redisBinary,
    core: hasTaskset ? SERVER_CORE : undefined,
    sizes: max > first ? [first, max] : [max],
    onePerOrganizationCount: first,
    perOrganization,
    concurrency: 200,
    lookupsInFlight: 64,
    lookupSmallCount: Math.min(1000, max),
    lookupRounds: options.quick ? 7 : 15,
    lookupSliceS: options.quick ? 0.5 : 1,
    log,
  });
  const count = (n: number) => n.toLocaleString('en-US');
  const bytes = (n: number) => `${Math.round(n)} B`;
  const ordered = [
    ...scale.memory.filter((f) => f.kind === 'api_key' && f.perOrganization !== 1).sort((a, b) => a.count - b.count),
    ...scale.memory.filter((f) => f.kind === 'api_key' && f.perOrganization === 1),
    ...scale.memory.filter((f) => f.kind === 'session').sort((a, b) => a.count - b.count),
  ];
  for (const f of ordered) {
    const limit = f.kind === 'api_key' ? SCALE_TARGETS.apiKeyBytes : SCALE_TARGETS.sessionBytes;
    const what =
      f.kind === 'api_key'
        ? f.perOrganization === 1
          ? `Redis memory per stored API key, ${count(f.count)} keys at 1 per organization (each per-tag hash shared by few keys)`
          : `Redis memory per stored API key, ${count(f.count)} keys, ${f.perOrganization} per organization`
        : `Redis memory per live session (1-hour expiry), ${count(f.count)} sessions, ${f.perOrganization} per organization`;
    rows.push({ scenario: what, rps: bytes(f.bytesPerItem), p50: '', p99: '', ratio: '', target: `≤ ${limit} B`, result: verdict(f.bytesPerItem <= limit) });
  }
  const l = scale.lookups;
  rows.push({
    scenario:
      `API-key lookups/s, cache off, at the store (findApiKeyByHash, ${l.inFlight} in flight, random stored keys): ${count(l.large.stored)} keys stored vs ${count(l.small.stored)} ` +
      `(${fmt.rps(l.small.lookupsPerSecond)}/s); Redis CPU per lookup ${fmt.ms(l.large.redisCpuUsPerLookup)} vs ${fmt.ms(l.small.redisCpuUsPerLookup)} µs`,
    rps: fmt.rps(l.large.lookupsPerSecond),
    p50: '',
    p99: '',
    ratio: fmt.ratio(l.ratio),
    target: `flat: ≥ ${SCALE_TARGETS.lookupRatio.toFixed(2)}`,
    result: verdict(l.ratio >= SCALE_TARGETS.lookupRatio && l.misses === 0),
  });
  notes.push(
    `scale: Redis memory is (used_memory after the credentials − after their organizations) / count, from INFO memory; ` +
      `an organization's own record and e-mail claim, not counted in it: ${bytes(median(scale.memory.map((f) => f.bytesPerOrganization)))}; ` +
      `created through the store, 200 calls in flight: ${ordered.map((f) => `${count(f.count)} ${f.kind === 'api_key' ? `keys (${f.perOrganization}/org)` : 'sessions'} ${fmt.rps(f.createdPerSecond)}/s`).join(', ')}; ` +
      `lookups/s ratio is the median of ${l.slices.length / 2} same-round ratios; scale phase ${scale.seconds.toFixed(0)} s`,
  );
  if (l.misses > 0) notes.push(`WARNING: scale: ${l.misses} lookups of stored keys found nothing`);
  report['scale'] = scale;
}

/**
 * The main gateway's JWKS (ops port) must list the bench's key first: it signs with it. A gateway
 * without the JWKS route (an older build via --gateway) is noted, not refused. The gateway with the
 * assertion off must not serve one.
 */
async function checkIdentityKeys(main: Gateway, noIdentity: Gateway | undefined, publicJwk: JsonWebKey | undefined): Promise<string> {
  const path = '/.well-known/jwks.json';
  if (noIdentity !== undefined) {
    const answer = await send(`${noIdentity.opsUrl}${path}`);
    if (answer.status === 200) throw new Error(`${noIdentity.name}: serves a JWKS, so the identity assertion is not off`);
  }
  const answer = await send(`${main.opsUrl}${path}`);
  if (publicJwk === undefined) {
    if (answer.status === 200) throw new Error(`${main.name}: serves a JWKS although --env AUTHGATE_IDENTITY_ASSERTION=off`);
    return 'identity assertion: off in every gateway (--env AUTHGATE_IDENTITY_ASSERTION=off)';
  }
  if (answer.status === 404) return `identity assertion: ${main.name} serves no JWKS (a build without the assertion?): not measured`;
  if (answer.status !== 200) throw new Error(`${main.name}: GET ${path} answered ${answer.status}`);
  const first = (JSON.parse(answer.body) as { keys?: JsonWebKey[] }).keys?.[0];
  const same = (jwk: JsonWebKey | undefined) => {
    try {
      return jwk !== undefined && createPublicKey({ key: jwk, format: 'jwk' }).equals(createPublicKey({ key: publicJwk, format: 'jwk' }));
    } catch {
      return false;
    }
  };
  if (!same(first)) throw new Error(`${main.name}: its JWKS does not start with the bench's identity key (AUTHGATE_IDENTITY_KEY_FILE not used?)`);
  const kid = (first as { kid?: string }).kid ?? '?';
  return `identity assertion: on in ${main.name}, signing with the bench's P-256 key (kid ${kid}, checked through its JWKS; the bench upstream does not echo x-authgate-identity)${noIdentity === undefined ? '' : `; off in ${noIdentity.name} (no JWKS)`}`;
}

async function measureRevocation(
  from: Gateway,
  to: Gateway,
  bearer: Record<string, string>,
  headersWith: (credential: string) => Record<string, string>,
  count: number,
): Promise<{ count: number; p50Ms: number; p99Ms: number; maxMs: number; probes: number }> {
  const keys: { id: string; apiKey: string }[] = [];
  for (let i = 0; i < count; i++) keys.push(await sendJson(`${from.publicUrl}/auth/api-key`, { headers: bearer, expect: 201 }));
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  // Each key is in the other replica's cache before it is revoked: the 401 must come from the
  // revocation message, not from a cache miss.
  for (const key of keys) {
    const warm = await send(`${to.publicUrl}/accounts`, { headers: headersWith(key.apiKey), agent: probeAgent });
    if (warm.status !== 200) throw new Error(`the replica refused a fresh key: ${warm.status}`);
  }
  const times: number[] = [];
  let probes = 0;
  for (const key of keys) {
    const deleted = await send(`${from.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: bearer });
    if (deleted.status !== 204) throw new Error(`DELETE answered ${deleted.status}`);
    const t0 = performance.now();
    for (;;) {
      probes++;
      const probe = await send(`${to.publicUrl}/accounts`, { headers: headersWith(key.apiKey), agent: probeAgent });
      if (probe.status === 401) break;
      if (probe.status !== 200) throw new Error(`the replica answered ${probe.status} while the revocation travelled`);
      if (performance.now() - t0 > 5000) throw new Error('a revocation did not reach the replica within 5 s');
    }
    times.push(performance.now() - t0);
  }
  probeAgent.destroy();
  const [p50Ms, p99Ms, maxMs] = percentiles(times, [50, 99, 100]) as [number, number, number];
  return { count: times.length, p50Ms, p99Ms, maxMs, probes };
}

type MemoryResult = { count: number; apiKey: { heapBytesPerCredential: number; rssBytesPerCredential: number }; jwt: { heapBytesPerCredential: number; rssBytesPerCredential: number } };

async function measureMemory(): Promise<MemoryResult> {
  // On the generator's core, which is idle while the servers start.
  const proc = startProcess('memory', process.execPath, ['--expose-gc', here('./memory.js'), '100000'], { core: GENERATOR_CORE, stdout: 'pipe' });
  const code = await new Promise<number | null>((resolve) => proc.child.on('exit', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`memory measurement failed:\n${proc.output()}`);
  const line = proc.output().split('\n').find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`memory measurement printed nothing:\n${proc.output()}`);
  return JSON.parse(line) as MemoryResult;
}

let code = 1;
const interrupted = () => {
  void stopAll().finally(() => {
    removeTemporary();
    process.exit(130);
  });
};
process.once('SIGINT', interrupted);
process.once('SIGTERM', interrupted);
try {
  code = await main();
} catch (error) {
  process.stderr.write(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  code = 1;
} finally {
  await stopAll();
  removeTemporary();
}
process.exit(code);
