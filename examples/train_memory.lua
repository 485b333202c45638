-- examples/train_memory.lua: a 10,000-step training loop whose resident
-- memory stays flat: each step's graph is freed once its tensors are
-- unreachable (no registry keeps nodes alive, and tensor memory counts toward
-- Lua's GC), without any collectgarbage() call in the loop.
--
--   lua5.4 examples/train_memory.lua [steps]
--
-- Prints VmRSS (Linux /proc/self/status) every 1,000 steps and exits 1 if it
-- grew by more than 8 MB between step 1,000 and the end.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"
local nn, F = T.nn, T.nn.functional

local STEPS = tonumber(arg and arg[1]) or 10000

local function rss_kb()
  local f = io.open("/proc/self/status", "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)"))
end

T.manual_seed(0)
local model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4))
local opt = T.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
local x = T.randn({ 32, 16 })
local y = T.randint(1, 5, { 32 })

local base
for step = 1, STEPS do
  opt:zero_grad()
  local loss = F.cross_entropy(model(x), y)
  loss:backward()
  opt:step()
  if step % 1000 == 0 then
    local r = rss_kb()
    if step == 1000 then base = r end
    print(string.format("step %5d  loss %.4f  VmRSS %s kB", step, loss:item(), tostring(r)))
  end
end
local final = rss_kb()
if base and final then
  print(string.format("RSS growth from step 1000 to %d: %d kB", STEPS, final - base))
  if final - base > 8 * 1024 then os.exit(1) end
end
