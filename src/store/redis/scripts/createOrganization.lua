-- createOrganization: Store#createOrganizationIfEmailFree (redis/organizations.ts), its first step.
-- Writes the organization's record unless one with its id exists; the e-mail is claimed after.
-- keys: 1
-- KEYS[1]  the organization's record (<base>o:<org>)
-- ARGV[1]  name
-- ARGV[2]  email (normalized)
-- ARGV[3]  passwordHash
-- ARGV[4]  createdAt
-- Reply: 'created', or 'exists' (nothing written).
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'email', ARGV[2], 'passwordHash', ARGV[3], 'createdAt', ARGV[4])
return 'created'
