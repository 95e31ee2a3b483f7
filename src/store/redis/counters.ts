/**
 * The Redis store's login counters and known sets (store/counters.ts CounterStore). A counter or
 * known set is placed by the text in braces in its name (keys.ts counter, knownSet), so one
 * attempt may span several shards: it is counted place by place, one script each.
 */
import type { CounterStore, LimitedCounter } from '../counters.js';
import { shardTagOf } from '../shard-tag.js';
import type { RedisStoreContext } from './context.js';
import type { ShardKeys } from './keys.js';
import { attemptVerdict, counterStates } from './replies.js';

export function redisCounters(context: RedisStoreContext): CounterStore {
  const { keys, now, run, guard } = context;

  /** The one place counters and known sets are placed: by the text in braces in their name. */
  const counterShard = (name: string) => keys.shard(shardTagOf(/\{([^}]+)\}/.exec(name)?.[1] ?? name));

  const store: CounterStore = {
    /**
     * The counters of one place (text in braces) are checked and counted in one script. The
     * place holding the known set goes first; a later place that refuses has the earlier
     * places' counts given back, so an attempt is counted everywhere or (once the give-back
     * landed) nowhere. Until then a concurrent attempt may be refused by a count about to go
     * back: the limit errs on the strict side, never the loose one.
     */
    countAttempt: ({ counters, windowMs, known }) =>
      guard('countAttempt', async () => {
        const window = Math.max(1, Math.ceil(windowMs));
        // The known set's place first (a Map keeps the order places are first used in).
        const places = new Map<string, Place<LimitedCounter[]>>();
        const knownShard = known === undefined ? undefined : counterShard(known.set);
        if (knownShard !== undefined) placeIn(places, knownShard, () => []);
        for (const counter of counters) placeIn(places, counterShard(counter.name), () => []).push(counter);
        let isKnown = false;
        let exhausted = false;
        const counted: string[] = [];
        for (const [base, { shard, value: items }] of places) {
          const keyNames = items.map((counter) => shard.counter(counter.name));
          const args: (string | number)[] = [items.length, window];
          for (const counter of items) args.push(counter.limit, counter.exemptWhenKnown === true ? 1 : 0);
          if (known !== undefined && base === knownShard?.base) {
            keyNames.push(shard.knownSet(known.set));
            args.push(known.member, now() - known.knownTtlMs);
          } else {
            args.push(isKnown ? 1 : 0);
          }
          const verdict = attemptVerdict(await run.countAttempt(keyNames, args), items);
          if (!verdict.allowed) {
            if (counted.length > 0) await store.settleAttempt({ giveBack: counted }).catch(() => undefined);
            return verdict;
          }
          isKnown ||= verdict.known;
          exhausted ||= verdict.exhausted;
          counted.push(...verdict.counted);
        }
        return { allowed: true, known: isKnown, counted, exhausted };
      }),

    /** One script per place; the places are independent, so they run side by side. */
    settleAttempt: ({ reset = [], giveBack = [], remember }) =>
      guard('settleAttempt', async () => {
        type Part = { reset: string[]; giveBack: string[]; remember?: typeof remember };
        const parts = new Map<string, Place<Part>>();
        const partOf = (name: string) => placeIn(parts, counterShard(name), (): Part => ({ reset: [], giveBack: [] }));
        for (const name of reset) partOf(name).reset.push(name);
        for (const name of giveBack) partOf(name).giveBack.push(name);
        if (remember !== undefined) partOf(remember.set).remember = remember;
        await Promise.all([...parts.values()].map(async ({ shard, value: part }) => {
          const keyNames = [...part.reset, ...part.giveBack].map(shard.counter);
          const args: (string | number)[] = [part.reset.length, part.giveBack.length];
          if (part.remember !== undefined) {
            keyNames.push(shard.knownSet(part.remember.set));
            args.push(part.remember.member, now(), Math.max(1, Math.ceil(part.remember.ttlMs)), Math.max(1, part.remember.max));
          }
          await run.settleAttempt(keyNames, args);
        }));
      }),

    readCounters: (names) =>
      guard('readCounters', async () => {
        const states = await Promise.all(names.map(async (name) => {
          const [state] = counterStates(await run.readCounters([counterShard(name).counter(name)], []), 1);
          return state!;
        }));
        return states;
      }),
  };
  return store;
}

/** What is kept for one shard (a place) while a step is split by shard. */
type Place<T> = { shard: ShardKeys; value: T };

/** The value of a shard's place, made on first use; a Map keeps places in that order. */
function placeIn<T>(places: Map<string, Place<T>>, shard: ShardKeys, make: () => T): T {
  let place = places.get(shard.base);
  if (place === undefined) places.set(shard.base, (place = { shard, value: make() }));
  return place.value;
}
