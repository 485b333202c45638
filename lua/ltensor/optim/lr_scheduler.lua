-- ltensor.optim.lr_scheduler: PyTorch 1.13's learning-rate schedulers.
--
--   local sched = T.optim.lr_scheduler.StepLR(opt, 30, {gamma = 0.1})
--   for epoch = 1, 100 do train(); sched:step() end
--
-- Positional arguments are PyTorch's required ones, keyword arguments go in
-- an options table (checked: unknown keys raise with a suggestion). The
-- schedules are PyTorch's "chainable" formulas (each step updates the
-- group's current lr), with the closed forms used by step(epoch), so values
-- match PyTorch over any number of epochs. Constructing a scheduler performs
-- its initial step (epoch 0), as in PyTorch. Epoch counters (last_epoch)
-- count as PyTorch's do: -1 before the initial step, 0 after it.
--
--   sched:step()            advance one epoch (ReduceLROnPlateau: step(metric))
--   sched:get_last_lr()     the list of lrs the last step set, one per group
--   sched:state_dict() / sched:load_state_dict(sd)
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local S = {}
local mtype = math.type
local unpack = table.unpack

local fail = util.failer("ltensor.optim.lr_scheduler.")
local typename = util.typename

-- opts checked against known (a set of names -> default); returns a filled table.
local PER_GROUP = { min_lr = true, max_lr = true, base_lr = true, base_momentum = true, max_momentum = true }
local BOOLEAN_OPTS = { verbose = true, three_phase = true, cycle_momentum = true }
local function options(fname, opts, known)
  known.verbose = false   -- every scheduler takes it (PyTorch 1.13)
  if opts ~= nil and type(opts) ~= "table" then
    fail(fname, "bad options argument (table expected, got %s)", typename(opts))
  end
  if opts then T._check_opts("optim.lr_scheduler." .. fname, opts, known) end   -- the one checker
  -- a value of the default's kind (a number, a boolean, a string); the
  -- per-group options may also be lists (checked by per_group); false
  -- stands for "no default" except for the true booleans
  for k, v in pairs(opts or {}) do
    local want = type(known[k])
    if known[k] == false and not BOOLEAN_OPTS[k] then want = nil end
    if (want == "number" or want == "boolean" or want == "string") and type(v) ~= want
        and not (want == "number" and PER_GROUP[k] and type(v) == "table") then
      fail(fname, "option '%s' must be a %s, got %s", k, want, typename(v))
    end
  end
  local o = {}
  for k, v in pairs(known) do o[k] = v end
  for k, v in pairs(opts or {}) do o[k] = v end
  for k, v in pairs(o) do if v == false and known[k] == false then o[k] = nil end end
  return o
end

local function check_optimizer(fname, opt)
  if type(opt) ~= "table" or type(opt.param_groups) ~= "table" then
    fail(fname, "%s is not an Optimizer", typename(opt))
  end
end

-- a scheduler's optimizer (checked) and options: options(fname, opts, known)
local function scheduler_options(fname, opt, opts, known)
  check_optimizer(fname, opt)
  return options(fname, opts, known)
end

local function num(v)
  if mtype(v) == "float" and v == math.floor(v) and math.abs(v) < 1e16 then return string.format("%.1f", v) end
  return tostring(v)
end

-- per-group values: a number for all groups, or a list with one per group
local function per_group(fname, name, opt, v)
  local n = #opt.param_groups
  if type(v) == "table" then
    if #v ~= n then fail(fname, "expected %d values for %s, got %d", n, name, #v) end
    local c = {}
    for i = 1, n do
      if type(v[i]) ~= "number" then fail(fname, "%s[%d] must be a number, got %s", name, i, typename(v[i])) end
      c[i] = v[i]
    end
    return c
  end
  if type(v) ~= "number" then fail(fname, "%s must be a number or a list of numbers, got %s", name, typename(v)) end
  local c = {}
  for i = 1, n do c[i] = v end
  return c
end

