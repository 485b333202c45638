-- bench/wino.lua: the Winograd F(4,3) path against the im2col path on the
-- resnet18 3x3 stride-1 shapes (and smaller ones, for the dispatch
-- thresholds), forward and input gradient, one thread, CPU time (os.clock:
-- the machine is shared, wall time is noise).  Prints effective GFLOP/s
-- (2*N*Cout*Cin*9*H*W over the best of >= 5 calls and 0.3 s).
--   OPENBLAS_NUM_THREADS=1 lua5.4 bench/wino.lua [threads]   (checkout root, after make)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require 'ltensor'
T.set_num_threads(tonumber(arg[1] or 1))
local function tm(fn)
  fn(); local best = math.huge; local total, n = 0, 0
  while n < 5 or total < 0.3 do local c0 = os.clock(); fn(); local d = os.clock() - c0; best = math.min(best, d); total = total + d; n = n + 1 end
  return best
end
local shapes = { {1,64,64,56},{1,128,128,28},{1,256,256,14},{1,512,512,7},{8,64,64,28},{8,128,128,14},{8,256,256,7},{8,512,512,4},
  {1,16,16,56},{1,32,32,56},{1,8,8,28},{1,16,32,28}, {1,32,32,14}, {1,64,64,7} }
print("shape\tgemm fwd GF/s\twino fwd GF/s\tgemm bwd-in\twino bwd-in")
for _, s in ipairs(shapes) do
  local N, C, Co, H = s[1], s[2], s[3], s[4]
  local x = T.randn(N, C, H, H); local w = T.randn(Co, C, 3, 3); local b = T.randn(Co); local go = T.randn(N, Co, H, H)
  local fl = 2 * N * Co * C * 9 * H * H / 1e9
  local r = {}
  for _, f in ipairs{false, true} do r[#r+1] = fl / tm(function() T._conv_small(x, w, b, 1,1,1,1,1,1,1,H,H, f) end) end
  for _, f in ipairs{false, true} do r[#r+1] = fl / tm(function() T._conv_big(go, w, nil, 1,1,1,1,1,1,1,H,H, f) end) end
  print(("%d %d-%d %dx%d\t%.1f\t%.1f\t%.1f\t%.1f"):format(N, C, Co, H, H, r[1], r[2], r[3], r[4]))
end
