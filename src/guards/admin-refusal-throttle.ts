import { Problem } from '../problems.js';
import type { CounterStore } from '../store/store.js';

/**
 * The limit on guessing the admin token: refused admin requests per client address (what
 * throttleAddress() makes of it, IPv6 per /64) in a fixed window, counted in the store so that
 * every replica shares it.
 *
 * Every admin request counts one BEFORE its token is judged, in the one atomic step that also
 * answers whether it may go on (CounterStore.countAttempt), and an accepted one gives its count
 * back. So a window judges at most `perAddress` wrong tokens per address however requests
 * interleave, on any number of replicas, while an operator's requests, however many, never add
 * up. Once the limit is reached every admin request from the address gets 429, the right token
 * too: were the right one still let through, the limit would not stop the guessing, only hide
 * its answer. The cost: at most `perAddress` admin requests from one address can be waiting for
 * their judgement at once.
 */
export type AdminRefusalLimits = Readonly<{ perAddress: number; windowSeconds: number }>;

export const ADMIN_REFUSALS: AdminRefusalLimits = { perAddress: 20, windowSeconds: 15 * 60 };

export type AdminAttempt = Readonly<{
  /** This attempt took the last one the window admits: the next is refused. */
  exhausted: boolean;
  /** The token was right: the count goes back. */
  accepted(): Promise<void>;
}>;

export type AdminRefusalThrottle = Readonly<{
  /** Counts the attempt, or throws a 429 problem (tooManyAdminRefusals, with Retry-After). */
  attempt(address: string): Promise<AdminAttempt>;
}>;

export function createAdminRefusalThrottle(counters: CounterStore, limits: AdminRefusalLimits = ADMIN_REFUSALS): AdminRefusalThrottle {
  const windowMs = limits.windowSeconds * 1000;
  return {
    async attempt(address) {
      // The braces place the counter (store.ts, LimitedCounter): by the address, on one shard.
      const name = `admin-refusals:{${address}}`;
      const verdict = await counters.countAttempt({ counters: [{ name, limit: limits.perAddress }], windowMs });
      if (!verdict.allowed) {
        const seconds = Math.max(1, Math.ceil(verdict.retryInMs / 1000));
        throw new Problem('tooManyAdminRefusals', `Too many refused admin requests from this address; try again in ${seconds} seconds.`, 'admin_throttled', seconds);
      }
      return { exhausted: verdict.exhausted, accepted: () => counters.settleAttempt({ giveBack: verdict.counted }) };
    },
  };
}
