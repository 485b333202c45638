-- examples/cnn_digits.lua: a small convolutional network on the UCI
-- handwritten digits (1,797 8x8 images, 10 classes; examples/data/digits.csv.gz,
-- CC BY 4.0, see examples/data/README.md), with a progress bar per epoch
-- (T.utils.progress: a bar on a terminal, a plain line now and then in a log).
--
--   lua5.4 examples/cnn_digits.lua        (from the checkout, after make)
--   ltensor examples/cnn_digits.lua
--
-- Same split as examples/digits.lua: with T.manual_seed(0), T.randperm(1797)
-- shuffles the rows; the first 1,437 (80%) train, the last 360 test.  Pixels
-- are scaled from 0..16 to 0..1 and laid out as 1x8x8 images.  Model:
-- conv 3x3 (1->32, pad 1), ReLU, max-pool 2 -> conv 3x3 (32->64, pad 1),
-- ReLU, max-pool 2 -> linear 256->10; Adam (lr 3e-3, cosine decay over the
-- epochs), batches of 32.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"
local nn, F = T.nn, T.nn.functional

local DATA = here .. "/data/digits.csv.gz"
local EPOCHS, BATCH, LR = 20, 32, 3e-3

-- the network: two conv blocks and a linear classifier
local Net = nn.Module:extend("Net")
function Net:init()
  self.conv1 = nn.Conv2d(1, 32, 3, { padding = 1 })
  self.conv2 = nn.Conv2d(32, 64, 3, { padding = 1 })
  self.pool = nn.MaxPool2d(2)
  self.fc = nn.Linear(64 * 2 * 2, 10)
end
function Net:forward(x)
  x = self.pool(F.relu(self.conv1(x)))      -- 32 x 4 x 4
  x = self.pool(F.relu(self.conv2(x)))      -- 64 x 2 x 2
  return self.fc(x:reshape(x:size(1), -1))
end

T.manual_seed(0)
local t0 = T._clock and T._clock() or os.clock()
local d = dofile(here .. "/digits_data.lua").load(T, DATA)
local N, ntrain = d.n, d.ntrain
-- the network sees 1x8x8 images
local Xtr, Ytr = d.Xtr:reshape(ntrain, 1, 8, 8), d.Ytr
local Xte, Yte = d.Xte:reshape(N - ntrain, 1, 8, 8), d.Yte
print(string.format("digits: %d images, %d train / %d test", N, ntrain, N - ntrain))

local model = Net()
print(model)
local opt = T.optim.Adam(model:parameters(), { lr = LR })

local function accuracy(x, y)
  model:eval()
  local pred = T.no_grad(function() return T.argmax(model(x), 2) end)
  model:train()
  return T.eq(pred, y):sum():item() / y:numel()
end

local nbatches = math.ceil(ntrain / BATCH)
for epoch = 1, EPOCHS do
  for _, g in ipairs(opt.param_groups) do g.lr = LR * 0.5 * (1 + math.cos(math.pi * (epoch - 1) / EPOCHS)) end
  local order = T.randperm(ntrain)
  local total = 0
  local progress = T.utils.progress(nbatches, { desc = ("epoch %2d/%d"):format(epoch, EPOCHS), unit = "batch" })
  for b in progress do
    local first = (b - 1) * BATCH + 1
    local idx = order:narrow(1, first, math.min(BATCH, ntrain - first + 1))
    opt:zero_grad()
    local loss = F.cross_entropy(model(Xtr[idx]), Ytr[idx])
    loss:backward()
    opt:step()
    total = total + loss:item() * idx:numel()
  end
  print(string.format("epoch %2d/%d loss %.4f  test accuracy %.2f%%", epoch, EPOCHS,
    total / ntrain, 100 * accuracy(Xte, Yte)))
end

local train_acc, test_acc = accuracy(Xtr, Ytr), accuracy(Xte, Yte)
local elapsed = (T._clock and T._clock() or os.clock()) - t0
print(string.format("train accuracy %.2f%%, test accuracy %.2f%% (%.1f s)", 100 * train_acc, 100 * test_acc, elapsed))
if test_acc < 0.98 then
  io.stderr:write("test accuracy below 98%\n")
  os.exit(1)
end
