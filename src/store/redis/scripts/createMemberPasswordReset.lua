-- createMemberPasswordReset: Store#createMemberPasswordReset (redis/member-passwords.ts). Records a
-- member's one live reset: its record's `pr` names the token's digest (an earlier reset is
-- worthless from now on, and expires on its own), in one step.
-- keys: 2
-- KEYS[1]  the organization's members (hash)
-- KEYS[2]  the reset, by its token's digest (string)
-- ARGV[1]  the member id
-- ARGV[2]  the reset's value (<packed org id> <expiresAt packed> <member id>)
-- ARGV[3]  ttlMs (> 0)
-- ARGV[4]  the token's digest
-- Reply: 1, or 0 when there is no such member.
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return 0 end
local stored = cjson.decode(json)
if stored.x or not stored.e then return 0 end
stored.pr = ARGV[4]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(stored))
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
