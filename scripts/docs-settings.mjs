// Rewrites the README's configuration table from src/config/settings.ts (through the build in
// dist/); test/config/settings.test.ts fails while the README is behind the table.
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../dist/config/settings-doc.js';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withSettingsTable(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(after === before ? 'README.md: configuration table up to date\n' : 'README.md: configuration table rewritten\n');
