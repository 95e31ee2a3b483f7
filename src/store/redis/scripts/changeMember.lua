-- changeMember: Store#changeMemberRole and Store#removeMember (redis/members.ts). Counts the
-- organization's owners and changes the member in the same step, so two demotions racing on two
-- replicas cannot both pass the "one owner stays" check.
-- keys: 6
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's members (hash: member id → JSON {e,h,r,c}; the first member's
--          field, when present, only {r} (a changed role) or {x:1} (removed))
-- The member's second factor (member-factors.ts; the organization's own for the first member),
-- deleted with its removal:
-- KEYS[3]  its TOTP factor (hash)
-- KEYS[4]  its recovery codes (set)
-- KEYS[5]  its passkeys (hash)
-- KEYS[6]  its pending passkey registration (string)
-- ARGV[1]  the member id to change
-- ARGV[2]  the organization's first member id
-- ARGV[3]  the new role, or '' to remove the member
-- Reply: {'not-found'}, {'last-owner'} or {'ok', <the member's field before, '' for none>}.
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not-found'} end
local fields = redis.call('HGETALL', KEYS[2])
local roles = {}
local before = {}
roles[ARGV[2]] = 'owner'
before[ARGV[2]] = ''
for i = 1, #fields, 2 do
  local stored = cjson.decode(fields[i + 1])
  if stored.x then roles[fields[i]] = nil else roles[fields[i]] = stored.r end
  before[fields[i]] = fields[i + 1]
end
local current = roles[ARGV[1]]
if current == nil then return {'not-found'} end
local owners = 0
for _, role in pairs(roles) do if role == 'owner' then owners = owners + 1 end end
if current == 'owner' and ARGV[3] ~= 'owner' and owners <= 1 then return {'last-owner'} end
-- A removed member's second factor goes with it: no secret outlives its holder.
if ARGV[3] == '' then redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6]) end
if ARGV[1] == ARGV[2] then
  if ARGV[3] == '' then redis.call('HSET', KEYS[2], ARGV[1], '{"x":1}')
  else redis.call('HSET', KEYS[2], ARGV[1], cjson.encode({r = ARGV[3]})) end
elseif ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  local stored = cjson.decode(before[ARGV[1]])
  stored.r = ARGV[3]
  redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(stored))
end
return {'ok', before[ARGV[1]]}
