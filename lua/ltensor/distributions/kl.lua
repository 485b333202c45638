-- ltensor.distributions.kl: kl_divergence between every pair PyTorch 1.13
-- registers (torch/distributions/kl.py).
require "ltensor.distributions.continuous"
require "ltensor.distributions.discrete"
require "ltensor.distributions.multivariate"
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local B = require "ltensor.distributions.base"
local softplus, tri_solve, diag_of = B.softplus, B.tri_solve, B.diag_of
local math, table, D = B.math, B.table, B.D
local fail, pi = B.fail, B.pi
local concat_shapes, bshape = B.concat_shapes, B.bshape
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
local Normal, Uniform, Exponential, Gamma, Beta = D.Normal, D.Uniform, D.Exponential, D.Gamma, D.Beta
local Bernoulli, Categorical, MVN = D.Bernoulli, D.Categorical, D.MultivariateNormal

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
return true
