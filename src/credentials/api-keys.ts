import { randomBytes, randomUUID } from 'node:crypto';
import type { Environment } from '../config/config.js';
import { sha256Hex } from './digest.js';

/**
 * API key format: `agk_<live|test>_<30 base62 random><6 base62 checksum>`.
 * - `agk_` lets secret scanners and people recognise a leaked key;
 * - `live`/`test` says its environment at a glance (production/sandbox);
 * - 30 base62 characters carry ~178 bits from crypto.randomBytes;
 * - the checksum (CRC-32 of everything before it) rejects a mistyped or truncated key before
 *   any store lookup, and lets scanners tell a real key from a lookalike.
 */
const PREFIX = 'agk_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^agk_(live|test)_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/;
/** How much of the key a listing shows: the tag and four random characters, not a secret. */
const DISPLAY_RANDOM_CHARS = 4;

export const environmentTag: Record<Environment, string> = { production: 'live', sandbox: 'test' };
const environmentOfTag: Record<string, Environment> = { live: 'production', test: 'sandbox' };

export type NewApiKey = Readonly<{ id: string; secret: string; hash: string; displayPrefix: string }>;

export function generateApiKey(environment: Environment): NewApiKey {
  const head = `${PREFIX}${environmentTag[environment]}_`;
  const body = head + randomBase62(RANDOM_LENGTH);
  const secret = body + checksum(body);
  return {
    id: `key_${randomUUID().replaceAll('-', '')}`,
    secret,
    hash: sha256Hex(secret),
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
  const match = KEY_PATTERN.exec(token);
  if (match === null) return { ok: false, reason: 'malformed' };
  const body = token.slice(0, token.length - CHECKSUM_LENGTH);
  if (checksum(body) !== match[3]) return { ok: false, reason: 'checksum' };
  return { ok: true, hash: sha256Hex(token), environment: environmentOfTag[match[1]!]! };
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

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
