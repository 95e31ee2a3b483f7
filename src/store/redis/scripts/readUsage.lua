-- readUsage: UsageStore#readUsage (redis/usage.ts): the counts of some buckets of one
-- organization (all under its shard tag), for it or one of its keys, in one step.
-- keys: any
-- KEYS[1..]  the buckets (keys.ts organizationUsage), oldest first
-- ARGV[1]  the fields' prefix: '' for the organization's, `k<key id>:` for a key's
-- ARGV[2]  how many outcomes (the fields are the prefix then 0..n-1)
-- Reply: the counts, outcome by outcome, bucket after bucket (false for none).
local fields = {}
for i = 0, tonumber(ARGV[2]) - 1 do fields[#fields + 1] = ARGV[1] .. i end
local out = {}
for k = 1, #KEYS do
  local values = redis.call('HMGET', KEYS[k], unpack(fields))
  for i = 1, #values do out[#out + 1] = values[i] end
end
return out
