-- beginTotp: Store#beginTotp (redis/mfa.ts). Keeps a pending TOTP secret unless a factor is active.
-- keys: 3
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's (or the member's: member-factors.ts) TOTP factor (hash)
-- KEYS[3]  the organization's members (hash)
-- ARGV[1]  the encrypted secret
-- ARGV[2]  the member id, '' for the organization's own factor
-- Reply: 0 when there is no organization (or member), 'active' when a factor is active, else 'pending'.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
-- A member removed meanwhile: no secret is stored for nobody.
if ARGV[2] ~= '' and redis.call('HEXISTS', KEYS[3], ARGV[2]) == 0 then return 0 end
if redis.call('HGET', KEYS[2], 'a') == '1' then return 'active' end
-- The last used step survives a new enrolment: a code once accepted stays refused.
redis.call('HSET', KEYS[2], 's', ARGV[1], 'a', '0')
return 'pending'
