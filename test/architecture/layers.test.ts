import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Imports run down a request's path, never back (docs/architecture.md, "The shape"; issue 48):
 * `http/` holds the servers and sits on top of the pipeline, so nothing below it imports it;
 * only the entry points that build and start the servers do (main.ts, gateway*.ts, the CLI).
 * What both request paths (the fastify servers and the fast lane, the authorization port) use
 * lives in `request/`, below both, which in turn imports none of the layers that use it.
 */
const src = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `from '…'` of import/export statements (multi-line ones too), bare `import '…'` and `import('…')`. */
const IMPORT = /\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Each relative import of a file, as a path below src/ (`http/cors.js`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const from = posix.dirname(relative(src, file).split(sep).join('/'));
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2] ?? match[3]!;
    if (specifier.startsWith('.')) found.push(posix.normalize(posix.join(from, specifier)));
  }
  return found;
}

const files = sourceFiles(src).map((file) => ({ name: relative(src, file).split(sep).join('/'), imports: importsOf(file) }));

/** The entry points: they build the servers (gateway*.ts), start them (main.ts) or run beside them (cli/). */
const ENTRY = /^(main\.ts|gateway[^/]*\.ts|cli\/)/;

t.test('the import reader sees the shapes the code uses', async (t) => {
  const dir = join(dirname(src), 'src', 'proxy');
  t.ok(files.length > 100, 'src/ was read');
  t.same(
    [
      ...`import type { A } from '../http/a.js';\nimport {\n  b,\n} from "../http/b.js";\nimport '../http/c.js';\nexport { d } from '../http/d.js';\nconst e = await import('../http/e.js');`.matchAll(IMPORT),
    ].map((m) => m[1] ?? m[2] ?? m[3]),
    ['../http/a.js', '../http/b.js', '../http/c.js', '../http/d.js', '../http/e.js'],
  );
  t.equal(posix.normalize(posix.join(relative(src, dir), '../http/cors.js')), 'http/cors.js');
});

t.test('nothing outside http/ and the entry points imports http/', async (t) => {
  const upward = files
    .filter((file) => !file.name.startsWith('http/') && !ENTRY.test(file.name))
    .flatMap((file) => file.imports.filter((target) => target.startsWith('http/')).map((target) => `${file.name} imports ${target}`));
  t.same(upward, [], 'http/ (the servers) sits on top of the pipeline');
});

t.test('request/ imports none of the layers that use it', async (t) => {
  const above = /^(http|proxy|edge-authz|routes)\//;
  const below = files.filter((file) => file.name.startsWith('request/'));
  t.ok(below.length > 0, 'request/ exists');
  const upward = below
    .flatMap((file) => file.imports.filter((target) => above.test(target)).map((target) => `${file.name} imports ${target}`));
  t.same(upward, [], 'request/ is below both request paths');
});
