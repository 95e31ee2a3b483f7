/**
 * authgate_build_info (issue 27): one series, value 1, saying which build runs: the package's
 * version, the commit it was built from (written into dist/build-info.json by `npm run build`),
 * and the Node version running it.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { send, startGateway } from '../helpers/gateway.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const git = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' });

t.test('authgate_build_info{version, commit, node} 1', async (t) => {
  const info = JSON.parse(readFileSync(new URL('../../dist/build-info.json', import.meta.url), 'utf8')) as { version: string; commit: string };
  t.equal(info.version, pkg.version, 'the build wrote the package version');
  if (git.status === 0) t.equal(info.commit, git.stdout.trim(), 'and the commit it was built from');
  else t.equal(info.commit, 'unknown', 'no git: unknown');

  const gw = await startGateway(t);
  const text = (await send(`${gw.opsUrl}/metrics`)).body;
  const lines = text.split('\n').filter((l) => l.startsWith('authgate_build_info'));
  t.equal(lines.length, 1, 'one series');
  const m = /^authgate_build_info\{(.*)\} 1$/.exec(lines[0] ?? '');
  t.ok(m, `value 1: ${lines[0]}`);
  t.match(m?.[1], `version="${pkg.version}"`);
  t.match(m?.[1], `commit="${info.commit}"`);
  t.match(m?.[1], `node="${process.version}"`);
  t.match(text, /# TYPE authgate_build_info gauge/);
});
