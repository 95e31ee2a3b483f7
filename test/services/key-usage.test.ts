import t from 'tap';
import { ALL_SCOPES_GRANT } from '../../src/authz/scopes.js';
import type { Principal } from '../../src/credentials/principal.js';
import { createKeyUsageTracker } from '../../src/services/key-usage.js';
import { StoreUnavailable, type ApiKeyUse } from '../../src/store/store.js';

/**
 * services/key-usage.ts: uses are noted in memory and written in one batch per flush, one entry
 * per key (its latest use), whatever the number of requests; a batch the store refused is kept.
 * The store here is a recorder of what it was asked to write: what the store does with it is the
 * store contract's (test/store/store-contract.ts, on both stores).
 */

const key = (id: string, orgId = 'org_1'): Principal => ({ orgId, via: 'api_key', credentialId: id, scopes: ALL_SCOPES_GRANT });
const warnings: unknown[] = [];
const logger = { warn: (...args: unknown[]) => void warnings.push(args) };

t.test('one write per flush, one entry per key with its latest use', async (t) => {
  let now = 1_000;
  const batches: ApiKeyUse[][] = [];
  const tracker = createKeyUsageTracker({ store: { recordApiKeyUse: async (uses) => void batches.push([...uses]) }, now: () => now, logger, flushIntervalMs: 3_600_000 });
  t.teardown(() => tracker.close());
  for (let i = 0; i < 1000; i++) {
    now = 1_000 + i;
    tracker.note(key(i % 2 === 0 ? 'key_a' : 'key_b'));
  }
  tracker.note(key('key_c', 'org_2'));
  t.equal(tracker.pendingUse('key_a'), 1_998, 'pending: its latest use');
  t.equal(tracker.pendingUse('key_z'), undefined);
  await tracker.flush();
  t.equal(batches.length, 1, 'one write for 1001 uses');
  t.same([...batches[0]!].sort((x, y) => (x.keyId < y.keyId ? -1 : 1)), [
    { orgId: 'org_1', keyId: 'key_a', at: 1_998 },
    { orgId: 'org_1', keyId: 'key_b', at: 1_999 },
    { orgId: 'org_2', keyId: 'key_c', at: 1_999 },
  ]);
  t.equal(tracker.pendingUse('key_a'), undefined, 'written: no longer pending');
  await tracker.flush();
  t.equal(batches.length, 1, 'nothing noted, nothing written');
});

t.test('a refused batch is kept for the next flush, a newer use winning; close() flushes', async (t) => {
  let now = 5_000;
  let refuse = true;
  const batches: ApiKeyUse[][] = [];
  const tracker = createKeyUsageTracker({
    store: {
      recordApiKeyUse: async (uses) => {
        if (refuse) throw new StoreUnavailable('credential store unavailable (recordApiKeyUse)');
        batches.push([...uses]);
      },
    },
    now: () => now,
    logger,
    flushIntervalMs: 3_600_000,
  });
  tracker.note(key('key_a'));
  tracker.note(key('key_b'));
  warnings.length = 0;
  await tracker.flush();
  t.equal(warnings.length, 1, 'the failure is logged');
  t.match(JSON.stringify(warnings[0]), /api_key_use_flush_failed/);
  t.equal(tracker.pendingUse('key_a'), 5_000, 'and the uses kept');
  now = 6_000;
  tracker.note(key('key_b'));
  refuse = false;
  await tracker.close();
  t.equal(batches.length, 1, 'close() wrote what was left');
  t.same([...batches[0]!].sort((x, y) => (x.keyId < y.keyId ? -1 : 1)), [
    { orgId: 'org_1', keyId: 'key_a', at: 5_000 },
    { orgId: 'org_1', keyId: 'key_b', at: 6_000 },
  ]);
});

t.test('the timer flushes on its own', async (t) => {
  const batches: ApiKeyUse[][] = [];
  const tracker = createKeyUsageTracker({ store: { recordApiKeyUse: async (uses) => void batches.push([...uses]) }, now: () => 7, logger, flushIntervalMs: 20 });
  t.teardown(() => tracker.close());
  tracker.note(key('key_a'));
  const deadline = Date.now() + 10_000;
  while (batches.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(batches, [[{ orgId: 'org_1', keyId: 'key_a', at: 7 }]]);
});
