import type { BearerRefusal } from './decisions.js';

/**
 * Authorization header → bearer token. RFC 6750 §2.1: `Bearer 1*SP b64token`; the scheme is
 * case-insensitive (RFC 7235). Anything else is malformed, and never reaches a store.
 */
export type BearerResult =
  | { ok: true; token: string }
  | { ok: false; reason: BearerRefusal };

const SCHEME = /^bearer(?: |$)/i;
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** Longer than any token this gateway issues by far; refuses megabyte headers cheaply. */
const MAX_TOKEN_LENGTH = 4096;

export function readBearer(header: string | undefined, rawHeaders: readonly string[]): BearerResult {
  if (header === undefined || header === '') return { ok: false, reason: 'missing' };
  // Node keeps only the first of duplicate Authorization headers; a second one is an attempt to
  // make two hops disagree about the credential, so it is refused rather than ignored.
  if (countAuthorization(rawHeaders) > 1) return { ok: false, reason: 'duplicate' };
  if (header.length > MAX_TOKEN_LENGTH + 16) return { ok: false, reason: 'malformed' };
  if (!SCHEME.test(header)) return { ok: false, reason: 'not_bearer' };
  const match = BEARER.exec(header);
  if (match === null) return { ok: false, reason: 'malformed' };
  return { ok: true, token: match[1]! };
}

function countAuthorization(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}
