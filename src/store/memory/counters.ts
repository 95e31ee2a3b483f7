/** The memory store's login counters and known sets (store/counters.ts CounterStore). */
import type { AttemptVerdict, CounterState, CounterStore } from '../counters.js';
import type { MemoryPart, MemoryState } from './state.js';

export function memoryCounters(state: MemoryState): MemoryPart<CounterStore> {
  const { now, counters, knownSets } = state;

  function liveCounter(name: string, t: number): { count: number; resetAt: number } | undefined {
    const counter = counters.get(name);
    return counter === undefined || counter.resetAt <= t ? undefined : counter;
  }

  function isKnownMember(name: string, member: string, seenAfter: number, t: number): boolean {
    const set = knownSets.get(name);
    const seenAt = set === undefined || set.expiresAt <= t ? undefined : set.seen.get(member);
    return seenAt !== undefined && seenAt > seenAfter;
  }

  return {
    sweep: (t) => {
      for (const [key, counter] of counters) if (counter.resetAt <= t) counters.delete(key);
      for (const [name, known] of knownSets) if (known.expiresAt <= t) knownSets.delete(name);
    },
    methods: {
      // Synchronous from start to end: no other attempt can run between the check and the count.
      async countAttempt({ counters: limited, windowMs, known }): Promise<AttemptVerdict> {
        const t = now();
        const isKnown = known !== undefined && isKnownMember(known.set, known.member, t - known.knownTtlMs, t);
        const applying = limited.filter((counter) => !(isKnown && counter.exemptWhenKnown === true));
        let retryInMs = 0;
        for (const { name, limit } of applying) {
          const counter = liveCounter(name, t);
          if ((counter?.count ?? 0) >= limit) retryInMs = Math.max(retryInMs, counter === undefined ? windowMs : counter.resetAt - t);
        }
        if (retryInMs > 0) return { allowed: false, retryInMs };
        let exhausted = false;
        for (const { name, limit } of applying) {
          let counter = liveCounter(name, t);
          if (counter === undefined) {
            counter = { count: 0, resetAt: t + windowMs };
            counters.set(name, counter);
          }
          counter.count++;
          if (counter.count >= limit) exhausted = true;
        }
        return { allowed: true, known: isKnown, counted: applying.map((counter) => counter.name), exhausted };
      },

      async settleAttempt({ reset = [], giveBack = [], remember }) {
        const t = now();
        for (const name of reset) counters.delete(name);
        for (const name of giveBack) {
          const counter = liveCounter(name, t);
          if (counter !== undefined && counter.count > 0) counter.count--;
        }
        if (remember !== undefined) {
          let known = knownSets.get(remember.set);
          if (known === undefined || known.expiresAt <= t) knownSets.set(remember.set, (known = { seen: new Map(), expiresAt: 0 }));
          known.expiresAt = t + remember.ttlMs;
          known.seen.delete(remember.member); // re-inserted last: the most recent
          known.seen.set(remember.member, t);
          for (const [member, seenAt] of known.seen) {
            if (known.seen.size > remember.max || seenAt <= t - remember.ttlMs) known.seen.delete(member);
          }
        }
      },

      async readCounters(names) {
        const t = now();
        return names.map((name): CounterState => {
          const counter = liveCounter(name, t);
          return counter === undefined ? { count: 0, resetInMs: 0 } : { count: counter.count, resetInMs: counter.resetAt - t };
        });
      },
    },
  };
}
