/**
 * The API-key part of the store contract (store.ts Store): the records, the one rule of a change
 * (changedTerms, for both stores), and the methods. Implemented by memory/api-keys.ts and
 * redis/api-keys.ts (with redis/key-changes.ts).
 */
import { isScopeName } from '../authz/scopes.js';
import type { Revoked } from './store.js';

export type ApiKeyRecord = Readonly<{
  id: string;
  orgId: string;
  /**
   * How the key is found: `<shard tag>.<22 base64url>`, the organization's shard tag and 128 bits
   * of the key's SHA-256 (credentials/api-keys.ts). The key itself is never stored. The tag must
   * be the organization's (shardTagOf(orgId)): the Redis store keeps the key on that shard.
   */
  hash: string;
  /** A short, non-secret beginning of the key, shown in listings so people can recognise it. */
  displayPrefix: string;
  createdAt: string;
  /** A label its owner gave it (1..100 characters, may hold spaces); absent when none. */
  name?: string;
  /**
   * Epoch milliseconds from which the key is refused; absent for a key that does not expire. The
   * store keeps an expired key (listed, with this) until pruneExpiredApiKeys drops it: the
   * reader decides.
   */
  expiresAt?: number;
  /**
   * The names of the scopes it holds (authz/scopes.ts), absent for every scope (the default, which
   * also holds scopes declared later). By name, never by position in a table: editing the routes
   * file never changes what a key holds; a name the table no longer declares simply holds nothing.
   * Never empty; stores keep it sorted and without duplicates (storedScopes).
   */
  scopes?: ScopeNames;
}>;

/** A key as its owner sees it: no hash, no organization. lastUsedAt as the stores last heard of it. */
export type ApiKeySummary = Readonly<{
  id: string;
  displayPrefix: string;
  createdAt: string;
  name?: string;
  expiresAt?: number;
  scopes?: ScopeNames;
  /** Epoch ms of its last recorded use (recordApiKeyUse); absent when never recorded. */
  lastUsedAt?: number;
}>;

/**
 * What the hot path reads of a key: whose it is, its id (the principal's credentialId), when it
 * expires (epoch ms; absent when never) and its scopes (absent: all). An expired key is still
 * found: the resolver refuses it.
 */
export type FoundApiKey = Readonly<{ id: string; orgId: string; hash: string; expiresAt?: number; scopes?: ScopeNames }>;

/** What a key's owner may change of it (changeApiKey): each part absent stays as it is. */
export type ApiKeyChange = Readonly<{
  /** null removes the name. */
  name?: string | null;
  /** Must name nothing the key does not hold already (by name): narrowing only. */
  scopes?: ScopeNames;
  /** Must be no later than the key's present end (any, for a key without one): earlier only. */
  expiresAt?: number;
}>;

/** Why changeApiKey or rollApiKey refused: the key is missing, or the change would widen it. */
export type ApiKeyChangeRefusal = 'not-found' | 'scopes-wider' | 'expiry-later';

/** A key roll (rollApiKey): the successor, and what becomes of the key rolled. */
export type ApiKeyRoll = Readonly<{
  /** The successor's id, lookup hash, prefix, creation and end; its name and scopes are copied. */
  successor: Omit<ApiKeyRecord, 'orgId' | 'name' | 'scopes'>;
  /** The rolled key's new end (epoch ms; kept if it already ends sooner), or 'now' to delete it. */
  rolledKeyEnds: number | 'now';
}>;

export type RolledApiKey = Readonly<{
  /** The successor as listApiKeys would show it: with the rolled key's name and scopes. */
  successor: ApiKeySummary;
  /** The rolled key as it now is; undefined when it was deleted ('now'). */
  rolled: ApiKeySummary | undefined;
  /** The rolled key's cache entries to drop everywhere (its end changed, or it is gone). */
  revoked: Revoked;
}>;

/** What changeApiKey may change of a key, as a store keeps it. */
export type ApiKeyTerms = Readonly<{ name?: string; expiresAt?: number; scopes?: ScopeNames }>;

/**
 * The one rule of a change, for both stores: the key's terms after it, or why it is refused
 * (scopes it does not hold, or an end later than its own). A key without an end may be given one.
 */
export function changedTerms(key: ApiKeyTerms, change: ApiKeyChange): ApiKeyTerms | 'scopes-wider' | 'expiry-later' {
  if (change.scopes !== undefined && !namesWithin(change.scopes, key.scopes)) return 'scopes-wider';
  if (change.expiresAt !== undefined && key.expiresAt !== undefined && change.expiresAt > key.expiresAt) return 'expiry-later';
  const name = change.name === undefined ? key.name : change.name ?? undefined;
  const expiresAt = change.expiresAt ?? key.expiresAt;
  const scopes = storedScopes(change.scopes ?? key.scopes);
  return {
    ...(name !== undefined && { name }),
    ...(expiresAt !== undefined && { expiresAt }),
    ...(scopes !== undefined && { scopes }),
  };
}

