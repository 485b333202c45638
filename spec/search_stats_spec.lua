-- Search, counting and statistics (SPEC §6b "Search and counting"):
-- 1-based positions and indices, NaN placement as PyTorch, empty and
-- non-contiguous inputs, every dtype family, errors, and gradients of the
-- value-selecting ones.  Expected values are worked out by hand from
-- PyTorch's definitions (the PyTorch-generated cases are in the conformance
-- suite's cases_wide.lua, category search_stats).
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local H = dofile("spec/helpers.lua")
local check, raises = H.check, H.raises

local NaN = 0 / 0
local function r64(...) return T.randn({ ... }, { dtype = T.float64 }):requires_grad_() end
local function gradcheck(f, inputs) assert.is_true(T.autograd.gradcheck(f, inputs)) end
local function isnan(x) return x ~= x end

describe("searchsorted / bucketize", function()
  local seq = T.tensor({ 1, 3, 5, 7 })
  it("return 1-based insertion positions (PyTorch's + 1)", function()
    check(T.searchsorted(seq, T.tensor({ 0, 3, 6, 9 })), T.int64, { 4 }, { 1, 2, 4, 5 })
    check(T.searchsorted(seq, T.tensor({ 0, 3, 6, 9 }), { right = true }), T.int64, { 4 }, { 1, 3, 4, 5 })
    check(T.searchsorted(seq, T.tensor({ 3 }), { side = "right" }), T.int64, { 1 }, { 3 })
    check(T.searchsorted(seq, 5), T.int64, {}, 3)
    check(T.searchsorted(seq, T.tensor({ 4.5 }), { out_int32 = true }), T.int32, { 1 }, { 3 })
  end)
  it("search each row of an N-D sequence, with non-contiguous inputs", function()
    local s = T.tensor({ { 1, 4 }, { 2, 5 }, { 3, 6 } }):t()   -- rows {1,2,3}, {4,5,6}
    check(T.searchsorted(s, T.tensor({ { 2, 9 }, { 4, 0 } })), T.int64, { 2, 2 }, { { 2, 4 }, { 1, 1 } })
  end)
  it("use a 1-based sorter for an unsorted sequence", function()
    local s = T.tensor({ 5, 1, 3 })
    check(T.searchsorted(s, T.tensor({ 2, 4 }), { sorter = T.tensor({ 2, 3, 1 }) }), T.int64, { 2 }, { 2, 3 })
  end)
  it("place NaN after everything and accept floats against integers", function()
    check(T.searchsorted(T.tensor({ 1., 2. }), T.tensor({ NaN })), T.int64, { 1 }, { 3 })
    check(T.searchsorted(seq, T.tensor({ 2.5 })), T.int64, { 1 }, { 2 })
    check(T.searchsorted(T.empty(0), T.tensor({ 1., 2. })), T.int64, { 2 }, { 1, 1 })
  end)
  it("raise PyTorch's errors", function()
    raises("side and right can't be set to opposites", T.searchsorted, seq, T.tensor({ 1 }), { right = true, side = "left" })
    raises("first N-1 dimensions", T.searchsorted, T.zeros(2, 3), T.zeros(3, 3))
    raises("1 dimension", T.bucketize, T.tensor({ 1 }), T.zeros(2, 2))
  end)
  it("bucketize takes (input, boundaries)", function()
    check(T.bucketize(T.tensor({ { 0, 3 }, { 6, 9 } }), seq), T.int64, { 2, 2 }, { { 1, 2 }, { 4, 5 } })
    check(T.bucketize(3, seq, { right = true }), T.int64, {}, 3)
  end)
end)

