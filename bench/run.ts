/**
 * `npm run bench`: what authgate costs on top of a bare reverse proxy, as ratios measured in one
 * run. See docs/performance.md for what each scenario means, how to read the table, and how to
 * add a scenario.
 *
 *   node dist-bench/bench/run.js [--quick] [--json FILE] [--rounds N] [--slice SECONDS]
 *                                [--connections N] [--cpu-prof DIR] [--profile-gateway NAME] [--only apikey,jwt,...] [--env KEY=VALUE]
 *                                [--gateway FILE] [--compare FILE] [--node-flag FLAG] [--scale-max N]
 *                                [--only flood] [--only scale]
 *
 * One process tree on loopback: a keep-alive upstream, the baseline proxy, the authgate
 * processes the selected scenarios need (production build, Redis store) on a redis-server of our
 * own, and the load generator. The gateways sign the identity assertion with a P-256 key made for
 * this run (a temporary file, removed at the end). Servers run on core 0 and the generator on
 * core 1 (taskset). Scenarios run in short interleaved slices; each ratio is the median of
 * same-round ratios. Every process is stopped by pid at the end. The scale phase (bench/scale.ts;
 * alone with --only scale) runs last, on redis-servers of its own.
 *
 * The parts: bench/scenarios.ts (the table), bench/runner/ (processes, setup, rounds, the extra
 * phases, the scale phase) and bench/report/ (summaries, costs, issue 18's rows, the output).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { hasTaskset, pinSelf, stopAll } from './lib/proc.js';
import { findRedisServer } from './lib/redis.js';
import { parseOptions } from './options.js';
import { finish, type ReportParts } from './report/format.js';
import { loadReport } from './report/summary.js';
import { extraPhases, measureMemory } from './runner/extras.js';
import { floodPhase } from './runner/flood-phase.js';
import { GENERATOR_CORE, machine, removeTemporary } from './runner/processes.js';
import { runRounds } from './runner/rounds.js';
import { scalePhase } from './runner/scale-phase.js';
import { startRun } from './runner/setup.js';

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
    // `--only scale`, `--only flood`: no load scenarios, only these phases (each starts what it needs).
    const parts: ReportParts = { rows: [], notes: [], report: { machine: host, options } };
    if (options.flood) await floodPhase(options, redisBinary, log, parts);
    if (options.scale) await scalePhase(options, redisBinary, log, parts);
    return finish(options, host, startedAt, log, parts);
  }

  // The memory measurement needs no load and no server: it runs while the servers start, and is
  // over before any load does.
  const memoryMeasured = options.extras ? measureMemory() : undefined;
  memoryMeasured?.catch(() => {}); // awaited below; a failure is reported there
  const run = await startRun(options, redisBinary, log);
  // Nothing else may run on the servers' core once load starts.
  await memoryMeasured;
  const slices = await runRounds(run.load, run.redis, run.scenarios, options, log);
  const { baselineRps, ...parts } = loadReport(host, options, { ...run, slices });
  if (options.extras) await extraPhases(options, run, slices, baselineRps, memoryMeasured!, log, parts);
  // Issue 45: a gateway, Redis and generator of its own, so the flood's memory is its alone.
  if (options.flood) await floodPhase(options, redisBinary, log, parts);
  // Scale last: its fills load Redis and the generator's core for a few minutes.
  if (options.scale) await scalePhase(options, redisBinary, log, parts);
  return finish(options, host, startedAt, log, parts);
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
