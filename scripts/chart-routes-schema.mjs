// Writes the routes file's JSON Schema (src/route-table/schema.ts, from the build: run
// `npm run build` first) into the chart's values.schema.json as definitions.routesFile, so that
// `helm install|upgrade|template|lint` refuse a misspelt key of routes.file.
// test/charts/routes.test.ts fails while the copy is not current.
//
// Helm checks schemas with Go's regular expressions (RE2: no lookahead): a pattern RE2 cannot
// read is replaced by the weaker one beside it; what only the full pattern refuses (a dot
// segment in a path) is refused by the pre-install/pre-upgrade `authgate routes check` Job.
import { readFileSync, writeFileSync } from 'node:fs';
import { routesSchemaJson } from '../dist/route-table/schema.js';

/** Patterns of the routes schema that RE2 cannot read, and what the chart checks instead. */
export const RE2_PATTERNS = {
  "^(?:/|(?:/(?!\\.\\.?(?:/|$))[A-Za-z0-9\\-_~!$&'()+,=:@.]+)+)$": "^(?:/|(?:/[A-Za-z0-9\\-_~!$&'()+,=:@.]+)+)$",
};

export function chartRoutesSchema() {
  const { $schema: _ignored, ...schema } = routesSchemaJson();
  return JSON.parse(JSON.stringify(schema), (key, value) => (key === 'pattern' && typeof value === 'string' && value in RE2_PATTERNS ? RE2_PATTERNS[value] : value));
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const path = new URL('../charts/authgate/values.schema.json', import.meta.url);
  const values = JSON.parse(readFileSync(path, 'utf8'));
  values.definitions.routesFile = chartRoutesSchema();
  writeFileSync(path, `${JSON.stringify(values, null, 2)}\n`);
}
