-- ltensor.optim: PyTorch 1.13's optimizers.
--
--   local opt = T.optim.Adam(model:parameters(), {lr = 1e-3})
--   opt:zero_grad(); loss:backward(); opt:step()
--
-- SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam follow
-- PyTorch 1.13's _single_tensor_<name> update formulas; each parameter is
-- updated in one fused pass over its elements by a C kernel
-- (T._optim_update, src/l_optim.c) that also updates the state buffers, so a
-- step costs one C call per parameter and allocates nothing. LBFGS is written
-- with tensor ops over the flattened parameters (it is dominated by dot
-- products and a closure call per evaluation).
--
-- params: a list of tensors, or a list of parameter groups
--   {{params = {w1, b1}, lr = 0.1}, {params = {w2}}}
-- whose keys override the options table (the defaults). The options table
-- is checked: an unknown key raises "unknown option 'learning_rate' (did you
-- mean 'lr'?)".  `lr` is required by SGD, as in PyTorch.
--
-- state_dict layout (PyTorch's, with 1-based positions as everywhere in Lua):
--   { state = { [i] = {step = n, exp_avg = tensor, ...}, ... },
--     param_groups = { {lr = ..., betas = {...}, ..., params = {1, 2, ...}}, ... } }
-- where i is the parameter's position counting through the groups in order.
-- Unlike PyTorch, state_dict() returns copies (a snapshot that later steps
-- do not change) and load_state_dict copies again, so a saved dictionary can
-- be loaded any number of times; a run resumed from it is bit-identical to an
-- uninterrupted one.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local optim = {}
local update = T._optim_update
local set_grad = T._set_grad_enabled
local mtype = math.type

local fail = util.failer("ltensor.optim.")
local is_t = util.is_tensor
local typename = util.typename
-- numbers print as Python prints them (1.0, not 1) in messages
local function num(v)
  if mtype(v) == "float" and v == math.floor(v) and v == v and math.abs(v) < 1e16 then
    return string.format("%.1f", v)
  end
  return tostring(v)
end

-- ---------------------------------------------------------------------------
-- checked options

-- The one checker (T._check_opts, l_args.c) words an unknown key, with its
-- suggestion (near misses, and names from other libraries: learning_rate ->
-- lr, epsilon -> eps, beta1 -> betas, ...).
local function check_keys(fname, tbl, known, extra)
  for k in pairs(tbl) do
    if known[k] == nil and not (extra and extra[k]) then
      T._check_opts("optim." .. fname, { [k] = true }, known)
      fail(fname, "unknown option '%s'", tostring(k))   -- (known has no names)
    end
  end
end

-- keys a parameter group may carry besides the options: its params, and the
-- values LR schedulers keep there (PyTorch's names)
local GROUP_EXTRA = { params = true, initial_lr = true, max_lr = true, min_lr = true,
  max_momentum = true, base_momentum = true }

local REQUIRED = setmetatable({}, { __tostring = function() return "<required parameter>" end })
optim.required = REQUIRED

-- ---------------------------------------------------------------------------
-- Optimizer base

local Optimizer = {}
Optimizer.__index = Optimizer
optim.Optimizer = Optimizer

local function param_list(fname, ps)
  if is_t(ps) then return { ps } end
  if type(ps) ~= "table" then
    fail(fname, "params argument given to the optimizer should be an iterable of Tensors or dicts, but got %s",
      typename(ps))
  end
  local out = {}
  local n = #ps
  for i = 1, n do out[i] = ps[i] end
  for k in pairs(ps) do
    if mtype(k) ~= "integer" or k < 1 or k > n then
      fail(fname, "params must be a list (found key '%s')", tostring(k))
    end
  end
  return out
end

-- PyTorch's Optimizer.add_param_group: fill defaults, check params.
local function add_group(self, group)
  local fname = self._name
  if type(group) ~= "table" or is_t(group) then
    fail(fname, "param group must be a table, got %s", typename(group))
  end
  check_keys(fname, group, self.defaults, GROUP_EXTRA)
  local g = {}
  for k, v in pairs(group) do g[k] = v end
  g.params = param_list(fname, group.params)
  for i, p in ipairs(g.params) do
    if not is_t(p) then
      fail(fname, "optimizer can only optimize Tensors, but one of the params is %s", typename(p))
    end
    if not p.is_leaf then fail(fname, "can't optimize a non-leaf Tensor") end
    local seen = self._seen[p]
    if seen == g then fail(fname, "parameter %d appears twice in the same parameter group", i) end
    if seen then fail(fname, "some parameters appear in more than one parameter group") end
    self._seen[p] = g
    g.params[i] = p
  end
  for k, v in pairs(self.defaults) do
    if g[k] == nil then
      if v == REQUIRED then
        fail(fname, "parameter group didn't specify a value of required optimization parameter %s", k)
      end
      if type(v) == "table" then
        local c = {}
        for i, x in ipairs(v) do c[i] = x end
        v = c
      end
      g[k] = v
    end
  end
  if self._validate then self._validate(fname, g) end
  self.param_groups[#self.param_groups + 1] = g
end

-- new(class, name, params, opts, defaults [, validate]): validate(fname, g)
-- checks one group's values (run for the defaults and for every group).
local function new_optimizer(class, name, params, opts, defaults, validate)
  if opts ~= nil and (type(opts) ~= "table" or is_t(opts)) then
    fail(name, "bad argument #2 'opts' (table expected, got %s)", typename(opts))
  end
  opts = opts or {}
  check_keys(name, opts, defaults)
  local d = {}
  for k, v in pairs(defaults) do d[k] = v end
  for k, v in pairs(opts) do d[k] = v end
  local self = setmetatable({ _name = name, defaults = d, param_groups = {}, state = {},
    _seen = {}, _validate = validate }, class)
  if validate then
    local probe = {}
    for k, v in pairs(d) do if v ~= REQUIRED then probe[k] = v end end
    validate(name, probe)
  end
  if is_t(params) then
    fail(name, "params argument given to the optimizer should be an iterable of Tensors or dicts, but got %s",
      typename(params))
  end
  local list = param_list(name, params)
  if #list == 0 then fail(name, "optimizer got an empty parameter list") end
  if type(list[1]) == "table" and not is_t(list[1]) then
    for _, g in ipairs(list) do add_group(self, g) end
  else
    add_group(self, { params = list })
  end
  return self
end
optim._new_optimizer = new_optimizer

function Optimizer:add_param_group(group)
  add_group(self, group)
end

function Optimizer:__tostring()
  local lines = { self._name .. " (" }
  for i, g in ipairs(self.param_groups) do
    lines[#lines + 1] = "Parameter Group " .. i   -- PyTorch counts from 0; Lua lists from 1
    local keys = {}
    for k in pairs(g) do if k ~= "params" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = g[k]
      if type(v) == "table" then
        local parts = {}
        for j, x in ipairs(v) do parts[j] = tostring(x) end
        v = "(" .. table.concat(parts, ", ") .. ")"
      end
      lines[#lines + 1] = "    " .. k .. ": " .. tostring(v)
    end
  end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

-- zero_grad([set_to_none | {set_to_none = bool}]): PyTorch 1.13's default
-- zeroes the gradients in place; set_to_none drops them.
function Optimizer:zero_grad(set_to_none)
  if type(set_to_none) == "table" then
    check_keys(self._name .. ".zero_grad", set_to_none, { set_to_none = false })
    set_to_none = set_to_none.set_to_none
  end
  local prev = set_grad(false)
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      local gr = p.grad
      if gr ~= nil then
        if set_to_none then p.grad = nil
        else
          if gr.grad_fn then gr = gr:detach() p.grad = gr end
          gr:zero_()
        end
      end
    end
  end
  set_grad(prev)
end

-- step([closure]): the closure (run with grad enabled) re-evaluates the
-- loss; its result is returned.
function Optimizer:step(closure)
  if closure ~= nil and type(closure) ~= "function" and not (getmetatable(closure) or {}).__call then
    fail(self._name .. ".step", "bad argument #1 'closure' (function expected, got %s)", typename(closure))
  end
  local loss
  if closure then loss = T.enable_grad(closure) end
  local prev = set_grad(false)
  local ok, err = pcall(self._step_groups, self)
  set_grad(prev)
  if not ok then error(err, 0) end
  return loss
end

function Optimizer:_step_groups()
  local state, step_group = self.state, self._step_group
  for _, g in ipairs(self.param_groups) do step_group(self, g, state) end
end

-- A new contiguous zero buffer like p (the C kernels need contiguous state).
local function zeros_like(p) return T.zeros(p.shape, { dtype = p.dtype }) end
local function full_like(p, v) return T.full(p.shape, v, { dtype = p.dtype }) end

-- ---------------------------------------------------------------------------
-- state_dict / load_state_dict

local function copy_value(v)
  if is_t(v) then return v:detach():clone() end
  if type(v) == "table" then
    local c = {}
    for k, x in pairs(v) do c[k] = copy_value(x) end
    return c
  end
  return v
end

function Optimizer:state_dict()
  local index, n = {}, 0
  local groups = {}
  for gi, g in ipairs(self.param_groups) do
    local pg = {}
    for k, v in pairs(g) do if k ~= "params" then pg[k] = copy_value(v) end end
    pg.params = {}
    for _, p in ipairs(g.params) do
      if index[p] == nil then n = n + 1 index[p] = n end
      pg.params[#pg.params + 1] = index[p]
    end
    groups[gi] = pg
  end
  local st = {}
  for p, s in pairs(self.state) do
    if index[p] then st[index[p]] = copy_value(s) end
  end
  return { state = st, param_groups = groups }
end

function Optimizer:load_state_dict(sd)
  local fname = self._name .. ".load_state_dict"
  if type(sd) ~= "table" or type(sd.param_groups) ~= "table" or type(sd.state) ~= "table" then
    fail(fname, "expected a table with 'state' and 'param_groups' (as state_dict() returns)")
  end
  local saved = sd.param_groups
  if #saved ~= #self.param_groups then
    fail(fname, "loaded state dict has a different number of parameter groups")
  end
  local id_map = {}
  for gi, g in ipairs(self.param_groups) do
    local sg = saved[gi]
    if type(sg) ~= "table" or type(sg.params) ~= "table" or #sg.params ~= #g.params then
      fail(fname, "loaded state dict contains a parameter group that doesn't match the size of optimizer's group")
    end
    for i, p in ipairs(g.params) do id_map[sg.params[i]] = p end
  end
  -- state: floating tensors follow their parameter's dtype (PyTorch's cast)
  local state = {}
  for k, s in pairs(sd.state) do
    local p = id_map[k]
    if p ~= nil then
      if type(s) ~= "table" then fail(fname, "state of parameter %s is not a table", tostring(k)) end
      local ns = {}
      for key, v in pairs(s) do
        if is_t(v) and (key == "step" or key == "mu_product") and v:numel() == 1 then
          v = v:item()   -- PyTorch keeps these in 0-dim tensors; here they are numbers
          if key == "step" and v == math.floor(v) then v = math.tointeger(v) or v end
        elseif is_t(v) then
          -- floating state follows the parameter's dtype (PyTorch's cast), contiguous for the kernels
          if v.dtype.is_floating_point then v = v:detach():to(p.dtype):contiguous():clone()
          else v = v:detach():clone() end
        else
          v = copy_value(v)
        end
        ns[key] = v
      end
      state[p] = ns
    end
  end
  self.state = state
  for gi, g in ipairs(self.param_groups) do
    local sg = saved[gi]
    local ng = { params = g.params }
    for k, v in pairs(sg) do if k ~= "params" then ng[k] = copy_value(v) end end
    self.param_groups[gi] = ng
  end
  if self._after_load then self:_after_load() end
end

-- ---------------------------------------------------------------------------
-- validation helpers (PyTorch 1.13's messages)

local function check_num(fname, g, key, what)
  local v = g[key]
  if type(v) ~= "number" then
    fail(fname, "Invalid %s: expected a number, got %s", what, typename(v))
  end
  return v
end
local function check_nonneg(fname, g, key, what)
  local v = check_num(fname, g, key, what)
  if not (v >= 0) then fail(fname, "Invalid %s: %s", what, num(v)) end
  return v
end
local function check_bool(fname, g, key)
  local v = g[key]
  if v ~= nil and type(v) ~= "boolean" then
    fail(fname, "Invalid %s: expected a boolean, got %s", key, typename(v))
  end
end
local function check_betas(fname, g)
  local b = g.betas
  if type(b) ~= "table" or type(b[1]) ~= "number" or type(b[2]) ~= "number" or #b ~= 2 then
    fail(fname, "Invalid betas: expected a table of two numbers, got %s", typename(b))
  end
  if not (b[1] >= 0 and b[1] < 1) then fail(fname, "Invalid beta parameter at index 1: %s", num(b[1])) end
  if not (b[2] >= 0 and b[2] < 1) then fail(fname, "Invalid beta parameter at index 2: %s", num(b[2])) end
end
local function check_lr(fname, g)
  if g.lr == nil then return end
  check_nonneg(fname, g, "lr", "learning rate")
end
local function check_flags(fname, g, ...)
  for i = 1, select("#", ...) do check_bool(fname, g, (select(i, ...))) end
end

-- accepted for PyTorch compatibility; CPU single-tensor code is always used
local COMPAT = { foreach = false, differentiable = false, capturable = false, fused = false }
local function with_compat(d)
  for k, v in pairs(COMPAT) do d[k] = v end
  return d
end

-- class table callable as a constructor: T.optim.SGD(params, opts)
local function class(name, ctor)
  local c = setmetatable({}, { __index = Optimizer })
  c.__index = c
  c.__tostring = Optimizer.__tostring
  c.__name = "ltensor.optim." .. name
  optim[name] = setmetatable({}, { __call = function(_, ...) return ctor(c, ...) end, __index = c })
  return c
end

-- The gradient of p, its state table (made by init on first use).
local function grad_and_state(state, p, init)
  local gr = p.grad
  if gr == nil then return nil end
  local st = state[p]
  if st == nil then st = init(p) state[p] = st end
  return gr, st
end

-- ---------------------------------------------------------------------------
-- SGD(params, {lr (required), momentum = 0, dampening = 0, weight_decay = 0,
--              nesterov = false, maximize = false})

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

local LBFGS = class("LBFGS", function(c, params, opts)
  local o = new_optimizer(c, "LBFGS", params, opts, { lr = 1, max_iter = 20, max_eval = false,
    tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100, line_search_fn = false },
    function(fname, g)
      check_lr(fname, g)
      for _, k in ipairs({ "max_iter", "history_size" }) do
        if g[k] ~= nil and (mtype(g[k]) ~= "integer" or g[k] < 1) then
          fail(fname, "Invalid %s: expected a positive integer, got %s", k, tostring(g[k]))
        end
      end
      if g.max_eval ~= nil and g.max_eval ~= false and mtype(g.max_eval) ~= "integer" then
        fail(fname, "Invalid max_eval: expected an integer, got %s", tostring(g.max_eval))
      end
      check_nonneg(fname, g, "tolerance_grad", "tolerance_grad")
      check_nonneg(fname, g, "tolerance_change", "tolerance_change")
      local ls = g.line_search_fn
      if ls ~= nil and ls ~= false and ls ~= "strong_wolfe" then
        fail(fname, "only 'strong_wolfe' is supported (got line_search_fn = %s)", tostring(ls))
      end
    end)
  if #o.param_groups ~= 1 then fail("LBFGS", "LBFGS doesn't support per-parameter options (parameter groups)") end
  local g = o.param_groups[1]
  if not g.max_eval then g.max_eval = math.floor(g.max_iter * 5 / 4) end
  if not o.defaults.max_eval then o.defaults.max_eval = math.floor(o.defaults.max_iter * 5 / 4) end
  for _, p in ipairs(g.params) do
    if p.dtype ~= T.float32 and p.dtype ~= T.float64 then
      fail("LBFGS", "parameters of dtype %s are not supported (float32 and float64 are)", tostring(p.dtype))
    end
  end
  return o
end)

function LBFGS:add_param_group()
  fail("LBFGS", "LBFGS doesn't support per-parameter options (parameter groups)")
end

local function flat_grad(params)
  local views = {}
  for i, p in ipairs(params) do
    local g = p.grad
    if g == nil then views[i] = T.zeros({ p:numel() }, { dtype = p.dtype })
    else views[i] = g:reshape({ -1 }) end
  end
  if #views == 1 then return views[1]:clone() end
  return T.cat(views, 1)
end

local function add_flat(params, t, d)
  local off = 0
  for _, p in ipairs(params) do
    local n = p:numel()
    p:add_(d:narrow(1, off + 1, n):view(p.shape), { alpha = t })
    off = off + n
  end
end

local function absmax(x) return x:abs():max():item() end
local function dot(a, b) return T.dot(a, b):item() end

local function cubic_interpolate(x1, f1, g1, x2, f2, g2, lo, hi)
  local xmin, xmax
  if lo then xmin, xmax = lo, hi
  elseif x1 <= x2 then xmin, xmax = x1, x2 else xmin, xmax = x2, x1 end
  local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
  local d2sq = d1 * d1 - g1 * g2
  if d2sq >= 0 then
    local d2 = math.sqrt(d2sq)
    local min_pos
    if x1 <= x2 then min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2)) end
    return math.min(math.max(min_pos, xmin), xmax)
  end
  return (xmin + xmax) / 2
end

local function strong_wolfe(obj, x, t, d, f, g, gtd, c1, c2, tol_change, max_ls)
  c1, c2, tol_change, max_ls = c1 or 1e-4, c2 or 0.9, tol_change or 1e-9, max_ls or 25
  local d_norm = absmax(d)
  g = g:clone()
  local f_new, g_new = obj(x, t, d)
  local evals = 1
  local gtd_new = dot(g_new, d)
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
  local done, ls_iter = false, 0
  local br, br_f, br_g, br_gtd
  while ls_iter < max_ls do
    if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev) then
      br, br_f, br_g, br_gtd = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
      break
    end
    if math.abs(gtd_new) <= -c2 * gtd then
      br, br_f, br_g = { t }, { f_new }, { g_new }
      done = true
      break
    end
    if gtd_new >= 0 then
      br, br_f, br_g, br_gtd = { t_prev, t }, { f_prev, f_new }, { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
      break
    end
    local min_step, max_step = t + 0.01 * (t - t_prev), t * 10
    local tmp = t
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step)
    t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
    f_new, g_new = obj(x, t, d)
    evals = evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
  end
  if ls_iter == max_ls then
    br, br_f, br_g = { 0, t }, { f, f_new }, { g, g_new }
    br_gtd = br_gtd or { gtd, gtd_new }
  end
  local insuf = false
  local low, high = 1, 2
  if not (br_f[1] <= br_f[#br_f]) then low, high = 2, 1 end
  while not done and ls_iter < max_ls do
    if math.abs(br[2] - br[1]) * d_norm < tol_change then break end
    t = cubic_interpolate(br[1], br_f[1], br_gtd[1], br[2], br_f[2], br_gtd[2])
    local bmax, bmin = math.max(br[1], br[2]), math.min(br[1], br[2])
    local eps = 0.1 * (bmax - bmin)
    if math.min(bmax - t, t - bmin) < eps then
      if insuf or t >= bmax or t <= bmin then
        if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - eps else t = bmin + eps end
        insuf = false
      else
        insuf = true
      end
    else
      insuf = false
    end
    f_new, g_new = obj(x, t, d)
    evals = evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
    if f_new > (f + c1 * t * gtd) or f_new >= br_f[low] then
      br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new:clone(), gtd_new
      if br_f[1] <= br_f[2] then low, high = 1, 2 else low, high = 2, 1 end
    else
      if math.abs(gtd_new) <= -c2 * gtd then
        done = true
      elseif gtd_new * (br[high] - br[low]) >= 0 then
        br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
      end
      br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new:clone(), gtd_new
    end
  end
  return br_f[low], br_g[low], br[low], evals
end

local function loss_number(fname, v)
  if is_t(v) then return v:item() end
  if type(v) == "number" then return v end
  fail(fname, "the closure must return the loss (a tensor or a number), got %s", typename(v))
end

function LBFGS:step(closure)
  local fname = "LBFGS.step"
  if type(closure) ~= "function" and not (getmetatable(closure) or {}).__call then
    fail(fname, "bad argument #1 'closure' (function expected, got %s): LBFGS needs a closure that "
      .. "re-evaluates the model and returns the loss", typename(closure))
  end
  local prev = set_grad(false)
  local ok, res = pcall(self._lbfgs_step, self, closure, fname)
  set_grad(prev)
  if not ok then error(res, 0) end
  return res
end

function LBFGS:_lbfgs_step(closure, fname)
  local function eval() return T.enable_grad(closure) end
  local g = self.param_groups[1]
  local params = g.params
  local lr, max_iter, max_eval = g.lr, g.max_iter, g.max_eval
  if not max_eval then max_eval = math.floor(max_iter * 5 / 4) end
  local tol_grad, tol_change, hist = g.tolerance_grad, g.tolerance_change, g.history_size
  local ls_fn = g.line_search_fn
  local p1 = params[1]
  local state = self.state[p1]
  if state == nil then state = { func_evals = 0, n_iter = 0 } self.state[p1] = state end

  local orig_loss = eval()
  local loss = loss_number(fname, orig_loss)
  local current_evals = 1
  state.func_evals = state.func_evals + 1
  local fg = flat_grad(params)
  local opt_cond = absmax(fg) <= tol_grad
  if opt_cond then return orig_loss end

  local d, t = state.d, state.t
  local old_dirs, old_stps, ro = state.old_dirs, state.old_stps, state.ro
  local H_diag, prev_fg, prev_loss = state.H_diag, state.prev_flat_grad, state.prev_loss
  local n_iter = 0
  while n_iter < max_iter do
    n_iter = n_iter + 1
    state.n_iter = state.n_iter + 1
    if state.n_iter == 1 then
      d = fg:neg()
      old_dirs, old_stps, ro = {}, {}, {}
      H_diag = 1
    else
      local y = fg - prev_fg
      local s = d * t
      local ys = dot(y, s)
      if ys > 1e-10 then
        if #old_dirs == hist then
          table.remove(old_dirs, 1) table.remove(old_stps, 1) table.remove(ro, 1)
        end
        old_dirs[#old_dirs + 1] = y
        old_stps[#old_stps + 1] = s
        ro[#ro + 1] = 1.0 / ys
        H_diag = ys / dot(y, y)
      end
      local num_old = #old_dirs
      local al = state.al or {}
      state.al = al
      local q = fg:neg()
      for i = num_old, 1, -1 do
        al[i] = dot(old_stps[i], q) * ro[i]
        q:add_(old_dirs[i], { alpha = -al[i] })
      end
      local r = q * H_diag
      d = r
      for i = 1, num_old do
        local be_i = dot(old_dirs[i], r) * ro[i]
        r:add_(old_stps[i], { alpha = al[i] - be_i })
      end
    end
    if prev_fg == nil then prev_fg = fg:clone() else prev_fg:copy_(fg) end
    prev_loss = loss
    if state.n_iter == 1 then
      t = math.min(1.0, 1.0 / fg:abs():sum():item()) * lr
    else
      t = lr
    end
    local gtd = dot(fg, d)
    if gtd > -tol_change then break end
    local ls_evals = 0
    if ls_fn then
      local x_init = {}
      for i, p in ipairs(params) do x_init[i] = p:clone() end
      local function obj(x, tt, dd)
        add_flat(params, tt, dd)
        local l = loss_number(fname, eval())
        local fgn = flat_grad(params)
        for i, p in ipairs(params) do p:copy_(x[i]) end
        return l, fgn
      end
      loss, fg, t, ls_evals = strong_wolfe(obj, x_init, t, d, loss, fg, gtd, nil, nil, nil, max_eval - current_evals)
      add_flat(params, t, d)
      opt_cond = absmax(fg) <= tol_grad
    else
      add_flat(params, t, d)
      if n_iter ~= max_iter then
        loss = loss_number(fname, eval())
        fg = flat_grad(params)
        opt_cond = absmax(fg) <= tol_grad
        ls_evals = 1
      end
    end
    current_evals = current_evals + ls_evals
    state.func_evals = state.func_evals + ls_evals
    if n_iter == max_iter then break end
    if current_evals >= max_eval then break end
    if opt_cond then break end
    if absmax(d * t) <= tol_change then break end
    if math.abs(loss - prev_loss) < tol_change then break end
  end
  state.d, state.t, state.old_dirs, state.old_stps, state.ro = d, t, old_dirs, old_stps, ro
  state.H_diag, state.prev_flat_grad, state.prev_loss = H_diag, prev_fg, prev_loss
  return orig_loss
end

optim.lr_scheduler = require "ltensor.lr_scheduler"
return optim
