/**
 * Shard tags: where an organization's data lives. Every organization has a four-character tag,
 * derived from its id, and everything it owns (its record, its keys, its sessions) is stored
 * under that tag, so on a Redis Cluster the organizations spread over every shard while each
 * one's multi-key steps stay in one slot. Credentials carry the tag in their own text (an API
 * key in its prefix, a session id before its dot), so a credential is routed to its shard
 * without a lookup. docs/redis-layout.md explains the scheme.
 *
 * Derived, not drawn at random and stored: anything addressed by organization id (the admin
 * API, listing keys) finds the tag from the id itself, with no id → tag index to keep.
 */
import { createHash } from 'node:crypto';

/** Lower-case base32 without i, l, o, u: no look-alikes, no words, safe in key names and URLs. */
export const SHARD_TAG_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/**
 * 3 × 5 bits: 32,768 tags, two for each of Redis Cluster's 16,384 slots, so tags spread over
 * every slot. Not more: the API keys and sessions of one tag share one Redis hash (keys.ts), and
 * fewer, fuller hashes cost less memory per credential than many near-empty ones (measured with
 * 4 characters: 385 B per key for organizations of one key, against 300 B and below with 3).
 */
export const SHARD_TAG_LENGTH = 3;
/** The same alphabet as a regular-expression class (a test checks they agree). */
export const SHARD_TAG_SOURCE = `[0-9a-hjkmnp-tv-z]{${SHARD_TAG_LENGTH}}`;
const TAGGED = new RegExp(`^(${SHARD_TAG_SOURCE})\\.`);

/** The tag of an organization (or of any text placed by its own digest, e.g. an e-mail). */
export function shardTagOf(text: string): string {
  const digest = createHash('sha256').update(text).digest();
  // The first 15 bits of the digest, five at a time.
  const bits = (digest[0]! << 7) | (digest[1]! >> 1);
  let tag = '';
  for (let shift = 10; shift >= 0; shift -= 5) tag += SHARD_TAG_ALPHABET[(bits >> shift) & 31];
  return tag;
}

/** `<tag>.<rest>`: how API-key lookup hashes and session ids carry their organization's tag. */
export function tagged(tag: string, rest: string): string {
  return `${tag}.${rest}`;
}

/** The tag a lookup hash or session id starts with; undefined for one without (an old format). */
export function shardTagIn(handle: string): string | undefined {
  return TAGGED.exec(handle)?.[1];
}

/**
 * The part after the tag of a handle that must carry its organization's tag; throws otherwise.
 * Both stores check it when a credential is written, so a credential is always found on the
 * shard its own text names.
 */
export function restAfterOrganizationTag(handle: string, orgId: string, what: string): string {
  const tag = shardTagIn(handle);
  if (tag === undefined || tag !== shardTagOf(orgId)) throw new Error(`${what} does not carry its organization's shard tag`);
  return handle.slice(tag.length + 1);
}
