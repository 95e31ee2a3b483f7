import t from 'tap';
import { createLocalInvalidationBus, type Invalidation } from '../../src/store/invalidation.js';

/** store/invalidation.ts: the single-process bus of the embedded store. */

t.test('applyLocally tells every listener at once, in order; an empty list tells nobody', async (t) => {
  const bus = createLocalInvalidationBus();
  const heard: Array<[string, Invalidation]> = [];
  bus.onInvalidation((i) => heard.push(['a', i]));
  bus.onInvalidation((i) => heard.push(['b', i]));
  const revoked = [{ kind: 'api_key', cacheKey: 'k1' }] as const;
  bus.applyLocally(revoked);
  t.same(heard, [['a', revoked], ['b', revoked]], 'synchronously, before applyLocally returns');
  bus.applyLocally([]);
  t.equal(heard.length, 2);
});

t.test('always subscribed: there is no other replica to miss; closed, it tells nobody', async (t) => {
  const bus = createLocalInvalidationBus();
  t.equal(bus.subscribed, true);
  let changes = 0;
  bus.onSubscriptionChange(() => changes++);
  let heard = 0;
  bus.onInvalidation(() => heard++);
  await bus.close();
  bus.applyLocally([{ kind: 'session', cacheKey: 's1' }]);
  t.equal(heard, 0);
  t.equal(changes, 0);
});
