/**
 * Secrets nobody changed. Production refuses to start with any secret setting set to a value this
 * repository ships in its examples and docs (config/authgate.env.example, the README, docs/, the
 * chart's values and CI values): they are public, so a gateway running on them has no secret at
 * all (with the example JWT secret anyone forges login tokens). The list is the one place these
 * values live; test/config/shipped-secrets.test.ts scans the repository's example and doc files
 * for secret settings' values and fails when one is not refused, so a new example cannot slip by.
 *
 * Besides, the gateway's own secrets (the JWT secrets and the admin token) must look generated:
 * see weakSecretProblem below. Values are compared, never printed: a refusal names the setting.
 */
import type { SettingsReader } from './redis-tls.js';
import type { SettingName } from './settings.js';

const SHIPPED = [
  // config/authgate.env.example
  'replace-with-a-long-random-secret-of-at-least-32-bytes',
  'replace-with-a-long-random-admin-token',
  'replace-with-a-long-random-webhook-secret-of-32-bytes', // also docs/operations.md (security notices)
  'password', // its AUTHGATE_REDIS_URL, redis://:password@…; also the chart's values.yaml comment
  // README.md (development quick start, the CLI)
  'dev-admin-token-change-me',
  // charts/authgate/ci/full-values.yaml
  'FAKE-REDIS-URL-PASSWORD-ci',
  'FAKE-REDIS-PASSWORD-ci',
  'FAKE-JWT-SECRET-ci-0123456789abcdef0123456789abcdef',
  'FAKE-PREVIOUS-JWT-SECRET-ci-0123456789abcdef01234567',
  'FAKE-ADMIN-TOKEN-ci-0123456789',
  // charts/authgate/ci/cluster-values.yaml
  'FAKE-REDIS-PASSWORD-cluster',
  'FAKE-JWT-SECRET-cluster-0123456789abcdef0123456789ab',
  'FAKE-ADMIN-TOKEN-cluster-0123456789',
] as const;

const shipped = new Set<string>(SHIPPED.map((value) => value.toLowerCase()));

/** Whether `value` is one the repository ships (case-insensitive: a changed case is no new secret). */
export function isShippedSecret(value: string): boolean {
  return shipped.has(value.trim().toLowerCase());
}

/** The rule's numbers, for the docs and the error. */
export const SECRET_STRENGTH = { minDistinct: 8, minBits: 48 } as const;

/**
 * Why a secret the gateway itself verifies (a JWT secret, the admin token) is too weak for
 * production, or undefined. The rule: at least 8 distinct characters, and an estimate of at least
 * 48 bits, the estimate being the value's length times the Shannon entropy of its own character
 * frequencies. A generated secret passes by far (`openssl rand -base64 48`: about 340 bits); a
 * repeated or few-symbol value (`xxxx…`, `abab…`, 16 digits) does not. It cannot tell a
 * memorable phrase from a generated one, which is why the shipped placeholders are refused by value.
 */
export function weakSecretProblem(value: string): string | undefined {
  const counts = new Map<string, number>();
  const chars = [...value];
  for (const char of chars) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bitsPerChar = 0;
  for (const count of counts.values()) {
    const p = count / chars.length;
    bitsPerChar -= p * Math.log2(p);
  }
  if (counts.size < SECRET_STRENGTH.minDistinct || bitsPerChar * chars.length < SECRET_STRENGTH.minBits) {
    return `is too weak for production: use a generated value (e.g. \`openssl rand -base64 48\`); at least ${SECRET_STRENGTH.minDistinct} distinct characters and ${SECRET_STRENGTH.minBits} bits by its character frequencies`;
  }
  return undefined;
}

/** The password in a redis:// URL, if it has one (what the shipped list is checked against). */
export function redisUrlPassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === '' ? undefined : password;
  } catch {
    return undefined;
  }
}

/**
 * Production runs on no secret the repository shows (the list above), and on no weak
 * one of its own (the JWT secrets, the admin token). A setting already refused for its form is
 * not named twice.
 */
export function refuseShippedAndWeakSecrets({ setting, fail, raw: read }: SettingsReader, refused: ReadonlySet<string | undefined>): void {
  const check = (name: SettingName, values: readonly (string | undefined)[], own: boolean) => {
    if (refused.has(name)) return;
    if (values.some((value) => value !== undefined && isShippedSecret(value))) {
      fail(name, 'is a value shipped in the repository\'s examples or docs, public to anyone: set a secret of your own');
      return;
    }
    const weak = own ? values.map((value) => (value === undefined ? undefined : weakSecretProblem(value))).find((p) => p !== undefined) : undefined;
    if (weak !== undefined) fail(name, weak);
  };
  check('AUTHGATE_JWT_SECRET', [read('AUTHGATE_JWT_SECRET')], true);
  check('AUTHGATE_JWT_PREVIOUS_SECRETS', setting('AUTHGATE_JWT_PREVIOUS_SECRETS') ?? [], true);
  check('AUTHGATE_ADMIN_TOKEN', [read('AUTHGATE_ADMIN_TOKEN')], true);
  check('AUTHGATE_MFA_ENCRYPTION_KEY', [read('AUTHGATE_MFA_ENCRYPTION_KEY')], true);
  check('AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS', setting('AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS') ?? [], true);
  const url = read('AUTHGATE_REDIS_URL');
  check('AUTHGATE_REDIS_URL', [url === undefined ? undefined : redisUrlPassword(url)], false);
  check('AUTHGATE_REDIS_PASSWORD', [read('AUTHGATE_REDIS_PASSWORD')], false);
  check('AUTHGATE_REDIS_SENTINEL_PASSWORD', [read('AUTHGATE_REDIS_SENTINEL_PASSWORD')], false);
}
