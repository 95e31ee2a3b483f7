/**
 * The full run's phases beside the load scenarios: Redis reads under garbage keys, revocation
 * propagation between two replicas, login at full speed (the gateway's event-loop delay) and
 * beside proxied traffic, and the credential cache's memory per entry.
 */
import { performance } from 'node:perf_hooks';
import { Agent, metricValue, send, sendJson } from '../lib/http.js';
import { sleep, startProcess } from '../lib/proc.js';
import { percentiles } from '../lib/stats.js';
import type { RunSpec } from '../loadgen.js';
import type { Options } from '../options.js';
import { fmt, verdict, type ReportParts } from '../report/format.js';
import { benchFile, GENERATOR_CORE, UA, type Gateway } from './processes.js';
import { readsOf, SETTLE_MS, type Slice } from './rounds.js';
import type { Run } from './setup.js';

export type MemoryResult = { count: number; apiKey: { heapBytesPerCredential: number; rssBytesPerCredential: number }; jwt: { heapBytesPerCredential: number; rssBytesPerCredential: number } };

/** The credential cache module from dist/, 100 000 credentials, heap after gc (bench/memory.ts). */
export async function measureMemory(): Promise<MemoryResult> {
  // On the generator's core, which is idle while the servers start.
  const proc = startProcess('memory', process.execPath, ['--expose-gc', benchFile('memory.js'), '100000'], { core: GENERATOR_CORE, stdout: 'pipe' });
  const code = await new Promise<number | null>((resolve) => proc.child.on('exit', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`memory measurement failed:\n${proc.output()}`);
  const line = proc.output().split('\n').find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`memory measurement printed nothing:\n${proc.output()}`);
  return JSON.parse(line) as MemoryResult;
}

export async function extraPhases(options: Options, run: Run, slices: readonly Slice[], baselineRps: number, memoryMeasured: Promise<MemoryResult>, log: (text: string) => void, parts: ReportParts): Promise<void> {
  const { rows, notes, report } = parts;
  const { load, redis, apikeySpec, main: gwA } = run;
  // Redis reads under garbage keys: distinct keys (the garbage scenario), and a fixed set sent again and again.
  const garbageSlices = slices.filter((s) => s.scenario === 'garbage');
  const garbageSent = garbageSlices.reduce((n, s) => n + s.result.garbageSent, 0);
  const garbageReads = garbageSlices.reduce((n, s) => n + s.reads, 0);
  const readsPerGarbageKey = garbageReads / garbageSent;
  log('negative cache');
  const negativeKeys = 200;
  const negBefore = await readsOf(redis);
  const [negative] = await load.run({ ...apikeySpec, label: 'negative', amount: negativeKeys * 10, garbage: { every: 1, pool: negativeKeys, environment: 'production' } });
  await sleep(SETTLE_MS);
  const negativeReads = (await readsOf(redis)).hget - negBefore.hget;
  // The valid key's own entry expires with the cache TTL (60 s) and is read again: at most one
  // such read per slice, since a slice is shorter than the TTL.
  const validKeyAllowance = garbageSlices.length;
  rows.push({
    scenario: `Redis reads per distinct garbage key (${garbageReads} for ${garbageSent}, the valid key's TTL refreshes included); ${negativeKeys} keys × 10 within 5 s: ${negativeReads} reads`,
    rps: '',
    p50: '',
    p99: '',
    ratio: fmt.ratio(Math.max(readsPerGarbageKey, negativeReads / negativeKeys)),
    target: '≤ 1 per key per negative-cache period',
    result: verdict(garbageReads <= garbageSent + validKeyAllowance && negativeReads <= negativeKeys),
  });
  report['garbage'] = { sent: garbageSent, reads: garbageReads, readsPerKey: readsPerGarbageKey, negative: { keys: negativeKeys, requests: negative?.requests, reads: negativeReads } };

  // Revocation propagation: DELETE on one replica, then the first 401 on the other.
  log(`revocation propagation (${options.revocations} keys)`);
  const revocation = await measureRevocation(gwA, run.replica!, run.bearer, run.headersWith, options.revocations);
  rows.push({
    scenario: `revocation propagation to the other replica (${revocation.count} revocations, max ${fmt.ms(revocation.maxMs)} ms)`,
    rps: '',
    p50: fmt.ms(revocation.p50Ms),
    p99: fmt.ms(revocation.p99Ms),
    ratio: '',
    target: 'p99 ≤ 50 ms',
    result: verdict(revocation.count === options.revocations && revocation.p99Ms <= 50),
  });
  report['revocation'] = revocation;

  // Login: throughput with the gateway's own event-loop delay, then a burst next to proxied traffic.
  log('login');
  const eventLoop = async () => {
    const text = (await send(`${gwA.opsUrl}/metrics`)).body; // reading also starts a new window
    return {
      p99: (metricValue(text, 'nodejs_eventloop_lag_p99_seconds') ?? Number.NaN) * 1000,
      p50: (metricValue(text, 'nodejs_eventloop_lag_p50_seconds') ?? Number.NaN) * 1000,
      max: (metricValue(text, 'nodejs_eventloop_lag_max_seconds') ?? Number.NaN) * 1000,
    };
  };
  const loginSpec: Omit<RunSpec, 'label'> = {
    url: gwA.publicUrl,
    path: '/auth/login',
    method: 'POST',
    headers: { 'user-agent': UA, 'content-type': 'application/json' },
    body: JSON.stringify({ email: run.email, password: run.password }),
    connections: 8,
  };
  await sleep(500);
  await eventLoop();
  await sleep(options.quick ? 1000 : 3000);
  const idleLoop = await eventLoop();
  const [login] = await load.run({ ...loginSpec, label: 'login', durationS: options.loginS });
  const loginLoop = await eventLoop();
  const [burstLogin, burstProxied] = await load.run({ ...loginSpec, label: 'burst-login', durationS: options.burstS }, { ...apikeySpec, label: 'burst-proxied', durationS: options.burstS });
  const burstLoop = await eventLoop();
  const loginOk = login !== undefined && (login.statusCodes['200'] ?? 0) > 0 && Object.keys(login.statusCodes).every((c) => c === '200');
  const burstFlows = burstProxied !== undefined && burstProxied.perSecondMin > 0 && burstProxied.errors === 0 && burstProxied.timeouts === 0 && Object.keys(burstProxied.statusCodes).every((c) => c === '200');
  rows.push({
    scenario: `POST /auth/login at full speed (8 connections): gateway event-loop delay p99 ${fmt.ms(loginLoop.p99)} ms (idle ${fmt.ms(idleLoop.p99)} ms)`,
    rps: fmt.rps(login?.rps ?? Number.NaN),
    p50: fmt.ms(login?.p50 ?? Number.NaN),
    p99: fmt.ms(login?.p99 ?? Number.NaN),
    ratio: '',
    target: 'event-loop delay p99 ≤ 20 ms',
    result: verdict(loginOk && loginLoop.p99 <= 20),
  });
  rows.push({
    scenario: `proxied (API key) during a login burst (${fmt.rps(burstLogin?.rps ?? Number.NaN)} logins/s beside it; fewest answers in a second: ${burstProxied?.perSecondMin ?? 0})`,
    rps: fmt.rps(burstProxied?.rps ?? Number.NaN),
    p50: fmt.ms(burstProxied?.p50 ?? Number.NaN),
    p99: fmt.ms(burstProxied?.p99 ?? Number.NaN),
    ratio: fmt.ratio((burstProxied?.rps ?? Number.NaN) / baselineRps),
    target: 'keeps flowing: every second answered, no errors',
    result: verdict(burstFlows),
  });
  notes.push(`login: event-loop delay (prom-client, 10 ms sampling interval included) p50 ${fmt.ms(loginLoop.p50)} ms, p99 ${fmt.ms(loginLoop.p99)} ms, max ${fmt.ms(loginLoop.max)} ms; idle p99 ${fmt.ms(idleLoop.p99)} ms; during the burst p99 ${fmt.ms(burstLoop.p99)} ms`);
  report['login'] = { result: login, eventLoopMs: loginLoop, idleEventLoopMs: idleLoop };
  report['burst'] = { login: burstLogin, proxied: burstProxied, eventLoopMs: burstLoop };

  // Memory: measured while the servers started; the main gateway's RSS now.
  log('memory (100 000 cached credentials)');
  const memory = await memoryMeasured;
  const gatewayRss = metricValue((await send(`${gwA.opsUrl}/metrics`)).body, 'process_resident_memory_bytes') ?? Number.NaN;
  rows.push({
    scenario: `memory: heap per cached credential, 100 000 cached (API key; a JWT: ${Math.round(memory.jwt.heapBytesPerCredential)} B)`,
    rps: `${Math.round(memory.apiKey.heapBytesPerCredential)} B`,
    p50: '',
    p99: '',
    ratio: '',
    target: '≤ 1 KiB',
    result: verdict(memory.apiKey.heapBytesPerCredential <= 1024 && memory.jwt.heapBytesPerCredential <= 1024),
  });
  notes.push(`memory: RSS per cached credential ${Math.round(memory.apiKey.rssBytesPerCredential)} B (API key), ${Math.round(memory.jwt.rssBytesPerCredential)} B (JWT); RSS of the main authgate process at the end ${fmt.rps(gatewayRss / 2 ** 20)} MiB`);
  report['memory'] = { ...memory, gatewayRssBytes: gatewayRss };
}

