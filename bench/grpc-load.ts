/**
 * The gRPC load of issue 30's ext_authz scenario, run inside the load generator (bench/loadgen.ts)
 * for a spec with protocol 'ext_authz_grpc': `connections` calls in flight at all times, each an
 * Envoy-shaped CheckRequest (method, path, lower-case header map with pseudo-headers, source
 * peer) to /envoy.service.auth.v3.Authorization/Check, over a few HTTP/2 connections as Envoy's
 * workers hold them. Serialization is the gateway's own (the vendored protos through its
 * dist/edge-authz/grpc/server.js), so the bench measures the server, not a second encoder.
 * An answer counts as its HTTP status: 200 for status.code 0, else denied_response.status.code.
 */
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import type * as GrpcServer from '../src/edge-authz/grpc/server.js';
import { percentileSorted } from './lib/stats.js';
import type { RunResult, RunSpec } from './loadgen.js';

const server: typeof GrpcServer = await import(new URL('../../dist/edge-authz/grpc/server.js', import.meta.url).href);

/** Envoy opens one connection per worker thread; 2 here, like a 2-worker Envoy. */
const CONNECTIONS = 2;

type Answer = { status?: { code?: number }; denied_response?: { status?: { code?: number | string } } };

export async function runGrpc(spec: RunSpec): Promise<RunResult> {
  const check = server.authorizationService()['Check'];
  if (check === undefined) throw new Error('no Check in the service definition');
  const headers: Record<string, string> = { ':authority': 'api.example.com', ':method': spec.method ?? 'GET', ':path': spec.path, ':scheme': 'https', 'x-forwarded-proto': 'https' };
  for (const [name, value] of Object.entries(spec.headers)) headers[name.toLowerCase()] = value;
  const request = check.requestSerialize({
    attributes: {
      source: { address: { socket_address: { address: '198.51.100.20', port_value: 40000 } } },
      request: { http: { id: 'bench', method: spec.method ?? 'GET', path: spec.path, host: 'api.example.com', scheme: 'https', protocol: 'HTTP/1.1', headers } },
    },
  });
  const clients = Array.from({ length: CONNECTIONS }, () => new Client(spec.url, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }));
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const perSecond: number[] = [];
  let errors = 0;
  const startedAt = performance.now();
  const endAt = spec.amount === undefined ? startedAt + (spec.durationS ?? 2) * 1000 : Number.POSITIVE_INFINITY;
  let remaining = spec.amount ?? Number.POSITIVE_INFINITY;

  const call = (client: Client): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      client.makeUnaryRequest<Buffer, Answer>(check.path, (value) => value, (bytes) => check.responseDeserialize(bytes) as Answer, request, new Metadata(), { deadline: Date.now() + 10_000 }, (error, answer) => {
        const now = performance.now();
        if (error !== null || answer === undefined) errors++;
        else {
          const code = (answer.status?.code ?? 0) === 0 ? '200' : String(answer.denied_response?.status?.code ?? 403);
          statusCodes[code] = (statusCodes[code] ?? 0) + 1;
          latencies.push(now - sent);
          const second = Math.floor((now - startedAt) / 1000);
          perSecond[second] = (perSecond[second] ?? 0) + 1;
        }
        resolve();
      });
    });
  const worker = async (index: number): Promise<void> => {
    const client = clients[index % CONNECTIONS]!;
    while (performance.now() < endAt && remaining > 0) {
      remaining--;
      await call(client);
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, (_, i) => worker(i)));
  const durationS = (performance.now() - startedAt) / 1000;
  for (const client of clients) client.close();
  const sorted = Float64Array.from(latencies).sort();
  // Whole seconds only: the last, partial one would understate the minimum.
  const whole = perSecond.slice(0, Math.floor(durationS));
  return {
    label: spec.label,
    requests: latencies.length,
    durationS,
    rps: latencies.length / durationS,
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p99: percentileSorted(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
    statusCodes,
    errors,
    timeouts: 0,
    garbageSent: 0,
    perSecondMin: whole.length === 0 ? latencies.length : Math.min(...Array.from(whole, (n) => n ?? 0)),
  };
}
