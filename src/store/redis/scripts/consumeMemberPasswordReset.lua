-- consumeMemberPasswordReset: Store#consumeMemberPasswordReset (redis/member-passwords.ts). Uses a
-- reset only while it is the member's live one (its value names the organization and the member,
-- it has not ended, and the member's `pr` names its digest): deletes it and sets the member's
-- password hash, in one step. Of two racing uses, the second finds nothing.
-- keys: 2
-- KEYS[1]  the reset, by its token's digest (string)
-- KEYS[2]  the organization's members (hash)
-- ARGV[1]  the packed organization id
-- ARGV[2]  the member id
-- ARGV[3]  the token's digest
-- ARGV[4]  the new password hash
-- ARGV[5]  now (epoch ms, the gateway's clock)
-- Reply: 1, or 0 when the reset is not the member's live one.
--@include lib/readMs.lua
local value = redis.call('GET', KEYS[1])
local org, expiresAt, member
if value then org, expiresAt, member = string.match(value, '^(%S+) (%S+) (%S+)$') end
if not org or org ~= ARGV[1] or member ~= ARGV[2] or (readMs(expiresAt) or 0) <= tonumber(ARGV[5]) then return 0 end
local json = redis.call('HGET', KEYS[2], ARGV[2])
if not json then return 0 end
local stored = cjson.decode(json)
if stored.pr ~= ARGV[3] then return 0 end
stored.pr = nil
stored.h = ARGV[4]
redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(stored))
redis.call('DEL', KEYS[1])
return 1
