import { BUILTIN_ROUTES_FILE } from '../../src/route-table/builtin.js';
import type { RoutesFile } from '../../src/route-table/types.js';

/** The built-in file with two plans (issue 47): `basic` (the default) reads accounts, `full` may do everything. */
export const PLANS_FILE: RoutesFile = {
  ...BUILTIN_ROUTES_FILE,
  plans: {
    basic: { description: 'Reads only', scopes: ['accounts:read'] },
    full: { scopes: 'all' },
  },
  defaultPlan: 'basic',
};
