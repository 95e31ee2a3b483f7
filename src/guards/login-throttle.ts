import { sha256Base64url } from '../credentials/digest.js';
import { Problem } from '../problems.js';
import type { CounterStore, LimitedCounter } from '../store/store.js';

/**
 * Login limits, counted in the store so that every replica shares them.
 *
 * Every attempt counts against (e-mail, client address), the client address, and the e-mail,
 * BEFORE its password is judged, in one atomic store step that also answers whether it may go
 * on (CounterStore.countAttempt). Counting after argon2 had judged let every request of a
 * parallel burst pass a read-only check; now a window judges at most `perPair` passwords for a
 * pair, however the requests interleave, on any number of replicas. A refused attempt counts
 * nothing, so hammering a closed window does not keep it closed.
 *
 * The strict limit is on the pair, so an attacker hammering one organization from one address
 * locks out only that address for that e-mail. The per-address limit stops one address spraying
 * many e-mails. The per-e-mail limit (higher than the pair's, so one address never reaches it
 * alone) slows a distributed attack on one organization; so that such an attack cannot lock the
 * owner out, an address this e-mail logged in from successfully in the last 30 days (a "known"
 * address, at most 10 kept per e-mail) is neither checked nor counted against the e-mail limit:
 * it is bounded by its pair limit (and its address limit) only. Windows are fixed and short.
 *
 * Settling: a success resets the pair and the e-mail counters (as before: the owner is in, and
 * the attempts before were theirs), gives back its count on the address (so many people behind
 * one NAT logging in correctly do not use up its limit) and remembers the address as known. A
 * failure stays counted. An attempt whose password was never judged (the argon2 queue was full)
 * gives its counts back.
 *
 * Addresses are what throttleAddress() makes of the client's: IPv6 per /64.
 */
export type ThrottleLimits = Readonly<{ perPair: number; perAddress: number; perEmail: number; windowSeconds: number }>;

export const DEFAULT_LIMITS: ThrottleLimits = { perPair: 10, perAddress: 100, perEmail: 50, windowSeconds: 15 * 60 };

/** How long, and how many, addresses a successful login is remembered by per e-mail. */
export const KNOWN_ADDRESS_TTL_MS = 30 * 24 * 3600 * 1000;
export const KNOWN_ADDRESSES_MAX = 10;

/** An attempt the limits allowed; say how it ended. */
export type LoginAttempt = Readonly<{
  /** The address had logged this e-mail in before, so the e-mail limit did not apply. */
  known: boolean;
  /** This attempt used the last one a limit admits in its window. */
  exhausted: boolean;
  succeeded(): Promise<void>;
  /** The password was never judged: the counts go back. Best effort; never throws. */
  notJudged(): Promise<void>;
}>;

export type LoginThrottle = Readonly<{
  /** Counts the attempt, or throws a 429 problem (counting nothing) when a limit is reached. */
  attempt(email: string, address: string): Promise<LoginAttempt>;
}>;

export function createLoginThrottle(counters: CounterStore, limits: ThrottleLimits = DEFAULT_LIMITS): LoginThrottle {
  const windowMs = limits.windowSeconds * 1000;
  // The e-mail goes into key names hashed: Redis keys are listed by operators, e-mails are personal.
  // The tag names counters that outlive a deploy in Redis: its form (22 characters of the
  // base64url SHA-256) never changes.
  const emailTag = (email: string) => sha256Base64url(email).slice(0, 22);

  return {
    async attempt(email, address) {
      const e = emailTag(email);
      // The braces place the counters (store.ts, LimitedCounter): the e-mail's together, so the
      // pair, e-mail and known-address checks are one atomic step; the address's on its own.
      const pair = `login:pair:{${e}}:${address}`;
      const perAddress = `login:addr:{${address}}`;
      const perEmail = `login:email:{${e}}`;
      const known = `login:{${e}}`;
      const limited: LimitedCounter[] = [
        { name: pair, limit: limits.perPair },
        { name: perAddress, limit: limits.perAddress },
        { name: perEmail, limit: limits.perEmail, exemptWhenKnown: true },
      ];
      const verdict = await counters.countAttempt({
        counters: limited,
        windowMs,
        known: { set: known, member: address, knownTtlMs: KNOWN_ADDRESS_TTL_MS },
      });
      if (!verdict.allowed) throw tooMany(verdict.retryInMs);
      return {
        known: verdict.known,
        exhausted: verdict.exhausted,
        succeeded: () =>
          counters.settleAttempt({
            reset: [pair, perEmail],
            giveBack: [perAddress],
            remember: { set: known, member: address, ttlMs: KNOWN_ADDRESS_TTL_MS, max: KNOWN_ADDRESSES_MAX },
          }),
        notJudged: async () => {
          try {
            await counters.settleAttempt({ giveBack: verdict.counted });
          } catch {
            // The store is failing too: the attempt stays counted, which errs on the safe side.
          }
        },
      };
    },
  };
}

function tooMany(retryInMs: number): Problem {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  return new Problem('tooManyLoginAttempts', `Too many failed logins; try again in ${seconds} seconds.`, 'login_throttled', seconds);
}
