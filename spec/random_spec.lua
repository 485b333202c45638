-- Random generators and samplers: T.Generator streams and state, {generator = g}
-- on every sampling function, and each sampler checked statistically at a
-- fixed seed (moments within z standard errors, a Kolmogorov-Smirnov test for
-- continuous samplers, a chi-square test for discrete ones).
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local function flat(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for _, x in ipairs(v) do flat(x, out) end
  return out
end
local function vals(t) return flat(t:to(T.float64):totable()) end
local function raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  assert.is_truthy(tostring(err):find(substr, 1, true), "error was: " .. tostring(err))
end

-- Kolmogorov-Smirnov: sup |F_n - F| below the p = 0.001 critical value 1.95 / sqrt(n)
local function ks(values, cdf)
  table.sort(values)
  local n, d = #values, 0
  for i, x in ipairs(values) do
    local f = cdf(x)
    d = math.max(d, math.abs(i / n - f), math.abs(f - (i - 1) / n))
  end
  assert.is_true(d < 1.95 / math.sqrt(n), ("KS statistic %g >= %g"):format(d, 1.95 / math.sqrt(n)))
end
-- chi-square over categories (expected counts), below the p = 0.001 critical value
local chi2_crit = { 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88, 29.59, 31.26, 32.91, 34.53,
  36.12, 37.70, 39.25, 40.79, 42.31, 43.82, 45.31 }
local function chi2(counts, expected)
  local s, k = 0, 0
  for i, e in pairs(expected) do
    s = s + ((counts[i] or 0) - e) ^ 2 / e
    k = k + 1
  end
  assert.is_true(s < chi2_crit[k - 1], ("chi-square %g with %d categories"):format(s, k))
end
local function mean_var(v)
  local n, s = #v, 0
  for _, x in ipairs(v) do s = s + x end
  local m, s2 = s / n, 0
  for _, x in ipairs(v) do s2 = s2 + (x - m) ^ 2 end
  return m, s2 / (n - 1), n
end
-- mean within 5 standard errors; variance within 5 of its standard errors
-- (kurt = the distribution's 4th standardised moment)
local function moments(v, mean, var, kurt)
  local m, s2, n = mean_var(v)
  assert.is_true(math.abs(m - mean) <= 5 * math.sqrt(var / n), ("mean %g, expected %g"):format(m, mean))
  local se = var * math.sqrt(((kurt or 3) - 1) / n)
  assert.is_true(math.abs(s2 - var) <= 5 * se, ("variance %g, expected %g"):format(s2, var))
end
local function erf(x)   -- W. J. Cody's rational approximations are overkill here: A&S 7.1.26, |err| < 1.5e-7
  local s = x < 0 and -1 or 1
  x = math.abs(x)
  local t = 1 / (1 + 0.3275911 * x)
  local y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * math.exp(-x * x)
  return s * y
end
local function normal_cdf(mu, sd) return function(x) return 0.5 * (1 + erf((x - mu) / (sd * math.sqrt(2)))) end end

local N = 20000

describe("T.Generator", function()
  it("is seeded by its argument or PyTorch's default seed", function()
    assert.are.equal(7, T.Generator(7):initial_seed())
    assert.are.equal(67280421310721, T.Generator():initial_seed())
    assert.are.equal("cpu", T.Generator().device)
    assert.matches("ltensor.Generator%(initial_seed=7%)", tostring(T.Generator(7)))
    local g = T.Generator()
    assert.are.equal(g, g:manual_seed(12))   -- returns itself, as PyTorch
    assert.are.equal(12, g:initial_seed())
    local s = g:seed()
    assert.are.equal("integer", math.type(s))
    assert.are.equal(s, g:initial_seed())
  end)

  it("gives the same stream for the same seed, on every machine", function()
    local a = T.rand(5, { generator = T.Generator(42), dtype = T.float64 }):totable()
    local b = T.rand(5, { generator = T.Generator(42), dtype = T.float64 }):totable()
    assert.are.same(a, b)
    -- the default generator seeded with the same number draws the same words
    T.manual_seed(42)
    assert.are.same(a, T.rand(5, { dtype = T.float64 }):totable())
    T.manual_seed(42)
    assert.are.same({ 42, 2, 9, 93, 76, 84, 54, 7 }, T.randint(0, 100, { 8 }):totable())
    assert.are.same({ 42, 2, 9, 93, 76, 84, 54, 7 }, T.randint(0, 100, { 8 }, { generator = T.Generator(42) }):totable())
  end)

  it("streams of different generators are independent", function()
    local g1, g2 = T.Generator(1), T.Generator(2)
    local x = vals(T.randn(N, { generator = g1, dtype = T.float64 }))
    local y = vals(T.randn(N, { generator = g2, dtype = T.float64 }))
    local sxy = 0
    for i = 1, N do sxy = sxy + x[i] * y[i] end
    assert.is_true(math.abs(sxy / N) < 5 / math.sqrt(N), "correlation " .. sxy / N)
    -- interleaving draws from two generators does not change either stream
    local a, b = T.Generator(3), T.Generator(4)
    local a1 = T.rand(3, { generator = a }):totable()
    T.rand(3, { generator = b })
    local a2 = T.rand(3, { generator = a }):totable()
    local ref = T.Generator(3)
    assert.are.same(a1, T.rand(3, { generator = ref }):totable())
    assert.are.same(a2, T.rand(3, { generator = ref }):totable())
  end)

  it("get_state / set_state reproduce the stream (uint8 tensor state)", function()
    local g = T.Generator(5)
    T.randn(7, { generator = g })   -- an odd count: no pending Box-Muller value is part of the state
    local st = g:get_state()
    assert.are.equal(T.uint8, st.dtype)
    assert.are.same({ 40 }, st.shape)
    local want = T.rand(6, { generator = g }):totable()
    assert.are.equal(g, g:set_state(st))
    assert.are.same(want, T.rand(6, { generator = g }):totable())
    -- a state moves between generators (and keeps the initial seed)
    local h = T.Generator(99):set_state(st)
    assert.are.same(want, T.rand(6, { generator = h }):totable())
    assert.are.equal(5, h:initial_seed())
    -- the default generator's state too
    T.manual_seed(8)
    local ds = T.get_rng_state()
    assert.are.equal(T.uint8, ds.dtype)
    local d1 = T.randn(4):totable()
    T.set_rng_state(ds)
    assert.are.same(d1, T.randn(4):totable())
    -- clone is an independent copy
    local c = g:clone()
    assert.are.same(T.rand(3, { generator = g }):totable(), T.rand(3, { generator = c }):totable())
  end)

  it("T.manual_seed returns the default generator", function()
    local g = T.manual_seed(31)
    assert.are.equal(T.default_generator, g)
    assert.are.equal(31, g:initial_seed())
  end)

  it("T.default_generator is the state's default generator", function()
    T.default_generator:manual_seed(17)
    assert.are.equal(17, T.initial_seed())
    local a = T.rand(3):totable()
    T.manual_seed(17)
    assert.are.same(a, T.rand(3, { generator = T.default_generator }):totable())
  end)

  it("raises PyTorch-style errors", function()
    local g = T.Generator()
    raises("ltensor.Generator.set_state: RNG state must be a uint8 tensor, got float32", g.set_state, g, T.zeros(40))
    raises("ltensor.Generator.set_state: expected an RNG state of 40 bytes, but found the input RNG state size to be 3",
      g.set_state, g, T.zeros(3, { dtype = T.uint8 }))
    raises("must not be all zero", g.set_state, g, T.zeros(40, { dtype = T.uint8 }))
    raises("ltensor.Generator: seed must be an integer", T.Generator, 1.5)
    raises("ltensor.Generator: only the \"cpu\" device is supported", T.Generator, { device = "cuda" })
    raises("ltensor.rand: generator must be a ltensor.Generator, got number", T.rand, 2, { generator = 3 })
    raises("ltensor.Generator.manual_seed: expected a ltensor.Generator", g.manual_seed, 5, 1)
  end)
end)

describe("{generator = g} on every sampling function", function()
  local calls = {
    rand = function(o) return T.rand(3, o) end,
    randn = function(o) return T.randn(3, o) end,
    rand_like = function(o) return T.rand_like(T.zeros(3), o) end,
    randn_like = function(o) return T.randn_like(T.zeros(3), o) end,
    randint = function(o) return T.randint(0, 10, { 3 }, o) end,
    randperm = function(o) return T.randperm(5, o) end,
    uniform_ = function(o) return T.zeros(3):uniform_(0, 1, o) end,
    normal_ = function(o) return T.zeros(3):normal_(0, 1, o) end,
    exponential_ = function(o) return T.zeros(3):exponential_(1, o) end,
    geometric_ = function(o) return T.zeros(3):geometric_(0.3, o) end,
    log_normal_ = function(o) return T.zeros(3):log_normal_(0, 1, o) end,
    cauchy_ = function(o) return T.zeros(3):cauchy_(0, 1, o) end,
    bernoulli_ = function(o) return T.zeros(3):bernoulli_(0.5, o) end,
    bernoulli_tensor = function(o) return T.zeros(3):bernoulli_(T.full({ 3 }, 0.5), o) end,
    random_ = function(o) return T.zeros(3):random_(0, 100, o) end,
    normal = function(o) return T.normal(T.zeros(3), 1.0, o) end,
    normal_numbers = function(o) return T.normal(0.0, 1.0, { 3 }, o) end,
    bernoulli = function(o) return T.bernoulli(T.full({ 3 }, 0.5), o) end,
    poisson = function(o) return T.poisson(T.full({ 3 }, 4.0), o) end,
    multinomial = function(o) return T.multinomial(T.ones(4), 3, o) end,
    standard_gamma = function(o) return T._standard_gamma(T.full({ 3 }, 2.0), o) end,
  }
  for name, call in pairs(calls) do
    it(name .. " draws from g and leaves the default stream untouched", function()
      if name == "poisson" or name == "standard_gamma" then   -- T.full({ 3 }, 4.0): an int64 tensor there
        host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
      end
      T.manual_seed(123)
      local want = T.rand(4):totable()
      T.manual_seed(123)
      local a = call({ generator = T.Generator(77) }):totable()
      assert.are.same(want, T.rand(4):totable())
      local b = call({ generator = T.Generator(77) }):totable()
      assert.are.same(a, b)
    end)
  end
end)

describe("continuous samplers (Kolmogorov-Smirnov and moments)", function()
  local function fresh(dt) return T.empty(N, { dtype = dt or T.float64 }) end

  it("uniform_(a, b)", function()
    local v = vals(fresh():uniform_(-2, 3, { generator = T.Generator(1) }))
    for _, x in ipairs(v) do assert.is_true(x >= -2 and x < 3) end
    moments(v, 0.5, 25 / 12, 1.8)
    ks(v, function(x) return (x + 2) / 5 end)
  end)

  it("rand in float32 and float16 (24 and 11 random bits)", function()
    ks(vals(T.rand(N, { generator = T.Generator(31) })), function(x) return x end)
    local h = vals(T.rand(N, { generator = T.Generator(32), dtype = T.float16 }))
    for _, x in ipairs(h) do assert.is_true(x >= 0 and x < 1) end
    -- 2^11 equally likely values k / 2^11: the empirical CDF at k / 2^11 is (k + 1) / 2^11
    ks(h, function(x) return math.min(1, x + 2 ^ -11) end)
  end)

  it("randn in float32 (single-precision Box-Muller): KS, moments and tails", function()
    local v = vals(T.randn(4 * N, { generator = T.Generator(33) }))
    ks(v, normal_cdf(0, 1))
    moments(v, 0, 1, 3)
    local beyond3 = 0
    for _, x in ipairs(v) do if math.abs(x) > 3 then beyond3 = beyond3 + 1 end end
    local p3 = 0.0026997960632601866
    assert.is_true(math.abs(beyond3 - 4 * N * p3) < 5 * math.sqrt(4 * N * p3), "beyond 3 sd: " .. beyond3)
  end)

  it("normal_(mean, std) and randn", function()
    local v = vals(fresh():normal_(3, 2, { generator = T.Generator(2) }))
    moments(v, 3, 4, 3)
    ks(v, normal_cdf(3, 2))
    ks(vals(T.randn(N, { generator = T.Generator(3), dtype = T.float64 })), normal_cdf(0, 1))
  end)

  it("exponential_(lambd)", function()
    local v = vals(fresh():exponential_(2.5, { generator = T.Generator(4) }))
    for _, x in ipairs(v) do assert.is_true(x >= 0) end
    moments(v, 0.4, 0.16, 9)
    ks(v, function(x) return 1 - math.exp(-2.5 * x) end)
    -- float32: the single-precision path
    local w = vals(T.empty(N):exponential_(0.5, { generator = T.Generator(40) }))
    moments(w, 2, 4, 9)
    ks(w, function(x) return 1 - math.exp(-0.5 * x) end)
    assert.are.same({ 1 / 0, 1 / 0 }, T.empty(2):exponential_(0):totable())
  end)

  it("log_normal_(mean, std)", function()
    local v = vals(fresh():log_normal_(0.5, 0.4, { generator = T.Generator(5) }))
    local m = math.exp(0.5 + 0.08)
    moments(v, m, (math.exp(0.16) - 1) * math.exp(1 + 0.16), 10)
    local c = normal_cdf(0.5, 0.4)
    ks(v, function(x) return c(math.log(x)) end)
  end)

  it("cauchy_(median, sigma)", function()
    local v = vals(fresh():cauchy_(1, 0.5, { generator = T.Generator(6) }))
    ks(v, function(x) return 0.5 + math.atan((x - 1) / 0.5) / math.pi end)
  end)

  it("T.normal with tensor and number arguments, broadcasting", function()
    local g = T.Generator(7)
    local v = vals(T.normal(T.full({ N }, -1.0, { dtype = T.float64 }), 0.5, { generator = g }))
    ks(v, normal_cdf(-1, 0.5))
    local w = T.normal(T.tensor({ { 0.0 }, { 10.0 } }, { dtype = T.float64 }), T.full({ N }, 2.0, { dtype = T.float64 }),
      { generator = g })
    assert.are.same({ 2, N }, w.shape)
    ks(vals(w[2]), normal_cdf(10, 2))
    ks(vals(T.normal(5.0, T.full({ N }, 3.0, { dtype = T.float64 }), { generator = g })), normal_cdf(5, 3))
    local z = T.normal(1.0, 2.0, { 2, 3 })
    assert.are.same({ 2, 3 }, z.shape)
    assert.are.equal(T.float32, z.dtype)
    assert.are.equal(T.float64, T.normal(0.0, 1.0, { 2 }, { dtype = T.float64 }).dtype)
    assert.are.equal(T.float64, T.normal(T.zeros(2, { dtype = T.float64 }), T.ones(2)).dtype)
    assert.are.same({ 0 }, T.normal(T.zeros(0), 1.0).shape)
  end)

  it("_standard_gamma (Marsaglia-Tsang) for small and large concentrations", function()
    local g = T.Generator(8)
    -- alpha = 2: F(x) = 1 - e^-x (1 + x)
    local v = vals(T._standard_gamma(T.full({ N }, 2.0, { dtype = T.float64 }), { generator = g }))
    ks(v, function(x) return 1 - math.exp(-x) * (1 + x) end)
    -- alpha = 1: exponential
    ks(vals(T._standard_gamma(T.ones(N, { dtype = T.float64 }), { generator = g })), function(x) return 1 - math.exp(-x) end)
    for _, a in ipairs({ 0.2, 0.5, 3.7, 100.0 }) do
      local w = vals(T._standard_gamma(T.full({ N }, a, { dtype = T.float64 }), { generator = g }))
      for _, x in ipairs(w) do assert.is_true(x > 0) end
      moments(w, a, a, 3 + 6 / a)
    end
  end)
end)

describe("discrete samplers (chi-square and moments)", function()
  it("geometric_(p): P(k) = (1 - p)^(k-1) p, k >= 1, float and integer tensors", function()
    local p = 0.3
    for _, dt in ipairs({ T.float64, T.int64, T.int32 }) do
      local v = vals(T.empty(N, { dtype = dt }):geometric_(p, { generator = T.Generator(9) }))
      local counts = {}
      local expected = {}
      for _, x in ipairs(v) do
        assert.is_true(x >= 1 and x == math.floor(x))
        local k = math.min(x, 10)
        counts[k] = (counts[k] or 0) + 1
      end
      for k = 1, 9 do expected[k] = N * (1 - p) ^ (k - 1) * p end
      expected[10] = N * (1 - p) ^ 9
      chi2(counts, expected)
      moments(v, 1 / p, (1 - p) / p ^ 2, 9 + p ^ 2 / (1 - p))
    end
  end)

  it("random_([from,] to) is uniform on the integers of the range", function()
    local v = vals(T.empty(N, { dtype = T.int64 }):random_(-3, 5, { generator = T.Generator(10) }))
    local counts, expected = {}, {}
    for _, x in ipairs(v) do counts[x] = (counts[x] or 0) + 1 end
    for k = -3, 4 do expected[k] = N / 8 end
    chi2(counts, expected)
    local w = vals(T.empty(N):random_(6, { generator = T.Generator(10) }))
    counts, expected = {}, {}
    for _, x in ipairs(w) do counts[x] = (counts[x] or 0) + 1 end
    for k = 0, 5 do expected[k] = N / 6 end
    chi2(counts, expected)
  end)

  it("randint and randperm are uniform", function()
    local v = vals(T.randint(1, 7, { N }, { generator = T.Generator(11) }))
    local counts, expected = {}, {}
    for _, x in ipairs(v) do counts[x] = (counts[x] or 0) + 1 end
    for k = 1, 6 do expected[k] = N / 6 end
    chi2(counts, expected)
    -- where 1 lands in randperm(5): uniform over the 5 positions
    local g = T.Generator(12)
    counts, expected = {}, {}
    for _ = 1, 2000 do
      local p = T.randperm(5, { generator = g }):totable()
      for i = 1, 5 do if p[i] == 1 then counts[i] = (counts[i] or 0) + 1 end end
    end
    for i = 1, 5 do expected[i] = 400 end
    chi2(counts, expected)
  end)

  it("bernoulli_(p) and bernoulli_(tensor), T.bernoulli", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local v = vals(T.empty(N, { dtype = T.float64 }):bernoulli_(0.3, { generator = T.Generator(13) }))
    moments(v, 0.3, 0.21, 1 / 0.21 - 3)
    local p = T.tensor({ 0.0, 0.25, 1.0 }, { dtype = T.float64 })
    local t = T.empty(N, 3):bernoulli_(p, { generator = T.Generator(14) })
    local m = t:mean(1):totable()
    assert.are.equal(0, m[1])
    assert.are.equal(1, m[3])
    assert.is_true(math.abs(m[2] - 0.25) < 5 * math.sqrt(0.25 * 0.75 / N))
    local b = T.bernoulli(T.full({ N }, 0.7, { dtype = T.float64 }), { generator = T.Generator(15) })
    moments(vals(b), 0.7, 0.21, 1 / 0.21 - 3)
    local c = T.bernoulli(T.zeros(N, { dtype = T.float64 }), 0.4, { generator = T.Generator(15) })
    moments(vals(c), 0.4, 0.24, 1 / 0.24 - 3)
    assert.are.same({ true, false }, T.empty(2, { dtype = T.bool }):bernoulli_(T.tensor({ 1.0, 0.0 })):totable())
  end)

  it("bernoulli_(p) into float32 (a dropout mask): 0/1 values, p = 0 and 1 exact, odd lengths, strided targets", function()
    -- float32 takes two 24-bit uniforms per word: u < p exactly when k < ceil(p 2^24)
    local v = vals(T.empty(N):bernoulli_(0.3, { generator = T.Generator(21) }))
    moments(v, 0.3, 0.21, 1 / 0.21 - 3)
    for _, x in ipairs(v) do assert.is_true(x == 0 or x == 1) end
    assert.are.equal(0, T.ones(1001):bernoulli_(0):sum():item())
    assert.are.equal(1001, T.zeros(1001):bernoulli_(1):sum():item())
    -- 2^-24 is the smallest probability above 0: only k = 0 passes
    local tiny = T.empty(4097):bernoulli_(2 ^ -24, { generator = T.Generator(22) })
    assert.is_true(tiny:sum():item() <= 2)
    -- a strided target: written through a contiguous temporary, the rest untouched
    local big = T.full({ 4, 6 }, 7)
    local col = big:select(2, 2)
    col:bernoulli_(1)
    assert.are.same({ 1, 1, 1, 1 }, col:totable())
    assert.are.equal(7 * 20 + 4, big:sum():item())
    -- the same generator state gives the same mask
    local a1 = T.empty(1001):bernoulli_(0.5, { generator = T.Generator(23) })
    local a2 = T.empty(1001):bernoulli_(0.5, { generator = T.Generator(23) })
    assert.is_true(T.equal(a1, a2))
  end)

  it("T.poisson(rates): small rates by multiplication, large by transformed rejection", function()
    local g = T.Generator(16)
    for _, lam in ipairs({ 0.5, 3.0, 12.0, 250.0 }) do
      local v = vals(T.poisson(T.full({ N }, lam, { dtype = T.float64 }), { generator = g }))
      for _, x in ipairs(v) do assert.is_true(x >= 0 and x == math.floor(x)) end
      moments(v, lam, lam, 3 + 1 / lam)
    end
    -- pmf of rate 3 by chi-square over 0..7, 8+
    local v = vals(T.poisson(T.full({ N }, 3.0, { dtype = T.float64 }), { generator = g }))
    local counts, expected = {}, {}
    for _, x in ipairs(v) do local k = math.min(x, 8) counts[k] = (counts[k] or 0) + 1 end
    local tail = 1
    for k = 0, 7 do
      local pk = math.exp(-3) * 3 ^ k
      for j = 2, k do pk = pk / j end
      expected[k] = N * pk
      tail = tail - pk
    end
    expected[8] = N * tail
    chi2(counts, expected)
    assert.are.same({ 0.0, 0.0 }, T.poisson(T.zeros(2)):totable())
    assert.are.equal(T.float64, T.poisson(T.ones(2, { dtype = T.float64 })).dtype)
  end)

  it("multinomial with a generator: chi-square of the categories", function()
    local probs = { 0.1, 0.2, 0.3, 0.4 }
    local s = T.multinomial(T.tensor(probs), N, { replacement = true, generator = T.Generator(17) }):totable()
    local counts, expected = {}, {}
    for _, k in ipairs(s) do counts[k] = (counts[k] or 0) + 1 end
    for k = 1, 4 do expected[k] = N * probs[k] end
    chi2(counts, expected)
    assert.are.same({ 0, 3 }, T.multinomial(T.ones(0, 3), 3).shape)
  end)
end)

describe("sampler dtypes, layouts and errors", function()
  it("write non-contiguous destinations in place, in logical order", function()
    local base = T.zeros(4, 6)
    local view = base:narrow(2, 2, 3):t()            -- 3x4 view, not contiguous
    view:normal_(0, 1, { generator = T.Generator(20) })
    local want = T.empty(3, 4):normal_(0, 1, { generator = T.Generator(20) })
    assert.are.same(want:totable(), view:totable())
    assert.are.same(want:t():totable(), base:narrow(2, 2, 3):totable())
    for _, row in ipairs(base:totable()) do               -- columns 1, 5, 6 untouched
      assert.are.equal(0, row[1]); assert.are.equal(0, row[5]); assert.are.equal(0, row[6])
    end
    local it = T.zeros(3, 4, { dtype = T.int32 }):t()
    it:random_(10, { generator = T.Generator(21) })
    assert.are.same(T.zeros(4, 3, { dtype = T.int32 }):random_(10, { generator = T.Generator(21) }):totable(), it:totable())
  end)

  it("refuse expanded destinations", function()
    local e = T.zeros(1):expand(4)
    raises("ltensor.uniform_: unsupported operation: more than one element of the written-to tensor refers to a single memory location",
      e.uniform_, e)
    raises("ltensor.bernoulli_: unsupported operation", e.bernoulli_, e, 0.5)
  end)

  it("fill every floating dtype, complex parts for uniform_ and normal_", function()
    for _, dt in ipairs({ T.float16, T.bfloat16, T.float32, T.float64 }) do
      local t = T.empty(100, { dtype = dt })
      for _, x in ipairs(vals(t:uniform_(1, 2))) do assert.is_true(x >= 1 and x <= 2) end
      t:normal_(); t:exponential_(); t:log_normal_(); t:cauchy_(); t:geometric_(0.5); t:random_(10)
      assert.are.equal(dt, t.dtype)
    end
    local c = T.empty(N, { dtype = T.complex128 }):normal_(0, 1, { generator = T.Generator(22) })
    moments(vals(c:real()), 0, 0.5, 3)
    moments(vals(c:imag()), 0, 0.5, 3)
    local u = T.empty(10, { dtype = T.complex64 }):uniform_()
    for _, x in ipairs(vals(u:imag())) do assert.is_true(x >= 0 and x < 1) end
  end)

  it("random_ follows PyTorch's ranges per dtype", function()
    local function range(dt, ...)
      local lo, hi = math.huge, -math.huge
      for _, x in ipairs(vals(T.empty(4000, { dtype = dt }):random_(...))) do
        lo, hi = math.min(lo, x), math.max(hi, x)
      end
      return lo, hi
    end
    local lo, hi = range(T.bool)
    assert.are.same({ 0, 1 }, { lo, hi })
    lo, hi = range(T.uint8)
    assert.is_true(lo >= 0 and hi <= 255 and hi > 240)
    lo, hi = range(T.int8, -128, nil)
    assert.is_true(lo < -100 and hi <= 127 and hi > 100)
    lo, hi = range(T.float16)
    assert.is_true(lo >= 0 and hi <= 2048 and hi > 1500)
    lo, hi = range(T.float32)
    assert.is_true(lo >= 0 and hi <= 2 ^ 24)
    lo, hi = range(T.int64, -5, 5)
    assert.are.same({ -5, 4 }, { lo, hi })
    local big = T.empty(1000, { dtype = T.int64 }):random_()
    assert.is_true(big:min():item() >= 0)
    assert.is_true(big:max():item() > 2 ^ 60)
  end)

  it("raise PyTorch's errors for invalid parameters", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local f = T.zeros(3)
    local i = T.zeros(3, { dtype = T.int64 })
    raises("ltensor.exponential_: exponential_ expects lambda >= 0.0, but found lambda=-1", f.exponential_, f, -1)
    raises("ltensor.exponential_: expected a floating point dtype, but got int64", i.exponential_, i)
    raises("ltensor.geometric_: geometric_ expects p to be in (0, 1), but got p=0", f.geometric_, f, 0)
    raises("ltensor.geometric_: geometric_ expects p to be in (0, 1), but got p=1", f.geometric_, f, 1)
    raises("ltensor.geometric_: not implemented for bool", T.zeros(2, { dtype = T.bool }).geometric_,
      T.zeros(2, { dtype = T.bool }), 0.5)
    raises("ltensor.log_normal_: log_normal_ expects std > 0.0, but found std=0", f.log_normal_, f, 1, 0)
    raises("ltensor.log_normal_: expected a floating point dtype", i.log_normal_, i)
    raises("ltensor.cauchy_: expected a floating point dtype", i.cauchy_, i)
    raises("ltensor.normal_: normal expects std >= 0.0, but found std -1", f.normal_, f, 0, -1)
    raises("ltensor.uniform_: uniform_ expects to return a [from, to) range, but found from=2 > to=1", f.uniform_, f, 2, 1)
    raises("ltensor.uniform_: to is out of bounds for float32", f.uniform_, f, 0, 1 / 0)
    raises("ltensor.uniform_: uniform_ expects to-from <= std::numeric_limits<float32>::max()", f.uniform_, f, -3e38, 3e38)
    raises("ltensor.random_: random_ expects 'from' to be less than 'to', but got from=5 >= to=5", f.random_, f, 5, 5)
    raises("ltensor.random_: random_ expects 'from' to be less than 'to', but got from=0 >= to=0", f.random_, f, 0)
    local i8 = T.zeros(2, { dtype = T.int8 })
    raises("ltensor.random_: to - 1 is out of bounds for int8", i8.random_, i8, 200)
    raises("ltensor.random_: from is out of bounds for int8", i8.random_, i8, -200, 3)
    raises("ltensor.random_: not implemented for complex64", T.zeros(2, { dtype = T.complex64 }).random_,
      T.zeros(2, { dtype = T.complex64 }))
    raises("ltensor.bernoulli_: bernoulli_ expects p to be in [0, 1], but got p=1.5", f.bernoulli_, f, 1.5)
    raises("ltensor.bernoulli_: expected all elements of p to be in [0, 1]", f.bernoulli_, f, T.tensor({ 0.5, 2, 0 }))
    raises("ltensor.bernoulli_: expected probabilities of a floating point dtype, got int64", f.bernoulli_, f, i)
    raises("ltensor.bernoulli_: cannot expand the probabilities of shape {2, 3} to the tensor's shape {3}",
      f.bernoulli_, f, T.full({ 2, 3 }, 0.5))
    raises("ltensor.bernoulli_: cannot expand the probabilities of shape {3} to the tensor's shape {4}",
      T.zeros(4).bernoulli_, T.zeros(4), T.full({ 3 }, 0.5))
    assert.are.same({ 2, 3 }, T.zeros(2, 3):bernoulli_(T.full({ 3 }, 0.5)).shape)
    raises("ltensor.bernoulli: expected a floating point dtype, but got int64", T.bernoulli, i)
    raises("ltensor.bernoulli: expected all elements of probs to be in [0, 1]", T.bernoulli, T.tensor({ -0.5 }))
    raises("ltensor.normal: normal expects all elements of std >= 0.0", T.normal, T.zeros(2), T.tensor({ 1.0, -1 }))
    raises("ltensor.normal: normal expects std >= 0.0, but found std -1", T.normal, T.zeros(2), -1.0)
    raises("ltensor.normal: with a number mean and std, a size is required", T.normal, 1.0, 2.0)
    raises("ltensor.normal: expected mean and std of a floating point dtype, got int64", T.normal, i, 1.0)
    raises("ltensor.normal: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1",
      T.normal, T.zeros(2), T.ones(3))
    raises("ltensor.poisson: invalid Poisson rate, expected rate to be non-negative", T.poisson, T.tensor({ -1.0, 2 }))
    raises("ltensor.poisson: invalid Poisson rate, expected rate to be non-negative", T.poisson, T.tensor({ 0 / 0 }))
    raises("ltensor.poisson: expected a floating point dtype, but got int64", T.poisson, i)
    raises("ltensor.multinomial: prob_dist must be 1 or 2 dim", T.multinomial, T.ones(2, 2, 2), 1)
    raises("ltensor.multinomial: multinomial only supports floating-point dtypes for input, got: int64", T.multinomial, i, 1)
    raises("ltensor.multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement",
      T.multinomial, T.ones(0), 1)
  end)

  it("normal, bernoulli and poisson outputs require grad with zero gradients (as PyTorch)", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local m = T.zeros(3, { requires_grad = true })
    local s = T.ones(3, { requires_grad = true })
    local y = T.normal(m, s)
    assert.is_true(y.requires_grad)
    y:sum():backward()
    assert.are.same({ 0, 0, 0 }, m.grad:totable())
    assert.are.same({ 0, 0, 0 }, s.grad:totable())
    local m2 = T.zeros(2, { requires_grad = true })
    T.normal(m2, 2.0):sum():backward()
    assert.are.same({ 0, 0 }, m2.grad:totable())
    local p = T.full({ 3 }, 0.5, { requires_grad = true })
    T.bernoulli(p):sum():backward()
    assert.are.same({ 0, 0, 0 }, p.grad:totable())
    local r = T.full({ 2 }, 3.0, { requires_grad = true })
    T.poisson(r):sum():backward()
    assert.are.same({ 0, 0 }, r.grad:totable())
    assert.is_false(T.normal(T.zeros(2), 1.0).requires_grad)
  end)

  it("in-place samplers refuse a leaf that requires grad, except under no_grad", function()
    local w = T.zeros(3, { requires_grad = true })
    for _, call in ipairs({
      function() return w:uniform_() end, function() return w:normal_() end,
      function() return w:exponential_() end, function() return w:geometric_(0.5) end,
      function() return w:log_normal_() end, function() return w:cauchy_() end,
      function() return w:random_(3) end, function() return w:bernoulli_(0.5) end }) do
      raises("a leaf Variable that requires grad is being used in an in-place operation.", call)
    end
    T.no_grad(function() w:uniform_(-1, 1) end)   -- how layers initialise their weights
    assert.is_true(w.requires_grad)
    -- a non-leaf: the values before the sampler get a zero gradient
    local x = T.ones(3, { requires_grad = true })
    local y = x * 2
    y:normal_()
    ;(y * 3):sum():backward()
    assert.are.same({ 0, 0, 0 }, x.grad:totable())
    local x2 = T.ones(2, { requires_grad = true })
    local y2 = x2 * 1
    y2:uniform_()
    y2:sum():backward()
    assert.are.same({ 0, 0 }, x2.grad:totable())
  end)

  it("empty and zero-dim destinations", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.are.same({ 0 }, T.empty(0):normal_().shape)
    assert.are.same({ 0, 3 }, T.empty(0, 3):random_(5).shape)
    local z = T.tensor(0.0):exponential_(1)
    assert.are.same({}, z.shape)
    assert.is_true(z:item() >= 0)
    assert.are.same({}, T.poisson(T.tensor(2.0)).shape)
  end)
end)
