-- failMfaChallenge: Store#failMfaChallenge (redis/mfa.ts). Counts a wrong code; the limit-th spends it.
-- keys: 1
-- KEYS[1]  the challenge (hash)
-- ARGV[1]  the limit
-- Reply: the wrong codes so far, 0 when there is no challenge.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local failures = redis.call('HINCRBY', KEYS[1], 'f', 1)
if failures >= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return failures
