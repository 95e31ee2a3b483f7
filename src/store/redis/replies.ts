/**
 * Validation of what Redis answers: each reply is checked against the shape its command or script
 * promises before the store hands it on, so a malformed record or an unexpected reply is an error
 * (StoreUnavailable to the caller), never a half-read credential.
 */
import type {
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
import { packMs, unpackId, unpackMs } from './packing.js';

export { apiKeyIndexEntry, apiKeyReply, apiKeySummaries, apiKeySummaryReply, apiKeyValue, keyIndexField, keyUseField, scopesPart, termsPart } from './api-key-replies.js';

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
export function organizationRevocations(reply: unknown, orgId: string): { email: string; revoked: Revoked[] } | undefined {
  if (reply === null) return undefined;
  if (!Array.isArray(reply) || reply.length !== 3) throw unexpected('deleteOrganization');
  const [email, hashes, sessionIds] = reply as unknown[];
  if (typeof email !== 'string') throw unexpected('deleteOrganization');
  return {
    email,
    revoked: [
      ...strings(hashes, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'api_key', cacheKey })),
      ...strings(sessionIds, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'session', cacheKey })),
      // Its provider tokens (issue 49), announced by the script too.
      { kind: 'organization', cacheKey: orgId },
    ],
  };
}

/** A value of two parts separated by a space (packing.ts keeps spaces out of parts). */
function pair(reply: unknown, what: string): [string, string] {
  const [first, second] = parts(reply, what, 2);
  return [first!, second!];
}

/** A value of two up to `most` non-empty parts separated by single spaces. */
export function parts(reply: unknown, what: string, most: number): string[] {
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
