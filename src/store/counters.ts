/**
 * The counter part of the gateway's store (store.ts GatewayStore): the login limits' shared
 * fixed-window counters. Implemented by memory/counters.ts and redis/counters.ts.
 */

/** A fixed-window counter: how many, and when the window ends. */
export type CounterState = Readonly<{ count: number; resetInMs: number }>;

/**
 * A counter an attempt goes through, and how many attempts its window admits.
 *
 * Counter and known-set names may carry a placement in braces, as Redis hash tags do:
 * `login:pair:{<e-mail digest>}:<address>`. Names with the same text in braces are kept
 * together (on one Redis shard) and counted together in one atomic step; a name without braces
 * is placed by its whole text. countAttempt stays all-or-nothing across places: it counts place
 * by place and gives back what it counted when a later place refuses.
 */
export type LimitedCounter = Readonly<{
  name: string;
  limit: number;
  /** Neither checked nor counted when the attempt's member is in its known set. */
  exemptWhenKnown?: boolean;
}>;

/** A set of recently seen members (e.g. the addresses an e-mail logged in from), by name. */
export type KnownMember = Readonly<{ set: string; member: string }>;

export type Attempt = Readonly<{
  counters: readonly LimitedCounter[];
  /** The window a counter opens at its first count. */
  windowMs: number;
  /** When given and the member was remembered within knownTtlMs, exempt counters are skipped. */
  known?: KnownMember & Readonly<{ knownTtlMs: number }>;
}>;

export type AttemptVerdict = Readonly<
  | {
      allowed: true;
      /** The member was known, so the exempt counters were skipped. */
      known: boolean;
      /** The names that were counted: what a give-back returns. */
      counted: readonly string[];
      /** This attempt took the last one a counter admits: the next is refused. */
      exhausted: boolean;
    }
  | { allowed: false; retryInMs: number }
>;

export type Settlement = Readonly<{
  /** Deleted: their windows start again. */
  reset?: readonly string[];
  /** One taken back from each, never below zero; the window is not touched. */
  giveBack?: readonly string[];
  /** Remembered as seen now; the set keeps the `max` most recent and forgets after ttlMs. */
  remember?: KnownMember & Readonly<{ ttlMs: number; max: number }>;
}>;

/**
 * Counters shared by every replica, for the login limits. Each counter starts its window on its
 * first count and disappears when the window ends. The one way to count is countAttempt, which
 * checks and counts in one atomic step: a read-then-count would let every request of a parallel
 * burst pass the check before any of them counted.
 */
export interface CounterStore {
  /**
   * Atomically: if every counter that applies is below its limit, counts one on each and allows;
   * otherwise counts nothing and refuses, with the longest wait among the counters at their limit.
   * So a window never admits more than `limit`, however attempts interleave, on any replica.
   */
  countAttempt(attempt: Attempt): Promise<AttemptVerdict>;
  /** After an attempt: resets, gives back and remembers, in one atomic step. */
  settleAttempt(settlement: Settlement): Promise<void>;
  /** The counters as they are now: for tests and diagnostics, never to decide (see countAttempt). */
  readCounters(names: readonly string[]): Promise<CounterState[]>;
}
