-- createSession: Store#createSession (redis/sessions.ts). Redis cannot expire a hash field, so
-- this prunes: the organization's expired sessions, and two sampled fields of the tag's hash
-- (sessions of other organizations that stopped logging in). Each hash and index expires as a
-- whole with its last session.
-- keys: 4
-- KEYS[1]  the organization's record
-- KEYS[2]  the tag's sessions (hash)
-- KEYS[3]  the organization's sessions (sorted set)
-- KEYS[4]  the organization's session info (hash)
-- ARGV[1]  session field
-- ARGV[2]  value (<packed org id> <expiresAt packed>)
-- ARGV[3]  expiresAt (epoch ms)
-- ARGV[4]  ttlMs
-- ARGV[5]  now (epoch ms)
-- ARGV[6]  the organization stem of KEYS[2]'s tag (keys.ts organizationStem)
-- ARGV[7]  info value ('' for none)
-- ARGV[8]  session limit ('' for none)
-- stem: ARGV[6]  a sampled session of another organization of the same tag has its index and
--   info named from this stem and the packed organization id in its value: the stem carries the
--   shard tag of the KEYS, so those keys are in their slot (Cluster-safe, checked by
--   test/store/redis-scripts.test.ts).
-- Reply: 'created', 'no-organization' or 'limit-reached'.
--@include lib/readMs.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
local now = tonumber(ARGV[5])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[4], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if ARGV[8] ~= nil and ARGV[8] ~= '' and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return 'limit-reached' end
local sample = redis.call('HRANDFIELD', KEYS[2], 2, 'WITHVALUES')
for i = 1, #sample, 2 do
  local org, expiresAt = string.match(sample[i + 1], '^(%S+) (%S+)$')
  if org and (readMs(expiresAt) or 0) <= now then
    redis.call('HDEL', KEYS[2], sample[i])
    redis.call('ZREM', ARGV[6] .. org .. ':s', sample[i])
    redis.call('HDEL', ARGV[6] .. org .. ':m', sample[i])
  end
end
local ttl = tonumber(ARGV[4])
if ttl <= 0 then return 'created' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[7]) end
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
if redis.call('EXISTS', KEYS[4]) == 1 and redis.call('PTTL', KEYS[4]) < ttl then redis.call('PEXPIRE', KEYS[4], ttl) end
return 'created'
