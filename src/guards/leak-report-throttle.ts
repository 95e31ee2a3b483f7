import { Problem } from '../problems.js';
import type { CounterStore } from '../store/store.js';

/**
 * The leak-report limit: reports per client address (what throttleAddress() makes of it, IPv6
 * per /64) in a fixed window, counted in the store so that every replica shares it. One atomic
 * step checks and counts (CounterStore.countAttempt), so a parallel burst on any number of
 * replicas gets exactly `perAddress` through per window; a refused report counts nothing. The
 * numbers are LEAK_REPORTS' (routes/leaked-keys.ts).
 */
export type LeakReportLimits = Readonly<{ perAddress: number; windowSeconds: number }>;

export type LeakReportThrottle = Readonly<{
  /** Counts the report, or throws a 429 problem (tooManyLeakReports, with Retry-After). */
  admit(address: string): Promise<void>;
}>;

export function createLeakReportThrottle(counters: CounterStore, limits: LeakReportLimits): LeakReportThrottle {
  const windowMs = limits.windowSeconds * 1000;
  return {
    async admit(address) {
      // The braces place the counter (store.ts, LimitedCounter): by the address, on one shard.
      const verdict = await counters.countAttempt({ counters: [{ name: `leak-report:{${address}}`, limit: limits.perAddress }], windowMs });
      if (!verdict.allowed) {
        const seconds = Math.max(1, Math.ceil(verdict.retryInMs / 1000));
        throw new Problem('tooManyLeakReports', `Too many leak reports from this address; try again in ${seconds} seconds.`, 'leak_report_throttled', seconds);
      }
    },
  };
}
