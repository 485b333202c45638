-- examples/memory.lua -- the collector sees tensor memory.
--
-- Creates and drops COUNT float32 tensors of 8M elements (32 MB each; 32 GB
-- in total for the default 1000) without ever calling collectgarbage, then
-- prints the peak resident set size (VmHWM).  The C core tells the
-- collector about every allocation (lua_gc LUA_GCSTEP), so garbage tensors
-- are freed long before memory piles up: the peak stays far below 1 GB.
-- Then shows that a `<close>` variable frees its tensor at scope exit
-- (t:free() on hosts before Lua 5.4).
--
--   lua5.4 examples/memory.lua [COUNT] [incremental|generational]
--   (from the checkout, with the in-tree paths: see `make demo`)
local T = require "ltensor"

local count = tonumber(arg and arg[1]) or 1000
local mode = arg and arg[2]
if mode then collectgarbage(mode) end   -- lua5.4 defaults to generational, hosts to incremental

local function status_kb(field)
  local f = assert(io.open("/proc/self/status"))
  local s = f:read("*a")
  f:close()
  return tonumber(s:match(field .. ":%s*(%d+) kB"))
end

local N = 8 * 1024 * 1024
local start = os.clock()
local bar = T.utils.progress(count, { unit = "tensor" })
for i in bar do
  local t = T.zeros(N)          -- zeros touches every page: the memory is real
  t:set(i % N + 1, i)
  if i % 100 == 0 or i == count then bar:set_postfix({ RSS = math.floor(status_kb("VmRSS") / 1024) .. " MB" }) end
end
local peak = math.floor(status_kb("VmHWM") / 1024)
print(("peak RSS: %d MB after %d tensors of 32 MB (%.1f s, %s GC)"):format(
  peak, count, os.clock() - start, mode or "default"))

-- <close>: the memory goes back at the end of the scope, not at the next cycle.
collectgarbage()
local before = status_kb("VmRSS")
-- (`<close>` is Lua 5.4 syntax, compiled with load so that the example
-- parses on every host; elsewhere t:free() gives the memory back at once.)
local during
local scope = (loadstring or load)([[
  local T, N, status_kb = ...
  local big <close> = T.zeros(N)
  return status_kb("VmRSS")
]])
if scope then
  during = scope(T, N, status_kb)
else
  local big = T.zeros(N)
  during = status_kb("VmRSS")
  big:free()
end
local after = status_kb("VmRSS")
print(("<close>: RSS %d MB -> %d MB inside the scope -> %d MB after it"):format(
  math.floor(before / 1024), math.floor(during / 1024), math.floor(after / 1024)))
