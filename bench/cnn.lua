-- bench/cnn.lua: the CNN workloads of issues 8/10, ltensor against PyTorch
-- 1.13 interleaved in one run (each round times ltensor, then runs
-- bench/cnn_torch.py for the same workload, so load on the machine hits
-- both sides alike).  Reports the best round of each and the ratio.
--
--   lua5.4 bench/cnn.lua [rounds]        (from the checkout root, after make)
--
-- train: conv 1->16 3x3 pad 1, relu, max_pool 2, conv 16->32 3x3 pad 1, relu,
--        max_pool 2, linear 1568->10, cross_entropy, Adam; batch 32 of 28x28.
-- infer: the same model in eval mode under no_grad, batch 1.
-- small: the per-frame case, where overhead dominates: the model of
--        examples/cnn_digits.lua (8x8 input, conv 1->32, conv 32->64, two
--        max-pools, linear 256->10) in eval mode, batch 1.
-- Both libraries run at their better of 1 and 2 threads.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local T = require "ltensor"
local nn, F = T.nn, T.nn.functional

local Net = nn.Module:extend("Net")
function Net:init()
  self.c1 = nn.Conv2d(1, 16, 3, { padding = 1 })
  self.c2 = nn.Conv2d(16, 32, 3, { padding = 1 })
  self.fc = nn.Linear(32 * 7 * 7, 10)
end
function Net:forward(x)
  x = F.max_pool2d(F.relu(self.c1(x)), 2)
  x = F.max_pool2d(F.relu(self.c2(x)), 2)
  return self.fc(x:reshape(x:size(1), -1))
end

local Small = nn.Module:extend("Small")
function Small:init()
  self.conv1 = nn.Conv2d(1, 32, 3, { padding = 1 })
  self.conv2 = nn.Conv2d(32, 64, 3, { padding = 1 })
  self.pool = nn.MaxPool2d(2)
  self.fc = nn.Linear(64 * 2 * 2, 10)
end
function Small:forward(x)
  x = self.pool(F.relu(self.conv1(x)))
  x = self.pool(F.relu(self.conv2(x)))
  return self.fc(x:reshape(x:size(1), -1))
end

local ITERS = { train = 20, infer = 1000, small = 2000 }
local KINDS = { "train", "infer", "small" }

local function lt_time1(kind, iters)
  T.manual_seed(0)
  local model = kind == "small" and Small() or Net()
  local step
  if kind == "train" then
    local x, y = T.randn(32, 1, 28, 28), T.randint(1, 11, { 32 })
    local opt = T.optim.Adam(model:parameters(), { lr = 1e-3 })
    step = function()
      opt:zero_grad()
      local loss = F.cross_entropy(model(x), y)
      loss:backward()
      opt:step()
    end
  else
    model:eval()
    local x = kind == "small" and T.randn(1, 1, 8, 8) or T.randn(1, 1, 28, 28)
    local fwd = function() return model(x) end
    step = function() T.no_grad(fwd) end
  end
  for _ = 1, math.max(3, math.floor(iters / 10)) do step() end
  local best = math.huge
  for _ = 1, 3 do
    local t0 = T._clock()
    for _ = 1, iters do step() end
    best = math.min(best, (T._clock() - t0) / iters)
  end
  return best
end

local function lt_time(kind, iters)
  local res, th = math.huge, 1
  for _, n in ipairs { 1, 2 } do
    T.set_num_threads(n)
    local t = lt_time1(kind, iters)
    if t < res then res, th = t, n end
  end
  return res, th
end

local function torch_time(kind, iters)
  local p = io.popen(("/usr/bin/python3 bench/cnn_torch.py %s %d 2>/dev/null"):format(kind, iters))
  local out = p:read("a")
  p:close()
  local t, th = out:match("^(%S+)\t(%d+)")
  return tonumber(t), th
end

local rounds = tonumber(arg[1]) or 3
local best = { train = {}, infer = {}, small = {} }
for r = 1, rounds do
  for _, kind in ipairs(KINDS) do
    local lt, lth = lt_time(kind, ITERS[kind])
    local pt, th = torch_time(kind, ITERS[kind])
    local b = best[kind]
    if not b.lt or lt < b.lt then b.lt, b.lth = lt, lth end
    if pt and (not b.pt or pt < b.pt) then b.pt, b.th = pt, th end
    io.stderr:write(("round %d %-5s ltensor %8.1f us (%d threads)   pytorch %s   ratio %s\n"):format(r, kind, lt * 1e6, lth,
      pt and ("%8.1f us (%s threads)"):format(pt * 1e6, th) or "n/a", pt and ("%.2fx"):format(pt / lt) or "n/a"))
  end
end
print("| workload | ltensor (threads) | PyTorch 1.13 (threads) | ratio |")
print("|---|---|---|---|")
local NAMES = { train = "CNN training step 28x28, b32, Adam", infer = "the same CNN, inference, batch 1",
  small = "small CNN (8x8 digits model), inference, batch 1" }
for _, kind in ipairs(KINDS) do
  local b = best[kind]
  print(("| %s | %.1f us (%d) | %s | %s |"):format(NAMES[kind], b.lt * 1e6, b.lth, b.pt and ("%.1f us (%s)"):format(b.pt * 1e6, b.th) or "n/a",
    b.pt and ("%.2fx"):format(b.pt / b.lt) or "n/a"))
end
