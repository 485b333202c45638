-- Findings of a QA pass, each checked against PyTorch 1.13: the LU and
-- Householder gradients, nanmedian's index on an all-NaN slice, the inputs
-- einsum and trace refuse, the distributions' repr, icdf and every
-- kl_divergence pair torch registers.  Reference values come from
-- spec/fixtures/qa_findings.lua (tools/gen_env_fixtures.py, run by hand).
local T = require "ltensor"
local D = T.distributions
local fx = dofile("spec/fixtures/qa_findings.lua")

local function flat(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for _, x in ipairs(v) do flat(x, out) end
  return out
end
local function close(want, got, rtol, atol)
  rtol, atol = rtol or 1e-10, atol or 1e-12
  if T.is_tensor(got) then got = got:totable() end
  local w, g = flat(want), flat(got)
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
local function f64(v, rg) return T.tensor(v, { dtype = T.float64, requires_grad = rg or false }) end
-- the same data as the generator's
local function data(r, c, seed)
  local v = {}
  for i = 1, r do
    v[i] = {}
    for j = 1, c do v[i][j] = math.sin(seed * 7.1 + i * i * 1.3 + j * 2.9 + i * j * 0.7) * 2 end
  end
  return v
end
local function raises(prefix, substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  err = tostring(err)
  assert.is_truthy(err:find(prefix, 1, true), "error was: " .. err)
  assert.is_truthy(err:find(substr, 1, true), "error was: " .. err)
end

describe("LU and Householder gradients (were not recorded)", function()
  it("lu_factor and lu give PyTorch's gradient for square, wide and tall A", function()
    for _, c in ipairs(fx.lu_grads) do
      local m, n = c.m, c.n
      local k = math.min(m, n)
      local A = f64(data(m, n, 1), true)
      local LU = T.linalg.lu_factor(A)
      ;(LU * f64(data(m, n, 2))):sum():backward()
      close(c.lu_factor, A.grad)
      A.grad = nil
      local _, L, U = T.linalg.lu(A)
      ;((L * f64(data(m, k, 3))):sum() + (U * f64(data(k, n, 4))):sum()):backward()
      close(c.lu, A.grad)
    end
  end)
  it("lu_factor_ex records the same gradient; pivots and info stay outside the graph", function()
    local A = f64(data(4, 4, 1), true)
    local LU, piv, info = T.linalg.lu_factor_ex(A)
    assert.is_true(LU.requires_grad)
    assert.is_false(piv.requires_grad)
    assert.is_false(info.requires_grad)
    assert.equal(T.int32, piv.dtype)
    ;(LU * f64(data(4, 4, 2))):sum():backward()
    close(fx.lu_grads[1].lu_factor, A.grad)
  end)
  it("lu and lu_factor pass gradcheck (finite differences), batched too", function()
    local A = f64({ data(3, 3, 1), data(3, 3, 11) }, true)
    assert.is_true(T.autograd.gradcheck(function(a) return (T.linalg.lu_factor(a)) end, { A }))
    for _, sh in ipairs { { 4, 4 }, { 3, 5 }, { 5, 3 } } do
      local B = f64(data(sh[1], sh[2], 1), true)
      assert.is_true(T.autograd.gradcheck(function(a) local _, L, U = T.linalg.lu(a) return L, U end, { B }))
    end
  end)
  it("lu_solve differentiates in LU and B for each left/adjoint form", function()
    for _, c in ipairs(fx.lu_solve_grads) do
      local LU0, piv = T.linalg.lu_factor(f64(data(4, 4, 5)))
      local LU = LU0:detach():requires_grad_(true)
      local B = f64(c.left and data(4, 2, 6) or data(2, 4, 6), true)
      local X = T.linalg.lu_solve(LU, piv, B, { left = c.left, adjoint = c.adjoint })
      close(c.X, X)
      ;(X * f64(c.left and data(4, 2, 7) or data(2, 4, 7))):sum():backward()
      close(c.gLU, LU.grad)
      close(c.gB, B.grad)
      local fresh = LU0:detach():requires_grad_(true)
      assert.is_true(T.autograd.gradcheck(function(lu, b)
        return T.linalg.lu_solve(lu, piv, b, { left = c.left, adjoint = c.adjoint })
      end, { fresh, f64(c.left and data(4, 2, 6) or data(2, 4, 6), true) }))
    end
  end)
  it("householder_product differentiates in A and tau, with LAPACK's values", function()
    local h = fx.householder
    local A, tau = f64(h.A, true), f64(h.tau, true)
    local Q = T.linalg.householder_product(A, tau)
    close(h.Q, Q)
    ;(Q * f64(data(5, 3, 9))):sum():backward()
    close(h.gA, A.grad)
    close(h.gtau, tau.grad)
    close(h.Q, T.linalg.householder_product(f64(h.A), f64(h.tau)))   -- no grad: the LAPACK path
    assert.is_true(T.autograd.gradcheck(function(a, t) return T.linalg.householder_product(a, t) end,
      { f64(h.A, true), f64(h.tau, true) }))
  end)
end)

describe("nanmedian's index on an all-NaN slice (matched PyTorch)", function()
  it("is PyTorch's for every length 1..64", function()
    local nan = 0 / 0
    for k = 1, 64 do
      local v, i = T.nanmedian(T.full({ 2, k }, nan), 2)
      assert.is_true(v[1]:item() ~= v[1]:item())
      assert.equal(fx.nanmedian_allnan[k] + 1, i[1]:item(), "length " .. k)
    end
  end)
  it("leaves the other slices alone, and keeps keepdim's shape", function()
    local nan = 0 / 0
    local x = T.tensor({ { nan, nan, nan, nan }, { 1, nan, 2, 5 }, { nan, 3, nan, nan } })
    local v, i = T.nanmedian(x, 2)
    assert.same({ 3, 3, 2 }, i:totable())   -- torch: 2, 2, 1 (0-based)
    assert.equal(2, v[2]:item())
    local _, ik = T.nanmedian(x, 2, true)
    assert.same({ { 3 }, { 3 }, { 2 } }, ik:totable())
    local _, i0 = T.nanmedian(x:t(), 1)      -- along dim 1 of the transpose
    assert.same({ 3, 3, 2 }, i0:totable())
  end)
end)

describe("einsum and trace refuse what PyTorch refuses", function()
  it("einsum: a contraction takes one dtype (PyTorch's bmm message)", function()
    raises("ltensor.einsum:", "expected scalar type Float but found Double",
      T.einsum, "i,i->", T.ones(2), T.ones(2, { dtype = T.float64 }))
    raises("ltensor.einsum:", "expected scalar type Double but found Float",
      T.einsum, "ij,jk->ik", T.ones(2, 2, { dtype = T.float64 }), T.ones(2, 2))
  end)
  it("einsum: no bool or half contraction, as on PyTorch's CPU", function()
    raises("ltensor.einsum:", "\"bmm\" not implemented for 'Bool'",
      T.einsum, "ij,jk", T.ones(2, 2, { dtype = T.bool }), T.ones(2, 2, { dtype = T.bool }))
    raises("ltensor.einsum:", "\"bmm\" not implemented for 'Half'",
      T.einsum, "i,i->", T.ones(2, { dtype = T.float16 }), T.ones(2, { dtype = T.float16 }))
  end)
  it("einsum: what PyTorch accepts still works (products promote, bfloat16 and integers contract)", function()
    local r = T.einsum("i,j->ij", T.ones(2), T.ones(3, { dtype = T.int64 }))
    assert.equal(T.float32, r.dtype)
    assert.same({ 2, 3 }, r.shape)
    assert.equal(T.bfloat16, T.einsum("ij,jk", T.ones(2, 2, { dtype = T.bfloat16 }), T.ones(2, 2, { dtype = T.bfloat16 })).dtype)
    assert.equal(8, T.einsum("ij,jk->", T.ones(2, 2, { dtype = T.int32 }), T.ones(2, 2, { dtype = T.int32 })):item())
    assert.equal(T.int64, T.einsum("ii", T.ones(2, 2, { dtype = T.bool })).dtype)
  end)
  it("einsum: error positions count in the whole equation; ellipsis sizes are named", function()
    raises("ltensor.einsum:", "invalid subscript given at index 5 in the equation string",
      T.einsum, "ij->i->j", T.ones(2, 2))
    raises("ltensor.einsum:", "dimension 0 covered by ellipsis in operand 1 has size 3 which does not broadcast with previously seen ellipsis with size 2",
      T.einsum, "...ij,...jk->...ik", T.ones(2, 2, 2), T.ones(3, 2, 2))
    raises("ltensor.einsum:", "subscript i has size 3 for operand 1 which does not broadcast with previously seen size 2",
      T.einsum, "i,i", T.ones(2), T.ones(3))
  end)
  it("trace: no bool, half or bfloat16 kernel", function()
    raises("ltensor.trace:", "\"trace\" not implemented for 'Bool'", T.trace, T.ones(2, 2, { dtype = T.bool }))
    raises("ltensor.trace:", "\"trace\" not implemented for 'Half'", T.trace, T.ones(2, 2, { dtype = T.float16 }))
    raises("ltensor.trace:", "\"trace\" not implemented for 'BFloat16'", T.trace, T.ones(2, 2, { dtype = T.bfloat16 }))
    assert.equal(T.int64, T.trace(T.ones(2, 2, { dtype = T.int32 })).dtype)
    assert.equal(2, T.trace(T.ones(2, 3)):item())
  end)
end)

describe("distributions: repr, icdf and kl_divergence as PyTorch's", function()
  local function sizes(s) return (s:gsub("torch%.Size%(%[([%d, ]*)%]%)", "{%1}")) end
  it("tostring shows the parameters (a one-element parameter by value, a larger one by size)", function()
    local r = fx.reprs
    T.set_default_dtype(T.float64)
    local ok, err = pcall(function()
      assert.equal(r.Normal, tostring(D.Normal(0, 1)))
      assert.equal(sizes(r.Normal_vec), tostring(D.Normal(T.zeros(2), 1)))
      assert.equal(r.Uniform, tostring(D.Uniform(0, 2)))
      assert.equal(r.Exponential, tostring(D.Exponential(1.5)))
      assert.equal(r.Gamma, tostring(D.Gamma(2, 3)))
      assert.equal(r.Bernoulli, tostring(D.Bernoulli(T.tensor(0.3, { dtype = T.float32 }))))
      assert.equal(sizes(r.Categorical), tostring(D.Categorical(T.ones(3))))
      assert.equal(sizes(r.MultivariateNormal), tostring(D.MultivariateNormal(T.zeros(2), T.eye(2))))
    end)
    T.set_default_dtype(T.float32)
    assert(ok, err)
    assert.equal("Normal(loc: tensor([0.]), scale: tensor([1.]))", tostring(D.Normal(T.zeros(1), 1)))
    assert.equal("Bernoulli(logits: 0.5)", tostring(D.Bernoulli(nil, T.tensor(0.5))))
  end)
  it("Normal:icdf is the quantile function, differentiable; Uniform and Exponential have one too", function()
    local c = fx.normal_icdf
    local d = D.Normal(f64(c.loc), f64(c.scale))
    close(c.x, d:icdf(f64(c.p)), 1e-12, 1e-12)
    local loc, scale = f64(0.5, true), f64(2.0, true)
    assert.is_true(T.autograd.gradcheck(function(l, s, p) return D.Normal(l, s):icdf(p) end,
      { loc, scale, f64({ 0.1, 0.5, 0.8 }, true) }))
    local u = D.Uniform(f64(1), f64(3))
    close({ 1, 2, 3 }, u:icdf(f64({ 0, 0.5, 1 })))
    local e = D.Exponential(f64(2))
    close({ 0, math.log(2) / 2 }, e:icdf(f64({ 0, 0.5 })))
    close({ 0.3, 0.7 }, e:cdf(e:icdf(f64({ 0.3, 0.7 }))))
  end)
  it("T.erfinv matches PyTorch, with +-inf at +-1 and NaN outside", function()
    -- near +-1 both refine with Newton steps on erf, whose absolute error
    -- bounds the result's: they agree to about 1e-11 there, 1e-15 elsewhere
    close(fx.erfinv.y, T.erfinv(f64(fx.erfinv.x)), 1e-10, 1e-15)
    local r = T.erfinv(f64({ -1, 1, 1.5, -2 })):totable()
    assert.equal(-math.huge, r[1]); assert.equal(math.huge, r[2])
    assert.is_true(r[3] ~= r[3] and r[4] ~= r[4])
    assert.equal(T.float32, T.erfinv(T.tensor({ 0.5 })).dtype)
    assert.equal(T.float32, T.erfinv(T.tensor({ 0 })).dtype)   -- integers: the default float dtype
    assert.is_true(T.autograd.gradcheck(T.erfinv, { f64({ -0.7, 0.1, 0.9 }, true) }))
    assert.equal(T.erfinv, T._methods.erfinv)
  end)
  local ctors = {
    Normal = function() return D.Normal(f64({ 0.2, -1.0, 0.5 }), f64({ 1.5, 0.7, 2.0 })) end,
    Uniform = function() return D.Uniform(f64({ 0.1, -0.5, 0.2 }), f64({ 0.9, 2.0, 0.7 })) end,
    Exponential = function() return D.Exponential(f64({ 1.5, 0.3, 2.0 })) end,
    Gamma = function() return D.Gamma(f64({ 2.0, 0.5, 3.0 }), f64({ 1.5, 2.0, 0.7 })) end,
    Beta = function() return D.Beta(f64({ 2.0, 0.5, 3.0 }), f64({ 1.5, 2.0, 0.7 })) end,
  }
  it("kl_divergence has every pair PyTorch 1.13 registers among Normal, Uniform, Exponential, Gamma and Beta", function()
    for _, c in ipairs(fx.kl) do
      local p, q = ctors[c[1]](), ctors[c[2]]()
      if c[3] then
        close(c[3], D.kl_divergence(p, q), 1e-10, 1e-12)
      else
        raises("ltensor.distributions.kl_divergence:", "no KL divergence implemented for " .. c[1],
          D.kl_divergence, p, q)
      end
    end
  end)
  it("kl_divergence: Bernoulli and Categorical with PyTorch's infinities, MultivariateNormal batched", function()
    close(fx.kl_bernoulli, D.kl_divergence(D.Bernoulli(f64({ 0.3, 0, 1, 0.5 })), D.Bernoulli(f64({ 0.6, 0.2, 1, 0 }))))
    close(fx.kl_categorical, D.kl_divergence(D.Categorical(f64({ { 0.2, 0.3, 0.5 }, { 0, 0.5, 0.5 } })),
      D.Categorical(f64({ { 0.1, 0.8, 0.1 }, { 0.3, 0, 0.7 } }))))
    local m1 = D.MultivariateNormal(f64({ 0.1, 0.2 }), f64({ { 2.0, 0.3 }, { 0.3, 1.0 } }))
    local m2 = D.MultivariateNormal(f64({ { 0.5, -0.2 }, { 0, 0 } }), f64({ { 1.0, -0.2 }, { -0.2, 0.5 } }))
    close(fx.kl_mvn, D.kl_divergence(m1, m2))
    raises("ltensor.distributions.kl_divergence:", "no KL divergence implemented for Bernoulli and Normal",
      D.kl_divergence, D.Bernoulli(0.5), D.Normal(0, 1))
  end)
  it("kl_divergence is differentiable in both distributions' parameters", function()
    assert.is_true(T.autograd.gradcheck(function(a, b, r)
      return D.kl_divergence(D.Gamma(a, b), D.Exponential(r))
    end, { f64({ 2.0, 0.7 }, true), f64({ 1.5, 3.0 }, true), f64({ 0.4, 1.1 }, true) }))
    assert.is_true(T.autograd.gradcheck(function(l, h, m, s)
      return D.kl_divergence(D.Uniform(l, h), D.Normal(m, s))
    end, { f64({ 0.1 }, true), f64({ 0.9 }, true), f64({ 0.3 }, true), f64({ 1.2 }, true) }))
  end)
end)
