// `npm test`'s pretest step, after the build: rebuilds tap's test class (`tap build`) when it was
// not built for package.json's plugin list (`"plugin": ["!@tapjs/typescript"]`), as on a fresh
// `npm ci`. tap would rebuild it itself, but only after it has computed the test processes'
// arguments from the stale class: the whole first run then loads @tapjs/typescript's ts-node
// loader in every test file (then in front of tsx; now of Node's own type stripping), three to five times the CPU per file (measured:
// 5.6 s against 1.1 s for a small unit file, 24.7 s against 8.3 s for a gateway file), which made
// a fresh clone's suite half again as slow as a second run. Nothing to do when the class matches.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TapConfig } from '@tapjs/config';

/** The plugin signature the installed test class was built with (tap's own check compares it). */
function builtSignature() {
  try {
    const source = readFileSync(fileURLToPath(import.meta.resolve('@tapjs/test/test-built')), 'utf8');
    return /^export const signature = `([^`]*)`/m.exec(source)?.[1];
  } catch {
    return undefined; // unreadable: build, as tap would
  }
}

const config = await TapConfig.load();
if (builtSignature() !== config.pluginSignature) {
  const tap = fileURLToPath(new URL('../node_modules/tap/dist/esm/run.mjs', import.meta.url));
  const result = spawnSync(process.execPath, [tap, 'build'], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`tap build failed (${result.signal ?? result.status})`);
    process.exit(1);
  }
}
