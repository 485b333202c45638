-- The vectorised paths of the reductions (contiguous float32/float64 rows,
-- column blocks, runs cut into pieces when there are fewer outputs than
-- threads) give the generic path's results: checked against float64 and
-- against the same reduction of a strided copy, with non-finite rows.
local T = require "ltensor"

local inf, nan = 1 / 0, 0 / 0

local function close(a, b, tol)
  local d = (a:double() - b:double()):abs()
  local ok = d:le(tol + tol * b:double():abs()):logical_or(a:isnan():logical_and(b:isnan()))
  ok = ok:logical_or(a:double():eq(b:double()))
  return ok:all():item()
end

describe("the vectorised reduction paths", function()
  local x = T.randn(7, 1003)
  local xd = x:double()
  local xt = x:t():contiguous():t()   -- the same values, the reduced dim strided

  it("logsumexp over rows matches float64 and the strided walk", function()
    assert.is_true(close(x:logsumexp(2), xd:logsumexp(2), 1e-6))
    assert.is_true(close(x:logsumexp(2), xt:logsumexp(2), 1e-6))
    assert.is_true(close(xd:logsumexp(2), xd:t():contiguous():t():logsumexp(2), 1e-12))
  end)

  it("logsumexp keeps PyTorch's non-finite rows", function()
    local a = T.tensor({ { 1, 2, 3 }, { -inf, -inf, -inf }, { -inf, 0, 1 }, { inf, 1, 2 }, { nan, 1, 2 } })
    local r = a:logsumexp(2)
    assert.near(3.40760596, r[1]:item(), 1e-5)
    assert.equal(-inf, r[2]:item())
    assert.near(1.31326169, r[3]:item(), 1e-5)
    assert.equal(inf, r[4]:item())
    assert.is_true(r[5]:item() ~= r[5]:item())
    assert.same({ 2 }, T.ones(2, 0):logsumexp(2):size())
    assert.equal(-inf, T.ones(2, 0):logsumexp(2)[1]:item())
  end)

  it("norm 1 and 2 over rows match float64 and the strided walk", function()
    for _, p in ipairs({ 1, 2 }) do
      assert.is_true(close(x:norm(p, 2), xd:norm(p, 2), 1e-6))
      assert.is_true(close(x:norm(p, 2), xt:norm(p, 2), 1e-6))
    end
    local a = T.tensor({ { 3, 4, 0 }, { nan, 1, 2 }, { inf, 1, 2 } })
    local r = a:norm(2, 2)
    assert.equal(5, r[1]:item())
    assert.is_true(r[2]:item() ~= r[2]:item())
    assert.equal(inf, r[3]:item())
    assert.equal(0, T.zeros(2, 0):norm(2, 2)[1]:item())
  end)

  it("prod over rows and over strided dims matches float64", function()
    local y = T.rand(6, 40) + 0.5
    assert.is_true(close(y:prod(2), y:double():prod(2), 1e-6))
    assert.is_true(close(y:prod(1), y:double():prod(1), 1e-6))
    local a = T.tensor({ { 1, 2, 3, 4, 5, 6, 7, 8, 9, 0.5 }, { 1, nan, 2, 3, 4, 5, 6, 7, 8, 9 },
                         { inf, 0, 1, 1, 1, 1, 1, 1, 1, 1 }, { 1, 2, 3, -1, 1, 1, 1, 1, 1, 2 } })
    local r = a:prod(2)
    assert.equal(181440, r[1]:item())
    assert.is_true(r[2]:item() ~= r[2]:item())
    assert.is_true(r[3]:item() ~= r[3]:item())   -- inf * 0
    assert.equal(-12, r[4]:item())
    assert.equal(1, T.ones(3, 0):prod(2)[1]:item())
    assert.equal(T.int64, T.tensor({ 2, 3 }, { dtype = T.int32 }):prod().dtype)
  end)

  it("sums of few long rows give the same result on 1 and more threads", function()
    local n = T.get_num_threads()
    local a = T.arange(0, 3 * 200000):float():reshape(3, 200000)
    T.set_num_threads(1)
    local s1, m1 = a:sum(2), a:amax(2)
    T.set_num_threads(4)
    local s4, m4 = a:sum(2), a:amax(2)
    local b = a:clone()
    b[{ 2, 777 }] = nan
    local bn = b:amax(2)
    T.set_num_threads(n)
    assert.is_true(close(s1, s4, 1e-6))
    assert.same(m1:totable(), m4:totable())
    assert.equal(599999, m4[3]:item())
    assert.is_true(bn[2]:item() ~= bn[2]:item())
    assert.equal(199999, bn[1]:item())
  end)
  it("column sums cut into row bands on several threads match float64 and one thread", function()
    local n = T.get_num_threads()
    -- rows not a multiple of the 64-row flush, widths below and above one
    -- 1024-column block, float32 and float64, sum and mean, a transposed
    -- input whose kept dim is still unit-stride, inf and nan in a column
    for _, shape in ipairs({ { 1000, 1000 }, { 777, 2500 }, { 300, 9 } }) do
      for _, dt in ipairs({ T.float32, T.float64 }) do
        local a = T.randn(shape[1], shape[2], { dtype = dt })
        a[{ 5, 3 }] = inf
        a[{ 9, 4 }] = nan
        T.set_num_threads(1)
        local s1, m1 = a:sum(1), a:mean(1)
        T.set_num_threads(2)
        local s2, m2 = a:sum(1), a:mean(1)
        local st = a:t():contiguous():t():sum(1)
        T.set_num_threads(n)
        local tol = dt == T.float32 and 1e-5 or 1e-12
        assert.is_true(close(s2, a:double():sum(1), tol))
        assert.is_true(close(m2, a:double():mean(1), tol))
        assert.is_true(close(s2, s1, tol) and close(m2, m1, tol) and close(st, s2, tol))
        assert.equal(inf, s2[3]:item())
        assert.is_true(s2[4]:item() ~= s2[4]:item())
        assert.equal(dt, s2.dtype)
      end
    end
    -- a 3-d input (more kept dims) and a reduction over two dims keep the
    -- column blocks
    local b = T.randn(4, 300, 50)
    assert.is_true(close(b:sum(2), b:double():sum(2), 1e-5))
    assert.is_true(close(b:sum({ 1, 2 }), b:double():sum({ 1, 2 }), 1e-5))
  end)
end)
