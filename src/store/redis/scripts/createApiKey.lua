-- createApiKey: Store#createApiKey (redis/api-keys.ts). The organization's own key limit
-- (`maxKeys` in its record) wins over ARGV[5]; its `k:` fields are counted here, in the step that
-- writes, so a burst cannot overshoot.
-- keys: 2
-- KEYS[1]  the organization's record, with its key index
-- KEYS[2]  the tag's API keys (hash)
-- ARGV[1]  the key's digest
-- ARGV[2]  the hot-path value (replies.ts apiKeyValue)
-- ARGV[3]  the index field (k:<packed key id>)
-- ARGV[4]  the index entry (replies.ts apiKeyIndexEntry)
-- ARGV[5]  the default key limit ('' for none)
-- Reply: 'created', 'no-organization' or 'limit-reached'.
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  local limit = tonumber(redis.call('HGET', KEYS[1], 'maxKeys') or ARGV[5])
  local count = 0
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'k:' then count = count + 1 end
  end
  if count >= limit then return 'limit-reached' end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return 'created'
