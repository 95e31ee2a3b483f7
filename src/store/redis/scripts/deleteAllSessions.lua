-- deleteAllSessions: Store#deleteAllSessions (redis/sessions.ts). Ends every session of the
-- organization; every one is announced, the expired too.
-- keys: 3
-- KEYS[1]  the organization's sessions (sorted set)
-- KEYS[2]  the organization's session info (hash)
-- KEYS[3]  the tag's sessions (hash)
-- ARGV[1]  the organization's shard tag
-- ARGV[2]  the invalidation channel
-- ARGV[3]  the message head
-- Reply: the ended sessions' ids.
--@include lib/announce.lua
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
local revoked, full = {}, {}
for i, id in ipairs(ids) do
  full[i] = ARGV[1] .. '.' .. id
  revoked[i] = {kind = 'session', cacheKey = full[i]}
end
announce(ARGV[2], ARGV[3], revoked)
for _, id in ipairs(ids) do redis.call('HDEL', KEYS[3], id) end
redis.call('DEL', KEYS[1], KEYS[2])
return full
