/**
 * The usage and quota parts of the store contract (store/usage.ts, store/quotas.ts, issue 47):
 * run by storeContract on memory, standalone Redis, Sentinel and Cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { DAY_MS, HOUR_MS, dayOf, hourOf } from '../../src/store/usage.js';
import type { GatewayStore } from '../../src/store/store.js';

const zero = { admitted: 0, credential: 0, scope: 0, rate_limit: 0, quota: 0 };

export function usageContract(t: Test, open: (t: Test) => Promise<GatewayStore>): void {
  t.test('usage: hours and days, the organization and its keys, by outcome; zeros where nothing was recorded', async (t) => {
    const store = await open(t);
    const orgId = randomUUID();
    const other = randomUUID();
    const keyA = randomUUID();
    const keyB = randomUUID();
    const now = Date.now();
    const hour = hourOf(now);
    const earlier = hour - 2 * HOUR_MS;
    await store.recordUsage([
      { orgId, keyId: keyA, hour, counts: [3, 0, 1, 2, 0] },
      { orgId, keyId: keyB, hour, counts: [1, 0, 0, 0, 4] },
      { orgId, keyId: null, hour, counts: [5] },
      { orgId, keyId: keyA, hour: earlier, counts: [7, 1] },
      { orgId: other, keyId: null, hour, counts: [100] },
    ]);
    await store.recordUsage([{ orgId, keyId: keyA, hour, counts: [1] }]);

    const hours = await store.readUsage({ orgId, granularity: 'hour', from: earlier, to: hour });
    t.strictSame(hours, [
      { start: earlier, counts: { ...zero, admitted: 7, credential: 1 } },
      { start: earlier + HOUR_MS, counts: zero },
      { start: hour, counts: { ...zero, admitted: 10, scope: 1, rate_limit: 2, quota: 4 } },
    ], 'the organization: every credential together');
    t.strictSame(await store.readUsage({ orgId, keyId: keyA, granularity: 'hour', from: hour, to: hour }), [
      { start: hour, counts: { ...zero, admitted: 4, scope: 1, rate_limit: 2 } },
    ], 'one key');
    const day = dayOf(now);
    const sameDay = dayOf(earlier) === day;
    t.strictSame(await store.readUsage({ orgId, granularity: 'day', from: day - DAY_MS, to: day }), [
      { start: day - DAY_MS, counts: sameDay ? zero : { ...zero, admitted: 7, credential: 1 } },
      { start: day, counts: sameDay ? { ...zero, admitted: 17, credential: 1, scope: 1, rate_limit: 2, quota: 4 } : { ...zero, admitted: 10, scope: 1, rate_limit: 2, quota: 4 } },
    ], 'the day adds its hours');
    t.strictSame(await store.readUsage({ orgId: other, keyId: keyA, granularity: 'day', from: day, to: day }), [{ start: day, counts: zero }], 'another organization has none of it');
    t.strictSame(await store.readUsage({ orgId: randomUUID(), granularity: 'day', from: day, to: day }), [{ start: day, counts: zero }]);
  });

  t.test('quotas: leases never grant past the least any counter has left; whole leases are all or nothing; give-backs', async (t) => {
    const store = await open(t);
    const orgId = randomUUID();
    const keyId = randomUUID();
    const period = 'd2026-12-07';
    const endsAt = Date.now() + DAY_MS;
    const org = { keyId: null, limit: 10 };
    t.strictSame(await store.leaseQuota({ orgId, period, endsAt, counters: [org], want: 4, whole: false }), { granted: 4, left: 6, leastLeft: 6 });
    t.strictSame(await store.leaseQuota({ orgId, period, endsAt, counters: [org, { keyId, limit: 3 }], want: 5, whole: false }), { granted: 3, left: 3, leastLeft: 0 }, 'the key has 3; the least left is the key\'s');
    t.strictSame(await store.leaseQuota({ orgId, period, endsAt, counters: [org, { keyId, limit: 3 }], want: 1, whole: true }), { granted: 0, left: 3, leastLeft: 0 }, 'the key has none left');
    t.strictSame(await store.leaseQuota({ orgId, period, endsAt, counters: [org], want: 5, whole: true }), { granted: 0, left: 3, leastLeft: 3 }, 'a cost above what is left: nothing');
    t.strictSame(await store.leaseQuota({ orgId, period, endsAt, counters: [org], want: 5, whole: false }), { granted: 3, left: 0, leastLeft: 0 });
    t.equal(await store.readQuotaUsed(orgId, period, null), 10);
    t.equal(await store.readQuotaUsed(orgId, period, keyId), 3);
    t.equal(await store.readQuotaUsed(orgId, 'd2026-12-08', null), 0, 'another period starts at zero');
    await store.returnQuota(orgId, period, [null, keyId], 2);
    t.equal(await store.readQuotaUsed(orgId, period, null), 8);
    t.equal(await store.readQuotaUsed(orgId, period, keyId), 1);
    await store.returnQuota(orgId, period, [keyId], 5);
    t.equal(await store.readQuotaUsed(orgId, period, keyId), 0, 'never below zero');
    t.strictSame(await store.leaseQuota({ orgId, period, endsAt, counters: [org], want: 2, whole: true }), { granted: 2, left: 0, leastLeft: 0 });
  });

  t.test('quotas: a parallel burst of whole leases grants exactly the limit', async (t) => {
    const store = await open(t);
    const orgId = randomUUID();
    const lease = { orgId, period: 'm2026-12', endsAt: Date.now() + DAY_MS, counters: [{ keyId: null, limit: 25 }], want: 1, whole: true };
    const grants = await Promise.all(Array.from({ length: 60 }, () => store.leaseQuota(lease)));
    t.equal(grants.reduce((sum, grant) => sum + grant.granted, 0), 25);
    t.equal(await store.readQuotaUsed(orgId, lease.period, null), 25);
  });
}
