import { createHash } from 'node:crypto';
import { Problem } from '../problems.js';
import type { CounterStore } from '../store/store.js';

/**
 * Failed-login limits, counted in the store so that every replica shares them.
 *
 * The scheme: a failure counts against (e-mail, client address), the client address, and the
 * e-mail. The strict limit is on the pair, so an attacker hammering one organization from one
 * address locks out only that address for that e-mail, never the real owner logging in from
 * elsewhere. The per-address limit stops one address spraying many e-mails; the per-e-mail limit
 * (higher than the pair's, so one address can never reach it alone) slows a distributed attack
 * on one organization. Windows are fixed and short, so nothing is locked forever. A successful
 * login resets the e-mail's counters.
 */
export type ThrottleLimits = Readonly<{ perPair: number; perAddress: number; perEmail: number; windowSeconds: number }>;

export const DEFAULT_LIMITS: ThrottleLimits = { perPair: 10, perAddress: 100, perEmail: 50, windowSeconds: 15 * 60 };

export type LoginThrottle = Readonly<{
  /** Throws a 429 problem when any limit is reached. */
  check(email: string, address: string): Promise<void>;
  recordFailure(email: string, address: string): Promise<{ limited: boolean }>;
  recordSuccess(email: string, address: string): Promise<void>;
}>;

export function createLoginThrottle(counters: CounterStore, limits: ThrottleLimits = DEFAULT_LIMITS): LoginThrottle {
  const windowMs = limits.windowSeconds * 1000;
  const emailTag = (email: string) => createHash('sha256').update(email).digest('base64url').slice(0, 22);
  const keysOf = (email: string, address: string) => {
    const e = emailTag(email);
    return [`login:pair:${e}:${address}`, `login:addr:${address}`, `login:email:${e}`];
  };
  const maxima = [limits.perPair, limits.perAddress, limits.perEmail];
  const overLimit = (states: readonly { count: number; resetInMs: number }[]) => {
    let retryInMs = 0;
    states.forEach((state, i) => {
      if (state.count >= maxima[i]!) retryInMs = Math.max(retryInMs, state.resetInMs);
    });
    return retryInMs;
  };

  return {
    async check(email, address) {
      const retryInMs = overLimit(await counters.readCounters(keysOf(email, address)));
      if (retryInMs > 0) throw tooMany(retryInMs);
    },
    async recordFailure(email, address) {
      return { limited: overLimit(await counters.incrementCounters(keysOf(email, address), windowMs)) > 0 };
    },
    async recordSuccess(email, address) {
      const [pair, , perEmail] = keysOf(email, address);
      await counters.resetCounters([pair!, perEmail!]);
    },
  };
}

function tooMany(retryInMs: number): Problem {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  return new Problem('tooManyLoginAttempts', `Too many failed logins; try again in ${seconds} seconds.`, 'login_throttled', seconds);
}
