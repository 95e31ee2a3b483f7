/**
 * The README's "Walk-through with curl" (issue 27), pasted as written into bash against the built
 * gateway started as the README says (development mode, the known admin token, the bundled example
 * upstream), each step's output checked. Only the ports differ: localhost:8080 and :9090 become
 * the test's free ports.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startGatewayProcess } from './helpers/gateway-process.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The second ```sh block of the section: the one pasted "in another terminal". */
function walkthrough(): string {
  const section = README.slice(README.indexOf('## Walk-through with curl'));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  if (blocks.length < 2) throw new Error('the walk-through has no second sh block');
  return blocks[1]!;
}

/** The JSON documents in a step's output: curl prints each answer without a newline after it. */
function jsonValues(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)) as Record<string, unknown>);
  }
  return out;
}

const curl = spawnSync('curl', ['--version']);
t.test('the README walk-through runs top to bottom', { skip: curl.error ? 'curl not installed: the README walk-through is not run' : false }, async (t) => {
  const startLine = /```sh\n(.*)\n```/.exec(README.slice(README.indexOf('## Walk-through with curl')))?.[1] ?? '';
  t.match(startLine, /AUTHGATE_ADMIN_TOKEN=(\S+) npm start/, 'the gateway is started with a known admin token');
  const adminToken = /AUTHGATE_ADMIN_TOKEN=(\S+)/.exec(startLine)![1]!;
  const gw = await startGatewayProcess({ AUTHGATE_ADMIN_TOKEN: adminToken, NODE_ENV: 'development', AUTHGATE_JWT_SECRET: '' });
  t.teardown(() => {
    gw.child.kill('SIGTERM');
  });

  // A marker before each numbered step, so each step's output can be told apart.
  const block = walkthrough();
  const script = block
    .split('\n')
    .map((line) => {
      const step = /^# (\d+)\. /.exec(line);
      return step ? `echo "@@step ${step[1]}"\n${line}` : line;
    })
    .join('\n')
    .replaceAll('localhost:8080', new URL(gw.publicUrl).host)
    .replaceAll('localhost:9090', new URL(gw.opsUrl).host);
  const res = spawnSync('bash', ['-e', '-u', '-o', 'pipefail', '-c', script], { encoding: 'utf8', timeout: 60_000 });
  t.equal(res.status, 0, `the block runs to its end\n${res.stderr}`);
  const steps = new Map<string, string>();
  for (const part of res.stdout.split('@@step ').slice(1)) {
    const newline = part.indexOf('\n');
    steps.set(part.slice(0, newline), part.slice(newline + 1));
  }
  t.strictSame([...steps.keys()], ['1', '2', '3', '4', '5'], 'every step ran');
  t.notMatch(res.stdout, /"status":\s*[45]\d\d/, 'no step was refused (no problem body anywhere)');

  const step = (n: string) => jsonValues(steps.get(n) ?? '');
  t.match(step('1'), [{ id: /^org_[0-9a-f]+$/, name: 'Acme', email: 'owner@acme.test' }], '1: the organization is created');
  t.equal(steps.get('2')?.trim(), '', '2: the login token is captured, nothing printed');
  const three = step('3');
  t.match(three, [{ id: /^key_/, apiKey: /^agk_test_/ }, { name: 'CI', scopes: ['accounts:read'] }], '3: the key with its secret, and the named read-only key');
  const four = step('4');
  t.equal(four.length, 2, '4: two answers');
  t.strictSame(four[1], { id: (step('1')[0] as { id: string }).id, name: 'Acme', email: 'owner@acme.test' }, '4: the key works, and the upstream names the organization');
  const five = step('5');
  t.equal(five.length, 2, '5: the listing and the roll print; the revocation and the logout answer 204, with nothing to print');
  t.match(five[0], { keys: [{}, {}], nextCursor: null }, '5: both keys listed');
  t.notMatch(JSON.stringify(five[0]), /"apiKey"/, '5: never a secret in the listing');
  t.match(five[1], { apiKey: /^agk_test_/, rolled: { id: (three[0] as { id: string }).id } }, '5: the key captured in step 3 rolled');
  const revoked = await fetch(`${gw.publicUrl}/accounts`, { headers: { authorization: `Bearer ${(three[0] as { apiKey: string }).apiKey}`, 'user-agent': 'authgate-tests/1.0' } });
  t.equal(revoked.status, 401, '5: the rolled key was revoked');
});
