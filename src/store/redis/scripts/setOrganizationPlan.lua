-- setOrganizationPlan: OrganizationPlanStore#setOrganizationPlan (redis/organization-plans.ts).
-- Announces {kind = 'plan', cacheKey = org id} before the write, as setRateLimit does: a change
-- nobody hears would leave replicas deciding by the old plan.
-- keys: 1
-- KEYS[1]  the organization-plan table (hash)
-- ARGV[1]  org id
-- ARGV[2]  plan name ('' removes it: the default plan again)
-- ARGV[3]  the invalidation channel
-- ARGV[4]  the message head
-- Reply: 1.
--@include lib/announce.lua
announce(ARGV[3], ARGV[4], {{kind = 'plan', cacheKey = ARGV[1]}})
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1
