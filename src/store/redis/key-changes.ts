/**
 * Changing and rolling an API key on Redis, each in ONE script that reads the key, checks the
 * change against it as it is stored at that moment, and writes (issue 26). They used to read in
 * TypeScript and write with a compare-and-set script that gave up after five races, so a burst
 * of renames of one key answered 503 and counted store errors: contention is not an outage. A
 * script runs alone on its shard, so parallel changes now all take effect one after another,
 * each refused only for what it asks against the key as the ones before it left it.
 *
 * The rule is store.ts#changedTerms, written again here in Lua over the stored text (replies.ts:
 * the index entry `<digest><created> <prefix>[ <terms or -> [<name>]]`, the terms
 * `<expiry or ->[<scopes>]` (scopes `~<names, sorted, by ,>` or, for the five original names, the
legacy `/<bit set, base 36>`), the hot-path value `<org> <key>[ <terms>]`); the contract
 * suite (test/store/store-contract.ts) holds both stores to the same answers.
 */
import { LEGACY_SCOPES } from '../../authz/scopes.js';
import { restAfterOrganizationTag, shardTagOf } from '../shard-tag.js';
import { storedScopes, type ApiKeyChange, type ApiKeyChangeRefusal, type ApiKeyRoll, type ApiKeySummary, type RolledApiKey, type Revoked } from '../store.js';
import type { ShardKeys } from './keys.js';
import { DIGEST, DIGEST_LENGTH, packId, packMs, packTime } from './packing.js';
import { apiKeySummaryReply, keyIndexField, keyUseField, scopesPart, unexpected } from './replies.js';
import { announce, readMs } from './lua.js';
import type { Script } from './scripts.js';

/** Lua: the parts of an index entry and the terms it holds, and how they are written again. */
const entryParts = `
local function parseEntry(entry)
  local s1 = string.find(entry, ' ', ${DIGEST_LENGTH + 1}, true)
  local s2 = s1 and string.find(entry, ' ', s1 + 1, true)
  if not s2 then return entry, nil, nil, nil end
  local tail = string.sub(entry, s2 + 1)
  local s3 = string.find(tail, ' ', 1, true)
  local terms, name = tail, nil
  if s3 then terms, name = string.sub(tail, 1, s3 - 1), string.sub(tail, s3 + 1) end
  local expiry, scopes = nil, nil
  if terms ~= '-' then
    local mark = string.find(terms, '[/~]')
    expiry = mark and string.sub(terms, 1, mark - 1) or terms
    if mark then scopes = string.sub(terms, mark) end
    if expiry == '-' then expiry = nil end
  end
  return string.sub(entry, 1, s2 - 1), expiry, scopes, name
end
local function termsOf(expiry, scopes)
  if not expiry and not scopes then return nil end
  return (expiry or '-') .. (scopes or '')
end
-- The names a stored scopes part holds (replies.ts scopesPart): '~' and names by ',', or '/' and
-- the legacy bit set, bit i the i-th of LEGACY_SCOPES (read forever).
local LEGACY = {${LEGACY_SCOPES.map((name) => `'${name}'`).join(', ')}}
local function heldNames(scopes)
  local held = {}
  if string.sub(scopes, 1, 1) == '/' then
    local set = tonumber(string.sub(scopes, 2), 36)
    for i, name in ipairs(LEGACY) do
      if bit.band(set, bit.lshift(1, i - 1)) ~= 0 then held[name] = true end
    end
  else
    for name in string.gmatch(string.sub(scopes, 2), '[^,]+') do held[name] = true end
  end
  return held
end
local function entryOf(head, terms, name)
  if name then return head .. ' ' .. (terms or '-') .. ' ' .. name end
  return head .. (terms and (' ' .. terms) or '')
end
local function valueOf(org, key, terms)
  return org .. ' ' .. key .. (terms and (' ' .. terms) or '')
end`;

