// Rewrites the settings table of docs/configuration.md from src/config/settings.ts (through the
// build in dist/); test/config/settings.test.ts fails while the document is behind the table.
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../dist/config/settings-doc.js';

const path = new URL('../docs/configuration.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withSettingsTable(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(after === before ? 'docs/configuration.md: settings table up to date\n' : 'docs/configuration.md: settings table rewritten\n');
