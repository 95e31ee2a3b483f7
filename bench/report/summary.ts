/**
 * The load scenarios' part of the report: each scenario's medians over rounds and ratios to the
 * baseline (medians of same-round ratios), a row per scenario with its target from the table,
 * the costs measured on twins, issue 18's rows, and the notes on reads and CPU per request.
 */
import { median } from '../lib/stats.js';
import type { Options } from '../options.js';
import type { Scenario, Slice } from '../runner/rounds.js';
import type { Machine } from '../runner/processes.js';
import { IDENTITY_COST_LIMIT, IDENTITY_PAIRS, PAIR_COSTS, SPECS, type ScenarioId } from '../scenarios.js';
import { fmt, ratioRow, signed, verdict, type ReportParts, type Row } from './format.js';
import { issue18Rows } from './issue18.js';
import { issue30Rows } from './issue30.js';

export type Summary = {
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
export type Summaries = Partial<Record<ScenarioId, Summary>>;

const specOf = (id: ScenarioId) => SPECS.find((s) => s.id === id)!;

/** Medians over rounds; ratios are medians of same-round ratios to the baseline. */
export function summarize(scenarios: readonly Scenario[], slices: readonly Slice[]): Summaries {
  const of = (id: ScenarioId) => slices.filter((s) => s.scenario === id);
  const baselineOf = (round: number) => slices.find((b) => b.round === round && b.scenario === 'baseline')!;
  const unexpected = (id: ScenarioId, slice: Slice) =>
    slice.result.errors +
    slice.result.timeouts +
    Object.entries(slice.result.statusCodes)
      .filter(([code]) => code !== '200' && !(specOf(id).alsoExpected ?? []).includes(code))
      .reduce((n, [, count]) => n + count, 0);
  const out: Summaries = {};
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

/**
 * Median over rounds of (ratio with − ratio without), both to the same round's baseline; with a
 * second, mirrored pair, of the mean of both pairs' differences in the round.
 */
function pairCost(slices: readonly Slice[], withId: ScenarioId, withoutId: ScenarioId, second?: readonly [ScenarioId, ScenarioId]): number {
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

export type LoadRun = { scenarios: readonly Scenario[]; slices: readonly Slice[]; skipped: ReadonlyMap<ScenarioId, string>; nginxSkipped: boolean; identityNote: string };

/** The table's rows, notes and JSON of the load scenarios; the baseline's req/s for the extra phases. */
export function loadReport(host: Machine, options: Options, run: LoadRun): ReportParts & { baselineRps: number } {
  const { scenarios, slices } = run;
  const summary = summarize(scenarios, slices);
  const has = (id: ScenarioId) => scenarios.some((s) => s.id === id);
  const rows: Row[] = scenarios.map(({ id }) => {
    const s = summary[id]!;
    const spec = specOf(id);
    return {
      scenario: s.title,
      rps: fmt.rps(s.rps),
      p50: fmt.ms(s.p50),
      p99: fmt.ms(s.p99),
      ratio: spec.showP99 === true ? `${fmt.ratio(s.ratio)} (p99 ×${fmt.ratio(s.p99Ratio)})` : fmt.ratio(s.ratio),
      target: spec.target,
      result: spec.ok === undefined ? '' : verdict(spec.ok(s) && s.unexpected === 0),
    };
  });
  if (run.nginxSkipped) {
    rows.push({ scenario: 'nginx auth_request → node:http key service: no nginx with auth_request on the PATH (Debian: nginx-light)', rps: '', p50: '', p99: '', ratio: '', target: '(reference: issue 18)', result: 'SKIPPED' });
  }
  const report: Record<string, unknown> = { machine: host, options, summary, slices };

  // The identity assertion's cost: each pair measured in the same rounds, one row for both.
  const pairs = IDENTITY_PAIRS.filter((p) => has(p.with) && has(p.without));
  const identityCosts = Object.fromEntries(pairs.map((p) => [p.with, pairCost(slices, p.with, p.without, has(p.withB) && has(p.withoutB) ? [p.withB, p.withoutB] : undefined)]));
  if (pairs.length > 0) {
    const costs = pairs.map((p) => identityCosts[p.with]!);
    const clean = pairs.every((p) => summary[p.with]!.unexpected === 0 && summary[p.without]!.unexpected === 0);
    rows.push(
      ratioRow(
        `identity assertion cost: ${pairs.map((p) => `${p.name} ${signed(identityCosts[p.with]!)}`).join(', ')} (median of same-round differences of the ratio with and without it, averaged over two mirrored pairs of twins)`,
        signed(Math.min(...costs)),
        `≥ ${signed(IDENTITY_COST_LIMIT)}`,
        verdict(clean && costs.every((c) => c >= IDENTITY_COST_LIMIT)),
      ),
    );
  }
  report['identityCost'] = identityCosts;
  // The other costs on twins, the same way: measured when both ran, SKIPPED when the build cannot.
  for (const cost of PAIR_COSTS) {
    const why = run.skipped.get(cost.with) ?? run.skipped.get(cost.without);
    if (why !== undefined) {
      rows.push(ratioRow(`${cost.name}: SKIPPED: ${why}`, '—', `≥ ${signed(cost.limit)}`, 'SKIPPED'));
      continue;
    }
    if (!has(cost.with) || !has(cost.without)) continue;
    const second = 'second' in cost && has(cost.second[0]) && has(cost.second[1]) ? cost.second : undefined;
    const value = pairCost(slices, cost.with, cost.without, second);
    const clean = [cost.with, cost.without, ...(second ?? [])].every((id) => summary[id]!.unexpected === 0);
    rows.push(ratioRow(`${cost.name} ${signed(value)} ${cost.how}`, signed(value), `≥ ${signed(cost.limit)}`, verdict(clean && value >= cost.limit)));
    report[cost.json] = value;
  }

  const issue18 = issue18Rows(scenarios, slices, summary, run.nginxSkipped);
  rows.push(...issue18.rows);
  report['issue18'] = issue18.report;
  const issue30 = issue30Rows(scenarios, slices, summary);
  rows.push(...issue30.rows);
  report['issue30'] = issue30.report;
  const notes: string[] = [
    run.identityNote,
    ...issue18.notes,
    ...issue30.notes,
    `Redis reads (HGET) per 1000 requests: ${scenarios.filter(({ id }) => id !== 'upstream' && id !== 'baseline').map(({ id }) => `${id} ${fmt.ratio(summary[id]!.storeReadsPer1000)}`).join(', ')}`,
    `CPU time per request of the process under test (µs; ×baseline): ${scenarios.map(({ id }) => `${id} ${fmt.ms(summary[id]!.cpuUsPerRequest)} (×${fmt.ratio(summary[id]!.cpuRatio)})`).join(', ')}`,
  ];
  // Issue 33: what the tracing twins cost the processes beside them, per request (medians over
  // rounds): the OTLP sink (on the generator's core) reading the exports, and the upstream
  // reading the injected traceparent.
  const tracingIds = scenarios.map(({ id }) => id).filter((id) => id.startsWith('tracing-'));
  if (tracingIds.length > 0) {
    const perRequest = (id: ScenarioId, process: string) => fmt.ms(median(slices.filter((x) => x.scenario === id).map((x) => x.cpuUsPerRequestByProcess[process] ?? Number.NaN)));
    notes.push(`tracing twins, CPU per request (µs) of the OTLP sink (generator's core): ${tracingIds.map((id) => `${id} ${perRequest(id, 'otlp-sink')}`).join(', ')}; of the upstream: ${tracingIds.map((id) => `${id} ${perRequest(id, 'upstream')}`).join(', ')}`);
  }
  for (const { id } of scenarios) {
    const s = summary[id]!;
    if (s.unexpected > 0) notes.push(`WARNING: ${id}: ${s.unexpected} unexpected answers or errors`);
  }
  return { rows, notes, report, baselineRps: summary.baseline!.rps };
}
