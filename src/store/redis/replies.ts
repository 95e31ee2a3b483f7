/**
 * Validation of what Redis answers: each reply is checked against the shape its command or script
 * promises before the store hands it on, so a malformed record or an unexpected reply is an error
 * (StoreUnavailable to the caller), never a half-read credential.
 */
import type {
  ApiKeyRecord,
  ApiKeySummary,
  FoundApiKey,
  AttemptVerdict,
  CounterState,
  LimitedCounter,
  Organization,
  Revoked,
  Session,
  SessionSummary,
} from '../store.js';
import type { AuditEvent, StoredAuditEvent } from '../audit.js';
import type { RateGrant, RateLimitTable, RateLimitTarget, StoredLimit } from '../rate-limits.js';
import { DIGEST_LENGTH, packMs, packTime, unpackId, unpackMs, unpackTime } from './packing.js';
import { isScopeName, LEGACY_SCOPES, namesOfLegacySet } from '../../authz/scopes.js';

/** The organization's own fields in its record (the rest is its key index). */
export const ORGANIZATION_FIELDS = ['name', 'email', 'passwordHash', 'createdAt'] as const;

/** HMGET of ORGANIZATION_FIELDS (its id is in the key's name): undefined when there is none. */
export function organizationReply(id: string, reply: unknown): Organization | undefined {
  if (!Array.isArray(reply) || reply.length !== ORGANIZATION_FIELDS.length) throw unexpected('organization');
  const [name, email, passwordHash, createdAt] = reply as unknown[];
  if (name === null && email === null && passwordHash === null && createdAt === null) return undefined;
  if (typeof name !== 'string' || typeof email !== 'string' || typeof passwordHash !== 'string' || typeof createdAt !== 'string') {
    throw new Error('malformed organization record in Redis');
  }
  return { id, name, email, passwordHash, createdAt };
}

/** The field of a key in its organization's record: `k:<packed key id>`. */
export function keyIndexField(packedKeyId: string): string {
  return `k:${packedKeyId}`;
}

/**
 * A key's terms, in one space-free part: `<expiresAt (packMs) or ->`, then its scopes for a key
 * with a list of them (scopesPart); undefined for a key with neither (no part at all).
 */
export function termsPart(expiresAt: number | undefined, scopes: readonly string[] | undefined): string | undefined {
  if (expiresAt === undefined && scopes === undefined) return undefined;
  const expiry = expiresAt === undefined ? NO_EXPIRY : packMs(expiresAt);
  return scopes === undefined ? expiry : `${expiry}${scopesPart(scopes)}`;
}

/**
 * A key's scope names as stored, by name (docs/redis-layout.md, "Scopes"): `~` and the names,
 * sorted, joined by `,`; or, when every name is one of the five scopes keys had before scopes were
 * the operator's, `/` and their bit set in base 36 (bit i = LEGACY_SCOPES[i], a list frozen
 * forever, never the routes file's): the encoding keys were always written with, and 2 bytes
 * where names take up to 80, so such a key's value stays within a listpack's 64 bytes. Either
 * way the file's order never enters the store. Scope names hold none of ` `, `,`, `~`, `/`
 * (isScopeName), and an expiry never holds `/` or `~`.
 */
export function scopesPart(scopes: readonly string[]): string {
  const names = [...new Set(scopes)].sort();
  if (names.length === 0 || !names.every(isScopeName)) throw new Error('an API key\'s scopes are one or more scope names');
  let legacy = 0;
  for (const name of names) {
    const bit = (LEGACY_SCOPES as readonly string[]).indexOf(name);
    if (bit < 0) return `${NAMED_SCOPES}${names.join(',')}`;
    legacy |= 1 << bit;
  }
  return `${LEGACY_SCOPE_BITS}${legacy.toString(36)}`;
}

/** What starts a terms part's scopes: the names, or the five original scopes' bit set. */
const NAMED_SCOPES = '~';
const LEGACY_SCOPE_BITS = '/';

function readTerms(part: string): { expiresAt?: number; scopes?: string[] } {
  const mark = part.search(/[~/]/);
  const expiry = mark < 0 ? part : part.slice(0, mark);
  const scopes = mark < 0 ? undefined : readScopes(part.slice(mark));
  if (expiry === '') throw new Error('malformed API key terms in Redis');
  return {
    ...(expiry !== NO_EXPIRY && { expiresAt: unpackMs(expiry) }),
    ...(scopes !== undefined && { scopes }),
  };
}

