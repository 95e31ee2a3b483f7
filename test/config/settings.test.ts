import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settings } from '../../src/config/settings.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const loadSource = readFileSync(`${root}src/config/load.ts`, 'utf8');
const names = settings.map((s) => s.name as string);

t.test('setting names are unique and documented', async (t) => {
  t.equal(new Set(names).size, names.length);
  for (const setting of settings) t.ok(setting.doc.trim().length > 10, `${setting.name} has a doc`);
});

t.test('every AUTHGATE_* name load.ts reads is in settings', async (t) => {
  const read = new Set([...loadSource.matchAll(/'(AUTHGATE_[A-Z_]+)'/g)].map((m) => m[1]!));
  t.ok(read.size >= 20, `found ${read.size} names in load.ts`);
  for (const name of read) t.ok(names.includes(name), `${name} is in settings`);
  // And the other way: a setting nobody reads is documentation of nothing.
  for (const name of names) {
    if (name.startsWith('AUTHGATE_')) t.ok(read.has(name), `${name} is read by load.ts`);
    else t.ok(loadSource.includes(`'${name}'`), `${name} is read by load.ts`);
  }
});

t.test('every setting appears in the README configuration table', async (t) => {
  const path = `${root}README.md`;
  t.ok(existsSync(path), 'README.md exists');
  if (!existsSync(path)) return;
  const rows = readFileSync(path, 'utf8').split('\n').filter((line) => /^\s*\|/.test(line));
  const cells = (row: string) => row.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim().replace(/^`|`$/g, ''));
  for (const setting of settings) {
    const word = new RegExp(`(?<![A-Z_])${setting.name}(?![A-Z_])`);
    t.ok(rows.some((row) => word.test(row)), `${setting.name} is in a README table row`);
    // settings.ts is the single source of that table: its row says the same default and doc.
    const own = rows.filter((row) => cells(row)[0] === setting.name);
    t.equal(own.length, 1, `${setting.name} has one row of its own`);
    const row = own[0];
    if (row === undefined) continue;
    const [, shownDefault, shownDoc] = cells(row);
    const expectedDefault = 'default' in setting ? setting.default : '—';
    t.equal(shownDefault, expectedDefault.replace(/^`|`$/g, ''), `${setting.name} default`);
    t.equal(shownDoc, setting.doc.replace(/^`|`$/g, ''), `${setting.name} doc`);
  }
});
