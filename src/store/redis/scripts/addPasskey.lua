-- addPasskey: Store#addPasskey (redis/passkeys.ts). Adds a passkey unless the organization is gone,
-- has that credential id or its limit of passkeys; when it is the first active factor (no active
-- TOTP, no passkey) also sets the recovery codes, in one step.
-- keys: 5
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's passkeys (hash)
-- KEYS[3]  the organization's TOTP factor (hash)
-- KEYS[4]  the organization's recovery codes (set)
-- KEYS[5]  the organization's members (hash); KEYS[2..4] are the member's (member-factors.ts) for one
-- ARGV[1]  the credential id
-- ARGV[2]  JSON of what never changes (public key, transports, createdAt)
-- ARGV[3]  its name
-- ARGV[4]  its signature counter
-- ARGV[5]  the most passkeys an organization may hold
-- ARGV[6]  the member id, '' for the organization's own passkeys
-- ARGV[7..]  the recovery code hashes (used only when it is the first factor)
-- Reply: 0 when there is no organization (or member), else 'duplicate', 'limit', 'first' or 'added'.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[6] ~= '' and redis.call('HEXISTS', KEYS[5], ARGV[6]) == 0 then return 0 end
if redis.call('HEXISTS', KEYS[2], 'k:' .. ARGV[1]) == 1 then return 'duplicate' end
local held = redis.call('HLEN', KEYS[2]) / 4
if held >= tonumber(ARGV[5]) then return 'limit' end
local first = held == 0 and redis.call('HGET', KEYS[3], 'a') ~= '1'
-- Always four fields per passkey ('u:' 0 until its first use), so HLEN / 4 counts them.
redis.call('HSET', KEYS[2], 'k:' .. ARGV[1], ARGV[2], 'n:' .. ARGV[1], ARGV[3], 'c:' .. ARGV[1], ARGV[4], 'u:' .. ARGV[1], '0')
if not first then return 'added' end
redis.call('DEL', KEYS[4])
for i = 7, #ARGV do redis.call('SADD', KEYS[4], ARGV[i]) end
return 'first'
