import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex: how API keys are stored and looked up, and how verified tokens are memoised. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The one constant-time comparison of secrets in the gateway. */
export function secretsEqual(a: string, b: string): boolean {
  // Hashing first makes the lengths equal, so not even the length of the secret leaks.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
