-- Creation: T.tensor, zeros/ones/empty/full and *_like, arange, linspace,
-- logspace, eye, and the random generator.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local function errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t return out end
  for _, v in ipairs(t) do flat(v, out) end
  return out
end

describe("T.tensor", function()
  it("infers bool, int64 or the default float dtype", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.are.equal(T.int64, T.tensor(5).dtype)
    assert.are.equal(T.float32, T.tensor(2.5).dtype)
    assert.are.equal(T.bool, T.tensor(true).dtype)
    assert.are.equal(T.bool, T.tensor({true, false}).dtype)
    assert.are.equal(T.int64, T.tensor({1, true, 0}).dtype)
    assert.are.same({1, 1, 0}, T.tensor({1, true, 0}):totable())
    assert.are.equal(T.float32, T.tensor({1.5, true}).dtype)
    assert.are.equal(T.float32, T.tensor({{1, 2}, {3, 4.0}}).dtype)
    assert.are.same({}, T.tensor(7).shape)
    assert.are.same({2, 2, 1}, T.tensor({{{1}, {2}}, {{3}, {4}}}).shape)
  end)

  it("follows the default dtype for Lua floats", function()
    local old = T.get_default_dtype()
    T.set_default_dtype(T.float64)
    local ok, dt = pcall(function() return T.tensor({0.5}).dtype end)
    T.set_default_dtype(old)
    assert.is_true(ok)
    assert.are.equal(T.float64, dt)
  end)

  it("builds empty tensors", function()
    local e = T.tensor({})
    assert.are.same({0}, e.shape)
    assert.are.equal(T.float32, e.dtype)
    assert.are.same({2, 0}, T.tensor({{}, {}}).shape)
  end)

  it("keeps int64 values exactly and floats as rounded to the dtype", function()
    assert.are.same({math.maxinteger, math.mininteger}, T.tensor({math.maxinteger, math.mininteger}):totable())
    local t = T.tensor({0.1, 0 / 0, 1 / 0})
    local v = t:totable()
    assert.are.equal(0.10000000149011612, v[1])
    assert.is_true(v[2] ~= v[2])
    assert.are.equal(math.huge, v[3])
  end)

  it("honours opts dtype and requires_grad", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local t = T.tensor({1.7, -1.7}, {dtype = T.int32})
    assert.are.equal(T.int32, t.dtype)
    assert.are.same({1, -1}, t:totable())
    assert.are.same({true, false, true}, T.tensor({2, 0, -1}, {dtype = T.bool}):totable())
    assert.are.equal(T.float64, T.tensor({1}, {dtype = "float64"}).dtype)
    local g = T.tensor({1.0}, {requires_grad = true})
    assert.is_true(g.requires_grad)
    assert.is_false(T.tensor({1.0}).requires_grad)
    assert.matches("only Tensors of floating point and complex dtype can require gradients",
      errmsg(T.tensor, {1, 2}, {requires_grad = true}))
  end)

  it("copies a tensor argument, optionally converting it", function()
    local a = T.tensor({1, 2}, {dtype = T.int32})
    local b = T.tensor(a)
    assert.are.equal(T.int32, b.dtype)
    b:set(1, 9)
    assert.are.equal(1, a:get(1))
    assert.are.equal(T.float64, T.tensor(a, {dtype = T.float64}).dtype)
  end)

  it("reports ragged data with 1-based dims", function()
    assert.matches("ltensor.tensor: expected sequence of length 2 at dim 2 %(got 1%)", errmsg(T.tensor, {{1, 2}, {3}}))
    assert.matches("expected sequence of length 2 at dim 2 %(got 3%)", errmsg(T.tensor, {{1, 2}, {3, 4, 5}}))
    assert.matches("expected sequence of length 2 at dim 3 %(got 1%)", errmsg(T.tensor, {{{1, 2}, {3, 4}}, {{1, 2}, {3}}}))
    assert.matches("expected sequence of length 1 at dim 2", errmsg(T.tensor, {{1}, 2}))
  end)

  it("names the position of a non-number element", function()
    assert.matches("ltensor.tensor: element %[2%] must be a number or boolean %(got string%)", errmsg(T.tensor, {1, "a"}))
    assert.matches("element %[1%]%[2%] must be a number or boolean %(got string%)", errmsg(T.tensor, {{1, "x"}}))
    assert.matches("element %[2%] must be a number or boolean %(got table%)", errmsg(T.tensor, {1, {2}}))
  end)
end)

