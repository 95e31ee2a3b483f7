// The console's static files, after tsc compiled its TypeScript into dist/console: the page and its
// style sheet beside the scripts, and the bundle's size measured gzipped (the issue: under 100 KiB).
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const source = new URL('../console/', import.meta.url);
const target = new URL('../dist/console/', import.meta.url);
for (const file of ['index.html', 'reset.html', 'console.css']) copyFileSync(new URL(file, source), new URL(file, target));

const LIMIT = 100 * 1024;
let gzipped = 0;
for (const file of readdirSync(target)) gzipped += gzipSync(readFileSync(new URL(file, target)), { level: 9 }).length;
const line = `console: ${readdirSync(target).length} files, ${(gzipped / 1024).toFixed(1)} KiB gzipped (limit ${LIMIT / 1024} KiB)`;
if (gzipped > LIMIT) {
  console.error(`${line}: too large`);
  process.exit(1);
}
console.log(line);
