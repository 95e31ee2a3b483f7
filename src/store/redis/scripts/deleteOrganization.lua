-- deleteOrganization: Store#deleteOrganization (redis/organizations.ts). Deletes the organization
-- with its keys and sessions and announces what it revoked (lib/announce.lua); the caller then
-- releases the e-mail claim (another tag).
-- keys: 5
-- KEYS[1]  the organization's record, with its key index
-- KEYS[2]  the organization's sessions (sorted set)
-- KEYS[3]  the tag's API keys (hash)
-- KEYS[4]  the tag's sessions (hash)
-- KEYS[5]  the organization's session info (hash)
-- ARGV[1]  the organization's shard tag
-- ARGV[2]  the invalidation channel
-- ARGV[3]  the message head (invalidation.ts)
-- ARGV[4]  the organization id (its provider tokens are revoked with it: issue 49)
-- Reply: nil when there was no organization, else {email, revoked key hashes, revoked session ids}.
-- The 22 below is packing.ts DIGEST_LENGTH: an index entry's first 22 characters are the digest.
--@include lib/announce.lua
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[2], ARGV[3], {})
  return false
end
local email = redis.call('HGET', KEYS[1], 'email') or ''
local digests = {}
local record = redis.call('HGETALL', KEYS[1])
for i = 1, #record, 2 do
  if string.sub(record[i], 1, 2) == 'k:' then digests[#digests + 1] = string.sub(record[i + 1], 1, 22) end
end
local sessions = redis.call('ZRANGE', KEYS[2], 0, -1)
local revoked, hashes, ids = {}, {}, {}
for i, digest in ipairs(digests) do
  hashes[i] = ARGV[1] .. '.' .. digest
  revoked[#revoked + 1] = {kind = 'api_key', cacheKey = hashes[i]}
end
for i, id in ipairs(sessions) do
  ids[i] = ARGV[1] .. '.' .. id
  revoked[#revoked + 1] = {kind = 'session', cacheKey = ids[i]}
end
revoked[#revoked + 1] = {kind = 'organization', cacheKey = ARGV[4]}
announce(ARGV[2], ARGV[3], revoked)
for _, digest in ipairs(digests) do redis.call('HDEL', KEYS[3], digest) end
for _, id in ipairs(sessions) do redis.call('HDEL', KEYS[4], id) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[5])
return {email, hashes, ids}
