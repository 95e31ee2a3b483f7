-- recordUsage: UsageStore#recordUsage (redis/usage.ts), one organization's hour. Adds each count
-- to the hour's hash and the day's in one step, so the two never disagree, and sets when each is
-- forgotten (7 days after the hour's start, 90 after the day's).
-- keys: 2
-- KEYS[1]  the organization's hour (keys.ts organizationUsage, `h`)
-- KEYS[2]  the organization's day (`d`)
-- ARGV[1]  epoch ms the hour is forgotten at
-- ARGV[2]  epoch ms the day is forgotten at
-- ARGV[3..]  pairs: field (`<outcome>` for the organization, `k<key id>:<outcome>` for a key), count
-- Reply: 1.
for i = 3, #ARGV, 2 do
  local count = tonumber(ARGV[i + 1])
  redis.call('HINCRBY', KEYS[1], ARGV[i], count)
  redis.call('HINCRBY', KEYS[2], ARGV[i], count)
end
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[2], ARGV[2])
return 1
