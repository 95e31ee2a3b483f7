-- useTotpStep: Store#useTotpStep (redis/mfa.ts). Records a used time step of an active factor if
-- it is later than the last one: of two replicas given the same code, exactly one gets 1.
-- keys: 1
-- KEYS[1]  the organization's TOTP factor (hash)
-- ARGV[1]  the code's time step
-- Reply: 1 when accepted, else 0.
local f = redis.call('HMGET', KEYS[1], 'a', 't')
if f[1] ~= '1' then return 0 end
if tonumber(ARGV[1]) <= (tonumber(f[2]) or 0) then return 0 end
redis.call('HSET', KEYS[1], 't', ARGV[1])
return 1
