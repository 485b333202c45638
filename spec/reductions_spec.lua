-- Reductions, scans and softmax (SPEC §3 result dtypes, §6 reductions).
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local nan, inf = 0 / 0, math.huge

local function flat(v, out)
  out = out or {}
  if type(v) == "table" then for i = 1, #v do flat(v[i], out) end else out[#out + 1] = v end
  return out
end

-- values of t equal want (nested tables), NaN == NaN, floats within tol
local function same(t, want, tol)
  tol = tol or 1e-6
  local got = flat(t:totable())
  local exp = flat(want)
  assert.are.equal(#exp, #got, "element count")
  for i = 1, #exp do
    local g, w = got[i], exp[i]
    if w ~= w then
      assert.is_true(g ~= g, ("element %d: want nan, got %s"):format(i, tostring(g)))
    elseif type(w) == "number" and math.type(w) == "float" and w ~= inf and w ~= -inf then
      assert.is_true(math.abs(g - w) <= tol * (1 + math.abs(w)),
        ("element %d: want %s, got %s"):format(i, tostring(w), tostring(g)))
    else
      assert.are.equal(w, g, ("element %d"):format(i))
    end
  end
end

local function shape(t) return t.shape end

local function errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local M = T.tensor({{1, 2, 3}, {4, 5, 6}})               -- int64 2x3
local F = T.tensor({{1.5, -2, 3}, {4, 0.5, -6}}, {dtype = T.float64})

describe("sum", function()
  it("reduces everything without a dim to a 0-dim tensor", function()
    local s = M:sum()
    assert.are.same({}, shape(s))
    assert.are.equal(21, s:item())
    assert.are.equal(T.int64, s.dtype)
  end)
  it("reduces one dim, negative dims and keepdim", function()
    same(M:sum(1), {5, 7, 9})
    same(M:sum(-1), {6, 15})
    assert.are.same({2, 1}, shape(M:sum(2, true)))
    same(M:sum(2, true), {{6}, {15}})
    same(T.sum(M, 1), {5, 7, 9})
  end)
  it("reduces a list of dims", function()
    local x = T.arange(24):view(2, 3, 4)
    same(x:sum({1, 3}), {60, 92, 124})
    assert.are.same({1, 3, 1}, shape(x:sum({1, -1}, true)))
    assert.are.equal(276, x:sum({}):item())          -- an empty list reduces all dims
  end)
  it("gives int64 for bool and integral inputs and keeps float dtypes", function()
    assert.are.equal(T.int64, T.tensor({true, false, true}):sum().dtype)
    assert.are.equal(2, T.tensor({true, false, true}):sum():item())
    assert.are.equal(T.int64, T.tensor({1, 2}, {dtype = T.int8}):sum().dtype)
    assert.are.equal(T.int64, T.tensor({1, 2}, {dtype = T.uint8}):sum(1).dtype)
    assert.are.equal(T.float32, T.tensor({1.5, 2}):sum().dtype)
    assert.are.equal(T.float16, T.tensor({1.5, 2}, {dtype = T.float16}):sum().dtype)
  end)
  it("honours a dtype option", function()
    local s = M:sum(1, false, {dtype = T.float64})
    assert.are.equal(T.float64, s.dtype)
    same(s, {5.0, 7.0, 9.0})
  end)
  it("wraps int64 overflow", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.are.equal(math.mininteger, T.tensor({math.maxinteger, 1}):sum():item())
    assert.are.equal(math.maxinteger, T.tensor({math.mininteger, -1}):sum():item())
    -- int8 values do not wrap at 8 bits: the sum is in int64
    assert.are.equal(400, T.tensor({100, 100, 100, 100}, {dtype = T.int8}):sum():item())
  end)
  it("sums 16M float32 ones exactly", function()
    assert.are.equal(16777216.0, T.ones(16777216):sum():item())
    assert.are.equal(16777217.0, T.ones(16777217, {dtype = T.float64}):sum():item())
  end)
  it("sums float16 with a float32 accumulator", function()
    -- 4096 halves of 1: a float16 accumulator would stop at 2048
    assert.are.equal(4096.0, T.ones(4096, {dtype = T.float16}):sum():item())
  end)
  it("works on empty and 0-dim tensors", function()
    assert.are.equal(0.0, T.zeros(0):sum():item())
    same(T.zeros(0, 3):sum(1), {0.0, 0.0, 0.0})
    assert.are.same({0}, shape(T.zeros(0, 3):sum(2)))
    local z = T.tensor(5)
    assert.are.equal(5, z:sum(1):item())
    assert.are.equal(5, z:sum(-1, true):item())
    assert.are.same({}, shape(z:sum(1, true)))
  end)
  it("reads transposed and expanded inputs", function()
    local t = M:t()
    same(t:sum(1), {6, 15})
    same(t:sum(2), {5, 7, 9})
    local e = T.tensor({1, 2, 3}):expand(4, 3)
    same(e:sum(1), {4, 8, 12})
    same(e:sum(2), {6, 6, 6, 6})
    assert.are.equal(24, e:sum():item())
  end)
  it("reduces the leading dim of a large matrix (column blocks)", function()
    local x = T.arange(3000 * 20, {dtype = T.float32}):view(3000, 20)
    local s = x:sum(1)
    -- column j (0-based) = sum_i (20 i + j) = 20 * 2999*3000/2 + 3000 j
    assert.are.equal(math.floor(20 * 2999 * 3000 / 2) + 3000 * 7, s:get(8))
    local mean = x:double():mean(1)
    assert.are.equal((math.floor(20 * 2999 * 3000 / 2) + 3000 * 7) / 3000, mean:get(8))
  end)
  it("propagates NaN and inf", function()
    assert.is_true(T.tensor({1.0, nan}):sum():item() ~= T.tensor({1.0, nan}):sum():item())
    assert.are.equal(inf, T.tensor({1.0, inf}):sum():item())
    local r = T.tensor({inf, -inf}):sum():item()
    assert.is_true(r ~= r)
  end)
  it("sums complex tensors", function()
    local c = T.ones(3, {dtype = T.complex64})
    assert.are.equal(T.complex64, c:sum().dtype)
    assert.are.same({3.0, 0.0}, c:sum():item())   -- complex items are {re, im}
  end)
  it("raises on bad dims", function()
    assert.truthy(errmsg(M.sum, M, 3):find("ltensor.sum: dimension out of range (expected to be in range of [-2, 2], but got 3)", 1, true))
    assert.truthy(errmsg(M.sum, M, {1, -2}):find("ltensor.sum: dim 1 appears multiple times in the list of dims", 1, true))
    assert.truthy(errmsg(M.sum, M, 1.5):find("ltensor.sum: dim must be an integer", 1, true))
    assert.truthy(errmsg(M.sum, M, 1, 2):find("ltensor.sum: keepdim must be a boolean", 1, true))
    assert.truthy(errmsg(M.sum, M, true):find("ltensor.sum: expected a dim", 1, true))
  end)
end)

describe("mean", function()
  it("averages floats with dims, keepdim and lists", function()
    same(F:mean(), {1.0 / 6})
    same(F:mean(1), {2.75, -0.75, -1.5})
    same(F:mean(-1, true), {{2.5 / 3}, {-1.5 / 3}})
    same(F:mean({1, 2}), {1.0 / 6})
  end)
  it("gives nan for empty input", function()
    local m = T.zeros(0):mean():item()
    assert.is_true(m ~= m)
    assert.are.same({3}, shape(T.zeros(0, 3):mean(1)))
  end)
  it("refuses integral input with PyTorch's message", function()
    local e = errmsg(T.mean, T.tensor({1, 2}))
    assert.truthy(e:find("ltensor.mean: could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long", 1, true))
    assert.truthy(errmsg(T.mean, T.tensor({true})):find("Got: Bool", 1, true))
  end)
  it("accepts integral input with a floating dtype option", function()
    same(T.tensor({1, 2}):mean(nil, nil, {dtype = T.float64}), {1.5})
    same(T.tensor({1, 2}):mean({dtype = T.float64}), {1.5})
  end)
  it("reads transposed input", function()
    same(F:t():mean(2), {2.75, -0.75, -1.5})
  end)
end)

describe("prod", function()
  it("multiplies with dims and keepdim", function()
    assert.are.equal(720, M:prod():item())
    same(M:prod(1), {4, 10, 18})
    same(M:prod(-1, true), {{6}, {120}})
    assert.are.equal(T.int64, T.tensor({2, 3}, {dtype = T.uint8}):prod().dtype)
  end)
  it("gives 1 for empty input and wraps integer overflow", function()
    assert.are.equal(1.0, T.zeros(0):prod():item())
    assert.are.equal(0, T.tensor({4294967296, 4294967296}):prod():item())
  end)
  it("reads expanded input", function()
    same(T.tensor({2, 3}):expand(3, 2):prod(1), {8, 27})
  end)
end)

describe("max and min", function()
  it("return one 0-dim tensor without a dim", function()
    local m = M:max()
    assert.are.same({}, shape(m))
    assert.are.equal(6, m:item())
    assert.are.equal(1, M:min():item())
    assert.are.equal(T.int64, M:max().dtype)
  end)
  it("return values and 1-based int64 indices with a dim", function()
    local v, i = M:max(1)
    same(v, {4, 5, 6}); same(i, {2, 2, 2})
    assert.are.equal(T.int64, i.dtype)
    v, i = F:min(-1, true)
    same(v, {{-2.0}, {-6.0}}); same(i, {{2}, {3}})
    v, i = T.max(F, 2)
    same(v, {3.0, 4.0}); same(i, {3, 1})
  end)
  it("return the first index on ties", function()
    local _, i = T.tensor({3, 1, 3, 3}):max(1)
    assert.are.equal(1, i:item())
    _, i = T.tensor({1, 0, 0}):min(1)
    assert.are.equal(2, i:item())
  end)
  it("propagate NaN (and point at it)", function()
    local x = T.tensor({1.0, nan, 5.0, nan})
    local v, i = x:max(1)
    assert.is_true(v:item() ~= v:item())
    assert.are.equal(2, i:item())
    assert.is_true(x:min():item() ~= x:min():item())
    assert.are.equal(inf, T.tensor({1.0, inf}):max():item())
    assert.are.equal(-inf, T.tensor({1.0, -inf}):min():item())
  end)
  it("keep the dtype (bool and unsigned too)", function()
    assert.are.equal(T.bool, T.tensor({true, false}):max().dtype)
    assert.are.equal(true, T.tensor({true, false}):max():item())
    assert.are.equal(200, T.tensor({200, 3}, {dtype = T.uint8}):max():item())
    local big = T.tensor({0, -1}, {dtype = T.int64}):to(T.uint64)   -- 2^64 - 1 stays the largest
    assert.are.equal(-1, big:max():item())
  end)
  it("handle 0-dim, transposed and expanded inputs", function()
    local v, i = T.tensor(7.5):max(1)
    assert.are.equal(7.5, v:item()); assert.are.equal(1, i:item())
    v, i = M:t():max(1)
    same(v, {3, 6}); same(i, {3, 3})
    v, i = T.tensor({1, 9, 2}):expand(2, 3):max(2)
    same(v, {9, 9}); same(i, {2, 2})
  end)
  it("reduce a non-empty dim of a tensor with another empty dim", function()
    local v, i = T.zeros(0, 3):max(2)
    assert.are.same({0}, shape(v)); assert.are.same({0}, shape(i))
  end)
  it("raise PyTorch's errors", function()
    assert.truthy(errmsg(T.max, T.zeros(0, 3), 1):find("ltensor.max: expected reduction dim 1 to have non-zero size", 1, true))
    assert.truthy(errmsg(T.min, T.zeros(2, 0), -1):find("ltensor.min: expected reduction dim 2 to have non-zero size", 1, true))
    assert.truthy(errmsg(T.max, T.zeros(0)):find("ltensor.max: expected reduction dim to be specified for input.numel() == 0", 1, true))
    assert.truthy(errmsg(T.max, T.ones(2, {dtype = T.complex64})):find("ltensor.max: \"max_cpu\" not implemented for 'ComplexFloat'", 1, true))
    assert.truthy(errmsg(T.max, M, {1, 2}):find("ltensor.max: dim must be an integer", 1, true))
    assert.truthy(errmsg(T.max, M, 3):find("dimension out of range", 1, true))
  end)
  it("with a tensor second argument is the elementwise maximum/minimum", function()
    same(T.max(T.tensor({1, 5}), T.tensor({3, 2})), {3, 5})
    same(T.tensor({1, 5}):min(T.tensor({3, 2})), {1, 2})
  end)
end)

describe("amax and amin", function()
  it("reduce several dims without indices", function()
    local x = T.arange(24):view(2, 3, 4)
    same(x:amax({1, 3}), {15, 19, 23})
    same(x:amin({-1, 1}, true), {{{0}, {4}, {8}}})
    assert.are.equal(23, x:amax():item())
    assert.are.equal(T.int16, T.tensor({1, 2}, {dtype = T.int16}):amin().dtype)
  end)
  it("propagate NaN", function()
    assert.is_true(T.tensor({nan, 1.0}):amax():item() ~= T.tensor({nan, 1.0}):amax():item())
  end)
  it("raise on empty reductions", function()
    assert.truthy(errmsg(T.amax, T.zeros(0, 2), 1):find("ltensor.amax: expected reduction dim 1 to have non-zero size", 1, true))
    assert.truthy(errmsg(T.amin, T.zeros(0)):find("ltensor.amin: expected reduction dim to be specified", 1, true))
  end)
end)

describe("argmax and argmin", function()
  it("index the flattened tensor without a dim (1-based)", function()
    local a = M:argmax()
    assert.are.same({}, shape(a))
    assert.are.equal(6, a:item())
    assert.are.equal(1, M:argmin():item())
    assert.are.equal(T.int64, a.dtype)
    assert.are.equal(2, F:t():argmax():item())     -- flattened in the view's order
  end)
  it("index along a dim with keepdim", function()
    same(F:argmax(2), {3, 1})
    same(F:argmin(1, true), {{1, 1, 2}})
  end)
  it("return the first index on ties and the NaN's index", function()
    assert.are.equal(2, T.tensor({0, 4, 4}):argmax():item())
    assert.are.equal(3, T.tensor({1.0, 2.0, nan, nan}):argmin():item())
  end)
  it("raise on empty input", function()
    assert.truthy(errmsg(T.argmax, T.zeros(0)):find("ltensor.argmax: expected reduction dim to be specified for input.numel() == 0", 1, true))
    assert.truthy(errmsg(T.argmin, T.zeros(3, 0), 2):find("ltensor.argmin: expected reduction dim 2 to have non-zero size", 1, true))
  end)
  it("refuse bool and complex input, as PyTorch 1.13 does", function()
    assert.truthy(errmsg(T.argmax, T.tensor({true, false})):find("ltensor.argmax: \"argmax_cpu\" not implemented for 'Bool'", 1, true))
    assert.truthy(errmsg(T.argmin, T.tensor({true, false}), 1):find("ltensor.argmin: \"argmin_cpu\" not implemented for 'Bool'", 1, true))
    assert.truthy(errmsg(T.argmax, T.ones(2, {dtype = T.complex128})):find("not implemented for 'ComplexDouble'", 1, true))
  end)
end)

describe("all and any", function()
  it("give bool results", function()
    local x = T.tensor({{1, 0}, {2, 3}})
    assert.are.equal(false, x:all():item())
    assert.are.equal(true, x:any():item())
    same(x:all(2), {false, true})
    same(x:any(1, true), {{true, true}})
    assert.are.equal(T.bool, x:all().dtype)
  end)
  it("keep uint8 for uint8 input (PyTorch 1.13)", function()
    local u = T.tensor({1, 0}, {dtype = T.uint8})
    assert.are.equal(T.uint8, u:all().dtype)
    assert.are.equal(0, u:all():item())
    assert.are.equal(1, u:any():item())
  end)
  it("treat NaN as true and follow the empty conventions", function()
    assert.are.equal(true, T.tensor({nan}):all():item())
    assert.are.equal(true, T.zeros(0):all():item())
    assert.are.equal(false, T.zeros(0):any():item())
  end)
end)

describe("std and var", function()
  local x = T.tensor({{1.0, 2.0, 3.0, 4.0}, {2.0, 2.0, 2.0, 2.0}}, {dtype = T.float64})
  it("use correction 1 by default", function()
    same(x:var(2), {5 / 3, 0.0})
    same(x:std(2), {math.sqrt(5 / 3), 0.0})
    same(x:var(), {(function()
      local v = {1, 2, 3, 4, 2, 2, 2, 2}; local m = 18 / 8; local s = 0
      for _, a in ipairs(v) do s = s + (a - m) ^ 2 end
      return s / 7 end)()})
  end)
  it("take correction in an options table", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same(x:var(2, false, {correction = 0}), {1.25, 0.0})
    same(x:std(2, true, {correction = 0}), {{math.sqrt(1.25)}, {0.0}})
    same(T.tensor({1.0, 3.0}):var({correction = 0}), {1.0})
    same(T.tensor({1.0, 3.0}):var(false), {1.0})   -- PyTorch's var(t, unbiased)
  end)
  it("give nan with too few elements", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local v = T.tensor({1.0}):std():item()
    assert.is_true(v ~= v)
    v = T.zeros(0):var():item()
    assert.is_true(v ~= v)
  end)
  it("read transposed input and handle dim lists", function()
    same(x:t():var(1), {5 / 3, 0.0})
    assert.are.same({1, 1}, shape(x:std({1, 2}, true)))
  end)
  it("return a real dtype for complex input", function()
    local c = T.ones(3, {dtype = T.complex64})
    assert.are.equal(T.float32, c:var().dtype)
    assert.are.equal(0.0, c:var():item())
  end)
  it("refuse integral input", function()
    assert.truthy(errmsg(T.std, T.tensor({1, 2})):find("ltensor.std: std and var only support floating point and complex dtypes", 1, true))
    assert.truthy(errmsg(T.var, T.tensor({true})):find("ltensor.var: std and var only support floating point", 1, true))
    assert.truthy(errmsg(T.var, x, 1, false, {correction = "x"}):find("ltensor.var: correction must be a number", 1, true))
  end)
end)

describe("norm", function()
  local v = T.tensor({3.0, -4.0})
  it("defaults to the 2-norm and accepts p, 'fro', inf", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.are.equal(5.0, v:norm():item())
    assert.are.equal(5.0, v:norm("fro"):item())
    assert.are.equal(7.0, v:norm(1):item())
    assert.are.equal(4.0, v:norm(inf):item())
    assert.are.equal(3.0, v:norm(-inf):item())
    assert.are.equal(2.0, v:norm(0):item())
    same(v:norm(3), {(27 + 64) ^ (1 / 3)})
    assert.are.equal(5.0, v:norm({p = 2}):item())
  end)
  it("reduces dims", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local m = T.tensor({{3.0, 4.0}, {6.0, 8.0}})
    same(m:norm(2, 2), {5.0, 10.0})
    same(m:norm(1, 1, true), {{9.0, 12.0}})
    same(m:norm({p = 1, dim = 2}), {7.0, 14.0})
  end)
  it("propagates NaN in the inf-norm", function()
    local r = T.tensor({nan, 1.0}):norm(inf):item()
    assert.is_true(r ~= r)
  end)
  it("refuses integral input and unknown p", function()
    assert.truthy(errmsg(T.norm, T.tensor({1, 2})):find("ltensor.norm: input dtype should be either floating point or complex. Got Long instead", 1, true))
    assert.truthy(errmsg(T.norm, v, "nuc"):find("ltensor.norm: unsupported norm type 'nuc'", 1, true))
  end)
end)

describe("logsumexp", function()
  it("refuses complex input with PyTorch's message", function()
    assert.truthy(errmsg(T.logsumexp, T.ones(2, {dtype = T.complex64}), 1):find(
      "ltensor.logsumexp: Expected floating point type for result tensor, but got: ComplexFloat", 1, true))
  end)
  it("is stable for large values and handles dims", function()
    same(T.tensor({1000.0, 1000.0}, {dtype = T.float64}):logsumexp(1), {1000 + math.log(2)})
    local m = T.tensor({{0.0, 0.0}, {1.0, 2.0}}, {dtype = T.float64})
    same(m:logsumexp(2), {math.log(2), math.log(math.exp(1) + math.exp(2))})
    assert.are.same({2, 1}, shape(m:logsumexp(-1, true)))
  end)
  it("handles infinities and empty input", function()
    assert.are.equal(-inf, T.tensor({-inf, -inf}):logsumexp(1):item())
    assert.are.equal(inf, T.tensor({inf, 1.0}):logsumexp(1):item())
    assert.are.equal(-inf, T.zeros(0):logsumexp(1):item())
  end)
  it("promotes integral input to the default dtype", function()
    assert.are.equal(T.float32, T.tensor({1, 2}):logsumexp(1).dtype)
  end)
end)

describe("cumsum and cumprod", function()
  it("scan along a dim", function()
    same(M:cumsum(2), {{1, 3, 6}, {4, 9, 15}})
    same(M:cumsum(1), {{1, 2, 3}, {5, 7, 9}})
    same(M:cumprod(-1), {{1, 2, 6}, {4, 20, 120}})
    same(F:cumsum(1), {{1.5, -2.0, 3.0}, {5.5, -1.5, -3.0}})
  end)
  it("promote integral input to int64", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.are.equal(T.int64, T.tensor({1, 2}, {dtype = T.int32}):cumsum(1).dtype)
    assert.are.equal(T.int64, T.tensor({true, true}):cumsum(1).dtype)
    same(T.tensor({true, true}):cumsum(1), {1, 2})
    assert.are.equal(T.float32, T.tensor({1.0}):cumprod(1).dtype)
    assert.are.equal(T.float64, T.tensor({1, 2}):cumsum(1, {dtype = T.float64}).dtype)
  end)
  it("read transposed and expanded inputs", function()
    same(M:t():cumsum(1), {{1, 4}, {3, 9}, {6, 15}})
    same(T.tensor({1, 2}):expand(3, 2):cumsum(1), {{1, 2}, {2, 4}, {3, 6}})
  end)
  it("scan the leading dim of a wide matrix", function()
    local x = T.ones(5, 700)
    local c = x:cumsum(1)
    assert.are.equal(5.0, c:get(5, 700)); assert.are.equal(3.0, c:get(3, 1))
  end)
  it("handle 0-dim and empty tensors", function()
    assert.are.equal(4, T.tensor(4):cumsum(1):item())
    assert.are.same({0, 3}, shape(T.zeros(0, 3):cumsum(1)))
  end)
  it("wrap int64 overflow", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same(T.tensor({math.maxinteger, 1}):cumsum(1), {math.maxinteger, math.mininteger})
  end)
  it("require a dim", function()
    assert.truthy(errmsg(T.cumsum, M):find("ltensor.cumsum: missing required argument 'dim'", 1, true))
    assert.truthy(errmsg(T.cumprod, M, 3):find("ltensor.cumprod: dimension out of range", 1, true))
  end)
end)

describe("softmax and log_softmax", function()
  it("normalise along a dim", function()
    local x = T.tensor({{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}}, {dtype = T.float64})
    local e = math.exp(1) + math.exp(2) + math.exp(3)
    same(x:softmax(2), {{math.exp(1) / e, math.exp(2) / e, math.exp(3) / e}, {1 / 3, 1 / 3, 1 / 3}})
    same(x:log_softmax(-1), {{1 - math.log(e), 2 - math.log(e), 3 - math.log(e)},
      {-math.log(3), -math.log(3), -math.log(3)}})
    same(x:softmax(1), {{0.5, 1 / (1 + math.exp(-1)), 1 / (1 + math.exp(-2))},
      {0.5, 1 - 1 / (1 + math.exp(-1)), 1 - 1 / (1 + math.exp(-2))}})
  end)
  it("is stable for large inputs and propagates NaN", function()
    same(T.tensor({1000.0, 1000.0}):softmax(1), {0.5, 0.5})
    local r = T.tensor({1.0, nan}):softmax(1):totable()
    assert.is_true(r[1] ~= r[1] and r[2] ~= r[2])
    same(T.tensor({-inf, 0.0}):softmax(1), {0.0, 1.0})
  end)
  it("reads transposed input and keeps float dtypes", function()
    local x = T.tensor({{1.0, 2.0}, {3.0, 4.0}})
    same(x:t():softmax(2), x:softmax(1):t():totable())
    assert.are.equal(T.float32, x:softmax(1).dtype)
    assert.are.equal(T.float16, x:half():softmax(1).dtype)
  end)
  it("gives the default float dtype for integral input, or the dtype asked for", function()
    assert.are.equal(T.float32, T.tensor({1, 2}):softmax(1).dtype)
    assert.are.equal(T.float64, T.tensor({1, 2}):log_softmax(1, {dtype = T.float64}).dtype)
    assert.are.equal(T.float64, T.tensor({1.0, 2.0}):softmax(1, T.float64).dtype)
  end)
  it("handles 0-dim and empty tensors", function()
    assert.are.equal(1.0, T.tensor(3.0):softmax(1):item())
    assert.are.equal(0.0, T.tensor(3.0):log_softmax(-1):item())
    assert.are.same({0, 2}, shape(T.zeros(0, 2):softmax(2)))
  end)
  it("raises on a missing dim, complex input or an integral result dtype", function()
    assert.truthy(errmsg(T.softmax, T.ones(2)):find("ltensor.softmax: missing required argument 'dim'", 1, true))
    assert.truthy(errmsg(T.log_softmax, T.ones(2, {dtype = T.complex64}), 1):find("ltensor.log_softmax: \"log_softmax_cpu\" not implemented for 'ComplexFloat'", 1, true))
    assert.truthy(errmsg(T.softmax, T.ones(2), 1, {dtype = T.int32}):find("ltensor.softmax: expected a floating point dtype", 1, true))
  end)
end)

describe("sort, argsort and topk", function()
  local x = T.tensor({{3.0, 1.0, nan, 2.0}, {5.0, 5.0, -1.0, 7.0}})
  it("sort along the last dim by default, stably, NaN last", function()
    local v, i = x:sort()
    same(v, {{1.0, 2.0, 3.0, nan}, {-1.0, 5.0, 5.0, 7.0}})
    same(i, {{2, 4, 1, 3}, {3, 1, 2, 4}})
    assert.are.equal(T.int64, i.dtype)
  end)
  it("sort descending (NaN first, ties in order) and along other dims", function()
    local v, i = x:sort(2, true)
    same(v, {{nan, 3.0, 2.0, 1.0}, {7.0, 5.0, 5.0, -1.0}})
    same(i, {{3, 1, 4, 2}, {4, 1, 2, 3}})
    v, i = x:sort(1)
    same(i, {{1, 1, 2, 1}, {2, 2, 1, 2}})
    v = T.tensor({3, 1, 2}, {dtype = T.int8}):sort({descending = true})
    same(v, {3, 2, 1})
    assert.are.equal(T.int8, v.dtype)
  end)
  it("sort transposed input and keep int64 values exact", function()
    local _, i = x:t():sort(1)
    same(i, {{2, 3}, {4, 1}, {1, 2}, {3, 4}})
    local big = T.tensor({math.maxinteger, math.maxinteger - 1})
    same(big:sort(), {math.maxinteger - 1, math.maxinteger})
  end)
  it("argsort returns the indices only", function()
    same(x:argsort(-1, true), {{3, 1, 4, 2}, {4, 1, 2, 3}})
  end)
  it("topk takes the k largest or smallest", function()
    local v, i = x:topk(2)
    same(v, {{nan, 3.0}, {7.0, 5.0}}); same(i, {{3, 1}, {4, 1}})
    v, i = x:topk(1, 1, false)
    same(v, {{3.0, 1.0, -1.0, 2.0}}); same(i, {{1, 1, 2, 1}})
    assert.are.same({2, 0}, x:topk(0).shape)
  end)
  it("handles 0-dim and empty tensors", function()
    local v, i = T.tensor(3):sort()
    assert.are.equal(3, v:item()); assert.are.equal(1, i:item())
    assert.are.same({0}, T.zeros(0):sort().shape)
  end)
  it("raises on a bad k and complex input", function()
    assert.truthy(errmsg(T.topk, x, 5):find("ltensor.topk: selected index k out of range", 1, true))
    assert.truthy(errmsg(T.sort, T.ones(2, {dtype = T.complex64})):find("ltensor.sort: \"sort_cpu\" not implemented for 'ComplexFloat'", 1, true))
    assert.truthy(errmsg(T.topk, T.tensor({true, false}), 1):find("ltensor.topk: \"topk_cpu\" not implemented for 'Bool'", 1, true))
    assert.are.same({false, true}, T.tensor({true, false}):sort():totable())   -- sort has a Bool kernel
  end)
end)

-- The float32/float64 vector kernels (rows of unit stride, column blocks,
-- threads) against a plain double computation in Lua.  Sizes are chosen so
-- the vector bodies, the block flushes and the scalar tails all run.
describe("vector and threaded kernels", function()
  -- deterministic pseudo-random values in [-a, a]
  local function data(n, a, seed)
    local v, s = {}, seed or 1
    for i = 1, n do
      s = (s * 1103515245 + 12345) % 2147483648
      v[i] = (s / 2147483648 * 2 - 1) * (a or 10)
    end
    return v
  end
  local function mat(r, c, dt, a, seed)
    local v, rows = data(r * c, a, seed), {}
    for i = 1, r do
      local row = {}
      for j = 1, c do row[j] = v[(i - 1) * c + j] end
      rows[i] = row
    end
    local t = T.tensor(rows, {dtype = dt})
    return t, t:totable()   -- the stored (rounded) values
  end
  -- reference reductions over rows (dim 2) or columns (dim 1) of a Lua matrix
  local function ref(rows, dim, f, init)
    local out = {}
    local r, c = #rows, #rows[1]
    if dim == 2 then
      for i = 1, r do
        local a = init(rows[i][1])
        for j = 1, c do a = f(a, rows[i][j], j) end
        out[i] = a
      end
    else
      for j = 1, c do
        local a = init(rows[1][j])
        for i = 1, r do a = f(a, rows[i][j], i) end
        out[j] = a
      end
    end
    return out
  end
  -- like same(), one assertion for the whole tensor (same() asserts per element)
  local function close(t, want, tol)
    local got, exp = flat(t:totable()), flat(want)
    assert.are.equal(#exp, #got, "element count")
    for i = 1, #exp do
      local g, w = got[i], exp[i]
      local ok
      if w ~= w then ok = g ~= g
      elseif w == inf or w == -inf then ok = g == w
      else ok = math.abs(g - w) <= tol * (1 + math.abs(w)) end
      if not ok then
        assert.is_true(false, ("element %d: want %s, got %s"):format(i, tostring(w), tostring(g)))
      end
    end
  end
  local function add(a, v) return a + v end
  local function zero() return 0 end
  local function same_init(v) return v end
  local function gtmax(a, v) return (v ~= v or a ~= a) and (a ~= a and a or v) or math.max(a, v) end
  local function ltmin(a, v) return (v ~= v or a ~= a) and (a ~= a and a or v) or math.min(a, v) end

  for _, dt in ipairs({T.float32, T.float64}) do
    local tol = dt == T.float32 and 1e-5 or 1e-12
    for _, sz in ipairs({{19, 517}, {517, 19}, {5, 3}}) do
      local name = ("%s %dx%d"):format(tostring(dt), sz[1], sz[2])
      it("sum, mean, amax and amin of " .. name .. " along each dim", function()
        local x, rows = mat(sz[1], sz[2], dt)
        for dim = 1, 2 do
          local n = dim == 2 and sz[2] or sz[1]
          local s = ref(rows, dim, add, zero)
          close(x:sum(dim), s, tol * n)
          local m = {}
          for i = 1, #s do m[i] = s[i] / n end
          close(x:mean(dim), m, tol)
          close(x:amax(dim), ref(rows, dim, gtmax, same_init), 0)
          close(x:amin(dim), ref(rows, dim, ltmin, same_init), 0)
        end
      end)
      it("softmax and log_softmax of " .. name .. " along each dim", function()
        local x, rows = mat(sz[1], sz[2], dt, 30)
        for dim = 1, 2 do
          local mx = ref(rows, dim, gtmax, same_init)
          -- plain double reference, element by element
          local sm, lsm = {}, {}
          for i = 1, sz[1] do
            sm[i], lsm[i] = {}, {}
          end
          local sums = {}
          for i = 1, sz[1] do
            for j = 1, sz[2] do
              local k = dim == 2 and i or j
              sums[k] = (sums[k] or 0) + math.exp(rows[i][j] - mx[k])
            end
          end
          for i = 1, sz[1] do
            for j = 1, sz[2] do
              local k = dim == 2 and i or j
              sm[i][j] = math.exp(rows[i][j] - mx[k]) / sums[k]
              lsm[i][j] = rows[i][j] - mx[k] - math.log(sums[k])
            end
          end
          close(x:softmax(dim), sm, dt == T.float32 and 1e-5 or 1e-12)
          close(x:log_softmax(dim), lsm, dt == T.float32 and 1e-5 or 1e-12)
        end
      end)
      it("cumsum of " .. name .. " along each dim", function()
        local x, rows = mat(sz[1], sz[2], dt)
        for dim = 1, 2 do
          local want = {}
          for i = 1, sz[1] do want[i] = {} end
          if dim == 2 then
            for i = 1, sz[1] do
              local s = 0
              for j = 1, sz[2] do s = s + rows[i][j]; want[i][j] = s end
            end
          else
            for j = 1, sz[2] do
              local s = 0
              for i = 1, sz[1] do s = s + rows[i][j]; want[i][j] = s end
            end
          end
          close(x:cumsum(dim), want, tol)
        end
      end)
    end
  end

  it("propagate NaN from any position of a row or column (amax, amin)", function()
    for _, pos in ipairs({1, 6, 40, 100, 103}) do
      local v = {}
      for i = 1, 103 do v[i] = i * 1.0 end
      v[pos] = nan
      for _, dt in ipairs({T.float32, T.float64}) do
        local r = T.tensor({v}, {dtype = dt})
        assert.is_true(r:amax(2):item() ~= r:amax(2):item(), "amax row, nan at " .. pos)
        assert.is_true(r:amin(2):item() ~= r:amin(2):item(), "amin row, nan at " .. pos)
        local c = r:t():contiguous():expand(103, 9):contiguous()   -- 103x9: NaN in row pos of every column
        local cm = c:amax(1):totable()
        for j = 1, 9 do assert.is_true(cm[j] ~= cm[j], "amax column, nan at " .. pos) end
        cm = c:amin(1):totable()
        for j = 1, 9 do assert.is_true(cm[j] ~= cm[j], "amin column, nan at " .. pos) end
      end
    end
    local v = {}
    for i = 1, 70 do v[i] = -1.0 * i end
    v[33] = inf
    assert.are.equal(inf, T.tensor(v):amax():item())
    v[33] = -inf
    assert.are.equal(-inf, T.tensor(v):amin():item())
    assert.are.equal(-1.0, T.tensor(v):amax():item())
  end)

  it("give NaN rows and columns for NaN or +inf in softmax, zero for -inf", function()
    local v = {}
    for i = 1, 100 do v[i] = (i % 7) * 1.0 end
    for _, dt in ipairs({T.float32, T.float64}) do
      local base = T.tensor(v, {dtype = dt})
      -- rows: 4 rows of 100, one with a NaN, one with +inf, one with a -inf entry
      local x = base:expand(4, 100):contiguous()
      x:set(2, 50, nan); x:set(3, 99, inf); x:set(4, 10, -inf); x:set(1, 10, -1000.0)
      for _, f in ipairs({"softmax", "log_softmax"}) do
        local y = x[f](x, 2):totable()
        local yc = x:t():contiguous()[f](x:t():contiguous(), 1):t():totable()   -- the column kernel
        for _, out in ipairs({y, yc}) do
          for j = 1, 100 do
            assert.is_true(out[2][j] ~= out[2][j], f .. ": NaN row")
            assert.is_true(out[3][j] ~= out[3][j], f .. ": +inf row")
          end
          assert.are.equal(f == "softmax" and 0.0 or -inf, out[4][10])
          assert.is_true(math.abs(out[1][5] - out[4][5]) < 1e-6, f .. ": -inf takes no mass")
          assert.is_true(math.abs(out[1][5] - out[1][12]) < 1e-6, f .. ": equal inputs, equal outputs")
        end
      end
    end
  end)

  it("keep exact float32 sums of ones in column blocks beyond 2^24 rows", function()
    local x = T.ones(1, 8):expand(16777218, 8)
    local s = x:sum(1):totable()
    for j = 1, 8 do assert.are.equal(16777218.0, s[j]) end
  end)

  it("give the same results with several threads", function()
    local n0 = T.get_num_threads()
    -- 2.2M elements: past the grain of the cheap passes too
    local x = T.rand(1100, 2000) * 10 - 5
    local y = x:t()
    local function run()
      return {x:sum(2), x:sum(1), x:sum(), x:mean(2), x:amax(2), x:amin(1), x:amax(), x:softmax(2),
        x:softmax(1), x:log_softmax(2), x:cumsum(2), x:cumsum(1), y:softmax(2), y:var(2),
        (x:max(2)), x:logsumexp(1), x:double():sum(2), x:double():softmax(1)}
    end
    T.set_num_threads(1)
    local one = run()
    T.set_num_threads(4)
    local ok, many = pcall(run)
    T.set_num_threads(n0)
    assert.is_true(ok, tostring(many))
    for k = 1, #one do
      local a, b = one[k]:double(), many[k]:double()
      local err = (a - b):abs():max():item()
      assert.is_true(err <= 1e-5 * (1 + a:abs():max():item()), ("result %d differs by %g"):format(k, err))
    end
  end)
  it("match the two-pass formula on float64 rows of every tail length", function()
    -- the vector rows end with a masked, overlapping vector: lengths 1..37
    -- cover every remainder of 2, 4 and 8 lanes
    T.manual_seed(7)
    for n = 1, 37 do
      local x = T.randn(3, n, { dtype = T.float64 }) * 30
      local e = (x - x:amax(2, true)):exp()
      local want = e / e:sum(2, true)
      local lwant = (x - x:amax(2, true)) - e:sum(2, true):log()
      local got, lgot = x:softmax(2), x:log_softmax(2)
      assert.is_true(((got - want):abs() / want:clamp(1e-300)):max():item() < 1e-13, "softmax n=" .. n)
      assert.is_true((lgot - lwant):abs():max():item() < 1e-12, "log_softmax n=" .. n)
      local xf = x:float()
      local gf, lf = xf:softmax(2):double(), xf:log_softmax(2):double()
      local ef = (xf:double() - xf:double():amax(2, true)):exp()
      local wf = ef / ef:sum(2, true)
      assert.is_true((gf - wf):abs():max():item() < 1e-6, "float32 softmax n=" .. n)
      assert.is_true((lf - ((xf:double() - xf:double():amax(2, true)) - ef:sum(2, true):log())):abs():max():item() < 1e-4,
        "float32 log_softmax n=" .. n)
    end
    -- a lane far below the max underflows to exactly 0 (float64: below e^-708)
    local z = T.tensor({ { 0, -1000, -800, -1 } }, { dtype = T.float64 }):softmax(2):totable()[1]
    assert.are.equal(0.0, z[2]); assert.are.equal(0.0, z[3])
    assert.is_true(math.abs(z[4] - math.exp(-1) / (1 + math.exp(-1))) < 1e-15)
  end)

  it("reduce column blocks narrower than a row and wider than one block", function()
    -- widths around the block size (1024) and the 16-column rounding
    for _, w in ipairs({ 8, 17, 1000, 1024, 1025, 2100 }) do
      local x = T.rand(37, w, { dtype = T.float64 }) - 0.5
      local rows = x:t():contiguous()
      local s, m, a, b = x:sum(1), x:mean(1), x:amax(1), x:amin(1)
      for j = 1, w, math.max(1, math.floor(w / 7)) do
        local col = rows[j]
        assert.is_true(math.abs(s[j]:item() - col:sum():item()) < 1e-12, "sum w=" .. w)
        assert.is_true(math.abs(m[j]:item() - col:mean():item()) < 1e-12, "mean w=" .. w)
        assert.are.equal(col:max():item(), a[j]:item())
        assert.are.equal(col:min():item(), b[j]:item())
      end
      local xn = x:clone()
      xn[{ 5, w }] = 0 / 0
      assert.is_true(xn:amax(1)[w]:item() ~= xn:amax(1)[w]:item(), "NaN propagates, w=" .. w)
      assert.is_true(xn:amin(1)[w]:item() ~= xn:amin(1)[w]:item(), "NaN propagates, w=" .. w)
    end
  end)

  it("sort, kthvalue, median and mode the same with several threads", function()
    local n0 = T.get_num_threads()
    T.manual_seed(3)
    local x = T.randint(0, 40, { 600, 300 }):double()
    local function run()
      local sv, si = x:sort(2, true)
      local tv, ti = x:topk(5, 1)
      local kv, ki = x:kthvalue(7, 2)
      local dv, di = x:median(2)
      local mv, mi = x:mode(2)
      return { sv, si, tv, ti, kv, ki, dv, di, mv, mi, x:argsort(1) }
    end
    T.set_num_threads(1)
    local one = run()
    T.set_num_threads(4)
    local ok, many = pcall(run)
    T.set_num_threads(n0)
    assert.is_true(ok, tostring(many))
    for k = 1, #one do assert.is_true(T.equal(one[k], many[k]), "result " .. k) end
    -- stable: equal keys keep their order
    local sv, si = T.tensor({ 2, 1, 2, 1, 2 }):sort()
    assert.are.same({ 2, 4, 1, 3, 5 }, si:totable())
  end)
end)
