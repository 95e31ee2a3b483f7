-- takeInvitation: Store#takeInvitation (redis/members.ts): one use of an invitation, so of
-- parallel accepts (on any replicas) one takes it.
-- keys: 1
-- KEYS[1]  the organization's invitations (hash: invitation id → JSON, with `x` its expiresAt and `t` its token digest)
-- ARGV[1]  the invitation id
-- ARGV[2]  the token's digest
-- ARGV[3]  now (epoch ms, the gateway's clock)
-- Reply: the invitation's JSON, or false.
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return false end
local invitation = cjson.decode(json)
if invitation.t ~= ARGV[2] then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
if tonumber(invitation.x) <= tonumber(ARGV[3]) then return false end
return json
