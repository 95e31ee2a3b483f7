/**
 * The bench's command line. Every option is documented in docs/performance.md ("Running it");
 * the scenario names --only takes come from the scenario table (bench/scenarios.ts).
 */
import { SPECS, type ScenarioId } from './scenarios.js';
import { GATEWAY_MAIN } from './runner/processes.js';

export type Options = {
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
  /** The gateway --cpu-prof and --node-flag apply to, by its process name (--profile-gateway NAME): the main one, `authgate-a`, by default. */
  profileGateway: string;
  /** Development aid: only these load scenarios (and the baseline), no extra phases. */
  only: ScenarioId[] | undefined;
  /** Negative cache, revocation, login and memory: off with --only. */
  extras: boolean;
  /** The load scenarios and their gateways: off with `--only scale`. */
  load: boolean;
  /** Redis memory per stored credential and lookups at 1k vs many keys: in the full run, or `--only scale`. */
  scale: boolean;
  /** Issue 45: a gateway's RSS under 50,000 distinct unknown keys, a trickle of valid requests beside: in the full run, or `--only flood`. */
  flood: boolean;
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

/** The scenarios --only accepts: every entry but those that run only with their gateway (--compare). */
const SELECTABLE: readonly ScenarioId[] = SPECS.filter((s) => s.withGatewayOnly !== true).map((s) => s.id);

export function usage(): string {
  const listed = SPECS.filter((s) => s.withGatewayOnly !== true && s.unlisted !== true).map((s) => s.id);
  return `usage: npm run bench -- [--quick] [--json FILE] [--rounds N] [--slice SECONDS] [--connections N] [--cpu-prof DIR] [--profile-gateway NAME] [--only ${[...listed, 'flood', 'scale'].join(',')}] [--env KEY=VALUE]... [--gateway dist/main.js] [--compare other/dist/main.js] [--node-flag FLAG]... [--scale-max N]\n`;
}

export function parseOptions(argv: readonly string[]): Options {
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
  const known = new Set(['--quick', '--json', '--rounds', '--slice', '--connections', '--cpu-prof', '--profile-gateway', '--only', '--env', '--gateway', '--compare', '--node-flag', '--scale-max', '--help']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || argv[i - 1] === '--node-flag') continue;
    if (!known.has(arg)) throw new Error(`unknown option ${arg}`);
  }
  if (argv.includes('--help')) {
    process.stdout.write(usage());
    process.exit(0);
  }
  const onlyItems = value('--only')?.split(',');
  const only = onlyItems
    ?.filter((id) => id !== 'scale' && id !== 'flood')
    .map((id) => {
      if (!SELECTABLE.includes(id as ScenarioId)) throw new Error(`--only: unknown scenario ${id}`);
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
    profileGateway: value('--profile-gateway') ?? 'authgate-a',
    only,
    extras: only === undefined,
    load: only === undefined || only.length > 0,
    scale: onlyItems === undefined || onlyItems.includes('scale'),
    flood: onlyItems === undefined || onlyItems.includes('flood'),
    scaleMax: Math.round(number('--scale-max', quick ? 100_000 : 1_000_000)),
  };
}
