/**
 * The Lua scripts, one per Store method that takes more than one command, each under the name of
 * the method it serves (its KEYS, ARGV and reply beside it), and their definition on a client.
 */
import type { Client } from './connection.js';
import { DIGEST_LENGTH } from './packing.js';
import { keyChangeScripts } from './key-changes.js';
import { announce, readMs } from './lua.js';

export type Script = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;
type ScriptSource = Readonly<{ keys: number | 'any'; lua: string }>;

/**
 * One Lua script per multi-key step, so each Store method is atomic. Every key a script touches
 * carries one shard tag (keys.ts): an organization's, so a script may also name keys of that
 * organization it finds in a value (ARGV stems) and still run on Redis Cluster. A step that
 * must cross tags (an e-mail claim and its organization) is several steps, ordered so that a
 * crash between them leaves nothing visible or something the next step repairs (store.ts).
 */
export const scripts = {
  // KEYS: org. ARGV: name, email, passwordHash, createdAt. Written before the e-mail is claimed.
  createOrganization: {
    keys: 1,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'email', ARGV[2], 'passwordHash', ARGV[3], 'createdAt', ARGV[4])
return 'created'`,
  },
  // KEYS: an e-mail claim. ARGV: orgId. Deletes the claim only while it is still that org's.
  releaseEmail: {
    keys: 1,
    lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
  },
  // KEYS: org (with its key index), org's sessions, the tag's API keys, the tag's sessions, org's
  // session info. ARGV: tag, channel, message head. Reply: nil when there was no org, else
  // {email, revoked key hashes, revoked session ids}; the caller then releases the e-mail.
  deleteOrganization: {
    keys: 5,
    lua: `${announce}
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[2], ARGV[3], {})
  return false
