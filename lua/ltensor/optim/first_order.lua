-- ltensor.optim.first_order: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta,
-- Adamax, NAdam, RAdam (their update loops in C, src/binding/l_optim.c).
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local B = require "ltensor.optim.base"
local math, update = B.math, B.update
local fail, num = B.fail, B.num
local REQUIRED, Optimizer = B.REQUIRED, B.Optimizer
local new_optimizer = B.new_optimizer
local zeros_like, full_like, check_num, check_nonneg = B.zeros_like, B.full_like, B.check_num, B.check_nonneg
local check_betas, check_lr, check_flags, with_compat = B.check_betas, B.check_lr, B.check_flags, B.with_compat
local class = B.class
local grad_and_state = B.grad_and_state
local K_SGD, K_ADAM, K_RMSPROP, K_ADAGRAD, K_ADADELTA, K_ADAMAX, K_NADAM, K_RADAM, K_ADAMW = 1, 2, 3, 4, 5, 6, 7, 8, 9

local function sgd_validate(fname, g)
  check_lr(fname, g)
  check_nonneg(fname, g, "momentum", "momentum value")
  check_num(fname, g, "dampening", "dampening value")
  check_nonneg(fname, g, "weight_decay", "weight_decay value")
  check_flags(fname, g, "nesterov", "maximize")
  if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
    fail(fname, "Nesterov momentum requires a momentum and zero dampening")
  end
end
local SGD = class("SGD", function(c, params, opts)
  return new_optimizer(c, "SGD", params, opts, with_compat({ lr = REQUIRED, momentum = 0, dampening = 0,
    weight_decay = 0, nesterov = false, maximize = false }), sgd_validate)
end)
local function sgd_init() return {} end
function SGD:_step_group(g, state)
  local lr, mom, damp, wd = g.lr, g.momentum, g.dampening, g.weight_decay
  local nest, maxi = g.nesterov and 1 or 0, g.maximize and 1 or 0
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, sgd_init)
    if gr then
      local buf, first = st.momentum_buffer, 0
      if mom ~= 0 and buf == nil then
        buf = zeros_like(p)
        st.momentum_buffer = buf
        first = 1
      end
      update(K_SGD, p, gr, buf, nil, nil, lr, mom, damp, wd, nest, maxi, first)
    end
  end
end

-- ---------------------------------------------------------------------------
-- Adam / AdamW(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8,
--   weight_decay = 0 (AdamW: 1e-2), amsgrad = false, maximize = false})

local function adam_validate(fname, g)
  check_lr(fname, g)
  check_nonneg(fname, g, "eps", "epsilon value")
  check_betas(fname, g)
  check_nonneg(fname, g, "weight_decay", "weight_decay value")
  check_flags(fname, g, "amsgrad", "maximize")
end
local function adam_class(name, decoupled, wd)
  local c = class(name, function(c, params, opts)
    return new_optimizer(c, name, params, opts, with_compat({ lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
      weight_decay = wd, amsgrad = false, maximize = false }), adam_validate)
  end)
  local dec = decoupled and 1 or 0
  local kind = decoupled and K_ADAMW or K_ADAM
  local function init(p) return { step = 0, exp_avg = zeros_like(p), exp_avg_sq = zeros_like(p) } end
  function c:_step_group(g, state)
    local lr, b1, b2, eps, wdv = g.lr, g.betas[1], g.betas[2], g.eps, g.weight_decay
    local maxi, ams = g.maximize and 1 or 0, g.amsgrad
    for _, p in ipairs(g.params) do
      local gr, st = grad_and_state(state, p, init)
      if gr then
        local step = st.step + 1
        st.step = step
        local vmax
        if ams then
          vmax = st.max_exp_avg_sq
          if vmax == nil then vmax = zeros_like(p) st.max_exp_avg_sq = vmax end
        end
        local bc1, bc2 = 1 - b1 ^ step, 1 - b2 ^ step
        update(kind, p, gr, st.exp_avg, st.exp_avg_sq, vmax, lr, b1, b2, eps, wdv, maxi, dec,
          lr / bc1, math.sqrt(bc2))
      end
    end
  end
  return c
end
adam_class("Adam", false, 0)
adam_class("AdamW", true, 1e-2)

-- ---------------------------------------------------------------------------
-- RMSprop(params, {lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0,
--                  momentum = 0, centered = false, maximize = false})

