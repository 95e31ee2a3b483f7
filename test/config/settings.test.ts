import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Env } from '../../src/config/load.js';
import { parseKind } from '../../src/config/setting-kinds.js';
import { settingsMarkdown, withSettingsTable } from '../../src/config/settings-doc.js';
import { settings, unknownSettings, type SettingKind } from '../../src/config/settings.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
// load.ts and the parts it lends its reader to (config/redis-tls.ts).
const loadSource = ['load.ts', 'redis-store.ts', 'redis-tls.ts', 'tls.ts', 'identity-keys.ts', 'shipped-secrets.ts', 'notices-and-cors.ts', 'webauthn.ts'].map((file) => readFileSync(`${root}src/config/${file}`, 'utf8')).join('\n');
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

t.test('every default in the table is accepted by its own kind', async (t) => {
  for (const setting of settings) {
    for (const value of ['default' in setting ? setting.default : undefined, 'productionDefault' in setting ? setting.productionDefault : undefined]) {
      if (value === undefined) continue;
      const parsed = parseKind(setting.type, String(value));
      t.same(parsed, { ok: true, value }, `${setting.name}: ${String(value)}`);
    }
  }
});

/** A value each kind refuses (undefined: the kind accepts anything). */
function badValue(type: SettingKind): string | undefined {
  switch (type.kind) {
    case 'integer':
      return String(type.max + 1);
    case 'enum':
      return 'not-one-of-them';
    case 'text':
    case 'text-list':
      // A blank value is an unset one: a minimum of 1 is met by every value that is read at all.
      return type.minLength === undefined || type.minLength <= 1 ? undefined : 'x';
    case 'http-url':
      return 'ftp://upstream';
    case 'redis-url':
      return 'redis.internal:6379';
    case 'host-port-list':
      return 'no-port';
    case 'dns-name':
      return '10.0.0.1';
    case 'trust-proxy':
      return 'maybe';
    case 'file':
      return undefined;
  }
}

t.test('load.ts checks each setting by its kind in the table, with the table\'s range in the error', async (t) => {
  // Sentinels over TLS: the configuration in which every setting is read (some only apply there).
  const base: Env = { AUTHGATE_REDIS_SENTINELS: 's1:26379', AUTHGATE_REDIS_TLS: 'on' };
  let checked = 0;
  for (const setting of settings) {
    const bad = badValue(setting.type);
    if (bad === undefined) continue;
    const parsed = parseKind(setting.type, bad);
    if (parsed.ok) {
      t.fail(`${setting.name}: ${bad} should be refused by its kind`);
      continue;
    }
    const env = setting.name in base ? { ...base, AUTHGATE_REDIS_CLUSTER_NODES: 'c1:7000', AUTHGATE_REDIS_SENTINELS: undefined, [setting.name]: bad } : { ...base, [setting.name]: bad };
    const result = loadConfig(env);
    t.same(result.ok ? [] : result.errors.filter((e) => e.startsWith(`${setting.name} `)), [`${setting.name} ${parsed.problem}`], setting.name);
    checked++;
  }
  t.ok(checked >= 25, `${checked} settings refused by their kind`);
  const integer = settings.find((s) => s.name === 'AUTHGATE_TOKEN_TTL_SECONDS')!;
  t.same(parseKind(integer.type, '0'), { ok: false, problem: 'must be a whole number from 1 to 86400' }, 'the range is the table\'s');
});

t.test('docs/configuration.md carries the table rendered from the settings table, up to date', async (t) => {
  const path = `${root}docs/configuration.md`;
  t.ok(existsSync(path), 'docs/configuration.md exists');
  if (!existsSync(path)) return;
  const doc = readFileSync(path, 'utf8');
  t.ok(doc.includes(settingsMarkdown()), 'docs/configuration.md carries the rendered table');
  t.equal(withSettingsTable(doc), doc, 'up to date: `npm run docs:settings` rewrites it');
  const rows = doc.split('\n').filter((line) => /^\s*\|/.test(line));
  for (const setting of settings) {
    const word = new RegExp(`(?<![A-Z_])${setting.name}(?![A-Z_])`);
    t.ok(rows.some((row) => word.test(row)), `${setting.name} is in a table row of docs/configuration.md`);
    t.equal(rows.filter((row) => row.startsWith(`| \`${setting.name}\` |`)).length, 1, `${setting.name} has one row of its own`);
  }
});

t.test('withSettingsTable rewrites a stale table in place and leaves the rest of the page alone', async (t) => {
  const stale = ['# Configuration', '', 'Intro.', '', '## Settings', '', '| Setting | Default |', '|---|---|', '| `OLD` | 1 |', '', 'After.', '', '## Production', '', '| not | this |', ''].join('\n');
  const fixed = withSettingsTable(stale);
  t.not(fixed, stale, 'a stale table is rewritten');
  t.ok(fixed.includes(settingsMarkdown()), 'with the rendered table');
  t.notOk(fixed.includes('`OLD`'), 'the stale rows are gone');
  t.ok(fixed.startsWith('# Configuration\n\nIntro.\n\n## Settings\n\n| Setting |'), 'what comes before stays');
  t.ok(fixed.endsWith('\nAfter.\n\n## Production\n\n| not | this |\n'), 'what comes after stays, another section\'s table too');
  t.equal(withSettingsTable(fixed), fixed, 'rewriting again changes nothing');
  t.throws(() => withSettingsTable('# Configuration\n\n## Configuration\n\n| a |\n'), /no "## Settings" section/, 'a page without the section is an error, not a silent no-op');
});

t.test('unknownSettings: AUTHGATE_* names that are no setting, for the start-up warning', async (t) => {
  t.same(unknownSettings({ AUTHGATE_PORT: '1', AUTHGATE_JWT_TTL_SECONDS: '5', AUTHGATE_ENV: 'x', AUTHGATE_ADMIN_URL: 'http://x', PATH: '/bin', NODE_ENV: 'production' }), ['AUTHGATE_ENV', 'AUTHGATE_JWT_TTL_SECONDS'], 'misspellings, not the CLI\'s AUTHGATE_ADMIN_URL nor other variables');
  t.same(unknownSettings(Object.fromEntries(settings.map((s) => [s.name, 'x']))), [], 'every setting of the table is known');
});
