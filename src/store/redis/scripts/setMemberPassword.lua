-- setMemberPassword: Store#setMemberPassword (redis/member-passwords.ts). Sets a member's (never
-- the first's) password hash in its record and forgets its pending reset, in one step.
-- keys: 1
-- KEYS[1]  the organization's members (hash: member id → JSON {e,h,r,c[,pr]})
-- ARGV[1]  the member id
-- ARGV[2]  the new password hash
-- Reply: 1, or 0 when there is no such member.
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return 0 end
local stored = cjson.decode(json)
if stored.x or not stored.e then return 0 end
stored.h = ARGV[2]
stored.pr = nil
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(stored))
return 1
