-- ltensor.optim.base: the table T.optim (B.optim), the Optimizer base class
-- (parameter groups, state_dict, zero_grad, step) and the helpers the
-- optimizer files share (argument checks, class(), per-parameter state).
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

-- opt.step() for opt:step(): the public methods check their self
-- (util.self_checked), the base's below and a class's overrides as they are
-- defined (LBFGS:step)
local METHODS = { "add_param_group", "zero_grad", "step", "state_dict", "load_state_dict" }
local method_set = {}
for _, k in ipairs(METHODS) do method_set[k] = true end
local function self_cfg(name)
  return { prefix = "optim." .. name .. ".", expected = "ltensor.optim.Optimizer", var = "opt", key = "_seen" }
end
util.check_methods(Optimizer, self_cfg("Optimizer"), METHODS)
local define_method = util.method_definer(method_set, function(c) return self_cfg(rawget(c, "_classname")) end)

-- class table callable as a constructor: T.optim.SGD(params, opts)
local function class(name, ctor)
  local c = setmetatable({ _classname = name }, { __index = Optimizer, __newindex = define_method })
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

local B = {}
B.math = math
B.table = table
B.rawlen = rawlen
B.optim = optim
B.update = update
B.set_grad = set_grad
B.mtype = mtype
B.fail = fail
B.is_t = is_t
B.typename = typename
B.num = num
B.check_keys = check_keys
B.GROUP_EXTRA = GROUP_EXTRA
B.REQUIRED = REQUIRED
B.Optimizer = Optimizer
B.param_list = param_list
B.add_group = add_group
B.new_optimizer = new_optimizer
B.zeros_like = zeros_like
B.full_like = full_like
B.copy_value = copy_value
B.check_num = check_num
B.check_nonneg = check_nonneg
B.check_bool = check_bool
B.check_betas = check_betas
B.check_lr = check_lr
B.check_flags = check_flags
B.COMPAT = COMPAT
B.with_compat = with_compat
B.class = class
B.grad_and_state = grad_and_state
return B
