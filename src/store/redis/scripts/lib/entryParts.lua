-- The parts of an API key's index entry and the terms it holds, and how they are written again
-- (changeApiKey, rollApiKey). The stored text (replies.ts): the index entry
-- `<digest><created> <prefix>[ <terms or -> [<name>]]`, the terms `<expiry or ->[/<scopes, base 36>]`,
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
    local slash = string.find(terms, '/', 1, true)
    expiry = slash and string.sub(terms, 1, slash - 1) or terms
    if slash then scopes = string.sub(terms, slash + 1) end
    if expiry == '-' then expiry = nil end
  end
  return string.sub(entry, 1, s2 - 1), expiry, scopes, name
end
local function termsOf(expiry, scopes)
  if not expiry and not scopes then return nil end
  return (expiry or '-') .. (scopes and ('/' .. scopes) or '')
end
local function entryOf(head, terms, name)
  if name then return head .. ' ' .. (terms or '-') .. ' ' .. name end
  return head .. (terms and (' ' .. terms) or '')
end
local function valueOf(org, key, terms)
  return org .. ' ' .. key .. (terms and (' ' .. terms) or '')
end
