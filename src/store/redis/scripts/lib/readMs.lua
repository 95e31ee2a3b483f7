-- readMs(text): reads a time packed by packing.ts#packMs: base 36, or `=` and decimal.
local function readMs(text)
  if string.sub(text, 1, 1) == '=' then return tonumber(string.sub(text, 2)) end
  return tonumber(text, 36)
end
