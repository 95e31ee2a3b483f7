-- recordApiKeyUse: Store#recordApiKeyUse (redis/api-keys.ts), one organization's part. Keeps the
-- later of the recorded and the given use, for keys the organization still has (a deleted key's
-- use is dropped).
-- keys: 1
-- KEYS[1]  the organization's record (its key index and u: fields)
-- ARGV[1..]  pairs: packed key id, time of use (packMs)
-- Reply: 1.
--@include lib/readMs.lua
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], 'k:' .. ARGV[i]) == 1 then
    local field = 'u:' .. ARGV[i]
    local seen = redis.call('HGET', KEYS[1], field)
    if not seen or readMs(seen) < readMs(ARGV[i + 1]) then redis.call('HSET', KEYS[1], field, ARGV[i + 1]) end
  end
end
return 1