describe("zeros, ones, empty, full", function()
  it("take sizes as varargs or one table, with opts", function()
    assert.are.same({{0, 0, 0}, {0, 0, 0}}, T.zeros(2, 3):totable())
    assert.are.same({2, 3}, T.zeros({2, 3}).shape)
    local z = T.zeros({2, 3}, {dtype = T.int32})
    assert.are.equal(T.int32, z.dtype)
    assert.are.same({{true, true}}, T.ones(1, 2, {dtype = T.bool}):totable())
    assert.are.same({1, 1, 1}, T.ones(3, {dtype = T.int64}):totable())
    assert.are.equal(T.float32, T.ones(4).dtype)
    assert.are.same({}, T.zeros({}).shape)
    assert.are.same({0}, T.ones(0).shape)
    local e = T.empty(2, 3)
    assert.are.same({2, 3}, e.shape)
    assert.are.equal(T.float32, e.dtype)
    assert.is_true(T.zeros(2, {requires_grad = true}).requires_grad)
  end)

  it("reject negative sizes", function()
    assert.matches("negative dimension %-1", errmsg(T.zeros, 2, -1))
  end)

  it("full infers its dtype from the value", function()
    assert.are.equal(T.int64, T.full({2}, 5).dtype)
    assert.are.equal(T.float32, T.full({2}, 2.5).dtype)
    assert.are.equal(T.bool, T.full({2}, true).dtype)
    assert.are.same({1, 1}, T.full({2}, 1.5, {dtype = T.int32}):totable())
    assert.are.same({}, T.full({}, 7).shape)
    assert.are.equal(7, T.full({}, 7):item())
  end)

  it("*_like copy shape and dtype unless opts say otherwise", function()
    local src = T.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = T.int32})
    local z = T.zeros_like(src)
    assert.are.equal(T.int32, z.dtype)
    assert.are.same({{0, 0, 0}, {0, 0, 0}}, z:totable())
    assert.are.same({{1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}}, src:ones_like({dtype = T.float64}):totable())
    assert.are.same({2, 3}, T.empty_like(src).shape)
    assert.are.same({{7, 7, 7}, {7, 7, 7}}, T.full_like(src, 7):totable())
  end)
end)

describe("arange", function()
  it("is int64 for Lua integers and excludes the end", function()
    local t = T.arange(5)
    assert.are.equal(T.int64, t.dtype)
    assert.are.same({0, 1, 2, 3, 4}, t:totable())
    assert.are.same({2, 3, 4, 5, 6}, T.arange(2, 7):totable())
    assert.are.same({1, 4, 7}, T.arange(1, 10, 3):totable())
    assert.are.same({10, 7, 4, 1}, T.arange(10, 0, -3):totable())
    assert.are.same({0}, T.arange(0).shape)
    assert.are.same({0}, T.arange(3, 3).shape)
  end)

  it("uses the default float dtype when any argument is a float", function()
    local t = T.arange(0, 1, 0.25)
    assert.are.equal(T.float32, t.dtype)
    assert.are.same({0.0, 0.25, 0.5, 0.75}, t:totable())
    assert.are.same({4.0, 5.5}, T.arange(4.0, 6.25, 1.5):totable())         -- ceil(2.25 / 1.5) = 2
    assert.are.same({-3.5, -4.0, -4.5, -5.0}, T.arange(-3.5, -5.25, -0.5):totable())
  end)

  it("honours opts dtype", function()
    assert.are.same({0.0, 1.0, 2.0}, T.arange(3, {dtype = T.float64}):totable())
    assert.are.equal(T.float64, T.arange(3, {dtype = T.float64}).dtype)
    assert.are.same({1, 2, 3}, T.arange(1, 4, {dtype = T.int32}):totable())
  end)

  it("is exact near the int64 limits", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    local hi = math.maxinteger
    assert.are.same({hi - 2, hi - 1}, T.arange(hi - 2, hi):totable())
  end)

  it("raises PyTorch's errors", function()
    assert.matches("ltensor.arange: upper bound and larger bound inconsistent with step sign", errmsg(T.arange, 5, 0, 1))
    assert.matches("ltensor.arange: step must be nonzero", errmsg(T.arange, 0, 5, 0))
    assert.matches("step must be nonzero", errmsg(T.arange, 0, 5, 0.0))
    assert.matches("unsupported range", errmsg(T.arange, 0, 1 / 0, 1.0))
  end)
end)