/** A key's scope names: what a store keeps (sorted, no duplicates); undefined is every scope. */
export type ScopeNames = readonly string[];

/**
 * How a store keeps a key's scopes: sorted and without duplicates, so equal sets are equal values
 * (the Redis store compares them as text); undefined (every scope, present and future) stays so.
 */
export function storedScopes(scopes: ScopeNames | undefined): ScopeNames | undefined {
  if (scopes === undefined) return undefined;
  // A caller's mistake (the services check names against the route table first): refused, never stored.
  if (scopes.length === 0 || !scopes.every(isScopeName)) throw new Error("an API key's scopes are one or more scope names");
  return [...new Set(scopes)].sort();
}

/** Whether two stored scope lists (storedScopes) are the same: both every scope, or the same names. */
export function sameScopes(a: ScopeNames | undefined, b: ScopeNames | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

/** Whether every name of `narrower` is held by `held` (undefined: every scope). */
export function namesWithin(narrower: ScopeNames, held: ScopeNames | undefined): boolean {
  if (held === undefined) return true;
  const holding = new Set(held);
  return narrower.every((name) => holding.has(name));
}

/** The order every store lists an organization's keys in: newest first, ties by id (descending). */
export function newestFirst(a: ApiKeySummary, b: ApiKeySummary): number {
  return a.createdAt > b.createdAt ? -1 : a.createdAt < b.createdAt ? 1 : a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

/** One key's use a replica noticed: recordApiKeyUse keeps the latest `at` per key. */
export type ApiKeyUse = Readonly<{ orgId: string; keyId: string; at: number }>;

export interface ApiKeyStore {
  /**
   * Stores the key under its hash and in its organization's index; fails if the org is gone.
   * Rejects (throws) a key whose hash does not carry its organization's shard tag. With
   * `maxKeys`, refuses ('limit-reached') when the organization holds that many keys already (its
   * own limit, setKeyLimit, when it has one), counted in the same atomic step as the write: a
   * parallel burst on any number of replicas never overshoots it. Expired keys count until pruned.
   */
  createApiKey(key: ApiKeyRecord, maxKeys?: number): Promise<'created' | 'no-organization' | 'limit-reached'>;
  /** The hot path: one read, on the shard the hash's tag names. */
  findApiKeyByHash(hash: string): Promise<FoundApiKey | undefined>;
  listApiKeys(orgId: string): Promise<ApiKeySummary[]>;
  /** One key of orgId's, as listApiKeys shows it; undefined when it does not exist or is not theirs. */
  findApiKeySummary(orgId: string, keyId: string): Promise<ApiKeySummary | undefined>;
  /**
   * Atomically changes orgId's key: its name, a narrower scope set, an earlier end; nothing else
   * (its lookup, prefix and createdAt stay). Refuses, changing nothing, a change that would widen
   * it. `revoked` names the key's cache entries when its scopes or end changed: every replica
   * drops them so the next request reads the key as it now is.
   */
  changeApiKey(
    orgId: string,
    keyId: string,
    change: ApiKeyChange,
  ): Promise<{ key: ApiKeySummary; revoked: Revoked | undefined } | ApiKeyChangeRefusal>;
  /**
   * In one atomic step: creates the successor with the rolled key's name and scopes, and gives
   * the rolled key its new end (or deletes it). 'not-found' when orgId has no such key. Parallel
   * rolls (and changes) of one key apply one after another, never failing for contention: each
   * roll with a grace makes its own successor; after one with 'now', the others find no key.
   */
  rollApiKey(orgId: string, keyId: string, roll: ApiKeyRoll): Promise<RolledApiKey | 'not-found'>;
  /**
   * Deletes orgId's keys that expired before `before` (epoch ms), in one atomic step; how many.
   * Nothing announces it: an expired key is refused by every replica's clock already.
   */
  pruneExpiredApiKeys(orgId: string, before: number): Promise<number>;
  /**
   * Records uses, keeping the latest per key; a use of a key that no longer exists is dropped.
   * Not atomic as a whole (each organization's part is), and never on the request path.
   */
  recordApiKeyUse(uses: readonly ApiKeyUse[]): Promise<void>;
  /** Deletes the key only if it belongs to orgId; undefined when it does not exist or is not theirs. */
  deleteApiKeyIfOwned(orgId: string, keyId: string): Promise<Revoked | undefined>;
}
