/**
 * The scale phase (bench/scale.ts): Redis memory per stored API key and per live session, from the
 * real Redis store on a redis-server of its own, and API-key lookups (cache off, at the store) with
 * 1,000 vs the most keys stored. Rows beside the others, figures in the JSON under `scale`.
 */
import { hasTaskset } from '../lib/proc.js';
import { median } from '../lib/stats.js';
import type { Options } from '../options.js';
import { fmt, verdict, type ReportParts } from '../report/format.js';
import type { ScaleResult } from '../scale.js';
import { SERVER_CORE } from './processes.js';

const SCALE_TARGETS = { apiKeyBytes: 300, sessionBytes: 250, lookupRatio: 0.9 };

export async function scalePhase(options: Options, redisBinary: string, log: (text: string) => void, parts: ReportParts): Promise<void> {
  const { rows, notes, report } = parts;
  const { measureScale } = await import('../scale.js');
  const max = options.scaleMax;
  const first = Math.min(100_000, max);
  const perOrganization = 10;
  log(`scale: Redis memory per credential up to ${max.toLocaleString('en-US')}, and lookups at 1,000 vs ${max.toLocaleString('en-US')} keys`);
  const scale: ScaleResult = await measureScale({
    redisBinary,
    core: hasTaskset ? SERVER_CORE : undefined,
    sizes: max > first ? [first, max] : [max],
    onePerOrganizationCount: first,
    perOrganization,
    concurrency: 200,
    lookupsInFlight: 64,
    lookupSmallCount: Math.min(1000, max),
    lookupRounds: options.quick ? 7 : 15,
    lookupSliceS: options.quick ? 0.5 : 1,
    log,
  });
  const count = (n: number) => n.toLocaleString('en-US');
  const bytes = (n: number) => `${Math.round(n)} B`;
  const ordered = [
    ...scale.memory.filter((f) => f.kind === 'api_key' && f.perOrganization !== 1).sort((a, b) => a.count - b.count),
    ...scale.memory.filter((f) => f.kind === 'api_key' && f.perOrganization === 1),
    ...scale.memory.filter((f) => f.kind === 'session').sort((a, b) => a.count - b.count),
  ];
  for (const f of ordered) {
    const limit = f.kind === 'api_key' ? SCALE_TARGETS.apiKeyBytes : SCALE_TARGETS.sessionBytes;
    const what =
      f.kind === 'api_key'
        ? f.perOrganization === 1
          ? `Redis memory per stored API key, ${count(f.count)} keys at 1 per organization (each per-tag hash shared by few keys)`
          : `Redis memory per stored API key, ${count(f.count)} keys, ${f.perOrganization} per organization`
        : `Redis memory per live session (1-hour expiry), ${count(f.count)} sessions, ${f.perOrganization} per organization`;
    rows.push({ scenario: what, rps: bytes(f.bytesPerItem), p50: '', p99: '', ratio: '', target: `≤ ${limit} B`, result: verdict(f.bytesPerItem <= limit) });
  }
  const l = scale.lookups;
  rows.push({
    scenario:
      `API-key lookups/s, cache off, at the store (findApiKeyByHash, ${l.inFlight} in flight, random stored keys): ${count(l.large.stored)} keys stored vs ${count(l.small.stored)} ` +
      `(${fmt.rps(l.small.lookupsPerSecond)}/s); Redis CPU per lookup ${fmt.ms(l.large.redisCpuUsPerLookup)} vs ${fmt.ms(l.small.redisCpuUsPerLookup)} µs`,
    rps: fmt.rps(l.large.lookupsPerSecond),
    p50: '',
    p99: '',
    ratio: fmt.ratio(l.ratio),
    target: `flat: ≥ ${SCALE_TARGETS.lookupRatio.toFixed(2)}`,
    result: verdict(l.ratio >= SCALE_TARGETS.lookupRatio && l.misses === 0),
  });
  notes.push(
    `scale: Redis memory is (used_memory after the credentials − after their organizations) / count, from INFO memory; ` +
      `an organization's own record and e-mail claim, not counted in it: ${bytes(median(scale.memory.map((f) => f.bytesPerOrganization)))}; ` +
      `created through the store, 200 calls in flight: ${ordered.map((f) => `${count(f.count)} ${f.kind === 'api_key' ? `keys (${f.perOrganization}/org)` : 'sessions'} ${fmt.rps(f.createdPerSecond)}/s`).join(', ')}; ` +
      `lookups/s ratio is the median of ${l.slices.length / 2} same-round ratios; scale phase ${scale.seconds.toFixed(0)} s`,
  );
  if (l.misses > 0) notes.push(`WARNING: scale: ${l.misses} lookups of stored keys found nothing`);
  report['scale'] = scale;
}
