-- ltensor.distributions: probability distributions with PyTorch's
-- torch.distributions interface (1.13), for T.distributions.
--
--   local D = T.distributions
--   local d = D.Normal(loc, scale)          -- numbers or tensors (broadcast)
--   d:sample({n} [, {generator = g}])       -- sample_shape .. batch_shape .. event_shape
--   d:rsample({n} [, opts])                 -- reparameterised: differentiable
--   d:log_prob(x), d:entropy(), d.mean, d.variance, d.stddev,
--   d.batch_shape, d.event_shape, d:expand(shape), d.has_rsample
--
-- Parameters are validated at construction (PyTorch's validate_args=True
-- default; {validate_args = false} as the last argument turns it off), and
-- so are values given to log_prob.  Categorical samples and values are
-- 1-based category indices, like every index in ltensor.
--
-- Reparameterisation: Normal, Uniform, Exponential and MultivariateNormal
-- by location-scale transforms of standard draws; Gamma and Beta through
-- T._standard_gamma, whose gradient in the concentration is the implicit
-- reparameterisation one (Figurnov et al. 2018: dx/dalpha =
-- -(dF/dalpha)/f(x), computed in C), so rsample is differentiable in
-- concentration and rate (Gamma) and in both concentrations (Beta), as in
-- PyTorch.  Bernoulli and Categorical have no rsample (PyTorch raises too).
--
-- Sampling draws in C (src/l_samplers.c); everything else is made of tensor
-- ops, so autograd comes for free.  This module also defines T.lgamma,
-- T.digamma and T.polygamma (n = 1) with their gradients, unless the core
-- already has them.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local autograd = T.autograd or require "ltensor.autograd"

local D = {}
T.distributions = D
T.default_generator = T.default_generator or T._default_generator()

local TMT = T._metatable
local is_t = util.is_tensor
local fail = util.failer("ltensor.distributions.")
-- options tables are checked by the library's one checker (l_args.c):
-- an unknown key raises "unknown option 'x' (did you mean 'y'?)"
local function check_opts(where, opts, known) return T._check_opts("distributions." .. where, opts, known) end
local SAMPLE_OPTS = { "generator" }
local pi = math.pi

---------------------------------------------------------------------------
-- special functions with gradients
---------------------------------------------------------------------------
local trigamma_f = autograd.Function {
  name = "Trigamma",
  forward = function(ctx, x) ctx:save_for_backward(x) return T._trigamma(x) end,
  backward = function(ctx) fail("polygamma", "the gradient of polygamma(1, x) is not implemented") end,
}
local digamma_f = autograd.Function {
  name = "Digamma",
  forward = function(ctx, x) ctx:save_for_backward(x) return T._digamma(x) end,
  backward = function(ctx, g) local x = ctx.saved_tensors[1] return g * trigamma_f(x) end,
}
local lgamma_f = autograd.Function {
  name = "Lgamma",
  forward = function(ctx, x) ctx:save_for_backward(x) return T._lgamma(x) end,
  backward = function(ctx, g) local x = ctx.saved_tensors[1] return g * digamma_f(x) end,
}
-- x is argument #pos (1 unless given); anything after it is a slip (issue 11)
local function check_special(name, x, pos, ...)
  pos = pos or 1
  if not is_t(x) then error(("ltensor.%s: bad argument #%d (tensor expected, got %s)"):format(name, pos, type(x)), 0) end
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil then
      error(("ltensor.%s: bad argument #%d (unexpected extra argument (got %s))"):format(name, pos + i,
        is_t(v) and "ltensor.Tensor" or type(v)), 0)
    end
  end
end
if not T.lgamma then
  T.lgamma = function(x, ...) check_special("lgamma", x, 1, ...) return lgamma_f(x) end
  T._methods.lgamma = T.lgamma
end
if not T.digamma then
  T.digamma = function(x, ...) check_special("digamma", x, 1, ...) return digamma_f(x) end
  T._methods.digamma = T.digamma
end
if not T.polygamma then
  T.polygamma = function(n, x, ...)
    check_special("polygamma", x, 2, ...)
    if n == 0 then return digamma_f(x) end
    if n ~= 1 then error("ltensor.polygamma: only n = 0 and n = 1 are implemented, got " .. tostring(n), 0) end
    return trigamma_f(x)
  end
end

-- T.normal, T.bernoulli and T.poisson record a node whose gradients are
-- zero, as PyTorch's NormalBackward / BernoulliBackward / PoissonBackward
-- (sampling is not reparameterised there: use rsample for gradients)
local function zero_grad_rule(name, ninputs)
  local function bw(_, g)
    local z = T.zeros_like(g)
    if ninputs == 1 then return z end
    return z, z
  end
  return function(raw, ...)
    local out = raw(...)
    local inputs = {}
    for i = 1, ninputs do inputs[i] = (select(i, ...)) end
    return { name = name, inputs = inputs, backward = bw }, out
  end
end
local rules = autograd.rules
rules.normal = rules.normal or zero_grad_rule("NormalBackward3", 2)
rules.bernoulli = rules.bernoulli or zero_grad_rule("BernoulliBackward0", 1)
rules.poisson = rules.poisson or zero_grad_rule("PoissonBackward0", 1)
-- the in-place samplers (t:uniform_() & co.) reach the rule of their name
-- without the "_": the engine refuses a leaf that requires grad, and a
-- non-leaf's earlier history gets a zero gradient (normal_ and bernoulli_
-- use the rules above, whose first input is the target)
for name, node in pairs { uniform = "UniformBackward0", exponential = "ExponentialBackward0",
  geometric = "GeometricBackward0", log_normal = "LogNormalBackward0", cauchy = "CauchyBackward0",
  random = "RandomBackward0" } do
  rules[name] = rules[name] or zero_grad_rule(node, 1)
