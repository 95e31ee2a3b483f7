// The console's static files, after tsc compiled its TypeScript into dist/console: the page and its
// style sheet beside the scripts, and the bundle's size measured gzipped (the issue: under 100 KiB).
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const source = new URL('../console/', import.meta.url);
const target = new URL('../dist/console/', import.meta.url);
for (const file of ['index.html', 'reset.html', 'console.css']) copyFileSync(new URL(file, source), new URL(file, target));

// Libraries the console's scripts import, vendored as each ships its own browser build (no
// bundler): one file each, beside the scripts, so the strict CSP's script-src 'self' covers them
// and nothing is fetched from elsewhere. console/src/*.d.ts give tsc their types.
const modules = new URL('../node_modules/', import.meta.url);
const VENDORED = [
  // uqr's ESM build: one file, no imports. Its licence notice travels with it.
  { from: 'uqr/dist/index.mjs', to: 'uqr.js', notice: '/* uqr (https://github.com/unjs/uqr), MIT License: Copyright (c) Project Nayuki, Copyright (c) 2023 Anthony Fu */\n' },
  // @simplewebauthn/browser's single-file bundle (its ESM build is twenty files in folders); it carries its own banner.
  { from: '@simplewebauthn/browser/dist/bundle/index.umd.min.js', to: 'simplewebauthn-browser.js', notice: '' },
  // uPlot's minified build (22 KiB gzipped; its ESM build is the unminified source): it declares
  // `var uPlot`, made a module's default export here. It carries its own banner. Its style sheet beside it.
  { from: 'uplot/dist/uPlot.iife.min.js', to: 'uplot.js', notice: '/* uPlot, MIT License: Copyright (c) 2022 Leon Sorokin */\n', append: '\nexport default uPlot;\n' },
  { from: 'uplot/dist/uPlot.min.css', to: 'uplot.css', notice: '/* uPlot, MIT License: Copyright (c) 2022 Leon Sorokin */\n' },
];
for (const { from, to, notice, append = '' } of VENDORED) writeFileSync(new URL(to, target), notice + readFileSync(new URL(from, modules), 'utf8') + append);

const LIMIT = 100 * 1024;
let gzipped = 0;
for (const file of readdirSync(target)) gzipped += gzipSync(readFileSync(new URL(file, target)), { level: 9 }).length;
const line = `console: ${readdirSync(target).length} files, ${(gzipped / 1024).toFixed(1)} KiB gzipped (limit ${LIMIT / 1024} KiB)`;
if (gzipped > LIMIT) {
  console.error(`${line}: too large`);
  process.exit(1);
}
console.log(line);
