import t from 'tap';
import type { Principal } from '../../src/credentials/principal.js';
import { createUsageRecorder } from '../../src/services/usage-recorder.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { HOUR_MS, hourOf, type UsageIncrement } from '../../src/store/usage.js';

/**
 * The usage recorder (services/usage-recorder.ts): counts in memory, one batch per flush however
 * many requests, an hour's end splits the counts, a failed batch is kept for the next flush, and
 * what is pending is bounded (the rest dropped and counted, never kept).
 */

const key = (orgId: string, keyId: string): Principal => ({ orgId, via: 'api_key', credentialId: keyId, scopes: undefined as never });
const session = (orgId: string): Principal => ({ orgId, via: 'jwt', credentialId: `s-${orgId}`, scopes: undefined as never });
const quiet = { warn: () => {} };

t.test('one batch per flush, one entry per credential and hour, whatever the traffic; an hour\'s end splits them', async (t) => {
  const store = createMemoryStore();
  t.teardown(() => store.close());
  const batches: (readonly UsageIncrement[])[] = [];
  let clock = hourOf(Date.now()) + HOUR_MS - 1000;
  const recorder = createUsageRecorder({ store: { recordUsage: (increments) => (batches.push(increments), store.recordUsage(increments)) }, now: () => clock, logger: quiet, flushIntervalMs: 3_600_000 });
  t.teardown(() => recorder.close());
  for (let i = 0; i < 1000; i++) recorder.note(key('o1', 'k1'), 'admitted');
  recorder.note(key('o1', 'k1'), 'scope');
  recorder.note(session('o1'), 'admitted');
  clock += 2000; // the next hour
  recorder.note(key('o1', 'k1'), 'quota');
  await recorder.flush();
  t.equal(batches.length, 1, 'one write');
  t.equal(batches[0]!.length, 3, "the key's two hours and the login token's");
  const hour = hourOf(clock);
  t.match(await store.readUsage({ orgId: 'o1', keyId: 'k1', granularity: 'hour', from: hour - HOUR_MS, to: hour }), [
    { counts: { admitted: 1000, scope: 1, quota: 0 } },
    { counts: { admitted: 0, quota: 1 } },
  ]);
  t.match(await store.readUsage({ orgId: 'o1', granularity: 'hour', from: hour - HOUR_MS, to: hour }), [{ counts: { admitted: 1001, scope: 1 } }, { counts: { quota: 1 } }]);
  await recorder.flush();
  t.equal(batches.length, 1, 'nothing new, nothing written');
});

t.test('a failed batch is kept for the next flush; pending counts are bounded', async (t) => {
  const store = createMemoryStore();
  t.teardown(() => store.close());
  let failing = true;
  let dropped = 0;
  const recorder = createUsageRecorder({
    store: { recordUsage: async (increments) => (failing ? Promise.reject(new Error('down')) : store.recordUsage(increments)) },
    now: Date.now,
    logger: quiet,
    flushIntervalMs: 3_600_000,
    maxPending: 2,
    onDropped: (n) => (dropped += n),
  });
  t.teardown(() => recorder.close());
  recorder.note(key('o2', 'a'), 'admitted');
  recorder.note(key('o2', 'b'), 'admitted');
  recorder.note(key('o2', 'c'), 'admitted');
  t.equal(dropped, 1, 'a third credential is past the bound: dropped and counted');
  await recorder.flush();
  recorder.note(key('o2', 'a'), 'admitted');
  t.equal(dropped, 2, 'the failed batch is kept within the bound: a new entry does not fit');
  failing = false;
  await recorder.flush();
  const hour = hourOf(Date.now());
  t.match(await store.readUsage({ orgId: 'o2', granularity: 'hour', from: hour, to: hour }), [{ counts: { admitted: 2 } }], 'the kept batch written once the store answers');
});