end

-- T._standard_gamma: Gamma(alpha, 1) samples whose gradient in alpha is the
-- implicit one (PyTorch's StandardGammaBackward0)
rules._standard_gamma = rules._standard_gamma or function(raw, alpha, ...)
  local x = raw(alpha, ...)
  return { name = "StandardGammaBackward0", inputs = { alpha }, saved = { alpha, x, n = 2 },
    backward = function(n, g) return g * T._standard_gamma_grad(n.saved[1], n.saved[2]) end }, x
end
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

local function class(name, parent)
  local C = setmetatable({}, { __index = parent })
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
function Distribution:stddev() return self.variance:sqrt() end
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

---------------------------------------------------------------------------
-- Normal
---------------------------------------------------------------------------
local Normal = class("Normal", Distribution)
D.Normal = Normal
Normal._params = { "loc", "scale" }
Normal.has_rsample = true
function Normal.new(loc, scale, opts)
  local self = setmetatable({}, Normal)
  local shape
  shape, self.loc, self.scale = broadcast_all("Normal", loc, scale)
  self._dtype = self.loc.dtype
  self:_init(shape, {}, opts)
  validate_param(self, "loc", "real", self.loc)
  validate_param(self, "scale", "positive", self.scale)
  return self
end
function Normal:mean() return self.loc end
function Normal:mode() return self.loc end
function Normal:stddev() return self.scale end
function Normal:variance() return self.scale:pow(2) end
function Normal:rsample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".rsample")
  local s, o = standard_shape(self, shape, opts)
  local eps = T.randn(s, o)
  return self.loc + eps * self.scale
end
function Normal:sample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".sample")
  local s, o = standard_shape(self, shape, opts)
  return T.no_grad(function() return T.normal(self.loc:expand(s), self.scale:expand(s), o) end)
end
function Normal:log_prob(value)
  self:_validate_sample(value)
  local var = self.scale:pow(2)
  return -(value - self.loc):pow(2) / (var * 2) - self.scale:log() - math.log(math.sqrt(2 * pi))
end
function Normal:cdf(value)
  self:_validate_sample(value)
  return ((value - self.loc) * self.scale:reciprocal() / math.sqrt(2)):erf() * 0.5 + 0.5
end
function Normal:entropy() return self.scale:log() + (0.5 + 0.5 * math.log(2 * pi)) end
setmetatable(Normal, { __index = Distribution, __call = function(_, ...) return Normal.new(...) end })

---------------------------------------------------------------------------
-- Uniform
---------------------------------------------------------------------------
local Uniform = class("Uniform", Distribution)
D.Uniform = Uniform
Uniform._params = { "low", "high" }
Uniform.has_rsample = true
function Uniform.new(low, high, opts)
  local self = setmetatable({}, Uniform)
  local shape
  shape, self.low, self.high = broadcast_all("Uniform", low, high)
  self._dtype = self.low.dtype
  self:_init(shape, {}, opts)
  if self._validate and not T.no_grad(function() return all_true(self.low:lt(self.high)) end) then
    fail("Uniform", "Uniform is not defined when low>= high")
  end
  return self
end
function Uniform:mean() return (self.high + self.low) / 2 end
function Uniform:stddev() return (self.high - self.low) / math.sqrt(12) end
function Uniform:variance() return (self.high - self.low):pow(2) / 12 end
function Uniform:rsample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".rsample")
  local s, o = standard_shape(self, shape, opts)
  return self.low + T.rand(s, o) * (self.high - self.low)
end
function Uniform:log_prob(value)
  -- the support is PyTorch's closed interval; value = high is in it and has log_prob -inf
  self:_validate_sample(value, function(v) return T.logical_and(v:ge(self.low), v:le(self.high)) end,
    "Interval(lower_bound=low, upper_bound=high)")
  local lb = value:ge(self.low):to(self.low.dtype)
  local ub = value:lt(self.high):to(self.low.dtype)
  return (lb * ub):log() - (self.high - self.low):log()
end
function Uniform:cdf(value)
  self:_validate_sample(value)
  return ((value - self.low) / (self.high - self.low)):clamp(0, 1)
end
function Uniform:entropy() return (self.high - self.low):log() end
setmetatable(Uniform, { __index = Distribution, __call = function(_, ...) return Uniform.new(...) end })

---------------------------------------------------------------------------
-- Exponential
---------------------------------------------------------------------------
local Exponential = class("Exponential", Distribution)
D.Exponential = Exponential
Exponential._params = { "rate" }
Exponential.has_rsample = true
function Exponential.new(rate, opts)
  local self = setmetatable({}, Exponential)
  local shape
  shape, self.rate = broadcast_all("Exponential", rate)
  self._dtype = self.rate.dtype
  self:_init(shape, {}, opts)
  validate_param(self, "rate", "positive", self.rate)
  return self
end
function Exponential:mean() return self.rate:reciprocal() end
function Exponential:mode() return T.zeros_like(self.rate) end
function Exponential:stddev() return self.rate:reciprocal() end
function Exponential:variance() return self.rate:pow(-2) end
function Exponential:rsample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".rsample")
  local s, o = standard_shape(self, shape, opts)
  local e = T.empty(s, { dtype = self._dtype }):exponential_(1, { generator = o.generator })
  return e / self.rate
end
function Exponential:log_prob(value)
  self:_validate_sample(value, function(v) return v:ge(0) end, constraint_names.nonneg)
  return self.rate:log() - self.rate * value
end
function Exponential:cdf(value)
  self:_validate_sample(value)
  return 1 - (-self.rate * value):exp()