describe("unique / unique_consecutive", function()
  it("unique sorts, with 1-based inverse and counts", function()
    local u, inv, cnt = T.unique(T.tensor({ { 3, 1 }, { 3, 2 } }), { return_inverse = true, return_counts = true })
    check(u, T.int64, { 3 }, { 1, 2, 3 })
    check(inv, T.int64, { 2, 2 }, { { 3, 1 }, { 3, 2 } })
    check(cnt, T.int64, { 3 }, { 1, 1, 2 })
    check(T.unique(T.tensor({ true, false, true })), T.bool, { 2 }, { false, true })
    check(T.unique(T.tensor({ 1, 2, 1 }):expand(2, 3)), T.int64, { 2 }, { 1, 2 })
    check(T.unique(T.empty(0)), T.float32, { 0 })
  end)
  it("unique along a dim compares whole slices", function()
    local u, inv, cnt = T.unique(T.tensor({ { 1, 2 }, { 0, 5 }, { 1, 2 } }), { dim = 1, return_inverse = true, return_counts = true })
    check(u, T.int64, { 2, 2 }, { { 0, 5 }, { 1, 2 } })
    check(inv, T.int64, { 3 }, { 2, 1, 2 })
    check(cnt, T.int64, { 2 }, { 1, 2 })
    check(T.unique(T.tensor({ { 2, 1, 2 }, { 0, 1, 0 } }), { dim = 2 }), T.int64, { 2, 2 }, { { 1, 2 }, { 1, 0 } })
  end)
  it("unique_consecutive collapses runs only", function()
    local u, inv, cnt = T.unique_consecutive(T.tensor({ 1, 1, 2, 2, 3, 1, 1 }), { return_inverse = true, return_counts = true })
    check(u, T.int64, { 4 }, { 1, 2, 3, 1 })
    check(inv, T.int64, { 7 }, { 1, 1, 2, 2, 3, 4, 4 })
    check(cnt, T.int64, { 4 }, { 2, 2, 1, 2 })
    check(T.unique_consecutive(T.tensor({ { 1, 1 }, { 1, 1 }, { 2, 1 } }), { dim = 1 }), T.int64, { 2, 2 }, { { 1, 1 }, { 2, 1 } })
  end)
end)

describe("bincount, histc, histogram, count_nonzero", function()
  it("bincount puts the count of v at v + 1", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    check(T.bincount(T.tensor({ 0, 2, 2, 4 })), T.int64, { 5 }, { 1, 0, 2, 0, 1 })
    check(T.bincount(T.tensor({ 1 }), { minlength = 3 }), T.int64, { 3 }, { 0, 1, 0 })
    check(T.bincount(T.tensor({ 0, 0 }, { dtype = T.uint8 }), { weights = T.tensor({ 0.5, 0.25 }) }), T.float32, { 1 }, { 0.75 })
    check(T.bincount(T.tensor({ 1 }), { weights = T.tensor({ 2 }) }), T.float64, { 2 }, { 0, 2 })
    check(T.bincount(T.empty(0, { dtype = T.int64 }), { minlength = 2 }), T.int64, { 2 }, { 0, 0 })
    raises("non-negative", T.bincount, T.tensor({ -1 }))
    raises("non-negative", T.bincount, T.tensor({ { 1 } }))
    raises("non-negative", T.bincount, T.tensor({ 1. }))
  end)
  it("histc counts in equal bins over [min, max], the max in the last bin", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    check(T.histc(T.tensor({ 1., 2., 1., 3., 9. }), { bins = 3, min = 0, max = 3 }), T.float32, { 3 }, { 0, 2, 2 })
    check(T.histc(T.tensor({ 1., 2. }, { dtype = T.float64 }), { bins = 2 }), T.float64, { 2 }, { 1, 1 })
    check(T.histc(T.tensor({ 5. }), { bins = 2 }), T.float32, { 2 }, { 0, 1 })
    raises("bins must be > 0", T.histc, T.tensor({ 1. }), { bins = 0 })
    raises("range of [nan, nan] is not finite", T.histc, T.tensor({ 1., NaN }))
    check(T.histc(T.tensor({ 1., NaN, 2. }), { bins = 2, min = 0, max = 2 }), T.float32, { 2 }, { 0, 2 })
    raises("not implemented", T.histc, T.tensor({ 1 }))
  end)
  it("histogram returns counts and edges; weights and density", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local h, e = T.histogram(T.tensor({ 1., 2., 1. }), 4, { range = { 0., 3. } })
    check(h, T.float32, { 4 }, { 0, 2, 1, 0 })
    check(e, T.float32, { 5 }, { 0, 0.75, 1.5, 2.25, 3 })
    h = T.histogram(T.tensor({ 1., 2., 1., 2.5 }), T.tensor({ 0., 1., 2., 3. }), { weight = T.tensor({ 1., 1., 2., 0.5 }) })
    check(h, T.float32, { 3 }, { 0, 3, 1.5 })
    h = T.histogram(T.tensor({ 1., 2., 1., 2.5 }), T.tensor({ 0., 1., 2., 3. }), { density = true })
    check(h, T.float32, { 3 }, { 0, 0.5, 0.5 })
    raises("is not finite", T.histogram, T.tensor({ 1., NaN }), 3)
  end)
  it("count_nonzero counts over all or some dims", function()
    local x = T.tensor({ { 0, 1, 2 }, { 3, 0, 0 } })
    check(T.count_nonzero(x), T.int64, {}, 3)
    check(x:count_nonzero(2), T.int64, { 2 }, { 2, 1 })
    check(T.count_nonzero(x:t(), { 1, 2 }), T.int64, {}, 3)
    check(T.count_nonzero(T.tensor({ NaN, 0. })), T.int64, {}, 1)
  end)
end)

