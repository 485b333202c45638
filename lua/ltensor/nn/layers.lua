-- ltensor.nn.layers: the activation, normalisation, reshaping and loss
-- modules of the wider nn (SPEC §8b), installed into the `ltensor.nn` table.
--
-- Constructors take PyTorch's positional arguments and/or a trailing options
-- table under PyTorch's keyword names: nn.LeakyReLU(0.2),
-- nn.BatchNorm2d(16, {momentum = 0.01}), nn.CrossEntropyLoss({weight = w,
-- label_smoothing = 0.1}).  Parameter and buffer names are PyTorch's
-- (weight, bias, running_mean, running_var, num_batches_tracked, and a loss's
-- weight / pos_weight), so state_dicts interchange.  Dims are 1-based.
-- BatchNorm's `momentum = false` stands for PyTorch's momentum=None (a
-- cumulative moving average): a Lua table cannot hold nil.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
local nn = require("ltensor.nn.module").nn
local F = require "ltensor.nn.functional"
require "ltensor.nn.basic"   -- Softmax, Dropout, LayerNorm ... (this file adds the wider set)

local Module = nn.Module
local parse = F._parse

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.")
local typename = util.mtname
local check_num = util.arg_checks(fail).check_num
local function check_count(cls, n, name, v)
  if math.type(v) ~= "integer" or v < 0 then
    fail(cls, ("bad argument #%d '%s' (non-negative integer expected, got %s)"):format(n, name,
      math.type(v) and tostring(v) or typename(v)))
  end
end
local function fmt(v)
  if type(v) == "boolean" then return v and "True" or "False" end
  if math.type(v) == "float" then
    if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%.1f", v) end
    return string.format("%.6g", v)
  end
  if v == nil then return "None" end
  return tostring(v)
end

-- Class helper: the constructor args are parsed by F._parse with the
-- class's parameter list (PyTorch's, in order), errors naming the class.
local function class(name, params, setup, forward, repr)
  local C = Module:extend(name)
  function C:init(...)
    local ok, o = pcall(parse, name, 1, params, ...)
    if not ok then error((o:gsub("^ltensor%.nn%.functional%.", "ltensor.nn.")), 0) end
    if o.dtype ~= nil then o.dtype = util.opt_dtype("nn." .. name, o.dtype) end
    if setup then setup(self, o) end
  end
  C.forward = forward
  if repr then C.extra_repr = repr end
  nn[name] = C
  return C
end

---------------------------------------------------------------------------
-- activations
---------------------------------------------------------------------------
local function simple(name, fn)
  return class(name, { "inplace" }, function(self, o) self.inplace = o.inplace or false end,
    function(self, x) return fn(x, { inplace = self.inplace or nil }) end,
    function(self) return self.inplace and "inplace=True" or "" end)
end
local function plain(name, fn)
  return class(name, {}, nil, function(_, x) return fn(x) end)
end

class("LeakyReLU", { "negative_slope", "inplace" }, function(self, o)
  self.negative_slope = o.negative_slope or 0.01
  check_num("LeakyReLU", 1, "negative_slope", self.negative_slope)
  self.inplace = o.inplace or false
end, function(self, x) return F.leaky_relu(x, { negative_slope = self.negative_slope, inplace = self.inplace }) end,
function(self) return "negative_slope=" .. fmt(self.negative_slope) .. (self.inplace and ", inplace=True" or "") end)

class("ELU", { "alpha", "inplace" }, function(self, o)
  self.alpha = o.alpha or 1.0
  check_num("ELU", 1, "alpha", self.alpha)
  self.inplace = o.inplace or false
end, function(self, x) return F.elu(x, { alpha = self.alpha, inplace = self.inplace }) end,
function(self) return "alpha=" .. fmt(self.alpha) .. (self.inplace and ", inplace=True" or "") end)

class("CELU", { "alpha", "inplace" }, function(self, o)
  self.alpha = o.alpha or 1.0
  check_num("CELU", 1, "alpha", self.alpha)
  self.inplace = o.inplace or false
end, function(self, x) return F.celu(x, { alpha = self.alpha, inplace = self.inplace }) end,
function(self) return "alpha=" .. fmt(self.alpha) .. (self.inplace and ", inplace=True" or "") end)

