// Marks the package's bin (dist/cli/authgate.js, package.json "bin") executable after `tsc` wrote
// it: tsc writes files without the execute bit, and `npx authgate …` in a checkout (as
// docs/configuration.md's production start runs it) executes the file itself, so without the bit a
// fresh clone's first `npx authgate config check` fails with "Permission denied". An installed
// package gets the bit from npm; a checkout only from here.
import { chmodSync, readFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { bin } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
for (const path of Object.values(bin)) chmodSync(new URL(path, root), 0o755);
