-- pruneExpiredApiKeys: Store#pruneExpiredApiKeys (redis/api-keys.ts). Deletes the organization's
-- keys whose expiry (the terms, third part of the entry: replies.ts termsPart) is before ARGV[1].
-- keys: 2
-- KEYS[1]  the organization's record (its key index)
-- KEYS[2]  the tag's API keys (hash)
-- ARGV[1]  before (epoch ms)
-- Reply: how many went.
-- The 22 below is packing.ts DIGEST_LENGTH.
--@include lib/readMs.lua
local before = tonumber(ARGV[1])
local record = redis.call('HGETALL', KEYS[1])
local pruned = 0
for i = 1, #record, 2 do
  local field, entry = record[i], record[i + 1]
  if string.sub(field, 1, 2) == 'k:' then
    local expiry = string.match(entry, '^%S+ %S+ ([^/%s]+)')
    if expiry and expiry ~= '-' and (readMs(expiry) or before) < before then
      redis.call('HDEL', KEYS[1], field, 'u:' .. string.sub(field, 3))
      redis.call('HDEL', KEYS[2], string.sub(entry, 1, 22))
      pruned = pruned + 1
    end
  end
end
return pruned
