-- busted --helper for the specs under Lua 5.1, 5.2 and LuaJIT (issue 12;
-- `make test-luajit` ...): the 5.3/5.4 library functions the spec files
-- call (math.type, table.unpack, utf8, string.pack ...), from
-- ltensor.compat, installed in the test process only.  The library itself
-- never changes globals.
local compat = require "ltensor.compat"
for _, k in ipairs({ "type", "tointeger", "maxinteger", "mininteger", "ult", "log", "atan" }) do
  if math[k] == nil or k == "log" then math[k] = compat.math[k] end
end
for _, k in ipairs({ "pack", "unpack", "move" }) do
  if table[k] == nil then table[k] = compat.table[k] end
end
if rawget(_G, "utf8") == nil then utf8 = compat.utf8 end               -- luacheck: ignore
if rawget(_G, "rawlen") == nil then rawlen = compat.rawlen end         -- luacheck: ignore
if string.pack == nil then string.pack, string.unpack = compat.spack, compat.sunpack end
