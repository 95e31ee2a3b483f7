-- createPasswordReset: Store#createPasswordReset (redis/password-resets.ts). Records the
-- organization's one live reset (its record's `pr` names it: an earlier reset is worthless from
-- now on, and expires on its own) and ends every one of its sessions, announced, in one step.
-- keys: 5
-- KEYS[1]  the organization's record
-- KEYS[2]  the reset, by its token's digest (string)
-- KEYS[3]  the organization's sessions (sorted set)
-- KEYS[4]  the organization's session info (hash)
-- KEYS[5]  the tag's sessions (hash)
-- ARGV[1]  the reset's value (<packed org id> <expiresAt packed>)
-- ARGV[2]  ttlMs (> 0)
-- ARGV[3]  the token's digest
-- ARGV[4]  the organization's shard tag
-- ARGV[5]  the invalidation channel
-- ARGV[6]  the message head
-- Reply: 0 when there is no organization, else the ended sessions' ids.
--@include lib/announce.lua
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[5], ARGV[6], {})
  return 0
end
local ids = redis.call('ZRANGE', KEYS[3], 0, -1)
local revoked, full = {}, {}
for i, id in ipairs(ids) do
  full[i] = ARGV[4] .. '.' .. id
  revoked[i] = {kind = 'session', cacheKey = full[i]}
end
announce(ARGV[5], ARGV[6], revoked)
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[1], 'pr', ARGV[3])
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[5], id) end
redis.call('DEL', KEYS[3], KEYS[4])
return full
