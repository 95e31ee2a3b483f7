-- leaseQuota: QuotaStore#leaseQuota (redis/quotas.ts), as quotas.ts quotaGrantOf: grants what
-- every counter still holds (all of want or nothing when whole) and counts it on each, in one
-- step, so the replicas together never admit more than any counter's limit.
-- keys: 1
-- KEYS[1]  the organization's period (keys.ts organizationQuota)
-- ARGV[1]  epoch ms the period is forgotten at (a day after its end)
-- ARGV[2]  want
-- ARGV[3]  1: whole (all or nothing), 0: as much as is left
-- ARGV[4..]  pairs: field (`o` the organization's, `k<key id>` a key's), limit
-- Reply: {granted, what the first counter has left after it, what the least has left after it}.
local want, whole = tonumber(ARGV[2]), ARGV[3] == '1'
local least, first = nil, nil
for i = 4, #ARGV, 2 do
  local left = tonumber(ARGV[i + 1]) - (tonumber(redis.call('HGET', KEYS[1], ARGV[i])) or 0)
  if left < 0 then left = 0 end
  if first == nil then first = left end
  if least == nil or left < least then least = left end
end
local granted = 0
if want > 0 then
  if want <= least then granted = want elseif not whole then granted = least end
end
if granted > 0 then
  for i = 4, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], granted) end
  redis.call('PEXPIREAT', KEYS[1], ARGV[1])
end
return {granted, first - granted, least - granted}
