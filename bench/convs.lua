-- bench/convs.lua: the ltensor side of the per-shape convolution benchmark
-- (bench/convs.py runs it and bench/convs_torch.py in separate processes and
-- prints the ratio table).
--
--   lua5.4 bench/convs.lua [threads] [filter]   (from the checkout root, after make)
--
-- threads: "default" (the state's default) or a number for T.set_num_threads.
-- Cases (bench/conv_shapes.txt): every shape forward under no_grad at batch 1
-- and 8 (224x224 inputs), and forward+backward (input and weight gradients)
-- of the resnet18 shapes at batch 8 with the spatial size halved (112x112
-- inputs).  Prints "case<TAB>wall seconds<TAB>cpu seconds" per case: the
-- minimum over single calls, calls repeated until 100 ms (and at least 5).
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require "ltensor"
local F = T.nn.functional

local threads, filter = arg[1] or "default", arg[2]
if threads ~= "default" then T.set_num_threads(tonumber(threads)) end
-- OpenBLAS's server threads poll (sched_yield) for ~0.1 s after the library
-- loads, holding the second core: start timing after they sleep
os.execute("sleep 0.4")

local function shapes()
  local list = {}
  for line in io.lines("bench/conv_shapes.txt") do
    if not line:match("^#") and line:match("%S") then
      local f = {}
      for w in line:gmatch("%S+") do f[#f + 1] = w end
      local n = {}
      for i = 2, #f do n[i - 1] = tonumber(f[i]) end
      list[#list + 1] = { model = f[1], ci = n[1], co = n[2], kh = n[3], kw = n[4], sh = n[5], sw = n[6], ph = n[7],
        pw = n[8], g = n[9], H = n[10], W = n[11] }
    end
  end
  return list
end

local function case_name(s, batch, mode, H, W)
  return ("%s %d-%d k%dx%d s%d g%d %dx%d b%d %s"):format(s.model == "resnet18" and "r18" or "mv2", s.ci, s.co, s.kh,
    s.kw, s.sh, s.g, H, W, batch, mode)
end

local function time_it(fn)
  fn()
  local best, bestc, total, n = math.huge, math.huge, 0, 0
  while n < 5 or total < 0.1 do
    local c0, t0 = os.clock(), T._clock()
    fn()
    local dt, dc = T._clock() - t0, os.clock() - c0
    best, bestc, total, n = math.min(best, dt), math.min(bestc, dc), total + dt, n + 1
  end
  return best, bestc
end

local function run(s, batch, mode, H, W)
  local name = case_name(s, batch, mode, H, W)
  if filter and not name:find(filter, 1, true) then return end
  T.manual_seed(0)
  local x = T.randn(batch, s.ci, H, W)
  local w = T.randn(s.co, s.ci / s.g, s.kh, s.kw) * 0.1
  local opts = { stride = { s.sh, s.sw }, padding = { s.ph, s.pw }, groups = s.g }
  local fn
  if mode == "fwd" then
    fn = function() T.no_grad(function() return F.conv2d(x, w, nil, opts) end) end
  else
    x:requires_grad_(true)
    w:requires_grad_(true)
    local gout = F.conv2d(x:detach(), w:detach(), nil, opts):clone():normal_()
    fn = function()
      x.grad, w.grad = nil, nil
      F.conv2d(x, w, nil, opts):backward(gout)
    end
  end
  local wall, cpu = time_it(fn)
  io.write(("%s\t%.9g\t%.9g\n"):format(name, wall, cpu))
  io.flush()
end

for _, s in ipairs(shapes()) do
  for _, b in ipairs { 1, 8 } do run(s, b, "fwd", s.H, s.W) end
end
for _, s in ipairs(shapes()) do
  if s.model == "resnet18" then run(s, 8, "fwdbwd", math.floor(s.H / 2), math.floor(s.W / 2)) end
end
