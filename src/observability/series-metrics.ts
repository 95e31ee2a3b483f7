import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms for the metrics updated on every request (requests, their duration,
 * auth decisions, upstream duration, store calls). They exist for cost: prom-client hashes and
 * validates the label object on every update, bound children included, and those updates were
 * the largest item of authgate's own per-request code (≈ 15 µs a request, measured with the
 * bench's --compare: docs/performance.md, "What each optimisation bought"). Here a series is made
 * once per label values and an update is an addition. What guards their output: /metrics must
 * print exactly what prom-client's own Counter and Histogram print for the same observations,
 * byte for byte (test/observability/series-metrics.test.ts); they register on a prom-client
 * Registry through its metric contract (get, reset), so the registry prints them as its own.
 */

type LabelValues<L extends string> = Readonly<Record<L, string | number>>;

/** One series of a SeriesCounter, bound once: inc() is an addition. */
export type CounterSeries = Readonly<{ inc(by?: number): void }>;
/** One series of a SeriesHistogram, bound once: observe() finds a bucket and adds. */
export type HistogramSeries = Readonly<{
  observe(seconds: number): void;
  /** Starts timing; the function returned observes the seconds since, and returns them. */
  startTimer(): () => number;
}>;

type ExportedValue = { value: number; labels: Record<string, string | number>; metricName?: string; sharedLabels?: Record<string, string | number> };

/**
 * What the two series metrics share: series by label values, created on first use (the only time
 * label names are checked), and the registry contract (get, reset) so /metrics shows them as
 * prom-client's own. Label values are bounded by the callers, as for every metric here.
 */
abstract class SeriesMetric<L extends string, S> {
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  protected readonly series = new Map<string, { labels: LabelValues<L>; state: S; bound: unknown }>();

  constructor(name: string, help: string, labelNames: readonly L[], registry: Registry) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    registry.registerMetric(this as unknown as Metric);
  }

  protected abstract newState(): S;
  protected abstract bind(state: S): unknown;
  protected abstract zero(state: S): void;

  protected entry(labels: LabelValues<L>) {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let entry = this.series.get(key);
    if (entry === undefined) {
      for (const name of Object.keys(labels)) {
        if (!(this.labelNames as readonly string[]).includes(name)) throw new Error(`${this.name}: no label named ${name}`);
      }
      const own = {} as Record<L, string | number>;
      for (const name of this.labelNames) {
        const value = labels[name];
        if (value === undefined) throw new Error(`${this.name}: label ${name} is missing`);
        own[name] = value;
      }
      const state = this.newState();
      entry = { labels: own, state, bound: this.bind(state) };
      this.series.set(key, entry);
    }
    return entry;
  }

  protected fromValues(values: readonly (string | number)[]): LabelValues<L> {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: expected ${this.labelNames.length} label values`);
    const labels = {} as Record<L, string | number>;
    this.labelNames.forEach((name, i) => (labels[name] = values[i]!));
    return labels;
  }

  /** Zeroes every series; series already bound keep working. */
  reset(): void {
    for (const { state } of this.series.values()) this.zero(state);
  }
}

/** V narrows the label values a caller may pass (e.g. the auth decisions' closed union). */
export class SeriesCounter<L extends string, V extends LabelValues<L> = LabelValues<L>> extends SeriesMetric<L, { value: number }> {
  readonly type = 'counter';

  constructor(config: { name: string; help: string; labelNames: readonly L[]; registry: Registry }) {
    super(config.name, config.help, config.labelNames, config.registry);
  }

  protected newState() {
    return { value: 0 };
  }
  protected bind(state: { value: number }): CounterSeries {
    return {
      inc(by = 1) {
        if (!(by >= 0) || by === Infinity) throw new Error('a counter goes up by a finite, non-negative amount');
        state.value += by;
      },
    };
  }
  protected zero(state: { value: number }) {
    state.value = 0;
  }

  /** The series of these label values, to keep and inc() without any lookup. */
  bound(labels: V): CounterSeries {
    return this.entry(labels).bound as CounterSeries;
  }
  /** prom-client's form: label values in labelNames order. */
  labels(...values: (string | number)[]): CounterSeries {
    return this.entry(this.fromValues(values)).bound as CounterSeries;
  }
  inc(labels: V, by = 1): void {
    this.bound(labels).inc(by);
  }

  async get() {
    const values: ExportedValue[] = [];
    for (const { labels, state } of this.series.values()) values.push({ labels: { ...labels }, value: state.value });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

type HistogramState = { counts: Float64Array; sum: number; count: number };

export class SeriesHistogram<L extends string> extends SeriesMetric<L, HistogramState> {
  readonly type = 'histogram';
  private readonly upperBounds: Float64Array;

  constructor(config: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[]; registry: Registry }) {
    super(config.name, config.help, config.labelNames, config.registry);
    this.upperBounds = Float64Array.from([...config.buckets].sort((a, b) => a - b));
  }

  protected newState(): HistogramState {
    return { counts: new Float64Array(this.upperBounds.length), sum: 0, count: 0 };
  }
  protected bind(state: HistogramState): HistogramSeries {
    const bounds = this.upperBounds;
    const observe = (value: number) => {
      if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
      for (let i = 0; i < bounds.length; i++) {
        if (value <= bounds[i]!) {
          state.counts[i]!++;
          break;
        }
      }
      state.sum += value;
      state.count++;
    };
    const startTimer = () => {
      const started = performance.now();
      return () => {
        const seconds = (performance.now() - started) / 1000;
        observe(seconds);
        return seconds;
      };
    };
    return { observe, startTimer };
  }
  protected zero(state: HistogramState) {
    state.counts.fill(0);
    state.sum = 0;
    state.count = 0;
  }

  bound(labels: LabelValues<L>): HistogramSeries {
    return this.entry(labels).bound as HistogramSeries;
  }
  labels(...values: (string | number)[]): HistogramSeries {
    return this.bound(this.fromValues(values));
  }
  observe(labels: LabelValues<L>, value: number): void {
    this.bound(labels).observe(value);
  }

  /** As prom-client's Histogram exports: cumulative buckets with `le` first, then _sum and _count. */
  async getForPromString() {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, state } of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += state.counts[i]!;
        values.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: state.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: labels, value: state.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: labels, value: state.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  async get() {
    const exported = await this.getForPromString();
    return { ...exported, values: exported.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...labels, ...sharedLabels }, value, metricName })) };
  }
}
