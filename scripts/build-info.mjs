// Writes dist/build-info.json ({version, commit}) at the end of `npm run build`: what the gateway's
// authgate_build_info metric reports. The commit is GIT_COMMIT when set (an image build without
// .git passes it as a build argument), else the checkout's HEAD, else "unknown".
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

function commit() {
  const given = process.env.GIT_COMMIT?.trim();
  if (given) return /^[0-9a-f]{7,40}$/i.test(given) ? given.slice(0, 12).toLowerCase() : 'unknown';
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

mkdirSync(new URL('dist/', root), { recursive: true });
writeFileSync(new URL('dist/build-info.json', root), `${JSON.stringify({ version, commit: commit() })}\n`);
