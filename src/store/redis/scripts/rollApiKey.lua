-- rollApiKey: Store#rollApiKey (redis/key-changes.ts): the successor, with the rolled key's name
-- and scopes as they are now, and the rolled key's new end (or its deletion), in one step.
-- keys: 2
-- KEYS[1]  the organization's record (its key index)
-- KEYS[2]  the tag's API keys (hash)
-- ARGV[1]  the rolled key's index field
-- ARGV[2]  its use field
-- ARGV[3]  its new end (decimal ms; '' deletes it)
-- ARGV[4]  the same packed
-- ARGV[5]  the successor's index field
-- ARGV[6]  the successor's entry head (digest, created, prefix)
-- ARGV[7]  its end packed ('' none)
-- ARGV[8]  packed org id
-- ARGV[9]  packed rolled key id
-- ARGV[10] packed successor id
-- ARGV[11] the organization's shard tag
-- ARGV[12] the invalidation channel
-- ARGV[13] the message head
-- Reply: {'not-found'}, or {'rolled', successor entry, rolled key's entry ('' when deleted),
-- its last use or '', its digest}.
-- The 22 below is packing.ts DIGEST_LENGTH.
--@include lib/announce.lua
--@include lib/readMs.lua
--@include lib/entryParts.lua
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  announce(ARGV[12], ARGV[13], {})
  return {'not-found'}
end
local head, expiry, scopes, name = parseEntry(entry)
local digest = string.sub(entry, 1, 22)
local lastUse = redis.call('HGET', KEYS[1], ARGV[2]) or ''
-- The successor is announced too (as createApiKey.lua announces a creation): a replica that
-- remembers it as unknown forgets that.
announce(ARGV[12], ARGV[13], {{kind = 'api_key', cacheKey = ARGV[11] .. '.' .. digest}, {kind = 'api_key', cacheKey = ARGV[11] .. '.' .. string.sub(ARGV[6], 1, 22), created = true}})
local successorTerms = termsOf(ARGV[7] ~= '' and ARGV[7] or nil, scopes)
local successor = entryOf(ARGV[6], successorTerms, name)
redis.call('HSET', KEYS[2], string.sub(ARGV[6], 1, 22), valueOf(ARGV[8], ARGV[10], successorTerms))
redis.call('HSET', KEYS[1], ARGV[5], successor)
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HDEL', KEYS[2], digest)
  return {'rolled', successor, '', '', digest}
end
if not expiry or readMs(expiry) > tonumber(ARGV[3]) then expiry = ARGV[4] end
local terms = termsOf(expiry, scopes)
local rolled = entryOf(head, terms, name)
redis.call('HSET', KEYS[1], ARGV[1], rolled)
redis.call('HSET', KEYS[2], digest, valueOf(ARGV[8], ARGV[9], terms))
return {'rolled', successor, rolled, lastUse, digest}
