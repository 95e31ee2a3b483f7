-- setRateLimit: RateLimitStore#setRateLimit (redis/rate-limits.ts). Announces
-- {kind = 'rate_limits', cacheKey = org id} before the write, as the revoking scripts do: a change
-- nobody hears would leave replicas on the old table.
-- keys: 1
-- KEYS[1]  the rate-limit table (hash)
-- ARGV[1]  field (o:<org id> or k:<key id>)
-- ARGV[2]  value ('' removes it)
-- ARGV[3]  the invalidation channel
-- ARGV[4]  the message head
-- ARGV[5]  org id
-- Reply: 1.
--@include lib/announce.lua
announce(ARGV[3], ARGV[4], {{kind = 'rate_limits', cacheKey = ARGV[5]}})
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1
