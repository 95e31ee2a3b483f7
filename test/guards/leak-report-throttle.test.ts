import t from 'tap';
import { createLeakReportThrottle } from '../../src/guards/leak-report-throttle.js';
import { Problem } from '../../src/problems.js';
import { createMemoryStore } from '../../src/store/memory-store.js';

/** guards/leak-report-throttle.ts over the memory store's counters (the Redis store's: test/e2e/leaked-keys.test.ts). */

t.test('per address, per window; a refusal counts nothing and says when to come back', async (t) => {
  let now = 1_000_000;
  const store = createMemoryStore({ now: () => now });
  const throttle = createLeakReportThrottle(store, { perAddress: 3, windowSeconds: 60 });
  for (let i = 0; i < 3; i++) await throttle.admit('203.0.113.7');
  now += 20_000;
  const refused = await throttle.admit('203.0.113.7').then(() => undefined, (error: unknown) => error);
  t.ok(refused instanceof Problem, 'the 4th is refused');
  const problem = refused as Problem;
  t.equal(problem.problem, 'tooManyLeakReports');
  t.equal(problem.retryAfterSeconds, 40, 'until the window ends');
  t.equal(problem.reason, 'leak_report_throttled');
  await throttle.admit('198.51.100.1'); // another address: its own count
  await throttle.admit('2001:db8::/64');
  t.same((await store.readCounters(['leak-report:{203.0.113.7}'])).map((c) => c.count), [3], 'the refusal counted nothing');
  now += 40_000;
  await throttle.admit('203.0.113.7'); // a new window
  t.pass('a new window admits again');
});
