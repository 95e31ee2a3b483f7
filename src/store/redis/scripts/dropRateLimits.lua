-- dropRateLimits: RateLimitStore#dropRateLimits (redis/rate-limits.ts). Removes o:<org id> and
-- every k: field whose value is the organization's (<org id> <limit>); announced as setRateLimit.
-- keys: 1
-- KEYS[1]  the rate-limit table (hash)
-- ARGV[1]  org id
-- ARGV[2]  the invalidation channel
-- ARGV[3]  the message head
-- Reply: how many fields went.
--@include lib/announce.lua
local own, prefix = 'o:' .. ARGV[1], ARGV[1] .. ' '
local fields = {}
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local field = entries[i]
  if field == own or (string.sub(field, 1, 2) == 'k:' and string.sub(entries[i + 1], 1, #prefix) == prefix) then fields[#fields + 1] = field end
end
announce(ARGV[2], ARGV[3], {{kind = 'rate_limits', cacheKey = ARGV[1]}})
for _, field in ipairs(fields) do redis.call('HDEL', KEYS[1], field) end
return #fields
