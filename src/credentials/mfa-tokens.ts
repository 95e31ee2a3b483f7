/**
 * Second-factor tokens (issue 32): the mfaToken a correct password hands out when the
 * organization has a factor (`agm_<shard tag>_<22 base64url characters>`, 128 random bits, shaped
 * as a reset token so its shard is known: sharded-token.ts), and recovery codes
 * (`xxxxx-xxxxx-xxxxx-xxxxx`, 20 base32 characters: 100 bits). The store keeps only SHA-256 digests: with this much randomness
 * a slow hash buys nothing (ASVS v5 6.5.2 asks for a password KDF below 112 bits; 100 random
 * bits tried at the login limits' pace are out of reach, and each is single use).
 */
import { randomBytes } from 'node:crypto';
import { sha256Base64url } from './digest.js';
import { shardedToken } from './sharded-token.js';

export const MFA_TOKEN_PREFIX = 'agm_';
const MFA_TOKEN = shardedToken(MFA_TOKEN_PREFIX);

/** A new mfaToken for the organization and what the store keeps of it. */
export const newMfaToken = MFA_TOKEN.issue;

/** What the store keys a presented mfaToken by; undefined for anything not shaped as one. */
export const mfaTokenHash = MFA_TOKEN.hashOf;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Ten new recovery codes, as shown once. */
export function newRecoveryCodes(count = 10): string[] {
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(20);
    const chars = Array.from(bytes, (b) => BASE32[b & 31]).join('');
    return chars.match(/.{5}/g)!.join('-');
  });
}

/** The digest a recovery code is kept and looked up by: case, spaces and dashes do not matter. */
export function recoveryCodeHash(orgId: string, code: string): string {
  return sha256Base64url(`authgate-recovery:${orgId}:${code.toLowerCase().replace(/[\s-]/g, '')}`);
}

/** What binds a challenge to the password check that made it: a digest of the hash checked. */
export function passwordCheckOf(passwordHash: string): string {
  return sha256Base64url(`authgate-mfa-password:${passwordHash}`).slice(0, 22);
}
