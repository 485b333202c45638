-- busted --helper for the specs under Lua 5.1, 5.2 and LuaJIT (issue 12;
-- `make test-luajit` ...): the 5.3/5.4 library functions the spec files
-- call (math.type, table.unpack, utf8, string.pack ...), from
-- ltensor.compat, installed in the test process only.  The library itself
-- never changes globals.
local compat = require "ltensor.compat"
for _, k in ipairs({ "type", "tointeger", "maxinteger", "mininteger", "ult", "log", "atan" }) do
  -- (log and atan exist on 5.1 but without 5.3's second argument)
  if math[k] == nil or k == "log" or k == "atan" then math[k] = compat.math[k] end
end
for _, k in ipairs({ "pack", "unpack", "move" }) do
  if table[k] == nil then table[k] = compat.table[k] end
end
if rawget(_G, "utf8") == nil then utf8 = compat.utf8 end               -- luacheck: ignore
if rawget(_G, "rawlen") == nil then rawlen = compat.rawlen end         -- luacheck: ignore
if string.pack == nil then string.pack, string.unpack = compat.spack, compat.sunpack end
-- 5.1's load takes only a function; 5.2+ (and LuaJIT) take a string and an env
if not pcall(load, "return 1") or select(2, pcall(load, "return 1")) == nil then
  local load_fn, loadstring, setfenv = load, loadstring, setfenv
  load = function(chunk, name, mode, env)                               -- luacheck: ignore
    local f, err
    if type(chunk) == "string" then f, err = loadstring(chunk, name) else f, err = load_fn(chunk, name) end
    if f and env ~= nil then setfenv(f, env) end
    return f, err
  end
end
