import t from 'tap';
import { loadConfig, type Env } from '../../src/config/load.js';
import { checkConfig, startWarnings } from '../../src/config/check.js';

/**
 * AUTHGATE_NOTIFY_WEBHOOK_URL and _SECRET (issue 31): off when unset; the secret comes with the
 * URL, is at least 32 bytes, never a shipped placeholder (in development too), never weak in
 * production; every refusal names the setting, never the value.
 */

const URL_ = 'https://notices.internal/authgate';
const SECRET = 'Wq8Rz2Kd7Lm4Np1Xv9Bt6Yc3Hf5Gj0Ts';
const PRODUCTION: Env = {
  NODE_ENV: 'production',
  AUTHGATE_JWT_SECRET: 'Kq3v9Zr1Xw7Lp2Mn8Bt4Yc6Hd0Fs5GjQe',
  AUTHGATE_ADMIN_TOKEN: 'Vb7Nq2Wx9Rt4Kz1Lm',
  AUTHGATE_UPSTREAM_URL: 'http://upstream.internal:8000',
  AUTHGATE_STORE: 'memory',
  AUTHGATE_IDENTITY_ASSERTION: 'off',
};

function errors(env: Env): string[] {
  const loaded = loadConfig(env);
  return loaded.ok ? [] : loaded.errors;
}

t.test('off when unset; on with both', async (t) => {
  const off = loadConfig({});
  t.ok(off.ok && off.config.notices === undefined, 'no webhook by default');
  const on = loadConfig({ AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET });
  t.ok(on.ok, 'both set: loads');
  t.same(on.ok && on.config.notices, { webhookUrl: URL_, secret: SECRET });
  const prod = loadConfig({ ...PRODUCTION, AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET });
  t.ok(prod.ok, prod.ok ? 'production with a generated secret: loads' : prod.errors.join('; '));
});

t.test('every refusal names its setting and never echoes the value', async (t) => {
  const cases: Array<[string, Env, RegExp]> = [
    ['a URL without a secret', { AUTHGATE_NOTIFY_WEBHOOK_URL: URL_ }, /^AUTHGATE_NOTIFY_WEBHOOK_SECRET is required/],
    ['a secret without a URL', { AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET }, /^AUTHGATE_NOTIFY_WEBHOOK_SECRET is set but AUTHGATE_NOTIFY_WEBHOOK_URL is not/],
    ['a secret under 32 bytes', { AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'short-but-secret-31-bytes-long!' }, /^AUTHGATE_NOTIFY_WEBHOOK_SECRET must be at least 32 bytes/],
    ['the shipped placeholder, in development', { AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'replace-with-a-long-random-webhook-secret-of-32-bytes' }, /^AUTHGATE_NOTIFY_WEBHOOK_SECRET is a value shipped/],
    ['the shipped placeholder in another case', { AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'REPLACE-with-a-long-random-webhook-secret-of-32-bytes' }, /^AUTHGATE_NOTIFY_WEBHOOK_SECRET is a value shipped/],
    ['a weak secret in production', { ...PRODUCTION, AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'ab'.repeat(20) }, /^AUTHGATE_NOTIFY_WEBHOOK_SECRET is too weak/],
    ['a URL that is not http(s)', { AUTHGATE_NOTIFY_WEBHOOK_URL: 'ftp://notices.internal/x', AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET }, /^AUTHGATE_NOTIFY_WEBHOOK_URL must be an http/],
  ];
  for (const [what, env, expected] of cases) {
    const found = errors(env);
    t.ok(found.some((e) => expected.test(e)), `${what}: refused (${found.join('; ')})`);
    const secret = env['AUTHGATE_NOTIFY_WEBHOOK_SECRET'];
    if (secret !== undefined) t.notOk(found.some((e) => e.includes(secret)), `${what}: the value is not echoed`);
  }
  t.same(errors({ AUTHGATE_NOTIFY_WEBHOOK_URL: URL_, AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'ab'.repeat(20) }), [], 'development does not judge entropy (as for the other secrets)');
});

t.test('`authgate config check` reports it as a start would, without the value', async (t) => {
  const out: string[] = [];
  const status = checkConfig({ AUTHGATE_NOTIFY_WEBHOOK_URL: 'https://user:hook-pass-123@notices.internal/x', AUTHGATE_NOTIFY_WEBHOOK_SECRET: 'replace-with-a-long-random-webhook-secret-of-32-bytes' }, { stdout: (l) => out.push(l), stderr: (l) => out.push(l) });
  t.equal(status, 1);
  t.ok(out.some((l) => l.startsWith('authgate: AUTHGATE_NOTIFY_WEBHOOK_SECRET ')), 'named');
  t.notOk(out.join('\n').includes('replace-with') || out.join('\n').includes('hook-pass-123'), 'no value printed');
});

t.test('production warns about a plain http:// webhook (notices name e-mail addresses), not about https://', async (t) => {
  const warned = (url: string, env: Env = PRODUCTION) => {
    const full = { ...env, AUTHGATE_NOTIFY_WEBHOOK_URL: url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET };
    const loaded = loadConfig(full);
    if (!loaded.ok) throw new Error(loaded.errors.join('; '));
    return startWarnings(loaded.config, full).some((w) => w.event === 'notify_webhook_plain_http');
  };
  t.ok(warned('http://notices.internal/authgate'), 'http:// in production: warned');
  t.notOk(warned(URL_), 'https://: not warned');
  t.notOk(warned('http://127.0.0.1:9999/hook', {}), 'development: not warned');
});
