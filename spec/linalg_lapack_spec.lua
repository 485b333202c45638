-- T.linalg (LAPACK through OpenBLAS): values against PyTorch 1.13
-- (spec/fixtures/linalg.lua, from tools/gen_linalg_fixtures.py), invariants
-- on every dtype, batching and broadcasting, non-contiguous operands, empty
-- batches and 0x0 matrices, errors, and gradients (gradcheck and PyTorch's).
local T = require "ltensor"
local H = dofile("spec/helpers.lua")
local fx = dofile("spec/fixtures/linalg.lua")
local L = T.linalg

local DTYPES = { "float32", "float64", "complex64", "complex128" }
local TOL = { float32 = 2e-4, complex64 = 2e-4, float64 = 1e-9, complex128 = 1e-9 }

-- a tensor from a fixture entry {dtype, shape, re[, im]}
local function build(e)
  local dt = T[e.dtype]
  local n = 1
  for _, s in ipairs(e.shape) do n = n * s end
  local function part(vals, rdt)
    if n == 0 then return T.zeros(e.shape, { dtype = rdt }) end
    return T.tensor(vals, { dtype = rdt }):reshape(e.shape)
  end
  if e.im then
    local rdt = e.dtype == "complex64" and T.float32 or T.float64
    local z = T.zeros(e.shape, { dtype = dt })
    T.real(z):copy_(part(e.re, rdt))
    T.imag(z):copy_(part(e.im, rdt))
    return z
  end
  return part(e.re, dt)
end

local function is_tensor_entry(v) return type(v) == "table" and v.dtype ~= nil and v.shape ~= nil end

-- largest |a - b| relative to max(1, |b|)
local function maxerr(a, b)
  local d = (a - b):abs()
  if d:numel() == 0 then return 0 end
  local scale = math.max(1, b:abs():max():item())
  return d:max():item() / scale
end

local function close(got, want, tol)
  assert.equal(want.dtype, got.dtype)
  assert.same(want.shape, got.shape)
  if got:numel() == 0 then return end
  if got:is_floating_point() or got:is_complex() then
    -- non-finite values (inf determinants, NaN) must sit at the same places
    local gf, wf = T.isfinite(got), T.isfinite(want)
    assert.same(wf:totable(), gf:totable())
    if not wf:all():item() then
      assert.same(T.where(wf, T.zeros({}, { dtype = want.dtype }), want):totable(),
                  T.where(gf, T.zeros({}, { dtype = got.dtype }), got):totable())
      got = T.where(gf, got, T.zeros({}, { dtype = got.dtype }))
      want = T.where(wf, want, T.zeros({}, { dtype = want.dtype }))
    end
    local e = maxerr(got, want)
    assert.is_true(e <= tol, ("max error %g > %g"):format(e, tol))
  else
    assert.same(want:totable(), got:totable())
  end
end

-- a random well-conditioned matrix batch of dtype dt
local function randm(shape, dt)
  local s = { table.unpack(shape) }
  local x
  if dt == "complex64" or dt == "complex128" then
    local rdt = dt == "complex64" and T.float32 or T.float64
    x = T.zeros(s, { dtype = T[dt] })
    T.real(x):copy_(T.randn(s, { dtype = rdt }))
    T.imag(x):copy_(T.randn(s, { dtype = rdt }))
  else
    x = T.randn(s, { dtype = T[dt] })
  end
  return x
end
local function mH(x)
  local t = x:transpose(-1, -2)
  if t:is_complex() then t = t:conj() end
  return t
end
local function eye(n, dt) return T.eye(n, { dtype = T[dt] }) end

describe("T.linalg values match PyTorch", function()
  for i, c in ipairs(fx.cases) do
    local dt = nil
    for _, a in ipairs(c.args) do if is_tensor_entry(a) then dt = dt or a.dtype end end
    it(("%s #%d (%s)"):format(c.fn, i, dt or "list"), function()
      local args = {}
      for k, a in ipairs(c.args) do
        if is_tensor_entry(a) then args[k] = build(a)
        elseif type(a) == "table" then
          local l = {}
          for j, e in ipairs(a) do l[j] = build(e) end
          args[k] = l
        else args[k] = a end
      end
      local n = #c.args
      if c.opts then args[n + 1] = c.opts n = n + 1 end
      local res = table.pack((L[c.fn] or T[c.fn])(table.unpack(args, 1, n)))
      for k, want in ipairs(c.out) do
        if not want.skip then close(res[k], build(want), TOL[want.dtype] or 0) end
      end
    end)
  end
end)

describe("T.linalg gradients match PyTorch", function()
  for i, g in ipairs(fx.grads) do
    it(("%s #%d"):format(g.fn, i), function()
      local args, leaves = {}, {}
      for k, a in ipairs(g.args) do
        args[k] = build(a):requires_grad_(true)
        leaves[k] = args[k]
      end
      local n = #g.args
      if g.opts then args[n + 1] = g.opts n = n + 1 end
      local out = select(g.pick, L[g.fn](table.unpack(args, 1, n)))
      T.sum(out * build(g.W)):backward()
      for k, want in ipairs(g.grad) do
        if not want.skip then close(leaves[k].grad, build(want), 1e-8) end
      end
    end)
  end
end)

describe("T.linalg complex gradients match PyTorch (autograd.grad with complex grad_outputs)", function()
  for i, g in ipairs(fx.cgrads) do
    it(("%s #%d"):format(g.fn, i), function()
      local args, leaves = {}, {}
      for k, a in ipairs(g.args) do
        args[k] = build(a):requires_grad_(true)
        leaves[k] = args[k]
      end
      local n = #g.args
      if g.opts then args[n + 1] = g.opts n = n + 1 end
      local out = select(g.pick, L[g.fn](table.unpack(args, 1, n)))
      local gs = T.autograd.grad({ out }, leaves, { build(g.G) })
      for k, want in ipairs(g.grad) do close(gs[k], build(want), 1e-8) end
    end)
  end
end)

describe("T.linalg decompositions satisfy their definitions", function()
  for _, dt in ipairs(DTYPES) do
    local tol = TOL[dt] * 50
    it("solve and inv on batched, broadcast, transposed operands (" .. dt .. ")", function()
      local A = randm({ 2, 1, 4, 4 }, dt) + 4 * eye(4, dt)
      local B = randm({ 3, 2, 4 }, dt):transpose(-1, -2)      -- (3, 4, 2), non-contiguous
      local X = L.solve(A, B)
      H.check(X, T[dt], { 2, 3, 4, 2 })
      assert.is_true(maxerr(A:matmul(X), B:expand({ 2, 3, 4, 2 })) < tol)
      local At = A:transpose(-1, -2)
      assert.is_true(maxerr(L.inv(At):matmul(At), eye(4, dt):expand({ 2, 1, 4, 4 })) < tol)
      -- the vector case: B (4,) against A (.., 4, 4)
      local b = randm({ 4 }, dt)
      H.check(L.solve(A, b), T[dt], { 2, 1, 4 })
      -- an expanded (stride-0) operand
      local Ae = (randm({ 4, 4 }, dt) + 4 * eye(4, dt)):expand({ 3, 4, 4 })
      assert.is_true(maxerr(Ae:matmul(L.solve(Ae, B)), B) < tol)
    end)

    it("cholesky, qr, eigh, svd, eig reconstruct the input (" .. dt .. ")", function()
      local X = randm({ 2, 4, 4 }, dt)
      local P = X:matmul(mH(X)) + 4 * eye(4, dt)
      local Lc = L.cholesky(P)
      assert.is_true(maxerr(Lc:matmul(mH(Lc)), P) < tol)
      local U = L.cholesky(P, { upper = true })
      assert.is_true(maxerr(mH(U):matmul(U), P) < tol)
      for _, shape in ipairs { { 5, 3 }, { 3, 5 } } do
        local A = randm(shape, dt)
        for _, mode in ipairs { "reduced", "complete" } do
          local Q, R = L.qr(A, { mode = mode })
          assert.is_true(maxerr(Q:matmul(R), A) < tol)
          assert.is_true(maxerr(mH(Q):matmul(Q), eye(Q.shape[2], dt)) < tol)
        end
        local _, R = L.qr(A, { mode = "r" })
        H.check(select(1, L.qr(A, { mode = "r" })), T[dt], { 0 })
        assert.equal(math.min(shape[1], shape[2]), R.shape[1])
        for _, full in ipairs { true, false } do
          local Us, S, Vh = L.svd(A, { full_matrices = full })
          local k = S.shape[#S.shape]
          local rec = (Us:narrow(-1, 1, k) * S:to(T[dt]):unsqueeze(-2)):matmul(Vh:narrow(-2, 1, k))
          assert.is_true(maxerr(rec, A) < tol)
          assert.is_true(maxerr(L.svdvals(A), S) < tol)
        end
      end
      local w, V = L.eigh(P)
      assert.is_true(maxerr(P:matmul(V), V * w:to(T[dt]):unsqueeze(-2)) < tol)
      local ws = w:totable()
      for b = 1, 2 do for j = 2, 4 do assert.is_true(ws[b][j - 1] <= ws[b][j]) end end
      assert.is_true(maxerr(L.eigvalsh(P), w) < tol)
      local G = randm({ 4, 4 }, dt)
      local e, Ve = L.eig(G)
      local cdt = (dt == "float32" or dt == "complex64") and T.complex64 or T.complex128
      assert.equal(cdt, e.dtype)
      assert.is_true(maxerr(G:to(cdt):matmul(Ve), Ve * e:unsqueeze(-2)) < tol * 10)
      assert.is_true(maxerr(L.eigvals(G), e) < tol)
    end)

    it("det and slogdet agree with the LU factors (" .. dt .. ")", function()
      local A = randm({ 3, 3, 3 }, dt)
      local d = L.det(A)
      local s, la = L.slogdet(A)
      assert.is_true(maxerr(s * T.exp(la):to(s.dtype), d) < tol)
      local LU, piv = L.lu_factor(A)
      H.check(piv, T.int32, { 3, 3 })
      local B = randm({ 3, 3, 2 }, dt)
      assert.is_true(maxerr(L.lu_solve(LU, piv, B), L.solve(A, B)) < tol)
      local P, Lm, Um = L.lu(A)
      assert.is_true(maxerr(P:matmul(Lm):matmul(Um), A) < tol)
    end)
  end
end)

describe("T.linalg edges", function()
  it("empty batches and 0x0 matrices give empty results of the right shapes", function()
    local E = T.zeros({ 0, 3, 3 }, { dtype = T.float64 })
    H.check(L.inv(E), T.float64, { 0, 3, 3 })
    H.check(L.det(E), T.float64, { 0 })
    H.check(L.solve(E, T.zeros({ 0, 3, 2 }, { dtype = T.float64 })), T.float64, { 0, 3, 2 })
    local w, V = L.eigh(E)
    H.check(w, T.float64, { 0, 3 })
    H.check(V, T.float64, { 0, 3, 3 })
    local U, S, Vh = L.svd(T.zeros({ 0, 4, 2 }, { dtype = T.float32 }))
    H.check(U, T.float32, { 0, 4, 4 })
    H.check(S, T.float32, { 0, 2 })
    H.check(Vh, T.float32, { 0, 2, 2 })
    local Z = T.zeros({ 0, 0 }, { dtype = T.float64 })
    H.check(L.inv(Z), T.float64, { 0, 0 })
    assert.equal(1, L.det(Z):item())
    H.check(L.cholesky(Z), T.float64, { 0, 0 })
    H.check(L.pinv(T.zeros({ 0, 3 }, { dtype = T.float64 })), T.float64, { 3, 0 })
    H.check(L.matrix_rank(T.zeros({ 2, 0, 3 }, { dtype = T.float64 })), T.int64, { 2 })
    local X = L.lstsq(T.zeros({ 0, 3 }, { dtype = T.float64 }), T.zeros({ 0, 2 }, { dtype = T.float64 }))
    H.check(X, T.float64, { 3, 2 }, { { 0, 0 }, { 0, 0 }, { 0, 0 } })
  end)

  it("NaN input never reaches an eigen or SVD driver and never hangs", function()
    local A = T.tensor({ { 0 / 0, 1 }, { 1, 2 } }, { dtype = T.float64 })
    H.raises("ltensor.linalg.svd: The algorithm failed to converge because the input matrix contained non-finite values.", L.svd, A)
    H.raises("ltensor.linalg.eigh: The algorithm failed to converge because the input matrix contained non-finite values.", L.eigh, A)
    H.raises("ltensor.linalg.eig: input tensor should not contain infs or NaNs.", L.eig, A)
    H.raises("ltensor.linalg.eigvals: input tensor should not contain infs or NaNs.", L.eigvals, A)
    H.raises("non-finite", L.pinv, A)
    H.raises("non-finite", L.matrix_rank, A)
    -- LU-based functions propagate NaN as PyTorch does
    assert.is_true(L.det(A):isnan():item())
    assert.is_true(L.inv(A):isnan():all():item())
    assert.is_true(L.solve(A, T.ones({ 2 }, { dtype = T.float64 })):isnan():all():item())
  end)

  it("*_ex variants return LAPACK's info instead of raising", function()
    local S = T.tensor({ { { 1, 2 }, { 2, 4 } }, { { 2, 0 }, { 0, 2 } } }, { dtype = T.float64 })
    local _, info = L.inv_ex(S)
    H.check(info, T.int32, { 2 }, { 2, 0 })
    local _, cinfo = L.cholesky_ex(-S)
    H.check(cinfo, T.int32, { 2 }, { 1, 1 })
    local _, sinfo = L.solve_ex(S, T.ones({ 2, 2, 1 }, { dtype = T.float64 }))
    H.check(sinfo, T.int32, { 2 }, { 2, 0 })
    local _, _, linfo = L.lu_factor_ex(S)
    H.check(linfo, T.int32, { 2 }, { 2, 0 })
    H.raises("ltensor.linalg.inv_ex: (Batch element 1): The diagonal element 2 is zero", L.inv_ex, S, { check_errors = true })
    -- PyTorch factors a contiguous real A as A^T for solve/inv (so info can
    -- differ from lu_factor's): values from torch 1.13
    local Z = T.tensor({ { { 1, 2 }, { 2, 4 } }, { { 2, 0 }, { 0, 2 } }, { { 1, 1 }, { 1, 1 } }, { { 0, 1 }, { 0, 2 } } },
      { dtype = T.float64 })
    H.check(select(2, L.inv_ex(Z)), T.int32, { 4 }, { 2, 0, 2, 2 })
    H.check(select(2, L.solve_ex(Z, T.ones({ 4, 2, 1 }, { dtype = T.float64 }))), T.int32, { 4 }, { 2, 0, 2, 2 })
    H.check(select(3, L.lu_factor_ex(Z)), T.int32, { 4 }, { 2, 0, 2, 1 })
  end)

  it("lstsq returns residuals, rank and singular values as PyTorch's drivers do", function()
    local A = T.randn({ 6, 3 }, { dtype = T.float64 })
    local B = T.randn({ 6 }, { dtype = T.float64 })
    local X, res, rank, sv = L.lstsq(A, B, { driver = "gelsd" })
    H.check(X, T.float64, { 3 })
    H.check(res, T.float64, {})
    H.check(rank, T.int64, {}, 3)
    H.check(sv, T.float64, { 3 })
    local r = B - A:matmul(X)
    assert.is_true(math.abs((r * r):sum():item() - res:item()) < 1e-10)
    local _, res2, rank2, sv2 = L.lstsq(A, B)   -- gelsy: no residuals, no singular values
    H.check(res2, T.float64, { 0 })
    H.check(rank2, T.int64, {}, 3)
    H.check(sv2, T.float64, { 0 })
    local X32 = L.lstsq(A:float(), B:float():unsqueeze(-1), { driver = "gels" })
    assert.is_true(maxerr(X32:squeeze(-1):double(), X) < 1e-4)
  end)
end)

describe("T.linalg errors", function()
  local I = T.ones({ 2, 2 }, { dtype = T.int64 })
  local R = T.ones({ 2, 3 }, { dtype = T.float64 })
  for _, fn in ipairs { "solve", "inv", "det", "slogdet", "cholesky", "qr", "eigh", "eigvalsh", "eig", "eigvals",
                        "svd", "svdvals", "pinv", "matrix_rank", "lu_factor", "lstsq", "vector_norm",
                        "matrix_norm", "norm", "cond" } do
    it(fn .. " refuses integer input with PyTorch's message", function()
      -- solve and lstsq take two matrices; the others one (an extra argument
      -- is refused before anything else, as PyTorch's argument parser does)
      local two = fn == "solve" or fn == "lstsq"
      H.raises("ltensor.linalg." .. fn .. ": Expected a floating point or complex tensor as input. Got Long",
        L[fn], I, two and I or nil)
    end)
  end
  it("refuses half precision", function()
    H.raises("ltensor.linalg.inv: Low precision dtypes not supported. Got Half", L.inv, T.ones({ 2, 2 }, { dtype = T.float16 }))
  end)
  for _, fn in ipairs { "inv", "det", "slogdet", "cholesky", "eigh", "eig", "matrix_power" } do
    it(fn .. " needs square matrices", function()
      -- (matrix_power's n; the others take the matrix alone)
      H.raises("ltensor.linalg." .. fn .. ": A must be batches of square matrices, but they are 2 by 3 matrices", L[fn], R,
        fn == "matrix_power" and 2 or nil)
    end)
  end
  it("names the singular or non-positive-definite batch entry", function()
    local S = T.tensor({ { 1, 2 }, { 2, 4 } }, { dtype = T.float64 })
    H.raises("ltensor.linalg.solve: The solver failed because the input matrix is singular.", L.solve, S, T.ones({ 2 }, { dtype = T.float64 }))
    H.raises("ltensor.linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular.", L.inv, S)
    H.raises("ltensor.linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite).", L.cholesky, S)
    local B = T.eye(2, { dtype = T.float64 }):expand({ 3, 2, 2 }):clone()
    B[2]:zero_()
    H.raises("ltensor.linalg.solve: (Batch element 2): The solver failed because the input matrix is singular.", L.solve, B, B)
    H.raises("ltensor.linalg.lu_factor: (Batch element 2): U[1,1] is zero", L.lu_factor, B)
  end)
  it("checks shapes, dtypes and options", function()
    local A = T.eye(3, { dtype = T.float64 })
    H.raises("ltensor.linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)", L.solve, A, T.ones({ 4, 1 }, { dtype = T.float64 }))
    H.raises("ltensor.linalg.solve: Expected A and B to have the same dtype, but found A of type Double and B of type Float instead.", L.solve, A, T.ones({ 3 }))
    H.raises("ltensor.linalg.lstsq: input.size(-2) should match other.size(-2)", L.lstsq, A, T.ones({ 4, 1 }, { dtype = T.float64 }))
    H.raises("ltensor.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)", L.lstsq, A, A, { driver = "x" })
    H.raises("ltensor.linalg.solve_triangular: missing required keyword argument 'upper'", L.solve_triangular, A, A)
    H.raises("ltensor.linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got X", L.eigh, A, { UPLO = "X" })
    H.raises("ltensor.linalg.qr: qr received unrecognized mode 'full'", L.qr, A, { mode = "full" })
    H.raises("ltensor.linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.", L.norm, T.ones({ 2, 2, 2 }), { ord = 1 })
    H.raises("ltensor.linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2", L.cross, T.ones({ 2 }), T.ones({ 2 }))
    H.raises("ltensor.linalg.multi_dot: tensors 1 and 2 with shapes 2x3 and 2x2 cannot be multiplied", L.multi_dot, { T.ones({ 2, 3 }), T.ones({ 2, 2 }) })
    H.raises("ltensor.linalg.multi_dot: expected at least 2 tensors but got 1", L.multi_dot, { T.ones({ 2, 3 }) })
    H.raises("ltensor.linalg.inv: The input tensor A must have at least 2 dimensions.", L.inv, T.ones({ 3 }))
    local LU, piv = L.lu_factor(A)
    piv:fill_(9)
    H.raises("ltensor.linalg.lu_solve: pivots must be in the range [1, 3], got 9", L.lu_solve, LU, piv, A)
    H.raises("ltensor.linalg.lu_solve: pivots should be a Tensor of dtype int32", L.lu_solve, LU, piv:long(), A)
  end)
  it("refuses to differentiate through mode='r' and eig", function()
    local A = T.randn({ 3, 3 }, { dtype = T.float64 }):requires_grad_(true)
    local _, R = L.qr(A, { mode = "r" })
    H.raises("The derivative of linalg.qr depends on Q", function() R:sum():backward() end)
    H.raises("ltensor.linalg.eig: the derivative of linalg.eig is not implemented", L.eig, A)
  end)
end)

describe("T.linalg gradients pass gradcheck", function()
  local function g(name, fn, inputs)
    it(name, function()
      for i, x in ipairs(inputs) do inputs[i] = x:double():requires_grad_(true) end
      assert.is_true(T.autograd.gradcheck(fn, inputs, { eps = 1e-6, atol = 1e-5, rtol = 1e-3 }))
    end)
  end
  local function wellcond(n, batch)
    local s = { table.unpack(batch or {}) }
    s[#s + 1] = n
    s[#s + 1] = n
    return T.randn(s, { dtype = T.float64 }) + 3 * T.eye(n, { dtype = T.float64 })
  end
  T.manual_seed(7)
  g("solve (batched, broadcast B)", function(a, b) return L.solve(a, b) end, { wellcond(3, { 2 }), T.randn({ 3, 2 }) })
  g("solve left=false", function(a, b) return L.solve(a, b, { left = false }) end, { wellcond(3), T.randn({ 2, 3 }) })
  g("inv", L.inv, { wellcond(3, { 2 }) })
  g("det", L.det, { wellcond(3, { 2 }) })
  g("slogdet (logabsdet)", function(a) return select(2, L.slogdet(a)) end, { wellcond(3) })
  g("cholesky", function(x) return L.cholesky(x:matmul(x:transpose(-1, -2)) + T.eye(3, { dtype = T.float64 })) end, { T.randn({ 2, 3, 3 }) })
  g("cholesky upper", function(x) return L.cholesky(x:matmul(x:transpose(-1, -2)) + T.eye(3, { dtype = T.float64 }), { upper = true }) end, { T.randn({ 3, 3 }) })
  g("qr tall", function(a) local q, r = L.qr(a) return q, r end, { T.randn({ 4, 3 }) })
  g("qr wide", function(a) local q, r = L.qr(a) return q, r end, { T.randn({ 3, 5 }) })
  g("qr complete square", function(a) local q, r = L.qr(a, { mode = "complete" }) return q, r end, { T.randn({ 3, 3 }) })
  g("eigh (values and Q diag(c) Q^T)", function(x)
    local w, V = L.eigh(x + x:transpose(-1, -2))
    local c = T.tensor({ 1.0, -2.0, 0.5 }, { dtype = T.float64 })
    return w, (V * c):matmul(V:transpose(-1, -2))
  end, { T.randn({ 3, 3 }) })
  g("eigvalsh", function(x) return L.eigvalsh(x + x:transpose(-1, -2)) end, { T.randn({ 2, 3, 3 }) })
  for _, shape in ipairs { { 4, 3 }, { 3, 4 }, { 3, 3 } } do
    for _, full in ipairs { false, true } do
      g(("svd %dx%d full_matrices=%s (S and U diag(c) Vh)"):format(shape[1], shape[2], tostring(full)), function(a)
        local U, S, Vh = L.svd(a, { full_matrices = full })
        local c = T.tensor({ 1.0, 2.0, -1.0 }, { dtype = T.float64 })
        return S, (U:narrow(-1, 1, 3) * c):matmul(Vh:narrow(-2, 1, 3))
      end, { T.randn(shape) })
    end
  end
  g("svdvals", L.svdvals, { T.randn({ 2, 4, 3 }) })
  g("lstsq tall (A and B)", function(a, b) return L.lstsq(a, b) end, { T.randn({ 5, 3 }), T.randn({ 5, 2 }) })
  g("lstsq vector B", function(a, b) return L.lstsq(a, b) end, { T.randn({ 5, 3 }), T.randn({ 5 }) })
  g("pinv tall", L.pinv, { T.randn({ 4, 3 }) })
  g("pinv wide", L.pinv, { T.randn({ 2, 3, 5 }) })
  for _, ord in ipairs { 2, 1, 3, 0.5, 1 / 0, -1 / 0 } do
    g("vector_norm ord=" .. ord, function(x) return L.vector_norm(x, { ord = ord, dim = 2 }) end, { T.randn({ 3, 4 }) })
  end
  for _, ord in ipairs { "fro", "nuc", 2, -2, 1, -1, 1 / 0 } do
    g("matrix_norm ord=" .. tostring(ord), function(x) return L.matrix_norm(x, { ord = ord }) end, { T.randn({ 2, 3, 4 }) })
  end
  g("norm (flattened 2-norm)", L.norm, { T.randn({ 2, 3 }) })
  g("cond", L.cond, { wellcond(3) })
  g("cond p=fro", function(a) return L.cond(a, { p = "fro" }) end, { wellcond(3) })
  for _, up in ipairs { true, false } do
    for _, left in ipairs { true, false } do
      for _, unit in ipairs { true, false } do
        g(("solve_triangular upper=%s left=%s unit=%s"):format(tostring(up), tostring(left), tostring(unit)),
          function(a, b) return L.solve_triangular(a, b, { upper = up, left = left, unitriangular = unit }) end,
          { wellcond(3, { 2 }), left and T.randn({ 3, 2 }) or T.randn({ 2, 3 }) })
      end
    end
  end
  g("multi_dot", function(a, b, c) return L.multi_dot({ a, b, c }) end, { T.randn({ 3 }), T.randn({ 3, 4 }), T.randn({ 4, 2 }) })
  g("matrix_power -2", function(a) return L.matrix_power(a, -2) end, { wellcond(3) })
  g("matrix_power 3", function(a) return L.matrix_power(a, 3) end, { T.randn({ 3, 3 }) })
  g("cross", function(a, b) return L.cross(a, b) end, { T.randn({ 2, 3 }), T.randn({ 3 }) })
  g("vecdot", function(a, b) return L.vecdot(a, b) end, { T.randn({ 2, 3 }), T.randn({ 2, 3 }) })
end)

describe("the linalg examples", function()
  local function run(script)
    local p = io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 " .. script .. " 2>&1; echo \"rc=$?\"")
    local out = p:read("*a")
    p:close()
    return out
  end
  it("least_squares.lua recovers the cubic's coefficients", function()
    local out = run("examples/least_squares.lua")
    assert.is_truthy(out:find("rc=0", 1, true), out)
    assert.is_truthy(out:find("x^3    0.8000    0.7", 1, true), out)
    assert.is_truthy(out:find("rank 4", 1, true), out)
  end)
  it("pca.lua prints the explained variance of the shipped digits (NumPy's SVD agrees)", function()
    local out = run("examples/pca.lua")
    assert.is_truthy(out:find("rc=0", 1, true), out)
    assert.is_truthy(out:find("PC1         179.007    14.89%", 1, true), out)   -- numpy: 179.00693, 0.148906
    assert.is_truthy(out:find("21 of 64 components explain 90% of the variance", 1, true), out)
    assert.is_truthy(out:find("0  (  -1.956,  -21.133)  178 images", 1, true), out)
  end)
end)

describe("torch.* names and tensor methods for linalg operations", function()
  it("det, slogdet, logdet, inverse, pinverse, matrix_power, matrix_exp", function()
    local A = T.tensor({ { 2, 1 }, { 1, 3 } }, { dtype = T.float64 })
    assert.is_true(math.abs(A:det():item() - 5) < 1e-12)
    assert.is_true(math.abs(T.det(A):item() - 5) < 1e-12)
    assert.is_true(math.abs(A:logdet():item() - math.log(5)) < 1e-12)
    assert.is_true(T.logdet(-T.eye(3, { dtype = T.float64 })):isnan():item())
    local s, la = A:slogdet()
    assert.equal(1, s:item())
    assert.is_true(math.abs(la:item() - math.log(5)) < 1e-12)
    assert.is_true(maxerr(A:inverse(), L.inv(A)) < 1e-12)
    assert.is_true(maxerr(A:pinverse(), L.inv(A)) < 1e-12)
    assert.is_true(maxerr(A:matrix_power(3), A:matmul(A):matmul(A)) < 1e-12)
    local D = T.tensor({ { 1, 0 }, { 0, 2 } }, { dtype = T.float64 })
    assert.is_true(maxerr(D:matrix_exp(), T.tensor({ { math.exp(1), 0 }, { 0, math.exp(2) } }, { dtype = T.float64 })) < 1e-12)
  end)
  it("matrix_power works on integer matrices (no LAPACK involved) and n = 0 gives the identity", function()
    local A = T.tensor({ { 1, 1 }, { 1, 0 } })
    H.check(L.matrix_power(A, 10), T.int64, { 2, 2 }, { { 89, 55 }, { 55, 34 } })
    H.check(L.matrix_power(A:expand({ 2, 2, 2 }), 0), T.int64, { 2, 2, 2 }, { { { 1, 0 }, { 0, 1 } }, { { 1, 0 }, { 0, 1 } } })
    H.raises("ltensor.linalg.matrix_power: Expected a floating point or complex tensor as input. Got Long", L.matrix_power, A, -1)
  end)
end)

describe("LAPACK is never handed a bad argument", function()
  it("prints nothing on stdout for any small shape, empty batch, NaN or inf input", function()
    local p = io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' timeout 300 lua5.4 spec/fixtures/linalg_shapes.lua 2>/dev/null; echo \"rc=$?\"")
    local out = p:read("*a")
    p:close()
    assert.equal("rc=0\n", out)
  end)
end)

describe("det's gradient on singular matrices", function()
  it("is the cofactor matrix (through the SVD), batch entry by batch entry", function()
    local A = T.tensor({ { { 1, 2, 3 }, { 2, 4, 6 }, { 1, 0, 1 } }, { { 2, 1, 0 }, { 1, 3, 1 }, { 0, 1, 4 } } },
      { dtype = T.float64 }):requires_grad_(true)
    T.linalg.det(A):sum():backward()
    local want = T.tensor({ { { 4, 4, -4 }, { -2, -2, 2 }, { 0, 0, 0 } }, { { 11, -4, 1 }, { -4, 8, -2 }, { 1, -2, 5 } } },
      { dtype = T.float64 })
    assert.is_true(maxerr(A.grad, want) < 1e-12)
  end)
end)

describe("lu and lu_unpack", function()
  it("give P, L, U with A = P L U for tall, wide and batched input", function()
    for _, shape in ipairs { { 5, 3 }, { 3, 5 }, { 2, 4, 4 } } do
      local A = T.randn(shape, { dtype = T.float64 })
      local P, Lm, U = L.lu(A)
      assert.is_true(maxerr(P:matmul(Lm):matmul(U), A) < 1e-12)
      local LU, piv = L.lu_factor(A)
      local P2, L2, U2 = T.lu_unpack(LU, piv)
      assert.is_true(T.equal(P, P2) and T.equal(Lm, L2) and T.equal(U, U2))
    end
  end)
end)

describe("cholesky_solve and cholesky_inverse", function()
  it("solve with the factor of A, lower or upper, batched, with gradients", function()
    local X = T.randn({ 2, 3, 3 }, { dtype = T.float64 })
    local A = X:matmul(X:transpose(-1, -2)) + 3 * T.eye(3, { dtype = T.float64 })
    local B = T.randn({ 3, 2 }, { dtype = T.float64 })
    for _, up in ipairs { false, true } do
      local F = L.cholesky(A, { upper = up })
      assert.is_true(maxerr(T.cholesky_solve(B, F, up), L.solve(A, B)) < 1e-10)
      assert.is_true(maxerr(F:cholesky_inverse(up), L.inv(A)) < 1e-10)
    end
    assert.is_true(T.autograd.gradcheck(function(b, f) return T.cholesky_solve(b, f) end,
      { B:clone():requires_grad_(true), L.cholesky(A):clone():requires_grad_(true) }))
  end)
end)

describe("lstsq's gradient on a wide system", function()
  it("is the minimum-norm solution's (through pinv)", function()
    assert.is_true(T.autograd.gradcheck(function(a, b) return L.lstsq(a, b, { driver = "gelsd" }) end,
      { T.randn({ 2, 4 }, { dtype = T.float64 }):requires_grad_(true), T.randn({ 2, 3 }, { dtype = T.float64 }):requires_grad_(true) }))
  end)
end)
