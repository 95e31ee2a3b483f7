-- removePasskey: Store#removePasskey (redis/passkeys.ts). Removes a passkey, and the recovery codes
-- when it was the last active factor (no other passkey, no active TOTP).
-- keys: 3
-- KEYS[1]  the organization's passkeys (hash)
-- KEYS[2]  the organization's TOTP factor (hash)
-- KEYS[3]  the organization's recovery codes (set)
-- ARGV[1]  the credential id
-- Reply: 1 when removed, 0 when there was no such passkey.
local id = ARGV[1]
if redis.call('HDEL', KEYS[1], 'k:' .. id, 'n:' .. id, 'c:' .. id, 'u:' .. id) == 0 then return 0 end
if redis.call('HLEN', KEYS[1]) == 0 and redis.call('HGET', KEYS[2], 'a') ~= '1' then redis.call('DEL', KEYS[3]) end
return 1
