/**
 * The load generator: a child process (pinned to its own core by the orchestrator) that runs
 * autocannon's programmatic API on request over IPC. Latencies are recorded from autocannon's
 * 'response' events at microsecond resolution (its own histogram keeps whole milliseconds).
 * A spec with protocol 'ext_authz_grpc' is run by the gRPC client of bench/grpc-load.ts instead.
 */
import { randomBytes } from 'node:crypto';
import autocannon, { type Request, type Result } from 'autocannon';
import type * as ApiKeys from '../src/credentials/api-keys.js';
import type * as ShardTag from '../src/store/shard-tag.js';

export type RunSpec = Readonly<{
  label: string;
  /** Origin, e.g. http://127.0.0.1:1234 */
  url: string;
  path: string;
  method?: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationS?: number;
  amount?: number;
  /** 'ext_authz_grpc': `url` is a gRPC target (host:port) and each request one Envoy-shaped Check (bench/grpc-load.ts). */
  protocol?: 'http' | 'ext_authz_grpc';
  /** Every `every`-th request carries a valid-checksum unknown API key: fresh each time, or from a fixed pool. */
  garbage?: Readonly<{ every: number; pool?: number; environment: 'production' | 'sandbox' }>;
}>;

export type RunResult = {
  label: string;
  requests: number;
  durationS: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  garbageSent: number;
  /** Fewest answers in any one-second sample of the run (0: a second without any). */
  perSecondMin: number;
};

type Message = { id: number; runs: RunSpec[] };

const apiKeys: typeof ApiKeys = await import(new URL('../../dist/credentials/api-keys.js', import.meta.url).href);
const shardTags: typeof ShardTag = await import(new URL('../../dist/store/shard-tag.js', import.meta.url).href);

/**
 * A garbage key: the format and checksum of a real one, for no organization. Its shard tag is
 * that of a made-up organization id, so garbage spreads over tags as an attacker's would.
 */
const garbageKey = (environment: 'production' | 'sandbox') =>
  apiKeys.generateApiKey(environment, shardTags.shardTagOf(`org_${randomBytes(16).toString('hex')}`)).secret;

class Samples {
  private values = new Float64Array(1 << 16);
  private length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.length++] = value;
  }
  sorted(): Float64Array {
    return this.values.slice(0, this.length).sort();
  }
}

function at(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function run(spec: RunSpec): Promise<RunResult> {
  const base: Request = { method: spec.method ?? 'GET', path: spec.path, headers: spec.headers, ...(spec.body === undefined ? {} : { body: spec.body }) };
  let garbageSent = 0;
  let requests: Request[] = [base];
  const garbage = spec.garbage;
  if (garbage !== undefined) {
    const pool = garbage.pool === undefined ? undefined : Array.from({ length: garbage.pool }, () => garbageKey(garbage.environment));
    let next = 0;
    const garbageRequest: Request = {
      ...base,
      setupRequest: (request) => {
        garbageSent++;
        const key = pool === undefined ? garbageKey(garbage.environment) : pool[next++ % pool.length]!;
        request.headers = { ...request.headers, authorization: `Bearer ${key}` };
        return request;
      },
    };
    requests = [...Array.from({ length: garbage.every - 1 }, () => base), garbageRequest];
  }
  const latencies = new Samples();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        timeout: 10,
        requests,
        ...(spec.amount === undefined ? { duration: spec.durationS ?? 2 } : { amount: spec.amount }),
      },
      (error: Error | null, result: Result) => {
        if (error !== null) return reject(error);
        const sorted = latencies.sorted();
        const statusCodes: Record<string, number> = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
        const answered = sorted.length;
        resolve({
          label: spec.label,
          requests: answered,
          durationS: result.duration,
          rps: answered / result.duration,
          p50: at(sorted, 50),
          p90: at(sorted, 90),
          p99: at(sorted, 99),
          max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
          statusCodes,
          errors: result.errors,
          timeouts: result.timeouts,
          garbageSent,
          perSecondMin: result.requests.min,
        });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => latencies.push(responseTime));
  });
}

const runAny = async (spec: RunSpec): Promise<RunResult> => (spec.protocol === 'ext_authz_grpc' ? (await import('./grpc-load.js')).runGrpc(spec) : run(spec));

process.on('message', (message: Message) => {
  Promise.all(message.runs.map(runAny)).then(
    (results) => process.send?.({ id: message.id, results }),
    (error: unknown) => process.send?.({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
