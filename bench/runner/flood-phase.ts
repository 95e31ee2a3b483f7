/**
 * Issue 45, "Memory under a flood": a gateway of its own (the build under test, production
 * settings, the Redis store on a redis-server of its own) is sent 50,000 distinct well-formed
 * unknown API keys by 50 connections (the load generator, a fresh key per request), while the
 * orchestrator sends a trickle of valid requests beside them, one every 20 ms. Rows: the growth of
 * the gateway's RSS (/proc VmRSS, its peak during the flood over the value before, sampled every
 * 100 ms) and the trickle's p99. `--only flood` runs it alone; the full run runs it after the other
 * phases. Figures in the JSON under `flood`.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Agent, send, sendJson } from '../lib/http.js';
import { rssKiB, sleep } from '../lib/proc.js';
import { startBenchRedis } from '../lib/redis.js';
import { percentiles } from '../lib/stats.js';
import type { Options } from '../options.js';
import { fmt, verdict, type ReportParts } from '../report/format.js';
import { benchFile, keepTemporary, LoadGenerator, makeIdentityKey, SERVER_CORE, startGateway, startNodeChild, UA } from './processes.js';
import { BENCH_TENANT_LIMITS } from './tenant-limits.js';

export const FLOOD_TARGETS = { keys: 50_000, connections: 50, rssGrowthMiB: 150, trickleP99Ms: 500, trickleEveryMs: 20 };

export type FloodResult = {
  keys: number;
  seconds: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssAfterMiB: number;
  growthMiB: number;
  statusCodes: Record<string, number>;
  errors: number;
  trickle: { requests: number; refused: number; p50Ms: number; p99Ms: number; maxMs: number };
};

export async function floodPhase(options: Options, redisBinary: string, log: (text: string) => void, parts: ReportParts): Promise<void> {
  const { rows, notes, report } = parts;
  const t = FLOOD_TARGETS;
  log(`flood: ${t.keys.toLocaleString('en-US')} distinct unknown API keys, ${t.connections} connections, a valid request every ${t.trickleEveryMs} ms beside them`);
  const redis = await startBenchRedis(redisBinary, SERVER_CORE);
  keepTemporary(redis.dir);
  const upstream = await startNodeChild('flood-upstream', benchFile('upstream.js'), [], SERVER_CORE);
  const adminToken = randomBytes(24).toString('base64url');
  const gateway = await startGateway('authgate-flood', options.gatewayMain, {
    AUTHGATE_JWT_SECRET: randomBytes(48).toString('base64url'),
    AUTHGATE_ADMIN_TOKEN: adminToken,
    AUTHGATE_UPSTREAM_URL: `http://127.0.0.1:${upstream.port}`,
    AUTHGATE_REDIS_URL: redis.url,
    AUTHGATE_IDENTITY_KEY_FILE: makeIdentityKey().file,
    ...BENCH_TENANT_LIMITS,
    ...options.env,
  });
  const email = `flood-${randomBytes(4).toString('hex')}@bench.test`;
  const password = randomBytes(18).toString('base64url');
  await sendJson(`${gateway.opsUrl}/admin/organizations`, { headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'Flood', email, password }, expect: 201 });
  const { token } = await sendJson(`${gateway.publicUrl}/auth/login`, { body: { email, password }, expect: 200 });
  const { apiKey } = await sendJson(`${gateway.publicUrl}/auth/api-key`, { headers: { authorization: `Bearer ${token}` }, expect: 201 });
  const headers = { 'user-agent': UA, authorization: `Bearer ${apiKey}` };
  const load = await LoadGenerator.start();
  const spec = { url: gateway.publicUrl, path: '/accounts', method: 'GET', headers, connections: t.connections };

  // Warm: the code paths compiled and the pools made (200 unknown keys among 2,000 requests, so the
  // heap is not grown by garbage before it is measured); then quiet.
  await load.run({ ...spec, label: 'flood warm-up', amount: 2000, garbage: { every: 10, environment: 'production' } });
  await sleep(3000);
  const before = rssKiB(gateway.proc.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(gateway.proc.pid))), 100);

  let flooding = true;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let refused = 0;
  const trickle = (async () => {
    while (flooding) {
      const started = performance.now();
      const answer = await send(`${gateway.publicUrl}/accounts`, { headers, agent });
      latencies.push(performance.now() - started);
      if (answer.status !== 200) refused++;
      await sleep(t.trickleEveryMs);
    }
  })();
  const startedAt = performance.now();
  const [flood] = await load.run({ ...spec, label: 'flood', amount: t.keys, garbage: { every: 1, environment: 'production' } });
  const seconds = (performance.now() - startedAt) / 1000;
  flooding = false;
  await trickle;
  clearInterval(sampler);
  peak = Math.max(peak, rssKiB(gateway.proc.pid));
  const after = rssKiB(gateway.proc.pid);
  agent.destroy();

  const [p50Ms, p99Ms, maxMs] = percentiles(latencies, [50, 99, 100]) as [number, number, number];
  const mib = (kib: number) => kib / 1024;
  const result: FloodResult = {
    keys: flood?.garbageSent ?? 0,
    seconds,
    rssBeforeMiB: mib(before),
    rssPeakMiB: mib(peak),
    rssAfterMiB: mib(after),
    growthMiB: mib(peak - before),
    statusCodes: flood?.statusCodes ?? {},
    errors: (flood?.errors ?? 0) + (flood?.timeouts ?? 0),
    trickle: { requests: latencies.length, refused, p50Ms, p99Ms, maxMs },
  };
  const allRefused = (result.statusCodes['401'] ?? 0) === t.keys && result.errors === 0;
  rows.push({
    scenario: `flood: ${t.keys.toLocaleString('en-US')} distinct unknown API keys (${t.connections} connections, ${fmt.rps(t.keys / seconds)}/s): RSS growth of the gateway, peak over before (${fmt.rps(result.rssBeforeMiB)} → ${fmt.rps(result.rssPeakMiB)} MiB)`,
    rps: `${fmt.rps(result.growthMiB)} MiB`,
    p50: '',
    p99: '',
    ratio: '',
    target: `≤ ${t.rssGrowthMiB} MiB, every key 401`,
    result: verdict(allRefused && result.growthMiB <= t.rssGrowthMiB),
  });
  rows.push({
    scenario: `flood: valid API-key requests beside it, one every ${t.trickleEveryMs} ms (${result.trickle.requests}; max ${fmt.ms(maxMs)} ms)`,
    rps: '',
    p50: fmt.ms(p50Ms),
    p99: fmt.ms(p99Ms),
    ratio: '',
    target: `p99 < ${t.trickleP99Ms} ms, every one 200`,
    result: verdict(refused === 0 && result.trickle.requests > 0 && p99Ms < t.trickleP99Ms),
  });
  notes.push(`flood: RSS ${fmt.rps(result.rssBeforeMiB)} MiB before, ${fmt.rps(result.rssPeakMiB)} MiB at its peak, ${fmt.rps(result.rssAfterMiB)} MiB when it ended; answers ${JSON.stringify(result.statusCodes)}, ${result.errors} errors; ${seconds.toFixed(1)} s`);
  report['flood'] = result;
  // Its gateway, Redis, upstream and generator are stopped by pid with every other process at the end.
}
