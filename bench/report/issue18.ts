/**
 * Issue 18's targets (a forwarding core as fast as nginx auth_request), as verdict rows of their
 * own beside the standing targets, which stay as they are:
 * - API key and JWT, warm cache, ≥ 1.5× the baseline's req/s with p99 ≤ the baseline's; cache off ≥ 1.0×;
 * - API key ≥ 0.9× the nginx auth_request reference (moonshot 1.0×): median of same-round ratios;
 * - the authgate process's CPU per request, API key, ≤ 0.6× the baseline's (median of same-round ratios);
 * - RSS of authgate under load ≤ 1.2× the baseline's: each process's peak over the ends of the
 *   slices in which it was the server under load.
 */
import { median } from '../lib/stats.js';
import { watched, type Scenario, type Slice } from '../runner/rounds.js';
import type { ScenarioId } from '../scenarios.js';
import { fmt, verdict, type ReportParts, type Row } from './format.js';
import { versusSameRound } from './same-round.js';
import type { Summaries } from './summary.js';

const ISSUE18 = { rps: 1.5, p99: 1.0, cold: 1.0, versusNginx: 0.9, versusNginxMoonshot: 1.0, cpu: 0.6, rss: 1.2 };

export function issue18Rows(scenarios: readonly Scenario[], slices: readonly Slice[], summary: Summaries, nginxSkipped: boolean): ReportParts {
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
      const { ratio, p99Ratio, ratios } = versusSameRound(slices, 'apikey', 'nginx-auth');
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
