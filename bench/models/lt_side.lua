-- ltensor's process for bench/models/run.py.
--
--   lt_side.lua DIR check W...          compares each workload's results with
--                                        PyTorch's (DIR/<w>_io.safetensors)
--   lt_side.lua DIR run THREADS W...     times them; THREADS "default" or "1";
--                                        one JSON line per workload
local T = require "ltensor"
local nn = T.nn
local F = nn.functional
local models = dofile((arg[0]:match("^(.*)/") or ".") .. "/lmodels.lua")

local dir, mode = arg[1], arg[2]
local GEN_TOKENS = 100

local function base_of(w) return (w:gsub("_train$", ""):gsub("_folded$", "")) end

-- eval-mode BatchNorm folded into the convolution before it (as
-- tmodels.fold): Module:fuse for Sequentials, fuse_modules for the
-- conv1/bn1, conv2/bn2 attribute pairs of ResNet and BasicBlock
local function fold(m)
  m:fuse()
  for _, nm in ipairs(m:named_modules()) do
    local mod = nm[2]
    for _, p in ipairs({ { "conv1", "bn1" }, { "conv2", "bn2" } }) do
      local mods = rawget(mod, "_modules").map
      if mods[p[1]] and mods[p[2]] and mods[p[2]]._classname == "BatchNorm2d" then
        nn.utils.fuse_modules(mod, p, { inplace = true })
      end
    end
  end
  return m
end

local function no_dropout(m)
  for _, nm in ipairs(m:named_modules()) do
    local mod = nm[2]
    if mod._classname == "Dropout" then mod.p = 0.0 end
    if mod._classname == "MultiheadAttention" then mod.dropout = 0.0 end
  end
end

local function workload(w)
  local base = base_of(w)
  local m = models[base]()
  m:load_state_dict(T.load(dir .. "/" .. base .. ".safetensors"))
  local io = T.load(dir .. "/" .. w .. "_io.safetensors")
  local wl = { name = w, model = m, io = io }
  if w == "resnet18_train" then
    m:train()
    wl.opt = T.optim.SGD(m:parameters(), { lr = 0.01, momentum = 0.9 })
    wl.y = io.y + 1   -- class indices are 1-based
  elseif w == "transformer_train" then
    m:train()
    wl.opt = T.optim.Adam(m:parameters(), { lr = 1e-3 })
    wl.y = io.y
  else
    m:eval()
    if w:match("_folded$") then fold(m) end
  end
  function wl.train_step()
    wl.opt:zero_grad()
    local out = m(io.x)
    local loss
    if w == "resnet18_train" then loss = F.cross_entropy(out, wl.y) else loss = F.mse_loss(out, wl.y) end
    loss:backward()
    wl.opt:step()
    return loss
  end
  function wl.step()
    if w == "lstm_lm" then return T.no_grad(function() return m:generate(1, GEN_TOKENS) end) end
    if wl.opt then return wl.train_step() end
    return T.no_grad(function() return m(io.x) end)
  end
  function wl.check()
    if w == "lstm_lm" then
      local toks, first = T.no_grad(function() return m:generate(1, GEN_TOKENS) end)
      return { tokens = T.tensor(toks, { dtype = T.int64 }) - 1, logits = first }
    end
    if wl.opt then
      no_dropout(m)
      local l1 = wl.train_step():detach()
      local l2 = wl.train_step():detach()
      return { loss = T.stack({ l1, l2 }) }
    end
    return { out = T.no_grad(function() return m(io.x) end) }
  end
  return wl
end

local function check(w)
  local wl = workload(w)
  local res = wl.check()
  local worst = 0
  for k, v in pairs(res) do
    local ref = wl.io["ref_" .. k]
    assert(ref, "no reference for " .. k)
    local a, b = v:double(), ref:double()
    local scale = T.abs(b):max():item()
    if scale == 0 then scale = 1 end
    local err = T.abs(a - b):max():item() / scale
    if err > worst then worst = err end
  end
  print(('{"workload": "%s", "check": %.3g, "ok": %s}'):format(w, worst, worst <= 1e-4 and "true" or "false"))
end

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  if n % 2 == 1 then return s[(n + 1) / 2] end
  return (s[n / 2] + s[n / 2 + 1]) / 2
end

local function timed(w, threads)
  local scale = tonumber(os.getenv("BENCH_SCALE") or "1")
  local reps = (w == "resnet18_train" or w == "transformer_train") and 6 or 15
  reps = math.max(3, math.floor(reps * scale))
  local budget = 2.0 * scale
  local wl = workload(w)
  for _ = 1, (reps > 5 and 2 or 1) do wl.step() end
  local clock = T._clock   -- monotonic wall time, seconds
  local times, t_end = {}, clock() + budget
  while #times < reps and (#times < 3 or clock() < t_end) do
    local t0 = clock()
    wl.step()
    times[#times + 1] = clock() - t0
  end
  local mn = math.huge
  for _, t in ipairs(times) do mn = math.min(mn, t) end
  print(('{"workload": "%s", "threads": "%s", "min": %.6g, "median": %.6g, "n": %d}'):format(w, threads, mn,
    median(times), #times))
  io.stdout:flush()
end

if mode == "check" then
  for i = 3, #arg do check(arg[i]) end
elseif mode == "run" then
  local threads = arg[3]
  if threads ~= "default" then T.set_num_threads(tonumber(threads)) end
  for i = 4, #arg do timed(arg[i], threads) end
else
  error("usage: lt_side.lua DIR check|run ...")
end
