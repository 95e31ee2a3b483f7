// Plans in the CLI (issue 47): `authgate routes check` and `explain` on a file with plans (explain
// says which plans may call a route), and `authgate org plan ID PLAN` against a real gateway.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runCli as cli } from '../helpers/cli.js';
import { ADMIN_TOKEN, startGateway } from '../helpers/gateway.js';
import { compiledTable } from '../helpers/route-tables.js';
import { PLANS_FILE } from '../helpers/plans.js';

const fixtures = fileURLToPath(new URL('../route-table/fixtures/', import.meta.url));


t.test('routes check counts the plans and names the default; a plan naming an undeclared scope is an error with its line', async (t) => {
  const good = await cli(['routes', 'check', `${fixtures}valid/plans.yaml`]);
  t.equal(good.code, 0, good.stderr);
  t.match(good.stdout, /is valid: 3 routes, 1 upstream, 6 scopes, 3 plans \(default free\), hash [0-9a-f]{16}\n$/);
  const file = `${fixtures}invalid/plan-scope-undeclared.yaml`;
  const bad = await cli(['routes', 'check', file]);
  t.equal(bad.code, 1);
  t.equal(bad.stderr.split('\n')[0], `${file}:10: /plans/partner/scopes/1: scope admin:orders is not declared under scopes`);
});

t.test('routes explain says which plans may call the route, and its cost', async (t) => {
  const file = `${fixtures}valid/plans.yaml`;
  const exported = await cli(['routes', 'explain', 'POST', '/api/v2/orders/export', '--file', file]);
  t.equal(exported.code, 0, exported.stderr);
  t.match(exported.stdout, /\n {2}plans {8}partner, internal\n/);
  t.match(exported.stdout, /\n {2}cost {9}10 quota units a request\n/);
  const read = await cli(['routes', 'explain', 'GET', '/api/v2/orders/7', '--file', file]);
  t.match(read.stdout, /\n {2}plans {8}free \(default\), partner, internal\n/);
  t.notMatch(read.stdout, /cost/, 'a cost of 1 is not said');
  const builtin = await cli(['routes', 'explain', 'GET', '/accounts']);
  t.notMatch(builtin.stdout, /plans/, 'a file without plans: no plans line');
});

t.test('org plan against a real gateway: a plan, default; an unknown one is the gateway\'s 400', async (t) => {
  const gw = await startGateway(t, { deps: { routes: compiledTable(PLANS_FILE) } });
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const org = await gw.createOrganization();
  const set = await cli(['org', 'plan', org.id, 'full'], env);
  t.equal(set.code, 0, set.stderr);
  t.match(JSON.parse(set.stdout), { id: org.id, plan: 'full', effectivePlan: 'full' });
  const reset = await cli(['org', 'plan', org.id, 'default'], env);
  t.match(JSON.parse(reset.stdout), { id: org.id, plan: null, effectivePlan: 'basic' }, 'the default again');
  const unknown = await cli(['org', 'plan', org.id, 'gold'], env);
  t.equal(unknown.code, 1, 'refused by the gateway');
  t.match(unknown.stderr, /400/);
  t.equal((await cli(['org', 'plan', org.id], env)).code, 2, 'a usage error without the plan');
  t.equal((await cli(['org', 'plan', 'org_missing', 'full'], env)).code, 1, 'an unknown organization: 404');
});
