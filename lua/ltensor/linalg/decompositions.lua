-- ltensor.linalg.decompositions: cholesky, qr, eigh, eigvalsh, eig,
-- eigvals, svd, svdvals.
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local L = require "ltensor.linalg.common"
local last_info              -- the info of the last LAPACK call a Function made
local householder_diff       -- defined with householder_product
local eig_errors, svd_errors = L.eig_errors, L.svd_errors
local table, linalg = L.table, L.linalg
local type, select, unpack = L.type, L.select, L.unpack
local K, is_t, fail = L.K, L.is_t, L.fail
local opt_arg, check_tensor = L.opt_arg, L.check_tensor
local check_la, check_la_square = L.check_la, L.check_la_square
local check_matrix, check_square, same_dtype = L.check_matrix, L.check_square, L.same_dtype
local batch_of = L.batch_of
local cat_shape = L.cat_shape
local mH = L.mH
local eye, diagonal, diag_embed = L.eye, L.diagonal, L.diag_embed
local tril, first_bad, batch_prefix = L.tril, L.first_bad, L.batch_prefix
---------------------------------------------------------------------------
-- cholesky
---------------------------------------------------------------------------
local chol_core = autograd.Function {
  name = "LinalgCholeskyEx",
  forward = function(ctx, A, upper)
    local L, info = K.potrf(A, upper)
    last_info = info
    ctx.upper = upper
    ctx:save_for_backward(L)
    return L
  end,
  backward = function(ctx, gL)
    local L = unpack(ctx.saved_tensors)
    if ctx.upper then L = mH(L) gL = mH(gL) end
    -- Murray (2016): gA = L^{-H} Phi(L^H gL) L^{-1}, Phi = tril with half diagonal, symmetrised
    local gA = tril(mH(L):matmul(gL))
    gA = 0.5 * (gA + mH(tril(gA, -1)))
    gA = linalg.solve_triangular(mH(L), gA, { upper = true, left = true })
    gA = linalg.solve_triangular(L, gA, { upper = false, left = false })
    return gA
  end,
}
local function cholesky_ex(fn, A, o)
  check_la_square(fn, A)
  -- upper is keyword-only in PyTorch: a bare boolean would silently be the lower factor
  if o ~= nil and (type(o) ~= "table" or is_t(o)) then
    fail(fn, ("bad argument #2 (options table expected, got %s; write {upper = true})"):format(type(o)))
  end
  local upper = opt_arg(fn, o, "upper", "table", { upper = true, check_errors = true, out = true })
  local L = chol_core(A, upper and true or false)
  return L, last_info
end
function linalg.cholesky_ex(A, o)
  local L, info = cholesky_ex("cholesky_ex", A, o)
  if type(o) == "table" and o.check_errors then
    local i, v = first_bad(info)
    if i then fail("cholesky_ex", batch_prefix(info, i) .. ("The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite)."):format(v)) end
  end
  return L, info
end
function linalg.cholesky(A, o)
  local L, info = cholesky_ex("cholesky", A, o)
  local i, v = first_bad(info)
  if i then fail("cholesky", batch_prefix(info, i) .. ("The factorization could not be completed because the input is not positive-definite (the leading minor of order %d is not positive-definite)."):format(v)) end
  return L
end

