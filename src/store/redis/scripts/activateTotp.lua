-- activateTotp: Store#activateTotp (redis/mfa.ts). Activates the pending factor of that secret
-- if the step is later than its last one; when it is the organization's first active factor (no
-- passkey), also sets its recovery codes, in one step.
-- keys: 3
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- KEYS[3]  the organization's passkeys (hash)
-- ARGV[1]  the encrypted secret the caller checked the code against
-- ARGV[2]  the code's time step
-- ARGV[3..]  the recovery code hashes
-- Reply: 2 when activated as the first factor (codes set), 1 when activated beside passkeys, else 0.
local f = redis.call('HMGET', KEYS[1], 's', 'a', 't')
if f[1] ~= ARGV[1] or f[2] ~= '0' then return 0 end
local step = tonumber(ARGV[2])
if step <= (tonumber(f[3]) or 0) then return 0 end
redis.call('HSET', KEYS[1], 'a', '1', 't', ARGV[2])
if redis.call('HLEN', KEYS[3]) > 0 then return 1 end
redis.call('DEL', KEYS[2])
for i = 3, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 2
