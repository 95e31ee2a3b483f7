/**
 * The settings table as people read it: the table of docs/configuration.md (checked against this
 * by test/config/settings.test.ts, rewritten by `npm run docs:settings`) and `authgate config`.
 * Rendered from config/settings.ts only; never from an environment, so no value is ever shown.
 */
import { describeKind } from './setting-kinds.js';
import { settings, type SettingSpec } from './settings.js';

export type SettingRow = Readonly<{ name: string; default: string; range: string; secret: boolean; doc: string }>;

/** The default as it reads; `—` where there is none. */
export function describeDefault(spec: SettingSpec): string {
  if (spec.defaultDoc !== undefined) return spec.defaultDoc;
  if (spec.default === undefined) return '—';
  // An enum's values are words of the configuration; quoted as the docs quote them.
  const show = (value: string | number | boolean) => (spec.type.kind === 'enum' ? `\`${value}\`` : String(value));
  if (spec.productionDefault !== undefined) return `${show(spec.productionDefault)} under NODE_ENV=production, else ${show(spec.default)}`;
  return show(spec.default);
}

export function settingRows(): SettingRow[] {
  return settings.map((spec: SettingSpec) => ({
    name: spec.name,
    default: describeDefault(spec),
    range: describeKind(spec.type),
    secret: spec.secret === true,
    doc: spec.doc,
  }));
}

export const MARKDOWN_HEADER = '| Setting | Default | Accepts | Secret | Meaning |';

/** The table of docs/configuration.md, header included, one line per setting. */
export function settingsMarkdown(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const lines = settingRows().map((row) =>
    `| \`${row.name}\` | ${cell(row.default)} | ${cell(row.range)} | ${row.secret ? 'yes' : ''} | ${cell(row.doc)} |`,
  );
  return [MARKDOWN_HEADER, '|---|---|---|---|---|', ...lines].join('\n');
}

/** For a terminal: one block per setting, plain text. */
export function settingsText(): string {
  const plain = (text: string) => text.replaceAll('`', '');
  return settingRows()
    .map((row) => {
      const facts = [`default: ${plain(row.default)}`, `accepts: ${plain(row.range)}`, ...(row.secret ? ['secret'] : [])];
      return `${row.name}\n  ${facts.join('; ')}\n  ${plain(row.doc)}\n`;
    })
    .join('\n');
}

/** The heading of the section of docs/configuration.md that holds the table. */
export const SETTINGS_SECTION = '## Settings';

/**
 * `doc` (docs/configuration.md) with the table under "## Settings" replaced by settingsMarkdown();
 * unchanged when it is up to date. The table is the first run of `|` lines in that section.
 */
export function withSettingsTable(doc: string): string {
  const lines = doc.split('\n');
  const section = lines.findIndex((line) => line.trim() === SETTINGS_SECTION);
  if (section < 0) throw new Error(`docs/configuration.md has no "${SETTINGS_SECTION}" section`);
  const end = lines.findIndex((line, i) => i > section && line.startsWith('## '));
  const stop = end < 0 ? lines.length : end;
  const first = lines.findIndex((line, i) => i > section && i < stop && line.startsWith('|'));
  if (first < 0) throw new Error(`the "${SETTINGS_SECTION}" section of docs/configuration.md has no table`);
  let last = first;
  while (last + 1 < stop && lines[last + 1]!.startsWith('|')) last++;
  return [...lines.slice(0, first), settingsMarkdown(), ...lines.slice(last + 1)].join('\n');
}
