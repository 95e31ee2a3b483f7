import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { settingRows } from '../../src/config/settings-doc.js';
import { PasswordInputError, PromptInterrupted, promptHidden, promptNewPassword, readFirstLine } from '../../src/cli/password-input.js';
import { ADMIN_TOKEN, send, startGateway, UA } from '../helpers/gateway.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';

/**
 * The authgate CLI as shipped: dist/cli/authgate.js (built by `npm test`'s pretest) run with
 * this Node against a real gateway on free ports, the password piped on stdin.
 */

const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Everything the CLI printed in this file, to check at the end that no secret ever showed. */
const printed: string[] = [];

function runCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; stdin?: string; keepStdinOpen?: boolean } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    // Not process.env: an AUTHGATE_* of the developer's shell must not leak into the run.
    const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
    for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => {}); // the CLI may exit (or stop reading) before the pipe drains
    // Bounded, and generous: on a loaded machine a Node start alone takes seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!options.keepStdinOpen) child.stdin.destroy();
      printed.push(stdout, stderr);
      resolve({ code, signal, stdout, stderr });
    });
    if (options.stdin !== undefined) child.stdin.write(options.stdin);
    if (options.keepStdinOpen) {
      // Closed only once the CLI has exited: it must not wait for EOF after the first line.
      child.on('exit', () => child.stdin.destroy());
    } else {
      child.stdin.end();
    }
  });
}

/**
 * `authgate audit tail --follow` as a child: its output so far, a wait for a condition on it
 * (checked on each chunk, bounded, over early when the child exits), and a stop that interrupts
 * it and waits for its exit (SIGKILL after a bound), so no CLI outlives its test.
 */
function startFollow(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  let stopped: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    lines: () => stdout.split('\n').filter(Boolean),
    waitFor(check: () => boolean, ms = 30_000): Promise<boolean> {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          child.stdout.off('data', onData);
          resolve(check());
        };
        const onData = () => {
          if (check()) done();
        };
        const timer = setTimeout(done, ms);
        child.stdout.on('data', onData);
        void exited.then(done);
        if (check()) done();
      });
    },
    stop() {
      stopped ??= (async () => {
        printed.push(stdout, stderr);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const result = await exited;
        clearTimeout(timer);
        return result;
      })();
      return stopped;
    },
  };
}

/**
 * Several runs that do not depend on each other (usage errors, mostly), a few at a time: on a
 * loaded machine each run's wall time is mostly waiting for a core, and the file's time is
 * the sum of its runs. Results in the order of `cases`.
 */
async function runEach(cases: string[][], options: Parameters<typeof runCli>[1] = {}): Promise<Array<[string[], Run]>> {
  const results: Array<[string[], Run]> = [];
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const runs = await Promise.all(batch.map((args) => runCli(args, options)));
    batch.forEach((args, j) => results.push([args, runs[j]!]));
  }
  return results;
}

let emailCounter = 0;
const freshEmail = () => `cli-${++emailCounter}-${process.pid}@example.test`;
const PASSWORDS = ['cli-password-Alpha-0001', 'cli-password-Bravo-0002', 'cli-password-Charlie-0003', 'cli-password-Delta-0004'];