local RMSprop = class("RMSprop", function(c, params, opts)
  return new_optimizer(c, "RMSprop", params, opts, with_compat({ lr = 1e-2, alpha = 0.99, eps = 1e-8,
    weight_decay = 0, momentum = 0, centered = false, maximize = false }), function(fname, g)
    check_lr(fname, g)
    check_nonneg(fname, g, "eps", "epsilon value")
    check_nonneg(fname, g, "momentum", "momentum value")
    check_nonneg(fname, g, "weight_decay", "weight_decay value")
    check_nonneg(fname, g, "alpha", "alpha value")
    check_flags(fname, g, "centered", "maximize")
  end)
end)
function RMSprop:_step_group(g, state)
  local lr, alpha, eps, wd, mom = g.lr, g.alpha, g.eps, g.weight_decay, g.momentum
  local centered, maxi = g.centered, g.maximize and 1 or 0
  local function init(p)
    local st = { step = 0, square_avg = zeros_like(p) }
    if mom > 0 then st.momentum_buffer = zeros_like(p) end
    if centered then st.grad_avg = zeros_like(p) end
    return st
  end
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, init)
    if gr then
      st.step = st.step + 1
      local buf, ga
      if mom > 0 then
        buf = st.momentum_buffer
        if buf == nil then buf = zeros_like(p) st.momentum_buffer = buf end
      end
      if centered then
        ga = st.grad_avg
        if ga == nil then ga = zeros_like(p) st.grad_avg = ga end
      end
      update(K_RMSPROP, p, gr, st.square_avg, buf, ga, lr, alpha, eps, wd, mom, maxi)
    end
  end
end

-- ---------------------------------------------------------------------------
-- Adagrad(params, {lr = 1e-2, lr_decay = 0, weight_decay = 0,
--                  initial_accumulator_value = 0, eps = 1e-10, maximize = false})
-- Its state is made at construction, as PyTorch does.

local Adagrad = class("Adagrad", function(c, params, opts)
  local o = new_optimizer(c, "Adagrad", params, opts, with_compat({ lr = 1e-2, lr_decay = 0, weight_decay = 0,
    initial_accumulator_value = 0, eps = 1e-10, maximize = false }), function(fname, g)
    check_lr(fname, g)
    check_nonneg(fname, g, "lr_decay", "lr_decay value")
    check_nonneg(fname, g, "weight_decay", "weight_decay value")
    check_nonneg(fname, g, "initial_accumulator_value", "initial_accumulator_value value")
    check_nonneg(fname, g, "eps", "epsilon value")
    check_flags(fname, g, "maximize")
  end)
  for _, g in ipairs(o.param_groups) do
    for _, p in ipairs(g.params) do
      o.state[p] = { step = 0, sum = full_like(p, g.initial_accumulator_value) }
    end
  end
  return o
end)
function Adagrad:add_param_group(group)
  Optimizer.add_param_group(self, group)
  local g = self.param_groups[#self.param_groups]
  for _, p in ipairs(g.params) do
    self.state[p] = { step = 0, sum = full_like(p, g.initial_accumulator_value) }
  end
end
function Adagrad:_step_group(g, state)
  local lr, lr_decay, eps, wd, maxi = g.lr, g.lr_decay, g.eps, g.weight_decay, g.maximize and 1 or 0
  local function init(p) return { step = 0, sum = full_like(p, g.initial_accumulator_value) } end
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, init)
    if gr then
      local step = st.step + 1
      st.step = step
      local clr = lr / (1 + (step - 1) * lr_decay)
      update(K_ADAGRAD, p, gr, st.sum, nil, nil, clr, eps, wd, maxi)
    end
  end
end

-- ---------------------------------------------------------------------------
-- Adadelta(params, {lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false})

local Adadelta = class("Adadelta", function(c, params, opts)
  return new_optimizer(c, "Adadelta", params, opts, with_compat({ lr = 1.0, rho = 0.9, eps = 1e-6,
    weight_decay = 0, maximize = false }), function(fname, g)
    check_lr(fname, g)
    local rho = check_num(fname, g, "rho", "rho value")
    if not (rho >= 0 and rho <= 1) then fail(fname, "Invalid rho value: %s", num(rho)) end
    check_nonneg(fname, g, "eps", "epsilon value")
    check_nonneg(fname, g, "weight_decay", "weight_decay value")
    check_flags(fname, g, "maximize")
  end)
end)
local function adadelta_init(p) return { step = 0, square_avg = zeros_like(p), acc_delta = zeros_like(p) } end
function Adadelta:_step_group(g, state)
  local lr, rho, eps, wd, maxi = g.lr, g.rho, g.eps, g.weight_decay, g.maximize and 1 or 0
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, adadelta_init)
    if gr then
      st.step = st.step + 1
      update(K_ADADELTA, p, gr, st.square_avg, st.acc_delta, nil, lr, rho, eps, wd, maxi)
    end
  end
end

-- ---------------------------------------------------------------------------
-- Adamax(params, {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, maximize = false})