/** scopesPart read back: sorted names (a legacy bit set by LEGACY_SCOPES, read forever). */
function readScopes(part: string): string[] {
  const body = part.slice(1);
  if (part.startsWith(LEGACY_SCOPE_BITS)) {
    const set = parseInt(body, 36);
    if (!/^[0-9a-z]+$/.test(body) || !(Number.isSafeInteger(set) && set > 0)) throw new Error('malformed API key scopes in Redis');
    return namesOfLegacySet(set).sort();
  }
  const names = body.split(',');
  if (!names.every(isScopeName)) throw new Error('malformed API key scopes in Redis');
  return names;
}

/**
 * A key's value in its tag's hash: `<packed org id> <packed key id>`, then ` <terms>` (termsPart)
 * only for a key that expires or holds a list of scopes. Short, so the hash stays a listpack
 * (values up to 64 bytes): 53 bytes; 62 with an expiry; 57 with scopes among the five original
 * ones, 64 with both. A key holding other names spells them out: 56 bytes and their length with
 * `,` between them (63 and theirs with an expiry), and past 64 bytes its tag's hash is a hash
 * table from then on (docs/redis-layout.md, "Memory").
 */
export function apiKeyValue(packedOrgId: string, packedKeyId: string, key: Pick<ApiKeyRecord, 'expiresAt' | 'scopes'>): string {
  const terms = termsPart(key.expiresAt, key.scopes);
  return terms === undefined ? `${packedOrgId} ${packedKeyId}` : `${packedOrgId} ${packedKeyId} ${terms}`;
}

/** HGET of a key's field in its tag's hash (apiKeyValue), or nil. */
export function apiKeyReply(hash: string, reply: unknown): FoundApiKey | undefined {
  if (reply === null) return undefined;
  const [org, id, terms] = parts(reply, 'api key', 3);
  const found = { id: unpackId(id!), orgId: unpackId(org!), hash };
  return terms === undefined ? found : { ...found, ...readTerms(terms) };
}

/** What stands for "no expiry" in a terms part, and for "no terms" in an index entry with a name. */
const NO_EXPIRY = '-';

/**
 * An entry of an organization's key index: `<digest><packed createdAt> <displayPrefix>`, then, for
 * a key with a name, an expiry or a list of scopes, ` <terms or -> <name>` (the name last, and only
 * when there is one: a name may hold spaces). The scripts read the first 22 characters (the
 * digest) and the terms (the third part).
 */
export function apiKeyIndexEntry(
  digest: string,
  key: Pick<ApiKeyRecord, 'createdAt' | 'displayPrefix' | 'name' | 'expiresAt' | 'scopes'>,
): string {
  if (key.displayPrefix === '' || /\s/.test(key.displayPrefix)) throw new Error('an API key needs a display prefix without spaces');
  if (key.name === '') throw new Error('an API key\'s name must not be empty');
  const head = `${digest}${packTime(key.createdAt)} ${key.displayPrefix}`;
  const terms = termsPart(key.expiresAt, key.scopes);
  if (key.name === undefined) return terms === undefined ? head : `${head} ${terms}`;
  return `${head} ${terms ?? NO_EXPIRY} ${key.name}`;
}

/** The field of a key's last recorded use in its organization's record: `u:<packed key id>`. */
export function keyUseField(packedKeyId: string): string {
  return `u:${packedKeyId}`;
}

/**
 * HGETALL of an organization's record: its `k:<packed key id>` fields → entry (apiKeyIndexEntry),
 * with `u:<packed key id>` → last use (packMs) beside them.
 */
export function apiKeySummaries(reply: unknown): ApiKeySummary[] {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) throw unexpected('listApiKeys');
  const record = reply as Record<string, unknown>;
  return Object.entries(record).filter(([field]) => field.startsWith('k:')).map(([field, entry]) => {
    if (typeof entry !== 'string') throw unexpected('listApiKeys');
    const packedId = field.slice(2);
    return apiKeySummaryOf(packedId, entry, record[keyUseField(packedId)] ?? null);
  });
}

/** HMGET of one key's index field and its use field: nil when there is no such key. */
export function apiKeySummaryReply(packedKeyId: string, reply: unknown, what: string): ApiKeySummary | undefined {
  if (!Array.isArray(reply) || reply.length !== 2) throw unexpected(what);
  const [entry, lastUse] = reply as unknown[];
  if (entry === null) return undefined;
  if (typeof entry !== 'string') throw unexpected(what);
  return apiKeySummaryOf(packedKeyId, entry, lastUse ?? null);
}

