// The usage page (issue 47): the organization's requests per UTC day for the last 30 days
// (GET /auth/usage), stacked by outcome, with the plan's quota as a line and a key filter; drawn
// with the vendored uPlot (a canvas: nothing inline for the CSP to refuse), and the same numbers
// in a table for screen readers and for reading exact figures.
import { call } from './api.js';
import { h, replaceChildren } from './dom.js';
import { run, statusArea } from './feedback.js';
import uPlot from './uplot.js';

const OUTCOMES = ['admitted', 'credential', 'scope', 'rate_limit', 'quota'] as const;
type Outcome = (typeof OUTCOMES)[number];
const LABELS: Record<Outcome, string> = { admitted: 'Admitted', credential: 'Refused: credential', scope: 'Refused: scope', rate_limit: 'Refused: rate limit', quota: 'Refused: quota' };
const COLOURS: Record<Outcome, string> = { admitted: '#2e7d32', credential: '#6d4c41', scope: '#f9a825', rate_limit: '#ef6c00', quota: '#c62828' };

type Bucket = Readonly<{ start: string } & Record<Outcome, number>>;
type Quota = Readonly<{ plan: string; requests: number; per: 'day' | 'month'; used: number; left: number }>;
type Report = Readonly<{ buckets: readonly Bucket[]; quota: Quota | null }>;
type Keys = Readonly<{ keys: ReadonlyArray<Readonly<{ id: string; name: string | null; prefix: string }>> }>;

/** What one day of a monthly quota comes to, for the line on a chart of days. */
function dailyQuota(quota: Quota, start: string): number {
  if (quota.per === 'day') return quota.requests;
  const date = new Date(start);
  return quota.requests / new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
}

export function usagePage(): HTMLElement {
  const status = statusArea();
  const keySelect = h('select', { id: 'usage-key' }, h('option', { value: '' }, 'All keys and sign-ins'));
  const refresh = h('button', { type: 'button' }, 'Refresh');
  const summary = h('p', { id: 'usage-quota' });
  const chartSlot = h('div', { class: 'usage-chart', role: 'img', 'aria-label': 'Requests per day for the last 30 days, stacked by outcome; the numbers are in the table below.' });
  const body = h('tbody');
  let chart: uPlot | undefined;

  async function load(): Promise<void> {
    const keyId = keySelect.value;
    const report = await run(refresh, status, () => call<Report>('GET', `/auth/usage?granularity=day${keyId === '' ? '' : `&keyId=${encodeURIComponent(keyId)}`}`));
    if (report === undefined) return;
    const quota = report.quota;
    replaceChildren(summary, quota === null ? 'No quota: your plan has none.' : `Quota (plan ${quota.plan}): ${quota.used} of ${quota.requests} requests used this ${quota.per} (UTC), ${quota.left} left.`);
    body.replaceChildren(...report.buckets.map((bucket) => {
      const total = OUTCOMES.reduce((sum, outcome) => sum + bucket[outcome], 0);
      return h('tr', {}, h('th', { scope: 'row' }, bucket.start.slice(0, 10)), ...OUTCOMES.map((outcome) => h('td', {}, bucket[outcome])), h('td', {}, total));
    }));
    draw(report);
  }

  function draw(report: Report): void {
    chart?.destroy();
    const xs = report.buckets.map((bucket) => Date.parse(bucket.start) / 1000);
    // Stacked by drawing each outcome's running total, the tallest first: each bar shows through
    // above the ones drawn after it (admitted at the bottom, drawn last).
    const running = OUTCOMES.map((_, i) => report.buckets.map((bucket) => OUTCOMES.slice(0, i + 1).reduce((sum, outcome) => sum + bucket[outcome], 0)));
    const order = [...OUTCOMES.keys()].reverse();
    const bars = uPlot.paths.bars!({ size: [0.7, 40] });
    const series: uPlot.Series[] = [{}, ...order.map((i) => ({ label: LABELS[OUTCOMES[i]!], stroke: COLOURS[OUTCOMES[i]!], fill: COLOURS[OUTCOMES[i]!], paths: bars, points: { show: false } }))];
    const data: uPlot.AlignedData = [xs, ...order.map((i) => running[i]!)];
    if (report.quota !== null) {
      const quota = report.quota;
      series.push({ label: quota.per === 'day' ? 'Quota per day' : 'Monthly quota ÷ days', stroke: '#1565c0', width: 2, dash: [6, 4], points: { show: false } });
      data.push(report.buckets.map((bucket) => dailyQuota(quota, bucket.start)));
    }
    const width = Math.max(320, Math.min(900, chartSlot.clientWidth || 640));
    chart = new uPlot({ width, height: 280, series, scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } }, legend: { live: false } }, data, chartSlot);
  }

  keySelect.addEventListener('change', () => void load());
  refresh.addEventListener('click', () => void load());
  // The key filter lists the keys GET /auth/api-key shows (the first 100); then the figures.
  void call<Keys>('GET', '/auth/api-key?limit=100').then(
    (page) => keySelect.append(...page.keys.map((key) => h('option', { value: key.id }, key.name ?? key.prefix))),
    () => {},
  ).finally(() => void load());

  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Usage'),
    h('p', {}, 'Requests to your API through the gateway, per day (UTC) for the last 30 days, by what became of them.'),
    h('div', { class: 'row' }, h('label', { for: 'usage-key' }, 'API key'), keySelect, refresh),
    summary,
    chartSlot,
    h('table', { id: 'usage-table' }, h('caption', {}, 'Requests per day (UTC), by outcome'), h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), ...OUTCOMES.map((outcome) => h('th', { scope: 'col' }, LABELS[outcome])), h('th', { scope: 'col' }, 'Total'))), body),
    status,
  );
}
