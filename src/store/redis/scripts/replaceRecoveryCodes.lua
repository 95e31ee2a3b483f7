-- replaceRecoveryCodes: Store#replaceRecoveryCodes (redis/mfa.ts). The old codes die, the new ones
-- live, while any factor (an active TOTP factor or a passkey) is active.
-- keys: 3
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- KEYS[3]  the organization's passkeys (hash)
-- ARGV[1..]  the new recovery code hashes
-- Reply: 1 when replaced, 0 when there is no active factor.
if redis.call('HGET', KEYS[1], 'a') ~= '1' and redis.call('HLEN', KEYS[3]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
for i = 1, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1