end
local email = redis.call('HGET', KEYS[1], 'email') or ''
local digests = {}
local record = redis.call('HGETALL', KEYS[1])
for i = 1, #record, 2 do
  if string.sub(record[i], 1, 2) == 'k:' then digests[#digests + 1] = string.sub(record[i + 1], 1, ${DIGEST_LENGTH}) end
end
local sessions = redis.call('ZRANGE', KEYS[2], 0, -1)
local revoked, hashes, ids = {}, {}, {}
for i, digest in ipairs(digests) do
  hashes[i] = ARGV[1] .. '.' .. digest
  revoked[#revoked + 1] = {kind = 'api_key', cacheKey = hashes[i]}
end
for i, id in ipairs(sessions) do
  ids[i] = ARGV[1] .. '.' .. id
  revoked[#revoked + 1] = {kind = 'session', cacheKey = ids[i]}
end
announce(ARGV[2], ARGV[3], revoked)
for _, digest in ipairs(digests) do redis.call('HDEL', KEYS[3], digest) end
for _, id in ipairs(sessions) do redis.call('HDEL', KEYS[4], id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[5])
return {email, hashes, ids}`,
  },
  // KEYS: org, the tag's API keys. ARGV: digest, key value, index field (k:<packed key id>), index entry.
  // ARGV[5]: the default key limit ('' for none); the organization's own (`maxKeys` in its record)
  // wins. Its `k:` fields are counted here, in the step that writes, so a burst cannot overshoot.
  createApiKey: {
    keys: 2,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  local limit = tonumber(redis.call('HGET', KEYS[1], 'maxKeys') or ARGV[5])
  local count = 0
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'k:' then count = count + 1 end
  end
  if count >= limit then return 'limit-reached' end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return 'created'`,
  },
  // KEYS: org (its key index), the tag's API keys. ARGV: index field, tag, channel, message head.
  // Reply: the deleted key's lookup hash, or nil. Its last use (u:<packed key id>) goes with it.
  deleteApiKeyIfOwned: {
    keys: 2,
    lua: `${announce}
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  announce(ARGV[3], ARGV[4], {})
  return false
end
local digest = string.sub(entry, 1, ${DIGEST_LENGTH})
local hash = ARGV[2] .. '.' .. digest
announce(ARGV[3], ARGV[4], {{kind = 'api_key', cacheKey = hash}})
redis.call('HDEL', KEYS[1], ARGV[1], 'u:' .. string.sub(ARGV[1], 3))
redis.call('HDEL', KEYS[2], digest)
return hash`,
  },
  // changeApiKey and rollApiKey: one script each, read, check and write (key-changes.ts).
  ...keyChangeScripts,
  // KEYS: org (its key index), the tag's API keys. ARGV: before (epoch ms). Deletes the org's keys
  // whose expiry (the terms, third part of the entry: replies.ts termsPart) is before it.
  // Reply: how many.
  pruneExpiredApiKeys: {
    keys: 2,
    lua: `${readMs}
local before = tonumber(ARGV[1])
local record = redis.call('HGETALL', KEYS[1])
local pruned = 0
for i = 1, #record, 2 do
  local field, entry = record[i], record[i + 1]
  if string.sub(field, 1, 2) == 'k:' then
    local expiry = string.match(entry, '^%S+ %S+ ([^/%s]+)')
    if expiry and expiry ~= '-' and (readMs(expiry) or before) < before then
      redis.call('HDEL', KEYS[1], field, 'u:' .. string.sub(field, 3))
      redis.call('HDEL', KEYS[2], string.sub(entry, 1, ${DIGEST_LENGTH}))
      pruned = pruned + 1
    end
  end
end
return pruned`,
  },
  // KEYS: org. ARGV: pairs of packed key id and time of use (packMs). Keeps the later of the
  // recorded and the given use, for keys the org still has (a deleted key's use is dropped).
  recordApiKeyUse: {
    keys: 1,
    lua: `${readMs}
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], 'k:' .. ARGV[i]) == 1 then
    local field = 'u:' .. ARGV[i]
    local seen = redis.call('HGET', KEYS[1], field)
    if not seen or readMs(seen) < readMs(ARGV[i + 1]) then redis.call('HSET', KEYS[1], field, ARGV[i + 1]) end
  end
end
return 1`,
  },
  // KEYS: org, the tag's sessions, org's sessions, org's session info. ARGV: session field, value,
  // expiresAt, ttlMs, now, org stem, info value ('' for none). Redis cannot expire a hash field, so
  // this prunes: the org's expired sessions, and two sampled fields of the tag's hash (sessions of
  // other orgs that stopped logging in). Each hash and index expires as a whole with its last session.
  createSession: {
    keys: 4,
    lua: `${readMs}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
local now = tonumber(ARGV[5])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[4], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if ARGV[8] ~= nil and ARGV[8] ~= '' and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return 'limit-reached' end
local sample = redis.call('HRANDFIELD', KEYS[2], 2, 'WITHVALUES')
for i = 1, #sample, 2 do
  local org, expiresAt = string.match(sample[i + 1], '^(%S+) (%S+)$')
  if org and (readMs(expiresAt) or 0) <= now then
    redis.call('HDEL', KEYS[2], sample[i])
    redis.call('ZREM', ARGV[6] .. org .. ':s', sample[i])
    redis.call('HDEL', ARGV[6] .. org .. ':m', sample[i])
  end
end
local ttl = tonumber(ARGV[4])
if ttl <= 0 then return 'created' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[7]) end
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
if redis.call('EXISTS', KEYS[4]) == 1 and redis.call('PTTL', KEYS[4]) < ttl then redis.call('PEXPIRE', KEYS[4], ttl) end
return 'created'`,
  },
  // KEYS: org. ARGV: the organization's own API-key limit ('' removes it). Reply: 0 when there is
  // no such organization (nothing written), else 1.
  setKeyLimit: {
    keys: 1,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'maxKeys') else redis.call('HSET', KEYS[1], 'maxKeys', ARGV[1]) end
return 1`,
  },
  // KEYS: the tag's sessions. ARGV: session field, now, org stem, channel, message head, session id,
  // owner (a packed org id the session must be of, or '' for any). Reply: 1 if a live session went.
  deleteSession: {
    keys: 1,
    lua: `${announce}${readMs}
local value = redis.call('HGET', KEYS[1], ARGV[1])
local org, expiresAt
if value then org, expiresAt = string.match(value, '^(%S+) (%S+)$') end
if not org or (ARGV[7] ~= '' and org ~= ARGV[7]) then
  announce(ARGV[4], ARGV[5], {})
  return 0
end
local live = (readMs(expiresAt) or 0) > tonumber(ARGV[2])
announce(ARGV[4], ARGV[5], live and {{kind = 'session', cacheKey = ARGV[6]}} or {})
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', ARGV[3] .. org .. ':s', ARGV[1])
redis.call('HDEL', ARGV[3] .. org .. ':m', ARGV[1])
if live then return 1 end
return 0`,
  },
  // KEYS: org's sessions, org's session info, the tag's sessions. ARGV: tag, channel, message head.
  // Ends every session of the org; reply: their ids (every one announced, the expired too).
  deleteAllSessions: {
    keys: 3,
    lua: `${announce}
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local revoked, full = {}, {}
for i, id in ipairs(ids) do
  full[i] = ARGV[1] .. '.' .. id
  revoked[i] = {kind = 'session', cacheKey = full[i]}
end
announce(ARGV[2], ARGV[3], revoked)
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[3], id) end
redis.call('DEL', KEYS[1], KEYS[2])
return full`,
  },
  // KEYS: one audit stream (an organization's, or the one of no organization). ARGV: max entries,
  // oldest id to keep (`<ms>-0`), the age bound (ms: the stream expires that long after its last
  // append, so a trail nobody adds to does not outlive its bound), then per event its sequence
  // number (from the environment's audit sequence: unique across every stream) and its JSON.
  // Each id is `<ms>-<sequence>`, ms by Redis's clock (never below the stream's last), so no two
  // streams share an id and the admin-wide read orders them all. Reply: the last id appended.
  appendAuditEvents: {
    keys: 1,
    lua: `
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lastMs, lastSeq = -1, -1
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local a, b = string.match(info[i + 1], '^(%d+)-(%d+)$')
      lastMs, lastSeq = tonumber(a), tonumber(b)
    end
  end
end
local id
for i = 4, #ARGV, 2 do
  local seq = tonumber(ARGV[i])
  if ms < lastMs then ms = lastMs end
  if ms == lastMs and seq <= lastSeq then ms = ms + 1 end
  id = string.format('%d-%s', ms, ARGV[i])
  redis.call('XADD', KEYS[1], id, 'e', ARGV[i + 1])
  lastMs, lastSeq = ms, seq
end
redis.call('XTRIM', KEYS[1], 'MAXLEN', ARGV[1])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id`,
  },
  // KEYS: the rate-limit table. ARGV: field (o:<org id> or k:<key id>), value ('' removes it),
  // channel, message head, org id. Announces {kind = 'rate_limits', cacheKey = org id} before the
  // write, as the revoking scripts do: a change nobody hears would leave replicas on the old table.
  setRateLimit: {
    keys: 1,
    lua: `${announce}
announce(ARGV[3], ARGV[4], {{kind = 'rate_limits', cacheKey = ARGV[5]}})
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1`,
  },
  // KEYS: the rate-limit table. ARGV: org id, channel, message head. Removes o:<org id> and every
  // k: field whose value is the org's (`<org id> <limit>`); announced as setRateLimit. Reply: how
  // many fields went.
  dropRateLimits: {
    keys: 1,
    lua: `${announce}
local own, prefix = 'o:' .. ARGV[1], ARGV[1] .. ' '
local fields = {}
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local field = entries[i]
  if field == own or (string.sub(field, 1, 2) == 'k:' and string.sub(entries[i + 1], 1, #prefix) == prefix) then fields[#fields + 1] = field end
end
announce(ARGV[2], ARGV[3], {{kind = 'rate_limits', cacheKey = ARGV[1]}})
for _, field in ipairs(fields) do redis.call('HDEL', KEYS[1], field) end
return #fields`,
  },
  // KEYS: the credential's window (keys.ts rateWindow). ARGV: limit, window ms, want, replica id.
  // Now is Redis's clock (TIME), so replicas with skewed clocks share one window. Opens a new
  // window (DEL, HSET, PEXPIRE the window) when there is none, it ended, or its length changed;
  // grants as rate-limits.ts grantOf: min(want, left, max(1, ceil(left / 4))), 0 when none is left.
  // Reply: {granted, used, ms until the window ends, replicas that leased from it}.
  leaseRateBudget: {
    keys: 1,
    lua: `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit, window, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 's', 'w', 'n')
local start, length, used = tonumber(state[1]), tonumber(state[2]), tonumber(state[3])
if not start or not length or not used or length ~= window or now >= start + length then
  start, used = now, 0
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 's', start, 'w', window, 'n', 0)
  redis.call('PEXPIRE', KEYS[1], window)
end
local left = limit - used
local granted = 0
if left > 0 and want > 0 then granted = math.min(want, left, math.max(1, math.ceil(left / 4))) end
if granted > 0 then used = redis.call('HINCRBY', KEYS[1], 'n', granted) end
redis.call('HSET', KEYS[1], 'p:' .. ARGV[4], 1)
-- s, w and n, then one p: field per replica.
return {granted, used, math.min(window, start + window - now), redis.call('HLEN', KEYS[1]) - 3}`,
  },
  // KEYS: n counters, then the known set (optional). ARGV: n, windowMs, then per counter
  // its limit and 1 if exempt when known, then with the set: member and known-after (epoch ms);
  // without it: 1 if the member was found known in another place's step (store.ts), else 0.
  // Reply: {1, known, exhausted, indexes counted} when allowed, {0, ms to wait} when refused.
  // Checks every counter first and counts only if all are below their limits, so a window never
  // admits more than its limit. A counter found without a TTL (never expected) gets one, so
  // nothing stays locked forever.
  countAttempt: {
    keys: 'any',
    lua: `
local n = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local known = false
if #KEYS > n then
  local seen = redis.call('ZSCORE', KEYS[n + 1], ARGV[3 + 2 * n])
  known = seen ~= false and tonumber(seen) > tonumber(ARGV[4 + 2 * n])
else
  known = ARGV[3 + 2 * n] == '1'
end
local applying = {}
local retry = 0
for i = 1, n do
  if not (known and ARGV[2 + 2 * i] == '1') then
    applying[#applying + 1] = i
    local count = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
    if count >= tonumber(ARGV[1 + 2 * i]) then
      local ttl = redis.call('PTTL', KEYS[i])
      if ttl < 0 then
        redis.call('PEXPIRE', KEYS[i], window)
        ttl = window
      end
      if ttl > retry then retry = ttl end
    end
  end
end
if retry > 0 then return {0, retry} end
local exhausted = 0
local counted = {}
for _, i in ipairs(applying) do
  local count = redis.call('INCR', KEYS[i])
  if count == 1 or redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], window) end
  if count >= tonumber(ARGV[1 + 2 * i]) then exhausted = 1 end
  counted[#counted + 1] = i
end
return {1, known and 1 or 0, exhausted, counted}`,
  },
  // KEYS: r counters to reset, g counters to give one back, then the known set (optional).
  // ARGV: r, g, then (with the set) member, now, ttlMs, max. A give-back never goes below zero
  // nor makes a counter that is not there (DECR keeps the TTL).
  settleAttempt: {
    keys: 'any',
    lua: `
local r = tonumber(ARGV[1])
local g = tonumber(ARGV[2])
for i = 1, r do redis.call('DEL', KEYS[i]) end
for i = r + 1, r + g do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if count > 0 then redis.call('DECR', KEYS[i]) end
end
if #KEYS > r + g then
  local set = KEYS[r + g + 1]
  local now = tonumber(ARGV[4])
  local ttl = tonumber(ARGV[5])
  redis.call('ZADD', set, now, ARGV[3])
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now - ttl)
  redis.call('ZREMRANGEBYRANK', set, 0, -(tonumber(ARGV[6]) + 1))
  redis.call('PEXPIRE', set, ttl)
end
return 1`,
  },
  // KEYS: counters. Reply: {count, ms left} per counter; {0, 0} for one that is not there.
  readCounters: {
    keys: 'any',
    lua: `
local out = {}
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if count == nil or ttl < 0 then out[i] = {0, 0} else out[i] = {count, ttl} end
end
return out`,
  },
} as const satisfies Record<string, ScriptSource>;

export type ScriptName = keyof typeof scripts;

/** Defines every script on the client (EVALSHA, with EVAL when the server lost it). */
export function defineScripts(client: Client): Record<ScriptName, Script> {
  return Object.fromEntries(
    Object.entries(scripts).map(([name, source]) => [name, defineScript(client, name, source)]),
  ) as Record<ScriptName, Script>;
}

function defineScript(client: Client, name: string, source: ScriptSource): Script {
  const fixed = source.keys !== 'any';
  client.defineCommand(name, fixed ? { lua: source.lua, numberOfKeys: source.keys } : { lua: source.lua });
  const method: unknown = Reflect.get(client, name);
  if (typeof method !== 'function') throw new Error(`ioredis did not define ${name}`);
  // Without a fixed numberOfKeys, ioredis takes the count as the first argument.
  return async (keys, args) =>
    (await (fixed ? method.call(client, ...keys, ...args) : method.call(client, keys.length, ...keys, ...args))) as unknown;
}
