// `npm start`'s build step: builds (npm run build) only when an input of the build changed since
// the last build, so a start without changes takes a moment instead of a full compile. The inputs
// are hashed (content, not modification times: a checkout back and forth rebuilds nothing), and
// the hash is written next to the output once a build succeeded. A fresh clone has no dist/ and
// no hash, so its first start builds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const INPUTS = ['src', 'console', 'scripts/build-console.mjs', 'scripts/copy-lua.mjs', 'tsconfig.json', 'package.json', 'package-lock.json'];

/** The input's files (a directory's, recursively), relative to the root; none if it is absent. */
function files(root, input) {
  const full = join(root, input);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [input];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

export function inputsHash(root) {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => files(root, input)).sort()) hash.update(`${file}\0`).update(readFileSync(join(root, file))).update('\0');
  return hash.digest('hex');
}

/** Builds `root` unless its inputs are those of the last build; `--stamp` only records them. */
function main(root, stampOnly) {
  const stamp = join(root, 'dist', '.build-inputs.sha256');
  const wanted = inputsHash(root);
  if (stampOnly) return writeFileSync(stamp, `${wanted}\n`);
  const built = existsSync(stamp) && existsSync(join(root, 'dist', 'main.js')) ? readFileSync(stamp, 'utf8').trim() : undefined;
  if (built === wanted) {
    console.log('authgate: the build is up to date (npm run build forces one)');
    return;
  }
  // npm run build records the inputs itself (its last step is this script with --stamp).
  const npm = process.env.npm_execpath;
  const build = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(fileURLToPath(new URL('..', import.meta.url)), process.argv.includes('--stamp'));
