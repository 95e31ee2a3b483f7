import { randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Environment } from '../config/config.js';
import { SHARD_TAG_LENGTH, SHARD_TAG_SOURCE, tagged } from '../store/shard-tag.js';
import { sha256Base64url } from './digest.js';

/**
 * API key format: `agk_<live|test>_<shard tag>_<30 base62 random><6 base62 checksum>`.
 * - `agk_` lets secret scanners and people recognise a leaked key;
 * - `live`/`test` says its environment at a glance (production/sandbox);
 * - the shard tag (3 characters, store/shard-tag.ts) is its organization's: it routes the key to
 *   the Redis shard that holds it without a lookup. Not a secret, and not trusted either: it is
 *   part of the hashed key, so a key with another tag is another (unknown) key;
 * - 30 base62 characters carry ~178 bits from crypto.randomBytes;
 * - the checksum (CRC-32 of everything before it) rejects a mistyped or truncated key before
 *   any store lookup, and lets scanners tell a real key from a lookalike.
 * Keys of the first format (`agk_live_<36>`, no shard tag) no longer parse: they are 401
 * `malformed_key`, never looked up.
 */
const PREFIX = 'agk_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHARD_TAG = new RegExp(`^${SHARD_TAG_SOURCE}$`);
const KEY_PATTERN = new RegExp(`^agk_(live|test)_(${SHARD_TAG_SOURCE})_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$`);
/** Where a key's shard tag starts (after `agk_live_` or `agk_test_`). */
const TAG_AT = 9;
/** How much of the key a listing shows: the head, the shard tag and four random characters, not a secret. */
const DISPLAY_RANDOM_CHARS = 4;
/**
 * The store keeps 128 bits of the key's SHA-256 (22 base64url characters), not all 256: half the
 * memory per key name, and still beyond reach. Finding another key with the same 128 bits is a
 * second preimage (2^128 work); an accidental clash among a billion keys has odds below 10^-20.
 */
const DIGEST_LENGTH = 22;

/** How the store finds a key: `<shard tag>.<22 base64url of its SHA-256>`, never the key itself. */
export function apiKeyLookupHash(tag: string, secret: string): string {
  return tagged(tag, sha256Base64url(secret).slice(0, DIGEST_LENGTH));
}

export const environmentTag: Record<Environment, string> = { production: 'live', sandbox: 'test' };

export type NewApiKey = Readonly<{ id: string; secret: string; hash: string; displayPrefix: string }>;

/** A new key for an organization whose shard tag is `shardTag` (shardTagOf(orgId)). */
export function generateApiKey(environment: Environment, shardTag: string): NewApiKey {
  if (!SHARD_TAG.test(shardTag)) throw new Error('generateApiKey needs the organization\'s shard tag');
  const head = `${PREFIX}${environmentTag[environment]}_${shardTag}_`;
  const body = head + randomBase62(RANDOM_LENGTH);
  const secret = body + checksum(body);
  return {
    id: `key_${randomUUID().replaceAll('-', '')}`,
    secret,
    hash: apiKeyLookupHash(shardTag, secret),
    displayPrefix: secret.slice(0, head.length + DISPLAY_RANDOM_CHARS),
  };
}

export type ParsedApiKey =
  | { ok: true; hash: string; environment: Environment }
  | { ok: false; reason: 'malformed' | 'checksum' };

/** Looks like an API key at all: the dispatch between key and JWT is by shape, never by trial. */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(PREFIX);
}

export function parseApiKey(token: string): ParsedApiKey {
  const shape = apiKeyShape(token);
  if (shape === undefined) return { ok: false, reason: 'malformed' };
  if (!checksumMatches(token)) return { ok: false, reason: 'checksum' };
  return { ok: true, hash: shape.hash, environment: shape.environment };
}

/**
 * The key's format, environment and lookup hash, without its checksum: the credential check's
 * first step (credentials/resolver.ts), which checks the checksum itself only when the cache does
 * not know the hash. A cache hit by the key's SHA-256 is a key once stored, so its checksum is
 * right; a wrong checksum never reaches the cache (it is refused before the store is asked).
 * parseApiKey is the whole check, for everyone else.
 */
export function apiKeyShape(token: string): Readonly<{ hash: string; environment: Environment }> | undefined {
  // test() and the parts at their fixed places, not exec(): no match array and captures per
  // request on the authorization port's hot path (issue 30's fifth step). KEY_PATTERN fixes the
  // places: `agk_` 0–3, `live`/`test` 4–7, `_` 8, the shard tag 9 to 9 + SHARD_TAG_LENGTH.
  if (!KEY_PATTERN.test(token)) return undefined;
  return { hash: apiKeyLookupHash(token.slice(TAG_AT, TAG_AT + SHARD_TAG_LENGTH), token), environment: token.charCodeAt(4) === 108 /* l */ ? 'production' : 'sandbox' };
}

/** The last six characters are the checksum of what comes before them (a key of apiKeyShape's format). */
export function checksumMatches(token: string): boolean {
  const cut = token.length - CHECKSUM_LENGTH;
  return checksum(token.slice(0, cut)) === token.slice(cut);
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes above it are dropped so every character is equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * CRC-32 (IEEE, zlib's) of the body, as six base62 characters. The body is ASCII (KEY_PATTERN or
 * generateApiKey), so zlib's UTF-8 encoding of it is the byte-per-character the first, hand-written
 * CRC read: the same checksums (test/credentials/api-keys.test.ts). Measured (Node 24, a loaded
 * 2-core machine, best of rounds): the CRC of a 43-character body alone 540 ns hand-written and
 * 840 ns zlib.crc32 (its call and the string's encoding), yet parseApiKey as a whole 8.6 µs and
 * 8.3 µs: the SHA-256 of the key dominates, and the difference is below what a request notices.
 */
function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}