async function login(publicUrl: string, email: string, password: string) {
  return send(`${publicUrl}/auth/login`, {
    method: 'POST',
    headers: { ...UA, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

t.before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p tsconfig.json\` (npm test does it in pretest)`);
});

t.test('help and usage errors', async (t) => {
  for (const [args, run] of await runEach([['--help'], ['-h'], ['help'], ['org', '--help']])) {
    t.equal(run.code, 0, `${args.join(' ')} exits 0`);
    t.match(run.stdout, /^Usage: authgate <command>/, `${args.join(' ')} prints the usage on stdout`);
    t.match(run.stdout, /org create --name <name> --email <email>/);
    t.match(run.stdout, /keys list --org <id>/);
    t.match(run.stdout, /keys revoke --org <id> --key <keyId>/);
    t.equal(run.stderr, '');
  }

  const version = await runCli(['--version']);
  t.equal(version.code, 0);
  t.equal(version.stdout, `authgate-cli ${VERSION}\n`);

  for (const [args, run] of await runEach([['frobnicate'], [], ['org'], ['org', 'frobnicate']])) {
    t.equal(run.code, 2, `'${args.join(' ')}' exits 2`);
    t.equal(run.stdout, '', 'nothing on stdout');
    t.match(run.stderr, /^authgate: .+\n\nUsage: authgate <command>/, 'the reason, then the usage on stderr');
  }

  const unknownOption = await runCli(['org', 'get', 'x', '--frob']);
  t.equal(unknownOption.code, 2);
  t.match(unknownOption.stderr, /Unknown option '--frob'/);

  const missingEmail = await runCli(['org', 'create', '--name', 'Acme'], { env: { AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
  t.equal(missingEmail.code, 2);
  t.match(missingEmail.stderr, /--email/);

  const extra = await runCli(['org', 'get', 'a', 'extra-arg-XYZ'], { env: { AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
  t.equal(extra.code, 2, 'extra positionals are refused');
  t.notMatch(extra.stderr, 'extra-arg-XYZ', 'and not echoed');
});

t.test('against a real gateway', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_WEBAUTHN_RP_ID: 'localhost', AUTHGATE_WEBAUTHN_ORIGINS: 'http://localhost:8443' } });
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const email = freshEmail();
  const password = PASSWORDS[0]!;

  const created = await runCli(['org', 'create', '--name', 'Acme CLI', '--email', email], { env, stdin: `${password}\n` });
  t.equal(created.code, 0, `create exits 0 (stderr: ${created.stderr})`);
  t.equal(created.stderr, '');
  const org = JSON.parse(created.stdout) as { id: string; name: string; email: string; createdAt: string };
  t.match(org, { id: String, name: 'Acme CLI', email, createdAt: String });
  t.notOk('password' in org, 'the created org carries no password');

  const loggedIn = await login(gw.publicUrl, email, password);
  t.equal(loggedIn.status, 200, 'the new org logs in with the piped password, newline stripped');
  t.type(loggedIn.json().token, 'string');

  const duplicate = await runCli(['org', 'create', '--name', 'Acme again', '--email', email], { env, stdin: `${PASSWORDS[1]}\n` });
  t.equal(duplicate.code, 1, 'a taken e-mail exits 1');
  t.equal(duplicate.stdout, '');
  t.match(duplicate.stderr, /^authgate: 409 E-mail already registered/);

  const got = await runCli(['org', 'get', org.id], { env });
  t.equal(got.code, 0);
  t.same(JSON.parse(got.stdout), org, 'get prints the same org');
  const usage = await runCli(['org', 'usage', org.id, '--granularity', 'hour'], { env });
  t.equal(usage.code, 0, `org usage exits 0 (${usage.stderr})`);
  t.match(JSON.parse(usage.stdout), { granularity: 'hour', keyId: null, quota: null }, 'org usage prints the figures');
  t.equal(JSON.parse(usage.stdout).buckets.length, 24, 'the last 24 hours');
  const badUsage = await runCli(['org', 'usage', org.id, '--granularity', 'week'], { env });
  t.equal(badUsage.code, 1, 'a bad query exits 1');
  t.match(badUsage.stderr, /^authgate: 400 /);
  const mfa = await runCli(['org', 'mfa', org.id], { env });
  t.equal(mfa.code, 0, `org mfa exits 0 (${mfa.stderr})`);
  t.same(JSON.parse(mfa.stdout), { methods: [], totp: { enabled: false, pending: false }, recoveryCodesLeft: 0, passkeys: [] }, 'org mfa prints the status');
  const removeMfa = await runCli(['org', 'remove-mfa', org.id], { env });
  t.equal(removeMfa.code, 0);
  t.same(JSON.parse(removeMfa.stdout), { removed: false, sessionsEnded: 0 }, 'org remove-mfa prints what it did');
  // With a passkey (registered over HTTP by a software authenticator): shown, then removed.
  const session = (await login(gw.publicUrl, email, password)).json().token as string;
  const post = (path: string, body: unknown) => send(`${gw.publicUrl}${path}`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json', authorization: `Bearer ${session}` }, body: JSON.stringify(body) });
  const { options } = (await post('/auth/mfa/passkeys/registration', { currentPassword: password })).json();
  t.equal((await post('/auth/mfa/passkeys', { response: new SoftAuthenticator().register(options, { origin: 'http://localhost:8443' }), name: 'CLI key' })).status, 201, 'a passkey registered');
  const shown = JSON.parse((await runCli(['org', 'mfa', org.id], { env })).stdout) as { methods: string[]; passkeys: Array<{ name: string; createdAt: string; lastUsedAt: null }> };
  t.strictSame(shown.methods, ['recovery_code', 'passkey'], 'org mfa shows the passkey');
  t.match(shown.passkeys, [{ name: 'CLI key', createdAt: String, lastUsedAt: null }]);
  const removedAll = JSON.parse((await runCli(['org', 'remove-mfa', org.id], { env })).stdout) as { removed: boolean; sessionsEnded: number };
  t.equal(removedAll.removed, true, 'org remove-mfa removes it');
  t.ok(removedAll.sessionsEnded >= 1, 'and the sessions end');
  t.strictSame(JSON.parse((await runCli(['org', 'mfa', org.id], { env })).stdout).passkeys, [], 'none left');

  const deleted = await runCli(['org', 'delete', org.id], { env });
  t.equal(deleted.code, 0, 'delete exits 0');
  t.equal(deleted.stdout, '');
  t.equal(deleted.stderr, '');

  const gone = await runCli(['org', 'get', org.id], { env });
  t.equal(gone.code, 1, 'get after delete exits 1');
  t.match(gone.stderr, /^authgate: 404 Organization not found/);
  const goneAgain = await runCli(['org', 'delete', org.id], { env });
  t.equal(goneAgain.code, 1);
  t.match(goneAgain.stderr, /^authgate: 404 /);
  t.equal((await login(gw.publicUrl, email, password)).status, 401, 'the deleted org no longer logs in');
});

t.test('org limit against a real gateway: a limit, off, default; a malformed one is the gateway\'s 400', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const created = await runCli(['org', 'create', '--name', 'Limit CLI', '--email', freshEmail()], { env, stdin: `${PASSWORDS[1]!}\n` });
  t.equal(created.code, 0, `create exits 0 (stderr: ${created.stderr})`);
  const org = JSON.parse(created.stdout) as { id: string };
  for (const [given, rateLimit, effective] of [['100/1m', '100/60s', '100/60s'], ['off', 'off', null], ['default', null, null]] as const) {
    const set = await runCli(['org', 'limit', org.id, given], { env });
    t.equal(set.code, 0, `${given}: exits 0 (stderr: ${set.stderr})`);
    t.match(JSON.parse(set.stdout), { id: org.id, rateLimit, effectiveRateLimit: effective }, `${given}: printed as set`);
  }
  const bad = await runCli(['org', 'limit', org.id, '100 per minute'], { env });
  t.equal(bad.code, 1, 'refused by the gateway');
  t.match(bad.stderr, /400/);
  const missing = await runCli(['org', 'limit', org.id], { env });
  t.equal(missing.code, 2, 'a usage error without the limit');
  t.equal((await runCli(['org', 'limit', 'org_missing', '5/1m'], { env })).code, 1, 'an unknown organization: 404');
});

t.test('org key-limit against a real gateway: a count, default; a malformed one is the gateway\'s 400', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const created = await runCli(['org', 'create', '--name', 'Key limit CLI', '--email', freshEmail()], { env, stdin: `${PASSWORDS[1]!}\n` });
  t.equal(created.code, 0, `create exits 0 (stderr: ${created.stderr})`);
  const org = JSON.parse(created.stdout) as { id: string };
  const set = await runCli(['org', 'key-limit', org.id, '5000'], { env });
  t.equal(set.code, 0, `exits 0 (stderr: ${set.stderr})`);
  t.match(JSON.parse(set.stdout), { id: org.id, keyLimit: 5000, effectiveKeyLimit: 5000 }, 'printed as set');
  const reset = await runCli(['org', 'key-limit', org.id, 'default'], { env });
  t.match(JSON.parse(reset.stdout), { id: org.id, keyLimit: null, effectiveKeyLimit: 1000 }, 'the default again');
  const bad = await runCli(['org', 'key-limit', org.id, 'many'], { env });
  t.equal(bad.code, 1, 'refused by the gateway');
  t.match(bad.stderr, /400/);
  t.equal((await runCli(['org', 'key-limit', org.id], { env })).code, 2, 'a usage error without the count');
  t.equal((await runCli(['org', 'key-limit', 'org_missing', '5'], { env })).code, 1, 'an unknown organization: 404');
});

t.test('keys list and keys revoke against a real gateway', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const email = freshEmail();
  const password = PASSWORDS[1]!;
  const created = await runCli(['org', 'create', '--name', 'Keys CLI', '--email', email], { env, stdin: `${password}\n` });
  t.equal(created.code, 0, `create exits 0 (stderr: ${created.stderr})`);
  const org = JSON.parse(created.stdout) as { id: string };
  const token = (await login(gw.publicUrl, email, password)).json().token as string;
  const newKey = async () => {
    const res = await send(`${gw.publicUrl}/auth/api-key`, {
      method: 'POST',
      headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli key' }),
    });
    t.equal(res.status, 201);
    return res.json() as { id: string; apiKey: string };
  };
  const useKey = async (apiKey: string) => (await send(`${gw.publicUrl}/auth/api-key`, { headers: { ...UA, authorization: `Bearer ${apiKey}` } })).status;
  const first = await newKey();
  const second = await newKey();

  const listed = await runCli(['keys', 'list', '--org', org.id], { env });
  t.equal(listed.code, 0, `list exits 0 (stderr: ${listed.stderr})`);
  t.equal(listed.stderr, '');
  const printed = JSON.parse(listed.stdout) as { keys: Array<Record<string, unknown>> };
  t.same(Object.keys(printed), ['keys'], 'one object of all the keys, no page cursor');
  const { keys } = printed;
  t.same(keys.map((k) => k['id']).sort(), [first.id, second.id].sort(), 'both keys, as JSON');
  const newestFirst = [...keys].sort((x, y) => String(y['createdAt']).localeCompare(String(x['createdAt'])) || String(y['id']).localeCompare(String(x['id'])));
  t.same(keys.map((k) => k['id']), newestFirst.map((k) => k['id']), 'newest first (createdAt, then id, descending)');
  for (const key of keys) {
    t.same(Object.keys(key).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'quota', 'rateLimit', 'scopes'], 'metadata only');
    t.same(key['scopes'], ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'], 'a default key holds all five scopes');
    t.equal(key['lastUsedAt'], null, 'not used yet');
  }
  for (const { apiKey } of [first, second]) t.notOk(listed.stdout.includes(apiKey), 'no secret printed');

  t.equal(await useKey(first.apiKey), 200, 'the key works before');
  const revoked = await runCli(['keys', 'revoke', '--org', org.id, '--key', first.id], { env });
  t.equal(revoked.code, 0, `revoke exits 0 (stderr: ${revoked.stderr})`);
  t.equal(revoked.stdout, '');
  t.equal(revoked.stderr, '');
  t.equal(await useKey(first.apiKey), 401, 'the revoked key is refused at once');
  t.equal(await useKey(second.apiKey), 200, 'the other key still works');
  const after = await runCli(['keys', 'list', '--org', org.id], { env });
  t.same((JSON.parse(after.stdout) as { keys: Array<{ id: string }> }).keys.map((k) => k.id), [second.id], 'listed without it');

  const again = await runCli(['keys', 'revoke', '--org', org.id, '--key', first.id], { env });
  t.equal(again.code, 1, 'revoking it again exits 1');
  t.match(again.stderr, /^authgate: 404 API key not found/);
  const unknownOrg = await runCli(['keys', 'list', '--org', 'org_unknown'], { env });
  t.equal(unknownOrg.code, 1, 'an unknown organization exits 1');
  t.match(unknownOrg.stderr, /^authgate: 404 Organization not found/);
  const wrongToken = await runCli(['keys', 'revoke', '--org', org.id, '--key', second.id], { env: { ...env, AUTHGATE_ADMIN_TOKEN: 'wrong-admin-token-0123456789' } });
  t.equal(wrongToken.code, 1, 'a wrong token exits 1');
  t.match(wrongToken.stderr, /^authgate: 401 /);
  t.equal(await useKey(second.apiKey), 200, 'and revokes nothing');

  for (const [args, run] of await runEach([['keys'], ['keys', 'frobnicate'], ['keys', 'list'], ['keys', 'revoke', '--org', org.id], ['keys', 'list', '--org', org.id, 'extra'], ['keys', 'list', '--org', org.id, '--key', second.id], ['org', 'get', org.id, '--org', org.id]], { env })) {
    t.equal(run.code, 2, `'${args.join(' ')}' exits 2`);
    t.equal(run.stdout, '');
  }
  const noToken = await runCli(['keys', 'list', '--org', org.id], { env: { AUTHGATE_ADMIN_URL: gw.opsUrl } });
  t.equal(noToken.code, 2, 'no token exits 2');
  t.equal(await useKey(second.apiKey), 200, 'the usage errors revoked nothing');
});

t.test('sessions list and sessions end against a real gateway', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const email = freshEmail();
  const password = PASSWORDS[2]!;
  const created = await runCli(['org', 'create', '--name', 'Sessions CLI', '--email', email], { env, stdin: `${password}\n` });
  t.equal(created.code, 0, `create exits 0 (stderr: ${created.stderr})`);
  const org = JSON.parse(created.stdout) as { id: string };
  const tokens = [(await login(gw.publicUrl, email, password)).json().token as string, (await login(gw.publicUrl, email, password)).json().token as string, (await login(gw.publicUrl, email, password)).json().token as string];
  const useToken = async (token: string) => (await send(`${gw.publicUrl}/auth/api-key`, { headers: { ...UA, authorization: `Bearer ${token}` } })).status;

  const listed = await runCli(['sessions', 'list', '--org', org.id], { env });
  t.equal(listed.code, 0, `list exits 0 (stderr: ${listed.stderr})`);
  const { sessions } = JSON.parse(listed.stdout) as { sessions: Array<{ id: string; client: string }> };
  t.equal(sessions.length, 3);
  for (const token of tokens) t.notOk(listed.stdout.includes(token), 'no token printed');
  for (const session of sessions) t.match(session.client, / from 127\.0\.0\.0\/24$/);

  const one = await runCli(['sessions', 'end', '--org', org.id, '--session', sessions[0]!.id], { env });
  t.equal(one.code, 0, `end exits 0 (stderr: ${one.stderr})`);
  t.equal(one.stdout, '');
  t.same((await Promise.all(tokens.map(useToken))).sort(), [200, 200, 401], 'one token refused at once');
  const again = await runCli(['sessions', 'end', '--org', org.id, '--session', sessions[0]!.id], { env });
  t.equal(again.code, 1, 'ending it again exits 1');
  t.match(again.stderr, /^authgate: 404 Session not found/);
  const all = await runCli(['sessions', 'end', '--org', org.id, '--all'], { env });
  t.equal(all.code, 0);
  t.same(JSON.parse(all.stdout), { ended: 2 });
  t.same(await Promise.all(tokens.map(useToken)), [401, 401, 401], 'every token refused');

  for (const [args, run] of await runEach([['sessions'], ['sessions', 'kill'], ['sessions', 'list'], ['sessions', 'end', '--org', org.id], ['sessions', 'end', '--org', org.id, '--all', '--session', 'x'], ['sessions', 'list', '--org', org.id, '--all'], ['keys', 'list', '--org', org.id, '--all'], ['org', 'get', org.id, '--session', 'x']], { env })) {
    t.equal(run.code, 2, `'${args.join(' ')}' exits 2`);
    t.equal(run.stdout, '');
  }
});

