import { Problem } from '../problems.js';
import type { CounterStore } from '../store/store.js';

/**
 * The password-reset limit (POST /auth/password/reset, issue 31): attempts per client address
 * (what throttleAddress() makes of it, IPv6 per /64) in a fixed window, counted in the store so
 * every replica shares it, as the leak-report limit is. Each attempt is counted before its token
 * is looked at, in one atomic step (CounterStore.countAttempt), so a parallel burst on any number
 * of replicas gets at most `perAddress` guesses through per window; a reset that succeeds gives
 * its count back, so only wrong, used or expired tokens use the limit up. A refused attempt
 * counts nothing. Guessing is hopeless anyway (128 random bits): the limit keeps the tries cheap.
 */
export type ResetLimits = Readonly<{ perAddress: number; windowSeconds: number }>;

export const RESET_LIMITS: ResetLimits = { perAddress: 10, windowSeconds: 15 * 60 };

export type ResetAttempt = Readonly<{ succeeded(): Promise<void> }>;

export type ResetThrottle = Readonly<{
  /** Counts the attempt, or throws a 429 problem (tooManyResetAttempts, with Retry-After). */
  attempt(address: string): Promise<ResetAttempt>;
}>;

export function createResetThrottle(counters: CounterStore, limits: ResetLimits = RESET_LIMITS): ResetThrottle {
  const windowMs = limits.windowSeconds * 1000;
  return {
    async attempt(address) {
      // The braces place the counter (store.ts, LimitedCounter): by the address, on one shard.
      const verdict = await counters.countAttempt({ counters: [{ name: `reset:{${address}}`, limit: limits.perAddress }], windowMs });
      if (!verdict.allowed) {
        const seconds = Math.max(1, Math.ceil(verdict.retryInMs / 1000));
        throw new Problem('tooManyResetAttempts', `Too many password-reset attempts from this address; try again in ${seconds} seconds.`, 'reset_throttled', seconds);
      }
      return {
        succeeded: async () => {
          try {
            await counters.settleAttempt({ giveBack: verdict.counted });
          } catch {
            // The store is failing: the attempt stays counted, which errs on the safe side.
          }
        },
      };
    },
  };
}