describe("kthvalue, median, nanmedian, mode", function()
  it("kthvalue takes a 1-based k and returns the 1-based index", function()
    local v, i = T.kthvalue(T.tensor({ { 3, 1, 2 }, { 6, 5, 4 } }), 2, 2)
    check(v, T.int64, { 2 }, { 2, 5 })
    check(i, T.int64, { 2 }, { 3, 2 })
    v, i = T.tensor({ { 3, 1, 2 }, { 6, 5, 4 } }):t():kthvalue(1, 2, true)
    check(v, T.int64, { 3, 1 }, { { 3 }, { 1 }, { 2 } })
    v = T.kthvalue(T.tensor({ 1., NaN, 0. }), 3)
    assert.is_true(isnan(v:item()))
    raises("out of range", T.kthvalue, T.tensor({ 1, 2 }), 3)
  end)
  it("select exactly the k-th element of the stable sort (ties: first occurrence; NaN last)", function()
    T.manual_seed(5)
    for trial = 1, 60 do
      local n, rows = 1 + trial % 17, 1 + trial % 4
      local x = T.randint(-3, 4, { rows, n }):double()
      if trial % 3 == 0 then x = T.where(T.lt(T.rand(rows, n), 0.2), T.full({}, NaN, { dtype = T.float64 }), x) end
      if trial % 2 == 0 then x = T.randint(-3, 4, { n, rows }):t() end
      local k = 1 + trial % n
      local _, order = T.sort(x, 2, false, { stable = true })
      local _, i = T.kthvalue(x, k, 2)
      assert.is_true(T.equal(i, order:select(2, k)))
    end
  end)
  it("median is the lower median; NaN wins unless nanmedian", function()
    check(T.median(T.tensor({ 4, 1, 3, 2 })), T.int64, {}, 2)
    local v, i = T.median(T.tensor({ { 1., NaN, 3. }, { 3., 2., 1. } }), 2)
    assert.is_true(isnan(v:get(1)))
    assert.equal(2, v:get(2))
    check(i, T.int64, { 2 }, { 2, 2 })
    assert.is_true(isnan(T.median(T.tensor({ 1., NaN })):item()))
    check(T.nanmedian(T.tensor({ 1., NaN, 3., 4. })), T.float32, {}, 3)
    v, i = T.nanmedian(T.tensor({ { NaN, NaN }, { 1., NaN } }), 2, true)
    assert.is_true(isnan(v:get(1, 1)))
    assert.equal(1, v:get(2, 1))
    assert.equal(1, i:get(2, 1))
  end)
  it("mode returns the most frequent (smallest on a tie) value and an index of it", function()
    local v, i = T.mode(T.tensor({ { 3, 1, 3, 1 }, { 6, 5, 4, 6 } }))
    check(v, T.int64, { 2 }, { 1, 6 })
    local rows = { { 3, 1, 3, 1 }, { 6, 5, 4, 6 } }
    for r = 1, 2 do assert.equal(v:get(r), rows[r][i:get(r)]) end
    v = T.mode(T.tensor({ true, false, true }))
    check(v, T.bool, {}, true)
  end)
  it("are differentiable through the selected elements", function()
    gradcheck(function(a) return (T.kthvalue(a, 2, 2)) end, { r64(3, 4) })
    gradcheck(function(a) return (T.median(a, 1)) end, { r64(3, 4) })
    gradcheck(function(a) return (T.nanmedian(a)) end, { r64(3, 4) })
    gradcheck(function(a) return (T.mode(a, 2)) end, { r64(3, 4) })
  end)
end)

