-- ltensor.tensor.size: T.Size, what t:size() and t.shape return -- a list of the
-- sizes (1-based, `#`, ipairs and table.unpack work as on any list) that
-- prints as {2, 3} (the REPL's way of showing a list) and compares by value,
-- as torch.Size does.
-- (Lua 5.1 and LuaJIT call __eq only when both sides are sizes: there a
-- size equals another size, not a plain table.)
local T = require "ltensor.core"
local util = require "ltensor.util"

local Size = { __name = "ltensor.Size" }
local methods = {}
Size.__index = methods

function Size.__tostring(s)
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

function Size.__eq(a, b)
  if type(a) ~= "table" or type(b) ~= "table" or #a ~= #b then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end

function Size.__concat(a, b)
  return (type(a) == "table" and tostring(a) or a) .. (type(b) == "table" and tostring(b) or b)
end

-- s:numel(): the number of elements a tensor of this size holds
function methods.numel(s)
  local n = 1
  for i = 1, #s do n = n * s[i] end
  return n
end

-- T.Size({2, 3}) or T.Size(2, 3): a size from a list of non-negative integers
function T.Size(first, ...)
  local list = type(first) == "table" and first or { first, ... }
  local s = {}
  for i = 1, #list do
    local v = list[i]
    if type(v) ~= "number" or v < 0 or v ~= math.floor(v) then
      util.fail("Size", "bad size at position %d (non-negative integer expected, got %s)", i, util.typename(v))
    end
    s[i] = v
  end
  return setmetatable(s, Size)
end

T._set_size_metatable(Size)
return Size
