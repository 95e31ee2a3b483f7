-- readCounters: CounterStore#readCounters (redis/counters.ts).
-- keys: any
-- KEYS[1..]  counters
-- ARGV  none
-- Reply: {count, ms left} per counter; {0, 0} for one that is not there.
local out = {}
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if count == nil or ttl < 0 then out[i] = {0, 0} else out[i] = {count, ttl} end
end
return out
