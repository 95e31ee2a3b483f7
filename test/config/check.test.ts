/**
 * The configuration check, as an operator (or the chart's init container) runs it:
 * `node dist/main.js --check` and `authgate config check`, real processes on the built code.
 * Each prints every problem by its setting's name and exits 0 or 1, without listening or
 * connecting; and the TLS files a start would read are parsed at load, so a bad PEM is named
 * before any connection, by the check and by a start alike.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { ADMIN_TOKEN, JWT_SECRET } from '../helpers/gateway.js';
import { identityKeyFile } from '../helpers/identity-key.js';
import { freePort } from '../helpers/redis.js';
import { makeCertificate } from '../helpers/tls.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));

type Run = { code: number | null; stdout: string; stderr: string };

function run(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A check that listened or waited on a connection would not end: bounded, and then it fails.
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const checks = {
  'node dist/main.js --check': (env: Record<string, string>) => run([MAIN, '--check'], env),
  'authgate config check': (env: Record<string, string>) => run([CLI, 'config', 'check'], env),
};

/** A TCP server standing in for Redis and the ports: it counts who connects. */
async function countingServer(t: Test): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, connections: () => connections };
}

const dir = mkdtempSync(join(tmpdir(), 'authgate-check-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const good = makeCertificate(dir, 'good');
const other = makeCertificate(dir, 'other');
const corruptCa = join(dir, 'corrupt-ca.pem');
// A PEM frame around a body that is no certificate: it passed the old "has a BEGIN line" check.
writeFileSync(corruptCa, '-----BEGIN CERTIFICATE-----\nMIIBnotacertificateatall0123456789\n-----END CERTIFICATE-----\n');
const corruptKey = join(dir, 'corrupt.key');
// The label is put together here so that this file holds no literal private-key frame (the tree is
// scanned for committed keys); the body is no key at all.
const keyLabel = ['PRIVATE', 'KEY'].join(' ');
writeFileSync(corruptKey, `-----BEGIN ${keyLabel}-----\nMIGHnotakey0123456789\n-----END ${keyLabel}-----\n`);

const production = {
  NODE_ENV: 'production',
  AUTHGATE_JWT_SECRET: JWT_SECRET,
  AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
  AUTHGATE_UPSTREAM_URL: 'http://upstream.internal:8000',
  AUTHGATE_IDENTITY_KEY_FILE: identityKeyFile(),
  AUTHGATE_TLS: 'offloaded',
};

t.test('the TLS files are parsed at load: a bad PEM is named by its setting', async (t) => {
  const base = { ...production, AUTHGATE_REDIS_URL: 'rediss://redis.internal:6380' };
  const cases: [string, Record<string, string>, RegExp][] = [
    ['a corrupt CA certificate', { AUTHGATE_REDIS_TLS_CA_FILE: corruptCa }, /^AUTHGATE_REDIS_TLS_CA_FILE holds a PEM block that is not a valid certificate/],
    ['a CA bundle whose second certificate is corrupt', { AUTHGATE_REDIS_TLS_CA_FILE: writeBundle() }, /^AUTHGATE_REDIS_TLS_CA_FILE .*certificate 2 of 2/],
    ['a corrupt server certificate', { AUTHGATE_TLS: 'on', AUTHGATE_TLS_CERT_FILE: corruptCa, AUTHGATE_TLS_KEY_FILE: good.keyFile }, /^AUTHGATE_TLS_CERT_FILE holds a PEM block that is not a valid certificate/],
    ['a corrupt server key', { AUTHGATE_TLS: 'on', AUTHGATE_TLS_CERT_FILE: good.certFile, AUTHGATE_TLS_KEY_FILE: corruptKey }, /^AUTHGATE_TLS_KEY_FILE holds a PEM private key that cannot be parsed/],
    ['a key of another certificate', { AUTHGATE_TLS: 'on', AUTHGATE_TLS_CERT_FILE: good.certFile, AUTHGATE_TLS_KEY_FILE: other.keyFile }, /^AUTHGATE_TLS_KEY_FILE is not the key of the first certificate in AUTHGATE_TLS_CERT_FILE/],
    ['a missing server key', { AUTHGATE_TLS: 'on', AUTHGATE_TLS_CERT_FILE: good.certFile, AUTHGATE_TLS_KEY_FILE: join(dir, 'missing.key') }, /^AUTHGATE_TLS_KEY_FILE cannot be read/],
  ];
  for (const [what, env, expected] of cases) {
    const loaded = loadConfig({ ...base, ...env, AUTHGATE_TLS: env['AUTHGATE_TLS'] ?? 'offloaded' });
    t.notOk(loaded.ok, `${what}: refused`);
    const errors = loaded.ok ? [] : loaded.errors;
    t.match(errors.join('\n'), expected, what);
    t.notOk(errors.join('\n').includes('notakey') || errors.join('\n').includes('notacertificate'), 'never the file content');
  }
  const fine = loadConfig({ ...base, AUTHGATE_REDIS_TLS_CA_FILE: good.certFile, AUTHGATE_TLS: 'on', AUTHGATE_TLS_CERT_FILE: good.certFile, AUTHGATE_TLS_KEY_FILE: good.keyFile });
  t.ok(fine.ok, `a real certificate and its key load ${fine.ok ? '' : fine.errors.join(' | ')}`);

  function writeBundle(): string {
    const file = join(dir, 'bundle.pem');
    writeFileSync(file, readFileSync(good.certFile, 'utf8') + readFileSync(corruptCa, 'utf8'));
    return file;
  }
});

for (const [name, check] of Object.entries(checks)) {
  t.test(`${name}: a valid environment exits 0, having neither listened nor connected`, async (t) => {
    const redis = await countingServer(t);
    const port = await freePort();
    const opsPort = await freePort();
    const result = await check({
      ...production,
      AUTHGATE_REDIS_URL: `redis://:redis-password-never-shown@127.0.0.1:${redis.port}`,
      AUTHGATE_HOST: '127.0.0.1',
      AUTHGATE_OPS_HOST: '127.0.0.1',
      AUTHGATE_PORT: String(port),
      AUTHGATE_OPS_PORT: String(opsPort),
    });
    t.equal(result.code, 0, `exit 0 ${result.stderr}`);
    t.match(result.stdout, /configuration is valid: production, environment production, store redis \(url\)/);
    t.equal(redis.connections(), 0, 'Redis was not connected to');
    t.notOk(result.stdout.includes('"event":"started"'), 'the gateway did not start');
    t.notOk(`${result.stdout}${result.stderr}`.includes('redis-password-never-shown'), 'the Redis password is never printed');
    t.notOk(`${result.stdout}${result.stderr}`.includes(JWT_SECRET), 'nor a secret');
  });

  t.test(`${name}: every problem by its setting's name, exit 1, and a bad PEM before any connection`, async (t) => {
    const redis = await countingServer(t);
    const result = await check({
      ...production,
      AUTHGATE_JWT_SECRET: 'too-short',
      AUTHGATE_ADMIN_TOKEN: '',
      AUTHGATE_REDIS_URL: `rediss://127.0.0.1:${redis.port}`,
      AUTHGATE_REDIS_TLS_CA_FILE: corruptCa,
      AUTHGATE_PORT: 'eighty',
      AUTHGATE_JWT_TTL_SECONDS: '60',
    });
    t.equal(result.code, 1, 'exit 1');
    const lines = result.stderr.trim().split('\n');
    for (const setting of ['AUTHGATE_JWT_SECRET', 'AUTHGATE_ADMIN_TOKEN', 'AUTHGATE_REDIS_TLS_CA_FILE', 'AUTHGATE_PORT']) {
      t.ok(lines.some((line) => line.startsWith(`authgate: ${setting} `)), `${setting} is named`);
    }
    t.match(lines.at(-1), /configuration check failed: 4 problems/, 'and the count closes it');
    t.equal(redis.connections(), 0, 'no connection was tried');
    t.notOk(result.stderr.includes('too-short'), 'a refused value is never printed');
    t.equal(result.stdout, '', 'nothing on stdout');
  });

  t.test(`${name}: warnings are printed, and do not fail the check`, async (t) => {
    const result = await check({ ...production, AUTHGATE_STORE: 'memory', AUTHGATE_TLS: 'off', AUTHGATE_JWT_TTL_SECONDS: 'misspelt-value' });
    t.equal(result.code, 0, `exit 0 ${result.stderr}`);
    t.match(result.stderr, /warning: AUTHGATE_STORE=memory in production/);
    t.match(result.stderr, /warning: TLS is off/);
    t.match(result.stderr, /warning: AUTHGATE_JWT_TTL_SECONDS is not an authgate setting/);
    t.notOk(result.stderr.includes('misspelt-value'), 'never the value of an unknown setting');
  });
}

t.test('a start refuses a bad PEM by name too, before connecting', async (t) => {
  const redis = await countingServer(t);
  const result = await run([MAIN], { ...production, AUTHGATE_REDIS_URL: `rediss://127.0.0.1:${redis.port}`, AUTHGATE_REDIS_TLS_CA_FILE: corruptCa });
  t.equal(result.code, 1, 'exit 1');
  t.match(result.stderr, /^authgate: AUTHGATE_REDIS_TLS_CA_FILE holds a PEM block that is not a valid certificate/m);
  t.equal(redis.connections(), 0, 'no connection was tried');
});
