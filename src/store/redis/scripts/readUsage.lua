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
-- One HGET a field, not HMGET with unpack(): every call's key stays checkable (test/helpers/lua-keys.ts).
for k = 1, #KEYS do
  for i = 1, #fields do out[#out + 1] = redis.call('HGET', KEYS[k], fields[i]) end
end
return out
