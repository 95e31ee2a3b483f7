/**
 * The key-quota part of the store contract (store/key-quotas.ts, issue 47): run by storeContract
 * on memory, standalone Redis, Sentinel and Cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { GatewayStore } from '../../src/store/store.js';

export function keyQuotaContract(t: Test, open: (t: Test) => Promise<GatewayStore>): void {
  t.test("key quotas: a key given a quota is in the table with its organization until removed", async (t) => {
    const store = await open(t);
    const [orgId, keyId, other] = [randomUUID(), randomUUID(), randomUUID()];
    t.equal((await store.readKeyQuotas()).get(keyId), undefined);
    await store.setKeyQuota(orgId, keyId, '100/day');
    await store.setKeyQuota(orgId, other, '7/month');
    t.strictSame((await store.readKeyQuotas()).get(keyId), { orgId, quota: '100/day' });
    await store.setKeyQuota(orgId, keyId, '50/day');
    t.strictSame((await store.readKeyQuotas()).get(keyId), { orgId, quota: '50/day' }, 'a second set replaces the first');
    await store.setKeyQuota(orgId, keyId, null);
    const table = await store.readKeyQuotas();
    t.equal(table.has(keyId), false, 'null removes it');
    t.strictSame(table.get(other), { orgId, quota: '7/month' }, "another key's untouched");
    await store.setKeyQuota(orgId, keyId, null);
    t.equal((await store.readKeyQuotas()).has(keyId), false, 'removing twice is no error');
  });
}