describe("quantile / nanquantile", function()
  local x = T.tensor({ 1., 2., 3., 4. }, { dtype = T.float64 })
  it("interpolate between order statistics", function()
    check(T.quantile(x, 0.5), T.float64, {}, 2.5)
    check(T.quantile(x, 0.4, { interpolation = "lower" }), T.float64, {}, 2)
    check(T.quantile(x, 0.4, { interpolation = "higher" }), T.float64, {}, 3)
    check(T.quantile(x, 0.4, { interpolation = "nearest" }), T.float64, {}, 2)
    check(T.quantile(x, 0.4, { interpolation = "midpoint" }), T.float64, {}, 2.5)
    check(T.quantile(x, T.tensor({ 0., 1. }, { dtype = T.float64 })), T.float64, { 2 }, { 1, 4 })
  end)
  it("reduce along a dim with the q dim first, keepdim", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local m = T.tensor({ { 1., 2., 3., 4. }, { 5., 6., 7., 8. } })
    check(T.quantile(m, T.tensor({ 0.25, 0.5 }), 2, true), T.float32, { 2, 2, 1 }, { { { 1.75 }, { 5.75 } }, { { 2.5 }, { 6.5 } } })
    check(T.quantile(m, 0.5, 1), T.float32, { 4 }, { 3, 4, 5, 6 })
    check(T.quantile(m, 0.5, { dim = 1, keepdim = true }), T.float32, { 1, 4 }, { { 3, 4, 5, 6 } })
  end)
  it("quantile is NaN when a NaN is present; nanquantile skips NaN", function()
    local y = T.tensor({ 1., NaN, 3. }, { dtype = T.float64 })
    assert.is_true(isnan(T.quantile(y, 0.5):item()))
    check(T.nanquantile(y, 0.5), T.float64, {}, 2)
    assert.is_true(isnan(T.nanquantile(T.tensor({ NaN, NaN }), 0.5):item()))
  end)
  it("raise PyTorch's errors", function()
    raises("float or double", T.quantile, T.tensor({ 1, 2 }), 0.5)
    raises("range [0, 1]", T.quantile, x, 1.5)
    raises("interpolation", T.quantile, x, 0.5, { interpolation = "cubic" })
    raises("same dtype", T.quantile, x, T.tensor({ 0.5 }))
  end)
  it("is differentiable", function()
    gradcheck(function(a) return T.quantile(a, T.tensor({ 0.2, 0.7 }, { dtype = T.float64 }), 2, true) end, { r64(3, 4) })
  end)
end)

describe("nansum, nanmean", function()
  it("treat NaN as absent", function()
    local x = T.tensor({ { 1., NaN }, { 3., 4. } })
    check(T.nansum(x), T.float32, {}, 8)
    check(x:nansum(2), T.float32, { 2 }, { 1, 7 })
    check(T.nanmean(x, 1), T.float32, { 2 }, { 2, 4 })
    check(T.nansum(T.tensor({ 1, 2 })), T.int64, {}, 3)
    raises("floating point", T.nanmean, T.tensor({ 1, 2 }))
  end)
  it("are differentiable", function()
    gradcheck(function(a) return T.nanmean(a, 2) end, { r64(3, 4) })
  end)
end)

describe("cov / corrcoef", function()
  local x = T.tensor({ { 0., 1., 2. }, { 2., 1., 0. } }, { dtype = T.float64 })
  it("cov with correction and weights", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    check(T.cov(x), T.float64, { 2, 2 }, { { 1, -1 }, { -1, 1 } })
    check(T.cov(x, { correction = 0 }), T.float64, { 2, 2 }, { { 2 / 3, -2 / 3 }, { -2 / 3, 2 / 3 } })
    check(T.cov(T.tensor({ 1., 2., 3. }, { dtype = T.float64 })), T.float64, {}, 1)
    -- fweights repeat observations: {0, 1, 1, 2} has mean 1 and variance 2/3
    check(T.cov(T.tensor({ { 0., 1., 2. } }, { dtype = T.float64 }), { fweights = T.tensor({ 1, 2, 1 }) }), T.float64, {}, 2 / 3)
    raises("fweights", T.cov, x, { fweights = T.tensor({ 1., 2., 1. }) })
    raises("aweights cannot be negative", T.cov, x, { aweights = T.tensor({ 1., -2., 1. }, { dtype = T.float64 }) })
  end)
  it("corrcoef normalises to [-1, 1]", function()
    check(T.corrcoef(x), T.float64, { 2, 2 }, { { 1, -1 }, { -1, 1 } })
  end)
  it("are differentiable", function()
    gradcheck(function(a) return T.cov(a, { aweights = T.tensor({ 1., 2, 3, 4 }, { dtype = T.float64 }) }) end, { r64(3, 4) })
    gradcheck(T.corrcoef, { r64(3, 4) })
  end)
end)

