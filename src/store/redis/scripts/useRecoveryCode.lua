-- useRecoveryCode: Store#useRecoveryCode (redis/mfa.ts). Removes an active factor's recovery code.
-- keys: 2
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- ARGV[1]  the code's hash
-- Reply: 1 when it was there (now used), else 0.
if redis.call('HGET', KEYS[1], 'a') ~= '1' then return 0 end
return redis.call('SREM', KEYS[2], ARGV[1])
