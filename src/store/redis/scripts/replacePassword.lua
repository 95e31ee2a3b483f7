-- replacePassword: Store#replacePassword (redis/password-resets.ts). Sets the organization's
-- password hash and ends every one of its sessions, announced (lib/announce.lua), in one step.
-- keys: 4
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's sessions (sorted set)
-- KEYS[3]  the organization's session info (hash)
-- KEYS[4]  the tag's sessions (hash)
-- ARGV[1]  the new password hash
-- ARGV[2]  the organization's shard tag
-- ARGV[3]  the invalidation channel
-- ARGV[4]  the message head
-- Reply: 0 when there is no organization, else the ended sessions' ids.
--@include lib/announce.lua
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[3], ARGV[4], {})
  return 0
end
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
local revoked, full = {}, {}
for i, id in ipairs(ids) do
  full[i] = ARGV[2] .. '.' .. id
  revoked[i] = {kind = 'session', cacheKey = full[i]}
end
announce(ARGV[3], ARGV[4], revoked)
redis.call('HSET', KEYS[1], 'passwordHash', ARGV[1])
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[4], id) end
redis.call('DEL', KEYS[2], KEYS[3])
return full
