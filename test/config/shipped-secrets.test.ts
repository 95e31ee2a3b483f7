import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { loadConfig, type Env } from '../../src/config/load.js';
import { weakSecretProblem } from '../../src/config/shipped-secrets.js';
import { settings } from '../../src/config/settings.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { identityKeyFile } from '../helpers/identity-key.js';
import { startRedis } from '../helpers/redis.js';

// Issue 26: the placeholders of config/authgate.env.example started production, and with that
// public JWT secret anyone forged login tokens.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET_SETTINGS = new Set<string>(settings.filter((s) => 'secret' in s && s.secret === true && s.type.kind !== 'file').map((s) => s.name));

const PRODUCTION: Env = {
  NODE_ENV: 'production',
  AUTHGATE_JWT_SECRET: 'Kq3v9Zr1Xw7Lp2Mn8Bt4Yc6Hd0Fs5GjQe',
  AUTHGATE_ADMIN_TOKEN: 'Vb7Nq2Wx9Rt4Kz1Lm',
  AUTHGATE_UPSTREAM_URL: 'http://upstream.internal:8000',
  AUTHGATE_REDIS_URL: 'redis://redis.internal:6379',
  AUTHGATE_IDENTITY_KEY_FILE: identityKeyFile(),
};

/** The repository's example and doc files: where a value is shown to people who may copy it. */
function exampleFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(md|ya?ml|example|txt|env)$/.test(name)) found.push(path);
    }
  };
  for (const top of ['config', 'docs', 'charts']) walk(join(ROOT, top));
  for (const name of readdirSync(ROOT)) if (/\.(md|example|env)$/.test(name)) found.push(join(ROOT, name));
  return found;
}

type Finding = { setting: string; value: string; where: string };