describe("sort / argsort with stable = true", function()
  it("keep equal elements in their original order, both directions", function()
    local v, i = T.sort(T.tensor({ 1, 2, 1, 2 }), { stable = true })
    check(v, T.int64, { 4 }, { 1, 1, 2, 2 })
    check(i, T.int64, { 4 }, { 1, 3, 2, 4 })
    v, i = T.sort(T.tensor({ 1, 2, 1, 2 }), 1, true, { stable = true })
    check(i, T.int64, { 4 }, { 2, 4, 1, 3 })
    check(T.argsort(T.tensor({ 3, 1, 3, 1 }), { stable = true, descending = true }), T.int64, { 4 }, { 1, 3, 2, 4 })
    check(T.tensor({ { 2, 1 }, { 1, 1 } }):t():argsort(1, { stable = true }), T.int64, { 2, 2 }, { { 2, 1 }, { 1, 2 } })
  end)
  it("put NaN last ascending and first descending", function()
    local v = T.sort(T.tensor({ 1., NaN, -1. }))
    assert.is_true(isnan(v:get(3)))
    v = T.sort(T.tensor({ 1., NaN, -1. }), 1, true)
    assert.is_true(isnan(v:get(1)))
  end)
end)

-- NumPy-generated differential cases (tools/gen_structural_fixtures.py):
-- einsum, tensordot, kron, quantile modes, cov weights, histogram, pad modes,
-- searchsorted, unique, bincount, diff, roll, rot90, tril/triu, logcumsumexp.
describe("differential cases from NumPy", function()
  local cases = dofile("spec/fixtures/structural_numpy.lua")
  local function build(v)
    if type(v) ~= "table" then return v end
    if v.dtype and v.data then
      local t = T.tensor(v.data, { dtype = T[v.dtype] })
      if #v.shape ~= 1 then t = t:reshape(v.shape) end
      return t
    end
    local out = {}
    for k, x in pairs(v) do out[k] = build(x) end
    return out
  end
  local function same(want, got, what)
    assert.equal(T[want.dtype] == T.int64 and T.int64 or got.dtype, got.dtype, what .. " dtype")
    assert.same(want.shape, got.shape, what .. " shape")
    local g = got:reshape({ got:numel() }):totable()
    for i, w in ipairs(want.data) do
      local x = g[i]
      if w ~= w then assert.is_true(x ~= x, what .. " element " .. i .. " should be NaN")
      -- (exact for an integer value; where numbers have no integer subtype a
      -- whole-valued float of a floating result reads as one, and is compared
      -- as the float it is on 5.4)
      elseif math.type(w) == "integer" and (host.has_integers or not want.dtype:find("float")) then
        assert.equal(w, math.tointeger(x) or x, what .. " element " .. i)
      else
        assert.is_true(math.abs(w - x) <= 1e-9 * math.max(1, math.abs(w)) or w == x,
          ("%s element %d: want %s got %s"):format(what, i, w, x))
      end
    end
  end
  for i, c in ipairs(cases) do
    it(("%s #%d agrees with NumPy"):format(c.op, i), function()
      local args = build(c.args)
      local f = T
      for part in c.op:gmatch("[^%.]+") do f = f[part] end
      local res = table.pack(f(table.unpack(args, 1, #c.args)))
      if c.expect.dtype then same(c.expect, res[1], c.op)
      else for k, e in ipairs(c.expect) do same(e, res[k], c.op .. " result " .. k) end end
    end)
  end
end)
