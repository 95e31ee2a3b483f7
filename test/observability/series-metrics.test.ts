import t from 'tap';
import { Counter, Histogram, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../src/observability/series-metrics.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];

/** The same observations through prom-client's own metrics and the series metrics. */
async function both() {
  const theirs = new Registry();
  const ours = new Registry();
  for (const registry of [theirs, ours]) registry.setDefaultLabels({ environment: 'sandbox' });
  const c1 = new Counter({ name: 'x_requests_total', help: 'h', labelNames: ['method', 'status_code'] as const, registers: [theirs] });
  const h1 = new Histogram({ name: 'x_duration_seconds', help: 'h', labelNames: ['route'] as const, buckets: BUCKETS, registers: [theirs] });
  const c2 = new SeriesCounter({ name: 'x_requests_total', help: 'h', labelNames: ['method', 'status_code'] as const, registry: ours });
  const h2 = new SeriesHistogram({ name: 'x_duration_seconds', help: 'h', labelNames: ['route'] as const, buckets: BUCKETS, registry: ours });
  c1.inc({ method: 'GET', status_code: 200 });
  c1.inc({ method: 'GET', status_code: 200 }, 2);
  c1.labels('POST', '401').inc();
  c2.inc({ method: 'GET', status_code: 200 });
  c2.bound({ method: 'GET', status_code: 200 }).inc(2);
  c2.labels('POST', '401').inc();
  for (const value of [0.0005, 0.001, 0.05, 0.5, 3]) {
    h1.observe({ route: '/a' }, value);
    h2.observe({ route: '/a' }, value);
  }
  h1.labels('/b').observe(0.002);
  h2.bound({ route: '/b' }).observe(0.002);
  return { theirs: await theirs.metrics(), ours: await ours.metrics() };
}

t.test('series metrics export exactly what prom-client would', async (t) => {
  const { theirs, ours } = await both();
  t.equal(ours, theirs);
});

t.test('a bound series keeps counting; reset zeroes without unbinding', async (t) => {
  const registry = new Registry();
  const counter = new SeriesCounter({ name: 'y_total', help: 'h', labelNames: ['kind'] as const, registry });
  const series = counter.bound({ kind: 'a' });
  series.inc();
  t.equal(counter.bound({ kind: 'a' }), series, 'one series per label values');
  counter.reset();
  series.inc(3);
  t.match(await registry.metrics(), /^y_total\{kind="a"\} 3$/m);
});

t.test('labels are checked when a series is made; values must be finite and counters only go up', async (t) => {
  const registry = new Registry();
  const counter = new SeriesCounter({ name: 'z_total', help: 'h', labelNames: ['kind'] as const, registry });
  const histogram = new SeriesHistogram({ name: 'z_seconds', help: 'h', labelNames: ['kind'] as const, buckets: BUCKETS, registry });
  t.throws(() => counter.inc({ kind: 'a', other: 'b' } as never), /no label named other/);
  t.throws(() => counter.inc({} as never), /label kind is missing/);
  t.throws(() => counter.labels('a', 'b'), /expected 1 label values/);
  t.throws(() => counter.inc({ kind: 'a' }, -1));
  t.throws(() => counter.inc({ kind: 'a' }, Number.NaN));
  t.throws(() => histogram.observe({ kind: 'a' }, Number.POSITIVE_INFINITY));
  const end = histogram.bound({ kind: 'a' }).startTimer();
  t.ok(end() >= 0, 'startTimer observes the seconds since');
  t.match(await registry.metrics(), /^z_seconds_count\{kind="a"\} 1$/m);
  t.throws(() => new SeriesCounter({ name: 'z_total', help: 'h', labelNames: [], registry }), /already been registered/);
});
