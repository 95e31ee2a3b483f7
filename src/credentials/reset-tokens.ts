/**
 * Password-reset tokens (issue 31): `agr_<shard tag>_<22 base64url characters>`, 128 random bits
 * after a recognisable prefix (secret scanners and people can tell one from an API key `agk_` or
 * a login token). The shard tag routes the token to its organization's shard, as an API key's.
 * The store keeps only `<tag>.<SHA-256 of the token>` (sharded-token.ts).
 */
import { shardedToken } from './sharded-token.js';

export const RESET_TOKEN_PREFIX = 'agr_';
const RESET_TOKEN = shardedToken(RESET_TOKEN_PREFIX);

/** A new token for the organization and what the store keeps of it. */
export const newResetToken = RESET_TOKEN.issue;

/** What the store keys a presented token by; undefined for anything not shaped as one. */
export const resetTokenHash = RESET_TOKEN.hashOf;
