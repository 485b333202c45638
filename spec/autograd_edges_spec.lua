-- Gradients at the edges of the reductions and scans: zeros, NaN and inf,
-- ties.  Expected values are PyTorch 1.13's (computed with it when these
-- were written); the formulas follow its derivatives (prod_backward,
-- cumprod_backward, evenly_distribute_backward, scale_grad_by_count,
-- std_backward, reversed_cumsum).
local T = require "ltensor"
local nan, inf = 0 / 0, 1 / 0

local function same(got, want)
  if type(want) == "table" then
    if type(got) ~= "table" or #got ~= #want then return false end
    for i = 1, #want do if not same(got[i], want[i]) then return false end end
    return true
  end
  if want ~= want then return got ~= got end
  return got == want or math.abs(got - want) <= 1e-9 * math.max(1, math.abs(want))
end
local function grad_of(f, data)
  local x = T.tensor(data, { dtype = T.float64, requires_grad = true })
  local y = f(x)
  y:sum():backward()
  return x.grad:totable()
end
local function check(f, data, want)
  local got = grad_of(f, data)
  assert.is_true(same(got, want), "got " .. tostring(T.tensor(got, { dtype = T.float64 })))
end

describe("gradients at zeros, NaN and inf", function()
  local mixnan = { { 1, nan, 3, -2 }, { nan, nan, 0, 5 }, { 2, 2, -1, 2 } }
  local infs = { { inf, 1, -inf, 0 }, { -inf, -inf, 2, 1 }, { inf, inf, 3, -0.0 } }
  local ties = { { 1, 3, 3, 0 }, { 0, 0, 0, 0 }, { -1, 2, -1, 2 } }

  it("prod: exclusive products once the input holds a zero", function()
    check(function(x) return x:prod(2) end, mixnan, { { nan, -6, nan, nan }, { nan, nan, nan, nan }, { -4, -4, 8, -4 } })
    check(function(x) return x:prod(2) end, infs, { { nan, nan, nan, -inf }, { -inf, -inf, inf, inf }, { nan, nan, nan, inf } })
    check(function(x) return x:prod() end, { 2, 0, 3, -1.5 }, { -0.0, -9, -0.0, 0 })
    check(function(x) return x:prod() end, { 2, 0, 3, 0 }, { 0, 0, 0, 0 })   -- two zeros
    check(function(x) return x:prod(1) end, { { 2, 3 }, { 4, 5 } }, { { 4, 5 }, { 2, 3 } })   -- no zero: y / x
  end)

  it("amax/amin: NaN where no element equals a NaN result; max()/min() share among the NaNs", function()
    check(function(x) return x:amax(2) end, mixnan, { { nan, nan, nan, nan }, { nan, nan, nan, nan }, { 1 / 3, 1 / 3, 0, 1 / 3 } })
    check(function(x) return x:amin(2) end, mixnan, { { nan, nan, nan, nan }, { nan, nan, nan, nan }, { 0, 0, 1, 0 } })
    check(function(x) return x:max() end, mixnan, { { 0, 1 / 3, 0, 0 }, { 1 / 3, 1 / 3, 0, 0 }, { 0, 0, 0, 0 } })
    check(function(x) return x:min() end, mixnan, { { 0, 1 / 3, 0, 0 }, { 1 / 3, 1 / 3, 0, 0 }, { 0, 0, 0, 0 } })
    check(function(x) return x:max() end, ties, { { 0, 0.5, 0.5, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } })
  end)

  it("cumprod: exact at zeros (before, at and after the first zero) and with inf", function()
    check(function(x) return x:cumprod(2) end, mixnan, { { nan, nan, nan, nan }, { nan, nan, nan, 0 }, { -3, -4, 12, -4 } })
    check(function(x) return x:cumprod(2) end, infs, { { nan, nan, nan, -inf }, { nan, nan, inf, inf }, { nan, nan, inf, inf } })
    check(function(x) return x:cumprod(2) end, ties, { { 13, 4, 3, 9 }, { 1, 0, 0, 0 }, { -3, 2, -6, 2 } })
  end)

  it("cumprod and prod at zeros differentiate twice as PyTorch", function()
    local x = T.tensor({ { 2, 0, 3, 0, 4 }, { 1.5, -2, 0.5, 3, -1 } }, { dtype = T.float64, requires_grad = true })
    local g = T.autograd.grad(x:cumprod(2):sum(), { x }, { create_graph = true })[1]
    assert.is_true(same(g:detach():totable(), { { 1, 8, 0, 0, 0 }, { -2, 2.25, -3, 0, -4.5 } }))
    local gg = T.autograd.grad((g * g):sum(), { x })[1]
    assert.is_true(same(gg:totable(), { { 64, 8, 32, 480, 0 }, { 45.75, -35.25, 95.75, 13.5, 76.125 } }))
    local v = T.tensor({ 2, 0, 3, -1.5 }, { dtype = T.float64, requires_grad = true })
    local gp = T.autograd.grad(v:prod(), { v }, { create_graph = true })[1]
    assert.is_true(same(T.autograd.grad(gp:sum(), { v })[1]:totable(), { -4.5, -1.5, -3, 6 }))
    assert.is_true(T.autograd.gradcheck(function(t) return t:cumprod(2) end, { x }))
  end)

  it("std: zero gradient where the std is zero; cumsum keeps inf", function()
    check(function(x) return x:std(2) end, ties, { { -1 / 6, 5 / 18, 5 / 18, -7 / 18 }, { 0, 0, 0, 0 },
      { -0.28867513459481287, 0.28867513459481287, -0.28867513459481287, 0.28867513459481287 } })
    local x = T.tensor({ 1, 2, 3 }, { dtype = T.float64, requires_grad = true })
    x:cumsum(1):backward(T.tensor({ inf, 1, 1 }, { dtype = T.float64 }))
    assert.same({ inf, 2, 1 }, x.grad:totable())
  end)
end)
