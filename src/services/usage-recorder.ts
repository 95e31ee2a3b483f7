/**
 * Usage figures (issue 47) without a store write per request: each replica counts the outcome of
 * every request on a forwarded route in memory (one Map lookup and an increment), by credential
 * and UTC hour, and writes what it counted once a second in one batch (UsageStore.recordUsage):
 * at most one write per replica per second per active key, whatever the traffic. A batch that
 * fails is merged back for the next flush; what is pending is bounded (USAGE_PENDING_MAX
 * credential-hours), and what would go past the bound is dropped and counted, never kept.
 */
import type { Principal } from '../credentials/principal.js';
import type { Logger } from '../observability/logging.js';
import type { Problem } from '../problems.js';
import { hourOf, USAGE_OUTCOMES, type UsageOutcome, type UsageStore } from '../store/usage.js';

/** How often a replica writes what it counted. */
export const USAGE_FLUSH_MS = 1000;
/** The most credential-hours a replica keeps unwritten. */
export const USAGE_PENDING_MAX = 100_000;

/** Counts one request's outcome for its principal: the hot path. */
export type UsageNote = (principal: Principal, outcome: UsageOutcome) => void;

export type UsageRecorder = Readonly<{
  note: UsageNote;
  /** Writes what is counted now (the timer calls this; close() does a last time). */
  flush(): Promise<void>;
  /** Stops the timer and flushes once more. */
  close(): Promise<void>;
}>;

const INDEX: Readonly<Record<UsageOutcome, number>> = Object.fromEntries(USAGE_OUTCOMES.map((outcome, i) => [outcome, i])) as Record<UsageOutcome, number>;

/** The usage outcome of a refusal on a forwarded route; undefined for one that is no usage (a store outage, a bug). */
export function usageOutcomeOf(problem: Problem): UsageOutcome | undefined {
  switch (problem.problem) {
    case 'loginTokenRequired':
      return 'credential';
    case 'insufficientScope':
      return 'scope';
    case 'rateLimited':
      return 'rate_limit';
    case 'quotaExceeded':
      return 'quota';
    default:
      return undefined;
  }
}

type Pending = { readonly orgId: string; readonly keyId: string | null; readonly hour: number; readonly counts: number[] };

export function createUsageRecorder(deps: {
  store: Pick<UsageStore, 'recordUsage'>;
  now: () => number;
  logger: Pick<Logger, 'warn'>;
  flushIntervalMs?: number;
  maxPending?: number;
  /** Requests dropped because the pending counts were full. */
  onDropped?: (requests: number) => void;
}): UsageRecorder {
  const { store, now, logger } = deps;
  const maxPending = deps.maxPending ?? USAGE_PENDING_MAX;
  /** By API key id, or by organization id for login tokens (counted in the organization's figures only). */
  let byKey = new Map<string, Pending>();
  let byOrg = new Map<string, Pending>();
  /** Counts of an hour that ended before they were written. */
  let ended: Pending[] = [];
  let flushing: Promise<void> | undefined;

  const size = () => byKey.size + byOrg.size + ended.length;

  function note(principal: Principal, outcome: UsageOutcome): void {
    const apiKey = principal.via === 'api_key';
    const map = apiKey ? byKey : byOrg;
    const id = apiKey ? principal.credentialId : principal.orgId;
    const hour = hourOf(now());
    let pending = map.get(id);
    if (pending !== undefined && pending.hour !== hour) {
      ended.push(pending);
      pending = undefined;
    }
    if (pending === undefined) {
      if (size() >= maxPending) return deps.onDropped?.(1);
      pending = { orgId: principal.orgId, keyId: apiKey ? id : null, hour, counts: [0, 0, 0, 0, 0] };
      map.set(id, pending);
    }
    pending.counts[INDEX[outcome]]!++;
  }

  async function write(): Promise<void> {
    if (size() === 0) return;
    const batch: Pending[] = [...ended, ...byKey.values(), ...byOrg.values()];
    byKey = new Map();
    byOrg = new Map();
    ended = [];
    try {
      await store.recordUsage(batch);
    } catch (error) {
      // Kept for the next flush as counts of their own (their hour may have ended), within the bound.
      const room = Math.max(0, maxPending - size());
      const kept = batch.slice(0, room);
      ended.push(...kept);
      const lost = batch.slice(room).reduce((sum, pending) => sum + pending.counts.reduce((a, b) => a + b, 0), 0);
      if (lost > 0) deps.onDropped?.(lost);
      logger.warn({ event: 'usage_flush_failed', entries: batch.length, error: (error as Error).message }, 'usage counts not written; kept for the next flush');
    }
  }

  const flush = () => (flushing ??= write().finally(() => (flushing = undefined)));
  const timer = setInterval(() => void flush(), deps.flushIntervalMs ?? USAGE_FLUSH_MS);
  timer.unref();

  return {
    note,
    flush,
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
