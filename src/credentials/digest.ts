import * as crypto from 'node:crypto';

/**
 * SHA-256 in one call where node has crypto.hash (≥ 20.12): no Hash object per request. Every
 * API-key request hashes its key, and every JWT its token, so this is on the hot path.
 */
const sha256: (value: string, encoding: 'base64url') => string =
  typeof crypto.hash === 'function'
    ? (value, encoding) => crypto.hash('sha256', value, encoding)
    : (value, encoding) => crypto.createHash('sha256').update(value).digest(encoding);

/** API keys are looked up by (part of) it, and a verified token's memo is kept under it: never the secret itself. */
export function sha256Base64url(value: string): string {
  return sha256(value, 'base64url');
}

/** The one constant-time comparison of secrets in the gateway. */
export function secretsEqual(a: string, b: string): boolean {
  // Hashing first makes the lengths equal, so not even the length of the secret leaks.
  return crypto.timingSafeEqual(crypto.createHash('sha256').update(a).digest(), crypto.createHash('sha256').update(b).digest());
}
