-- createMfaChallenge: Store#createMfaChallenge (redis/mfa.ts). A login's second-factor challenge.
-- keys: 1
-- KEYS[1]  the challenge (hash)
-- ARGV[1]  the organization id
-- ARGV[2]  the password check digest
-- ARGV[3]  expiresAt (epoch ms)
-- ARGV[4]  its time to live (ms)
-- ARGV[5]  the WebAuthn challenge of the passkey options offered, '' for none
-- ARGV[6]  the member whose password was right, '' for the organization's own (its first member)
-- Reply: 1.
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'p', ARGV[2], 'e', ARGV[3], 'f', '0')
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'w', ARGV[5]) end
if ARGV[6] and ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'u', ARGV[6]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