async function measureRevocation(
  from: Gateway,
  to: Gateway,
  bearer: Record<string, string>,
  headersWith: (credential: string) => Record<string, string>,
  count: number,
): Promise<{ count: number; p50Ms: number; p99Ms: number; maxMs: number; probes: number }> {
  const keys: { id: string; apiKey: string }[] = [];
  for (let i = 0; i < count; i++) keys.push(await sendJson(`${from.publicUrl}/auth/api-key`, { headers: bearer, expect: 201 }));
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  // Each key is in the other replica's cache before it is revoked: the 401 must come from the
  // revocation message, not from a cache miss.
  for (const key of keys) {
    const warm = await send(`${to.publicUrl}/accounts`, { headers: headersWith(key.apiKey), agent: probeAgent });
    if (warm.status !== 200) throw new Error(`the replica refused a fresh key: ${warm.status}`);
  }
  const times: number[] = [];
  let probes = 0;
  for (const key of keys) {
    const deleted = await send(`${from.publicUrl}/auth/api-key/${key.id}`, { method: 'DELETE', headers: bearer });
    if (deleted.status !== 204) throw new Error(`DELETE answered ${deleted.status}`);
    const t0 = performance.now();
    for (;;) {
      probes++;
      const probe = await send(`${to.publicUrl}/accounts`, { headers: headersWith(key.apiKey), agent: probeAgent });
      if (probe.status === 401) break;
      if (probe.status !== 200) throw new Error(`the replica answered ${probe.status} while the revocation travelled`);
      if (performance.now() - t0 > 5000) throw new Error('a revocation did not reach the replica within 5 s');
    }
    times.push(performance.now() - t0);
  }
  probeAgent.destroy();
  const [p50Ms, p99Ms, maxMs] = percentiles(times, [50, 99, 100]) as [number, number, number];
  return { count: times.length, p50Ms, p99Ms, maxMs, probes };
}
