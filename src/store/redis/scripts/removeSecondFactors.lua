-- removeSecondFactors: Store#removeSecondFactors (redis/passkeys.ts). The operator's removal of
-- every factor of an organization: TOTP (pending too), passkeys, recovery codes and a pending
-- passkey registration, in one step.
-- keys: 4
-- KEYS[1]  the organization's TOTP factor (hash)
-- KEYS[2]  the organization's passkeys (hash)
-- KEYS[3]  the organization's recovery codes (set)
-- KEYS[4]  the organization's pending passkey registration (string)
-- Reply: 1 when there was a factor (TOTP or a passkey), else 0.
local had = redis.call('EXISTS', KEYS[1], KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
if had > 0 then return 1 end
return 0
