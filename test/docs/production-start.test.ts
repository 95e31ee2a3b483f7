/**
 * docs/configuration.md's "A production start, step by step", pasted as written into bash: the
 * newcomer's path after the README (issue 46). Its five blocks run in order against a real
 * redis-server with a password and a real upstream: the addresses, the secrets and their file, the
 * check, the start (`npm start` in the shell that read the file), then the first organization and
 * its login from another shell. Only the three addresses of the first block, /etc/authgate (a
 * temporary directory) and the ports differ, as the README walk-through test changes its ports.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { freePort, startRedis, waitFor } from '../helpers/redis.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
const EXAMPLE = readFileSync(join(ROOT, 'config', 'authgate.env.example'), 'utf8');

/** The sh blocks of the `## Production` section, in order. */
function productionBlocks(): string[] {
  const start = DOC.indexOf('\n## Production\n');
  const end = DOC.indexOf('\n## ', start + 1);
  const section = DOC.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The settings the secrets block writes into the file (the heredoc's NAME= lines). */
function writtenSettings(block: string): string[] {
  return [...block.matchAll(/^(AUTHGATE_[A-Z0-9_]+|NODE_ENV)=/gm)].map((m) => m[1]!);
}

const curl = spawnSync('curl', ['--version']);
const openssl = spawnSync('openssl', ['version']);
const skip = curl.error ? 'curl not installed' : openssl.error ? 'openssl not installed' : false;

t.test('the production section names every setting production requires, and the example file does too', async (t) => {
  const blocks = productionBlocks();
  t.equal(blocks.length, 5, 'five blocks: addresses, secrets, check, start, first organization');
  const written = writtenSettings(blocks[1] ?? '');
  for (const required of ['NODE_ENV', 'AUTHGATE_JWT_SECRET', 'AUTHGATE_ADMIN_TOKEN', 'AUTHGATE_IDENTITY_KEY_FILE', 'AUTHGATE_UPSTREAM_URL', 'AUTHGATE_REDIS_URL']) {
    t.ok(written.includes(required), `the file gets ${required}`);
  }
  for (const name of written) t.match(EXAMPLE, new RegExp(`\\b${name}=`), `config/authgate.env.example names ${name}`);
  t.match(EXAMPLE, /docs\/configuration\.md[^]*?its section "Production"/, 'and points at the step-by-step');
});

t.test('a production start, as written: secrets, check, start, first organization, login, a forwarded request', { skip }, async (t) => {
  const password = `redis-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const redis = await startRedis({ password });
  t.teardown(() => redis.stop());
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const dir = mkdtempSync(join(tmpdir(), 'authgate-production-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const etc = join(dir, 'etc-authgate');
  const port = await freePort();
  const opsPort = await freePort();

  const [addresses, secrets, check, start, first] = productionBlocks() as [string, string, string, string, string];
  // The first block is the three values to replace, and nothing else.
  const assignments = addresses.trim().split('\n');
  t.strictSame(assignments.map((line) => line.split('=')[0]), ['UPSTREAM_URL', 'REDIS_URL', 'REDIS_PASSWORD'], 'the first block: three values to replace');
  const ours = `UPSTREAM_URL=${upstream.url}\nREDIS_URL=redis://127.0.0.1:${redis.port}\nREDIS_PASSWORD='${password}'\n`;
  const local = (block: string) =>
    block.replaceAll('/etc/authgate', etc).replaceAll('localhost:8080', `127.0.0.1:${port}`).replaceAll('localhost:9090', `127.0.0.1:${opsPort}`);
  // The listeners on the test's ports (the file leaves them to their defaults, so the shell's win).
  const env: NodeJS.ProcessEnv = { ...process.env, AUTHGATE_HOST: '127.0.0.1', AUTHGATE_PORT: String(port), AUTHGATE_OPS_HOST: '127.0.0.1', AUTHGATE_OPS_PORT: String(opsPort) };
  for (const name of Object.keys(env)) if (name.startsWith('AUTHGATE_') && !['AUTHGATE_HOST', 'AUTHGATE_PORT', 'AUTHGATE_OPS_HOST', 'AUTHGATE_OPS_PORT'].includes(name)) delete env[name];
  delete env['NODE_ENV'];
  const bash = (script: string) => spawnSync('bash', ['-e', '-u', '-o', 'pipefail', '-c', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });

  // Blocks 1 to 3 in one shell, as a newcomer pastes them one after another.
  const made = bash(`${ours}${local(secrets)}\n${local(check)}`);
  t.equal(made.status, 0, `the secrets and the check run to their end\n${made.stdout}\n${made.stderr}`);
  t.match(made.stdout, /authgate: configuration is valid: production, environment production, store redis \(url\)/, 'config check: valid, production, on Redis');
  t.notMatch(made.stderr, /authgate: warning/, 'and without a warning');
  t.equal(statSync(etc).mode & 0o777, 0o700, 'the directory is its owner\'s only');
  for (const file of ['authgate.env', 'identity-key.pem']) t.equal(statSync(join(etc, file)).mode & 0o777, 0o600, `${file} is its owner's only`);
  const file = readFileSync(join(etc, 'authgate.env'), 'utf8');
  const adminToken = /^AUTHGATE_ADMIN_TOKEN=(.+)$/m.exec(file)?.[1] ?? '';
  t.ok(adminToken.length >= 40, 'a generated admin token in the file');
  t.notMatch(made.stdout + made.stderr, new RegExp(adminToken.replace(/[+/=]/g, '\\$&')), 'never printed');

  // Block 4 in a shell that read the file as block 3 says ("in that shell").
  const startScript = `${local(check)}\n${local(start)}`;
  const gateway = spawn('bash', ['-e', '-u', '-c', startScript], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  gateway.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  gateway.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => gateway.on('exit', () => resolve()));
  t.teardown(async () => {
    // The whole group: bash, npm and the gateway npm started.
    if (gateway.exitCode === null) process.kill(-gateway.pid!, 'SIGTERM');
    await exited;
  });
  await waitFor('the gateway started by npm start to be ready', 120_000, async () => {
    if (gateway.exitCode !== null) throw new Error(`npm start exited: ${output}`);
    try {
      return (await fetch(`http://127.0.0.1:${opsPort}/readyz`)).status === 200;
    } catch {
      return false;
    }
  });
  t.match(output, /configuration is valid: production/, 'the shell that started it had read the file: production');

  // Block 5 from another shell: nothing of the file in its environment.
  const firstSteps = bash(local(first));
  t.equal(firstSteps.status, 0, `the first steps run to their end\n${firstSteps.stdout}\n${firstSteps.stderr}`);
  const lines = firstSteps.stdout;
  t.match(lines, /"status":"ready"/, '/readyz: ready');
  t.match(lines, /"id": ?"org_[0-9a-f]+"/, 'the CLI created the organization');
  const token = /"token":"([^"]+)"/.exec(lines)?.[1];
  t.ok(token, 'the login answered a token');

  // The token works, and the upstream gets an assertion signed with the key the block made.
  const accounts = await fetch(`http://127.0.0.1:${port}/accounts`, { headers: { authorization: `Bearer ${token}`, 'user-agent': 'authgate-tests/1.0' } });
  t.equal(accounts.status, 200, 'a forwarded request passes');
  const assertion = upstream.requests.at(-1)?.headers['x-authgate-identity'];
  t.type(assertion, 'string', 'with the identity assertion');
  const jwks = (await (await fetch(`http://127.0.0.1:${opsPort}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  const { payload } = await jwtVerify(assertion as string, createLocalJWKSet(jwks), { issuer: 'authgate', audience: new URL(upstream.url).origin });
  t.match(payload, { email: 'owner@acme.test', name: 'Acme' }, 'verifiable with the JWKS');
  const ours509 = createPublicKey(readFileSync(join(etc, 'identity-key.pem'), 'utf8')).export({ format: 'jwk' });
  t.match(jwks.keys[0], { x: ours509.x, y: ours509.y }, 'the JWKS publishes the key from /etc/authgate/identity-key.pem');
});
