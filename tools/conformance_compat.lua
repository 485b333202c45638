-- tools/conformance_compat.lua -- the public conformance runner
-- (../shared/conformance/run.lua, written for Lua 5.3+) on Lua 5.1, 5.2 and
-- LuaJIT (issue 12), for the figures the README and reports quote.
--
--   LTENSOR_ROOT=. LTENSOR_C_PATH='build/luajit/?.so' \
--     luajit tools/conformance_compat.lua ../shared/conformance/run.lua cases.lua [filter]
--
-- The runner's source is loaded with its integer operators (// & | ~ << >>)
-- rewritten into the methods they stand for (floor_divide, bitwise_and ...),
-- the only spelling these hosts have, and with the 5.3 library functions it
-- calls (math.type, table.unpack ...) from spec/compat_helper.lua.  Cases
-- whose expected values depend on the integer subtype fail here for that
-- reason: the README's "Numbers on hosts without an integer subtype".
local run_path = assert(arg[1], "usage: conformance_compat.lua RUN.lua CASES.lua [filter]")
local root = os.getenv("LTENSOR_ROOT") or "."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
dofile(root .. "/spec/compat_helper.lua")

local f = assert(io.open(run_path, "rb"))
local src = f:read("*a")
f:close()
local names = { ["//"] = "floor_divide", ["&"] = "bitwise_and", ["|"] = "bitwise_or", ["~"] = "bitwise_xor",
  ["<<"] = "bitwise_left_shift", [">>"] = "bitwise_right_shift" }
local n = 0
for op, name in pairs(names) do
  local pat = "return a " .. op:gsub("%p", "%%%0") .. " b end"
  local k
  src, k = src:gsub(pat, "return require('ltensor')." .. name .. "(a, b) end")
  n = n + k
end
local k
src, k = src:gsub("return ~a end", "return require('ltensor').bitwise_not(a) end")
assert(n + k == 7, "run.lua's operator table changed: " .. (n + k) .. " of 7 operators rewritten")

local args = { ... }
arg = { [0] = run_path }                                                 -- luacheck: ignore
for i = 2, #args do arg[i - 1] = args[i] end
local chunk = assert((loadstring or load)(src, "@" .. run_path))
chunk((table.unpack or unpack)(arg, 1, #arg))
