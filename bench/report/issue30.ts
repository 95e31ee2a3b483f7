/**
 * Issue 30's target as verdict rows: nginx auth_request → authgate's /authz/auth-request at
 * ≥ 0.95× the throughput of nginx auth_request → the hand-written key service, with its p99 or
 * better, API key and JWT, warm cache. Each is the median of same-round ratios (throughput, and
 * p99), as issue 18's row against nginx. Beside them, as a reference without a verdict, the same
 * with the identity assertion off (nginx-authz-noident): like for like with the key service,
 * whose allow carries the organization only, so the difference between the two rows is what
 * carrying the signed assertion costs nginx and the upstream, not authgate's decision.
 */
import type { Scenario, Slice } from '../runner/rounds.js';
import type { ScenarioId } from '../scenarios.js';
import { fmt, verdict, type ReportParts, type Row } from './format.js';
import { versusSameRound } from './same-round.js';
import type { Summaries } from './summary.js';

const ISSUE30 = { versusKeyService: 0.95, p99: 1.0 };

export function issue30Rows(scenarios: readonly Scenario[], slices: readonly Slice[], summary: Summaries): ReportParts {
  const rows: Row[] = [];
  const notes: string[] = [];
  const tails: string[] = [];
  const report: Record<string, unknown> = {};
  const has = (id: ScenarioId) => scenarios.some((s) => s.id === id);
  const blank = { rps: '', p50: '', p99: '' };
  if (!has('nginx-auth')) return { rows, notes, report };
  const rowsOf = [
    ['nginx-authz', 'API key', true],
    ['nginx-authz-jwt', 'JWT', true],
    ['nginx-authz-noident', 'API key, identity assertion off (reference: the decision without the assertion’s transport)', false],
  ] as const;
  for (const [id, name, judged] of rowsOf) {
    if (!has(id)) continue;
    const { ratio, p99Ratio, tailRatio, ratios } = versusSameRound(slices, id, 'nginx-auth');
    const clean = summary[id]!.unexpected === 0 && summary['nginx-auth']!.unexpected === 0;
    rows.push({
      scenario: `issue 30 target: nginx → authgate's /authz/auth-request ÷ nginx → key service, ${name} (median of same-round ratios)`,
      ...blank,
      ratio: `${fmt.ratio(ratio)} (p99 ×${fmt.ratio(p99Ratio)})`,
      target: judged ? `≥ ${ISSUE30.versusKeyService.toFixed(2)} × nginx-auth, p99 no worse` : '(reference)',
      result: judged ? verdict(clean && ratio >= ISSUE30.versusKeyService && p99Ratio <= ISSUE30.p99) : '',
    });
    report[id] = { ratio, p99Ratio, tailRatio, ratios };
    tails.push(`${id} ×${fmt.ratio(tailRatio)}`);
  }
  if (tails.length > 0) {
    notes.push(`issue 30, the p99 beyond what throughput explains (p99 ratio × throughput ratio to nginx-auth, median of rounds; under the closed load latency is connections ÷ throughput, so 1.00 is a tail of the same shape): ${tails.join(', ')}`);
  }
  return { rows, notes, report };
}