t.test('audit tail against a real gateway: the newest events oldest first, and --follow prints new ones', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const email = freshEmail();
  const password = PASSWORDS[3]!;
  const created = await runCli(['org', 'create', '--name', 'Audit CLI', '--email', email], { env, stdin: `${password}\n` });
  const org = JSON.parse(created.stdout) as { id: string };
  const token = (await login(gw.publicUrl, email, password)).json().token as string;
  await gw.gateway.audit.flush();
  const tail = await runCli(['audit', 'tail', '--org', org.id], { env });
  t.equal(tail.code, 0, `tail exits 0 (stderr: ${tail.stderr})`);
  const lines = tail.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; orgId: string });
  t.same(lines.map((e) => e.type), ['organization.created', 'login.succeeded'], 'oldest first, one JSON line each');
  t.notOk(tail.stdout.includes(token) || tail.stdout.includes(password), 'no secret');

  // --follow: started, then an event happens, then the line appears; the CLI is interrupted and
  // waited for. Every wait is on the child's own output or exit, and bounded: on a loaded machine
  // a Node start alone can take seconds, and the CLI asks for new events every 2 s.
  const follow = startFollow(['audit', 'tail', '--org', org.id, '--follow'], env);
  t.teardown(() => follow.stop());
  t.ok(await follow.waitFor(() => follow.lines().length === 2), `the first page is printed (stderr: ${follow.stderr()})`);
  t.equal((await send(`${gw.publicUrl}/auth/logout`, { method: 'POST', headers: { ...UA, authorization: `Bearer ${token}` } })).status, 204);
  t.ok(await follow.waitFor(() => follow.stdout().includes('"type":"logout"')), `a new event is printed as it comes (stderr: ${follow.stderr()})`);
  t.equal(follow.lines().length, 3, 'each event once');
  t.same(await follow.stop(), { code: null, signal: 'SIGINT' }, 'it ran until interrupted');

  for (const [args, run] of await runEach([['audit'], ['audit', 'head'], ['audit', 'tail', 'extra'], ['audit', 'tail', '--key', 'x'], ['keys', 'list', '--org', org.id, '--follow']], { env })) {
    t.equal(run.code, 2, `'${args.join(' ')}' exits 2`);
  }
});

