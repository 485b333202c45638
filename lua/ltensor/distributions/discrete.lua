-- ltensor.distributions.discrete: Bernoulli and Categorical.
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local B = require "ltensor.distributions.base"
local finfo_eps, softplus = B.finfo_eps, B.softplus
local table, D, is_t = B.table, B.D, B.is_t
local fail, check_opts = B.fail, B.check_opts
local shape_str = B.shape_str
local concat_shapes, bshape, broadcast_all, size_arg = B.concat_shapes, B.bshape, B.broadcast_all, B.size_arg
local opts_of = B.opts_of
local all_true, constraint_names, validate_param = B.all_true, B.constraint_names, B.validate_param
local Distribution = B.Distribution
local class = B.class
---------------------------------------------------------------------------
-- Bernoulli and Categorical (probs or logits)
---------------------------------------------------------------------------
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
  batch_shape = B.batch_shape_arg(self._name .. ".expand", batch_shape)
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
  batch_shape = B.batch_shape_arg(self._name .. ".expand", batch_shape)
  local p = rawget(self, "_probs")
  local s = concat_shapes(batch_shape, { self._num_events })
  if p then return Categorical.new(p:expand(s), nil, { validate_args = false }) end
  return Categorical.new(nil, rawget(self, "_logits"):expand(s), { validate_args = false })
end
setmetatable(Categorical, { __index = Distribution, __call = function(_, ...) return Categorical.new(...) end })
return true