end
function Exponential:entropy() return 1.0 - self.rate:log() end
setmetatable(Exponential, { __index = Distribution, __call = function(_, ...) return Exponential.new(...) end })

---------------------------------------------------------------------------
-- Gamma
---------------------------------------------------------------------------
local function finfo_tiny(dt) return dt == T.float64 and 2.2250738585072014e-308 or 1.1754943508222875e-38 end
local function finfo_eps(dt) return dt == T.float64 and 2.220446049250313e-16 or 1.1920928955078125e-07 end

local Gamma = class("Gamma", Distribution)
D.Gamma = Gamma
Gamma._params = { "concentration", "rate" }
Gamma.has_rsample = true
function Gamma.new(concentration, rate, opts)
  local self = setmetatable({}, Gamma)
  local shape
  shape, self.concentration, self.rate = broadcast_all("Gamma", concentration, rate)
  self._dtype = self.rate.dtype
  self:_init(shape, {}, opts)
  validate_param(self, "concentration", "positive", self.concentration)
  validate_param(self, "rate", "positive", self.rate)
  return self
end
function Gamma:mean() return self.concentration / self.rate end
function Gamma:mode() return ((self.concentration - 1) / self.rate):clamp(0) end
function Gamma:variance() return self.concentration / self.rate:pow(2) end
function Gamma:rsample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".rsample")
  local s = self:_extended_shape(shape)
  local g = standard_gamma(self.concentration:expand(s), opts and opts.generator and { generator = opts.generator } or nil)
  local x = g / self.rate:expand(s)
  return x:clamp(finfo_tiny(self._dtype))   -- a rate can push a tiny sample below the normal range
end
function Gamma:log_prob(value)
  self:_validate_sample(value, function(v) return v:ge(0) end, constraint_names.nonneg)
  local a, b = self.concentration, self.rate
  return xlogy(a, b) + xlogy(a - 1, value) - b * value - T.lgamma(a)
end
function Gamma:entropy()
  local a = self.concentration
  return a - self.rate:log() + T.lgamma(a) + (1.0 - a) * T.digamma(a)
end
setmetatable(Gamma, { __index = Distribution, __call = function(_, ...) return Gamma.new(...) end })

---------------------------------------------------------------------------
-- Beta (through two Gammas)
---------------------------------------------------------------------------
local Beta = class("Beta", Distribution)
D.Beta = Beta
Beta._params = { "concentration1", "concentration0" }
Beta.has_rsample = true
function Beta.new(c1, c0, opts)
  local self = setmetatable({}, Beta)
  local shape
  shape, self.concentration1, self.concentration0 = broadcast_all("Beta", c1, c0)
  self._dtype = self.concentration1.dtype
  self:_init(shape, {}, opts)
  validate_param(self, "concentration1", "positive", self.concentration1)
  validate_param(self, "concentration0", "positive", self.concentration0)
  return self
end
function Beta:mean() return self.concentration1 / (self.concentration1 + self.concentration0) end
function Beta:variance()
  local t = self.concentration1 + self.concentration0
  return self.concentration1 * self.concentration0 / (t:pow(2) * (t + 1))
end
function Beta:rsample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".rsample")
  local s = self:_extended_shape(shape)
  local o = opts and opts.generator and { generator = opts.generator } or nil
  local g1 = standard_gamma(self.concentration1:expand(s), o)
  local g0 = standard_gamma(self.concentration0:expand(s), o)
  local eps = finfo_eps(self._dtype)
  return (g1 / (g1 + g0)):clamp(finfo_tiny(self._dtype), 1 - eps)
end
function Beta:log_prob(value)
  self:_validate_sample(value, function(v) return T.logical_and(v:ge(0), v:le(1)) end, constraint_names.unit)
  local a, b = self.concentration1, self.concentration0
  local lbeta = T.lgamma(a) + T.lgamma(b) - T.lgamma(a + b)
  return xlogy(a - 1, value) + xlogy(b - 1, 1 - value) - lbeta
end
function Beta:entropy()
  local a, b = self.concentration1, self.concentration0
  local t = a + b
  local lbeta = T.lgamma(a) + T.lgamma(b) - T.lgamma(t)
  return lbeta - (a - 1) * T.digamma(a) - (b - 1) * T.digamma(b) + (t - 2) * T.digamma(t)
end
setmetatable(Beta, { __index = Distribution, __call = function(_, ...) return Beta.new(...) end })

---------------------------------------------------------------------------
-- Bernoulli and Categorical (probs or logits)
---------------------------------------------------------------------------
local function softplus(x) return x:clamp(0) + (-x:abs()):exp():log1p() end
local function clamp_probs(p)
  local eps = finfo_eps(p.dtype)
  return p:clamp(eps, 1 - eps)
end
local function probs_logits(where, probs, logits, opts)
  if (probs == nil) == (logits == nil) then
    fail(where, "Either `probs` or `logits` must be specified, but not both.")
  end
  return probs, logits, opts
end
-- Bernoulli(probs) / Bernoulli(nil, logits) / Bernoulli{probs=} / Bernoulli{logits=}
local PL_OPTS = { "validate_args", "probs", "logits" }
local function pl_args(where, a, b, c)
  if type(a) == "table" and not is_t(a) then
    check_opts(where, a, PL_OPTS)
    return probs_logits(where, a.probs, a.logits, a)
  end
  return probs_logits(where, a, b, c)
end