t.test('--password on the command line is refused and nothing is created', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const email = freshEmail();
  const argvPassword = 'argv-password-0123456789';

  for (const flag of [['--password', argvPassword], [`--password=${argvPassword}`]]) {
    const run = await runCli(['org', 'create', '--name', 'Leaky', '--email', email, ...flag], { env, stdin: `${argvPassword}\n` });
    t.equal(run.code, 2, `${flag[0]!.split('=')[0]} exits 2`);
    t.equal(run.stdout, '');
    t.match(run.stderr, /refusing --password/);
    t.notMatch(run.stderr, argvPassword, 'the value is not echoed');
  }
  t.equal((await login(gw.publicUrl, email, argvPassword)).status, 401, 'no org can log in with it');
  // The e-mail is still free: the refused runs sent nothing.
  const created = await runCli(['org', 'create', '--name', 'Careful', '--email', email], { env, stdin: `${PASSWORDS[2]}\n` });
  t.equal(created.code, 0, 'the same e-mail can then be registered properly');
});

t.test('admin token errors', async (t) => {
  const gw = await startGateway(t);
  const email = freshEmail();
  const wrongToken = 'wrong-admin-token-0123456789';

  const wrong = await runCli(['org', 'create', '--name', 'Nope', '--email', email], {
    env: { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: wrongToken },
    stdin: `${PASSWORDS[3]}\n`,
  });
  t.equal(wrong.code, 1, 'a wrong token exits 1');
  t.match(wrong.stderr, /^authgate: 401 Admin token required/);
  t.notMatch(wrong.stderr + wrong.stdout, wrongToken, 'the token is not printed');
  t.equal((await login(gw.publicUrl, email, PASSWORDS[3]!)).status, 401, 'nothing was created');

  const wrongGet = await runCli(['org', 'get', 'whatever'], { env: { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: wrongToken } });
  t.equal(wrongGet.code, 1);
  t.match(wrongGet.stderr, /^authgate: 401 /);

  for (const token of [undefined, '', '   ']) {
    const missing = await runCli(['org', 'get', 'whatever'], { env: { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: token } });
    t.equal(missing.code, 2, `a ${token === undefined ? 'missing' : 'blank'} token exits 2`);
    t.match(missing.stderr, /AUTHGATE_ADMIN_TOKEN is not set/);
  }
});

