-- T.distributions: closed forms against PyTorch 1.13 (spec/fixtures/distributions.lua,
-- made by tools/gen_distributions_fixtures.py), samplers checked statistically at
-- fixed seeds, reparameterised gradients, PyTorch's validation errors.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local D = T.distributions
local fx = dofile("spec/fixtures/distributions.lua")

local function flat(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for _, x in ipairs(v) do flat(x, out) end
  return out
end
local function close(want, got, rtol, atol)
  rtol, atol = rtol or 1e-10, atol or 1e-12
  local w, g = flat(want), flat(T.is_tensor and T.is_tensor(got) and got:totable() or (type(got) == "userdata" and got:totable() or got))
  assert.are.equal(#w, #g, "element count")
  for i = 1, #w do
    local a, b = w[i], g[i]
    if a ~= a then assert.is_true(b ~= b, ("element %d: want nan, got %s"):format(i, tostring(b)))
    elseif a == math.huge or a == -math.huge then assert.are.equal(a, b)
    else
      assert.is_true(math.abs(a - b) <= atol + rtol * math.abs(a),
        ("element %d: want %.17g, got %.17g"):format(i, a, b))
    end
  end
end
local function f64(v) return T.tensor(v, { dtype = T.float64 }) end
local function raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  assert.is_truthy(tostring(err):find(substr, 1, true), "error was: " .. tostring(err))
end

local ctors = {
  Normal = function(p) return D.Normal(f64(p[1]), f64(p[2])) end,
  Uniform = function(p) return D.Uniform(f64(p[1]), f64(p[2])) end,
  Exponential = function(p) return D.Exponential(f64(p[1])) end,
  Gamma = function(p) return D.Gamma(f64(p[1]), f64(p[2])) end,
  Beta = function(p) return D.Beta(f64(p[1]), f64(p[2])) end,
  Bernoulli = function(p) return D.Bernoulli(f64(p[1])) end,
  BernoulliLogits = function(p) return D.Bernoulli(nil, f64(p[1])) end,
  Categorical = function(p) return D.Categorical(f64(p[1])) end,
  CategoricalLogits = function(p) return D.Categorical({ logits = f64(p[1]) }) end,
  MultivariateNormal = function(p, kw)
    local k, v = next(kw)
    return D.MultivariateNormal(f64(p[1]), { [k] = f64(v) })
  end,
}

describe("distributions against PyTorch 1.13", function()
  for _, c in ipairs(fx.cases) do
    local label = c.name .. (c.kwargs and (" (" .. next(c.kwargs) .. ")") or "")
    it(label .. ": log_prob, entropy, moments and shapes", function()
      local d = ctors[c.name](c.params, c.kwargs)
      local value = c.name:find("Categorical") and T.tensor(c.value) or f64(c.value)
      close(c.log_prob, d:log_prob(value), 1e-9)
      close(c.entropy, d:entropy(), 1e-9)
      for _, p in ipairs({ "mean", "variance", "stddev", "probs", "logits", "covariance_matrix", "scale_tril",
                           "precision_matrix" }) do
        if c[p] ~= nil then close(c[p], d[p], 1e-9, 1e-10) end
      end
      assert.are.same(c.batch_shape, d.batch_shape)
      assert.are.same(c.event_shape, d.event_shape)
    end)
  end

  it("lgamma, digamma and polygamma(1, x)", function()
    local s = fx.special
    close(s.lgamma, T.lgamma(f64(s.x)), 1e-12, 1e-13)
    close(s.digamma, T.digamma(f64(s.x)), 1e-11, 1e-12)
    close(s.trigamma, T.polygamma(1, f64(s.x)), 1e-9, 1e-12)   -- PyTorch's own value is off by 3e-10 at 0.5
    assert.are.equal(T.float32, T.lgamma(T.tensor({ 1, 2 })).dtype)   -- integers give the default dtype
  end)

  it("lgamma and digamma have gradients (checked numerically)", function()
    local x = T.tensor({ 0.7, 1.5, 4.0 }, { dtype = T.float64, requires_grad = true })
    assert.is_true(T.autograd.gradcheck(function(a) return T.lgamma(a) end, { x }))
    assert.is_true(T.autograd.gradcheck(function(a) return T.digamma(a) end, { x }))
  end)

  it("the implicit Gamma gradient matches PyTorch's _standard_gamma_grad", function()
    local s = fx.special
    close(s.gamma_grad, T._standard_gamma_grad(f64(s.alpha), f64(s.sample)), 2e-4, 1e-8)
  end)

  it("kl_divergence for Normal, Exponential and Bernoulli", function()
    local pairs_ = {
      Normal = { D.Normal(f64({ 0, 1 }), f64({ 1, 2 })), D.Normal(f64({ 1, 0 }), f64({ 0.5, 2 })) },
      Exponential = { D.Exponential(f64({ 0.5, 3 })), D.Exponential(f64({ 2, 1 })) },
      Bernoulli = { D.Bernoulli(f64({ 0.2, 0.7 })), D.Bernoulli(f64({ 0.5, 0.1 })) },
    }
    for _, k in ipairs(fx.kl) do
      local p = pairs_[k.name]
      close(k.kl, D.kl_divergence(p[1], p[2]), 1e-9)
    end
  end)
end)

-- mean and variance of n draws within z standard errors of the truth
local function moments(t)
  local v = flat(t:to(T.float64):totable())
  local n, s, s2 = #v, 0, 0
  for _, x in ipairs(v) do s = s + x end
  local m = s / n
  for _, x in ipairs(v) do s2 = s2 + (x - m) ^ 2 end
  return m, s2 / (n - 1), n
end
local function check_moments(t, mean, var, z)
  z = z or 5
  local m, v, n = moments(t)
  assert.is_true(math.abs(m - mean) <= z * math.sqrt(var / n), ("mean %g, expected %g"):format(m, mean))
  -- the sample variance's standard error, for a distribution with finite 4th moment,
  -- is below sqrt(2/(n-1)) var * a kurtosis factor: a loose 3x bound
  assert.is_true(math.abs(v - var) <= z * 3 * var * math.sqrt(2 / (n - 1)), ("variance %g, expected %g"):format(v, var))
end

describe("distribution samplers (fixed seed, statistical)", function()
  local N = 20000

  it("Normal, Uniform, Exponential, Gamma, Beta: sample moments", function()
    local g = T.Generator(11)
    local o = { generator = g }
    check_moments(D.Normal(f64(2.0), f64(3.0)):sample({ N }, o), 2, 9)
    check_moments(D.Uniform(f64(-1.0), f64(3.0)):sample({ N }, o), 1, 16 / 12)
    check_moments(D.Exponential(f64(4.0)):sample({ N }, o), 0.25, 1 / 16)
    for _, a in ipairs({ 0.3, 1.0, 2.5, 40.0 }) do
      check_moments(D.Gamma(f64(a), f64(2.0)):sample({ N }, o), a / 2, a / 4)
    end
    local a, b = 2.0, 5.0
    check_moments(D.Beta(f64(a), f64(b)):sample({ N }, o), a / (a + b), a * b / ((a + b) ^ 2 * (a + b + 1)))
    check_moments(D.Beta(f64(0.3), f64(0.4)):sample({ N }, o), 0.3 / 0.7, 0.3 * 0.4 / (0.49 * 1.7))
  end)

  it("Beta(2, 2) and Gamma(2, 3): Kolmogorov-Smirnov", function()
    local function ks(t, cdf)
      local v = flat(t:totable())
      table.sort(v)
      local n, d = #v, 0
      for i, x in ipairs(v) do
        local f = cdf(x)
        d = math.max(d, math.abs(i / n - f), math.abs(f - (i - 1) / n))
      end
      assert.is_true(d < 1.95 / math.sqrt(n), "KS statistic " .. d)
    end
    local g = T.Generator(12)
    ks(D.Beta(f64(2.0), f64(2.0)):sample({ N }, { generator = g }), function(x) return 3 * x * x - 2 * x ^ 3 end)
    ks(D.Gamma(f64(2.0), f64(3.0)):rsample({ N }, { generator = g }),
      function(x) return 1 - math.exp(-3 * x) * (1 + 3 * x) end)
  end)

  it("Bernoulli and Categorical: frequencies (chi-square)", function()
    T.manual_seed(21)
    local s = D.Bernoulli(T.tensor({ 0.1, 0.5, 0.9 })):sample({ N })
    assert.are.same({ N, 3 }, s.shape)
    local m = s:mean(1):totable()
    for i, p in ipairs({ 0.1, 0.5, 0.9 }) do
      assert.is_true(math.abs(m[i] - p) < 5 * math.sqrt(p * (1 - p) / N))
    end
    local probs = { 0.1, 0.2, 0.3, 0.4 }
    local c = D.Categorical(T.tensor(probs)):sample({ N }):totable()
    local counts = { 0, 0, 0, 0 }
    for _, k in ipairs(c) do counts[k] = counts[k] + 1 end   -- 1-based categories
    local chi2 = 0
    for k = 1, 4 do chi2 = chi2 + (counts[k] - N * probs[k]) ^ 2 / (N * probs[k]) end
    assert.is_true(chi2 < 16.27, "chi2 = " .. chi2)   -- 3 degrees of freedom, p = 0.001
  end)

  it("MultivariateNormal: sample mean and covariance", function()
    local cov = f64({ { 2.0, 0.6 }, { 0.6, 1.0 } })
    local d = D.MultivariateNormal(f64({ 1.0, -1.0 }), cov)
    local x = d:sample({ N }, { generator = T.Generator(5) })
    assert.are.same({ N, 2 }, x.shape)
    local mu = x:mean(1)
    close({ 1.0, -1.0 }, mu, 0, 5 * math.sqrt(2 / N))
    local xc = x - mu
    local c = T.matmul(xc:t(), xc) / (N - 1)
    close({ { 2.0, 0.6 }, { 0.6, 1.0 } }, c, 0, 0.08)
  end)

  it("sample shapes are sample_shape .. batch_shape .. event_shape", function()
    assert.are.same({ 4, 5, 2 }, D.Normal(T.zeros(2), 1.0):sample({ 4, 5 }).shape)
    assert.are.same({ 3 }, D.Categorical(T.ones(3, 4)):sample().shape)
    assert.are.same({ 6, 3 }, D.Categorical(T.ones(3, 4)):sample({ 6 }).shape)
    assert.are.same({ 7, 2, 3 }, D.MultivariateNormal(T.zeros(2, 3), T.eye(3)):sample({ 7 }).shape)
    assert.are.same({}, D.Gamma(1.0, 1.0):sample().shape)
    assert.are.same({ 0, 2 }, D.Exponential(T.ones(2)):sample({ 0 }).shape)
  end)

  it("sample does not record a graph; rsample does", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local loc = T.tensor({ 0.0 }, { requires_grad = true })
    local d = D.Normal(loc, 1.0)
    assert.is_false(d:sample().requires_grad)
    assert.is_true(d:rsample().requires_grad)
  end)

  it("{generator = g} makes samples reproducible and leaves the default stream alone", function()
    T.manual_seed(3)
    local want = T.rand(4):totable()
    T.manual_seed(3)
    local a = D.Gamma(2.0, 1.0):sample({ 5 }, { generator = T.Generator(9) })
    local b = D.Gamma(2.0, 1.0):sample({ 5 }, { generator = T.Generator(9) })
    assert.are.same(a:totable(), b:totable())
    assert.are.same(want, T.rand(4):totable())
  end)
end)

describe("reparameterised gradients", function()
  it("Normal rsample: d mean / d loc = 1, d mean / d scale = mean of eps", function()
    local loc = T.tensor({ 1.0 }, { dtype = T.float64, requires_grad = true })
    local scale = T.tensor({ 2.0 }, { dtype = T.float64, requires_grad = true })
    local x = D.Normal(loc, scale):rsample({ 1000 }, { generator = T.Generator(1) })
    x:mean():backward()
    close({ 1.0 }, loc.grad, 1e-12)
    local eps = ((x - loc) / scale):detach():mean():item()
    close({ eps }, scale.grad, 1e-9)
  end)

  it("Gamma rsample is differentiable in concentration and rate (E[x] = a / b)", function()
    local a = T.tensor({ 2.0, 0.5 }, { dtype = T.float64, requires_grad = true })
    local b = T.tensor({ 3.0, 1.5 }, { dtype = T.float64, requires_grad = true })
    local x = D.Gamma(a, b):rsample({ 40000 }, { generator = T.Generator(2) })
    x:mean(1):sum():backward()
    -- d E[x] / d a = 1 / b, d E[x] / d b = -a / b^2, up to Monte-Carlo error
    close({ 1 / 3, 1 / 1.5 }, a.grad, 0.05)
    close({ -2 / 9, -0.5 / 2.25 }, b.grad, 0.05)
  end)

  it("T._standard_gamma records StandardGammaBackward0", function()
    local a = T.tensor({ 1.0, 3.0 }, { dtype = T.float64, requires_grad = true })
    local x = T._standard_gamma(a, { generator = T.Generator(6) })
    assert.is_true(x.requires_grad)
    x:sum():backward()
    close(T._standard_gamma_grad(a:detach(), x:detach()):totable(), a.grad, 1e-12)
  end)

  it("Beta rsample is differentiable in both concentrations", function()
    local c1 = T.tensor(2.0, { dtype = T.float64, requires_grad = true })
    local c0 = T.tensor(3.0, { dtype = T.float64, requires_grad = true })
    D.Beta(c1, c0):rsample({ 40000 }, { generator = T.Generator(4) }):mean():backward()
    -- E = c1 / (c1 + c0): dE/dc1 = c0 / (c1 + c0)^2 = 0.12, dE/dc0 = -c1 / (c1 + c0)^2 = -0.08
    close({ 0.12 }, c1.grad, 0.08)
    close({ -0.08 }, c0.grad, 0.08)
  end)

  it("Uniform, Exponential and MultivariateNormal rsample carry gradients to their parameters", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local hi = T.tensor(2.0, { requires_grad = true })
    D.Uniform(0.0, hi):rsample({ 100 }):mean():backward()
    assert.is_true(hi.grad:item() > 0)
    local r = T.tensor(2.0, { requires_grad = true })
    D.Exponential(r):rsample({ 100 }):mean():backward()
    assert.is_true(r.grad:item() < 0)
    local loc = T.zeros(2, { requires_grad = true })
    local Lm = T.tensor({ { 1.0, 0 }, { 0.5, 1 } }, { requires_grad = true })
    D.MultivariateNormal(loc, { scale_tril = Lm }):rsample({ 10 }):sum():backward()
    close({ 10, 10 }, loc.grad, 1e-6)
    assert.are.same({ 2, 2 }, Lm.grad.shape)
  end)

  it("log_prob is differentiable in the parameters (Normal, Gamma, MultivariateNormal)", function()
    local loc = T.tensor({ 0.3 }, { dtype = T.float64, requires_grad = true })
    local sc = T.tensor({ 1.7 }, { dtype = T.float64, requires_grad = true })
    assert.is_true(T.autograd.gradcheck(function(l, s) return D.Normal(l, s):log_prob(f64({ 0.9 })) end, { loc, sc }))
    local a = T.tensor({ 2.5 }, { dtype = T.float64, requires_grad = true })
    assert.is_true(T.autograd.gradcheck(function(x) return D.Gamma(x, f64({ 1.5 })):log_prob(f64({ 0.8 })) end, { a }))
    local cov = T.tensor({ { 2.0, 0.3 }, { 0.3, 1.0 } }, { dtype = T.float64, requires_grad = true })
    assert.is_true(T.autograd.gradcheck(function(c)
      return D.MultivariateNormal(f64({ 0, 0 }), (c + c:t()) / 2):log_prob(f64({ 0.5, -0.2 }))
    end, { cov }))
  end)
end)

describe("distribution helpers", function()
  it("expand, mode, cdf, sample_n, enumerate_support, has_rsample", function()
    local d = D.Normal(T.tensor({ 0.0, 1.0 }), 2.0):expand({ 3, 2 })
    assert.are.same({ 3, 2 }, d.batch_shape)
    assert.are.same({ 5, 3, 2 }, d:sample({ 5 }).shape)
    assert.are.same({ 3 }, D.Gamma(2.0, 1.0):expand({ 3 }).batch_shape)
    assert.are.same({ 2, 4 }, D.Categorical(T.ones(3)):expand({ 4 }):sample({ 2 }).shape)
    close({ 0.5, 0.5 * (1 + 0.38292492254802624) }, D.Normal(0.0, 1.0):cdf(f64({ 0.0, 0.5 })), 1e-6)
    close({ 1 - math.exp(-2) }, D.Exponential(f64({ 2.0 })):cdf(f64({ 1.0 })), 1e-12)
    close({ 0.25 }, D.Uniform(f64(0.0), f64(4.0)):cdf(f64({ 1.0 })), 1e-12)
    assert.are.same({ 3, 1 }, D.Categorical(T.tensor({ { 0.1, 0.2, 0.7 }, { 0.8, 0.1, 0.1 } })).mode:totable())
    assert.are.same({ 1, 2, 3 }, D.Categorical(T.ones(3)):enumerate_support():totable())
    assert.are.same({ 4 }, D.Exponential(1.0):sample_n(4).shape)
    assert.is_true(D.Normal(0.0, 1.0).has_rsample)
    assert.is_false(D.Categorical(T.ones(2)).has_rsample)
    assert.matches("Normal%(loc: {2}, scale: {2}%)", tostring(D.Normal(T.zeros(2), 1.0)))
    -- a concentration of 1 has a finite density at the boundary (xlogy)
    close({ 0.0 }, D.Gamma(f64({ 1.0 }), f64({ 1.0 })):log_prob(f64({ 0.0 })), 1e-12)
    close({ math.log(2) }, D.Beta(f64({ 1.0 }), f64({ 2.0 })):log_prob(f64({ 0.0 })), 1e-12)
    -- the closed support of Uniform: log_prob(high) is -inf, not an error
    assert.are.equal(-math.huge, D.Uniform(0.0, 1.0):log_prob(T.tensor({ 1.0 })):item())
  end)
end)

describe("distribution errors (PyTorch's)", function()
  it("parameter constraints", function()
    raises("Expected parameter scale (Tensor of shape {}) of distribution Normal to satisfy the constraint GreaterThan(lower_bound=0.0)",
      D.Normal, 0.0, -1.0)
    raises("Expected parameter rate", D.Exponential, T.tensor({ 1.0, 0.0 }))
    raises("Expected parameter concentration", D.Gamma, -1.0, 1.0)
    raises("Expected parameter concentration0", D.Beta, 1.0, 0.0)
    raises("Expected parameter probs", D.Bernoulli, T.tensor({ 1.5 }))
    raises("Expected parameter probs", D.Categorical, T.tensor({ 0.5, -0.1 }))
    raises("Uniform is not defined when low>= high", D.Uniform, 1.0, 1.0)
    raises("Either `probs` or `logits` must be specified, but not both.", D.Bernoulli, 0.5, 0.1)
    raises("Either `probs` or `logits` must be specified, but not both.", D.Categorical, {})
    raises("`probs` parameter must be at least one-dimensional.", D.Categorical, T.tensor(0.5))
    raises("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.",
      D.MultivariateNormal, T.zeros(2), {})
    raises("loc must be at least one-dimensional.", D.MultivariateNormal, T.tensor(0.0), T.eye(1))
    raises("not positive-definite", D.MultivariateNormal, T.zeros(2), T.tensor({ { 1.0, 2 }, { 2, 1 } }))
    raises("LowerCholesky()", D.MultivariateNormal, T.zeros(2), { scale_tril = T.tensor({ { 1.0, 1 }, { 0, 1 } }) })
    raises("shape mismatch", D.Normal, T.zeros(2), T.ones(3))
  end)

  it("validate_args = false skips the checks", function()
    assert.has_no.errors(function() D.Normal(0.0, -1.0, { validate_args = false }) end)
  end)

  it("values outside the support", function()
    raises("Expected value argument (Tensor of shape {1}) to be within the support (GreaterThanEq(lower_bound=0.0)) of the distribution Exponential",
      function() return D.Exponential(1.0):log_prob(T.tensor({ -1.0 })) end)
    raises("within the support (Boolean())", function() return D.Bernoulli(0.5):log_prob(T.tensor({ 0.5 })) end)
    raises("IntegerInterval(lower_bound=1, upper_bound=3)",
      function() return D.Categorical(T.ones(3)):log_prob(T.tensor({ 0 })) end)
    raises("The value argument to log_prob must be a Tensor", function() return D.Normal(0.0, 1.0):log_prob(1.0) end)
    raises("has no reparameterised sampler", function() return D.Bernoulli(0.5):rsample() end)
  end)
  it("Distribution.stddev called without a distribution is refused by name (a raw Lua error: CI fuzz seed 1)", function()
    local D = T.distributions
    assert.has_error(function() D.Distribution.stddev(1) end,
      "ltensor.distributions.Distribution.stddev: bad self (ltensor.distributions.Distribution expected, got number); a method is called with ':', as d:stddev(...)")
  end)
end)
