-- removeTotp: Store#removeTotp (redis/mfa.ts). Removes the factor, and its recovery codes unless a
-- passkey remains (they are the second factor's as a whole).
-- keys: 3
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- KEYS[3]  the organization's passkeys (hash)
-- Reply: 1 when there was a factor, else 0.
local had = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1])
if redis.call('HLEN', KEYS[3]) == 0 then redis.call('DEL', KEYS[2]) end
return had
