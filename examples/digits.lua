-- examples/digits.lua: train a small MLP on the UCI handwritten digits
-- (1,797 8x8 images, 10 classes; examples/data/digits.csv.gz, CC BY 4.0,
-- see examples/data/README.md) and report test accuracy.
--
--   lua5.4 examples/digits.lua            (from the checkout, after make)
--   ltensor examples/digits.lua
--
-- Split: with T.manual_seed(0), T.randperm(1797) shuffles the rows; the first
-- 1,437 (80%) are the training set, the last 360 the test set.  Pixels are
-- scaled from 0..16 to 0..1.  Model: 64 -> 128 -> ReLU -> 10, Adam (lr 1e-2),
-- batches of 64 from a shuffling DataLoader (T.randperm each epoch), 25
-- epochs, with a T.utils.progress bar per epoch (a bar on a terminal, one
-- plain line per epoch in a log).  Labels 0..9 become classes 1..10 (1-based).
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"
local nn, F = T.nn, T.nn.functional

local DATA = here .. "/data/digits.csv.gz"
local EPOCHS, BATCH, LR = 25, 64, 1e-2

T.manual_seed(0)
local t0 = os.clock()
local d = dofile(here .. "/digits_data.lua").load(T, DATA)
local N, ntrain = d.n, d.ntrain
local Xtr, Ytr, Xte, Yte = d.Xtr, d.Ytr, d.Xte, d.Yte
print(string.format("digits: %d images, %d train / %d test", N, ntrain, N - ntrain))

local model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
local opt = T.optim.Adam(model:parameters(), { lr = LR })

local function accuracy(x, y)
  model:eval()
  local pred = T.no_grad(function() return T.argmax(model(x), 2) end)
  model:train()
  return T.eq(pred, y):sum():item() / y:numel()
end

local loader = T.utils.data.DataLoader(T.utils.data.TensorDataset(Xtr, Ytr), { batch_size = BATCH, shuffle = true })
for epoch = 1, EPOCHS do
  local total, seen = 0, 0
  local bar = T.utils.progress(loader, { desc = string.format("epoch %2d/%d", epoch, EPOCHS) })
  for xb, yb in bar do
    opt:zero_grad()
    local loss = F.cross_entropy(model(xb), yb)
    loss:backward()
    opt:step()
    total = total + loss:item() * yb:numel()
    seen = seen + yb:numel()
    bar:set_postfix({ loss = total / seen })
  end
end

local train_acc, test_acc = accuracy(Xtr, Ytr), accuracy(Xte, Yte)
print(string.format("train accuracy %.2f%%, test accuracy %.2f%% (%.1f s)", 100 * train_acc, 100 * test_acc, os.clock() - t0))
if test_acc < 0.95 then
  io.stderr:write("test accuracy below 95%\n")
  os.exit(1)
end
