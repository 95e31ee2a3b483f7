-- beginTotp: Store#beginTotp (redis/mfa.ts). Keeps a pending TOTP secret unless a factor is active.
-- keys: 2
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's TOTP factor (hash)
-- ARGV[1]  the encrypted secret
-- Reply: 0 when there is no organization, 'active' when a factor is active, else 'pending'.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[2], 'a') == '1' then return 'active' end
-- The last used step survives a new enrolment: a code once accepted stays refused.
redis.call('HSET', KEYS[2], 's', ARGV[1], 'a', '0')
return 'pending'
