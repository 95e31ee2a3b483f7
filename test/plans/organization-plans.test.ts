// plans/organization-plans.ts: the per-replica plan table, on the memory store and the local bus
// (the Redis bus's part is test/e2e/plans.test.ts's two replicas).
import t from 'tap';
import { createOrganizationPlans } from '../../src/plans/organization-plans.js';
import { planAllows } from '../../src/route-table/plans.js';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import { PLANS_FILE } from '../helpers/plans.js';
import { compiledTable } from '../helpers/route-tables.js';

const table = compiledTable(PLANS_FILE);
const write = table.scopes.rule('accounts:write');
const read = table.scopes.rule('accounts:read');

t.test('no plans in the table: undefined (every scope), whatever the organization', async (t) => {
  const store = createMemoryStore();
  await store.setOrganizationPlan('org_a', 'full');
  const plans = await createOrganizationPlans({ store, bus: createLocalInvalidationBus(), logger: { warn() {} }, onFallback: () => t.fail('no fallback') });
  t.teardown(() => plans.close());
  t.equal(plans.planOf('org_a', compiledTable(BUILTIN_ROUTES_FILE)), undefined);
});

t.test('its own plan, else the default; a plan gone from the file: the default, counted each time, logged once per table', async (t) => {
  const store = createMemoryStore();
  const bus = createLocalInvalidationBus();
  const fallbacks: string[] = [];
  const warnings: unknown[] = [];
  const plans = await createOrganizationPlans({ store, bus, logger: { warn: (...args: unknown[]) => warnings.push(args) }, onFallback: (plan) => fallbacks.push(plan) });
  t.teardown(() => plans.close());
  t.equal(plans.planOf('org_a', table)?.name, 'basic', 'no plan of its own: the default');
  await store.setOrganizationPlan('org_a', 'full');
  t.equal(plans.planOf('org_a', table)?.name, 'basic', 'not read again before it is announced');
  bus.applyLocally([{ kind: 'plan', cacheKey: 'org_a' }]);
  await plans.reload();
  t.equal(plans.planOf('org_a', table)?.name, 'full', 'announced: read again');
  t.ok(planAllows(plans.planOf('org_a', table), write));

  const { full: _gone, ...kept } = PLANS_FILE.plans!;
  const without = compiledTable({ ...PLANS_FILE, plans: kept });
  for (let i = 0; i < 3; i++) t.equal(plans.planOf('org_a', without)?.name, 'basic');
  t.strictSame(fallbacks, ['full', 'full', 'full'], 'counted per decision');
  t.equal(warnings.length, 1, 'logged once for the table');
  const noDefault = compiledTable({ ...PLANS_FILE, plans: kept, defaultPlan: undefined });
  t.equal(plans.planOf('org_a', noDefault), undefined, 'no defaultPlan either: every scope');
});

t.test('until the table was first read: only the gateway\'s own scopes (fail closed); read on the retry', async (t) => {
  const store = createMemoryStore();
  await store.setOrganizationPlan('org_a', 'full');
  let down = true;
  const flaky = { readOrganizationPlans: () => (down ? Promise.reject(new Error('store down')) : store.readOrganizationPlans()) };
  const plans = await createOrganizationPlans({ store: flaky, bus: createLocalInvalidationBus(), logger: { warn() {} }, onFallback: () => {} });
  t.teardown(() => plans.close());
  const unread = plans.planOf('org_a', table);
  t.notOk(planAllows(unread, read), 'no forwarded scope while unknown');
  down = false;
  const deadline = Date.now() + 10_000;
  while (plans.planOf('org_a', table)?.name !== 'full' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(plans.planOf('org_a', table)?.name, 'full', 'read by the retry (every second)');
});
