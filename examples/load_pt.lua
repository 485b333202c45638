-- load_pt.lua: a PyTorch checkpoint (torch.save's .pt file) loaded into a
-- T.nn model, which then computes what PyTorch computed.
--
--   lua5.4 examples/load_pt.lua            (or: ltensor examples/load_pt.lua)
--
-- examples/data/mlp.pt was written by this Python snippet (PyTorch 1.13):
--
--   import torch
--   torch.manual_seed(0)
--   model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
--                               torch.nn.ReLU(), torch.nn.Linear(8, 3))
--   model.eval()
--   x = torch.randn(5, 4)
--   torch.save({"model": model.state_dict(), "x": x, "y": model(x).detach(),
--               "epoch": 7}, "examples/data/mlp.pt")
--
-- T.load reads it through a restricted unpickler (what PyTorch's
-- weights_only=True accepts; nothing in the file is executed), and
-- T.save(path .. ".pt", tbl) writes a checkpoint torch.load reads back.
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = here .. "/../lua/?.lua;" .. here .. "/../lua/?/init.lua;" .. package.path
package.cpath = here .. "/../build/?.so;" .. package.cpath
local T = require "ltensor"
local nn = T.nn

local ck = T.load(here .. "/data/mlp.pt")
print("epoch " .. ck.epoch .. "; state_dict keys in PyTorch's order:")
for _, k in ipairs(getmetatable(ck.model).__keys) do
  local shape = ck.model[k].shape
  print(string.format("  %-22s %s", k, #shape > 0 and table.concat(shape, "x") or "scalar"))
end

-- the same architecture: keys "0.weight", "1.running_mean", ... match
local model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
model:load_state_dict(ck.model)   -- strict: a missing or unexpected key raises
model:eval()

local y = T.no_grad(function() return model(ck.x) end)
print(y)
local diff = (y - ck.y):abs():max():item()
print(string.format("largest difference from PyTorch's output: %.3g", diff))
assert(diff < 1e-5, "the output differs from PyTorch's")

-- and back: a checkpoint PyTorch loads with torch.load(path)
local base = os.tmpname()
local out = base .. ".pt"
T.save(out, { model = model:state_dict(), epoch = ck.epoch + 1 })
print("wrote " .. out .. " (torch.load(path) reads it)")
os.remove(out)
os.remove(base)
