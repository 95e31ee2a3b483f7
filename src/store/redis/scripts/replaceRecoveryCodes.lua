-- replaceRecoveryCodes: Store#replaceRecoveryCodes (redis/mfa.ts). The old codes die, the new ones live.
-- keys: 2
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- ARGV[1..]  the new recovery code hashes
-- Reply: 1 when replaced, 0 when there is no active factor.
if redis.call('HGET', KEYS[1], 'a') ~= '1' then return 0 end
redis.call('DEL', KEYS[2])
for i = 1, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1
