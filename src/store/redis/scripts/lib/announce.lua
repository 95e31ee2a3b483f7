-- announce(channel, head, revoked): PUBLISHes a revoking script's message, included by each.
-- The revoking scripts announce what they revoke on the invalidation channel themselves, in the
-- same atomic step as the write: a revocation is then announced exactly when it is committed
-- (a separate PUBLISH after the script could fail and leave a committed revocation unannounced),
-- and on Cluster a PUBLISH from a script still reaches every node. The last two ARGV are the
-- channel and the message head from the bus (origin and seq, invalidation.ts); the script
-- appends what it revoked. Each script PUBLISHes exactly once, also when it revokes nothing, so
-- the sequence has no holes, and it does so after its reads and BEFORE its writes: Redis does
-- not roll a script back, and a refused PUBLISH (an ACL user without the channel) must stop the
-- script while it has changed nothing. Nobody sees the gap: the script runs alone.
local function announce(channel, head, revoked)
  local items = {}
  for i, item in ipairs(revoked) do items[i] = cjson.encode(item) end
  redis.call('PUBLISH', channel, head .. '[' .. table.concat(items, ',') .. ']}')
end
