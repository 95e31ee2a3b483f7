/**
 * The bench's scenario table (bench/scenarios.ts) is consistent: adding a scenario is one entry,
 * so what tsc cannot see is checked here (ids unique, `--only`'s companions exist, every gateway
 * a scenario uses has its place in the start order, every cost names scenarios of the table).
 */
import t from 'tap';
import { GATEWAYS, IDENTITY_PAIRS, PAIR_COSTS, SPECS } from '../../bench/scenarios.js';

t.test('the scenario table is consistent', async (t) => {
  const ids = SPECS.map((s) => s.id);
  t.equal(new Set(ids).size, ids.length, 'scenario ids unique');
  t.ok(ids.includes('baseline'), 'the baseline every ratio is to');
  for (const s of SPECS) {
    for (const along of s.bringsAlong ?? []) t.ok(ids.includes(along as never), `${s.id} brings along ${along}, a scenario of the table`);
    if (typeof s.server !== 'string') t.ok(GATEWAYS.includes(s.server), `${s.id}: its gateway ${s.server.name} has a place in GATEWAYS`);
    if (s.path !== undefined) t.match(s.path, /^\//, `${s.id}: its path is absolute`);
  }
  const names = GATEWAYS.map((g) => g.name);
  t.equal(new Set(names).size, names.length, 'gateway names unique');
  for (const cost of [...PAIR_COSTS, ...IDENTITY_PAIRS]) {
    const named: string[] = [cost.with, cost.without, ...('second' in cost ? cost.second : []), ...('withB' in cost ? [cost.withB, cost.withoutB] : [])];
    for (const id of named) t.ok(ids.includes(id as never), `${id}: a scenario of the table`);
  }
  for (const cost of PAIR_COSTS) {
    const spec = SPECS.find((s) => s.id === cost.with)!;
    t.ok(spec.bringsAlong?.includes(cost.without), `--only ${cost.with} brings its twin ${cost.without}`);
  }
});
