-- useRecoveryCode: Store#useRecoveryCode (redis/mfa.ts). Removes a recovery code while any factor
-- (an active TOTP factor or a passkey) is active.
-- keys: 3
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- KEYS[3]  the organization's passkeys (hash)
-- ARGV[1]  the code's hash
-- Reply: 1 when it was there (now used), else 0.
if redis.call('HGET', KEYS[1], 'a') ~= '1' and redis.call('HLEN', KEYS[3]) == 0 then return 0 end
return redis.call('SREM', KEYS[2], ARGV[1])
