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

describe("losses and distances at degenerate inputs", function()
  local F = T.nn.functional
  it("cosine_similarity divides each input by its own norm clamped at eps (PyTorch 1.13.1)", function()
    -- tiny vectors keep their true cosine; a zero vector gives 0 and the
    -- other side's gradient x / (|x| eps)
    local a = T.tensor({ { 1e-5, 0, 0 } }, { requires_grad = true })
    local b = T.tensor({ { 1e-5, 1e-5, 0 } }, { requires_grad = true })
    local y = F.cosine_similarity(a, b)
    y:sum():backward()
    assert.is_true(math.abs(y:item() - 0.70710678) < 1e-6)
    assert.is_true(same(a.grad:totable(), { { 0, 70710.6797, 0 } }) or
      T.allclose(a.grad, T.tensor({ { 0, 70710.6797, 0 } }), { rtol = 1e-5 }))
    local c = T.tensor({ { 3, 0, -1 } }, { dtype = T.float64, requires_grad = true })
    local z = T.zeros({ 1, 3 }, { dtype = T.float64, requires_grad = true })
    F.cosine_similarity(c, z):sum():backward()
    assert.is_true(same(c.grad:totable(), { { 0, 0, 0 } }))
    assert.is_true(T.allclose(z.grad, c:detach() / (math.sqrt(10) * 1e-8), { rtol = 1e-12 }))
    assert.equal(0, F.cosine_similarity(T.tensor({ { 1e30, 2e30 } }), T.tensor({ { 3e30, 1e30 } })):item())
  end)
  it("cdist: coincident points have zero gradient", function()
    local x = T.tensor({ { 0, 0, 0 }, { 1, -2, 0.5 } }, { dtype = T.float64, requires_grad = true })
    local w = T.tensor({ { 0, 0, 0 }, { 1, 2, 0.5 } }, { dtype = T.float64, requires_grad = true })
    local d = T.cdist(x, w)
    d:sum():backward()
    assert.equal(0, d[1][1]:item())
    local r = 1 / math.sqrt(5.25)
    assert.is_true(T.allclose(x.grad, T.tensor({ { -r, -2 * r, -0.5 * r }, { r, -2 * r - 1, 0.5 * r } },
      { dtype = T.float64 }), { rtol = 1e-12, atol = 1e-15 }))
  end)
  it("p-norms of tiny entries have finite gradients; a / b's gradient does not underflow", function()
    local v = T.tensor({ 1e-30, 0, 0 }, { requires_grad = true })
    v:norm(3):backward()
    assert.same({ 1, 0, 0 }, v.grad:totable())
    local a = T.tensor({ 0.0 }, { dtype = T.float32, requires_grad = true })
    local b = T.tensor({ 1e-30 }, { requires_grad = true })
    local q = (a / b):sum()
    q:backward()
    assert.equal(0, b.grad[1]:item())   -- -((0 / 1e-30) / 1e-30): 1e-30 squared would underflow to 0/0
  end)
  it("kl_div's xlogy: NaN targets stay NaN; smooth_l1 with beta 0 at ties", function()
    local x = T.tensor({ -1.0, -2.0, -0.5 }, { dtype = T.float64 })
    local t = T.tensor({ 0.0, 0 / 0, 0.5 }, { dtype = T.float64, requires_grad = true })
    local l = F.kl_div(x, t, { reduction = "none" })
    local lv = l:detach():totable()
    assert.equal(0, lv[1])
    assert.is_true(lv[2] ~= lv[2])
    l:sum():backward()
    local g = t.grad:totable()
    assert.is_true(g[1] ~= g[1])   -- d/dt xlogy(t, t) at t = 0: NaN, as PyTorch's
    assert.is_true(math.abs(g[3] - (math.log(0.5) + 1 + 0.5)) < 1e-12)
    local p = T.tensor({ 0.0, 1.0, -1.0 }, { dtype = T.float32, requires_grad = true })
    local q = T.tensor({ 0.0, 0.0, 0.0 }, { dtype = T.float32, requires_grad = true })
    F.smooth_l1_loss(p, q, { beta = 0.0, reduction = "sum" }):backward()
    assert.same({ -1, 1, -1 }, p.grad:totable())
    assert.same({ -1, -1, 1 }, q.grad:totable())
  end)

  it("abs of complex input: the gradient is sgn(z) (PyTorch's grad * self.sgn()), 0 at 0", function()
    local z = T.complex(T.tensor({ 1, 0, -3 }, { dtype = T.float64 }), T.tensor({ 2, 0, 4 }, { dtype = T.float64 }))
    z:requires_grad_()
    T.abs(z):sum():backward()
    local re, im = T.real(z.grad):totable(), T.imag(z.grad):totable()
    assert.near(0.4472135955, re[1], 1e-9)
    assert.near(0.894427191, im[1], 1e-9)
    assert.same({ 0, 0 }, { re[2], im[2] })
    assert.near(-0.6, re[3], 1e-12)
    assert.near(0.8, im[3], 1e-12)
  end)
end)
