/**
 * Password-reset tokens (issue 31): `agr_<shard tag>_<22 base64url characters>`, 128 random bits
 * after a recognisable prefix (secret scanners and people can tell one from an API key `agk_` or
 * a login token). The shard tag routes the token to its organization's shard, as an API key's.
 * The store keeps only `<tag>.<SHA-256 of the token>`: 128 random bits need no slow hash, and
 * whoever reads the store cannot use what it holds.
 */
import { randomBytes } from 'node:crypto';
import { SHARD_TAG_LENGTH, SHARD_TAG_SOURCE, shardTagOf, tagged } from '../store/shard-tag.js';
import { sha256Base64url } from './digest.js';

export const RESET_TOKEN_PREFIX = 'agr_';
const RESET_TOKEN = new RegExp(`^${RESET_TOKEN_PREFIX}(${SHARD_TAG_SOURCE})_[A-Za-z0-9_-]{22}$`);

/** A new token for the organization and what the store keeps of it. */
export function newResetToken(orgId: string): { token: string; tokenHash: string } {
  const tag = shardTagOf(orgId);
  const token = `${RESET_TOKEN_PREFIX}${tag}_${randomBytes(16).toString('base64url')}`;
  return { token, tokenHash: tagged(tag, sha256Base64url(token)) };
}

/** What the store keys a presented token by; undefined for anything not shaped as one. */
export function resetTokenHash(token: string): string | undefined {
  const match = RESET_TOKEN.exec(token);
  if (match === null) return undefined;
  const tag = match[1]!;
  if (tag.length !== SHARD_TAG_LENGTH) return undefined;
  return tagged(tag, sha256Base64url(token));
}
