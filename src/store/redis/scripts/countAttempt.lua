-- countAttempt: CounterStore#countAttempt (redis/counters.ts), one place's part. Checks every
-- counter first and counts only if all are below their limits, so a window never admits more
-- than its limit. A counter found without a TTL (never expected) gets one, so nothing stays
-- locked forever.
-- keys: any
-- KEYS[1..n]  the counters
-- KEYS[n + 1]  the known set (optional)
-- ARGV[1]  n
-- ARGV[2]  windowMs
-- ARGV[1 + 2i], ARGV[2 + 2i]  per counter i: its limit, 1 if exempt when known
-- ARGV[3 + 2n], ARGV[4 + 2n]  with the set: member and known-after (epoch ms); without it:
--   ARGV[3 + 2n] is 1 if the member was found known in another place's step, else 0
-- Reply: {1, known, exhausted, indexes counted} when allowed, {0, ms to wait} when refused.
local n = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local known = false
if #KEYS > n then
  local seen = redis.call('ZSCORE', KEYS[n + 1], ARGV[3 + 2 * n])
  known = seen ~= false and tonumber(seen) > tonumber(ARGV[4 + 2 * n])
else
  known = ARGV[3 + 2 * n] == '1'
end
local applying = {}
local retry = 0
for i = 1, n do
  if not (known and ARGV[2 + 2 * i] == '1') then
    applying[#applying + 1] = i
    local count = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
    if count >= tonumber(ARGV[1 + 2 * i]) then
      local ttl = redis.call('PTTL', KEYS[i])
      if ttl < 0 then
        redis.call('PEXPIRE', KEYS[i], window)
        ttl = window
      end
      if ttl > retry then retry = ttl end
    end
  end
end
if retry > 0 then return {0, retry} end
local exhausted = 0
local counted = {}
for _, i in ipairs(applying) do
  local count = redis.call('INCR', KEYS[i])
  if count == 1 or redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], window) end
  if count >= tonumber(ARGV[1 + 2 * i]) then exhausted = 1 end
  counted[#counted + 1] = i
end
return {1, known and 1 or 0, exhausted, counted}
