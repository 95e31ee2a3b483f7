-- deleteSession: Store#deleteSession and #deleteSessionIfOwned (redis/sessions.ts). Announced
-- (lib/announce.lua), also when nothing went.
-- keys: 1
-- KEYS[1]  the tag's sessions (hash)
-- ARGV[1]  session field
-- ARGV[2]  now (epoch ms)
-- ARGV[3]  the organization stem of KEYS[1]'s tag
-- ARGV[4]  the invalidation channel
-- ARGV[5]  the message head
-- ARGV[6]  the session id (what is announced)
-- ARGV[7]  owner: a packed org id the session must be of, or '' for any
-- stem: ARGV[3]  the session's organization (from its value) has its index and info named from
--   this stem, which carries KEYS[1]'s shard tag: the same slot.
-- Reply: 1 if a live session went, else 0.
--@include lib/announce.lua
--@include lib/readMs.lua
local value = redis.call('HGET', KEYS[1], ARGV[1])
local org, expiresAt
if value then org, expiresAt = string.match(value, '^(%S+) (%S+)$') end
if not org or (ARGV[7] ~= '' and org ~= ARGV[7]) then
  announce(ARGV[4], ARGV[5], {})
  return 0
end
local live = (readMs(expiresAt) or 0) > tonumber(ARGV[2])
announce(ARGV[4], ARGV[5], live and {{kind = 'session', cacheKey = ARGV[6]}} or {})
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', ARGV[3] .. org .. ':s', ARGV[1])
redis.call('HDEL', ARGV[3] .. org .. ':m', ARGV[1])
if live then return 1 end
return 0
