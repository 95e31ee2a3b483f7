-- changeOrganizationProfile: Store#changeOrganizationProfile (redis/organization-profiles.ts),
-- the step under the organization's tag, between claiming the new e-mail and releasing the old.
-- Sets the name and/or e-mail; with an e-mail change, ends every session but the caller's; the
-- profile change and the ended sessions are announced (lib/announce.lua), in one step.
-- keys: 4
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's sessions (sorted set)
-- KEYS[3]  the organization's session info (hash)
-- KEYS[4]  the tag's sessions (hash)
-- ARGV[1]  the organization id (the profile revocation's cacheKey)
-- ARGV[2]  the e-mail the record must still hold ('' : no check)
-- ARGV[3]  the new name ('' : unchanged)
-- ARGV[4]  the new e-mail ('' : unchanged; sessions end only when given)
-- ARGV[5]  the session kept (its id after the tag; '' : none)
-- ARGV[6]  the organization's shard tag
-- ARGV[7]  the invalidation channel
-- ARGV[8]  the message head
-- Reply: 0 when there is no organization; {'conflict', <its e-mail>} when it holds another e-mail
-- than ARGV[2]; else {'changed', <previous name>, <previous e-mail>, <ended session ids>...}.
--@include lib/announce.lua
if redis.call('EXISTS', KEYS[1]) == 0 then
  announce(ARGV[7], ARGV[8], {})
  return 0
end
local previous = redis.call('HMGET', KEYS[1], 'name', 'email')
if ARGV[2] ~= '' and previous[2] ~= ARGV[2] then
  announce(ARGV[7], ARGV[8], {})
  return {'conflict', previous[2]}
end
local revoked = {{kind = 'profile', cacheKey = ARGV[1]}}
local ended = {}
if ARGV[4] ~= '' then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if id ~= ARGV[5] then
      ended[#ended + 1] = id
      revoked[#revoked + 1] = {kind = 'session', cacheKey = ARGV[6] .. '.' .. id}
    end
  end
end
announce(ARGV[7], ARGV[8], revoked)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'name', ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'email', ARGV[4]) end
local reply = {'changed', previous[1], previous[2]}
for _, id in ipairs(ended) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HDEL', KEYS[4], id)
  reply[#reply + 1] = ARGV[6] .. '.' .. id
end
return reply