simple("SELU", F.selu)
simple("ReLU6", F.relu6)
simple("Hardsigmoid", F.hardsigmoid)
simple("Hardswish", F.hardswish)
simple("Mish", F.mish)
plain("Softsign", F.softsign)
plain("LogSigmoid", F.logsigmoid)
plain("Tanhshrink", F.tanhshrink)

class("Softplus", { "beta", "threshold" }, function(self, o)
  self.beta, self.threshold = o.beta or 1, o.threshold or 20
  check_num("Softplus", 1, "beta", self.beta)
  check_num("Softplus", 2, "threshold", self.threshold)
end, function(self, x) return F.softplus(x, { beta = self.beta, threshold = self.threshold }) end,
function(self) return "beta=" .. fmt(self.beta) .. ", threshold=" .. fmt(self.threshold) end)

class("Hardtanh", { "min_val", "max_val", "inplace" }, function(self, o)
  self.min_val, self.max_val = o.min_val or -1.0, o.max_val or 1.0
  check_num("Hardtanh", 1, "min_val", self.min_val)
  check_num("Hardtanh", 2, "max_val", self.max_val)
  if self.max_val <= self.min_val then fail("Hardtanh", "max_val must be larger than min_val") end
  self.inplace = o.inplace or false
end, function(self, x) return F.hardtanh(x, { min_val = self.min_val, max_val = self.max_val, inplace = self.inplace }) end,
function(self) return "min_val=" .. fmt(self.min_val) .. ", max_val=" .. fmt(self.max_val) .. (self.inplace and ", inplace=True" or "") end)

class("Hardshrink", { "lambd" }, function(self, o) self.lambd = o.lambd or 0.5 end,
  function(self, x) return F.hardshrink(x, { lambd = self.lambd }) end,
  function(self) return fmt(self.lambd) end)
class("Softshrink", { "lambd" }, function(self, o) self.lambd = o.lambd or 0.5 end,
  function(self, x) return F.softshrink(x, { lambd = self.lambd }) end,
  function(self) return fmt(self.lambd) end)

class("Threshold", { "threshold", "value", "inplace" }, function(self, o)
  check_num("Threshold", 1, "threshold", o.threshold)
  check_num("Threshold", 2, "value", o.value)
  self.threshold, self.value, self.inplace = o.threshold, o.value, o.inplace or false
end, function(self, x) return F.threshold(x, self.threshold, self.value, { inplace = self.inplace }) end,
function(self) return "threshold=" .. fmt(self.threshold) .. ", value=" .. fmt(self.value) .. (self.inplace and ", inplace=True" or "") end)

-- PReLU: one learnable slope (or one per channel), initialised to `init`
class("PReLU", { "num_parameters", "init", "dtype" }, function(self, o)
  local n = o.num_parameters or 1
  check_count("PReLU", 1, "num_parameters", n)
  local init = o.init or 0.25
  check_num("PReLU", 2, "init", init)
  self.num_parameters = n
  util.check_param_budget(fail, "PReLU", o.dtype, n + 0.0, 1, ("num_parameters=%d"):format(n))
  self.weight = nn.Parameter(T.full({ n }, init, { dtype = o.dtype or T.get_default_dtype() }))
end, function(self, x) return F.prelu(x, self.weight) end,
function(self) return "num_parameters=" .. self.num_parameters end)

class("GLU", { "dim" }, function(self, o) self.dim = o.dim or -1 end,
  function(self, x) return F.glu(x, self.dim) end,
  function(self) return "dim=" .. self.dim end)

local function dim_class(name, fn)
  class(name, { "dim" }, function(self, o)
    if o.dim ~= nil and math.type(o.dim) ~= "integer" then
      fail(name, "bad argument #1 'dim' (integer expected, got " .. typename(o.dim) .. ")")
    end
    self.dim = o.dim
  end, function(self, x) return fn(x, self.dim) end,
  function(self) return "dim=" .. fmt(self.dim) end)
