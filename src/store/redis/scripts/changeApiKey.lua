-- changeApiKey: Store#changeApiKey (redis/key-changes.ts): reads the key, checks the change
-- against it as stored (store.ts changedTerms, in Lua) and writes, in one step.
-- keys: 2
-- KEYS[1]  the organization's record (its key index)
-- KEYS[2]  the tag's API keys (hash)
-- ARGV[1]  index field
-- ARGV[2]  use field
-- ARGV[3]  name: 'keep', 'drop' or 'set'
-- ARGV[4]  the name to set
-- ARGV[5]  new scopes (names joined by ','; '' keeps them)
-- ARGV[6]  the same as stored (replies.ts scopesPart)
-- ARGV[7]  unused ('')
-- ARGV[8]  new end (decimal ms; '' keeps it)
-- ARGV[9]  the same packed (packMs)
-- ARGV[10] the organization's shard tag
-- ARGV[11] packed org id
-- ARGV[12] packed key id
-- ARGV[13] the invalidation channel
-- ARGV[14] the message head
-- Reply: {refusal} ('not-found', 'scopes-wider', 'expiry-later'), or
-- {'changed', new entry, last use or '', 1 when its terms changed (announced) else 0}.
-- The 22 below is packing.ts DIGEST_LENGTH.
--@include lib/announce.lua
--@include lib/readMs.lua
--@include lib/entryParts.lua
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  announce(ARGV[13], ARGV[14], {})
  return {'not-found'}
end
local head, expiry, scopes, name = parseEntry(entry)
if ARGV[5] ~= '' and scopes then
  local held = heldNames(scopes)
  for wanted in string.gmatch(ARGV[5], '[^,]+') do
    if not held[wanted] then
      announce(ARGV[13], ARGV[14], {})
      return {'scopes-wider'}
    end
  end
end
if ARGV[8] ~= '' and expiry and tonumber(ARGV[8]) > readMs(expiry) then
  announce(ARGV[13], ARGV[14], {})
  return {'expiry-later'}
end
local before = termsOf(expiry, scopes)
if ARGV[5] ~= '' then scopes = ARGV[6] ~= '' and ARGV[6] or nil end
if ARGV[8] ~= '' then expiry = ARGV[9] end
if ARGV[3] == 'drop' then name = nil elseif ARGV[3] == 'set' then name = ARGV[4] end
local terms = termsOf(expiry, scopes)
local changed = (terms or '') ~= (before or '')
local digest = string.sub(entry, 1, 22)
announce(ARGV[13], ARGV[14], changed and {{kind = 'api_key', cacheKey = ARGV[10] .. '.' .. digest}} or {})
local written = entryOf(head, terms, name)
redis.call('HSET', KEYS[1], ARGV[1], written)
if changed then redis.call('HSET', KEYS[2], digest, valueOf(ARGV[11], ARGV[12], terms)) end
return {'changed', written, redis.call('HGET', KEYS[1], ARGV[2]) or '', changed and 1 or 0}
