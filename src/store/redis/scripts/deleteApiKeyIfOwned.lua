-- deleteApiKeyIfOwned: Store#deleteApiKeyIfOwned (redis/api-keys.ts). The key's last use
-- (u:<packed key id>) goes with it; announced (lib/announce.lua), also when nothing went.
-- keys: 2
-- KEYS[1]  the organization's record (its key index)
-- KEYS[2]  the tag's API keys (hash)
-- ARGV[1]  the index field (k:<packed key id>; '' for an id no key can have)
-- ARGV[2]  the organization's shard tag
-- ARGV[3]  the invalidation channel
-- ARGV[4]  the message head
-- Reply: the deleted key's lookup hash, or nil.
-- The 22 below is packing.ts DIGEST_LENGTH.
--@include lib/announce.lua
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  announce(ARGV[3], ARGV[4], {})
  return false
end
local digest = string.sub(entry, 1, 22)
local hash = ARGV[2] .. '.' .. digest
announce(ARGV[3], ARGV[4], {{kind = 'api_key', cacheKey = hash}})
redis.call('HDEL', KEYS[1], ARGV[1], 'u:' .. string.sub(ARGV[1], 3))
redis.call('HDEL', KEYS[2], digest)
return hash
