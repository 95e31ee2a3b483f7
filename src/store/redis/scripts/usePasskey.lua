-- usePasskey: Store#usePasskey (redis/passkeys.ts). Stores a verified use's signature counter and
-- time, only if the counter is above the stored one or both are 0 (an authenticator without a
-- counter): of two replicas given one assertion with a counter, exactly one gets 1.
-- keys: 1
-- KEYS[1]  the organization's passkeys (hash)
-- ARGV[1]  the credential id
-- ARGV[2]  the counter the assertion carries
-- ARGV[3]  now (epoch ms)
-- Reply: 1 when accepted, else 0.
local stored = redis.call('HGET', KEYS[1], 'c:' .. ARGV[1])
if not stored then return 0 end
local old = tonumber(stored)
local new = tonumber(ARGV[2])
if (new > 0 or old > 0) and new <= old then return 0 end
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], ARGV[2], 'u:' .. ARGV[1], ARGV[3])
return 1