---------------------------------------------------------------------------
-- qr
---------------------------------------------------------------------------
-- the square case m >= n (R n x n): gA = (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q
local function qr_square_grad(gQ, gR, Q, R)
  local M = R:matmul(mH(gR)) - mH(gQ):matmul(Q)
  local Ml = tril(M)
  M = Ml + mH(Ml)
  M = M - 0.5 * diag_embed(diagonal(M))
  local rhs = gQ + Q:matmul(M)
  -- rhs R^{-H} = (R^{-1} rhs^H)^H
  return mH(linalg.solve_triangular(R, mH(rhs), { upper = true }))
end
local qr_core = autograd.Function {
  name = "LinalgQr",
  forward = function(ctx, A, mode)
    local Q, R = K.qr(A, mode)
    ctx.mode = mode
    ctx:save_for_backward(A, Q, R)
    return Q, R
  end,
  backward = function(ctx, gQ, gR)
    local A, Q, R = unpack(ctx.saved_tensors)
    local mode = ctx.mode
    local s = A.shape
    local m, n = s[#s - 1], s[#s]
    if mode == "r" then
      error("ltensor.linalg.qr: The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.", 0)
    end
    if mode == "complete" and m > n then
      error("ltensor.linalg.qr: The QR decomposition is not differentiable when mode='complete' and nrows > ncols.", 0)
    end
    if m >= n then return qr_square_grad(gQ, gR, Q, R) end
    -- wide: A = Q [X | Y], R = [U | V] with U square m x m
    local U = R:narrow(-1, 1, m)
    local Y = A:narrow(-1, m + 1, n - m)
    local gU, gV = gR:narrow(-1, 1, m), gR:narrow(-1, m + 1, n - m)
    local gX = qr_square_grad(gQ + Y:matmul(mH(gV)), gU, Q, U)
    local gY = Q:matmul(gV)
    return T.cat({ gX, gY }, -1)
  end,
}
function linalg.qr(A, o)
  local fn = "qr"
  check_la(fn, A, 1)
  check_matrix(fn, A)
  local mode = opt_arg(fn, o, "mode", "string", { mode = true }) or "reduced"
  if mode ~= "reduced" and mode ~= "complete" and mode ~= "r" then
    fail(fn, "qr received unrecognized mode '" .. tostring(mode) .. "' but expected one of 'reduced' (default), 'r', or 'complete'")
  end
  return qr_core(A, mode)
end

-- torch.geqrf(A) -> (a, tau): LAPACK's packed QR
function T.geqrf(A)
  check_la("geqrf", A, 1)
  check_matrix("geqrf", A)
  return K.geqrf(A)
end

-- The same product built from differentiable ops, for inputs that require
-- grad: Q = H_1 (H_2 (... (H_k I[:, :n]))), each H_i applied as
-- Q - tau_i v_i (v_i^H Q), v_i = (0, ..., 0, 1, A[i+1:, i]).  Autograd then
-- gives the gradient PyTorch's householder_product_backward computes (the
-- gradient of the same function), and the double backward too; one step per
-- reflector, each a matrix-vector product.
householder_diff = function(A, tau)
  local s = A.shape
  local m, n = s[#s - 1], s[#s]
  local k = tau.shape[#tau.shape]
  local dt = A.dtype
  local rows = T.arange(1, m + 1)
  local Q = eye(m, dt):narrow(-1, 1, n):expand(cat_shape(batch_of(s), { m, n }))
  for i = k, 1, -1 do
    local col = A:select(-1, i)                                         -- (..., m)
    local below = rows:gt(i):to(dt)
    local at_i = rows:eq(i):to(dt)
    local v = (col * below + at_i):unsqueeze(-1)                         -- (..., m, 1)
    local t = tau:select(-1, i):unsqueeze(-1):unsqueeze(-1)              -- (..., 1, 1)
    Q = Q - (v * t):matmul(mH(v):matmul(Q))
  end
  return Q
end

-- householder_product(A, tau): the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H
function linalg.householder_product(A, tau)
  local fn = "householder_product"
  check_la(fn, A, 1)
  check_tensor(fn, tau, 2)
  check_matrix(fn, A)
  same_dtype(fn, A, tau, "input", "tau")
  local s, ts = A.shape, tau.shape
  local m, n = s[#s - 1], s[#s]
  if m < n then fail(fn, "input.shape[-2] must be greater than or equal to input.shape[-1]") end
  if #ts ~= #s - 1 then fail(fn, "Expected tau to have one dimension less than input, but got tau.ndim equal to " .. #ts .. " and input.ndim is equal to " .. #s) end
  if ts[#ts] > n then fail(fn, "input.shape[-1] must be greater than or equal to tau.shape[-1]") end
  for i = 1, #ts - 1 do
    if ts[i] ~= s[i] then fail(fn, "Expected batch dimensions of tau to be equal to input.shape[:-2]") end
  end
  if T.is_grad_enabled() and (A.requires_grad or tau.requires_grad) then
    return householder_diff(A, tau)
  end
  return K.orgqr(A, tau)
end

---------------------------------------------------------------------------
-- eigh, eigvalsh, eig, eigvals
---------------------------------------------------------------------------

-- geev on non-finite input: PyTorch's message (LAPACK would be handed it)
local function eig_nonfinite(fn, info)
  local i, v = first_bad(info)
  if v == -4 then fail(fn, "input tensor should not contain infs or NaNs.") end
  eig_errors(fn, info, "eigenvalues")
end

local eigh_core = autograd.Function {
  name = "LinalgEigh",
  forward = function(ctx, A, upper)
    local L, V, info = K.syevd(A, upper, true)
    last_info = info
    ctx:save_for_backward(L, V)
    return L, V
  end,
  backward = function(ctx, gL, gV)
    local L, V = unpack(ctx.saved_tensors)
    -- gA = V (diag(gL) + skew(V^H gV) / E) V^H, E_ij = L_j - L_i
    local VhgV = mH(V):matmul(gV)
    VhgV = 0.5 * (VhgV - mH(VhgV))
    local E = L:unsqueeze(-2) - L:unsqueeze(-1)
    local n = L.shape[#L.shape]
    local I = eye(n, L.dtype)
    E = E + I
    local M = (VhgV / E:to(VhgV.dtype)) * (1 - I):to(VhgV.dtype) + diag_embed(gL:to(VhgV.dtype))
    return V:matmul(M):matmul(mH(V))
  end,
}
local function uplo_of(fn, o)
  local u = opt_arg(fn, o, "UPLO", "string", { UPLO = true }) or "L"
  if u ~= "L" and u ~= "U" and u ~= "l" and u ~= "u" then
    fail(fn, "Expected UPLO argument to be 'L' or 'U', but got " .. tostring(u))
  end
  return u == "U" or u == "u"
end
function linalg.eigh(A, o)
  check_la_square("eigh", A)
  local L, V = eigh_core(A, uplo_of("eigh", o))
  eig_errors("eigh", last_info, "eigenvalues")
  return L, V
end
function linalg.eigvalsh(A, o)
  check_la_square("eigvalsh", A)
  local upper = uplo_of("eigvalsh", o)
  if A.requires_grad and T.is_grad_enabled() then
    local L = eigh_core(A, upper)
    eig_errors("eigvalsh", last_info, "eigenvalues")
    return L
  end
  local L, _, info = K.syevd(A, upper, false)
  eig_errors("eigvalsh", info, "eigenvalues")
  return L
end
-- eig and eigvals: geev, with no derivative
local function geev_of(fn, A, vectors)
  check_la_square(fn, A)
  if A.requires_grad and T.is_grad_enabled() then fail(fn, "the derivative of linalg." .. fn .. " is not implemented") end
  local w, V, info = K.geev(A, vectors)
  if first_bad(info) then eig_nonfinite(fn, info) end
  return w, V
end
function linalg.eig(A) return geev_of("eig", A, true) end
function linalg.eigvals(A) return (geev_of("eigvals", A, false)) end

---------------------------------------------------------------------------
-- svd, svdvals
---------------------------------------------------------------------------
local svd_core = autograd.Function {
  name = "LinalgSvd",
  forward = function(ctx, A, full)
    local S, U, Vh, info = K.gesdd(A, full and "A" or "S")
    last_info = info
    ctx.full = full
    ctx:save_for_backward(U, S, Vh)
    return U, S, Vh
  end,
  backward = function(ctx, gU, gS, gVh)
    local U, S, Vh = unpack(ctx.saved_tensors)
    local m, n = U.shape[#U.shape - 1], Vh.shape[#Vh.shape]
    local k = S.shape[#S.shape]
    if ctx.full then
      U, Vh = U:narrow(-1, 1, k), Vh:narrow(-2, 1, k)
      gU, gVh = gU:narrow(-1, 1, k), gVh:narrow(-2, 1, k)
    end
    local dt = U.dtype
    local Sd = S:to(dt)
    local function skew(X) return X - mH(X) end
    local UhgU = skew(mH(U):matmul(gU))
    local VhgV = skew(Vh:matmul(mH(gVh)))
    local S2 = S * S
    local E = S2:unsqueeze(-2) - S2:unsqueeze(-1) + eye(k, S.dtype)       -- E_ij = S_j^2 - S_i^2
    local offdiag = (1 - eye(k, S.dtype)):to(dt)
    local gA = ((UhgU * Sd:unsqueeze(-2) + Sd:unsqueeze(-1) * VhgV) / E:to(dt)) * offdiag
    gA = gA + diag_embed(gS:to(dt))
    if U:is_complex() then gA = gA + diag_embed(diagonal(UhgU) / (2 * Sd)) end
    if m > n then
      gA = U:matmul(gA)
      local gUSinv = gU / Sd:unsqueeze(-2)
      gA = gA + gUSinv - U:matmul(mH(U):matmul(gUSinv))
      gA = gA:matmul(Vh)
    elseif m < n then
      gA = gA:matmul(Vh)
      local SinvgVh = gVh / Sd:unsqueeze(-1)
      gA = gA + SinvgVh - SinvgVh:matmul(mH(Vh)):matmul(Vh)
      gA = U:matmul(gA)
    else
      gA = U:matmul(gA):matmul(Vh)
    end
    return gA
  end,
}
function linalg.svd(A, o)
  check_la("svd", A, 1)
  check_matrix("svd", A)
  local full = opt_arg("svd", o, "full_matrices", "boolean", { full_matrices = true, driver = true }) ~= false
  local U, S, Vh = svd_core(A, full)
  svd_errors("svd", last_info)
  return U, S, Vh
end
function linalg.svdvals(A)
  check_la("svdvals", A, 1)
  check_matrix("svdvals", A)
  if A.requires_grad and T.is_grad_enabled() then
    local _, S = svd_core(A, false)
    svd_errors("svdvals", last_info)
    return S
  end
  local S, _, _, info = K.gesdd(A, "N")
  svd_errors("svdvals", info)
  return S
end
return true
