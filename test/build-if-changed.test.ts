/**
 * `npm start` builds only when the build's inputs changed (scripts/build-if-changed.mjs): a start
 * without changes skips the compile, a changed source rebuilds, and a fresh clone (no dist/)
 * builds. The hash follows content, not modification times.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
// @ts-expect-error: a plain .mjs build script, without types
import { inputsHash } from '../scripts/build-if-changed.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/build-if-changed.mjs');
const hash = inputsHash as (root: string) => string;

t.test('the inputs hash follows content: a touch changes nothing, an edit or a new file does', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'authgate-build-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'src/nested'), { recursive: true });
  writeFileSync(join(root, 'src/nested/a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'package.json'), '{}\n');
  const first = hash(root);
  utimesSync(join(root, 'src/nested/a.ts'), new Date(), new Date(Date.now() + 60_000));
  t.equal(hash(root), first, 'touched: the same');
  writeFileSync(join(root, 'src/nested/a.ts'), 'export const a = 2;\n');
  const edited = hash(root);
  t.not(edited, first, 'edited: another');
  writeFileSync(join(root, 'src/b.ts'), '');
  t.not(hash(root), edited, 'a new file: another');
});

t.test('in this checkout, built by npm run build: a start does not build again', async (t) => {
  const main = join(ROOT, 'dist/main.js');
  const before = statSync(main).mtimeMs;
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, npm_execpath: '' } });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /the build is up to date/);
  t.equal(statSync(main).mtimeMs, before, 'dist/ untouched');
});
