/**
 * The Lua scripts, one per Store method that takes more than one command, each under the name of
 * the method it serves (its KEYS, ARGV and reply beside it), and their definition on a client.
 */
import type { Client } from './connection.js';

export type Script = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;
type ScriptSource = Readonly<{ keys: number | 'any'; lua: string }>;

/**
 * The revoking scripts announce what they revoke on the invalidation channel themselves, in the
 * same atomic step as the write: a revocation is then announced exactly when it is committed
 * (a separate PUBLISH after the script could fail and leave a committed revocation unannounced),
 * and on Cluster a PUBLISH from a script still reaches every node. The last two ARGV are the
 * channel and the message head from the bus (origin and seq, invalidation.ts); the script
 * appends what it revoked. Each script PUBLISHes exactly once, also when it revokes nothing, so
 * the sequence has no holes, and it does so after its reads and BEFORE its writes: Redis does
 * not roll a script back, and a refused PUBLISH (an ACL user without the channel) must stop the
 * script while it has changed nothing. Nobody sees the gap: the script runs alone.
 */
const announce = `
local function announce(channel, head, revoked)
  local items = {}
  for i, item in ipairs(revoked) do items[i] = cjson.encode(item) end
  redis.call('PUBLISH', channel, head .. '[' .. table.concat(items, ',') .. ']}')
end`;

/**
 * One Lua script per multi-key step, so each Store method is atomic. Every key a script touches
 * shares the deployment's hash tag (keys.ts), which is what lets a script name keys it finds
 * in an index (ARGV stems) and still run on Redis Cluster.
 */
export const scripts = {
  // KEYS: email, org. ARGV: id, name, email, passwordHash, createdAt.
  createOrganizationIfEmailFree: {
    keys: 2,
    lua: `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 'email-taken' end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'name', ARGV[2], 'email', ARGV[3],
  'passwordHash', ARGV[4], 'createdAt', ARGV[5])
return 'created'`,
  },
  // KEYS: org, org's key index, org's sessions. ARGV: orgId, email stem, apiKey stem, session stem,
  // channel, message head. Reply: nil when there was no org, else {key hashes, session ids}.
  deleteOrganization: {
    keys: 3,
    lua: `${announce}
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[5], ARGV[6], {})
  return false
end
local email = redis.call('HGET', KEYS[1], 'email')
local hashes = redis.call('HVALS', KEYS[2])
local sessionIds = redis.call('ZRANGE', KEYS[3], 0, -1)
local revoked = {}
for _, hash in ipairs(hashes) do revoked[#revoked + 1] = {kind = 'api_key', cacheKey = hash} end
for _, id in ipairs(sessionIds) do revoked[#revoked + 1] = {kind = 'session', cacheKey = id} end
announce(ARGV[5], ARGV[6], revoked)
if email and redis.call('GET', ARGV[2] .. email) == ARGV[1] then redis.call('DEL', ARGV[2] .. email) end
for _, hash in ipairs(hashes) do redis.call('DEL', ARGV[3] .. hash) end
for _, id in ipairs(sessionIds) do redis.call('DEL', ARGV[4] .. id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {hashes, sessionIds}`,
  },
  // KEYS: org, api key, org's key index. ARGV: id, orgId, hash, displayPrefix, createdAt.
  createApiKey: {
    keys: 3,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'orgId', ARGV[2], 'hash', ARGV[3],
  'displayPrefix', ARGV[4], 'createdAt', ARGV[5])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return 'created'`,
  },
  // KEYS: org's key index. ARGV: apiKey stem. Reply: {id, displayPrefix, createdAt} per key.
  listApiKeys: {
    keys: 1,
    lua: `
local out = {}
for _, hash in ipairs(redis.call('HVALS', KEYS[1])) do
  local record = redis.call('HMGET', ARGV[1] .. hash, 'id', 'displayPrefix', 'createdAt')
  if record[1] then out[#out + 1] = record end
end
return out`,
  },
  // KEYS: org's key index. ARGV: keyId, apiKey stem, channel, message head.
  // Reply: the deleted key's hash, or nil.
  deleteApiKeyIfOwned: {
    keys: 1,
    lua: `${announce}
local hash = redis.call('HGET', KEYS[1], ARGV[1])
if not hash then
  announce(ARGV[3], ARGV[4], {})
  return false
end
announce(ARGV[3], ARGV[4], {{kind = 'api_key', cacheKey = hash}})
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DEL', ARGV[2] .. hash)
return hash`,
  },
  // KEYS: org, session, org's sessions. ARGV: id, orgId, expiresAt, ttlMs, now.
  // Prunes the org's expired sessions from its index here, since Redis expires only the records.
  createSession: {
    keys: 3,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
if tonumber(ARGV[4]) <= 0 then return 'created' end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'orgId', ARGV[2], 'expiresAt', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 'created'`,
  },
  // KEYS: session. ARGV: org sessions stem, sessionId, now, channel, message head.
  // Reply: 1 if a live session went.
  deleteSession: {
    keys: 1,
    lua: `${announce}
local record = redis.call('HMGET', KEYS[1], 'orgId', 'expiresAt')
if not record[1] then
  announce(ARGV[4], ARGV[5], {})
  return 0
end
local expiresAt = tonumber(record[2])
local live = expiresAt ~= nil and expiresAt > tonumber(ARGV[3])
announce(ARGV[4], ARGV[5], live and {{kind = 'session', cacheKey = ARGV[2]}} or {})
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[1] .. record[1], ARGV[2])
if live then return 1 end
return 0`,
  },
  // KEYS: n counters, then the known set (optional). ARGV: n, windowMs, then per counter
  // its limit and 1 if exempt when known, then (with the set) member and known-after (epoch ms).
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
