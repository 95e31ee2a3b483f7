-- releaseEmail: deletes an e-mail claim only while it is still the given organization's
-- (redis/organizations.ts: after a deletion, and when a sign-up meets a claim of a dead organization).
-- keys: 1
-- KEYS[1]  the e-mail claim (<base>e:<email>, under the e-mail's own tag)
-- ARGV[1]  the organization id the claim must name
-- Reply: 1 when deleted, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
