/**
 * Summarises a V8 CPU profile (`npm run bench -- --cpu-prof DIR`, the main authgate process):
 * self time by module and by function, as % of the process's busy time (all samples but
 * `(idle)`), and optionally who calls the functions matching a pattern.
 *
 *   node dist-bench/bench/profile-summary.js FILE.cpuprofile [--top N] [--callers REGEX] [--depth N] [--skip SECONDS]
 *
 * --skip leaves out the first SECONDS of the profile (the process's start, the bench's setup and
 * warm-up), so the figures are of the measured slices; --depth: caller frames shown (8).
 *
 * Modules: a package under node_modules (its name), `node:<module>` for node's own JavaScript,
 * `authgate:<file>` for the gateway's code, and V8's pseudo-frames ((garbage collector),
 * (program)) as they are. Native functions called from JavaScript (e.g. `writev`) have no URL:
 * they are listed as `(native)`.
 */
import { readFileSync } from 'node:fs';

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const argv = process.argv.slice(2);
const file = argv[0];
if (file === undefined) throw new Error('usage: profile-summary.js FILE.cpuprofile [--top N] [--callers REGEX]');
const option = (name: string) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};
const top = Number(option('--top') ?? 40);
const callers = option('--callers');
const depth = Number(option('--depth') ?? 8);
const skipUs = Number(option('--skip') ?? 0) * 1e6;

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node: each sample's time delta goes to the sampled (leaf) node.
const self = new Map<number, number>();
let at = profile.startTime;
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at - profile.startTime < skipUs) continue;
  total += delta;
  const id = profile.samples[i]!;
  self.set(id, (self.get(id) ?? 0) + delta);
}
const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((n, [, t]) => n + t, 0);
const busy = total - idle;

function moduleOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).replace(/^internal\//, '')}`;
  const dist = url.indexOf('/dist/');
  if (dist !== -1) return `authgate:${url.slice(dist + 6)}`;
  return url;
}
const fnName = (frame: CallFrame) => `${frame.functionName || '(anonymous)'} ${moduleOf(frame)}${frame.url === '' ? '' : `:${frame.lineNumber + 1}`}`;

const add = (map: Map<string, number>, key: string, t: number) => map.set(key, (map.get(key) ?? 0) + t);
const modules = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, t] of self) {
  const frame = byId.get(id)!.callFrame;
  if (frame.functionName === '(idle)') continue;
  add(modules, moduleOf(frame), t);
  add(functions, fnName(frame), t);
}
const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)} %`;
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [key, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(t)}  ${key}\n`);
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s profiled${skipUs > 0 ? ` (after the first ${skipUs / 1e6} s)` : ''}, busy ${((100 * busy) / total).toFixed(1)} % of it; percentages are of busy time\n`);
print('self time by module', modules);
print('self time by function', functions);

if (callers !== undefined) {
  // Inclusive time of the matching frames, by the chain of callers above them (nearest --depth frames).
  const pattern = new RegExp(callers);
  const chains = new Map<string, number>();
  for (const [id, t] of self) {
    const path: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) path.push(byId.get(at)!);
    const hit = path.findIndex((n) => pattern.test(fnName(n.callFrame)));
    if (hit === -1) continue;
    // The outermost matching frame, then who called it.
    let outer = hit;
    for (let i = hit; i < path.length; i++) if (pattern.test(fnName(path[i]!.callFrame))) outer = i;
    add(chains, path.slice(outer, outer + depth).map((n) => fnName(n.callFrame)).join(' ← '), t);
  }
  print(`inclusive time under /${callers}/, by caller chain`, chains);
}
