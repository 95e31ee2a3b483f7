-- appendAuditEvents: the audit trail's append (redis/audit.ts). Each id is <ms>-<sequence>, ms by
-- Redis's clock (never below the stream's last), so no two streams share an id and the
-- admin-wide read orders them all. The stream expires the age bound after its last append, so a
-- trail nobody adds to does not outlive its bound.
-- keys: 1
-- KEYS[1]  one audit stream (an organization's, or the one of no organization)
-- ARGV[1]  max entries
-- ARGV[2]  oldest id to keep (<ms>-0)
-- ARGV[3]  the age bound (ms)
-- ARGV[4..]  per event: its sequence number (the environment's audit sequence: unique across
--   every stream), then its JSON
-- Reply: the last id appended.
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lastMs, lastSeq = -1, -1
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local a, b = string.match(info[i + 1], '^(%d+)-(%d+)$')
      lastMs, lastSeq = tonumber(a), tonumber(b)
    end
  end
end
local id
for i = 4, #ARGV, 2 do
  local seq = tonumber(ARGV[i])
  if ms < lastMs then ms = lastMs end
  if ms == lastMs and seq <= lastSeq then ms = ms + 1 end
  id = string.format('%d-%s', ms, ARGV[i])
  redis.call('XADD', KEYS[1], id, 'e', ARGV[i + 1])
  lastMs, lastSeq = ms, seq
end
redis.call('XTRIM', KEYS[1], 'MAXLEN', ARGV[1])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id
