import t from 'tap';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { replicateTable } from '../../src/store/replicated-table.js';
import { eventually } from '../helpers/gateway.js';

/**
 * store/replicated-table.ts: what the rate-limit overrides, the organizations' plans and the keys'
 * own quotas share (their own tests, test/limits/ and test/plans/, hold each to its table). Here
 * the shared part alone, on the local bus the embedded store uses.
 */

/** A read that fails while `down` is true, counting the reads that began. */
function readable() {
  const state = { down: false, reads: 0, succeeded: 0, gate: undefined as Promise<void> | undefined };
  const read = async () => {
    state.reads++;
    if (state.gate !== undefined) await state.gate;
    if (state.down) throw new Error('store down');
    state.succeeded++;
  };
  return { state, read };
}

t.test('a failed first read does not stop the start; it is tried again until one succeeds', async (t) => {
  const { state, read } = readable();
  state.down = true;
  const failures: unknown[] = [];
  const table = await replicateTable({ read, kind: 'plan', bus: createLocalInvalidationBus(), onReloadFailed: (error) => failures.push(error) });
  t.teardown(table.close);
  t.equal(state.reads, 1, 'read once at start');
  t.ok(await eventually(async () => state.reads >= 2, 10_000), 'read again while it fails');
  state.down = false;
  t.ok(await eventually(async () => state.succeeded === 1, 10_000), 'until a read succeeds');
  t.same(failures, [], 'the start-up retries are quiet');
});

t.test('an announcement of its kind or all reads again; another kind does not', async (t) => {
  const { state, read } = readable();
  const bus = createLocalInvalidationBus();
  const failures: unknown[] = [];
  const table = await replicateTable({ read, kind: 'key_quota', bus, onReloadFailed: (error) => failures.push(error) });
  t.teardown(table.close);
  t.equal(state.reads, 1);
  bus.applyLocally([{ kind: 'api_key', cacheKey: 'a1' }]);
  bus.applyLocally([{ kind: 'key_quota', cacheKey: 'k1' }]);
  t.ok(await eventually(async () => state.reads === 2), 'its own kind');
  state.down = true;
  bus.applyLocally([{ kind: 'key_quota', cacheKey: 'k2' }]);
  t.ok(await eventually(async () => failures.length === 1), 'a failed read after an announcement is reported');
  t.match(failures[0], { message: 'store down' });
  t.equal(state.reads, 3, 'the api_key announcement read nothing');
  table.close();
  bus.applyLocally([{ kind: 'key_quota', cacheKey: 'k3' }]);
  t.equal(state.reads, 3, 'closed: no more reads');
});

t.test("'all' (messages may have been missed) reads again, whatever the kind", async (t) => {
  const { state, read } = readable();
  // What a Redis bus tells its listeners on every (re)subscription; the local bus never says it.
  const listeners: Array<(invalidation: 'all') => void> = [];
  const table = await replicateTable({ read, kind: 'plan', bus: { onInvalidation: (listener) => void listeners.push(listener) }, onReloadFailed: () => {} });
  t.teardown(table.close);
  t.equal(listeners.length, 1, 'listening');
  for (const listener of listeners) listener('all');
  t.ok(await eventually(async () => state.succeeded === 2), 'read again');
});

t.test("one read at a time; a change announced during a read makes one more after it", async (t) => {
  const { state, read } = readable();
  const bus = createLocalInvalidationBus();
  const table = await replicateTable({ read, kind: 'rate_limits', bus, onReloadFailed: () => {} });
  t.teardown(table.close);
  let open!: () => void;
  state.gate = new Promise<void>((resolve) => (open = resolve));
  const first = table.reload();
  t.equal(state.reads, 2, 'a read in flight');
  const second = table.reload();
  const third = table.reload();
  t.equal(state.reads, 2, 'no second read while one is in flight');
  state.gate = undefined;
  open();
  await Promise.all([first, second, third]);
  t.equal(state.reads, 3, 'one more read for the calls made during it, not one each');
});
