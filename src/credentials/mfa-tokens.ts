/**
 * Second-factor tokens (issue 32): the mfaToken a correct password hands out when the
 * organization has a factor (`agm_<shard tag>_<22 base64url characters>`, 128 random bits, shaped
 * as a reset token so its shard is known), and recovery codes (`xxxxx-xxxxx-xxxxx-xxxxx`, 20
 * base32 characters: 100 bits). The store keeps only SHA-256 digests: with this much randomness
 * a slow hash buys nothing (ASVS v5 6.5.2 asks for a password KDF below 112 bits; 100 random
 * bits tried at the login limits' pace are out of reach, and each is single use).
 */
import { randomBytes } from 'node:crypto';
import { SHARD_TAG_LENGTH, SHARD_TAG_SOURCE, shardTagOf, tagged } from '../store/shard-tag.js';
import { sha256Base64url } from './digest.js';

export const MFA_TOKEN_PREFIX = 'agm_';
const MFA_TOKEN = new RegExp(`^${MFA_TOKEN_PREFIX}(${SHARD_TAG_SOURCE})_[A-Za-z0-9_-]{22}$`);

export function newMfaToken(orgId: string): { token: string; tokenHash: string } {
  const tag = shardTagOf(orgId);
  const token = `${MFA_TOKEN_PREFIX}${tag}_${randomBytes(16).toString('base64url')}`;
  return { token, tokenHash: tagged(tag, sha256Base64url(token)) };
}

/** What the store keys a presented mfaToken by; undefined for anything not shaped as one. */
export function mfaTokenHash(token: string): string | undefined {
  const match = MFA_TOKEN.exec(token);
  if (match === null || match[1]!.length !== SHARD_TAG_LENGTH) return undefined;
  return tagged(match[1]!, sha256Base64url(token));
}

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