-- ---------------------------------------------------------------------------
-- base (PyTorch's _LRScheduler)

local Base = {}
Base.__index = Base
S.LRScheduler = Base

-- sched.step() for sched:step(): the public methods check their self
-- (util.self_checked), Base's once they are defined and a class's
-- overrides as they are defined (class's __newindex)
local METHODS = { "get_last_lr", "step", "state_dict", "load_state_dict", "get_lr" }
local method_set = {}
for _, k in ipairs(METHODS) do method_set[k] = true end
local function self_cfg(name)
  return { prefix = "optim.lr_scheduler." .. name .. ".", expected = "ltensor.optim.lr_scheduler.LRScheduler",
    var = "sched", key = "optimizer" }
end
local define_method = util.method_definer(method_set, function(c) return self_cfg(rawget(c, "_name")) end)

local function class(name, parent)
  local c = setmetatable({}, { __index = parent or Base, __newindex = define_method })
  c.__index = c
  c.__name = "ltensor.optim.lr_scheduler." .. name
  c._name = name
  return c
end

-- A scheduler class callable in PyTorch's forms as well as ltensor's:
-- Sched(opt, required... [, opts]) (ltensor), Sched(opt, required...,
-- optional...) (PyTorch's positional order, `optional` below), and
-- Sched(opt, {required = ..., optional = ...}) (everything named).
local function is_opts(v) return type(v) == "table" and getmetatable(v) == nil and v[1] == nil end
local function callable(c, ctor, required, optional)
  required, optional = required or {}, optional or {}
  local nreq = #required
  local function call(_, opt, ...)
    local n = select("#", ...)
    local args = { ... }
    if nreq > 0 and n == 1 and is_opts(args[1]) and args[1][required[1]] ~= nil then
      local o, req = {}, {}
      for k, v in pairs(args[1]) do o[k] = v end
      for i, name in ipairs(required) do req[i] = o[name] o[name] = nil end
      req[nreq + 1] = o
      return ctor(opt, unpack(req, 1, nreq + 1))
    end
    if n <= nreq + 1 and (n <= nreq or args[n] == nil or is_opts(args[n])) then return ctor(opt, ...) end
    local o = {}
    local last = n
    if is_opts(args[n]) then
      for k, v in pairs(args[n]) do o[k] = v end
      last = n - 1
    end
    for i = nreq + 1, last do
      local name = optional[i - nreq]
      if name == nil then
        fail(c._name, "too many arguments (%d after the optimizer; PyTorch's order: %s)", n,
          table.concat(required, ", ") .. (#optional > 0 and ", " .. table.concat(optional, ", ") or ""))
      end
      if args[i] ~= nil then
        if o[name] ~= nil then fail(c._name, "%s given twice (as argument %d and as an option)", name, i + 1) end
        o[name] = args[i]
      end
    end
    args[nreq + 1] = o
    return ctor(opt, unpack(args, 1, nreq + 1))
  end
  return setmetatable({}, { __call = call, __index = c })
end

-- common set-up: initial_lr, base_lrs, and the initial step
local function init(self, fname, opt, o)
  check_optimizer(fname, opt)
  self.optimizer = opt
  local last_epoch = o.last_epoch or -1
  if o.verbose ~= nil and type(o.verbose) ~= "boolean" then
    fail(fname, "verbose must be a boolean, got %s", typename(o.verbose))
  end
  self.verbose = o.verbose or false
  if mtype(last_epoch) ~= "integer" then fail(fname, "last_epoch must be an integer, got %s", tostring(last_epoch)) end
  if last_epoch == -1 then
    for _, g in ipairs(opt.param_groups) do
      if g.initial_lr == nil then g.initial_lr = g.lr end
    end
  else
    for i, g in ipairs(opt.param_groups) do
      if g.initial_lr == nil then
        fail(fname, "param 'initial_lr' is not specified in param_groups[%d] when resuming an optimizer", i)
      end
    end
  end
  self.base_lrs = {}
  for i, g in ipairs(opt.param_groups) do self.base_lrs[i] = g.initial_lr end
  self.last_epoch = last_epoch
  self:_initial_step()
  return self
end

function Base:_initial_step()
  self._step_count = 0
  self:step()
end

function Base:get_last_lr()
  local c = {}
  for i, v in ipairs(self._last_lr) do c[i] = v end
  return c
end

function Base:step(epoch)
  self._step_count = self._step_count + 1
  local values
  if epoch == nil then
    self.last_epoch = self.last_epoch + 1
    values = self:get_lr()
  else
    if mtype(epoch) ~= "integer" then
      fail(self._name .. ".step", "epoch must be an integer, got %s", tostring(epoch))
    end
    self.last_epoch = epoch
    if self._closed_form then values = self:_closed_form() else values = self:get_lr() end
  end
  local groups = self.optimizer.param_groups
  self._last_lr = {}
  for i, g in ipairs(groups) do
    g.lr = values[i]
    self._last_lr[i] = g.lr
    if self.verbose then   -- PyTorch's print_lr (groups counted from 1 here)
      if epoch == nil then io.write(string.format("Adjusting learning rate of group %d to %.4e.\n", i, g.lr))
      else io.write(string.format("Epoch %5d: adjusting learning rate of group %d to %.4e.\n", epoch, i, g.lr)) end
    end
  end
end

-- every field but the optimizer and functions (PyTorch's __dict__ minus optimizer)
local function snapshot(v)
  if type(v) == "table" and getmetatable(v) == nil then
    local c = {}
    for k, x in pairs(v) do
      if type(x) ~= "function" then c[k] = snapshot(x) end
    end
    return c
  end
  return v
end

function Base:state_dict()
  local sd = {}
  for k, v in pairs(self) do
    if k ~= "optimizer" and k ~= "_schedulers" and type(v) ~= "function" then sd[k] = snapshot(v) end
  end
  if self._schedulers then
    sd._schedulers = {}
    for i, s in ipairs(self._schedulers) do sd._schedulers[i] = s:state_dict() end
  end
  return sd
end

function Base:load_state_dict(sd)
  if type(sd) ~= "table" then
    fail(self._name .. ".load_state_dict", "expected a table (as state_dict() returns), got %s", typename(sd))
  end
  for k, v in pairs(sd) do
    if k ~= "_schedulers" then self[k] = snapshot(v) end
  end
  if sd._schedulers and self._schedulers then
    for i, s in ipairs(self._schedulers) do
      if sd._schedulers[i] then s:load_state_dict(sd._schedulers[i]) end
    end
  end
end

local function group_lrs(self)
  local out = {}
  for i, g in ipairs(self.optimizer.param_groups) do out[i] = g.lr end
  return out
end

util.check_methods(Base, self_cfg("LRScheduler"), METHODS)

-- ---------------------------------------------------------------------------
-- LambdaLR(optimizer, lr_lambda [, {last_epoch = -1}])
-- lr = base_lr * lr_lambda(epoch); lr_lambda a function or one per group.

local LambdaLR = class("LambdaLR")
S.LambdaLR = callable(LambdaLR, function(opt, lr_lambda, opts)
  local fname = "LambdaLR"
  local o = scheduler_options(fname, opt, opts, { last_epoch = -1 })
  local self = setmetatable({}, LambdaLR)
  local n = #opt.param_groups
  if type(lr_lambda) == "table" and not (getmetatable(lr_lambda) or {}).__call then
    if #lr_lambda ~= n then fail(fname, "Expected %d lr_lambdas, but got %d", n, #lr_lambda) end
    self.lr_lambdas = {}
    for i = 1, n do
      local f = lr_lambda[i]
      if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
        fail(fname, "lr_lambda[%d] must be a function, got %s", i, typename(f))
      end
      self.lr_lambdas[i] = f
    end
  elseif type(lr_lambda) == "function" or (getmetatable(lr_lambda) or {}).__call then
    self.lr_lambdas = {}
    for i = 1, n do self.lr_lambdas[i] = lr_lambda end
  else
    fail(fname, "lr_lambda must be a function or a list of functions, got %s", typename(lr_lambda))
  end
  return init(self, fname, opt, o)
end, { "lr_lambda" }, { "last_epoch", "verbose" })
function LambdaLR:get_lr()
  local out = {}
  for i, b in ipairs(self.base_lrs) do out[i] = b * self.lr_lambdas[i](self.last_epoch) end
  return out
end
function LambdaLR:state_dict()
  local fns = self.lr_lambdas
  self.lr_lambdas = nil
  local sd = Base.state_dict(self)
  self.lr_lambdas = fns
  return sd
end

-- ---------------------------------------------------------------------------
-- StepLR(optimizer, step_size [, {gamma = 0.1, last_epoch = -1}])

local StepLR = class("StepLR")
S.StepLR = callable(StepLR, function(opt, step_size, opts)
  local fname = "StepLR"
  local o = scheduler_options(fname, opt, opts, { gamma = 0.1, last_epoch = -1 })
  if mtype(step_size) ~= "integer" or step_size < 1 then
    fail(fname, "step_size must be a positive integer, got %s",
      type(step_size) == "number" and tostring(step_size) or typename(step_size))
  end
  local self = setmetatable({ step_size = step_size, gamma = o.gamma }, StepLR)
  return init(self, fname, opt, o)
end, { "step_size" }, { "gamma", "last_epoch", "verbose" })
function StepLR:get_lr()
  if self.last_epoch == 0 or self.last_epoch % self.step_size ~= 0 then return group_lrs(self) end
  local out = group_lrs(self)
  for i, v in ipairs(out) do out[i] = v * self.gamma end
  return out
end
function StepLR:_closed_form()
  local out = {}
  for i, b in ipairs(self.base_lrs) do out[i] = b * self.gamma ^ math.floor(self.last_epoch / self.step_size) end
  return out
end

-- ---------------------------------------------------------------------------
-- MultiStepLR(optimizer, milestones [, {gamma = 0.1, last_epoch = -1}])

local MultiStepLR = class("MultiStepLR")
S.MultiStepLR = callable(MultiStepLR, function(opt, milestones, opts)
  local fname = "MultiStepLR"
  local o = scheduler_options(fname, opt, opts, { gamma = 0.1, last_epoch = -1 })
  if type(milestones) ~= "table" then fail(fname, "milestones must be a list of integers, got %s", typename(milestones)) end
  local counts, sorted = {}, {}
  for i, m in ipairs(milestones) do
    if mtype(m) ~= "integer" then fail(fname, "milestones[%d] must be an integer, got %s", i, tostring(m)) end
    counts[m] = (counts[m] or 0) + 1
    sorted[#sorted + 1] = m
  end
  table.sort(sorted)
  local self = setmetatable({ milestones = counts, _sorted = sorted, gamma = o.gamma }, MultiStepLR)
  return init(self, fname, opt, o)
end, { "milestones" }, { "gamma", "last_epoch", "verbose" })
function MultiStepLR:get_lr()
  local c = self.milestones[self.last_epoch]
  local out = group_lrs(self)
  if not c then return out end
  for i, v in ipairs(out) do out[i] = v * self.gamma ^ c end
  return out
end
local function bisect_right(list, x)
  local lo, hi = 1, #list + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if x < list[mid] then hi = mid else lo = mid + 1 end
  end
  return lo - 1   -- number of elements <= x
end
function MultiStepLR:_closed_form()
  local out = {}
  local k = bisect_right(self._sorted, self.last_epoch)
  for i, b in ipairs(self.base_lrs) do out[i] = b * self.gamma ^ k end
  return out
end

-- ---------------------------------------------------------------------------
-- ConstantLR(optimizer [, {factor = 1/3, total_iters = 5, last_epoch = -1}])

local ConstantLR = class("ConstantLR")
S.ConstantLR = callable(ConstantLR, function(opt, opts)
  local fname = "ConstantLR"
  local o = scheduler_options(fname, opt, opts, { factor = 1.0 / 3, total_iters = 5, last_epoch = -1 })
  if type(o.factor) ~= "number" or o.factor > 1.0 or o.factor < 0 then
    fail(fname, "Constant multiplicative factor expected to be between 0 and 1.")
  end
  local self = setmetatable({ factor = o.factor, total_iters = o.total_iters }, ConstantLR)
  return init(self, fname, opt, o)
end, {}, { "factor", "total_iters", "last_epoch", "verbose" })
function ConstantLR:get_lr()
  local out = group_lrs(self)
  if self.last_epoch == 0 then
    for i, v in ipairs(out) do out[i] = v * self.factor end
  elseif self.last_epoch == self.total_iters then
    for i, v in ipairs(out) do out[i] = v * (1.0 / self.factor) end
  end
  return out
end
function ConstantLR:_closed_form()
  local out = {}
  local f = self.last_epoch >= self.total_iters and 1 or 0
  for i, b in ipairs(self.base_lrs) do out[i] = b * (self.factor + f * (1 - self.factor)) end
  return out
end

-- ---------------------------------------------------------------------------
-- LinearLR(optimizer [, {start_factor = 1/3, end_factor = 1.0, total_iters = 5, last_epoch = -1}])

local LinearLR = class("LinearLR")
S.LinearLR = callable(LinearLR, function(opt, opts)
  local fname = "LinearLR"
  local o = scheduler_options(fname, opt, opts, { start_factor = 1.0 / 3, end_factor = 1.0, total_iters = 5, last_epoch = -1 })
  if type(o.start_factor) ~= "number" or o.start_factor > 1.0 or o.start_factor <= 0 then
    fail(fname, "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
  end
  if type(o.end_factor) ~= "number" or o.end_factor > 1.0 or o.end_factor < 0 then
    fail(fname, "Ending multiplicative factor expected to be between 0 and 1.")
  end
  if mtype(o.total_iters) ~= "integer" then fail(fname, "total_iters must be an integer, got %s", tostring(o.total_iters)) end
  local self = setmetatable({ start_factor = o.start_factor, end_factor = o.end_factor,
    total_iters = o.total_iters }, LinearLR)
  return init(self, fname, opt, o)
end, {}, { "start_factor", "end_factor", "total_iters", "last_epoch", "verbose" })
function LinearLR:get_lr()
  local out = group_lrs(self)
  if self.last_epoch == 0 then
    for i, v in ipairs(out) do out[i] = v * self.start_factor end
    return out
  end
  if self.last_epoch > self.total_iters then return out end
  local sf, ef = self.start_factor, self.end_factor
  for i, v in ipairs(out) do
    out[i] = v * (1.0 + (ef - sf) / (self.total_iters * sf + (self.last_epoch - 1) * (ef - sf)))
  end
  return out
end
function LinearLR:_closed_form()
  local out = {}
  local sf, ef = self.start_factor, self.end_factor
  for i, b in ipairs(self.base_lrs) do
    out[i] = b * (sf + (ef - sf) * math.min(self.total_iters, self.last_epoch) / self.total_iters)
  end
  return out
end

-- ---------------------------------------------------------------------------
-- ExponentialLR(optimizer, gamma [, {last_epoch = -1}])

local ExponentialLR = class("ExponentialLR")
S.ExponentialLR = callable(ExponentialLR, function(opt, gamma, opts)
  local fname = "ExponentialLR"
  local o = scheduler_options(fname, opt, opts, { last_epoch = -1 })
  if type(gamma) ~= "number" then fail(fname, "gamma must be a number, got %s", typename(gamma)) end
  local self = setmetatable({ gamma = gamma }, ExponentialLR)
  return init(self, fname, opt, o)
end, { "gamma" }, { "last_epoch", "verbose" })
function ExponentialLR:get_lr()
  local out = group_lrs(self)
  if self.last_epoch == 0 then return out end
  for i, v in ipairs(out) do out[i] = v * self.gamma end
  return out
end
function ExponentialLR:_closed_form()
  local out = {}
  for i, b in ipairs(self.base_lrs) do out[i] = b * self.gamma ^ self.last_epoch end
  return out
end

-- ---------------------------------------------------------------------------
-- CosineAnnealingLR(optimizer, T_max [, {eta_min = 0, last_epoch = -1}])

local CosineAnnealingLR = class("CosineAnnealingLR")
S.CosineAnnealingLR = callable(CosineAnnealingLR, function(opt, T_max, opts)
  local fname = "CosineAnnealingLR"
  local o = scheduler_options(fname, opt, opts, { eta_min = 0, last_epoch = -1 })
  if type(T_max) ~= "number" or T_max <= 0 then fail(fname, "T_max must be a positive number, got %s", tostring(T_max)) end
  local self = setmetatable({ T_max = T_max, eta_min = o.eta_min }, CosineAnnealingLR)
  return init(self, fname, opt, o)
end, { "T_max" }, { "eta_min", "last_epoch", "verbose" })
function CosineAnnealingLR:get_lr()
  local e, Tm, eta = self.last_epoch, self.T_max, self.eta_min
  local out = group_lrs(self)
  local pi, cos = math.pi, math.cos
  if e == 0 then return out end
  if self._step_count == 1 and e > 0 then
    for i, b in ipairs(self.base_lrs) do out[i] = eta + (b - eta) * (1 + cos(e * pi / Tm)) / 2 end
    return out
  end
  if (e - 1 - Tm) % (2 * Tm) == 0 then
    for i, v in ipairs(out) do out[i] = v + (self.base_lrs[i] - eta) * (1 - cos(pi / Tm)) / 2 end
    return out
  end
  for i, v in ipairs(out) do
    out[i] = (1 + cos(pi * e / Tm)) / (1 + cos(pi * (e - 1) / Tm)) * (v - eta) + eta
  end
  return out
end
function CosineAnnealingLR:_closed_form()
  local out = {}
  for i, b in ipairs(self.base_lrs) do
    out[i] = self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
  end
  return out
end

-- ---------------------------------------------------------------------------
-- OneCycleLR(optimizer, max_lr [, {total_steps, epochs, steps_per_epoch,
--   pct_start = 0.3, anneal_strategy = "cos", cycle_momentum = true,
--   base_momentum = 0.85, max_momentum = 0.95, div_factor = 25,
--   final_div_factor = 1e4, three_phase = false, last_epoch = -1}])

local OneCycleLR = class("OneCycleLR")
local function anneal_cos(a, b, pct) return b + (a - b) / 2.0 * (math.cos(math.pi * pct) + 1) end
local function anneal_linear(a, b, pct) return (b - a) * pct + a end
S.OneCycleLR = callable(OneCycleLR, function(opt, max_lr, opts)
  local fname = "OneCycleLR"
  local o = scheduler_options(fname, opt, opts, { total_steps = false, epochs = false, steps_per_epoch = false, pct_start = 0.3,
    anneal_strategy = "cos", cycle_momentum = true, base_momentum = 0.85, max_momentum = 0.95,
    div_factor = 25.0, final_div_factor = 1e4, three_phase = false, last_epoch = -1 })
  local total
  if o.total_steps == nil and o.epochs == nil and o.steps_per_epoch == nil then
    fail(fname, "You must define either total_steps OR (epochs AND steps_per_epoch)")
  elseif o.total_steps ~= nil then
    if mtype(o.total_steps) ~= "integer" or o.total_steps <= 0 then
      fail(fname, "Expected positive integer total_steps, but got %s", tostring(o.total_steps))
    end
    total = o.total_steps
  else
    if mtype(o.epochs) ~= "integer" or o.epochs <= 0 then
      fail(fname, "Expected positive integer epochs, but got %s", tostring(o.epochs))
    end
    if mtype(o.steps_per_epoch) ~= "integer" or o.steps_per_epoch <= 0 then
      fail(fname, "Expected positive integer steps_per_epoch, but got %s", tostring(o.steps_per_epoch))
    end
    total = o.epochs * o.steps_per_epoch
  end
  local pct = o.pct_start
  if type(pct) ~= "number" or pct < 0 or pct > 1 then
    fail(fname, "Expected float between 0 and 1 pct_start, but got %s", tostring(pct))
  end
  local phases
  if o.three_phase then
    phases = {
      { end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr",
        start_momentum = "max_momentum", end_momentum = "base_momentum" },
      { end_step = 2 * pct * total - 2, start_lr = "max_lr", end_lr = "initial_lr",
        start_momentum = "base_momentum", end_momentum = "max_momentum" },
      { end_step = total - 1, start_lr = "initial_lr", end_lr = "min_lr",
        start_momentum = "max_momentum", end_momentum = "max_momentum" } }
  else
    phases = {
      { end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr",
        start_momentum = "max_momentum", end_momentum = "base_momentum" },
      { end_step = total - 1, start_lr = "max_lr", end_lr = "min_lr",
        start_momentum = "base_momentum", end_momentum = "max_momentum" } }
  end
  if o.anneal_strategy ~= "cos" and o.anneal_strategy ~= "linear" then
    fail(fname, "anneal_strategy must by one of 'cos' or 'linear', instead got %s", tostring(o.anneal_strategy))
  end
  local self = setmetatable({ total_steps = total, _schedule_phases = phases,
    anneal_strategy = o.anneal_strategy, cycle_momentum = o.cycle_momentum }, OneCycleLR)
  local max_lrs = per_group(fname, "max_lr", opt, max_lr)
  if o.last_epoch == -1 then
    for i, g in ipairs(opt.param_groups) do
      g.initial_lr = max_lrs[i] / o.div_factor
      g.max_lr = max_lrs[i]
      g.min_lr = g.initial_lr / o.final_div_factor
    end
  end
  if o.cycle_momentum then
    local d = opt.defaults or {}
    if d.momentum == nil and d.betas == nil then
      fail(fname, "optimizer must support momentum with `cycle_momentum` option enabled")
    end
    self.use_beta1 = d.betas ~= nil
    local maxm = per_group(fname, "max_momentum", opt, o.max_momentum)
    local basem = per_group(fname, "base_momentum", opt, o.base_momentum)
    if o.last_epoch == -1 then
      for i, g in ipairs(opt.param_groups) do
        if self.use_beta1 then g.betas = { maxm[i], g.betas[2] } else g.momentum = maxm[i] end
        g.max_momentum = maxm[i]
        g.base_momentum = basem[i]
      end
    end
  end
  return init(self, fname, opt, o)
end, { "max_lr" }, { "total_steps", "epochs", "steps_per_epoch", "pct_start", "anneal_strategy", "cycle_momentum", "base_momentum", "max_momentum", "div_factor", "final_div_factor", "three_phase", "last_epoch", "verbose" })
function OneCycleLR:get_lr()
  local step = self.last_epoch
  if step > self.total_steps then
    fail("OneCycleLR.step", "Tried to step %d times. The specified number of total steps is %d", step + 1,
      self.total_steps)
  end
  local anneal = self.anneal_strategy == "cos" and anneal_cos or anneal_linear
  local phases = self._schedule_phases
  local out = {}
  for gi, g in ipairs(self.optimizer.param_groups) do
    local start = 0
    local lr, mom
    for i, ph in ipairs(phases) do
      local e = ph.end_step
      if step <= e or i == #phases then
        local pct = (step - start) / (e - start)
        lr = anneal(g[ph.start_lr], g[ph.end_lr], pct)
        if self.cycle_momentum then mom = anneal(g[ph.start_momentum], g[ph.end_momentum], pct) end
        break
      end
      start = e
    end
    out[gi] = lr
    if self.cycle_momentum then
      if self.use_beta1 then g.betas = { mom, g.betas[2] } else g.momentum = mom end
    end
  end
  return out
end

-- ---------------------------------------------------------------------------
-- SequentialLR(optimizer, schedulers, milestones [, {last_epoch = -1}])

local SequentialLR = class("SequentialLR")
S.SequentialLR = callable(SequentialLR, function(opt, schedulers, milestones, opts)
  local fname = "SequentialLR"
  local o = scheduler_options(fname, opt, opts, { last_epoch = -1 })
  if type(schedulers) ~= "table" or #schedulers < 1 then
    fail(fname, "schedulers must be a non-empty list of schedulers")
  end
  for i, s in ipairs(schedulers) do
    if type(s) ~= "table" or s.optimizer ~= opt then
      fail(fname, "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got "
        .. "schedulers at index %d to be different than the optimizer passed in.", i)
    end
  end
  if type(milestones) ~= "table" or #milestones ~= #schedulers - 1 then
    fail(fname, "Sequential Schedulers expects number of schedulers provided to be one more than the number "
      .. "of milestone points, but got number of schedulers %d and the number of milestones to be equal to %s",
      #schedulers, type(milestones) == "table" and tostring(#milestones) or typename(milestones))
  end
  local ms = {}
  for i, m in ipairs(milestones) do
    if mtype(m) ~= "integer" then fail(fname, "milestones[%d] must be an integer, got %s", i, tostring(m)) end
    ms[i] = m
  end
  local self = setmetatable({ _schedulers = {}, _milestones = ms, last_epoch = o.last_epoch + 1,
    optimizer = opt }, SequentialLR)
  for i, s in ipairs(schedulers) do self._schedulers[i] = s end
  -- reset the learning rates and undo the initial steps the schedulers took
  for _, g in ipairs(opt.param_groups) do g.lr = g.initial_lr end
  for _, s in ipairs(self._schedulers) do s.last_epoch = s.last_epoch - 1 end
  self._schedulers[1]:_initial_step()
  self._last_lr = self._schedulers[1]:get_last_lr()
  return self
end, { "schedulers", "milestones" }, { "last_epoch", "verbose" })
function SequentialLR:step()
  self.last_epoch = self.last_epoch + 1
  local idx = bisect_right(self._milestones, self.last_epoch)   -- 0-based scheduler index
  local s = self._schedulers[idx + 1]
  if idx > 0 and self._milestones[idx] == self.last_epoch then s:step(0) else s:step() end
  self._last_lr = s:get_last_lr()
end

-- ---------------------------------------------------------------------------
-- ReduceLROnPlateau(optimizer [, {mode = "min", factor = 0.1, patience = 10,
--   threshold = 1e-4, threshold_mode = "rel", cooldown = 0, min_lr = 0, eps = 1e-8}])
-- sched:step(metric) with metric a number or a one-element tensor.

local ReduceLROnPlateau = class("ReduceLROnPlateau")
S.ReduceLROnPlateau = callable(ReduceLROnPlateau, function(opt, opts)
  local fname = "ReduceLROnPlateau"
  local o = scheduler_options(fname, opt, opts, { mode = "min", factor = 0.1, patience = 10, threshold = 1e-4,
    threshold_mode = "rel", cooldown = 0, min_lr = 0, eps = 1e-8 })
  if type(o.factor) ~= "number" or o.factor >= 1.0 then fail(fname, "Factor should be < 1.0.") end
  if o.mode ~= "min" and o.mode ~= "max" then fail(fname, "mode %s is unknown!", tostring(o.mode)) end
  if o.threshold_mode ~= "rel" and o.threshold_mode ~= "abs" then
    fail(fname, "threshold mode %s is unknown!", tostring(o.threshold_mode))
  end
  local min_lrs
  if type(o.min_lr) == "table" then
    if #o.min_lr ~= #opt.param_groups then
      fail(fname, "expected %d min_lrs, got %d", #opt.param_groups, #o.min_lr)
    end
    min_lrs = per_group(fname, "min_lr", opt, o.min_lr)
  else
    min_lrs = per_group(fname, "min_lr", opt, o.min_lr)
  end
  local self = setmetatable({ optimizer = opt, mode = o.mode, factor = o.factor, patience = o.patience,
    threshold = o.threshold, threshold_mode = o.threshold_mode, cooldown = o.cooldown, min_lrs = min_lrs,
    eps = o.eps, verbose = o.verbose or false, last_epoch = 0, cooldown_counter = 0, num_bad_epochs = 0,
    mode_worse = o.mode == "min" and math.huge or -math.huge }, ReduceLROnPlateau)
  self.best = self.mode_worse
  self._last_lr = group_lrs(self)
  return self
end, {}, { "mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lr", "eps", "verbose" })
function ReduceLROnPlateau:is_better(a, best)
  if type(a) ~= "number" then fail("ReduceLROnPlateau.is_better", "bad argument #1 'a' (number expected, got %s)", typename(a)) end
  if type(best) ~= "number" then fail("ReduceLROnPlateau.is_better", "bad argument #2 'best' (number expected, got %s)", typename(best)) end
  local rel, th = self.threshold_mode == "rel", self.threshold
  if self.mode == "min" then
    if rel then return a < best * (1 - th) end
    return a < best - th
  end
  if rel then return a > best * (th + 1) end
  return a > best + th
end
function ReduceLROnPlateau:step(metrics, epoch)
  local current = metrics
  if getmetatable(metrics) == T._metatable then current = metrics:item() end
  if type(current) ~= "number" then
    fail("ReduceLROnPlateau.step", "bad argument #1 'metrics' (number expected, got %s)", typename(metrics))
  end
  current = current + 0.0
  if epoch == nil then epoch = self.last_epoch + 1 end
  self.last_epoch = epoch
  if self:is_better(current, self.best) then
    self.best = current
    self.num_bad_epochs = 0
  else
    self.num_bad_epochs = self.num_bad_epochs + 1
  end
  if self.cooldown_counter > 0 then
    self.cooldown_counter = self.cooldown_counter - 1
    self.num_bad_epochs = 0
  end
  if self.num_bad_epochs > self.patience then
    for i, g in ipairs(self.optimizer.param_groups) do
      local old = g.lr + 0.0
      local new = math.max(old * self.factor, self.min_lrs[i])
      if old - new > self.eps then
        g.lr = new
        if self.verbose then
          io.write(string.format("Epoch %s: reducing learning rate of group %d to %.4e.\n",
            mtype(epoch) == "float" and string.format("%.2f", epoch) or string.format("%05d", epoch), i, new))
        end
      end
    end
    self.cooldown_counter = self.cooldown
    self.num_bad_epochs = 0
  end
  self._last_lr = group_lrs(self)
end

return S
