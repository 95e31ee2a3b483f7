-- consumePasswordReset: Store#consumePasswordReset (redis/password-resets.ts). Uses a reset only
-- while it is the organization's live one (its value names the organization, it has not ended,
-- and the record's `pr` names its digest): deletes it, sets the password hash and ends every
-- session, announced, in one step. Of two racing uses, the second finds nothing.
-- keys: 5
-- KEYS[1]  the reset, by its token's digest (string)
-- KEYS[2]  the organization's record
-- KEYS[3]  the organization's sessions (sorted set)
-- KEYS[4]  the organization's session info (hash)
-- KEYS[5]  the tag's sessions (hash)
-- ARGV[1]  the packed organization id
-- ARGV[2]  the token's digest
-- ARGV[3]  the new password hash
-- ARGV[4]  now (epoch ms, the gateway's clock)
-- ARGV[5]  the organization's shard tag
-- ARGV[6]  the invalidation channel
-- ARGV[7]  the message head
-- Reply: 0 when the reset is not the organization's live one, else the ended sessions' ids.
--@include lib/announce.lua
--@include lib/readMs.lua
local value = redis.call('GET', KEYS[1])
local org, expiresAt
if value then org, expiresAt = string.match(value, '^(%S+) (%S+)$') end
if not org or org ~= ARGV[1] or (readMs(expiresAt) or 0) <= tonumber(ARGV[4])
    or redis.call('HGET', KEYS[2], 'pr') ~= ARGV[2] then
  announce(ARGV[6], ARGV[7], {})
  return 0
end
local ids = redis.call('ZRANGE', KEYS[3], 0, -1)
local revoked, full = {}, {}
for i, id in ipairs(ids) do
  full[i] = ARGV[5] .. '.' .. id
  revoked[i] = {kind = 'session', cacheKey = full[i]}
end
announce(ARGV[6], ARGV[7], revoked)
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[2], 'pr')
redis.call('HSET', KEYS[2], 'passwordHash', ARGV[3])
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[5], id) end
redis.call('DEL', KEYS[3], KEYS[4])
return full
