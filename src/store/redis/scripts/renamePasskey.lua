-- renamePasskey: Store#renamePasskey (redis/passkeys.ts). Renames a passkey the organization has.
-- keys: 1
-- KEYS[1]  the organization's passkeys (hash)
-- ARGV[1]  the credential id
-- ARGV[2]  the new name
-- Reply: 1 when renamed, 0 when there is no such passkey.
if redis.call('HEXISTS', KEYS[1], 'k:' .. ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'n:' .. ARGV[1], ARGV[2])
return 1