/** One entry of the key index (apiKeyIndexEntry), and its last use, as the key it describes. */
function apiKeySummaryOf(packedId: string, entry: string, lastUse: unknown): ApiKeySummary {
  if (lastUse !== null && typeof lastUse !== 'string') throw unexpected('API key use');
  const space = entry.indexOf(' ', DIGEST_LENGTH);
  if (space < 0) throw new Error('malformed API key index entry in Redis');
  const summary = {
    id: unpackId(packedId),
    createdAt: unpackTime(entry.slice(DIGEST_LENGTH, space)),
    ...(lastUse !== null && { lastUsedAt: unpackMs(lastUse) }),
  };
  const rest = entry.slice(space + 1);
  const afterPrefix = rest.indexOf(' ');
  if (afterPrefix < 0) return { ...summary, displayPrefix: rest };
  const displayPrefix = rest.slice(0, afterPrefix);
  const tail = rest.slice(afterPrefix + 1);
  const afterTerms = tail.indexOf(' ');
  const terms = afterTerms < 0 ? tail : tail.slice(0, afterTerms);
  const name = afterTerms < 0 ? undefined : tail.slice(afterTerms + 1);
  if (displayPrefix === '' || terms === '' || name === '') throw new Error('malformed API key index entry in Redis');
  return {
    ...summary,
    displayPrefix,
    ...(name !== undefined && { name }),
    ...readTerms(terms),
  };
}

/** A session's info (organizationSessionInfo): `<createdAt, base 36> <client>`, '' when it has neither. */
export function sessionInfoValue(session: Pick<Session, 'createdAt' | 'client'>): string {
  if (session.createdAt === undefined && session.client === undefined) return '';
  const created = session.createdAt === undefined ? '-' : packMs(session.createdAt);
  return session.client === undefined ? created : `${created} ${session.client}`;
}

/** A live session of a listing: its id, its end (the index's score) and its info (HMGET), or nil info. */
export function sessionSummaryOf(id: string, expiresAt: number, info: unknown): SessionSummary {
  if (!Number.isFinite(expiresAt)) throw unexpected('listSessions');
  if (info === null) return { id, expiresAt };
  if (typeof info !== 'string' || info === '') throw unexpected('listSessions');
  const space = info.indexOf(' ');
  const created = space < 0 ? info : info.slice(0, space);
  const client = space < 0 ? undefined : info.slice(space + 1);
  return {
    id,
    expiresAt,
    ...(created !== '-' && { createdAt: unpackMs(created) }),
    ...(client !== undefined && client !== '' && { client }),
  };
}

/** HGET of a session's field in its tag's hash: `<packed org id> <expiresAt>`, or nil. */
export function sessionReply(id: string, reply: unknown): Session | undefined {
  if (reply === null) return undefined;
  const [org, expiresAt] = pair(reply, 'session');
  return { id, orgId: unpackId(org), expiresAt: unpackMs(expiresAt) };
}

/** The deleteOrganization script: nil (no such organization) or {email, key hashes, session ids}. */
export function organizationRevocations(reply: unknown): { email: string; revoked: Revoked[] } | undefined {
  if (reply === null) return undefined;
  if (!Array.isArray(reply) || reply.length !== 3) throw unexpected('deleteOrganization');
  const [email, hashes, sessionIds] = reply as unknown[];
  if (typeof email !== 'string') throw unexpected('deleteOrganization');
  return {
    email,
    revoked: [
      ...strings(hashes, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'api_key', cacheKey })),
      ...strings(sessionIds, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'session', cacheKey })),
    ],
  };
}

/** A value of two parts separated by a space (packing.ts keeps spaces out of parts). */
function pair(reply: unknown, what: string): [string, string] {
  const [first, second] = parts(reply, what, 2);
  return [first!, second!];
}

/** A value of two up to `most` non-empty parts separated by single spaces. */
function parts(reply: unknown, what: string, most: number): string[] {
  if (typeof reply !== 'string') throw unexpected(what);
  const split = reply.split(' ');
  if (split.length < 2 || split.length > most || split.some((part) => part === '')) throw new Error(`malformed ${what} record in Redis`);
  return split;
}

/** The readCounters script: {count, ms left} per counter asked for. */
export function counterStates(reply: unknown, count: number): CounterState[] {
  if (!Array.isArray(reply) || reply.length !== count) throw unexpected('counters');
  return (reply as unknown[]).map((entry): CounterState => {
    if (!Array.isArray(entry)) throw unexpected('counters');
    const [value, resetInMs] = entry as unknown[];
    if (typeof value !== 'number' || typeof resetInMs !== 'number') throw unexpected('counters');
    return { count: value, resetInMs };
  });
}