export const keyChangeScripts = {
  // KEYS: org (its key index), the tag's API keys. ARGV: 1 index field, 2 use field, 3 name
  // ('keep', 'drop' or 'set'), 4 the name to set, 5 new scopes (names joined by ','; '' keeps
  // them), 6 the same as stored (replies.ts scopesPart), 7 unused, 8 new end (decimal ms;
  // '' keeps it), 9 the same packed (packMs), 10 tag, 11 packed org id, 12 packed key id, 13
  // channel, 14 message head. Reply: {refusal} ('not-found', 'scopes-wider', 'expiry-later'), or
  // {'changed', new entry, last use or '', 1 when its terms changed (announced) else 0}.
  changeApiKey: {
    keys: 2,
    lua: `${announce}${readMs}${entryParts}
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  announce(ARGV[13], ARGV[14], {})
  return {'not-found'}
end
local head, expiry, scopes, name = parseEntry(entry)
if ARGV[5] ~= '' and scopes then
  local held = heldNames(scopes)
  for name in string.gmatch(ARGV[5], '[^,]+') do
    if not held[name] then
      announce(ARGV[13], ARGV[14], {})
      return {'scopes-wider'}
    end
  end
end
if ARGV[8] ~= '' and expiry and tonumber(ARGV[8]) > readMs(expiry) then
  announce(ARGV[13], ARGV[14], {})
  return {'expiry-later'}
end
local before = termsOf(expiry, scopes)
if ARGV[5] ~= '' then scopes = ARGV[6] ~= '' and ARGV[6] or nil end
if ARGV[8] ~= '' then expiry = ARGV[9] end
if ARGV[3] == 'drop' then name = nil elseif ARGV[3] == 'set' then name = ARGV[4] end
local terms = termsOf(expiry, scopes)
local changed = (terms or '') ~= (before or '')
local digest = string.sub(entry, 1, ${DIGEST_LENGTH})
announce(ARGV[13], ARGV[14], changed and {{kind = 'api_key', cacheKey = ARGV[10] .. '.' .. digest}} or {})
local written = entryOf(head, terms, name)
redis.call('HSET', KEYS[1], ARGV[1], written)
if changed then redis.call('HSET', KEYS[2], digest, valueOf(ARGV[11], ARGV[12], terms)) end
return {'changed', written, redis.call('HGET', KEYS[1], ARGV[2]) or '', changed and 1 or 0}`,
  },
  // KEYS: org (its key index), the tag's API keys. ARGV: 1 the rolled key's index field, 2 its use
  // field, 3 its new end (decimal ms; '' deletes it), 4 the same packed, 5 the successor's index
  // field, 6 the successor's entry head (digest, created, prefix), 7 its end packed ('' none), 8
  // packed org id, 9 packed rolled key id, 10 packed successor id, 11 tag, 12 channel, 13 message
  // head. The successor gets the rolled key's name and scopes as they are now. Reply:
  // {'not-found'}, or {'rolled', successor entry, rolled key's entry ('' when deleted), its last use
  // or '', its digest}.
  rollApiKey: {
    keys: 2,
    lua: `${announce}${readMs}${entryParts}
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  announce(ARGV[12], ARGV[13], {})
  return {'not-found'}
end
local head, expiry, scopes, name = parseEntry(entry)
local digest = string.sub(entry, 1, ${DIGEST_LENGTH})
local lastUse = redis.call('HGET', KEYS[1], ARGV[2]) or ''
announce(ARGV[12], ARGV[13], {{kind = 'api_key', cacheKey = ARGV[11] .. '.' .. digest}})
local successorTerms = termsOf(ARGV[7] ~= '' and ARGV[7] or nil, scopes)
local successor = entryOf(ARGV[6], successorTerms, name)
redis.call('HSET', KEYS[2], string.sub(ARGV[6], 1, ${DIGEST_LENGTH}), valueOf(ARGV[8], ARGV[10], successorTerms))
redis.call('HSET', KEYS[1], ARGV[5], successor)
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HDEL', KEYS[2], digest)
  return {'rolled', successor, '', '', digest}
end
if not expiry or readMs(expiry) > tonumber(ARGV[3]) then expiry = ARGV[4] end
local terms = termsOf(expiry, scopes)
local rolled = entryOf(head, terms, name)
redis.call('HSET', KEYS[1], ARGV[1], rolled)
redis.call('HSET', KEYS[2], digest, valueOf(ARGV[8], ARGV[9], terms))
return {'rolled', successor, rolled, lastUse, digest}`,
  },
} as const;

/** What the two methods need of the store around them (redis/store.ts). */
export type KeyChangeContext = Readonly<{
  run: Readonly<Record<keyof typeof keyChangeScripts, Script>>;
  /** The organization's shard and its id as packed into names and values. */
  place: (orgId: string) => { shard: ShardKeys; packed: string };
  /** redis/store.ts#announced: the script's message to PUBLISH, settled with the step. */
  announced: <T>(work: (channel: string, head: string) => Promise<T>) => Promise<T>;
}>;

/** A key id as packed into its index field; undefined for an id no key can have (a space in it). */
function packedKeyIdOrUndefined(keyId: string): string | undefined {
  try {
    return packId(keyId);
  } catch {
    return undefined;
  }
}

