-- setKeyQuota: KeyQuotaStore#setKeyQuota (redis/key-quotas.ts).
-- Announces {kind = 'key_quota', cacheKey = org id} before the write, as setOrganizationPlan
-- does: a change nobody hears would leave replicas spending by the old quota.
-- keys: 1
-- KEYS[1]  the key-quota table (hash)
-- ARGV[1]  org id
-- ARGV[2]  key id
-- ARGV[3]  the quota ('' removes it)
-- ARGV[4]  the invalidation channel
-- ARGV[5]  the message head
-- Reply: 1.
--@include lib/announce.lua
announce(ARGV[4], ARGV[5], {{kind = 'key_quota', cacheKey = ARGV[1]}})
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[2])
else
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[1] .. ' ' .. ARGV[3])
end
return 1