describe("linspace and logspace", function()
  it("hit both ends exactly and round like PyTorch in float32", function()
    assert.are.same({0.0, 0.25, 0.5, 0.75, 1.0}, T.linspace(0, 1, 5):totable())
    local t = T.linspace(-1, 1, 4):totable()
    assert.are.same({-1.0, -0.3333333134651184, 0.3333333134651184, 1.0}, t)
    assert.are.same({2.0}, T.linspace(2, 3, 1):totable())
    assert.are.same({0}, T.linspace(0, 10, 0).shape)
    assert.are.same({1.0, 1.5, 2.0}, T.linspace(1, 2, 3, {dtype = T.float64}):totable())
    assert.are.equal(T.float64, T.linspace(1, 2, 3, {dtype = T.float64}).dtype)
  end)

  it("truncates for integral dtypes", function()
    assert.are.same({0, 2, 5, 7, 10}, T.linspace(0, 10, 5, {dtype = T.int64}):totable())
  end)

  it("refuses a negative number of steps", function()
    assert.matches("ltensor.linspace: number of steps must be non%-negative", errmsg(T.linspace, 0, 1, -1))
  end)

  it("logspace raises base to a linspace", function()
    assert.are.same({1.0, 10.0, 100.0}, T.logspace(0, 2, 3, {dtype = T.float64}):totable())
    assert.are.same({1.0, 2.0, 4.0, 8.0}, T.logspace(0, 3, 4, 2):totable())
  end)
end)

