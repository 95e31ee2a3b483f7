import { median } from '../lib/stats.js';
import type { Slice } from '../runner/rounds.js';
import type { ScenarioId } from '../scenarios.js';

/**
 * `id` against `reference`, each round's slices divided by each other: the medians over rounds of
 * the throughput ratio and of the p99 ratio (issue 18's row against nginx, issue 30's rows). A
 * round without both slices is left out. `ratios`: every round's throughput ratio, for the JSON.
 *
 * `tailRatio`: the median over rounds of p99 ratio × throughput ratio. Under the bench's closed
 * load (a fixed number of connections, each waiting for its answer) mean latency is connections ÷
 * throughput (Little's law), so a service at 0.95× the throughput shows ~1.05× the latency with a
 * tail of the same shape; this product is what the tail adds beyond that (1.00: the same shape).
 */
export function versusSameRound(slices: readonly Slice[], id: ScenarioId, reference: ScenarioId): { ratio: number; p99Ratio: number; tailRatio: number; ratios: number[] } {
  const rounds = [...new Set(slices.map((x) => x.round))];
  const pairs = rounds.flatMap((round) => {
    const mine = slices.find((x) => x.round === round && x.scenario === id);
    const theirs = slices.find((x) => x.round === round && x.scenario === reference);
    return mine === undefined || theirs === undefined ? [] : [{ ratio: mine.result.rps / theirs.result.rps, p99Ratio: mine.result.p99 / theirs.result.p99 }];
  });
  const ratios = pairs.map((p) => p.ratio);
  return { ratio: median(ratios), p99Ratio: median(pairs.map((p) => p.p99Ratio)), tailRatio: median(pairs.map((p) => p.p99Ratio * p.ratio)), ratios };
}
