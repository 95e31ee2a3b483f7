/**
 * Validation of what Redis answers: each reply is checked against the shape its command or script
 * promises before the store hands it on, so a malformed record or an unexpected reply is an error
 * (StoreUnavailable to the caller), never a half-read credential.
 */
import type {
  ApiKeyRecord,
  ApiKeySummary,
  AttemptVerdict,
  CounterState,
  LimitedCounter,
  Organization,
  Revoked,
  Session,
} from '../store.js';

/** HGETALL of an organization: undefined when there is none. */
export function organizationReply(reply: unknown): Organization | undefined {
  return recordReply(reply, 'organization', ['id', 'name', 'email', 'passwordHash', 'createdAt']);
}

/** HGETALL of an API key: undefined when there is none. */
export function apiKeyReply(reply: unknown): ApiKeyRecord | undefined {
  return recordReply(reply, 'api key', ['id', 'orgId', 'hash', 'displayPrefix', 'createdAt']);
}

/** HGETALL of a session: undefined when there is none (expired or not, the caller decides). */
export function sessionReply(reply: unknown): Session | undefined {
  const record = recordReply(reply, 'session', ['id', 'orgId', 'expiresAt']);
  if (record === undefined) return undefined;
  return { id: record.id, orgId: record.orgId, expiresAt: finiteNumber(record.expiresAt, 'session') };
}

/** The listApiKeys script: {id, displayPrefix, createdAt} per key, in no order. */
export function apiKeySummaries(reply: unknown): ApiKeySummary[] {
  if (!Array.isArray(reply)) throw unexpected('listApiKeys');
  return (reply as unknown[]).map((entry) => {
    const [id, displayPrefix, createdAt] = strings(entry, 'listApiKeys');
    if (id === undefined || displayPrefix === undefined || createdAt === undefined) {
      throw unexpected('listApiKeys');
    }
    return { id, displayPrefix, createdAt };
  });
}

/** The deleteOrganization script: nil (no such organization) or {key hashes, session ids}. */
export function organizationRevocations(reply: unknown): Revoked[] | undefined {
  if (reply === null) return undefined;
  if (!Array.isArray(reply) || reply.length !== 2) throw unexpected('deleteOrganization');
  const [hashes, sessionIds] = reply as unknown[];
  return [
    ...strings(hashes, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'api_key', cacheKey })),
    ...strings(sessionIds, 'deleteOrganization').map((cacheKey): Revoked => ({ kind: 'session', cacheKey })),
  ];
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

function hashReply(reply: unknown, what: string): Record<string, string> | undefined {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) throw unexpected(what);
  const entries = Object.entries(reply);
  if (entries.length === 0) return undefined;
  const record: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (typeof value !== 'string') throw unexpected(what);
    record[name] = value;
  }
  return record;
}

/** A hash reply with exactly the named fields taken from it, each required; undefined for no hash. */
function recordReply<const Name extends string>(
  reply: unknown,
  what: string,
  names: readonly Name[],
): Record<Name, string> | undefined {
  const record = hashReply(reply, what);
  if (record === undefined) return undefined;
  const taken: Partial<Record<Name, string>> = {};
  for (const name of names) {
    const value = record[name];
    if (value === undefined) throw new Error(`malformed ${what} record in Redis: no ${name}`);
    taken[name] = value;
  }
  return taken as Record<Name, string>;
}

function finiteNumber(text: string, what: string): number {
  const value = Number(text);
  if (text === '' || !Number.isFinite(value)) throw new Error(`malformed ${what} record in Redis: not a number`);
  return value;
}

function strings(reply: unknown, what: string): string[] {
  if (!Array.isArray(reply)) throw unexpected(what);
  return (reply as unknown[]).map((item) => {
    if (typeof item !== 'string') throw unexpected(what);
    return item;
  });
}

/** The error for a reply of the wrong shape; `what` names the command or script. */
export function unexpected(what: string): Error {
  return new Error(`unexpected Redis reply (${what})`);
}