describe("eye", function()
  it("makes square and rectangular identities in any dtype", function()
    assert.are.same({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, T.eye(3):totable())
    assert.are.equal(T.float32, T.eye(3).dtype)
    assert.are.same({{1, 0, 0, 0}, {0, 1, 0, 0}}, T.eye(2, 4):totable())
    assert.are.same({{1, 0}, {0, 1}, {0, 0}, {0, 0}}, T.eye(4, 2, {dtype = T.int64}):totable())
    assert.are.same({{true, false, false}, {false, true, false}}, T.eye(2, 3, {dtype = T.bool}):totable())
    assert.are.same({0, 0}, T.eye(0).shape)
  end)

  it("refuses negative sizes", function()
    assert.matches("ltensor.eye: n must be greater or equal to 0, got %-1", errmsg(T.eye, -1))
    assert.matches("ltensor.eye: m must be greater or equal to 0, got %-2", errmsg(T.eye, 2, -2))
  end)
end)

describe("the random generator", function()
  it("gives a fixed sequence for a fixed seed", function()
    T.manual_seed(42)
    assert.are.same({42, 2, 9, 93, 76, 84, 54, 7}, T.randint(0, 100, {8}):totable())
    T.manual_seed(42)
    assert.are.same({8, 3, 5, 1, 4, 6, 2, 7}, T.randperm(8):totable())
    assert.are.equal(42, T.initial_seed())
  end)

  it("repeats after reseeding and moves on otherwise", function()
    T.manual_seed(7)
    local a = T.rand(5):totable()
    local b = T.rand(5):totable()
    T.manual_seed(7)
    assert.are.same(a, T.rand(5):totable())
    assert.are_not.same(a, b)
  end)

  it("saves and restores its state", function()
    T.manual_seed(5)
    T.rand(3)
    local st = T.get_rng_state()
    local a = T.randn(4):totable()
    T.set_rng_state(st)
    assert.are.same(a, T.randn(4):totable())
    assert.matches("must not be all zero", errmsg(T.set_rng_state, {0, 0, 0, 0, 0}))
  end)

  it("seed() reseeds and returns the new seed", function()
    local s = T.seed()
    assert.are.equal("integer", math.type(s))
    assert.are.equal(s, T.initial_seed())
  end)
end)

describe("random tensors", function()
  it("rand is uniform in [0, 1) with the requested shape and dtype", function()
    T.manual_seed(1)
    local t = T.rand(100, 100)
    assert.are.same({100, 100}, t.shape)
    assert.are.equal(T.float32, t.dtype)
    local v, sum = flat(t:totable()), 0
    for _, x in ipairs(v) do
      assert.is_true(x >= 0 and x < 1)
      sum = sum + x
    end
    assert.is_true(math.abs(sum / #v - 0.5) < 0.01)
    assert.are.equal(T.float64, T.rand({2, 2}, {dtype = T.float64}).dtype)
    assert.are.same({}, T.rand({}).shape)   -- 0-dim: an empty size table (T.rand() raises, as torch.rand())
    assert.are.equal(T.float16, T.rand(3, {dtype = T.float16}).dtype)
    assert.is_true(T.rand(2, {requires_grad = true}).requires_grad)
  end)

  it("randn has mean 0 and std 1", function()
    T.manual_seed(2)
    local v = flat(T.randn({20000}, {dtype = T.float64}):totable())
    local s, s2 = 0, 0
    for _, x in ipairs(v) do s = s + x; s2 = s2 + x * x end
    local mean = s / #v
    assert.is_true(math.abs(mean) < 0.03)
    assert.is_true(math.abs(math.sqrt(s2 / #v - mean * mean) - 1) < 0.03)
    assert.are.same({3}, T.randn(3).shape)                               -- odd count
  end)

  it("rand and randn refuse integral dtypes", function()
    assert.matches("ltensor.rand: expected a floating point or complex dtype, but got int64",
      errmsg(T.rand, 2, {dtype = T.int64}))
    assert.matches("ltensor.randn:", errmsg(T.randn, 2, {dtype = T.bool}))
  end)

  it("rand_like and randn_like follow the source", function()
    local src = T.zeros(2, 3, {dtype = T.float64})
    assert.are.equal(T.float64, T.rand_like(src).dtype)
    assert.are.same({2, 3}, src:randn_like().shape)
  end)

  it("randint covers [low, high) in both call forms", function()
    T.manual_seed(9)
    local seen = {}
    for _, x in ipairs(T.randint(-2, 3, {1000}):totable()) do
      assert.is_true(x >= -2 and x < 3)
      seen[x] = true
    end
    for x = -2, 2 do assert.is_true(seen[x]) end
    local t = T.randint(4, {2, 3})
    assert.are.equal(T.int64, t.dtype)
    assert.are.same({2, 3}, t.shape)
    for _, x in ipairs(flat(t:totable())) do assert.is_true(x >= 0 and x < 4) end
    assert.are.equal(T.float32, T.randint(0, 5, {2}, {dtype = T.float32}).dtype)
    assert.matches("ltensor.randint: random_ expects 'from' to be less than 'to', but got from=5 >= to=5",
      errmsg(T.randint, 5, 5, {2}))
  end)

  it("randperm is a permutation of 1..n", function()
    T.manual_seed(4)
    local p = T.randperm(50):totable()
    table.sort(p)
    for i = 1, 50 do assert.are.equal(i, p[i]) end
    assert.are.same({0}, T.randperm(0).shape)
    assert.are.same({1}, T.randperm(1):totable())
    assert.are.equal(T.int32, T.randperm(3, {dtype = T.int32}).dtype)
    assert.matches("ltensor.randperm: n must be non%-negative, got %-1", errmsg(T.randperm, -1))
  end)
end)

describe("multinomial", function()
  it("draws 1-based categories in proportion to the weights", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    T.manual_seed(13)
    local c = {0, 0, 0}
    for _, x in ipairs(T.multinomial(T.tensor({1.0, 2, 7}), 10000, true):totable()) do c[x] = c[x] + 1 end
    assert.is_true(math.abs(c[1] / 10000 - 0.1) < 0.02)
    assert.is_true(math.abs(c[3] / 10000 - 0.7) < 0.02)
    local z = T.multinomial(T.tensor({0.0, 1.0, 0.0}), 5, {replacement = true})
    assert.are.equal(T.int64, z.dtype)
    assert.are.same({2, 2, 2, 2, 2}, z:totable())
  end)

  it("samples each category at most once without replacement, per row", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    T.manual_seed(14)
    local m = T.multinomial(T.tensor({{1.0, 2, 3, 4}, {0, 0, 5, 1}}), 2)
    assert.are.same({2, 2}, m.shape)
    local rows = m:totable()
    assert.are_not.equal(rows[1][1], rows[1][2])
    table.sort(rows[2])
    assert.are.same({3, 4}, rows[2])
    local all = T.multinomial(T.tensor({1.0, 1, 1, 1}), 4):totable()
    table.sort(all)
    assert.are.same({1, 2, 3, 4}, all)
  end)

  it("raises PyTorch's errors", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.matches("not enough non%-negative category to sample", errmsg(T.multinomial, T.tensor({1.0, 0, 0}), 2))
    assert.matches("cannot sample n_sample > prob_dist.size%(%-1%) samples without replacement",
      errmsg(T.multinomial, T.tensor({1.0, 1}), 3))
    assert.matches("probability tensor contains either `inf`, `nan` or element < 0",
      errmsg(T.multinomial, T.tensor({1.0, -1}), 1))
    assert.matches("sum of probabilities <= 0", errmsg(T.multinomial, T.tensor({0.0, 0}), 1, true))
    assert.matches("cannot sample n_sample <= 0 samples", errmsg(T.multinomial, T.tensor({1.0}), 0))
  end)
end)

describe("in-place random fills", function()
  it("uniform_ fills [from, to), returns self and bumps the version", function()
    local t = T.zeros(1000, {dtype = T.float64})
    local v0 = T._version(t)
    local r = t:uniform_(-2, 3)
    assert.are.equal(t, r)
    assert.is_true(T._version(t) > v0)
    for _, x in ipairs(t:totable()) do assert.is_true(x >= -2 and x < 3) end
    assert.matches("ltensor.uniform_: uniform_ expects to return a %[from, to%) range, but found from=2",
      errmsg(t.uniform_, t, 2, 1))
    assert.matches("ltensor.uniform_: expected a floating point", errmsg(t.uniform_, T.zeros(2, {dtype = T.int64})))
  end)

  it("normal_ uses mean and std", function()
    T.manual_seed(6)
    local t = T.zeros(20000, {dtype = T.float64}):normal_(10, 0.5)
    local s = 0
    for _, x in ipairs(t:totable()) do s = s + x end
    assert.is_true(math.abs(s / 20000 - 10) < 0.02)
    assert.matches("ltensor.normal_: normal expects std >= 0.0, but found std %-1", errmsg(t.normal_, t, 0, -1))
  end)

  it("bernoulli_ writes 0/1 with probability p in any dtype", function()
    T.manual_seed(8)
    local t = T.zeros(10000, {dtype = T.int64}):bernoulli_(0.25)
    local s = 0
    for _, x in ipairs(t:totable()) do
      assert.is_true(x == 0 or x == 1)
      s = s + x
    end
    assert.is_true(math.abs(s / 10000 - 0.25) < 0.02)
    assert.are.same({true, true}, T.zeros(2, {dtype = T.bool}):bernoulli_(1):totable())
    assert.matches("bernoulli_ expects p to be in %[0, 1%], but got p=1.5", errmsg(t.bernoulli_, t, 1.5))
  end)

  it("bernoulli samples with per-element probabilities", function()
    local p = T.tensor({0.0, 1.0, 0.0, 1.0}, {dtype = T.float64})
    assert.are.same({0.0, 1.0, 0.0, 1.0}, T.bernoulli(p):totable())
    assert.matches("ltensor.bernoulli:", errmsg(T.bernoulli, T.tensor({2.0})))
  end)

  it("fill non-contiguous tensors in logical order", function()
    T.manual_seed(12)
    local want = T.rand(3, 2):totable()
    T.manual_seed(12)
    local t = T.zeros(2, 3):t()
    t:uniform_()
    assert.are.same(want, t:totable())
  end)
end)
