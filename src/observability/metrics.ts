import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { CacheStats } from '../store/cache.js';

/**
 * Every metric, defined once on the gateway's own Registry (never prom-client's global one, so
 * two gateways can live in one process). Labels are bounded: route templates, never raw paths;
 * reasons from a fixed list; never a secret, e-mail or organization name.
 */
export type Metrics = ReturnType<typeof createMetrics>;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(environment: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ environment });
  collectDefaultMetrics({ register: registry });

  const metrics = {
    registry,
    // Updated on every request: series counters and histograms (below), whose series are bound
    // once and then cost an addition, where prom-client's hash and validate the labels each time.
    httpRequests: new SeriesCounter({
      name: 'authgate_http_requests_total',
      help: 'Requests answered on the public port, by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      registry,
    }),
    httpDuration: new SeriesHistogram({
      name: 'authgate_http_request_duration_seconds',
      help: 'Time from request to response on the public port.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    authDecisions: new SeriesCounter({
      name: 'authgate_auth_decisions_total',
      help: 'Credential checks by credential kind, outcome and bounded reason.',
      labelNames: ['kind', 'outcome', 'reason'] as const,
      registry,
    }),
    upstreamDuration: new SeriesHistogram({
      name: 'authgate_upstream_request_duration_seconds',
      help: 'Time of forwarded requests, from the gateway to the end of the upstream answer.',
      labelNames: ['route'] as const,
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    upstreamErrors: new Counter({
      name: 'authgate_upstream_errors_total',
      help: 'Forwarded requests that got no answer from the upstream, by kind.',
      labelNames: ['route', 'kind'] as const,
      registers: [registry],
    }),
    storeUp: new Gauge({
      name: 'authgate_store_up',
      help: '1 when the credential store answers its health ping, else 0.',
      registers: [registry],
    }),
    storeErrors: new SeriesCounter({
      name: 'authgate_store_errors_total',
      help: 'Store calls that failed as unavailable, by operation.',
      labelNames: ['operation'] as const,
      registry,
    }),
    // Timed on every store call: with the cache off (or cold), on every request.
    storeDuration: new SeriesHistogram({
      name: 'authgate_store_command_duration_seconds',
      help: 'Duration of store calls, by operation.',
      labelNames: ['operation'] as const,
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    invalidationsSent: new Counter({
      name: 'authgate_invalidations_sent_total',
      help: 'Revoked credentials published to the other replicas.',
      registers: [registry],
    }),
    invalidationsReceived: new Counter({
      name: 'authgate_invalidations_received_total',
      help: 'Revocations received, by kind (credential, or all after a resubscribe).',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
  return metrics;
}

/** 1 while this replica's revocation channel is confirmed (its cache is trusted), read at scrape time. */
export function registerSubscriptionMetric(metrics: Metrics, subscribed: () => boolean): void {
  new Gauge({
    name: 'authgate_invalidation_subscribed',
    help: '1 while revocations from other replicas reach this one (subscription confirmed) and the credential cache is used; 0 while every credential is read from the store.',
    registers: [metrics.registry],
    collect() {
      this.set(subscribed() ? 1 : 0);
    },
  });
}

/** Cache numbers are read at scrape time, so a cache hit costs no metric update. */
export function registerCacheMetrics(metrics: Metrics, cache: { stats: Readonly<CacheStats>; size(): number }): void {
  const { registry } = metrics;
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter('authgate_credential_cache_hits_total', 'Credential lookups answered by the in-process cache.', () => cache.stats.hits);
  counter('authgate_credential_cache_misses_total', 'Credential lookups that went to the store.', () => cache.stats.misses);
  counter('authgate_credential_cache_evictions_total', 'Cache entries evicted to stay within AUTHGATE_CACHE_MAX.', () => cache.stats.evictions);
  new Gauge({
    name: 'authgate_credential_cache_entries',
    help: 'Credentials in the in-process cache.',
    registers: [registry],
    collect() {
      this.set(cache.size());
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Series metrics for the hot path.

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
  readonly labelNames: readonly L[];
  protected readonly series = new Map<string, { labels: LabelValues<L>; state: S; bound: unknown }>();

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly L[],
    registry: Registry,
  ) {
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

export class SeriesCounter<L extends string> extends SeriesMetric<L, { value: number }> {
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
  bound(labels: LabelValues<L>): CounterSeries {
    return this.entry(labels).bound as CounterSeries;
  }
  /** prom-client's form: label values in labelNames order. */
  labels(...values: (string | number)[]): CounterSeries {
    return this.bound(this.fromValues(values));
  }
  inc(labels: LabelValues<L>, by = 1): void {
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
