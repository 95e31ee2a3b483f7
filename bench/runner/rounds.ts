/**
 * The measurement: every selected scenario once as a warm-up, then in rounds of short slices,
 * the order rotated each round. Around each slice the CPU time of every watched server process
 * and Redis's command counts are read, and at its end their resident memory.
 */
import type { BenchRedis } from '../lib/redis.js';
import { cpuMs, rssKiB, sleep } from '../lib/proc.js';
import type { RunResult, RunSpec } from '../loadgen.js';
import type { ScenarioId } from '../scenarios.js';
import { fmt } from '../report/format.js';
import type { LoadGenerator } from './processes.js';

/** A selected scenario with its servers started. `server`: the pid whose CPU time per request is reported. */
export type Scenario = { id: ScenarioId; title: string; spec: Omit<RunSpec, 'durationS' | 'label'>; server: number };

export type Slice = {
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

/** Processes whose CPU time is read around each slice, by name (in the notes in this order). */
export const watched = new Map<string, number>();

/** Pause after each slice: in-flight work ends before the next slice and before reads are counted. */
export const SETTLE_MS = 150;

/** Credential reads are HGETs of one field (docs/redis-layout.md); scripts are EVALSHA. */
export async function readsOf(redis: BenchRedis): Promise<{ hget: number; evalsha: number }> {
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

export type RoundsOptions = { rounds: number; sliceS: number; warmS: number };

/** The warm-up, then `rounds` interleaved rounds; logs each round's ratios to the baseline. */
export async function runRounds(load: LoadGenerator, redis: BenchRedis, scenarios: readonly Scenario[], options: RoundsOptions, log: (text: string) => void): Promise<Slice[]> {
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
    // Issue 30: authgate deciding for nginx against the hand-written key service, same round.
    const authzSlice = slices.find((y) => y.round === round && y.scenario === 'nginx-authz');
    const versusKeyService = nginxSlice !== undefined && authzSlice !== undefined ? `; nginx-authz/nginx-auth ${fmt.ratio(authzSlice.result.rps / nginxSlice.result.rps)}` : '';
    const noidentSlice = slices.find((y) => y.round === round && y.scenario === 'nginx-authz-noident');
    const versusNoident = nginxSlice !== undefined && noidentSlice !== undefined ? `; nginx-authz-noident/nginx-auth ${fmt.ratio(noidentSlice.result.rps / nginxSlice.result.rps)}` : '';
    const compareSlice = slices.find((y) => y.round === round && y.scenario === 'nginx-authz-compare');
    const versusCompare = compareSlice !== undefined && authzSlice !== undefined ? `; nginx-authz/nginx-authz-compare ${fmt.ratio(authzSlice.result.rps / compareSlice.result.rps)} (cpu ${fmt.ratio(authzSlice.cpuUsPerRequest / compareSlice.cpuUsPerRequest)})` : '';
    log(`round ${round + 1}/${options.rounds}: ${line}${versusNginx}${versusKeyService}${versusNoident}${versusCompare}`);
  }
  return slices;
}
