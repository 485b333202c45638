-- ltensor.optim: SGD, Adam, AdamW with PyTorch 1.13's update formulas.
-- Updates run under no_grad and write the parameters in place.
--   local opt = T.optim.Adam(model:parameters(), {lr = 1e-3})
--   opt:zero_grad(); loss:backward(); opt:step()
-- params is a list of tensors, or a list of groups {params = {...}, lr = ...}
-- whose fields override the defaults.
local T = require "ltensor.core"

local optim = {}

local function fail(fname, msg) error("ltensor.optim." .. fname .. ": " .. msg, 0) end
local function is_t(x) return getmetatable(x) == T._metatable end

local Optimizer = {}
Optimizer.__index = Optimizer
optim.Optimizer = Optimizer

local function typename(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and type(mt.__name) == "string" and mt.__name or type(x)
end

-- a parameter group's params: a list of leaf tensors
local function check_params(name, ps, where)
  if type(ps) ~= "table" or is_t(ps) then
    fail(name, where .. " must be a list of tensors (got " .. typename(ps) .. ")")
  end
  for i, p in ipairs(ps) do
    if not is_t(p) then fail(name, "parameter " .. i .. " is not a tensor") end
    if not p.is_leaf then fail(name, "can't optimize a non-leaf Tensor") end
  end
end

local function new_optimizer(class, name, params, opts, defaults)
  if opts ~= nil and type(opts) ~= "table" then
    fail(name, "bad argument #2 'opts' (table expected, got " .. typename(opts) .. ")")
  end
  opts = opts or {}
  local d = {}
  for k, v in pairs(defaults) do d[k] = v end
  for k, v in pairs(opts) do d[k] = v end
  for k, v in pairs(defaults) do   -- hyper-parameters keep their default's type
    if type(v) == "number" and type(d[k]) ~= "number" then
      fail(name, "Invalid " .. k .. ": " .. tostring(d[k]))
    end
  end
  if type(d.lr) ~= "number" or d.lr < 0 then fail(name, "Invalid learning rate: " .. tostring(d.lr)) end
  if type(params) ~= "table" or is_t(params) then fail(name, "params must be a list of tensors or of parameter groups") end
  local groups = {}
  if #params > 0 and not is_t(params[1]) and type(params[1]) == "table" then
    for i, g in ipairs(params) do
      if type(g) ~= "table" or is_t(g) then fail(name, "parameter group " .. i .. " is not a table") end
      check_params(name, g.params, "parameter group " .. i .. "'s params")
      local grp = {}
      for k, v in pairs(d) do grp[k] = v end
      for k, v in pairs(g) do grp[k] = v end
      groups[#groups + 1] = grp
    end
  else
    local grp = {}
    for k, v in pairs(d) do grp[k] = v end
    grp.params = params
    groups[1] = grp
  end
  check_params(name, groups[1] and groups[1].params or {}, "params")
  if #groups == 0 or (#groups == 1 and #groups[1].params == 0) then fail(name, "optimizer got an empty parameter list") end
  for _, g in ipairs(groups) do check_params(name, g.params, "params") end
  return setmetatable({ name = name, defaults = d, param_groups = groups, state = setmetatable({}, { __mode = "k" }) }, class)
end

-- zero_grad([set_to_none]): PyTorch 1.13's default zeroes the grads in place;
-- zero_grad(true) drops them (cheaper, same effect on the next backward).
function Optimizer:zero_grad(set_to_none)
  if type(set_to_none) == "table" then set_to_none = set_to_none.set_to_none end
  T.no_grad(function()
    for _, g in ipairs(self.param_groups) do
      for _, p in ipairs(g.params) do
        if set_to_none then p.grad = nil
        else
          local gr = p.grad
          if gr ~= nil then
            if gr.grad_fn then p.grad = gr:detach() gr = p.grad end
            gr:zero_()
          end
        end
      end
    end
  end)
end

function Optimizer:step(closure)
  if closure ~= nil and type(closure) ~= "function" then
    fail(self.name .. ".step", "bad argument #1 'closure' (function expected, got " .. typename(closure) .. ")")
  end
  local loss
  if closure then loss = T.enable_grad(closure) end
  T.no_grad(function()
    for _, g in ipairs(self.param_groups) do
      for _, p in ipairs(g.params) do
        local grad = p.grad
        if grad ~= nil then
          local st = self.state[p]
          if not st then st = {} self.state[p] = st end
          self:_update(p, grad, g, st)
        end
      end
    end
  end)
  return loss
end

function Optimizer:add_param_group(group)
  if type(group) ~= "table" or is_t(group) then
    fail(self.name .. ".add_param_group", "bad argument #1 'group' (table expected, got " .. typename(group) .. ")")
  end
  check_params(self.name, group.params, "param group's params")
  local grp = {}
  for k, v in pairs(self.defaults) do grp[k] = v end
  for k, v in pairs(group) do grp[k] = v end
  self.param_groups[#self.param_groups + 1] = grp
end

---------------------------------------------------------------------------
-- SGD(params, {lr, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false})
---------------------------------------------------------------------------
local SGD = setmetatable({}, { __index = Optimizer })
SGD.__index = SGD
optim.SGD = setmetatable({}, { __call = function(_, params, opts)
  local o = new_optimizer(SGD, "SGD", params, opts,
    { lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false })
  if o.defaults.nesterov and (o.defaults.momentum <= 0 or o.defaults.dampening ~= 0) then
    fail("SGD", "Nesterov momentum requires a momentum and zero dampening")
  end
  return o
end, __index = SGD })

function SGD:_update(p, grad, g, st)
  local d = grad
  if g.maximize then d = -d end
  if g.weight_decay ~= 0 then d = d + p * g.weight_decay end
  if g.momentum ~= 0 then
    local buf = st.momentum_buffer
    if buf == nil then
      buf = d:clone()
      st.momentum_buffer = buf
    else
      buf:mul_(g.momentum):add_(d * (1 - g.dampening))
    end
    if g.nesterov then d = d + buf * g.momentum else d = buf end
  end
  p:sub_(d * g.lr)
end

---------------------------------------------------------------------------
-- Adam / AdamW(params, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8,
--   weight_decay = 0 (AdamW: 1e-2), amsgrad = false, maximize = false})
---------------------------------------------------------------------------
local Adam = setmetatable({}, { __index = Optimizer })
Adam.__index = Adam
local function adam_ctor(name, decoupled, wd)
  return setmetatable({}, { __call = function(_, params, opts)
    local o = new_optimizer(Adam, name, params, opts,
      { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = wd, amsgrad = false, maximize = false })
    o.decoupled = decoupled
    local b = o.defaults.betas
    if type(b) ~= "table" or type(b[1]) ~= "number" or type(b[2]) ~= "number" then
      fail(name, "Invalid betas: expected a table of two numbers")
    end
    if not (b[1] >= 0 and b[1] < 1) then fail(name, "Invalid beta parameter at index 1: " .. tostring(b[1])) end
    if not (b[2] >= 0 and b[2] < 1) then fail(name, "Invalid beta parameter at index 2: " .. tostring(b[2])) end
    return o
  end, __index = Adam })
end
optim.Adam = adam_ctor("Adam", false, 0)
optim.AdamW = adam_ctor("AdamW", true, 1e-2)

function Adam:_update(p, grad, g, st)
  local b1, b2 = g.betas[1], g.betas[2]
  local d = grad
  if g.maximize then d = -d end
  if g.weight_decay ~= 0 then
    if self.decoupled then p:mul_(1 - g.lr * g.weight_decay)
    else d = d + p * g.weight_decay end
  end
  if st.step == nil then
    st.step = 0
    st.exp_avg = T.zeros_like(p)
    st.exp_avg_sq = T.zeros_like(p)
    if g.amsgrad then st.max_exp_avg_sq = T.zeros_like(p) end
  end
  st.step = st.step + 1
  local m, v = st.exp_avg, st.exp_avg_sq
  m:mul_(b1):add_(d * (1 - b1))
  v:mul_(b2):add_(d * d * (1 - b2))
  local bc1 = 1 - b1 ^ st.step
  local bc2 = 1 - b2 ^ st.step
  local step_size = g.lr / bc1
  local vv = v
  if g.amsgrad then
    st.max_exp_avg_sq:copy_(T.maximum(st.max_exp_avg_sq, v))
    vv = st.max_exp_avg_sq
  end
  local denom = T.sqrt(vv) / math.sqrt(bc2) + g.eps
  p:sub_(m / denom * step_size)
end

return optim
