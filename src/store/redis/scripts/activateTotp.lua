-- activateTotp: Store#activateTotp (redis/mfa.ts). Activates the pending factor of that secret
-- if the step is later than its last one, and sets its recovery codes, in one step.
-- keys: 2
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- ARGV[1]  the encrypted secret the caller checked the code against
-- ARGV[2]  the code's time step
-- ARGV[3..]  the recovery code hashes
-- Reply: 1 when activated, else 0.
local f = redis.call('HMGET', KEYS[1], 's', 'a', 't')
if f[1] ~= ARGV[1] or f[2] ~= '0' then return 0 end
local step = tonumber(ARGV[2])
if step <= (tonumber(f[3]) or 0) then return 0 end
redis.call('HSET', KEYS[1], 'a', '1', 't', ARGV[2])
redis.call('DEL', KEYS[2])
for i = 3, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1
