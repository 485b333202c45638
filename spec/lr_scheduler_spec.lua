-- lr_scheduler: values over many epochs against PyTorch 1.13
-- (spec/fixtures/lr_scheduler.lua from tools/gen_optim_fixtures.py),
-- state_dict, option checking and errors.
local T = require "ltensor"
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/lr_scheduler.lua")
local S = T.optim.lr_scheduler

local function make_opt(lrs)
  local groups = {}
  for i, lr in ipairs(lrs) do groups[i] = { params = { T.zeros({ 1 }):requires_grad_() }, lr = lr } end
  return T.optim.SGD(groups, { lr = lrs[1], momentum = 0.9 })
end

local function plateau_metric(epoch)
  if epoch < 8 then return 10.0 / (1 + epoch) end
  return 1.0 + 0.01 * ((epoch * 7) % 5)
end

local function build(case, opt)
  if case.kind == "Chained" then   -- two schedulers on one optimizer, stepped in turn
    local a, b = S.StepLR(opt, 3, { gamma = 0.5 }), S.ExponentialLR(opt, 0.9)
    return { step = function() a:step() b:step() end, get_last_lr = function() return b:get_last_lr() end }
  end
  if case.kind == "SequentialLR" then
    local s1 = S.LinearLR(opt, { start_factor = 0.1, total_iters = 4 })
    local s2 = S.ExponentialLR(opt, 0.8)
    local s3 = S.CosineAnnealingLR(opt, 6, { eta_min = 0.01 })
    return S.SequentialLR(opt, { s1, s2, s3 }, { 5, 12 })
  end
  local args = {}
  for i, a in ipairs(case.args) do args[i] = a end
  args[#args + 1] = case.opts
  return S[case.kind](opt, table.unpack(args))
end

local function near(want, got, what)
  assert(math.abs(want - got) <= 1e-12 + 1e-12 * math.abs(want),
    string.format("%s: want %.17g got %.17g", what, want, got))
end

describe("lr_scheduler values match PyTorch 1.13", function()
  for _, case in ipairs(FX.cases) do
    it(case.name .. " over " .. FX.epochs .. " epochs", function()
      local opt = make_opt(case.lrs)
      local sch = build(case, opt)
      local function check(e)
        local got = sch:get_last_lr()
        for g = 1, #case.lrs do
          near(case.lr[e + 1][g], got[g], case.name .. " epoch " .. e .. " group " .. g)
          near(case.lr[e + 1][g], opt.param_groups[g].lr, case.name .. " group lr")
        end
      end
      check(0)
      for e = 1, FX.epochs do
        opt:step()
        if case.kind == "ReduceLROnPlateau" then sch:step(plateau_metric(e - 1)) else sch:step() end
        check(e)
      end
    end)
  end
end)

describe("lr_scheduler behaviour", function()
  it("OneCycleLR cycles the momentum (SGD) or beta1 (Adam)", function()
    local opt = make_opt({ 0.1 })
    local s = S.OneCycleLR(opt, 1.0, { total_steps = 10 })
    assert.near(0.95, opt.param_groups[1].momentum, 1e-15)
    for _ = 1, 2 do s:step() end   -- the first phase ends at step 0.3 * 10 - 1
    assert.near(0.85, opt.param_groups[1].momentum, 1e-12)
    local p = T.zeros({ 1 }):requires_grad_()
    local adam = T.optim.Adam({ p }, { lr = 0.1 })
    S.OneCycleLR(adam, 0.5, { epochs = 2, steps_per_epoch = 5 })
    assert.near(0.95, adam.param_groups[1].betas[1], 1e-15)
    assert.equal(0.999, adam.param_groups[1].betas[2])
    assert.near(0.02, adam.param_groups[1].lr, 1e-15)
  end)

  it("OneCycleLR refuses to step past total_steps", function()
    local opt = make_opt({ 0.1 })
    local s = S.OneCycleLR(opt, 1.0, { total_steps = 3 })
    s:step() s:step() s:step()
    H.raises("ltensor.optim.lr_scheduler.OneCycleLR.step: Tried to step 5 times. The specified number of total steps is 3",
      function() s:step() end)
  end)

  it("LambdaLR takes one function or one per group", function()
    local opt = make_opt({ 0.1, 0.2 })
    local s = S.LambdaLR(opt, { function(e) return 0.5 ^ e end, function(e) return 1 / (e + 1) end })
    s:step() s:step()
    assert.near(0.025, s:get_last_lr()[1], 1e-15)
    assert.near(0.2 / 3, s:get_last_lr()[2], 1e-15)
    H.raises("ltensor.optim.lr_scheduler.LambdaLR: Expected 2 lr_lambdas, but got 1",
      function() S.LambdaLR(opt, { function() return 1 end }) end)
    local sd = s:state_dict()
    assert.is_nil(sd.lr_lambdas)
    assert.equal(2, sd.last_epoch)
  end)

  it("state_dict / load_state_dict resume the schedule", function()
    local opt = make_opt({ 0.1 })
    local s = S.CosineAnnealingLR(opt, 10, { eta_min = 0.001 })
    for _ = 1, 4 do s:step() end
    local sd = s:state_dict()
    assert.equal(4, sd.last_epoch)
    assert.is_nil(sd.optimizer)
    local want = {}
    for i = 1, 6 do s:step() want[i] = s:get_last_lr()[1] end
    local opt2 = make_opt({ 0.1 })
    local s2 = S.CosineAnnealingLR(opt2, 10, { eta_min = 0.001 })
    s2:load_state_dict(sd)
    opt2.param_groups[1].lr = sd._last_lr[1]
    for i = 1, 6 do s2:step() assert.equal(want[i], s2:get_last_lr()[1]) end
  end)

  it("step(epoch) uses the closed form", function()
    local opt = make_opt({ 1.0 })
    local s = S.StepLR(opt, 3, { gamma = 0.5 })
    s:step(7)
    assert.equal(0.25, s:get_last_lr()[1])
    local s2 = S.MultiStepLR(make_opt({ 1.0 }), { 2, 4, 4 }, { gamma = 0.1 })
    s2:step(5)
    assert.near(0.001, s2:get_last_lr()[1], 1e-15)
  end)

  it("ReduceLROnPlateau accepts tensors and respects min_lr per group", function()
    local opt = make_opt({ 0.1, 0.1 })
    local s = S.ReduceLROnPlateau(opt, { patience = 0, min_lr = { 0.05, 0.0 } })
    s:step(T.tensor(1.0))
    s:step(T.tensor(2.0))
    s:step(3)
    assert.same({ 0.05, 0.1 * 0.1 * 0.1 }, { opt.param_groups[1].lr, opt.param_groups[2].lr })
    H.raises("ltensor.optim.lr_scheduler.ReduceLROnPlateau.step: bad argument #1 'metrics' (number expected, got string)",
      function() s:step("x") end)
  end)

  it("verbose prints each adjustment as PyTorch does", function()
    local f = assert(io.tmpfile())
    local old = io.output()
    io.output(f)
    local ok, err = pcall(function()
      local opt = make_opt({ 0.1 })
      local s = S.StepLR(opt, 1, { gamma = 0.5, verbose = true })
      s:step()
      local p = S.ReduceLROnPlateau(opt, { patience = 0, verbose = true })
      p:step(1) p:step(2)
    end)
    io.output(old)
    assert(ok, err)
    f:seek("set")
    local out = f:read("*a")
    f:close()
    assert.equal("Adjusting learning rate of group 1 to 1.0000e-01.\n"
      .. "Adjusting learning rate of group 1 to 5.0000e-02.\n"
      .. "Epoch 00002: reducing learning rate of group 1 to 5.0000e-03.\n", out)
  end)

  it("checks options and arguments with PyTorch's messages", function()
    local opt = make_opt({ 0.1 })
    H.raises("ltensor.optim.lr_scheduler.StepLR: unknown option 'gama' (did you mean 'gamma'?)",
      function() S.StepLR(opt, 2, { gama = 0.5 }) end)
    H.raises("ltensor.optim.lr_scheduler.StepLR: step_size must be a positive integer, got nil",
      function() S.StepLR(opt) end)
    H.raises("ltensor.optim.lr_scheduler.ReduceLROnPlateau: Factor should be < 1.0.",
      function() S.ReduceLROnPlateau(opt, { factor = 1.5 }) end)
    H.raises("ltensor.optim.lr_scheduler.ReduceLROnPlateau: mode avg is unknown!",
      function() S.ReduceLROnPlateau(opt, { mode = "avg" }) end)
    H.raises("ltensor.optim.lr_scheduler.ReduceLROnPlateau: threshold mode x is unknown!",
      function() S.ReduceLROnPlateau(opt, { threshold_mode = "x" }) end)
    H.raises("ltensor.optim.lr_scheduler.LinearLR: Starting multiplicative factor expected to be greater than 0 and less or equal to 1.",
      function() S.LinearLR(opt, { start_factor = 0 }) end)
    H.raises("ltensor.optim.lr_scheduler.LinearLR: Ending multiplicative factor expected to be between 0 and 1.",
      function() S.LinearLR(opt, { end_factor = 2 }) end)
    H.raises("ltensor.optim.lr_scheduler.OneCycleLR: You must define either total_steps OR (epochs AND steps_per_epoch)",
      function() S.OneCycleLR(opt, 1.0) end)
    H.raises("ltensor.optim.lr_scheduler.OneCycleLR: Expected positive integer total_steps, but got 0",
      function() S.OneCycleLR(opt, 1.0, { total_steps = 0 }) end)
    H.raises("ltensor.optim.lr_scheduler.OneCycleLR: Expected float between 0 and 1 pct_start, but got 2",
      function() S.OneCycleLR(opt, 1.0, { total_steps = 5, pct_start = 2 }) end)
    H.raises("ltensor.optim.lr_scheduler.OneCycleLR: anneal_strategy must by one of 'cos' or 'linear', instead got step",
      function() S.OneCycleLR(opt, 1.0, { total_steps = 5, anneal_strategy = "step" }) end)
    local plain = T.optim.Adagrad({ T.zeros({ 1 }):requires_grad_() })
    H.raises("ltensor.optim.lr_scheduler.OneCycleLR: optimizer must support momentum with `cycle_momentum` option enabled",
      function() S.OneCycleLR(plain, 1.0, { total_steps = 5 }) end)
    H.raises("ltensor.optim.lr_scheduler.SequentialLR: Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, but got number of schedulers 1 and the number of milestones to be equal to 1",
      function() S.SequentialLR(opt, { S.StepLR(opt, 2) }, { 3 }) end)
    local other = make_opt({ 0.1 })
    H.raises("ltensor.optim.lr_scheduler.SequentialLR: Sequential Schedulers expects all schedulers to belong to the same optimizer, but got schedulers at index 2",
      function() S.SequentialLR(opt, { S.StepLR(opt, 2), S.StepLR(other, 2) }, { 3 }) end)
    H.raises("ltensor.optim.lr_scheduler.StepLR: table is not an Optimizer", function() S.StepLR({}, 2) end)
    local fresh = make_opt({ 0.1 })
    H.raises("ltensor.optim.lr_scheduler.ExponentialLR: param 'initial_lr' is not specified in param_groups[1] when resuming an optimizer",
      function() S.ExponentialLR(fresh, 0.9, { last_epoch = 3 }) end)
  end)
  it("refuses options and arguments of the wrong kind by name (raw Lua errors before: the fuzzer's finds)", function()
    local S = T.optim.lr_scheduler
    local function opt() return T.optim.SGD({ T.zeros(2):requires_grad_() }, { lr = 0.1 }) end
    assert.has_error(function() S.OneCycleLR(opt(), true, { total_steps = 10 }) end,
      "ltensor.optim.lr_scheduler.OneCycleLR: max_lr must be a number or a list of numbers, got boolean")
    assert.has_error(function() S.OneCycleLR(opt(), { "a" }, { total_steps = 10 }) end,
      "ltensor.optim.lr_scheduler.OneCycleLR: max_lr[1] must be a number, got string")
    assert.has_error(function() S.CosineAnnealingLR(opt(), 3, { eta_min = { 1 } }) end,
      "ltensor.optim.lr_scheduler.CosineAnnealingLR: option 'eta_min' must be a number, got table")
    local o = opt()
    assert.has_error(function() S.SequentialLR(o, { S.StepLR(o, 2) }, {}, { last_epoch = true }) end,
      "ltensor.optim.lr_scheduler.SequentialLR: option 'last_epoch' must be a number, got boolean")
    assert.has_error(function() S.StepLR(opt(), 2, { verbose = 1 }) end,
      "ltensor.optim.lr_scheduler.StepLR: option 'verbose' must be a boolean, got number")
    local r = S.ReduceLROnPlateau(opt(), { min_lr = { 0.01 } })   -- a per-group list stays allowed
    assert.has_error(function() r:is_better(nil, 1) end,
      "ltensor.optim.lr_scheduler.ReduceLROnPlateau.is_better: bad argument #1 'a' (number expected, got nil)")
    assert.is_true(r:is_better(0.5, 1))
  end)
end)
