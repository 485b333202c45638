-- ltensor.distributions.multivariate: MultivariateNormal.
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local B = require "ltensor.distributions.base"
local eye_like = B.eye_like
local tri_solve, diag_of = B.tri_solve, B.diag_of
local math, table, D, is_t = B.math, B.table, B.D, B.is_t
local fail, pi = B.fail, B.pi
local shape_str = B.shape_str
local concat_shapes, bshape = B.concat_shapes, B.bshape
local opts_of = B.opts_of
local all_true, validate_param = B.all_true, B.validate_param
local Distribution = B.Distribution
local class, standard_shape = B.class, B.standard_shape
---------------------------------------------------------------------------
-- MultivariateNormal
---------------------------------------------------------------------------
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
  batch_shape = B.batch_shape_arg(self._name .. ".expand", batch_shape)
  local k = self.event_shape[1]
  return MVN.new(self.loc:expand(concat_shapes(batch_shape, { k })),
    { scale_tril = rawget(self, "_unbroadcasted_scale_tril"):expand(concat_shapes(batch_shape, { k, k })), validate_args = false })
end
setmetatable(MVN, { __index = Distribution, __call = function(_, ...) return MVN.new(...) end })
return true
