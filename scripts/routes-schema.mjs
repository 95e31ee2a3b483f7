// Writes config/routes.schema.json from src/route-table/schema.ts (through the build in dist/);
// test/route-table/schema.test.ts fails while the published file is behind the schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { routesSchemaJson } from '../dist/route-table/schema.js';

const path = new URL('../config/routes.schema.json', import.meta.url);
const after = `${JSON.stringify(routesSchemaJson(), null, 2)}\n`;
let before = '';
try {
  before = readFileSync(path, 'utf8');
} catch {
  // not written yet
}
if (after !== before) writeFileSync(path, after);
process.stdout.write(after === before ? 'config/routes.schema.json: up to date\n' : 'config/routes.schema.json: rewritten\n');