t.test('password input problems', async (t) => {
  const gw = await startGateway(t);
  const env = { AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN };

  for (const stdin of ['', '\n', '\r\n']) {
    const run = await runCli(['org', 'create', '--name', 'Empty', '--email', freshEmail()], { env, stdin });
    t.equal(run.code, 2, `stdin ${JSON.stringify(stdin)} exits 2`);
    t.match(run.stderr, /no password on stdin/);
  }

  const shortPassword = 'short-pw';
  const short = await runCli(['org', 'create', '--name', 'Short', '--email', freshEmail()], { env, stdin: `${shortPassword}\n` });
  t.equal(short.code, 1, 'the gateway refuses a short password: exit 1');
  t.match(short.stderr, /^authgate: 400 Password too short: The password must be at least 15 characters/);
  t.notMatch(short.stderr, shortPassword, 'the password is not echoed in the error');

  // No trailing newline at all: the whole of stdin is the password.
  const email = freshEmail();
  const noNewline = await runCli(['org', 'create', '--name', 'No newline', '--email', email], { env, stdin: 'no-newline-password-42' });
  t.equal(noNewline.code, 0);
  t.equal((await login(gw.publicUrl, email, 'no-newline-password-42')).status, 200);
});

t.test('what goes over the wire', async (t) => {
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.url?.endsWith('/problem')) {
        res.writeHead(503, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ type: 'x', title: 'Line\nbreak', status: 503, code: 1, detail: 'evil\u001b[31m' }));
        return;
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'org_1', name: 'n', email: 'e@example.test', createdAt: new Date(0).toISOString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;

  // The first line only, CRLF stripped, spaces kept; stdin left open by the writer.
  const password = '  spaced pässword ✓  ';
  const run = await runCli(['org', 'create', '--name', 'Wire', '--email', 'wire@example.test'], {
    env: { AUTHGATE_ADMIN_URL: `http://127.0.0.1:${port}/prefix`, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN },
    stdin: `${password}\r\nsecond line is not read\n`,
    keepStdinOpen: true,
  });
  t.equal(run.code, 0, 'done without waiting for stdin to close');
  const request = seen[0]!;
  t.equal(request.method, 'POST');
  t.equal(request.url, '/prefix/admin/organizations', 'a path prefix in AUTHGATE_ADMIN_URL is kept');
  t.equal(request.headers['user-agent'], `authgate-cli/${VERSION}`);
  t.equal(request.headers.authorization, `Bearer ${ADMIN_TOKEN}`);
  t.match(request.headers['content-type'], /^application\/json/);
  t.same(JSON.parse(request.body), { name: 'Wire', email: 'wire@example.test', password });
  t.notMatch(run.stdout + run.stderr, password.trim());

  // AUTHGATE_OPS_PORT builds the default URL; ids are path-encoded.
  const byPort = await runCli(['org', 'get', 'org_1'], { env: { AUTHGATE_OPS_PORT: String(port), AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
  t.equal(byPort.code, 0);
  t.equal(seen[1]!.url, '/admin/organizations/org_1');
  t.equal(seen[1]!.headers['user-agent'], `authgate-cli/${VERSION}`);

  // Server text is flattened to one line without control characters.
  const problem = await runCli(['org', 'get', 'problem'], { env: { AUTHGATE_ADMIN_URL: `http://127.0.0.1:${port}/x/`, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
  t.equal(problem.code, 1);
  t.equal(problem.stderr, 'authgate: 503 Line break: evil [31m\n');
});

t.test('an unreachable gateway exits 1', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const run = await runCli(['org', 'get', 'x'], { env: { AUTHGATE_ADMIN_URL: `http://127.0.0.1:${port}`, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN } });
  t.equal(run.code, 1);
  t.match(run.stderr, /^authgate: cannot reach the gateway at http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED/);
  t.notMatch(run.stderr, ADMIN_TOKEN);
});

/** Cursor movement and line clearing that readline writes in terminal mode. */
const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

/** A fake terminal: keystrokes in, and each answer typed only once its prompt has been shown. */
function fakeTerminal(answers: Record<string, string>) {
  const input = new PassThrough();
  let shown = '';
  const typed = new Set<string>();
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      shown += chunk.toString('utf8');
      for (const [prompt, keys] of Object.entries(answers)) {
        if (!typed.has(prompt) && stripAnsi(shown).includes(prompt)) {
          typed.add(prompt);
          setImmediate(() => input.write(keys));
        }
      }
      callback();
    },
  });
  return { streams: { input, output }, shown: () => stripAnsi(shown) };
}

