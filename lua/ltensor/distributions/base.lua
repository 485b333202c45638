-- ltensor.distributions.base: the table T.distributions (B.D), the
-- Distribution base class and class(), and the helpers the distribution
-- files share (shapes, broadcasting, constraints, validation).
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local autograd = require "ltensor.autograd"

local D = {}
T.distributions = D
T.default_generator = T.default_generator or T._default_generator()

local TMT = T._metatable
local is_t = util.is_tensor
local typename = util.typename
local fail = util.failer("ltensor.distributions.")
-- options tables are checked by the library's one checker (l_args.c):
-- an unknown key raises "unknown option 'x' (did you mean 'y'?)"
local function check_opts(where, opts, known) return T._check_opts("distributions." .. where, opts, known) end
local SAMPLE_OPTS = { "generator" }
local pi = math.pi

---------------------------------------------------------------------------
require "ltensor.autograd.rules_random"   -- T._standard_gamma's gradient
local standard_gamma = T._standard_gamma

---------------------------------------------------------------------------
-- helpers
---------------------------------------------------------------------------
local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end
local function concat_shapes(...)
  local r = {}
  for i = 1, select("#", ...) do for _, v in ipairs((select(i, ...))) do r[#r + 1] = v end end
  return r
end
local function bshape(a, b)
  local n = math.max(#a, #b)
  local r = {}
  for i = 1, n do
    local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then return nil end
    r[i] = x == 1 and y or x
  end
  return r
end
local function float_dtype_of(...)
  for i = 1, select("#", ...) do
    local x = select(i, ...)
    if is_t(x) and (x.dtype == T.float64 or x.dtype == T.float32 or x.dtype == T.float16 or x.dtype == T.bfloat16) then
      return x.dtype
    end
  end
  return T.get_default_dtype()
end
-- PyTorch's broadcast_all: numbers become tensors of the tensors' dtype;
-- all are expanded to the common shape
local function broadcast_all(where, ...)
  local n = select("#", ...)
  local args = { ... }
  local dt = float_dtype_of(...)
  local shape = {}
  for i = 1, n do
    local x = args[i]
    if type(x) == "number" then
      args[i] = T.tensor(x, { dtype = dt })
    elseif not is_t(x) then
      fail(where, ("bad argument #%d (number or tensor expected, got %s)"):format(i, type(x)))
    elseif not (x.dtype == T.float64 or x.dtype == T.float32 or x.dtype == T.float16 or x.dtype == T.bfloat16) then
      args[i] = x:to(dt)
    end
    local s = bshape(shape, args[i].shape)
    if not s then fail(where, "shape mismatch: objects cannot be broadcast to a single shape") end
    shape = s
  end
  for i = 1, n do
    local s = args[i].shape
    local same = #s == #shape
    for k = 1, #s do same = same and s[k] == shape[k] end
    if not same then args[i] = args[i]:expand(shape) end
  end
  return shape, table.unpack(args, 1, n)
end
local function size_arg(where, s)
  if s == nil then return {} end
  if type(s) == "number" then s = { s } end
  if type(s) ~= "table" or is_t(s) then fail(where, "sample_shape must be a table of sizes") end
  local out = {}
  for i = 1, rawlen(s) do
    local v = s[i]
    local iv = type(v) == "number" and math.tointeger(v)
    if not iv or iv < 0 then
      fail(where, ("sample_shape must be a table of non-negative integers (entry %d is %s)"):format(i, type(v) == "number" and tostring(v) or type(v)))
    end
    out[i] = iv
  end
  return out
end
-- expand's batch_shape: a list of integers (-1 keeps a size, as
-- Tensor.expand; the tensor ops check the sizes against the parameters')
local function batch_shape_arg(where, s)
  if type(s) ~= "table" or is_t(s) then
    fail(where, "bad argument #1 'batch_shape' (table of sizes expected, got " .. util.typename(s) .. ")")
  end
  local out = {}
  for i = 1, rawlen(s) do
    local iv = type(s[i]) == "number" and math.tointeger(s[i])
    if not iv then
      fail(where, ("batch_shape must be a table of integers (entry %d is %s)"):format(i,
        type(s[i]) == "number" and tostring(s[i]) or util.typename(s[i])))
    end
    out[i] = iv
  end
  return out
end
local function opts_of(a, b, where)   -- sample(shape, opts) or sample(opts)
  if type(a) == "table" and not is_t(a) and #a == 0 and next(a) ~= nil then a, b = nil, a end
  if where then check_opts(where, b, SAMPLE_OPTS) end
  return a, b
end
local function all_true(mask) return mask:numel() == 0 or mask:all():item() end
-- x * log(y), 0 where x = 0 (so a concentration of 1 gives a finite density at 0)
local xlogy = T.xlogy

local constraint_names = {
  positive = "GreaterThan(lower_bound=0.0)",
  nonneg = "GreaterThanEq(lower_bound=0.0)",
  real = "Real()",
  unit = "Interval(lower_bound=0.0, upper_bound=1.0)",
  open_unit = "OpenInterval(lower_bound=0.0, upper_bound=1.0)",
  boolean = "Boolean()",
  simplex = "Simplex()",
  pd = "PositiveDefinite()",
  lower_cholesky = "LowerCholesky()",
  real_vector = "IndependentConstraint(Real(), 1)",
}
local function check_constraint(c, x)
  if c == "positive" then return x:gt(0) end
  if c == "nonneg" then return x:ge(0) end
  if c == "real" then return x:eq(x) end
  if c == "unit" then return T.logical_and(x:ge(0), x:le(1)) end
  if c == "open_unit" then return T.logical_and(x:gt(0), x:lt(1)) end
  if c == "boolean" then return T.logical_or(x:eq(0), x:eq(1)) end
  if c == "real_vector" then return x:eq(x):all(-1) end
  error("unknown constraint " .. c)
end
local function validate_param(d, name, c, x)
  if not d._validate then return end
  local ok = T.no_grad(function() return all_true(check_constraint(c, x)) end)
  if not ok then
    fail(d._name, ("Expected parameter %s (Tensor of shape %s) of distribution %s to satisfy the constraint %s, but found invalid values:\n%s")
      :format(name, shape_str(x.shape), d._name, constraint_names[c], tostring(x)))
  end
end

---------------------------------------------------------------------------
-- the base class
---------------------------------------------------------------------------
local Distribution = {}
D.Distribution = Distribution
local props = { mean = true, variance = true, stddev = true, probs = true, logits = true, mode = true,
  covariance_matrix = true, precision_matrix = true, scale_tril = true }

-- a float as Python's repr writes it (shortest round trip; 1.0, 1e-05)
local function pyfloat(x)
  if type(x) ~= "number" then return tostring(x) end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" elseif x == -math.huge then return "-inf" end
  local a = math.abs(x)
  if a == 0 or (a >= 1e-4 and a < 1e16) then
    for d = 1, 17 do
      local t = ("%." .. d .. "f"):format(x)
      if tonumber(t) == x then
        t = t:gsub("(%.%d-)0+$", "%1")
        if t:sub(-1) == "." then t = t .. "0" end
        return t
      end
    end
  end
  for d = 1, 17 do
    local t = ("%." .. d .. "g"):format(x)
    if tonumber(t) == x then return t end
  end
  return ("%.17g"):format(x)
end

-- d.sample() / d.log_prob(x) for d:sample() / d:log_prob(x): the public
-- methods and accessors check their self (util.self_checked): the base's at
-- the end of this file, a distribution's as it defines them (__newindex)
local METHODS = { "sample", "rsample", "sample_n", "log_prob", "entropy", "cdf", "icdf", "expand", "perplexity",
  "mean", "variance", "stddev", "mode", "probs", "logits", "covariance_matrix", "precision_matrix", "scale_tril" }
local method_set = {}
for _, k in ipairs(METHODS) do method_set[k] = true end
local function self_cfg(name)
  return { prefix = "distributions." .. name .. ".", expected = "ltensor.distributions.Distribution", var = "d",
    key = "batch_shape" }
end
local define_method = util.method_definer(method_set, function(C) return self_cfg(rawget(C, "_name")) end)

local function class(name, parent)
  local C = setmetatable({}, { __index = parent, __newindex = define_method })
  C.__name = "ltensor.distributions." .. name
  C._name = name
  C.__index = function(self, k)
    local m = C[k]
    if m ~= nil and props[k] and type(m) == "function" then return m(self) end
    return m
  end
  -- PyTorch's repr: "Normal(loc: 0.0, scale: 1.0)"; a one-element
  -- parameter prints as its value, a larger one as its size
  C.__tostring = function(self)
    local parts = {}
    for _, nv in ipairs(self:_repr_params()) do
      local v = nv[2]
      local text
      if is_t(v) and v:numel() == 1 then text = v:dim() == 0 and pyfloat(v:item()) or tostring(v)
      elseif is_t(v) then text = shape_str(v.shape)
      else text = tostring(v) end
      parts[#parts + 1] = nv[1] .. ": " .. text
    end
    return name .. "(" .. table.concat(parts, ", ") .. ")"
  end
  return C
end

local INIT_OPTS = { "validate_args" }
function Distribution:_init(batch_shape, event_shape, opts)
  check_opts(self._name, opts, self._init_opts or INIT_OPTS)
  rawset(self, "batch_shape", batch_shape)
  rawset(self, "event_shape", event_shape or {})
  local v = true
  if type(opts) == "table" and opts.validate_args ~= nil then v = opts.validate_args end
  rawset(self, "_validate", v)
end
function Distribution:_extended_shape(sample_shape)
  return concat_shapes(size_arg(self._name .. ".sample", sample_shape), self.batch_shape, self.event_shape)
end
function Distribution:sample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".sample")
  if self.has_rsample then
    return T.no_grad(function() return self:rsample(shape, opts) end)
  end
  fail(self._name .. ".sample", "not implemented")
end
function Distribution:rsample()
  fail(self._name .. ".rsample", "this distribution has no reparameterised sampler (has_rsample is false); use sample")
end
function Distribution:sample_n(n, opts) return self:sample({ n }, opts) end
-- the {name, value} pairs tostring shows: the parameters given
function Distribution:_repr_params()
  local r = {}
  for _, p in ipairs(rawget(self, "_params") or self._params or {}) do
    local v = rawget(self, p)
    if v ~= nil then r[#r + 1] = { (p:gsub("^_", "")), v } end
  end
  return r
end
function Distribution:stddev()
  local v = self.variance
  if not is_t(v) then fail((rawget(self, "_name") or self._name or "Distribution") .. ".stddev", "not implemented (no variance)") end
  return v:sqrt()
end
function Distribution:entropy() fail(self._name .. ".entropy", "not implemented") end
function Distribution:_validate_sample(value, support, support_name)
  if not is_t(value) then fail(self._name .. ".log_prob", "The value argument to log_prob must be a Tensor") end
  if not self._validate then return end
  local need = concat_shapes(self.batch_shape, self.event_shape)
  local vs = value.shape
  -- the trailing dims of value must broadcast with batch_shape .. event_shape
  local ne = #self.event_shape
  for i = 1, ne do
    if vs[#vs - ne + i] ~= self.event_shape[i] then
      fail(self._name .. ".log_prob", ("The right-most size of value must match event_shape: %s vs %s.")
        :format(shape_str(vs), shape_str(self.event_shape)))
    end
  end
  if not bshape(vs, need) then
    fail(self._name .. ".log_prob", ("Value is not broadcastable with batch_shape+event_shape: %s vs %s.")
      :format(shape_str(vs), shape_str(need)))
  end
  if support then
    local ok = T.no_grad(function() return all_true(support(value)) end)
    if not ok then
      fail(self._name .. ".log_prob", ("Expected value argument (Tensor of shape %s) to be within the support (%s) of the distribution %s, but found invalid values:\n%s")
        :format(shape_str(vs), support_name, tostring(self), tostring(value)))
    end
  end
end
-- a new distribution of the same kind whose parameters are expanded
function Distribution:expand(batch_shape)
  batch_shape = batch_shape_arg(self._name .. ".expand", batch_shape)
  local args = {}
  for i, p in ipairs(self._params) do
    local v = rawget(self, p)
    local ev = concat_shapes(batch_shape, (self._param_event or {})[p] or {})
    args[i] = v:expand(ev)
  end
  args[#args + 1] = { validate_args = false }
  return getmetatable(self).new(table.unpack(args))
end

local function standard_shape(d, shape, opts)
  shape = d:_extended_shape(shape)
  return shape, { dtype = d._dtype, generator = opts and opts.generator }
end

local function finfo_tiny(dt) return dt == T.float64 and 2.2250738585072014e-308 or 1.1754943508222875e-38 end
local function finfo_eps(dt) return dt == T.float64 and 2.220446049250313e-16 or 1.1920928955078125e-07 end
local function softplus(x) return x:clamp(0) + (-x:abs()):exp():log1p() end
-- x with L x = b (L lower triangular (..., n, n), b (..., n)), forward substitution
-- Lower Cholesky factor of a batch of symmetric positive-definite matrices,
-- column by column with tensor ops (differentiable through autograd);
-- T.linalg.cholesky is used instead when the library has it.
local function eye_like(n, dt) return T.eye(n, { dtype = dt }) end
local function tri_solve(Lm, b)
  local n = Lm.shape[#Lm.shape]
  local xs = {}
  for i = 1, n do
    local row = Lm:select(-2, i)
    local acc = b:select(-1, i)
    for k = 1, i - 1 do acc = acc - row:select(-1, k) * xs[k] end
    xs[i] = acc / row:select(-1, i)
  end
  return T.stack(xs, -1)
end
local function diag_of(Lm)   -- (..., n, n) -> (..., n)
  local n = Lm.shape[#Lm.shape]
  return (Lm * eye_like(n, Lm.dtype)):sum(-1)
end
-- Errors name the method the user called: while a distribution's method
-- runs, T._public_name is "distributions.<Class>.<method>" (the outermost
-- call's: sample calling rsample raises as sample), the name util.failer
-- and the C side's ltl_error word every error in, those of the tensor ops
-- inside included.  name_methods wraps a class's public methods so.
local public_name = T._public_name
local function named_method(owner, key, f)
  return function(self, ...)
    if public_name() ~= nil then return f(self, ...) end
    local mt = getmetatable(self)
    local cname = type(mt) == "table" and rawget(mt, "_name")
    if type(cname) ~= "string" then   -- d.sample() for d:sample(): the hint every class gives
      util.bad_self("distributions." .. owner .. "." .. key, "ltensor.distributions.Distribution", "d", key, self)
    end
    return util.run_named("distributions." .. cname .. "." .. key, f, self, ...)
  end
end
local function name_methods(C, owner)
  local keys = {}
  for k, v in pairs(C) do
    if type(k) == "string" and type(v) == "function" and k:sub(1, 1) ~= "_" and k ~= "new" then keys[#keys + 1] = k end
  end
  for _, k in ipairs(keys) do rawset(C, k, named_method(owner, k, C[k])) end
end

local B = {}
B.name_methods = name_methods
B.math = math
B.table = table
B.rawlen = rawlen
B.D = D
B.TMT = TMT
B.is_t = is_t
B.fail = fail
B.check_opts = check_opts
B.SAMPLE_OPTS = SAMPLE_OPTS
B.pi = pi
B.standard_gamma = standard_gamma
B.shape_str = shape_str
B.concat_shapes = concat_shapes
B.bshape = bshape
B.float_dtype_of = float_dtype_of
B.broadcast_all = broadcast_all
B.size_arg = size_arg
B.opts_of = opts_of
B.batch_shape_arg = batch_shape_arg
B.all_true = all_true
B.xlogy = xlogy
B.constraint_names = constraint_names
B.check_constraint = check_constraint
B.validate_param = validate_param
util.check_methods(Distribution, self_cfg("Distribution"), METHODS)
B.Distribution = Distribution
B.props = props
B.pyfloat = pyfloat
B.class = class
B.INIT_OPTS = INIT_OPTS
B.standard_shape = standard_shape
B.eye_like = eye_like
B.finfo_tiny = finfo_tiny
B.finfo_eps = finfo_eps
B.softplus = softplus
B.tri_solve = tri_solve
B.diag_of = diag_of
return B