end
dim_class("Softmin", F.softmin)
-- Softmax2d: softmax over the channels of a (N, C, H, W) or (C, H, W) input
class("Softmax2d", {}, nil, function(_, x)
  if not is_t(x) then fail("Softmax2d", "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
  if x:dim() ~= 3 and x:dim() ~= 4 then
    fail("Softmax2d", ("Softmax2d: expected input to be 3D or 4D, got %dD instead"):format(x:dim()))
  end
  return F.softmax(x, -3)
end)

---------------------------------------------------------------------------
-- reshaping
---------------------------------------------------------------------------
-- Flatten(start_dim = 2, end_dim = -1): 1-based, so the default keeps the batch dim
class("Flatten", { "start_dim", "end_dim" }, function(self, o)
  self.start_dim, self.end_dim = o.start_dim or 2, o.end_dim or -1
end, function(self, x) return T.flatten(x, self.start_dim, self.end_dim) end,
function(self) return "start_dim=" .. self.start_dim .. ", end_dim=" .. self.end_dim end)

class("Unflatten", { "dim", "unflattened_size" }, function(self, o)
  if math.type(o.dim) ~= "integer" then fail("Unflatten", "bad argument #1 'dim' (integer expected, got " .. typename(o.dim) .. ")") end
  if type(o.unflattened_size) ~= "table" then
    fail("Unflatten", "unflattened_size must be tuple of ints, but found type " .. typename(o.unflattened_size))
  end
  local infer = 0
  for i = 1, rawlen(o.unflattened_size) do
    local s = o.unflattened_size[i]
    if math.type(s) ~= "integer" then
      fail("Unflatten", ("unflattened_size must be tuple of ints, but found element of type %s at pos %d"):format(typename(s), i))
    end
    if s < -1 then fail("Unflatten", "invalid shape dimension " .. s) end
    if s == -1 then infer = infer + 1 end
  end
  if infer > 1 then fail("Unflatten", "only one dimension can be inferred") end
  self.dim, self.unflattened_size = o.dim, { table.unpack(o.unflattened_size, 1, rawlen(o.unflattened_size)) }
end, function(self, x)
  if not is_t(x) then fail("Unflatten", "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
  local nd = x:dim()
  local d = self.dim < 0 and self.dim + nd + 1 or self.dim
  if d < 1 or d > nd then
    fail("Unflatten", ("dimension out of range (expected to be in range of [%d, %d], but got %d)"):format(-nd, nd, self.dim))
  end
  local shape = {}
  for i = 1, d - 1 do shape[#shape + 1] = x:size(i) end
  local prod, infer = 1, nil
  for i, s in ipairs(self.unflattened_size) do
    shape[#shape + 1] = s
    if s == -1 then infer = i else prod = prod * s end
  end
  if (infer == nil and prod ~= x:size(d)) or (infer ~= nil and (prod == 0 or x:size(d) % prod ~= 0)) then
    fail("Unflatten", ("unflatten: Provided sizes {%s} don't multiply up to the size of dim %d (%d) in the input tensor"):format(
      table.concat(self.unflattened_size, ", "), d, x:size(d)))
  end
  for i = d + 1, nd do shape[#shape + 1] = x:size(i) end
  return x:reshape(shape)
end, function(self) return "dim=" .. self.dim .. ", unflattened_size={" .. table.concat(self.unflattened_size, ", ") .. "}" end)

---------------------------------------------------------------------------
-- dropout
---------------------------------------------------------------------------
local function dropout_class(name, fn)
  class(name, { "p", "inplace" }, function(self, o)
    local p = o.p or 0.5
    check_num(name, 1, "p", p)
    if not (p >= 0 and p <= 1) then fail(name, "dropout probability has to be between 0 and 1, but got " .. p) end
    self.p, self.inplace = p, o.inplace or false
  end, function(self, x) return fn(x, self.p, self.training, self.inplace) end,
  function(self) return "p=" .. fmt(self.p) .. ", inplace=" .. fmt(self.inplace) end)
end
dropout_class("Dropout1d", F.dropout1d)
dropout_class("Dropout2d", F.dropout2d)
dropout_class("Dropout3d", F.dropout3d)
dropout_class("AlphaDropout", F.alpha_dropout)
dropout_class("FeatureAlphaDropout", F.feature_alpha_dropout)

---------------------------------------------------------------------------
-- normalisation
---------------------------------------------------------------------------
local NORM = { "num_features", "eps", "momentum", "affine", "track_running_stats", "dtype" }

local function norm_setup(name, affine_default, track_default)
  return function(self, o)
    local C = o.num_features
    check_count(name, 1, "num_features", C)
    local eps = o.eps or 1e-5
    check_num(name, 2, "eps", eps)
    local momentum = o.momentum
    if momentum == nil then momentum = 0.1 end
    if momentum ~= false then check_num(name, 3, "momentum", momentum) end
    local affine, track = o.affine, o.track_running_stats
    if affine == nil then affine = affine_default end
    if track == nil then track = track_default end
    self.num_features, self.eps, self.momentum = C, eps, momentum
    self.affine, self.track_running_stats = affine and true or false, track and true or false
    local dt = o.dtype or T.get_default_dtype()
    local n = (affine and 2 or 0) + (track and 2 or 0)
    util.check_param_budget(fail, name, dt, n * (C + 0.0), n, ("num_features=%d"):format(C))
    if affine then
      self.weight = nn.Parameter(T.ones({ C }, { dtype = dt }))
      self.bias = nn.Parameter(T.zeros({ C }, { dtype = dt }))
    end
    if track then
      self:register_buffer("running_mean", T.zeros({ C }, { dtype = dt }))
      self:register_buffer("running_var", T.ones({ C }, { dtype = dt }))
      self:register_buffer("num_batches_tracked", T.tensor(0, { dtype = T.int64 }))
    end
  end
end
local function norm_repr(self)
  return ("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s"):format(self.num_features, fmt(self.eps),
    self.momentum == false and "None" or fmt(self.momentum), fmt(self.affine), fmt(self.track_running_stats))
end

-- PyTorch's _BatchNorm.forward: count the batch, pick the averaging factor
-- (1/num_batches_tracked for momentum None), use batch statistics in
-- training or when no running statistics are kept.
local function bn_forward(self, x)
  local factor = self.momentum == false and 0.0 or self.momentum
  if self.training and self.track_running_stats then
    local nbt = self.num_batches_tracked
    if nbt ~= nil then
      T.no_grad(function() nbt:add_(1) end)
      if self.momentum == false then factor = 1.0 / nbt:item() end
    end
  end
  local rm, rv = self.running_mean, self.running_var
  local bn_training = self.training or (rm == nil and rv == nil)
  if self.training and not self.track_running_stats then rm, rv = nil, nil end
  return F.batch_norm(x, rm, rv, self.weight, self.bias, { training = bn_training, momentum = factor, eps = self.eps })
end

local function batchnorm(name, check)
  local C = class(name, NORM, norm_setup(name, true, true), function(self, x)
    if not is_t(x) then fail(name, "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
    check(x:dim())
    return bn_forward(self, x)
  end, norm_repr)
  function C:reset_running_stats()
    if self.track_running_stats then
      T.no_grad(function()
        self.running_mean:zero_() self.running_var:fill_(1) self.num_batches_tracked:zero_()
      end)
    end
  end
  return C
end
batchnorm("BatchNorm1d", function(nd)
  if nd ~= 2 and nd ~= 3 then fail("BatchNorm1d", ("expected 2D or 3D input (got %dD input)"):format(nd)) end
end)
batchnorm("BatchNorm2d", function(nd)
  if nd ~= 4 then fail("BatchNorm2d", ("expected 4D input (got %dD input)"):format(nd)) end
end)
batchnorm("BatchNorm3d", function(nd)
  if nd ~= 5 then fail("BatchNorm3d", ("expected 5D input (got %dD input)"):format(nd)) end
end)

-- InstanceNorm: affine and running statistics off by default; an unbatched
-- input (one dim fewer) is accepted
local function instancenorm(name, nd_batched)
  class(name, NORM, norm_setup(name, false, false), function(self, x)
    if not is_t(x) then fail(name, "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
    local nd = x:dim()
    if nd ~= nd_batched and nd ~= nd_batched - 1 then
      fail(name, ("expected %dD or %dD input (got %dD input)"):format(nd_batched - 1, nd_batched, nd))
    end
    local unbatched = nd == nd_batched - 1
    if unbatched then x = x:unsqueeze(1) end
    local C = x:size(2)
    if self.affine and C ~= self.num_features then
      fail(name, ("expected input's size at dim=2 to match num_features (%d), but got: %d."):format(self.num_features, C))
    end
    local use_input_stats = self.training or not self.track_running_stats
    local y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
      { use_input_stats = use_input_stats, momentum = self.momentum == false and 0.1 or self.momentum, eps = self.eps })
    if unbatched then y = y:squeeze(1) end
    return y
  end, norm_repr)
end
instancenorm("InstanceNorm1d", 3)
instancenorm("InstanceNorm2d", 4)
instancenorm("InstanceNorm3d", 5)

class("GroupNorm", { "num_groups", "num_channels", "eps", "affine", "dtype" }, function(self, o)
  check_count("GroupNorm", 1, "num_groups", o.num_groups)
  check_count("GroupNorm", 2, "num_channels", o.num_channels)
  if o.num_groups == 0 or o.num_channels % o.num_groups ~= 0 then
    fail("GroupNorm", "num_channels must be divisible by num_groups")
  end
  self.num_groups, self.num_channels, self.eps = o.num_groups, o.num_channels, o.eps or 1e-5
  local affine = o.affine
  if affine == nil then affine = true end
  self.affine = affine
  local dt = o.dtype or T.get_default_dtype()
  if affine then
    util.check_param_budget(fail, "GroupNorm", dt, 2 * (o.num_channels + 0.0), 2, ("num_channels=%d"):format(o.num_channels))
    self.weight = nn.Parameter(T.ones({ o.num_channels }, { dtype = dt }))
    self.bias = nn.Parameter(T.zeros({ o.num_channels }, { dtype = dt }))
  end
end, function(self, x) return F.group_norm(x, self.num_groups, self.weight, self.bias, { eps = self.eps }) end,
function(self) return ("%d, %d, eps=%s, affine=%s"):format(self.num_groups, self.num_channels, fmt(self.eps), fmt(self.affine)) end)

local function shape_of(name, s)
  if math.type(s) == "integer" then return { s } end
  if type(s) ~= "table" then fail(name, "bad argument #1 'normalized_shape' (integer or table of integers expected, got " .. typename(s) .. ")") end
  local out = {}
  for i, v in ipairs(s) do check_count(name, 1, "normalized_shape[" .. i .. "]", v) out[i] = v end
  return out
end

-- RMSNorm (PyTorch 2.4): eps nil = the input dtype's machine epsilon
class("RMSNorm", { "normalized_shape", "eps", "elementwise_affine", "dtype" }, function(self, o)
  self.normalized_shape = shape_of("RMSNorm", o.normalized_shape)
  check_num("RMSNorm", 2, "eps", o.eps, true)
  self.eps = o.eps
  local affine = o.elementwise_affine
  if affine == nil then affine = true end
  self.elementwise_affine = affine
  if affine then
    local n = 1.0
    for _, v in ipairs(self.normalized_shape) do n = n * v end
    util.check_param_budget(fail, "RMSNorm", o.dtype, n, 1, "normalized_shape={" .. table.concat(self.normalized_shape, ", ") .. "}")
    self.weight = nn.Parameter(T.ones(self.normalized_shape, { dtype = o.dtype or T.get_default_dtype() }))
  end
end, function(self, x) return F.rms_norm(x, self.normalized_shape, self.weight, { eps = self.eps }) end,
function(self)
  return "{" .. table.concat(self.normalized_shape, ", ") .. "}, eps=" .. fmt(self.eps) ..
    ", elementwise_affine=" .. fmt(self.elementwise_affine)
end)

class("LocalResponseNorm", { "size", "alpha", "beta", "k" }, function(self, o)
  check_count("LocalResponseNorm", 1, "size", o.size)
  self.size, self.alpha, self.beta, self.k = o.size, o.alpha or 1e-4, o.beta or 0.75, o.k or 1.0
end, function(self, x) return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k) end)

---------------------------------------------------------------------------
-- losses
---------------------------------------------------------------------------
-- loss(name, fn, nargs, keys, tensors): keys are the constructor's PyTorch
-- parameters (in order) passed to fn as options; `tensors` names those that
-- are buffers (weight, pos_weight), read at each call so load_state_dict
-- reaches them.  A lone string argument is the reduction, as before.
local function loss(name, fn, nargs, keys, tensors)
  local params = {}
  for i, k in ipairs(keys) do params[i] = k end
  params[#params + 1] = "|"
  params[#params + 1] = "size_average"
  params[#params + 1] = "reduce"
  local has = {}
  for _, k in ipairs(keys) do has[k] = true end
  if not has.reduction then params[#params + 1] = "reduction" end
  local C = Module:extend(name)
  function C:init(...)
    local a = ...
    local o
    if type(a) == "string" and select("#", ...) == 1 then
      o = { reduction = a }
    else
      local ok, r = pcall(parse, name, 1, params, ...)
      if not ok then error((r:gsub("^ltensor%.nn%.functional%.", "ltensor.nn.")), 0) end
      o = r
    end
    local r = o.reduction or "mean"
    if r ~= "mean" and r ~= "sum" and r ~= "none" and not (name == "KLDivLoss" and r == "batchmean") then
      fail(name, tostring(r) .. " is not a valid value for reduction")
    end
    for _, k in ipairs(keys) do
      local v = o[k]
      if tensors and tensors[k] then
        if v ~= nil then
          if not is_t(v) then fail(name, ("bad argument '%s' (Tensor expected, got %s)"):format(k, typename(v))) end
          self:register_buffer(k, v)
        end
      elseif k ~= "size_average" and k ~= "reduce" then
        rawset(self, k, v)
      end
    end
    rawset(self, "reduction", r)
  end
  -- options are read from the instance at each call, so that assigning
  -- loss.reduction or loss.margin after construction takes effect
  function C:forward(...)
    local opts = {}
    for _, k in ipairs(keys) do
      if k ~= "size_average" and k ~= "reduce" then opts[k] = self[k] end
    end
    opts.reduction = self.reduction
    local a1, a2, a3, a4 = ...
    if nargs == 4 then return fn(a1, a2, a3, a4, opts) end
    if nargs == 3 then return fn(a1, a2, a3, opts) end
    return fn(a1, a2, opts)
  end
  function C:extra_repr() return "" end
  nn[name] = C
  return C
end

local W = { weight = true }
loss("MSELoss", F.mse_loss, 2, { "size_average", "reduce", "reduction" })
loss("L1Loss", F.l1_loss, 2, { "size_average", "reduce", "reduction" })
loss("NLLLoss", F.nll_loss, 2, { "weight", "size_average", "ignore_index", "reduce", "reduction" }, W)
loss("CrossEntropyLoss", F.cross_entropy, 2,
  { "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing" }, W)
loss("BCELoss", F.binary_cross_entropy, 2, { "weight", "size_average", "reduce", "reduction" }, W)
loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits, 2,
  { "weight", "size_average", "reduce", "reduction", "pos_weight" }, { weight = true, pos_weight = true })
loss("HuberLoss", F.huber_loss, 2, { "reduction", "delta" })
loss("SmoothL1Loss", F.smooth_l1_loss, 2, { "size_average", "reduce", "reduction", "beta" })
loss("KLDivLoss", F.kl_div, 2, { "size_average", "reduce", "reduction", "log_target" })
loss("SoftMarginLoss", F.soft_margin_loss, 2, { "size_average", "reduce", "reduction" })
loss("PoissonNLLLoss", F.poisson_nll_loss, 2, { "log_input", "full", "size_average", "eps", "reduce", "reduction" })
loss("GaussianNLLLoss", F.gaussian_nll_loss, 3, { "full", "eps", "reduction" })
loss("CosineEmbeddingLoss", F.cosine_embedding_loss, 3, { "margin", "size_average", "reduce", "reduction" })
loss("MarginRankingLoss", F.margin_ranking_loss, 3, { "margin", "size_average", "reduce", "reduction" })
loss("HingeEmbeddingLoss", F.hinge_embedding_loss, 2, { "margin", "size_average", "reduce", "reduction" })
loss("TripletMarginLoss", F.triplet_margin_loss, 3,
  { "margin", "p", "eps", "swap", "size_average", "reduce", "reduction" })
loss("CTCLoss", F.ctc_loss, 4, { "blank", "reduction", "zero_infinity" })
loss("MultiMarginLoss", F.multi_margin_loss, 2, { "p", "margin", "weight", "size_average", "reduce", "reduction" }, W)
loss("MultiLabelMarginLoss", F.multilabel_margin_loss, 2, { "size_average", "reduce", "reduction" })
loss("MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss, 2, { "weight", "size_average", "reduce", "reduction" }, W)

return true