t.test('hidden prompt (readline with muted output)', async (t) => {
  const terminal = fakeTerminal({ 'Password: ': 'typed-secret-123\r', 'Repeat password: ': 'typed-secret-123\r' });
  t.equal(await promptNewPassword(terminal.streams), 'typed-secret-123');
  t.equal(terminal.shown(), 'Password: \nRepeat password: \n', 'the prompts are shown, the keystrokes are not');

  const mismatch = fakeTerminal({ 'Password: ': 'typed-secret-123\r', 'Repeat password: ': 'typed-secret-124\r' });
  await t.rejects(promptNewPassword(mismatch.streams), new PasswordInputError('the passwords do not match'));
  t.notMatch(mismatch.shown(), 'typed-secret');

  const empty = fakeTerminal({ 'Password: ': '\r' });
  await t.rejects(promptNewPassword(empty.streams), PasswordInputError);

  const interrupted = fakeTerminal({ 'Password: ': 'half\u0003' });
  await t.rejects(promptHidden('Password: ', interrupted.streams), PromptInterrupted, 'Ctrl-C rejects');
  t.notMatch(interrupted.shown(), 'half');
});

t.test('readFirstLine', async (t) => {
  const feed = async (chunks: (string | Buffer)[], end = true) => {
    const input = new PassThrough();
    const line = readFirstLine(input);
    for (const chunk of chunks) input.write(chunk);
    if (end) input.end();
    return line;
  };
  t.equal(await feed(['abc\ndef\n']), 'abc');
  t.equal(await feed(['ab', 'c\r', '\nrest'], false), 'abc', 'split across chunks, CRLF, stream left open');
  t.equal(await feed(['tail-only']), 'tail-only');
  t.equal(await feed([]), undefined);
  t.equal(await feed(['\n']), '');
  const multibyte = Buffer.from('pä✓\n');
  t.equal(await feed([multibyte.subarray(0, 2), multibyte.subarray(2, 5), multibyte.subarray(5)]), 'pä✓', 'UTF-8 split mid-character');
  await t.rejects(feed(['x'.repeat(70_000)]), PasswordInputError, 'an endless first line is refused');
});

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
t.test('a real terminal (pty via script(1)): no echo, typed twice', { skip: hasScript ? false : 'script(1) from util-linux is not available' }, async (t) => {
  const gw = await startGateway(t);
  const email = freshEmail();
  const typed = 'pty-typed-password-77';

  const ptyRun = (keys: [string, string][]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const command = `'${process.execPath}' '${CLI}' org create --name 'On a TTY' --email '${email}'`;
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH ?? '', TERM: 'dumb', AUTHGATE_ADMIN_URL: gw.opsUrl, AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN },
      });
      let out = '';
      let next = 0;
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const step = keys[next];
        if (step !== undefined && out.endsWith(step[0])) {
          next++;
          child.stdin.write(step[1]);
        }
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        printed.push(out);
        resolve({ code, out });
      });
    });

  const mismatch = await ptyRun([['Password: ', `${typed}\r`], ['Repeat password: ', 'something-else-0000\r']]);
  t.equal(mismatch.code, 2, 'different passwords exit 2');
  t.match(mismatch.out, /passwords do not match/);

  const interrupted = await ptyRun([['Password: ', '\u0003']]);
  t.equal(interrupted.code, 130, 'Ctrl-C exits 130');

  const ok = await ptyRun([['Password: ', `${typed}\r`], ['Repeat password: ', `${typed}\r`]]);
  t.equal(ok.code, 0, `created (output: ${JSON.stringify(ok.out)})`);
  t.notMatch(ok.out, typed, 'the terminal never echoed the password');
  t.match(ok.out, /"email": "cli-/);
  t.equal((await login(gw.publicUrl, email, typed)).status, 200, 'the typed password works');
});

