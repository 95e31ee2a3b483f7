-- claimEmail: the first step of an e-mail change (redis/email-claims.ts). Claims the e-mail for
-- the organization unless another holds it, and marks the claim pending for a while: until the
-- organization's record says the e-mail is its own, a sign-up meeting the claim must not take it
-- for one a cut-off change left behind (which, once the mark is gone, it may release).
-- keys: 2
-- KEYS[1]  the e-mail claim (<base>e:<email>, under the e-mail's own tag)
-- KEYS[2]  the claim's pending mark (<base>ep:<email>, same tag)
-- ARGV[1]  the organization id
-- ARGV[2]  how long the mark lasts, ms
-- Reply: 1 when the claim is the organization's (now, or already), else 0.
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
