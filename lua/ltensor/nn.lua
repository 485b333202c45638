-- ltensor.nn: modules (Module, Linear, Sequential, activations, Dropout,
-- Embedding, LayerNorm) and nn.functional, in plain Lua over the tensor ops.
--
-- Modules are tables whose parameters, buffers and submodules are kept in
-- ordered registries (assignment `self.fc = nn.Linear(...)` registers, as in
-- PyTorch's __setattr__), so parameters() and state_dict() come out in
-- definition order.  Class targets and Embedding indices are 1-based.
local T = require "ltensor.core"
local F = require "ltensor.functional"

local nn = { functional = F }

local function is_t(x) return getmetatable(x) == T._metatable end
local function fail(fname, msg) error("ltensor.nn." .. fname .. ": " .. msg, 0) end

-- Argument checks: bad arguments raise an error naming the function and the
-- argument, not a Lua runtime error from deep inside.
local function typename(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and type(mt.__name) == "string" and mt.__name or type(x)
end
local function check_size(fname, n, name, v)
  if math.type(v) ~= "integer" or v < 0 then
    fail(fname, ("bad argument #%d '%s' (non-negative integer expected, got %s)"):format(n, name,
      math.type(v) and tostring(v) or typename(v)))
  end
end
local function check_type(fname, n, name, v, ty, optional)
  if v == nil and optional then return end
  if type(v) ~= ty then
    fail(fname, ("bad argument #%d '%s' (%s expected, got %s)"):format(n, name, ty, typename(v)))
  end
end

-- Parameters: leaf tensors that require grad, remembered in a weak set so that
-- assignment to a module registers them.
local param_set = setmetatable({}, { __mode = "k" })
function nn.Parameter(t, requires_grad)
  if not is_t(t) then fail("Parameter", "expected a tensor") end
  if requires_grad == nil then requires_grad = true end
  if not t.is_leaf then t = t:detach() end
  t.requires_grad = requires_grad
  param_set[t] = true
  return t
end
function nn.is_parameter(t) return param_set[t] == true end

---------------------------------------------------------------------------
-- Module
---------------------------------------------------------------------------
local Module = { __name = "ltensor.nn.Module", _classname = "Module" }
nn.Module = Module

local function is_module(v) return type(v) == "table" and rawget(v, "_modules") ~= nil end

-- Instances: fields live in the instance; parameters and submodules live in
-- ordered registries and are found through __index.
local function instance_index(self, k)
  local p = rawget(self, "_params")
  local v = p.map[k]
  if v ~= nil then return v end
  local b = rawget(self, "_buffers").map[k]
  if b ~= nil then return b end
  local m = rawget(self, "_modules").map[k]
  if m ~= nil then return m end
  return rawget(self, "_class")[k]
end

local function reg_set(reg, k, v)
  if reg.map[k] == nil then reg.keys[#reg.keys + 1] = k end
  reg.map[k] = v
end
local function reg_del(reg, k)
  if reg.map[k] == nil then return end
  reg.map[k] = nil
  for i, key in ipairs(reg.keys) do if key == k then table.remove(reg.keys, i) break end end
end

local function instance_newindex(self, k, v)
  local params, buffers, mods = rawget(self, "_params"), rawget(self, "_buffers"), rawget(self, "_modules")
  if is_t(v) and (param_set[v] or params.map[k] ~= nil) then
    param_set[v] = true
    reg_del(buffers, k) reg_del(mods, k)
    reg_set(params, k, v)
  elseif is_t(v) and buffers.map[k] ~= nil then
    reg_set(buffers, k, v)
  elseif is_module(v) then
    reg_del(params, k) reg_del(buffers, k)
    reg_set(mods, k, v)
  else
    if v == nil then reg_del(params, k) reg_del(buffers, k) reg_del(mods, k) end
    rawset(self, k, v)
  end
end

local function new_instance(class)
  local obj = {
    _class = class,
    _params = { keys = {}, map = {} },
    _buffers = { keys = {}, map = {} },
    _modules = { keys = {}, map = {} },
    training = true,
  }
  return setmetatable(obj, class._instance_mt)
end

local function make_instance_mt(class)
  return {
    __index = instance_index,
    __newindex = instance_newindex,
    __call = function(self, ...) return self:forward(...) end,
    __tostring = function(self) return self:__repr() end,
    __name = "ltensor.nn." .. class._classname,
    __len = function(self) return #rawget(self, "_modules").keys end,
  }
end
Module._instance_mt = make_instance_mt(Module)

-- Class creation: local Net = nn.Module:extend("Net"); function Net:init(...) end
function Module:extend(name)
  local class = setmetatable({ _classname = name or "Module", _super = self }, {
    __index = self,
    __call = function(c, ...) return c.new(...) end,
  })
  class._instance_mt = make_instance_mt(class)
  class.new = function(...)
    local obj = new_instance(class)
    obj:init(...)
    return obj
  end
  return class
end
Module.new = function(...)
  local obj = new_instance(Module)
  return obj
end
setmetatable(Module, { __call = function(_, ...) return Module.new(...) end })

function Module:init() end
function Module:forward()
  fail(self._classname, "forward is not implemented")
end
function Module:register_parameter(name, t)
  check_type("register_parameter", 1, "name", name, "string")
  if t ~= nil and not is_t(t) then
    fail("register_parameter", "bad argument #2 'param' (Tensor expected, got " .. typename(t) .. ")")
  end
  if t == nil then reg_del(rawget(self, "_params"), name) return end
  param_set[t] = true
  reg_set(rawget(self, "_params"), name, t)
end
function Module:register_buffer(name, t)
  check_type("register_buffer", 1, "name", name, "string")
  if t ~= nil and not is_t(t) then
    fail("register_buffer", "bad argument #2 'tensor' (Tensor expected, got " .. typename(t) .. ")")
  end
  reg_set(rawget(self, "_buffers"), name, t)
end
function Module:add_module(name, m)
  if type(name) ~= "string" and math.type(name) ~= "integer" then
    fail("add_module", "bad argument #1 'name' (string expected, got " .. typename(name) .. ")")
  end
  if not is_module(m) then fail("add_module", "bad argument #2 'module' (Module expected, got " .. typename(m) .. ")") end
  reg_set(rawget(self, "_modules"), name, m)
end

function Module:children()
  local out = {}
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do out[#out + 1] = mods.map[k] end
  return out
end
function Module:named_children()
  local out = {}
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do out[#out + 1] = { k, mods.map[k] } end
  return out
end
function Module:modules()
  local out = { self }
  for _, c in ipairs(self:children()) do
    for _, m in ipairs(c:modules()) do out[#out + 1] = m end
  end
  return out
end

-- named_parameters(): a list of {name, tensor} in definition order (own
-- parameters first, then each child's with "child." prefixed); a tensor
-- shared by two modules is listed once.
local function named_parameters(self, prefix, out, seen)
  local params = rawget(self, "_params")
  for _, k in ipairs(params.keys) do
    local p = params.map[k]
    if p ~= nil and not seen[p] then seen[p] = true out[#out + 1] = { prefix .. k, p } end
  end
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do
    named_parameters(mods.map[k], prefix .. k .. ".", out, seen)
  end
  return out
end
function Module:named_parameters(prefix)
  check_type("named_parameters", 1, "prefix", prefix, "string", true)
  return named_parameters(self, prefix or "", {}, {})
end
function Module:parameters()
  local out = {}
  for i, np in ipairs(self:named_parameters()) do out[i] = np[2] end
  return out
end
local function named_buffers(self, prefix, out)
  local b = rawget(self, "_buffers")
  for _, k in ipairs(b.keys) do out[#out + 1] = { prefix .. k, b.map[k] } end
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do named_buffers(mods.map[k], prefix .. k .. ".", out) end
  return out
end
function Module:named_buffers(prefix)
  check_type("named_buffers", 1, "prefix", prefix, "string", true)
  return named_buffers(self, prefix or "", {})
end

function Module:train(mode)
  if mode == nil then mode = true end
  rawset(self, "training", mode and true or false)
  for _, c in ipairs(self:children()) do c:train(mode) end
  return self
end
function Module:eval() return self:train(false) end

function Module:zero_grad(set_to_none)
  for _, p in ipairs(self:parameters()) do
    if set_to_none then p.grad = nil
    elseif p.grad ~= nil then T.no_grad(function() p.grad:zero_() end) end
  end
end
function Module:requires_grad_(b)
  for _, p in ipairs(self:parameters()) do p:requires_grad_(b) end
  return self
end

-- state_dict(): name -> tensor (detached views of the parameters and buffers)
function Module:state_dict()
  local sd = {}
  for _, np in ipairs(self:named_parameters()) do sd[np[1]] = np[2]:detach() end
  for _, nb in ipairs(self:named_buffers()) do sd[nb[1]] = nb[2]:detach() end
  return sd
end

-- load_state_dict(sd [, strict]): copies values in place (shapes must match)
function Module:load_state_dict(sd, strict)
  check_type("load_state_dict", 1, "state_dict", sd, "table")
  if strict == nil then strict = true end
  local own = {}
  for _, np in ipairs(self:named_parameters()) do own[np[1]] = np[2] end
  for _, nb in ipairs(self:named_buffers()) do own[nb[1]] = nb[2] end
  local missing, unexpected = {}, {}
  for k in pairs(own) do if sd[k] == nil then missing[#missing + 1] = k end end
  for k in pairs(sd) do if own[k] == nil then unexpected[#unexpected + 1] = k end end
  table.sort(missing) table.sort(unexpected)
  if strict and (#missing > 0 or #unexpected > 0) then
    fail("load_state_dict", "error(s) in loading state_dict: missing keys: {" .. table.concat(missing, ", ") ..
      "}, unexpected keys: {" .. table.concat(unexpected, ", ") .. "}")
  end
  T.no_grad(function()
    for k, t in pairs(own) do
      local v = sd[k]
      if v ~= nil then
        if not is_t(v) then fail("load_state_dict", "value for " .. k .. " is not a tensor (got " .. typename(v) .. ")") end
        local a, b = table.concat(t.shape, ", "), table.concat(v.shape, ", ")
        if a ~= b then
          fail("load_state_dict", "size mismatch for " .. k .. ": copying a param with shape {" .. b ..
            "}, the shape in current model is {" .. a .. "}")
        end
        t:copy_(v)
      end
    end
  end)
  return { missing_keys = missing, unexpected_keys = unexpected }
end

function Module:apply(fn)
  check_type("apply", 1, "fn", fn, "function")
  for _, c in ipairs(self:children()) do c:apply(fn) end
  fn(self)
  return self
end

function Module:extra_repr() return "" end
function Module:__repr()
  local kids = self:named_children()
  local head = self._classname .. "(" .. self:extra_repr()
  if #kids == 0 then return head .. ")" end
  local lines = { head }
  for _, kv in ipairs(kids) do
    local s = tostring(kv[2]):gsub("\n", "\n  ")
    lines[#lines + 1] = "  (" .. kv[1] .. "): " .. s
  end
  return table.concat(lines, "\n") .. "\n)"
end

---------------------------------------------------------------------------
-- layers
---------------------------------------------------------------------------
local function uniform(shape, bound)
  return T.no_grad(function() return T.rand(shape) * (2 * bound) - bound end)
end

local Linear = Module:extend("Linear")
nn.Linear = Linear
-- weight {out, in} and bias {out} ~ U(-1/sqrt(in), 1/sqrt(in)): PyTorch's
-- kaiming_uniform_(a=sqrt(5)) works out to exactly this bound.
function Linear:init(in_features, out_features, bias, opts)
  if type(bias) == "table" then bias, opts = nil, bias end
  opts = opts or {}
  if bias == nil then bias = opts.bias end
  if bias == nil then bias = true end
  check_size("Linear", 1, "in_features", in_features)
  check_size("Linear", 2, "out_features", out_features)
  self.in_features, self.out_features = in_features, out_features
  local bound = in_features > 0 and 1 / math.sqrt(in_features) or 0
  local dtype = opts.dtype
  local w = uniform({ out_features, in_features }, bound)
  if dtype then w = w:to(dtype) end
  self.weight = nn.Parameter(w)
  if bias then
    local b = uniform({ out_features }, bound)
    if dtype then b = b:to(dtype) end
    self.bias = nn.Parameter(b)
  end
end
function Linear:forward(x) return F.linear(x, self.weight, self.bias) end
function Linear:extra_repr()
  return string.format("in_features=%d, out_features=%d, bias=%s", self.in_features, self.out_features,
    tostring(self.bias ~= nil))
end

local Sequential = Module:extend("Sequential")
nn.Sequential = Sequential
function Sequential:init(...)
  local n = select("#", ...)
  for i = 1, n do self:add_module(tostring(i), (select(i, ...))) end
end
function Sequential:forward(x, ...)
  for _, m in ipairs(self:children()) do x = m(x, ...) end
  return x
end
function Sequential:append(m) self:add_module(tostring(#self:children() + 1), m) return self end
-- seq[i] is the i-th module
local seq_index = Sequential._instance_mt.__index
Sequential._instance_mt.__index = function(self, k)
  if math.type(k) == "integer" then return self:children()[k] end
  return seq_index(self, k)
end

local ModuleList = Module:extend("ModuleList")
nn.ModuleList = ModuleList
function ModuleList:init(list)
  check_type("ModuleList", 1, "modules", list, "table", true)
  for i, m in ipairs(list or {}) do self:add_module(tostring(i), m) end
end
ModuleList.append = Sequential.append
ModuleList._instance_mt.__index = Sequential._instance_mt.__index

local function activation(name, fn)
  local C = Module:extend(name)
  C.forward = function(_, x) return fn(x) end
  nn[name] = C
  return C
end
activation("ReLU", F.relu)
activation("Tanh", F.tanh)
activation("Sigmoid", F.sigmoid)
activation("SiLU", F.silu)
activation("Identity", function(x) return x end)

local GELU = Module:extend("GELU")
nn.GELU = GELU
function GELU:init(approximate)
  approximate = approximate or "none"
  if approximate ~= "none" and approximate ~= "tanh" then
    fail("GELU", "bad argument #1 'approximate' (\"none\" or \"tanh\" expected)")
  end
  self.approximate = approximate
end
function GELU:forward(x) return F.gelu(x, self.approximate) end

local Softmax = Module:extend("Softmax")
nn.Softmax = Softmax
function Softmax:init(dim)
  if dim ~= nil and math.type(dim) ~= "integer" then fail("Softmax", "bad argument #1 'dim' (integer expected, got " .. typename(dim) .. ")") end
  self.dim = dim
end
function Softmax:forward(x) return F.softmax(x, self.dim) end
local LogSoftmax = Module:extend("LogSoftmax")
nn.LogSoftmax = LogSoftmax
function LogSoftmax:init(dim)
  if dim ~= nil and math.type(dim) ~= "integer" then fail("LogSoftmax", "bad argument #1 'dim' (integer expected, got " .. typename(dim) .. ")") end
  self.dim = dim
end
function LogSoftmax:forward(x) return F.log_softmax(x, self.dim) end

local Dropout = Module:extend("Dropout")
nn.Dropout = Dropout
function Dropout:init(p)
  p = p or 0.5
  check_type("Dropout", 1, "p", p, "number")
  if not (p >= 0 and p <= 1) then fail("Dropout", "dropout probability has to be between 0 and 1, but got " .. p) end
  self.p = p
end
function Dropout:forward(x) return F.dropout(x, self.p, self.training) end
function Dropout:extra_repr() return "p=" .. self.p end

local Embedding = Module:extend("Embedding")
nn.Embedding = Embedding
function Embedding:init(num_embeddings, embedding_dim, opts)
  check_size("Embedding", 1, "num_embeddings", num_embeddings)
  check_size("Embedding", 2, "embedding_dim", embedding_dim)
  check_type("Embedding", 3, "opts", opts, "table", true)
  opts = opts or {}
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  local w = T.randn({ num_embeddings, embedding_dim })
  if opts.dtype then w = w:to(opts.dtype) end
  self.weight = nn.Parameter(w)
end
function Embedding:forward(idx) return F.embedding(idx, self.weight) end
function Embedding:extra_repr() return self.num_embeddings .. ", " .. self.embedding_dim end

local LayerNorm = Module:extend("LayerNorm")
nn.LayerNorm = LayerNorm
function LayerNorm:init(normalized_shape, eps, elementwise_affine)
  if type(eps) == "table" then
    local o = eps
    eps, elementwise_affine = o.eps, o.elementwise_affine
  end
  if type(normalized_shape) == "number" then normalized_shape = { normalized_shape } end
  check_type("LayerNorm", 1, "normalized_shape", normalized_shape, "table")
  for i, v in ipairs(normalized_shape) do check_size("LayerNorm", 1, "normalized_shape[" .. i .. "]", v) end
  check_type("LayerNorm", 2, "eps", eps, "number", true)
  self.normalized_shape = normalized_shape
  self.eps = eps or 1e-5
  if elementwise_affine == nil then elementwise_affine = true end
  if elementwise_affine then
    self.weight = nn.Parameter(T.ones(normalized_shape))
    self.bias = nn.Parameter(T.zeros(normalized_shape))
  end
end
function LayerNorm:forward(x)
  return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
end

-- losses as modules
local function loss_module(name, fn)
  local C = Module:extend(name)
  function C:init(opts)
    if opts ~= nil and type(opts) ~= "table" and type(opts) ~= "string" then
      fail(name, "bad argument #1 'opts' (table expected, got " .. typename(opts) .. ")")
    end
    self.opts = opts or {}
  end
  function C:forward(a, b) return fn(a, b, self.opts) end
  nn[name] = C
end
loss_module("MSELoss", F.mse_loss)
loss_module("CrossEntropyLoss", F.cross_entropy)
loss_module("NLLLoss", F.nll_loss)
loss_module("L1Loss", F.l1_loss)

return nn
