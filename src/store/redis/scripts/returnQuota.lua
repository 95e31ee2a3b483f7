-- returnQuota: QuotaStore#returnQuota (redis/quotas.ts): gives back leased units not spent, never
-- below zero, so another replica may spend them.
-- keys: 1
-- KEYS[1]  the organization's period (keys.ts organizationQuota)
-- ARGV[1]  amount
-- ARGV[2..]  fields (`o`, `k<key id>`)
-- Reply: 1.
local amount = tonumber(ARGV[1])
for i = 2, #ARGV do
  local used = tonumber(redis.call('HGET', KEYS[1], ARGV[i]))
  if used then
    local back = math.min(used, amount)
    if back > 0 then redis.call('HINCRBY', KEYS[1], ARGV[i], -back) end
  end
end
return 1