local Adamax = class("Adamax", function(c, params, opts)
  return new_optimizer(c, "Adamax", params, opts, with_compat({ lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
    weight_decay = 0, maximize = false }), function(fname, g)
    check_lr(fname, g)
    check_nonneg(fname, g, "eps", "epsilon value")
    check_betas(fname, g)
    check_nonneg(fname, g, "weight_decay", "weight_decay value")
    check_flags(fname, g, "maximize")
  end)
end)
local function adamax_init(p) return { step = 0, exp_avg = zeros_like(p), exp_inf = zeros_like(p) } end
function Adamax:_step_group(g, state)
  local lr, b1, b2, eps, wd, maxi = g.lr, g.betas[1], g.betas[2], g.eps, g.weight_decay, g.maximize and 1 or 0
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, adamax_init)
    if gr then
      local step = st.step + 1
      st.step = step
      update(K_ADAMAX, p, gr, st.exp_avg, st.exp_inf, nil, lr / (1 - b1 ^ step), b1, b2, eps, wd, maxi)
    end
  end
end

-- ---------------------------------------------------------------------------
-- NAdam(params, {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0,
--                momentum_decay = 4e-3})
-- PyTorch 1.13 keeps mu_product in a float32 tensor and computes
-- mu_product_next = mu_product * mu * mu_next (mu counted twice; fixed in
-- PyTorch 2.0): both are reproduced, with float32 rounding via string.pack.

local function f32(x) return (compat.sunpack("f", compat.spack("f", x))) end
local NAdam = class("NAdam", function(c, params, opts)
  return new_optimizer(c, "NAdam", params, opts, with_compat({ lr = 2e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
    weight_decay = 0, momentum_decay = 4e-3 }), function(fname, g)
    check_lr(fname, g)
    check_nonneg(fname, g, "eps", "epsilon value")
    check_betas(fname, g)
    check_nonneg(fname, g, "weight_decay", "weight_decay value")
    check_nonneg(fname, g, "momentum_decay", "momentum_decay value")
  end)
end)
local function nadam_init(p) return { step = 0, mu_product = 1.0, exp_avg = zeros_like(p), exp_avg_sq = zeros_like(p) } end
function NAdam:_step_group(g, state)
  local lr, b1, b2, eps, wd, md = g.lr, g.betas[1], g.betas[2], g.eps, g.weight_decay, g.momentum_decay
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, nadam_init)
    if gr then
      local step = st.step + 1
      st.step = step
      local bc2 = 1 - b2 ^ step
      local mu = b1 * (1.0 - 0.5 * (0.96 ^ (step * md)))
      local mu_next = b1 * (1.0 - 0.5 * (0.96 ^ ((step + 1) * md)))
      local mp = f32(st.mu_product * f32(mu))
      st.mu_product = mp
      local mp_next = f32(f32(mp * f32(mu)) * f32(mu_next))
      local cg = -lr * (1.0 - mu) / (1.0 - mp)
      local cm = (-lr * mu_next) / (1.0 - mp_next)
      update(K_NADAM, p, gr, st.exp_avg, st.exp_avg_sq, nil, b1, b2, eps, wd, bc2, cg, cm)
    end
  end
end

-- ---------------------------------------------------------------------------
-- RAdam(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0})

local RAdam = class("RAdam", function(c, params, opts)
  return new_optimizer(c, "RAdam", params, opts, with_compat({ lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8,
    weight_decay = 0 }), function(fname, g)
    check_lr(fname, g)
    check_nonneg(fname, g, "eps", "epsilon value")
    check_betas(fname, g)
    check_nonneg(fname, g, "weight_decay", "weight_decay value")
  end)
end)
local function radam_init(p) return { step = 0, exp_avg = zeros_like(p), exp_avg_sq = zeros_like(p) } end
function RAdam:_step_group(g, state)
  local lr, b1, b2, eps, wd = g.lr, g.betas[1], g.betas[2], g.eps, g.weight_decay
  local rho_inf = 2 / (1 - b2) - 1
  for _, p in ipairs(g.params) do
    local gr, st = grad_and_state(state, p, radam_init)
    if gr then
      local step = st.step + 1
      st.step = step
      local bc1, bc2 = 1 - b1 ^ step, 1 - b2 ^ step
      local rho_t = rho_inf - 2 * step * (b2 ^ step) / bc2
      local rectify, rect = 0, 0
      if rho_t > 5 then
        rectify = 1
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
      end
      update(K_RADAM, p, gr, st.exp_avg, st.exp_avg_sq, nil, lr, b1, b2, eps, wd, bc1, rectify, rect,
        math.sqrt(bc2))
    end
  end
end

-- ---------------------------------------------------------------------------
-- LBFGS(params, {lr = 1, max_iter = 20, max_eval = max_iter * 5 // 4,
--   tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100,
--   line_search_fn = nil | "strong_wolfe"})
-- opt:step(closure) with closure() -> loss (it calls zero_grad/backward).
-- PyTorch 1.13's algorithm (minFunc's L-BFGS, Torch7's lswolfe.lua line
-- search); the scalars (step t, H_diag, ro, al) are Lua numbers in double
-- precision where PyTorch keeps 0-dim tensors of the parameters' dtype.
return true