local Bernoulli = class("Bernoulli", Distribution)
D.Bernoulli = Bernoulli
Bernoulli._init_opts = PL_OPTS
Bernoulli.has_rsample = false
function Bernoulli.new(a, b, c)
  local probs, logits, opts = pl_args("Bernoulli", a, b, c)
  local self = setmetatable({}, Bernoulli)
  local shape
  if probs ~= nil then
    shape, probs = broadcast_all("Bernoulli", probs)
    rawset(self, "_probs", probs)
    self._params = { "_probs" }
  else
    shape, logits = broadcast_all("Bernoulli", logits)
    rawset(self, "_logits", logits)
    self._params = { "_logits" }
  end
  self._dtype = (probs or logits).dtype
  self:_init(shape, {}, opts)
  if probs ~= nil then validate_param(self, "probs", "unit", probs) else validate_param(self, "logits", "real", logits) end
  return self
end
function Bernoulli:probs() return rawget(self, "_probs") or rawget(self, "_logits"):sigmoid() end
function Bernoulli:logits()
  local l = rawget(self, "_logits")
  if l then return l end
  local p = clamp_probs(rawget(self, "_probs"))
  return p:log() - (-p):log1p()
end
function Bernoulli:mean() return self.probs end
function Bernoulli:variance() local p = self.probs return p * (1 - p) end
function Bernoulli:sample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".sample")
  local s = self:_extended_shape(shape)
  return T.no_grad(function()
    return T.bernoulli(self.probs:detach():expand(s):contiguous(), { generator = opts and opts.generator })
  end)
end
function Bernoulli:log_prob(value)
  self:_validate_sample(value, function(v) return T.logical_or(v:eq(0), v:eq(1)) end, constraint_names.boolean)
  local l = self.logits
  return value * l - softplus(l)
end
function Bernoulli:entropy()
  local l = self.logits
  return softplus(l) - self.probs * l
end
function Bernoulli:expand(batch_shape)
  local p = rawget(self, "_probs")
  if p then return Bernoulli.new(p:expand(batch_shape), nil, { validate_args = false }) end
  return Bernoulli.new(nil, rawget(self, "_logits"):expand(batch_shape), { validate_args = false })
end
setmetatable(Bernoulli, { __index = Distribution, __call = function(_, ...) return Bernoulli.new(...) end })

local Categorical = class("Categorical", Distribution)
D.Categorical = Categorical
Categorical._init_opts = PL_OPTS
Categorical.has_rsample = false
function Categorical.new(a, b, c)
  local probs, logits, opts = pl_args("Categorical", a, b, c)
  local self = setmetatable({}, Categorical)
  local p = probs or logits
  if not is_t(p) then fail("Categorical", "probs/logits must be a tensor") end
  if p:dim() < 1 then fail("Categorical", "`probs` parameter must be at least one-dimensional.") end
  if not (p.dtype == T.float32 or p.dtype == T.float64 or p.dtype == T.float16 or p.dtype == T.bfloat16) then
    p = p:to(T.get_default_dtype())
  end
  local shape = p.shape
  local batch = {}
  for i = 1, #shape - 1 do batch[i] = shape[i] end
  self._num_events = shape[#shape]
  self._dtype = p.dtype
  self:_init(batch, {}, opts)
  if probs ~= nil then
    validate_param(self, "probs", "nonneg", p)
    rawset(self, "_probs", p / p:sum(-1, true))
    self._params = { "_probs" }
  else
    validate_param(self, "logits", "real", p)
    rawset(self, "_logits", p - p:logsumexp(-1, true))
    self._params = { "_logits" }
  end
  return self
end
function Categorical:probs() return rawget(self, "_probs") or rawget(self, "_logits"):softmax(-1) end
function Categorical:logits()
  local l = rawget(self, "_logits")
  if l then return l end
  return clamp_probs(rawget(self, "_probs")):log()
end
function Categorical:mean() return T.full(self.batch_shape, 0 / 0, { dtype = self._dtype }) end
function Categorical:variance() return T.full(self.batch_shape, 0 / 0, { dtype = self._dtype }) end
function Categorical:mode() return self.probs:argmax(-1) end   -- argmax is 1-based already
function Categorical:sample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".sample")
  shape = size_arg("Categorical.sample", shape)
  local n = 1
  for _, v in ipairs(shape) do n = n * v end
  return T.no_grad(function()
    local p2 = self.probs:detach():reshape({ -1, self._num_events })
    local out_shape = concat_shapes(shape, self.batch_shape)
    if n == 0 or p2.shape[1] == 0 then return T.zeros(out_shape, { dtype = T.int64 }) end
    local idx = T.multinomial(p2, n, { replacement = true, generator = opts and opts.generator })  -- {B, n}
    idx = idx:t():contiguous()
    return idx:reshape(out_shape)
  end)
