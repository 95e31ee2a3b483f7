/**
 * Development logs are readable at a terminal (pino-pretty), and JSON everywhere else: a
 * development start whose stdout is a pipe, as in the tests and behind a log shipper, and
 * production always. The terminal is a real pseudo-terminal, made by util-linux's `script`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { eventually } from '../helpers/gateway.js';
import { freePort } from '../helpers/redis.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const hasScript = spawnSync('script', ['--version']).status === 0;

async function start(t: Test, env: Record<string, string>, terminal: boolean) {
  const ports = { AUTHGATE_PORT: String(await freePort()), AUTHGATE_OPS_PORT: String(await freePort()), AUTHGATE_HOST: '127.0.0.1', AUTHGATE_OPS_HOST: '127.0.0.1' };
  const command = terminal ? ['script', ['-qfec', `'${process.execPath}' '${MAIN}'`, '/dev/null']] as const : [process.execPath, [MAIN]] as const;
  // Its own process group, so the teardown ends `script` and the gateway under it together.
  const child = spawn(command[0], [...command[1]], { env: { PATH: process.env['PATH'] ?? '', ...ports, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  t.ok(await eventually(async () => output.includes('authgate started'), 30_000, 50), `started ${output.slice(-500)}`);
  return () => output;
}

t.test('development at a terminal: readable lines, level names, no JSON', { skip: hasScript ? false : 'util-linux script is not installed' }, async (t) => {
  const output = await start(t, {}, true);
  t.match(output(), /INFO.*authgate started/, 'the level by name, then the message');
  t.notOk(output().includes('"level":30'), 'not JSON');
});

t.test('development into a pipe: JSON lines', async (t) => {
  const output = await start(t, {}, false);
  const line = output().split('\n').find((l) => l.includes('authgate started'))!;
  t.match(JSON.parse(line), { level: 30, msg: 'authgate started' });
});
