-- ltensor.distributions.continuous: Normal, Uniform, Exponential, Gamma,
-- Beta, and the inverse cdfs.
require "ltensor.distributions.special"
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local B = require "ltensor.distributions.base"
local finfo_tiny, finfo_eps = B.finfo_tiny, B.finfo_eps
local math, D, is_t = B.math, B.D, B.is_t
local fail, pi, standard_gamma = B.fail, B.pi, B.standard_gamma
local broadcast_all = B.broadcast_all
local opts_of = B.opts_of
local all_true, xlogy, constraint_names, validate_param = B.all_true, B.xlogy, B.constraint_names, B.validate_param
local Distribution = B.Distribution
local class, standard_shape = B.class, B.standard_shape
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
return true