end
function Categorical:log_prob(value)
  if not is_t(value) then fail("Categorical.log_prob", "The value argument to log_prob must be a Tensor") end
  if self._validate then
    local k = self._num_events
    local ok = T.no_grad(function()
      return all_true(T.logical_and(T.logical_and(value:ge(1), value:le(k)), value:eq(value:floor())))
    end)
    if not ok then
      fail("Categorical.log_prob", ("Expected value argument (Tensor of shape %s) to be within the support (IntegerInterval(lower_bound=1, upper_bound=%d)) of the distribution %s, but found invalid values:\n%s")
        :format(shape_str(value.shape), k, tostring(self), tostring(value)))
    end
  end
  local v = value:to(T.int64):unsqueeze(-1)
  local logits = self.logits
  local bs = bshape(v.shape, logits.shape)
  if not bs then
    fail("Categorical.log_prob", ("Value is not broadcastable with batch_shape+event_shape: %s vs %s.")
      :format(shape_str(value.shape), shape_str(self.batch_shape)))
  end
  local vshape, lshape = {}, {}
  for i = 1, #bs - 1 do vshape[i], lshape[i] = bs[i], bs[i] end
  vshape[#bs], lshape[#bs] = 1, self._num_events
  return logits:expand(lshape):gather(-1, v:expand(vshape):contiguous()):squeeze(-1)
end
function Categorical:entropy()
  local l = self.logits
  local min_real = self._dtype == T.float64 and -1.7976931348623157e308 or -3.4028234663852886e38
  return -(l:clamp(min_real) * self.probs):sum(-1)
end
function Categorical:enumerate_support()
  return T.arange(1, self._num_events + 1)
end
function Categorical:expand(batch_shape)
  local p = rawget(self, "_probs")
  local s = concat_shapes(batch_shape, { self._num_events })
  if p then return Categorical.new(p:expand(s), nil, { validate_args = false }) end
  return Categorical.new(nil, rawget(self, "_logits"):expand(s), { validate_args = false })
end
setmetatable(Categorical, { __index = Distribution, __call = function(_, ...) return Categorical.new(...) end })

---------------------------------------------------------------------------
-- MultivariateNormal
---------------------------------------------------------------------------
-- Lower Cholesky factor of a batch of symmetric positive-definite matrices,
-- column by column with tensor ops (differentiable through autograd);
-- T.linalg.cholesky is used instead when the library has it.
local function eye_like(n, dt) return T.eye(n, { dtype = dt }) end
local function cholesky(where, A)
  if T.linalg and T.linalg.cholesky then return T.linalg.cholesky(A) end
  local n = A.shape[#A.shape]
  local cols = {}
  local rows = T.arange(1, n + 1)
  for j = 1, n do
    local s = A:select(-1, j)                    -- (..., n)
    for k = 1, j - 1 do s = s - cols[k] * cols[k]:select(-1, j):unsqueeze(-1) end
    local piv = s:select(-1, j)
    if not T.no_grad(function() return all_true(piv:gt(0)) end) then
      fail(where, ("cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite)."):format(j))
    end
    local mask = rows:ge(j):to(A.dtype)         -- zero above the diagonal
    cols[j] = s / piv:sqrt():unsqueeze(-1) * mask
  end
  return T.stack(cols, -1)
end
-- x with L x = b (L lower triangular (..., n, n), b (..., n)), forward substitution
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
local function tri_inverse(Lm)   -- inverse of a lower-triangular batch, columns of the identity
  local n = Lm.shape[#Lm.shape]
  local I = eye_like(n, Lm.dtype)
  local cols = {}
  for j = 1, n do cols[j] = tri_solve(Lm, I:select(-1, j):expand(concat_shapes(
    (function() local s = {} for i = 1, #Lm.shape - 2 do s[i] = Lm.shape[i] end return s end)(), { n }))) end
  return T.stack(cols, -1)
end

-- an n x n lower-triangular 0/1 mask
local function lower_mask(n, dt)
  local r = T.arange(1, n + 1)
  return r:unsqueeze(-1):ge(r:unsqueeze(1)):to(dt)
end

local MVN = class("MultivariateNormal", Distribution)
D.MultivariateNormal = MVN
MVN.has_rsample = true
MVN._params = { "loc", "_unbroadcasted_scale_tril" }
MVN._param_event = {}
MVN._init_opts = { "validate_args", "covariance_matrix", "scale_tril", "precision_matrix" }
function MVN:_repr_params()
  local M = rawget(self, "_cov") and { "covariance_matrix", rawget(self, "_cov") }
    or rawget(self, "_prec") and { "precision_matrix", rawget(self, "_prec") }
    or { "scale_tril", rawget(self, "_unbroadcasted_scale_tril") }
  return { { "loc", self.loc }, M }
end
function MVN.new(loc, a, opts)
  -- MultivariateNormal(loc, covariance) or MultivariateNormal(loc, {covariance_matrix= | scale_tril= | precision_matrix=})
  local cov, tril, prec
  if is_t(a) then cov = a
  elseif type(a) == "table" then cov, tril, prec = a.covariance_matrix, a.scale_tril, a.precision_matrix; opts = opts or a end
  local n = (cov and 1 or 0) + (tril and 1 or 0) + (prec and 1 or 0)
  if n ~= 1 then fail("MultivariateNormal", "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.") end
  if not is_t(loc) then fail("MultivariateNormal", "loc must be a tensor") end
  if loc:dim() < 1 then fail("MultivariateNormal", "loc must be at least one-dimensional.") end
  local M = cov or tril or prec
  local mname = cov and "covariance_matrix" or tril and "scale_tril" or "precision_matrix"
  if not is_t(M) or M:dim() < 2 then
    fail("MultivariateNormal", mname .. " must be at least two-dimensional, with optional leading batch dimensions")
  end
  local self = setmetatable({}, MVN)
  local k = loc.shape[#loc.shape]
  local ms = M.shape
  if ms[#ms] ~= ms[#ms - 1] or ms[#ms] ~= k then
    fail("MultivariateNormal", ("%s must be a batch of square matrices of size %d (the size of loc), got %s")
      :format(mname, k, shape_str(ms)))
  end
  local lb, mb = {}, {}
  for i = 1, #loc.shape - 1 do lb[i] = loc.shape[i] end
  for i = 1, #ms - 2 do mb[i] = ms[i] end
  local batch = bshape(lb, mb)
  if not batch then fail("MultivariateNormal", "shape mismatch: loc and the matrix batch shapes do not broadcast") end
  if loc.dtype ~= M.dtype then M = M:to(loc.dtype) end
  self:_init(batch, { k }, opts)
  self._dtype = loc.dtype
  self.loc = loc:expand(concat_shapes(batch, { k }))
  local where = "MultivariateNormal"
  if self._validate then
    local ok = T.no_grad(function() return all_true(loc:eq(loc)) end)
    if not ok then validate_param(self, "loc", "real_vector", loc) end
    if tril then
      local good = T.no_grad(function()
        local d = diag_of(M)
        local upper = M - M * lower_mask(k, M.dtype)
        return all_true(d:gt(0)) and all_true(upper:eq(0))
      end)
      if not good then
        fail(where, ("Expected parameter scale_tril (Tensor of shape %s) of distribution MultivariateNormal to satisfy the constraint LowerCholesky(), but found invalid values:\n%s")
          :format(shape_str(ms), tostring(M)))
      end
    else
      local sym = T.no_grad(function() return all_true((M - M:transpose(-1, -2)):abs():le(1e-6 * (1 + M:abs():amax()))) end)
      if not sym then
        fail(where, ("Expected parameter %s (Tensor of shape %s) of distribution MultivariateNormal to satisfy the constraint PositiveDefinite(), but found invalid values:\n%s")
          :format(mname, shape_str(ms), tostring(M)))
      end
    end
  end
  if tril then
    rawset(self, "_unbroadcasted_scale_tril", M)
  elseif cov then
    rawset(self, "_unbroadcasted_scale_tril", cholesky(where, M))
    rawset(self, "_cov", M)
  else
    -- precision P = Lp Lp^T, so covariance = Lp^-T Lp^-1
    local Lpinv = tri_inverse(cholesky(where, M))
    local c = T.matmul(Lpinv:transpose(-1, -2), Lpinv)
    rawset(self, "_unbroadcasted_scale_tril", cholesky(where, c))
    rawset(self, "_prec", M)
  end
  return self
end
function MVN:scale_tril()
  return rawget(self, "_unbroadcasted_scale_tril"):expand(concat_shapes(self.batch_shape, self.event_shape, self.event_shape))
end
function MVN:covariance_matrix()
  local Lm = rawget(self, "_unbroadcasted_scale_tril")
  return T.matmul(Lm, Lm:transpose(-1, -2)):expand(concat_shapes(self.batch_shape, self.event_shape, self.event_shape))
end
function MVN:precision_matrix()
  local Li = tri_inverse(rawget(self, "_unbroadcasted_scale_tril"))
  return T.matmul(Li:transpose(-1, -2), Li):expand(concat_shapes(self.batch_shape, self.event_shape, self.event_shape))
end
function MVN:mean() return self.loc end
function MVN:mode() return self.loc end
function MVN:variance()
  return rawget(self, "_unbroadcasted_scale_tril"):pow(2):sum(-1):expand(concat_shapes(self.batch_shape, self.event_shape))
end
function MVN:rsample(shape, opts)
  shape, opts = opts_of(shape, opts, self._name .. ".rsample")
  local s, o = standard_shape(self, shape, opts)
  local eps = T.randn(s, o)
  local Lm = rawget(self, "_unbroadcasted_scale_tril")
  return self.loc + (Lm * eps:unsqueeze(-2)):sum(-1)
end
function MVN:log_prob(value)
  self:_validate_sample(value)
  local Lm = rawget(self, "_unbroadcasted_scale_tril")
  local diff = value - self.loc
  local k = self.event_shape[1]
  -- broadcast L's batch against diff's
  local db = {}
  for i = 1, #diff.shape - 1 do db[i] = diff.shape[i] end
  local lb = {}
  for i = 1, #Lm.shape - 2 do lb[i] = Lm.shape[i] end
  local b = bshape(db, lb)
  local Lx = Lm:expand(concat_shapes(b, { k, k }))
  diff = diff:expand(concat_shapes(b, { k }))
  local z = tri_solve(Lx, diff)
  local m = z:pow(2):sum(-1)
  local half_log_det = diag_of(Lx):log():sum(-1)
  return -0.5 * (k * math.log(2 * pi) + m) - half_log_det
end
function MVN:entropy()
  local k = self.event_shape[1]
  local half_log_det = diag_of(rawget(self, "_unbroadcasted_scale_tril")):log():sum(-1)
  local h = 0.5 * k * (1.0 + math.log(2 * pi)) + half_log_det
  if #self.batch_shape == 0 then return h end
  return h:expand(self.batch_shape)
end
function MVN:expand(batch_shape)
  local k = self.event_shape[1]
  return MVN.new(self.loc:expand(concat_shapes(batch_shape, { k })),
    { scale_tril = rawget(self, "_unbroadcasted_scale_tril"):expand(concat_shapes(batch_shape, { k, k })), validate_args = false })
end
setmetatable(MVN, { __index = Distribution, __call = function(_, ...) return MVN.new(...) end })

---------------------------------------------------------------------------
-- inverse cdfs (PyTorch 1.13 has them for Normal, Uniform and Exponential)
---------------------------------------------------------------------------
function Normal:icdf(value)
  if not is_t(value) then fail("Normal.icdf", "The value argument to icdf must be a Tensor") end
  return self.loc + self.scale * T.erfinv(value * 2 - 1) * math.sqrt(2)
end
function Uniform:icdf(value)
  if not is_t(value) then fail("Uniform.icdf", "The value argument to icdf must be a Tensor") end
  self:_validate_sample(value)
  return value * (self.high - self.low) + self.low
end
function Exponential:icdf(value)
  if not is_t(value) then fail("Exponential.icdf", "The value argument to icdf must be a Tensor") end
  return -(-value):log1p() / self.rate
end

---------------------------------------------------------------------------
-- kl_divergence: every pair PyTorch 1.13 registers between the
-- distributions above (torch/distributions/kl.py), with its formula and
-- its infinities
---------------------------------------------------------------------------
local inf = math.huge
local euler_gamma = 0.57721566490153286060
local function inf_like(t) return T.full_like(t, inf) end
local function x_log_x(t) return t * t:log() end
local function lgamma(t) return T.lgamma(t) end
local function digamma(t) return T.digamma(t) end
local function fill_where(t, mask, v) return t:masked_fill(mask, v) end

local KL = {}
local function register(P, Q, f) KL[P] = KL[P] or {} KL[P][Q] = f end

register(Bernoulli, Bernoulli, function(p, q)
  local t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
  t1 = fill_where(fill_where(t1, q.probs:eq(0), inf), p.probs:eq(0), 0)
  local t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
  t2 = fill_where(fill_where(t2, q.probs:eq(1), inf), p.probs:eq(1), 0)
  return t1 + t2
end)
register(Beta, Beta, function(p, q)
  local sp = p.concentration1 + p.concentration0
  local sq = q.concentration1 + q.concentration0
  local t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sp)
  local t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sq)
  local t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
  local t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
  local t5 = (sq - sp) * digamma(sp)
  return t1 - t2 + t3 + t4 + t5
end)
register(Categorical, Categorical, function(p, q)
  local t = p.probs * (p.logits - q.logits)
  t = fill_where(t, q.probs:eq(0), inf)
  t = fill_where(t, p.probs:eq(0), 0)
  return t:sum(-1)
end)
register(Exponential, Exponential, function(p, q)
  local r = q.rate / p.rate
  return -r:log() + r - 1
end)
register(Gamma, Gamma, function(p, q)
  local t1 = q.concentration * (p.rate / q.rate):log()
  local t2 = lgamma(q.concentration) - lgamma(p.concentration)
  local t3 = (p.concentration - q.concentration) * digamma(p.concentration)
  local t4 = (q.rate - p.rate) * (p.concentration / p.rate)
  return t1 + t2 + t3 + t4
end)
register(MVN, MVN, function(p, q)
  if p.event_shape[1] ~= q.event_shape[1] then
    fail("kl_divergence", "KL-divergence between two Multivariate Normals with different event shapes cannot be computed")
  end
  local Lp, Lq = rawget(p, "_unbroadcasted_scale_tril"), rawget(q, "_unbroadcasted_scale_tril")
  local half_term1 = diag_of(Lq):log():sum(-1) - diag_of(Lp):log():sum(-1)
  local n = p.event_shape[1]
  local bp, bq = {}, {}
  for i = 1, #Lp.shape - 2 do bp[i] = Lp.shape[i] end
  for i = 1, #Lq.shape - 2 do bq[i] = Lq.shape[i] end
  local batch = bshape(bq, bp)
  if not batch then fail("kl_divergence", "shape mismatch: the batch shapes do not broadcast") end
  local Lq2 = Lq:expand(concat_shapes(batch, { n, n }))
  local Lp2 = Lp:expand(concat_shapes(batch, { n, n }))
  local term2 = T.linalg.solve_triangular(Lq2, Lp2, { upper = false }):pow(2):sum(-1):sum(-1)
  -- the Mahalanobis term: |Lq^-1 (q.loc - p.loc)|^2, batch shapes broadcast
  local diff = q.loc - p.loc
  local db = {}
  for i = 1, #diff.shape - 1 do db[i] = diff.shape[i] end
  local b3 = bshape(db, bq)
  local Lx = Lq:expand(concat_shapes(b3, { n, n }))
  local term3 = tri_solve(Lx, diff:expand(concat_shapes(b3, { n }))):pow(2):sum(-1)
  return half_term1 + (term2 + term3 - n) * 0.5
end)
register(Normal, Normal, function(p, q)
  local vr = (p.scale / q.scale):pow(2)
  local t1 = ((p.loc - q.loc) / q.scale):pow(2)
  return (vr + t1 - 1 - vr:log()) * 0.5
end)
register(Uniform, Uniform, function(p, q)
  local r = ((q.high - q.low) / (p.high - p.low)):log()
  return fill_where(r, T.logical_or(q.low:gt(p.low), q.high:lt(p.high)), inf)
end)
-- different families
register(Beta, Exponential, function(p, q)
  return -p:entropy() - q.rate:log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))
end)
register(Beta, Gamma, function(p, q)
  local t1 = -p:entropy()
  local t2 = lgamma(q.concentration) - q.concentration * q.rate:log()
  local t3 = (q.concentration - 1) * (digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0))
  local t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
  return t1 + t2 - t3 + t4
end)
register(Beta, Normal, function(p, q)
  local E = p.concentration1 / (p.concentration1 + p.concentration0)
  local var_normal = q.scale:pow(2)
  local t1 = -p:entropy()
  local t2 = (var_normal * 2 * pi):log() * 0.5
  local t3 = (E * (1 - E) / (p.concentration1 + p.concentration0 + 1) + E:pow(2)) * 0.5
  local t4 = q.loc * E
  local t5 = q.loc:pow(2) * 0.5
  return t1 + t2 + (t3 - t4 + t5) / var_normal
end)
register(Beta, Uniform, function(p, q)
  local r = -p:entropy() + (q.high - q.low):log()
  return fill_where(r, T.logical_or(q.low:gt(0), q.high:lt(1)), inf)
end)
register(Exponential, Gamma, function(p, q)
  local ratio = q.rate / p.rate
  local t1 = -q.concentration * ratio:log()
  return t1 + ratio + lgamma(q.concentration) + q.concentration * euler_gamma - (1 + euler_gamma)
end)
register(Exponential, Normal, function(p, q)
  local var_normal = q.scale:pow(2)
  local rate_sqr = p.rate:pow(2)
  local t1 = (rate_sqr * var_normal * 2 * pi):log() * 0.5
  local t2 = rate_sqr:reciprocal()
  local t3 = q.loc / p.rate
  local t4 = q.loc:pow(2) * 0.5
  return t1 - 1 + (t2 - t3 + t4) / var_normal
end)
register(Gamma, Exponential, function(p, q)
  return -p:entropy() - q.rate:log() + q.rate * p.concentration / p.rate
end)
register(Gamma, Normal, function(p, q)
  local var_normal = q.scale:pow(2)
  local beta_sqr = p.rate:pow(2)
  local t1 = (beta_sqr * var_normal * 2 * pi):log() * 0.5 - p.concentration - lgamma(p.concentration)
  local t2 = (p.concentration:pow(2) + p.concentration) * 0.5 / beta_sqr
  local t3 = q.loc * p.concentration / p.rate
  local t4 = q.loc:pow(2) * 0.5
  return t1 + (p.concentration - 1) * digamma(p.concentration) + (t2 - t3 + t4) / var_normal
end)
register(Uniform, Beta, function(p, q)
  local c = p.high - p.low
  local t1 = c:log()
  local t2 = (q.concentration1 - 1) * (x_log_x(p.high) - x_log_x(p.low) - c) / c
  local t3 = (q.concentration0 - 1) * (x_log_x(1 - p.high) - x_log_x(1 - p.low) + c) / c
  local t4 = lgamma(q.concentration1) + lgamma(q.concentration0) - lgamma(q.concentration1 + q.concentration0)
  local r = t3 + t4 - t1 - t2
  return fill_where(r, T.logical_or(p.high:gt(1), p.low:lt(0)), inf)
end)
register(Uniform, Exponential, function(p, q)
  local r = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate):log()
  return fill_where(r, p.low:lt(0), inf)
end)
register(Uniform, Gamma, function(p, q)
  local c = p.high - p.low
  local t1 = c:log()
  local t2 = lgamma(q.concentration) - q.concentration * q.rate:log()
  local t3 = (1 - q.concentration) * (x_log_x(p.high) - x_log_x(p.low) - c) / c
  local t4 = q.rate * (p.high + p.low) / 2
  return fill_where(-t1 + t2 + t3 + t4, p.low:lt(0), inf)
end)
register(Uniform, Normal, function(p, q)
  local c = p.high - p.low
  local t1 = (q.scale * math.sqrt(pi * 2) / c):log()
  local t2 = c:pow(2) / 12
  local t3 = ((p.high + p.low - q.loc * 2) / 2):pow(2)
  return t1 + (t2 + t3) * 0.5 / q.scale:pow(2)
end)
-- support mismatches: the divergence is infinite (shaped like p's first parameter)
for _, pq in ipairs {
  { Exponential, Beta, "rate" }, { Exponential, Uniform, "rate" },
  { Gamma, Beta, "concentration" }, { Gamma, Uniform, "concentration" },
  { Normal, Beta, "loc" }, { Normal, Exponential, "loc" }, { Normal, Gamma, "loc" }, { Normal, Uniform, "loc" },
} do
  local key = pq[3]
  register(pq[1], pq[2], function(p) return inf_like(p[key]) end)
end

function D.kl_divergence(p, q)
  local mp, mq = getmetatable(p), getmetatable(q)
  local f = KL[mp] and KL[mp][mq]
  if not f then
    local function nm(m, x)
      if type(m) == "table" and m._name then return m._name end
      return type(x)
    end
    fail("kl_divergence", ("no KL divergence implemented for %s and %s"):format(nm(mp, p), nm(mq, q)))
  end
  return f(p, q)
end

---------------------------------------------------------------------------
-- T.erfinv (unless the core has it): Giles' approximation ("Approximating
-- the erfinv function", GPU Computing Gems, 2011) refined by two Newton
-- steps on erf in float64, so the result is exact to a few ulp in every
-- floating dtype; +-1 give +-inf and |x| > 1 NaN, as PyTorch.  The gradient
-- is sqrt(pi)/2 exp(erfinv(x)^2).
---------------------------------------------------------------------------
local function erfinv_forward(x)
  local dt = x.dtype
  local y = x:to(T.float64)
  local w = -((1 - y) * (1 + y)):log()
  local ws = w - 2.5
  local p1 = T.full_like(ws, 2.81022636e-08)
  for _, c in ipairs { 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
    -0.00417768164, 0.246640727, 1.50140941 } do p1 = p1 * ws + c end
  local wl = w:sqrt() - 3
  local p2 = T.full_like(wl, -0.000200214257)
  for _, c in ipairs { 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
    0.00943887047, 1.00167406, 2.83297682 } do p2 = p2 * wl + c end
  local r = T.where(w:lt(5), p1, p2) * y
  local k = 2 / math.sqrt(pi)
  for _ = 1, 2 do
    local step = (T.erf(r) - y) / ((-(r * r)):exp() * k)
    r = r - T.where(step:isfinite(), step, T.zeros_like(step))
  end
  r = T.where(y:abs():eq(1), y * inf, r)
  r = T.where(y:abs():gt(1), T.full_like(r, 0 / 0), r)
  return r:to(dt)
end
local erfinv_f = autograd.Function {
  name = "Erfinv",
  forward = function(ctx, x)
    local r = erfinv_forward(x)
    ctx:save_for_backward(r)
    return r
  end,
  backward = function(ctx, g)
    local r = ctx.saved_tensors[1]
    return g * (r * r):exp() * (math.sqrt(pi) / 2)
  end,
}
if not T.erfinv then
  T.erfinv = function(x, ...)
    check_special("erfinv", x, 1, ...)
    if not (x.dtype == T.float64 or x.dtype == T.float32 or x.dtype == T.float16 or x.dtype == T.bfloat16) then
      x = x:to(T.get_default_dtype())   -- integers and bools promote to the default float type, as torch
    end
    return erfinv_f(x)
  end
  T._methods.erfinv = T.erfinv
end

return D
