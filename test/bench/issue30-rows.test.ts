/**
 * Issue 30's verdict rows (bench/report/issue30.ts) on slices made here: the target is judged on
 * the median of same-round ratios to nginx-auth, throughput and p99 both, API key and JWT; the
 * like-for-like row (the assertion off) is shown without a verdict.
 */
import t from 'tap';
import { issue30Rows } from '../../bench/report/issue30.js';
import { versusSameRound } from '../../bench/report/same-round.js';
import type { Summaries, Summary } from '../../bench/report/summary.js';
import type { Scenario, Slice } from '../../bench/runner/rounds.js';
import type { ScenarioId } from '../../bench/scenarios.js';

const slice = (round: number, scenario: ScenarioId, rps: number, p99: number): Slice => ({
  round,
  scenario,
  result: { label: scenario, requests: rps * 2, durationS: 2, rps, p50: p99 / 2, p90: p99 * 0.8, p99, max: p99 * 2, statusCodes: { '200': rps * 2 }, errors: 0, timeouts: 0, garbageSent: 0, perSecondMin: rps },
  reads: 0,
  scripts: 0,
  cpuUsPerRequest: 30,
  cpuUsPerRequestByProcess: {},
  rssKiBByProcess: {},
});
const scenario = (id: ScenarioId): Scenario => ({ id, title: id, spec: { url: 'http://127.0.0.1:1', path: '/accounts', method: 'GET', headers: {}, connections: 1 }, server: 1 });
const summaryOf = (ids: readonly ScenarioId[], unexpected: Partial<Record<ScenarioId, number>> = {}): Summaries =>
  Object.fromEntries(ids.map((id) => [id, { title: id, rps: 0, p50: 0, p99: 0, ratio: 0, p99Ratio: 0, cpuUsPerRequest: 0, cpuRatio: 0, storeReadsPer1000: 0, unexpected: unexpected[id] ?? 0 } satisfies Summary]));

/** Three rounds: nginx-auth at 1000 req/s, p99 10 ms; the others at the given shares of both. */
function run(shares: Partial<Record<ScenarioId, { rps: readonly number[]; p99: readonly number[] }>>): Slice[] {
  const slices: Slice[] = [];
  for (let round = 0; round < 3; round++) {
    slices.push(slice(round, 'nginx-auth', 1000, 10));
    for (const [id, share] of Object.entries(shares) as [ScenarioId, { rps: readonly number[]; p99: readonly number[] }][]) slices.push(slice(round, id, 1000 * share.rps[round]!, 10 * share.p99[round]!));
  }
  return slices;
}

t.test('the same-round ratios: medians over rounds of throughput and p99, a round without both left out', async (t) => {
  const slices = run({ 'nginx-authz': { rps: [0.9, 0.96, 1.2], p99: [1.3, 0.9, 1.0] } });
  const found = versusSameRound(slices, 'nginx-authz', 'nginx-auth');
  t.equal(found.ratio.toFixed(3), '0.960');
  t.equal(found.p99Ratio.toFixed(3), '1.000');
  t.same(found.ratios.map((r) => r.toFixed(2)), ['0.90', '0.96', '1.20']);
  // p99 × throughput per round: 1.17, 0.864, 1.2.
  t.equal(found.tailRatio.toFixed(3), '1.170', 'the tail beyond throughput: the median of the rounds’ products');
  const without = versusSameRound(slices.filter((s) => !(s.round === 2 && s.scenario === 'nginx-auth')), 'nginx-authz', 'nginx-auth');
  t.equal(without.ratios.length, 2, 'the round without nginx-auth is left out');
});

t.test('issue 30 verdicts: throughput and p99 both judged, the assertion-off row a reference only', async (t) => {
  const ids: ScenarioId[] = ['nginx-auth', 'nginx-authz', 'nginx-authz-jwt', 'nginx-authz-noident'];
  const slices = run({
    'nginx-authz': { rps: [0.96, 0.97, 0.95], p99: [0.9, 1.0, 0.95] },
    'nginx-authz-jwt': { rps: [0.99, 1.0, 0.98], p99: [1.1, 1.2, 1.05] },
    'nginx-authz-noident': { rps: [0.5, 0.5, 0.5], p99: [3, 3, 3] },
  });
  const { rows, report, notes } = issue30Rows(ids.map(scenario), slices, summaryOf(ids));
  t.equal(rows.length, 3);
  t.match(rows[0]!.scenario, /API key \(median/);
  t.equal(rows[0]!.result, 'PASS', 'API key: 0.96, p99 ×0.95');
  t.equal(rows[1]!.result, 'MISS', 'JWT: fast enough, but its p99 is worse than the key service’s');
  t.equal(rows[2]!.result, '', 'the like-for-like row has no verdict');
  t.equal(rows[2]!.target, '(reference)');
  t.ok('nginx-authz-noident' in report);
  t.equal(notes.length, 1, 'one note of the tails');
  t.match(notes[0]!, /nginx-authz ×0\.90, nginx-authz-jwt ×1\.09, nginx-authz-noident ×1\.50$/, 'each row’s p99 × throughput, median of rounds');

  const slow = run({ 'nginx-authz': { rps: [0.94, 0.93, 0.99], p99: [0.9, 0.9, 0.9] } });
  t.equal(issue30Rows(['nginx-auth', 'nginx-authz'].map((id) => scenario(id as ScenarioId)), slow, summaryOf(['nginx-auth', 'nginx-authz'])).rows[0]!.result, 'MISS', 'a median of 0.94 misses');
  const unexpected = issue30Rows(['nginx-auth', 'nginx-authz'].map((id) => scenario(id as ScenarioId)), slices, summaryOf(['nginx-auth', 'nginx-authz'], { 'nginx-authz': 3 }));
  t.equal(unexpected.rows[0]!.result, 'MISS', 'answers other than 200 make it a miss');
});

t.test('no nginx-auth row: no issue 30 rows', async (t) => {
  const { rows } = issue30Rows([scenario('nginx-authz')], run({ 'nginx-authz': { rps: [1, 1, 1], p99: [1, 1, 1] } }), summaryOf(['nginx-authz']));
  t.equal(rows.length, 0);
});
