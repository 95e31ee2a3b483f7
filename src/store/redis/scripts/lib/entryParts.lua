-- The parts of an API key's index entry and the terms it holds, and how they are written again
-- (changeApiKey, rollApiKey). The stored text (replies.ts): the index entry
-- `<digest><created> <prefix>[ <terms or -> [<name>]]`, the terms `<expiry or ->[<scopes>]` (scopes
-- `~<names, sorted, by ,>` or, for sets of the five original names, the legacy `/<bit set, base 36>`),
-- the hot-path value `<org> <key>[ <terms>]`. The 23 below is packing.ts DIGEST_LENGTH + 1.
local function parseEntry(entry)
  local s1 = string.find(entry, ' ', 23, true)
  local s2 = s1 and string.find(entry, ' ', s1 + 1, true)
  if not s2 then return entry, nil, nil, nil end
  local tail = string.sub(entry, s2 + 1)
  local s3 = string.find(tail, ' ', 1, true)
  local terms, name = tail, nil
  if s3 then terms, name = string.sub(tail, 1, s3 - 1), string.sub(tail, s3 + 1) end
  local expiry, scopes = nil, nil
  if terms ~= '-' then
    local mark = string.find(terms, '[/~]')
    expiry = mark and string.sub(terms, 1, mark - 1) or terms
    if mark then scopes = string.sub(terms, mark) end
    if expiry == '-' then expiry = nil end
  end
  return string.sub(entry, 1, s2 - 1), expiry, scopes, name
end
local function termsOf(expiry, scopes)
  if not expiry and not scopes then return nil end
  return (expiry or '-') .. (scopes or '')
end
-- The names a stored scopes part holds (replies.ts scopesPart): '~' and names by ',', or '/' and
-- the legacy bit set, bit i the i-th of LEGACY_SCOPES (authz/scopes.ts; read forever; a test
-- checks this copy against it).
local LEGACY = {'accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'}
local function heldNames(scopes)
  local held = {}
  if string.sub(scopes, 1, 1) == '/' then
    local set = tonumber(string.sub(scopes, 2), 36)
    for i, name in ipairs(LEGACY) do
      if bit.band(set, bit.lshift(1, i - 1)) ~= 0 then held[name] = true end
    end
  else
    for name in string.gmatch(string.sub(scopes, 2), '[^,]+') do held[name] = true end
  end
  return held
end
local function entryOf(head, terms, name)
  if name then return head .. ' ' .. (terms or '-') .. ' ' .. name end
  return head .. (terms and (' ' .. terms) or '')
end
local function valueOf(org, key, terms)
  return org .. ' ' .. key .. (terms and (' ' .. terms) or '')
end
