-- spec/host.lua -- per-case marks for the few spec cases that cannot pass
-- on an older Lua host for a documented reason (issue 12; README, "Lua 5.1,
-- 5.2, 5.3 and LuaJIT").  A case starts with one of the calls below; on a
-- host that lacks the feature the case ends there as *pending*, with the
-- reason (busted lists it, `make test-<host>` counts it on the "N pending"
-- line), and on Lua 5.4 the call does nothing.  Every other case runs on
-- every host.
--
--   local host = dofile("spec/host.lua")
--   it("prints 1.0 as a float", function()
--     host.needs_integers("T.tensor{1.0} is float32 only where 1.0 is a float")
--     ...
--
-- The reasons, one function each (the host facts come from ltensor.compat):
--   needs_integers(why)   Lua 5.3's integer subtype: a literal such as 1.0 is
--                         a float (on 5.1, 5.2 and LuaJIT every whole-valued
--                         number is a weak int), and int64 values beyond 2^53
--                         exist as Lua numbers
--   needs_pairs_mm(why)   the __pairs metamethod (5.2+; not 5.1, not LuaJIT):
--                         pairs() over an ordered table (a state_dict)
--   needs_len_mm(why)     `#` calling a table's __len (5.2+; not 5.1, not
--                         LuaJIT): #dataset, #loader, #module_list
--   needs_ipairs_index(why) ipairs() reading through __index (5.3+): ipairs
--                         over a ModuleList
--   needs_tail_names(why) a C function called in a tail call knowing its
--                         caller's name (not LuaJIT: `return t:f()` drops the
--                         frame, so "bad self" reads "bad argument #1")
--   needs_signed_zero_literals(why)  0.0 and -0.0 literals kept apart in
--                         one chunk (not PUC Lua 5.1: one constant for both)
--   needs_lua54(why)      the test is about the Lua 5.4 environment itself
local compat = require "ltensor.compat"
local getfenv = require("busted.compatibility").getfenv

local M = {}
M.has_integers = compat.has_integers
M.has_len_mm = compat.has_len_metamethod
do
  local seen = false
  for _ in pairs(setmetatable({}, { __pairs = function() return function(_, k) if not k then return 1 end end, nil, nil end })) do
    seen = true
  end
  M.has_pairs_mm = seen
end
M.has_ipairs_index = false
for _ in ipairs(setmetatable({}, { __index = function(_, i) if i == 1 then return 1 end end })) do
  M.has_ipairs_index = true
end
M.luajit = compat.luajit
-- #x through the object's __len on every host, for cases about something else
M.len = compat.len
M.version = _VERSION

-- ends the running case as pending, with the reason, through busted's own
-- `pending` of a running case (it throws the pending status; `require
-- "busted"` in a spec gives the one that declares a pending case): from the
-- case function's environment, or (a case function that reads no global
-- has no _ENV on 5.2+) from the `busted` upvalue of busted's frames below it
local function skip(what, why)
  local msg = ("not on %s (%s): %s"):format(M.luajit and "LuaJIT" or _VERSION, what, why)
  for level = 3, 40 do
    local info = debug.getinfo(level, "f")
    if not info then break end
    local ok, env = pcall(getfenv, info.func)
    local pending = ok and type(env) == "table" and env ~= _G and env.pending
    if type(pending) == "function" then pending(msg) end
    for i = 1, 60 do
      local name, v = debug.getupvalue(info.func, i)
      if name == nil then break end
      if name == "busted" and type(v) == "table" and type(rawget(v, "pending")) == "function"
          and type(rawget(v, "safe")) == "function" then
        v.pending(msg)
      end
    end
  end
  error("spec/host.lua: no busted case to mark pending (" .. msg .. ")", 2)
end

function M.needs_integers(why)
  if not M.has_integers then skip("no integer subtype", why) end
end
function M.needs_pairs_mm(why)
  if not M.has_pairs_mm then skip("pairs() ignores __pairs", why) end
end
function M.needs_len_mm(why)
  if not M.has_len_mm then skip("# ignores a table's __len", why) end
end
function M.needs_ipairs_index(why)
  if not M.has_ipairs_index then skip("ipairs() ignores __index", why) end
end
function M.needs_tail_names(why)
  if M.luajit then skip("a tail call drops the caller's frame", why) end
end
function M.needs_signed_zero_literals(why)
  if _VERSION == "Lua 5.1" and not M.luajit then skip("-0.0 and 0.0 literals share a constant", why) end
end
-- a == b consults either side's __eq (5.3+), not only a metamethod both share
function M.needs_mixed_eq(why)
  if M.luajit or _VERSION == "Lua 5.1" or _VERSION == "Lua 5.2" then skip("__eq only when both sides share it", why) end
end
function M.needs_lua54(why)
  if _VERSION ~= "Lua 5.4" then skip("not Lua 5.4", why) end
end

-- src writes a whole-valued float literal (1.0, 2e3): a float on Lua 5.3+,
-- a weak int where numbers have no integer subtype
function M.writes_whole_float(src)
  for num in src:gmatch("%d[%d.eE+-]*") do
    local v = tonumber(num)
    if v and v == math.floor(v) and num:find("[.eE]") then return true end
  end
  return false
end

return M
