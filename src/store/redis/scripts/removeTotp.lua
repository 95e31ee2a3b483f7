-- removeTotp: Store#removeTotp (redis/mfa.ts). Removes the factor and its recovery codes.
-- keys: 2
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's recovery codes (set)
-- Reply: 1 when there was a factor, else 0.
local had = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
return had