/** A literal value, not a shell expansion, a template or an ellipsis. */
const literal = (value: string) => value !== '' && !/[$…<>{}]/.test(value);
const unquote = (value: string) => value.replace(/^(["'])(.*)\1$/, '$2');

/** The chart's value names of secret settings (values.yaml documents each with its setting). */
const CHART_KEYS: Record<string, string> = {
  jwtSecret: 'AUTHGATE_JWT_SECRET',
  jwtPreviousSecrets: 'AUTHGATE_JWT_PREVIOUS_SECRETS',
  adminToken: 'AUTHGATE_ADMIN_TOKEN',
  url: 'AUTHGATE_REDIS_URL',
  password: 'AUTHGATE_REDIS_PASSWORD',
  sentinelPassword: 'AUTHGATE_REDIS_SENTINEL_PASSWORD',
};

function scan(): Finding[] {
  const findings: Finding[] = [];
  for (const file of exampleFiles()) {
    const where = relative(ROOT, file);
    const text = readFileSync(file, 'utf8');
    // NAME=value, also in comments and shell lines (`export NAME=…`, `NAME=… npm start`).
    for (const m of text.matchAll(/\b(AUTHGATE_[A-Z0-9_]+)=("[^"\n]*"|'[^'\n]*'|[^\s'"`]*)/g)) {
      const value = unquote(m[2]!);
      if (!SECRET_SETTINGS.has(m[1]!) || !literal(value)) continue;
      for (const one of m[1] === 'AUTHGATE_JWT_PREVIOUS_SECRETS' ? value.split(',') : [value]) findings.push({ setting: m[1]!, value: one.trim(), where });
    }
    // A Redis URL with a password anywhere (values' comments, docs' examples).
    for (const m of text.matchAll(/rediss?:\/\/[^\s'"`@/]*:[^\s'"`@/]+@[^\s'"`)]+/g)) {
      const url = m[0].replace(/[.,;:]+$/, '');
      if (literal(url)) findings.push({ setting: 'AUTHGATE_REDIS_URL', value: url, where });
    }
    // The chart's values (and its CI values) by key.
    if (/\.ya?ml$/.test(file) && !where.includes('templates')) {
      const visit = (node: unknown, key?: string) => {
        if (Array.isArray(node)) for (const item of node) visit(item, key);
        else if (node !== null && typeof node === 'object') for (const [k, v] of Object.entries(node)) visit(v, k);
        else if (typeof node === 'string' && key !== undefined && CHART_KEYS[key] !== undefined && literal(node)) {
          // `url` is a secret only as Redis's: an upstream URL is not.
          if (key !== 'url' || /^rediss?:/.test(node)) findings.push({ setting: CHART_KEYS[key]!, value: node, where });
        }
      };
      for (const doc of parseAllDocuments(text)) visit(doc.toJS());
    }
  }
  return findings;
}

/** The environment that puts `value` in `setting`, production otherwise complete. */
function envWith(setting: string, value: string): Env {
  if (setting === 'AUTHGATE_REDIS_SENTINEL_PASSWORD' || setting === 'AUTHGATE_REDIS_PASSWORD') {
    return { ...PRODUCTION, AUTHGATE_REDIS_URL: undefined, AUTHGATE_REDIS_SENTINELS: 's-0:26379', [setting]: value };
  }
  return { ...PRODUCTION, [setting]: value };
}

t.test('the complete production environment of these tests loads (the baseline)', async (t) => {
  const loaded = loadConfig(PRODUCTION);
  t.ok(loaded.ok, loaded.ok ? 'loads' : loaded.errors.join('; '));
});

t.test('every secret value shipped in the repository\'s examples and docs is refused in production, by setting name', async (t) => {
  const findings = scan();
  // The scan finds what is known to be there: a scanner that finds nothing proves nothing.
  const values = new Set(findings.map((f) => f.value));
  for (const known of ['replace-with-a-long-random-secret-of-at-least-32-bytes', 'replace-with-a-long-random-admin-token', 'redis://:password@redis.internal:6379', 'dev-admin-token-change-me', 'FAKE-ADMIN-TOKEN-ci-0123456789', 'FAKE-PREVIOUS-JWT-SECRET-ci-0123456789abcdef01234567']) {
    t.ok(values.has(known), `the scan finds ${known}`);
  }
  for (const { setting, value, where } of findings) {
    const loaded = loadConfig(envWith(setting, value));
    const errors = loaded.ok ? [] : loaded.errors;
    t.ok(errors.some((e) => e.startsWith(`${setting} `)), `${setting}=${value} (${where}) is refused by name`);
    t.notOk(errors.some((e) => e.includes(value)), 'the value is never echoed');
  }
  // In development the same values still start (the README's quick start uses one).
  t.ok(loadConfig({ AUTHGATE_ADMIN_TOKEN: 'dev-admin-token-change-me' }).ok, 'development is not refused');
});

t.test('low-entropy secrets of the gateway are refused in production, generated ones are not', async (t) => {
  const weak = ['x'.repeat(40), 'ab'.repeat(20), '0123456'.repeat(6), 'abcd'.repeat(10)];
  for (const value of weak) {
    t.ok(weakSecretProblem(value), `${value} is weak`);
    for (const setting of ['AUTHGATE_JWT_SECRET', 'AUTHGATE_ADMIN_TOKEN', 'AUTHGATE_JWT_PREVIOUS_SECRETS']) {
      const loaded = loadConfig({ ...PRODUCTION, [setting]: value.padEnd(32, value) });
      t.ok(!loaded.ok && loaded.errors.some((e) => e.startsWith(`${setting} is too weak`)), `${setting} refused`);
    }
  }
  const generated = ['Kq3v9Zr1Xw7Lp2Mn8Bt4Yc6Hd0Fs5Gj', 'f3a9c1d7e2b48c6a0d5e9f1b7c3a2d4e', 'test-admin-token-0123456789'];
  for (const value of generated) t.equal(weakSecretProblem(value), undefined, `${value} passes`);
  // A Redis password is Redis's own: only the shipped ones are refused.
  t.ok(loadConfig({ ...PRODUCTION, AUTHGATE_REDIS_URL: 'redis://:aaaa@redis.internal:6379' }).ok, 'a Redis password is not judged by the rule');
});

t.test('a real production start with config/authgate.env.example is refused, naming each placeholder', async (t) => {
  // The example as shipped, with a Redis that really has its password and an identity key, so
  // nothing but the placeholders could stop it.
  const example: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, 'config/authgate.env.example'), 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m && m[2] !== '') example[m[1]!] = m[2]!;
  }
  const redis = await startRedis({ password: 'password' });
  t.teardown(() => redis.stop());
  const { AUTHGATE_PORT: _p, AUTHGATE_OPS_PORT: _o, ...settingsOnly } = example;
  const gw = await startGatewayProcess(
    { ...settingsOnly, AUTHGATE_REDIS_URL: example['AUTHGATE_REDIS_URL']!.replace('redis.internal:6379', `127.0.0.1:${redis.port}`), AUTHGATE_IDENTITY_KEY_FILE: identityKeyFile(), AUTHGATE_TLS: 'offloaded' },
    { waitReady: false },
  );
  const exit = await Promise.race([gw.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 30_000).unref())]);
  if (exit === 'running') gw.child.kill('SIGKILL');
  t.same(exit, { code: 1, signal: null }, 'the process exits 1');
  const lines = gw.output().trim().split('\n');
  for (const setting of ['AUTHGATE_JWT_SECRET', 'AUTHGATE_ADMIN_TOKEN', 'AUTHGATE_REDIS_URL']) {
    t.ok(lines.some((l) => l.startsWith(`authgate: ${setting} `)), `${setting} named`);
  }
  t.notOk(/replace-with|:password@/.test(gw.output()), 'no value printed');
});
