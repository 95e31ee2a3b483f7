-- settleAttempt: CounterStore#settleAttempt (redis/counters.ts), one place's part. A give-back
-- never goes below zero nor makes a counter that is not there (DECR keeps the TTL).
-- keys: any
-- KEYS[1..r]  counters to reset
-- KEYS[r + 1..r + g]  counters to give one back
-- KEYS[r + g + 1]  the known set (optional)
-- ARGV[1]  r
-- ARGV[2]  g
-- ARGV[3]  with the set: member
-- ARGV[4]  now (epoch ms)
-- ARGV[5]  ttlMs
-- ARGV[6]  max members kept
-- Reply: 1.
local r = tonumber(ARGV[1])
local g = tonumber(ARGV[2])
for i = 1, r do redis.call('DEL', KEYS[i]) end
for i = r + 1, r + g do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if count > 0 then redis.call('DECR', KEYS[i]) end
end
if #KEYS > r + g then
  local set = KEYS[r + g + 1]
  local now = tonumber(ARGV[4])
  local ttl = tonumber(ARGV[5])
  redis.call('ZADD', set, now, ARGV[3])
  redis.call('ZREMRANGEBYSCORE', set, '-inf', now - ttl)
  redis.call('ZREMRANGEBYRANK', set, 0, -(tonumber(ARGV[6]) + 1))
  redis.call('PEXPIRE', set, ttl)
end
return 1
