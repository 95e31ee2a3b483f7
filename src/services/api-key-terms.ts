// The terms of an API key as the service (services/api-keys.ts) judges and shows them: the scopes
// it may be given and is shown with, its end, a listing's cursor, and the refusals of a change.
import type { ScopeTable } from '../authz/scopes.js';
import { Problem } from '../problems.js';
import type { ApiKeyChangeRefusal, ApiKeySummary, ScopeNames } from '../store/store.js';
import { MAX_API_KEY_LIFETIME_MS, type KeyEnd } from './api-key-shapes.js';

/** A key's answer shape: null where it has no name or does not expire. */
export const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * What a key's scopes show as under a table: the names it holds that the table declares, in the
 * table's order; every declared name for a key holding every scope. A name the file no longer
 * declares is not shown (and holds nothing), though the store keeps it.
 */
export function scopesShown(scopes: ScopeNames | undefined, table: ScopeTable): string[] {
  return scopes === undefined ? [...table.names] : table.declaredOf(scopes);
}

/** The names given, if the table declares every one; otherwise 400 (1212) naming those it does not. */
export function declaredScopes(names: readonly string[], table: ScopeTable): readonly string[] {
  const unknown = [...new Set(names)].filter((name) => !table.has(name));
  if (unknown.length > 0) {
    throw new Problem('unknownScope', `The route table declares no scope ${unknown.join(', ')} (GET /auth/scopes lists those it does).`, 'unknown_scope');
  }
  return names;
}

export const REFUSALS: Record<Exclude<ApiKeyChangeRefusal, 'not-found'>, string> = {
  'scopes-wider': 'A key\'s scopes can only be narrowed; create a new key for more.',
  'expiry-later': 'A key\'s expiry can only be moved earlier; create or roll a key for a later one.',
};

/**
 * A page's cursor: where the last key of the page stands in the listing's order (its createdAt
 * and id), base64url so it is one opaque token. Any key created since sorts before it, so a
 * listing never repeats or skips a key that was there all along.
 */
export function cursorOf(key: ApiKeySummary): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.id])).toString('base64url');
}

export function readCursor(cursor: string): readonly [string, string] {
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(position) && position.length === 2 && position.every((part) => typeof part === 'string')) {
      return position as [string, string];
    }
  } catch {
    // below
  }
  throw new Problem('badRequest', 'cursor is not one this API gave.');
}

/** The key's end in epoch ms, or undefined; a 400 for one in the past or beyond 366 days. */
export function expiryOf(options: KeyEnd, t: number): number | undefined {
  if (options.expiresAt !== undefined && options.expiresIn !== undefined) {
    throw new Problem('badRequest', 'Give expiresAt or expiresIn, not both.');
  }
  if (options.expiresIn !== undefined) return t + options.expiresIn * 1000;
  if (options.expiresAt === undefined) return undefined;
  const at = Date.parse(options.expiresAt);
  if (!Number.isFinite(at)) throw new Problem('badRequest', 'expiresAt must be an RFC 3339 date-time.');
  if (at <= t) throw new Problem('badRequest', 'expiresAt must be in the future.');
  if (at - t > MAX_API_KEY_LIFETIME_MS) throw new Problem('badRequest', 'expiresAt must be at most 366 days ahead.');
  return at;
}
