-- bench/train_convs.lua: each convolution of the resnet18 training step
-- (batch 8, 112x112 input) alone, forward and forward+backward, CPU time
-- (best of 15; with "wall" after the thread count, wall time: the measure
-- at 2 threads); bench/train_convs_torch.py is PyTorch's side.
--   lua5.4 bench/train_convs.lua [threads [wall]]      (checkout root, after make)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require "ltensor"
local F = T.nn.functional
T.set_num_threads(tonumber(arg[1] or "1"))
local clock = arg[2] == "wall" and T._monotonic or os.clock
T.manual_seed(0)
local N = 8
-- kernel, stride, padding, in, out, size
local SHAPES = { { 7, 2, 3, 3, 64, 112 }, { 3, 1, 1, 64, 64, 28 }, { 3, 2, 1, 64, 128, 28 }, { 1, 2, 0, 64, 128, 28 },
  { 3, 1, 1, 128, 128, 14 }, { 3, 2, 1, 128, 256, 14 }, { 1, 2, 0, 128, 256, 14 }, { 3, 1, 1, 256, 256, 7 },
  { 3, 2, 1, 256, 512, 7 }, { 1, 2, 0, 256, 512, 7 }, { 3, 1, 1, 512, 512, 4 } }
local function best(f)
  f() f()
  local b = math.huge
  for _ = 1, 15 do local t0 = clock() f() b = math.min(b, clock() - t0) end
  return b * 1e3
end
for _, s in ipairs(SHAPES) do
  local k, st, p, ci, co, hw = table.unpack(s)
  local x = T.randn(N, ci, hw, hw, { requires_grad = true })
  local w = T.randn(co, ci, k, k, { requires_grad = true })
  local o = { stride = st, padding = p }
  local g = T.randn(F.conv2d(x, w, nil, o).shape)
  local fwd = best(function() return T.no_grad(function() return F.conv2d(x, w, nil, o) end) end)
  local fb = best(function() F.conv2d(x, w, nil, o):backward(g) end)
  print(("k%d s%d %d->%d @%d\tfwd %.3f ms\tfwd+bwd %.3f ms"):format(k, st, ci, co, hw, fwd, fb))
end
