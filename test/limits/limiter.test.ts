import t, { type Test } from 'tap';
import { ALL_SCOPES_GRANT } from '../../src/authz/scopes.js';
import type { Principal } from '../../src/credentials/principal.js';
import { createRateLimiter, sliceOf, type RateVerdict } from '../../src/limits/limiter.js';
import { createRateLimitPolicy, type AppliedLimit } from '../../src/limits/policy.js';
import { parseRateLimit } from '../../src/limits/rate-limit.js';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { RateLease } from '../../src/store/rate-limits.js';

/** limits/limiter.ts over the memory store, on a clock the test moves: budget leased in slices, spent locally. */

const key = (credentialId: string, orgId = 'org_a'): Principal => ({ orgId, via: 'api_key', credentialId, scopes: ALL_SCOPES_GRANT });

async function fixture(t: Test, defaultLimit: string) {
  let clock = Date.parse('2026-05-06T07:08:09Z');
  const store = createMemoryStore({ now: () => clock });
  t.teardown(() => store.close());
  const leases: RateLease[] = [];
  // The real store, its leases noted (what a request cost in store calls).
  const observed = { leaseRateBudget: (lease: RateLease) => (leases.push(lease), store.leaseRateBudget(lease)) };
  const limiter = createRateLimiter({ store: observed, replica: 'r1', now: () => clock });
  t.teardown(() => limiter.close());
  const bus = createLocalInvalidationBus();
  const policy = await createRateLimitPolicy({ store, bus, defaultLimit: parseRateLimit(defaultLimit), logger: { warn() {} } });
  const take = async (principal: Principal): Promise<RateVerdict> => limiter.take(principal, policy.limitFor(principal) as AppliedLimit);
  return { store, limiter, policy, leases, take, tick: (ms: number) => (clock += ms) };
}

t.test('a slice of the limit per lease, spent without the store; the next asked for before it runs out', async (t) => {
  const { leases, take } = await fixture(t, '1000/60s');
  t.equal(sliceOf(1000), 100);
  for (let i = 0; i < 500; i++) t.equal((await take(key('k1'))).allowed, true);
  t.ok(leases.length <= 7, `500 requests cost ${leases.length} leases`);
  t.ok(leases.every((lease) => lease.want === 100 && lease.limit === 1000 && lease.windowMs === 60_000 && lease.orgId === 'org_a' && lease.credentialId === 'k1'));
  const verdict = await take(key('k1'));
  t.equal(verdict.limit.policyHeader, '"credential";q=1000;w=60');
  t.ok(verdict.remaining < 1000 - 500 && verdict.remaining >= 1000 - 501 - 100, `remaining ${verdict.remaining}: the window's count less what this replica holds`);
  t.equal(verdict.resetSeconds, 60);
});

t.test('a parallel burst gets exactly the limit; the rest are refused until the window ends, then it starts again', async (t) => {
  const { leases, take, tick } = await fixture(t, '50/10s');
  const burst = await Promise.all(Array.from({ length: 200 }, () => take(key('k1'))));
  t.equal(burst.filter((v) => v.allowed).length, 50, 'exactly the limit');
  for (const v of burst.filter((x) => !x.allowed)) t.match(v, { remaining: 0, resetSeconds: 10 });
  const asked = leases.length;
  t.equal((await take(key('k1'))).allowed, false);
  t.equal(leases.length, asked, 'a refused window asks the store nothing more');
  t.equal((await take(key('k2'))).allowed, true, 'another credential has its own window');
  tick(9_000);
  t.match(await take(key('k1')), { allowed: false, resetSeconds: 1 });
  tick(1_000);
  t.equal((await take(key('k1'))).allowed, true, 'a new window');
});

t.test('a changed limit takes over at once: the budget under the old one is dropped', async (t) => {
  const { store, policy, take } = await fixture(t, '100/60s');
  t.equal((await take(key('k1'))).limit.count, 100);
  await store.setRateLimit({ kind: 'api_key', orgId: 'org_a', keyId: 'k1' }, '20/60s');
  await policy.reload();
  const verdicts: RateVerdict[] = [];
  for (let i = 0; i < 15; i++) verdicts.push(await take(key('k1')));
  t.ok(verdicts.every((v) => v.limit.count === 20), 'the new limit applies to the next request');
  // The window's count goes on: the slice leased under the old limit (10) counts as spent.
  t.equal(verdicts.filter((v) => v.allowed).length, 10);
  t.same(verdicts.map((v) => v.allowed), [...Array(10).fill(true), ...Array(5).fill(false)]);
  await store.setRateLimit({ kind: 'organization', orgId: 'org_b' }, 'off');
  await policy.reload();
  t.equal(policy.limitFor(key('k9', 'org_b')), undefined, '`off`: no limit, whatever the default');
  await store.setRateLimit({ kind: 'organization', orgId: 'org_a' }, '1/60s');
  await policy.reload();
  t.equal(policy.limitFor(key('k1'))!.count, 1, 'a key is never above its organization, even with a limit of its own set before');
});