t.test('config prints the settings table: name, default, range, doc; never a value', async (t) => {
  // Every secret setting set to a recognisable value: none of them may show.
  const secretValues = ['jwt-secret-value-0123456789abcdef0123456789', 'previous-secret-value-0123456789abcdef', 'redis://user:redis-url-password-42@r:6379', 'redis-password-value-42', 'sentinel-password-value-42', '/secret/path/key-file.pem', '/secret/path/identity-key.pem'];
  const env = {
    AUTHGATE_JWT_SECRET: secretValues[0],
    AUTHGATE_JWT_PREVIOUS_SECRETS: secretValues[1],
    AUTHGATE_REDIS_URL: secretValues[2],
    AUTHGATE_REDIS_PASSWORD: secretValues[3],
    AUTHGATE_REDIS_SENTINEL_PASSWORD: secretValues[4],
    AUTHGATE_TLS_KEY_FILE: secretValues[5],
    AUTHGATE_IDENTITY_KEY_FILE: secretValues[6],
    AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    AUTHGATE_PORT: '18443',
  };
  const run = await runCli(['config'], { env });
  t.equal(run.code, 0, 'exits 0');
  t.equal(run.stderr, '');
  const rows = settingRows();
  const blocks = run.stdout.split('\n\n');
  t.equal(blocks.length, rows.length, 'one block per setting');
  const plain = (text: string) => text.replaceAll('`', '');
  rows.forEach((row, i) => {
    const [name, facts, doc] = (blocks[i] ?? '').trimEnd().split('\n');
    t.equal(name, row.name, `${row.name} in table order`);
    t.match(facts, `default: ${plain(row.default)}; accepts: ${plain(row.range)}`, `${row.name}: default and range`);
    t.equal(facts?.endsWith('; secret'), row.secret, `${row.name}: marked secret when it is one`);
    t.equal(doc?.trim(), plain(row.doc), `${row.name}: doc`);
  });
  t.match(run.stdout, /AUTHGATE_PORT\n {2}default: 8080; accepts: 0 to 65535\n/, 'the table\'s default, not the environment\'s 18443');
  t.notMatch(run.stdout, '18443');
  for (const secret of [...secretValues, ADMIN_TOKEN, 'redis-url-password-42']) t.notOk(run.stdout.includes(secret), `${secret.slice(0, 10)}… not printed`);

  const help = await runCli(['--help']);
  t.match(help.stdout, /\n {2}config {2,}Print every setting/, '--help lists it');
  const extra = await runCli(['config', 'AUTHGATE_JWT_SECRET']);
  t.equal(extra.code, 2, 'config takes no arguments');
  t.equal(extra.stdout, '');
});

t.test('no password and no token was ever printed', async (t) => {
  const all = printed.join('\n');
  t.ok(printed.length > 20, 'outputs were collected');
  for (const secret of [...PASSWORDS, 'argv-password-0123456789', 'no-newline-password-42', 'pty-typed-password-77', ADMIN_TOKEN, 'wrong-admin-token-0123456789']) {
    t.notOk(all.includes(secret), `${secret.slice(0, 8)}… never printed`);
  }
});
