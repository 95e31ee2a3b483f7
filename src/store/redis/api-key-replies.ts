/**
 * An API key as Redis keeps it (issue 28: scopes by name): the index entry in its organization's
 * record, the hot-path value in its tag's hash, and their terms (expiry and scopes), written and
 * read back, each reply checked against the shape it promises (as replies.ts does for the rest).
 */
import type { ApiKeyRecord, ApiKeySummary, FoundApiKey } from '../store.js';
import { DIGEST_LENGTH, packMs, packTime, unpackId, unpackMs, unpackTime } from './packing.js';
import { isScopeName, LEGACY_SCOPES, namesOfLegacySet } from '../../authz/scopes.js';
import { parts, unexpected } from './replies.js';

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

