-- examples/memory.lua -- the collector sees tensor memory.
--
-- Creates and drops COUNT float32 tensors of 8M elements (32 MB each; 32 GB
-- in total for the default 1000) without ever calling collectgarbage, then
-- prints the peak resident set size (VmHWM).  The C core tells the
-- collector about every allocation (lua_gc LUA_GCSTEP), so garbage tensors
-- are freed long before memory piles up: the peak stays far below 1 GB.
-- Then shows that a `<close>` variable frees its tensor at scope exit.
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
  if i % 100 == 0 or i == count then bar:set_postfix({ RSS = (status_kb("VmRSS") // 1024) .. " MB" }) end
end
local peak = status_kb("VmHWM") // 1024
print(("peak RSS: %d MB after %d tensors of 32 MB (%.1f s, %s GC)"):format(
  peak, count, os.clock() - start, mode or "default"))

-- <close>: the memory goes back at the end of the scope, not at the next cycle.
collectgarbage()
local before = status_kb("VmRSS")
local during
do
  local big <close> = T.zeros(N)
  during = status_kb("VmRSS")
end
local after = status_kb("VmRSS")
print(("<close>: RSS %d MB -> %d MB inside the scope -> %d MB after it"):format(
  before // 1024, during // 1024, after // 1024))
