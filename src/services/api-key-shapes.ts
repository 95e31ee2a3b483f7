// The API-key service's answer and option shapes and its bounds (services/api-keys.ts), apart so the
// routes' schemas and the admin API can name them without the service.
import type { KeyQuota } from '../limits/key-quotas.js';
import type { KeyCreator } from '../members/key-creators.js';

export type ApiKeyView = Readonly<{
  id: string;
  prefix: string;
  name: string | null;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  /** The key's own rate limit (`600/60s`); null: its organization's applies. */
  rateLimit: string | null;
  /** The key's own quota; null: its organization's alone applies. */
  quota: KeyQuota | null;
  /** The member who created it (members/key-creators.ts). */
  createdBy: KeyCreator;
}>;

/** An answer's end: when it stops working (the store's epoch ms), or how long from now. */
export type KeyEnd = Readonly<{ expiresAt?: string; expiresIn?: number }>;

/** What a new key may be given: a name, scopes (default: every one), an end and its own rate limit. */
export type NewApiKeyOptions = KeyEnd & Readonly<{ name?: string; scopes?: readonly string[]; rateLimit?: string; quota?: KeyQuota }>;

/**
 * What a key's owner may change: its name (null removes it), fewer scopes, an earlier end, its own
 * rate limit (never above its organization's; null removes it).
 */
export type ApiKeyChangeOptions = KeyEnd & Readonly<{ name?: string | null; scopes?: readonly string[]; rateLimit?: string | null; quota?: KeyQuota | null }>;

/** A roll: how long the rolled key keeps working, and optionally the successor's own end. */
export type RollOptions = KeyEnd & Readonly<{ graceSeconds?: number }>;

export type CreatedApiKey = Readonly<{
  id: string;
  apiKey: string;
  name: string | null;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  rateLimit: string | null;
  quota: KeyQuota | null;
  /** The member creating it: the one whose login token asked. */
  createdBy: KeyCreator;
}>;

export type RolledApiKey = CreatedApiKey & Readonly<{ rolled: Readonly<{ id: string; expiresAt: string }> }>;

export type ApiKeyPage = Readonly<{ keys: ApiKeyView[]; nextCursor: string | null }>;
export type PageRequest = Readonly<{ limit?: number; cursor?: string }>;

/** The latest end a key may be given: 366 days (31,622,400 s, the most `expiresIn` takes). */
export const MAX_API_KEY_LIFETIME_MS = 366 * 24 * 60 * 60 * 1000;
/** How long a rolled key keeps working by default (graceSeconds): 24 hours. */
export const DEFAULT_ROLL_GRACE_SECONDS = 24 * 60 * 60;
/** The longest grace a roll may give the rolled key: 7 days, as Stripe's longest. */
export const MAX_ROLL_GRACE_SECONDS = 7 * 24 * 60 * 60;
/** How long an expired key stays listed (as expired) before the store drops it: 30 days. */
export const EXPIRED_KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** A listing's page: 100 keys unless `limit` asks for fewer or more, at most 500. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 500;
