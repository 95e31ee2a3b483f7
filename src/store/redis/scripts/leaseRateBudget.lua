-- leaseRateBudget: RateLimitStore#leaseRateBudget (redis/rate-limits.ts). Now is Redis's clock
-- (TIME), so replicas with skewed clocks share one window. Opens a new window (DEL, HSET, PEXPIRE)
-- when there is none, it ended, or its length changed; grants as rate-limits.ts grantOf:
-- min(want, left, max(1, ceil(left / 4))), 0 when none is left.
-- keys: 1
-- KEYS[1]  the credential's window (keys.ts rateWindow)
-- ARGV[1]  limit
-- ARGV[2]  window ms
-- ARGV[3]  want
-- ARGV[4]  replica id
-- Reply: {granted, used, ms until the window ends, replicas that leased from it}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit, window, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 's', 'w', 'n')
local start, length, used = tonumber(state[1]), tonumber(state[2]), tonumber(state[3])
if not start or not length or not used or length ~= window or now >= start + length then
  start, used = now, 0
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 's', start, 'w', window, 'n', 0)
  redis.call('PEXPIRE', KEYS[1], window)
end
local left = limit - used
local granted = 0
if left > 0 and want > 0 then granted = math.min(want, left, math.max(1, math.ceil(left / 4))) end
if granted > 0 then used = redis.call('HINCRBY', KEYS[1], 'n', granted) end
redis.call('HSET', KEYS[1], 'p:' .. ARGV[4], 1)
-- s, w and n, then one p: field per replica.
return {granted, used, math.min(window, start + window - now), redis.call('HLEN', KEYS[1]) - 3}
