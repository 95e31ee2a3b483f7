import t from 'tap';
import { createHealth } from '../../src/observability/health.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/store.js';

t.test('not ready before the store has answered once, ready after', async (t) => {
  const memory = createMemoryStore({ now: Date.now });
  let answer!: () => void;
  const firstPing = new Promise<void>((resolve) => (answer = resolve));
  const store: Store = { ...memory, ping: () => firstPing };
  const reported: boolean[] = [];
  const health = createHealth(store, (up) => reported.push(up), { intervalMs: 60_000 });
  t.teardown(() => health.stop());
  t.equal(health.ready, false, 'the first ping has not answered: not ready');
  t.equal(health.storeUp, false);
  answer();
  await firstPing;
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(health.ready, true, 'ready once it has');
  t.same(reported, [true]);
  health.startDraining();
  t.equal(health.ready, false, 'and not while draining');
});