/** The countAttempt script: {1, known, exhausted, indexes counted} or {0, ms to wait}. */
export function attemptVerdict(reply: unknown, counters: readonly LimitedCounter[]): AttemptVerdict {
  if (!Array.isArray(reply)) throw unexpected('countAttempt');
  const [allowed, second, exhausted, counted] = reply as unknown[];
  if (allowed === 0 && typeof second === 'number') return { allowed: false, retryInMs: second };
  if (allowed !== 1 || typeof second !== 'number' || typeof exhausted !== 'number' || !Array.isArray(counted)) {
    throw unexpected('countAttempt');
  }
  const names = (counted as unknown[]).map((index) => {
    const counter = typeof index === 'number' ? counters[index - 1] : undefined;
    if (counter === undefined) throw unexpected('countAttempt');
    return counter.name;
  });
  return { allowed: true, known: second === 1, counted: names, exhausted: exhausted === 1 };
}

function strings(reply: unknown, what: string): string[] {
  if (!Array.isArray(reply)) throw unexpected(what);
  return (reply as unknown[]).map((item) => {
    if (typeof item !== 'string') throw unexpected(what);
    return item;
  });
}

/** XREVRANGE of the audit stream: [[id, ['e', json]], …] as stored events. */
export function auditEntries(reply: unknown): StoredAuditEvent[] {
  if (!Array.isArray(reply)) throw unexpected('readAuditEvents');
  return (reply as unknown[]).map((entry) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) throw unexpected('readAuditEvents');
    const [field, json] = entry[1] as unknown[];
    if (field !== 'e' || typeof json !== 'string') throw unexpected('readAuditEvents');
    const event = JSON.parse(json) as unknown;
    if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') throw new Error('malformed audit entry in Redis');
    return { ...(event as AuditEvent), id: entry[0] };
  });
}

/**
 * An override's field and value in the rate-limit table (keys.ts rateLimits): `o:<org id>` → limit,
 * `k:<key id>` → `<org id> <limit>`; value '' to remove it. The org id and the limit are one part
 * each (no spaces), so dropRateLimits finds the org's keys by the value's first part.
 */
export function rateLimitEntry(target: RateLimitTarget, limit: StoredLimit | null): [field: string, value: string] {
  if (target.orgId === '' || /\s/.test(target.orgId)) throw new Error('an organization id for a rate limit must be non-empty, without spaces');
  if (limit !== null && (limit === '' || /\s/.test(limit))) throw new Error('a stored rate limit must be non-empty, without spaces');
  if (target.kind === 'organization') return [`o:${target.orgId}`, limit ?? ''];
  if (target.keyId === '') throw new Error('an API key id for a rate limit must not be empty');
  return [`k:${target.keyId}`, limit === null ? '' : `${target.orgId} ${limit}`];
}

/** HGETALL of the rate-limit table (rateLimitEntry); any other field or value is malformed. */
export function rateLimitTable(reply: unknown): RateLimitTable {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) throw unexpected('readRateLimits');
  const organizations = new Map<string, StoredLimit>();
  const keys = new Map<string, { orgId: string; limit: StoredLimit }>();
  for (const [field, value] of Object.entries(reply as Record<string, unknown>)) {
    if (typeof value !== 'string') throw unexpected('readRateLimits');
    const id = field.slice(2);
    if (field.startsWith('o:') && id !== '' && value !== '' && !/\s/.test(value)) {
      organizations.set(id, value);
    } else if (field.startsWith('k:') && id !== '') {
      const [orgId, limit] = pair(value, 'rate limit');
      keys.set(id, { orgId, limit });
    } else {
      throw new Error('malformed rate limit record in Redis');
    }
  }
  return { organizations, keys };
}

/** The leaseRateBudget script: {granted, used, ms until the window ends, replicas}, each a whole number. */
export function rateGrant(reply: unknown, want: number): RateGrant {
  if (!Array.isArray(reply) || reply.length !== 4) throw unexpected('leaseRateBudget');
  const [granted, used, resetInMs, replicas] = reply as unknown[];
  const whole = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  if (!whole(granted) || !whole(used) || !whole(resetInMs) || !whole(replicas) || granted > Math.max(0, want) || replicas < 1) {
    throw unexpected('leaseRateBudget');
  }
  return { granted, used, resetInMs, replicas };
}

/** The error for a reply of the wrong shape; `what` names the command or script. */
export function unexpected(what: string): Error {
  return new Error(`unexpected Redis reply (${what})`);
}
