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
-- ARGV[6]  the key's lookup hash (<tag>.<digest>), as the credential caches name it
-- ARGV[7]  the invalidation channel
-- ARGV[8]  the message head
-- Reply: 'created', 'no-organization' or 'limit-reached'.
-- The creation is announced like a revocation (as lib/announce.lua does: one PUBLISH, also when
-- nothing is created, before the writes), so a replica that remembers the key as unknown (someone
-- asked for it before it existed) forgets that at once. Unlike a revocation's, a refused PUBLISH
-- (an ACL user without the channel) does not stop the creation (redis.pcall): a replica that
-- misses it refuses the key no longer than its negative TTL, and sees a gap in the sequence.
local function announce(channel, head, created)
  local items = {}
  for i, item in ipairs(created) do items[i] = cjson.encode(item) end
  redis.pcall('PUBLISH', channel, head .. '[' .. table.concat(items, ',') .. ']}')
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[7], ARGV[8], {})
  return 'no-organization'
end
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  local limit = tonumber(redis.call('HGET', KEYS[1], 'maxKeys') or ARGV[5])
  local count = 0
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'k:' then count = count + 1 end
  end
  if count >= limit then
    announce(ARGV[7], ARGV[8], {})
    return 'limit-reached'
  end
end
announce(ARGV[7], ARGV[8], {{kind = 'api_key', cacheKey = ARGV[6], created = true}})
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
return 'created'
