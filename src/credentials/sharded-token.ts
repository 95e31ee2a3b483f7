/**
 * The single-use tokens the gateway hands out beside API keys and login tokens: password-reset
 * tokens (`agr_`, reset-tokens.ts) and second-factor tokens (`agm_`, mfa-tokens.ts). Each is
 * `<prefix><shard tag>_<22 base64url characters>`: 128 random bits after a recognisable prefix
 * (secret scanners and people can tell one from another), the shard tag routing it to its
 * organization's shard as an API key's does. The store keeps only `<tag>.<SHA-256 of the token>`:
 * 128 random bits need no slow hash, and whoever reads the store cannot use what it holds.
 */
import { randomBytes } from 'node:crypto';
import { SHARD_TAG_LENGTH, SHARD_TAG_SOURCE, shardTagOf, tagged } from '../store/shard-tag.js';
import { sha256Base64url } from './digest.js';

export type ShardedTokenKind = Readonly<{
  /** A new token for the organization and what the store keeps of it. */
  issue(orgId: string): { token: string; tokenHash: string };
  /** What the store keys a presented token by; undefined for anything not shaped as one. */
  hashOf(token: string): string | undefined;
}>;

export function shardedToken(prefix: string): ShardedTokenKind {
  const shape = new RegExp(`^${prefix}(${SHARD_TAG_SOURCE})_[A-Za-z0-9_-]{22}$`);
  return {
    issue(orgId) {
      const tag = shardTagOf(orgId);
      const token = `${prefix}${tag}_${randomBytes(16).toString('base64url')}`;
      return { token, tokenHash: tagged(tag, sha256Base64url(token)) };
    },
    hashOf(token) {
      const match = shape.exec(token);
      if (match === null || match[1]!.length !== SHARD_TAG_LENGTH) return undefined;
      return tagged(match[1]!, sha256Base64url(token));
    },
  };
}