/** One reply of the scripts above: a list whose first item is a word. */
function replyOf(reply: unknown, what: string): [string, ...unknown[]] {
  if (!Array.isArray(reply) || typeof reply[0] !== 'string') throw unexpected(what);
  return reply as [string, ...unknown[]];
}

/** Store#changeApiKey on Redis: one script (changeApiKey above). */
export async function changeApiKey(
  context: KeyChangeContext,
  orgId: string,
  keyId: string,
  change: ApiKeyChange,
): Promise<{ key: ApiKeySummary; revoked: Revoked | undefined } | ApiKeyChangeRefusal> {
  if (change.name === '') throw new Error('an API key\'s name must not be empty (null removes it)');
  const packedKeyId = packedKeyIdOrUndefined(keyId);
  if (packedKeyId === undefined) return 'not-found';
  const { shard, packed } = context.place(orgId);
  const scopes = change.scopes === undefined ? undefined : storedScopes(change.scopes);
  const tag = shardTagOf(orgId);
  const reply = replyOf(await context.announced((channel, head) => context.run.changeApiKey([shard.organization(packed), shard.apiKeys], [
    keyIndexField(packedKeyId),
    keyUseField(packedKeyId),
    change.name === undefined ? 'keep' : change.name === null ? 'drop' : 'set',
    change.name ?? '',
    scopes === undefined ? '' : scopes.join(','),
    scopes === undefined ? '' : scopesPart(scopes),
    '',
    change.expiresAt === undefined ? '' : change.expiresAt,
    change.expiresAt === undefined ? '' : packMs(change.expiresAt),
    tag,
    packed,
    packedKeyId,
    channel,
    head,
  ])), 'changeApiKey');
  const [word, entry, lastUse, termsChanged] = reply;
  if (word === 'not-found' || word === 'scopes-wider' || word === 'expiry-later') return word;
  if (word !== 'changed' || typeof entry !== 'string') throw unexpected('changeApiKey');
  const key = apiKeySummaryReply(packedKeyId, [entry, lastUse === '' ? null : lastUse], 'changeApiKey')!;
  const hash = `${tag}.${entry.slice(0, DIGEST_LENGTH)}`;
  return { key, revoked: termsChanged === 1 ? { kind: 'api_key', cacheKey: hash } : undefined };
}

/** Store#rollApiKey on Redis: one script (rollApiKey above). */
export async function rollApiKey(context: KeyChangeContext, orgId: string, keyId: string, roll: ApiKeyRoll): Promise<RolledApiKey | 'not-found'> {
  const successorDigest = restAfterOrganizationTag(roll.successor.hash, orgId, 'the API key');
  if (!DIGEST.test(successorDigest)) throw new Error('an API key lookup hash is <tag>.<22 base64url>');
  const { displayPrefix } = roll.successor;
  if (displayPrefix === '' || /\s/.test(displayPrefix)) throw new Error('an API key needs a display prefix without spaces');
  const packedSuccessorId = packId(roll.successor.id);
  const packedKeyId = packedKeyIdOrUndefined(keyId);
  if (packedKeyId === undefined) return 'not-found';
  const { shard, packed } = context.place(orgId);
  const tag = shardTagOf(orgId);
  const ends = roll.rolledKeyEnds;
  const reply = replyOf(await context.announced((channel, head) => context.run.rollApiKey([shard.organization(packed), shard.apiKeys], [
    keyIndexField(packedKeyId),
    keyUseField(packedKeyId),
    ends === 'now' ? '' : ends,
    ends === 'now' ? '' : packMs(ends),
    keyIndexField(packedSuccessorId),
    `${successorDigest}${packTime(roll.successor.createdAt)} ${displayPrefix}`,
    roll.successor.expiresAt === undefined ? '' : packMs(roll.successor.expiresAt),
    packed,
    packedKeyId,
    packedSuccessorId,
    tag,
    channel,
    head,
  ])), 'rollApiKey');
  const [word, successorEntry, rolledEntry, lastUse, digest] = reply;
  if (word === 'not-found') return word;
  if (word !== 'rolled' || typeof successorEntry !== 'string' || typeof rolledEntry !== 'string' || typeof digest !== 'string') throw unexpected('rollApiKey');
  const successor = apiKeySummaryReply(packedSuccessorId, [successorEntry, null], 'rollApiKey')!;
  const rolled = rolledEntry === '' ? undefined : apiKeySummaryReply(packedKeyId, [rolledEntry, lastUse === '' ? null : lastUse], 'rollApiKey');
  // The rolled key's cached copies go everywhere: its end changed, or it is gone.
  return { successor, rolled, revoked: { kind: 'api_key', cacheKey: `${tag}.${digest}` } };
}
