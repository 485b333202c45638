-- ltensor.linalg.solve: solve, inv, lu_factor, lu_solve, solve_triangular,
-- det, slogdet; pinv, lstsq, matrix_rank.
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local L = require "ltensor.linalg.common"
local eig_errors, svd_errors = L.eig_errors, L.svd_errors
local math, table, linalg = L.math, L.table, L.linalg
local type, unpack = L.type, L.unpack
local K, is_t, fail, dname = L.K, L.is_t, L.fail, L.dname
local EPS, opts_of, ck, check_tensor = L.EPS, L.opts_of, L.ck, L.check_tensor
local check_la, check_la_square = L.check_la, L.check_la_square
local check_matrix, check_square, same_dtype, shape_str = L.check_matrix, L.check_square, L.same_dtype, L.shape_str
local batch_of = L.batch_of
local cat_shape, broadcast, expand_batch, mT = L.cat_shape, L.broadcast, L.expand_batch, L.mT
local mH = L.mH
local conj, real_dtype, eye, diagonal = L.conj, L.real_dtype, L.eye, L.diagonal
local tril, triu, flat, first_bad, batch_prefix = L.tril, L.triu, L.flat, L.first_bad, L.batch_prefix
---------------------------------------------------------------------------
-- solve, inv, lu_factor, lu_solve
---------------------------------------------------------------------------
local last_info
local solve_core
solve_core = autograd.Function {
  name = "LinalgSolveEx",
  forward = function(ctx, A, B)
    local X, info = K.solve(A, B)
    last_info = info
    ctx:save_for_backward(A, X)
    return X
  end,
  backward = function(ctx, gX)
    local A, X = unpack(ctx.saved_tensors)
    local gB = solve_core(mH(A), gX)
    local gA
    if ctx.needs_input_grad[1] then gA = -gB:matmul(mH(X)) end
    return gA, gB
  end,
}

-- A (..., n, n) and B broadcast; returns X, info, vector_case
local function solve_prep(fn, A, B, left)
  check_la(fn, A, 1)
  check_tensor(fn, B, 2)
  check_square(fn, A)
  same_dtype(fn, A, B, "A", "B")
  local as, bs = A.shape, B.shape
  local vector = B:dim() == 1
  if not vector and B:dim() == A:dim() - 1 then
    vector = true
    for i = 1, #bs do if bs[i] ~= as[i] then vector = false break end end
  end
  if vector and not left then fail(fn, "Vector broadcasting of the left hand side is not supported for left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)") end
  local Bm = vector and B:unsqueeze(-1) or B
  if Bm:dim() < 2 then fail(fn, "The input tensor B must have at least 2 dimensions.") end
  local n = as[#as]
  local bms = Bm.shape
  local rows = left and bms[#bms - 1] or bms[#bms]
  local batch = broadcast(batch_of(as), batch_of(bms))
  if rows ~= n or not batch then
    fail(fn, ("Incompatible shapes of A and B for the equation %s (%s and %s)")
      :format(left and "AX = B" or "XA = B", shape_str({ as[#as - 1], as[#as] }), shape_str({ bms[#bms - 1], bms[#bms] })))
  end
  return expand_batch(A, batch), expand_batch(Bm, batch), vector
end

local function solve_ex(fn, A, B, left)
  local Ae, Be, vector = solve_prep(fn, A, B, left)
  local X
  if left then X = solve_core(Ae, Be)
  else X = mT(solve_core(mT(Ae), mT(Be))) end
  local info = last_info
  if vector then X = X:squeeze(-1) end
  return X, info
end

function linalg.solve_ex(A, B, ...)
  local _, o = opts_of(...)
  ck("solve_ex", o, { "left", "check_errors", "out" })
  local X, info = solve_ex("solve_ex", A, B, o.left ~= false)
  if o.check_errors then
    local i = first_bad(info)
    if i then fail("solve_ex", batch_prefix(info, i) .. "The solver failed because the input matrix is singular.") end
  end
  return X, info
end

function linalg.solve(A, B, ...)
  local _, o = opts_of(...)
  ck("solve", o, { "left", "out" })
  local X, info = solve_ex("solve", A, B, o.left ~= false)
  local i = first_bad(info)
  if i then fail("solve", batch_prefix(info, i) .. "The solver failed because the input matrix is singular.") end
  return X
end

local function inv_ex(fn, A)
  check_la_square(fn, A)
  local n = A.shape[#A.shape]
  local I = eye(n, A.dtype):expand(A.shape)
  local X = solve_core(A, I)
  return X, last_info
end
function linalg.inv_ex(A, o)
  ck("inv_ex", o, { "check_errors", "out" })
  local X, info = inv_ex("inv_ex", A)
  if type(o) == "table" and o.check_errors then
    local i, v = first_bad(info)
    if i then fail("inv_ex", batch_prefix(info, i) .. ("The diagonal element %d is zero, the inversion could not be completed because the input matrix is singular."):format(v)) end
  end
  return X, info
end
function linalg.inv(A)
  local X, info = inv_ex("inv", A)
  local i, v = first_bad(info)
  if i then fail("inv", batch_prefix(info, i) .. ("The diagonal element %d is zero, the inversion could not be completed because the input matrix is singular."):format(v)) end
  return X
end

-- P, L, U from getrf's packed factors
local function unpack_lu(LU, piv)
  local s = LU.shape
  local m, n = s[#s - 1], s[#s]
  local k = math.min(m, n)
  local L = tril(LU:narrow(-1, 1, k), -1) + eye(m, LU.dtype):narrow(-1, 1, k)
  local U = triu(LU:narrow(-2, 1, k))
  return K.perm(piv, m, LU.dtype), L, U
end

-- The gradient of A = P L U (PyTorch's linalg_lu_backward): with
-- gA = P L^{-H} [tril(L^H gL, -1) + triu(gU U^H)] U^{-H} for a square A, and
-- its wide (m < n) and tall (m > n) forms, where only the square blocks U1 /
-- L1 are inverted and U2 / L2's gradients pass straight through.
local function lu_backward(gL, gU, P, L, U)
  local m, n = L.shape[#L.shape - 1], U.shape[#U.shape]
  local k = math.min(m, n)
  local unit_upper = { upper = true, left = true, unitriangular = true }
  -- L's diagonal and upper part and U's lower part are constants: their
  -- gradients go nowhere
  gL, gU = tril(gL, -1), triu(gU)
  local gA
  if m == n then
    gA = tril(mH(L):matmul(gL), -1) + triu(gU:matmul(mH(U)))
    gA = linalg.solve_triangular(mH(U), gA, { upper = false, left = false })
    gA = linalg.solve_triangular(mH(L), gA, unit_upper)
  elseif m < n then
    local U1 = U:narrow(-1, 1, k)
    gA = mH(L):matmul(gL) - triu(gU):matmul(mH(U))
    gA = linalg.solve_triangular(mH(U1), tril(gA, -1), { upper = false, left = false })
    gA = T.cat({ gA + triu(gU:narrow(-1, 1, k)), gU:narrow(-1, k + 1, n - k) }, -1)
    gA = linalg.solve_triangular(mH(L), gA, unit_upper)
  else
    local L1 = L:narrow(-2, 1, k)
    gA = gU:matmul(mH(U)) - mH(L):matmul(gL)
    gA = linalg.solve_triangular(mH(L1), triu(gA), unit_upper)
    gA = T.cat({ gA + tril(gL:narrow(-2, 1, k), -1), gL:narrow(-2, k + 1, m - k) }, -2)
    gA = linalg.solve_triangular(mH(U), gA, { upper = false, left = false })
  end
  return P:matmul(gA)
end

-- lu_factor: the packed LU is differentiable (pivots and info are not: they
-- come back beside the Function's output)
local last_piv
local lu_factor_core = autograd.Function {
  name = "LinalgLuFactorEx",
  forward = function(ctx, A)
    local LU, piv, info = K.getrf(A)
    last_piv, last_info = piv, info
    ctx.piv = piv
    ctx:save_for_backward(LU)
    return LU
  end,
  backward = function(ctx, gLU)
    local LU = unpack(ctx.saved_tensors)
    local P, L, U = unpack_lu(LU, ctx.piv)
    local s = LU.shape
    local k = math.min(s[#s - 1], s[#s])
    return lu_backward(gLU:narrow(-1, 1, k), gLU:narrow(-2, 1, k), P, L, U)
  end,
}
local function lu_factor_ex(A)
  local LU = lu_factor_core(A)
  return LU, last_piv, last_info
end

-- lu: L and U are differentiable, P is not
local last_P
local lu_core = autograd.Function {
  name = "LinalgLuBackward",
  forward = function(ctx, A)
    local LU, piv = K.getrf(A)
    local P, L, U = unpack_lu(LU, piv)
    last_P = P
    ctx:save_for_backward(P, L, U)
    return L, U
  end,
  backward = function(ctx, gL, gU)
    local P, L, U = unpack(ctx.saved_tensors)
    return lu_backward(gL, gU, P, L, U)
  end,
}

-- the LU functions' arguments: A, then options among known (pivot = false
-- refused)
local function lu_args(fn, A, o, known)
  check_la(fn, A, 1)
  check_matrix(fn, A)
  ck(fn, o, known)
  if type(o) == "table" and o.pivot == false then fail(fn, "LU without pivoting is not implemented on the CPU") end
end
function linalg.lu_factor_ex(A, o)
  lu_args("lu_factor_ex", A, o, { "pivot", "check_errors", "out" })
  return lu_factor_ex(A)
end
function linalg.lu_factor(A, o)
  lu_args("lu_factor", A, o, { "pivot", "out" })
  local LU, piv, info = lu_factor_ex(A)
  local i, v = first_bad(info)
  if i then
    fail("lu_factor", batch_prefix(info, i) .. ("U[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"):format(v, v))
  end
  return LU, piv
end

-- P, L, U with A = P L U
function linalg.lu(A, o)
  lu_args("lu", A, o, { "pivot", "out" })
  local L, U = lu_core(A)
  return last_P, L, U
end

-- torch.lu_unpack(LU, pivots): the P, L, U that lu_factor's result stands for
function T.lu_unpack(LU, piv)
  check_la("lu_unpack", LU, 1)
  check_matrix("lu_unpack", LU, "LU")
  check_tensor("lu_unpack", piv, 2)
  local s, ps = LU.shape, piv.shape
  if #ps ~= #s - 1 or ps[#ps] ~= math.min(s[#s - 1], s[#s]) then
    fail("lu_unpack", "pivots must have shape LU.shape[:-2] + (min(m, n),)")
  end
  for i = 1, #ps - 1 do if ps[i] ~= s[i] then fail("lu_unpack", "pivots must have shape LU.shape[:-2] + (min(m, n),)") end end
  return unpack_lu(LU, piv)
end

-- lu_solve through autograd: B's gradient is the solve with the adjoint
-- system, LU's is PyTorch's linalg_lu_solve_LU
local lu_solve_core
lu_solve_core = autograd.Function {
  name = "LinalgLuSolve",
  forward = function(ctx, LU, B, piv, left, adjoint)
    local X
    if left then X = K.getrs(LU, piv, B, adjoint and "C" or "N")
    -- X A = B  <=>  A^H X^H = B^H ;  X A^H = B  <=>  A X^H = B^H
    else X = mH(K.getrs(LU, piv, mH(B), adjoint and "N" or "C")) end
    ctx.piv, ctx.left, ctx.adjoint = piv, left, adjoint
    ctx:save_for_backward(LU, X)
    return X
  end,
  backward = function(ctx, gX)
    local LU, X = unpack(ctx.saved_tensors)
    local piv, left, adjoint = ctx.piv, ctx.left, ctx.adjoint
    local gB = lu_solve_core(LU, gX, piv, left, not adjoint)
    local gLU
    if ctx.needs_input_grad[1] then
      local P, L, U = unpack_lu(LU, piv)
      if left ~= adjoint then
        -- gR = U^{-H} op(-gX) op(X)^H; gLU = tril(L^{-H} gR U^H, -1) + triu(gR)
        local gR = linalg.solve_triangular(mH(U), -(left and gX:matmul(mH(X)) or mH(gX):matmul(X)), { upper = false })
        local gL = tril(linalg.solve_triangular(mH(L), gR:matmul(mH(U)), { upper = true, left = true, unitriangular = true }), -1)
        gLU = gL + triu(gR)
      else
        -- gR = -P^T op(X) op(gX)^H P L^{-H}; gLU = tril(gR, -1) + triu(L^H gR U^{-H})
        local gR = -mT(P):matmul(left and X or mH(X)):matmul(left and mH(gX) or gX):matmul(P)
        gR = linalg.solve_triangular(mH(L), gR, { upper = true, left = false, unitriangular = true })
        local gU = triu(linalg.solve_triangular(mH(U), mH(L):matmul(gR), { upper = false, left = false }))
        gLU = tril(gR, -1) + gU
      end
    end
    return gLU, gB
  end,
}

function linalg.lu_solve(LU, piv, B, o)
  local fn = "lu_solve"
  ck(fn, o, { "left", "adjoint", "out" })
  o = type(o) == "table" and o or {}
  check_la(fn, LU, 1)
  check_tensor(fn, piv, 2)
  check_tensor(fn, B, 3)
  check_square(fn, LU, "LU")
  same_dtype(fn, LU, B, "LU", "B")
  check_matrix(fn, B, "B")
  if piv.dtype ~= T.int32 then fail(fn, "pivots should be a Tensor of dtype int32") end
  local ls, bs, ps = LU.shape, B.shape, piv.shape
  local n = ls[#ls]
  local left, adjoint = o.left ~= false, o.adjoint == true
  if (left and bs[#bs - 1] or bs[#bs]) ~= n then
    fail(fn, ("Incompatible shapes of A and B for the equation %s (%s and %s)")
      :format(left and "AX = B" or "XA = B", shape_str({ n, n }), shape_str({ bs[#bs - 1], bs[#bs] })))
  end
  if #ps ~= #ls - 1 or ps[#ps] ~= n then fail(fn, "Expected LU.shape[:-1] and pivots.shape to be the same") end
  for i = 1, #ps - 1 do if ps[i] ~= ls[i] then fail(fn, "Expected LU.shape[:-1] and pivots.shape to be the same") end end
  local batch = broadcast(batch_of(ls), batch_of(bs))
  if not batch then fail(fn, "Incompatible batch shapes of LU and B") end
  local LUe, pe = expand_batch(LU, batch), expand_batch(piv, batch, 1)
  return lu_solve_core(LUe, expand_batch(B, batch), pe, left, adjoint)
end

---------------------------------------------------------------------------
-- solve_triangular
---------------------------------------------------------------------------
local trsm_core
trsm_core = autograd.Function {
  name = "LinalgSolveTriangular",
  forward = function(ctx, A, B, left, upper, unit)
    ctx.left, ctx.upper, ctx.unit = left, upper, unit
    local X = K.trsm(A, B, left, upper, "N", unit)
    ctx:save_for_backward(A, X)
    return X
  end,
  backward = function(ctx, gX)
    local A, X = unpack(ctx.saved_tensors)
    local left, upper, unit = ctx.left, ctx.upper, ctx.unit
    -- gB = A^{-H} gX (left) or gX A^{-H} (right)
    local gB = trsm_core(mH(A), gX, left, not upper, unit)
    local gA
    if ctx.needs_input_grad[1] then
      gA = left and -gB:matmul(mH(X)) or -mH(X):matmul(gB)
      if upper then gA = triu(gA, unit and 1 or 0) else gA = tril(gA, unit and -1 or 0) end
    end
    return gA, gB
  end,
}

function linalg.solve_triangular(A, B, o)
  local fn = "solve_triangular"
  ck(fn, o, { "upper", "left", "unitriangular", "out" })
  check_la(fn, A, 1)
  check_tensor(fn, B, 2)
  if type(o) ~= "table" or o.upper == nil then fail(fn, "missing required keyword argument 'upper' (pass {upper = true|false})") end
  check_square(fn, A)
  check_matrix(fn, B, "B")
  same_dtype(fn, A, B, "A", "B")
  local left, upper, unit = o.left ~= false, o.upper and true or false, o.unitriangular and true or false
  local as, bs = A.shape, B.shape
  local n = as[#as]
  if (left and bs[#bs - 1] or bs[#bs]) ~= n then
    fail(fn, ("Incompatible shapes of A and B for the equation %s (%s and %s)")
      :format(left and "AX = B" or "XA = B", shape_str({ n, n }), shape_str({ bs[#bs - 1], bs[#bs] })))
  end
  local batch = broadcast(batch_of(as), batch_of(bs))
  if not batch then fail(fn, "Incompatible batch shapes of A and B") end
  return trsm_core(expand_batch(A, batch), expand_batch(B, batch), left, upper, unit)
end

---------------------------------------------------------------------------
-- det, slogdet
---------------------------------------------------------------------------
-- sign of the row permutation given by getrf's pivots, (batch) of dt
local function perm_sign(piv, dt)
  local k = piv.shape[#piv.shape]
  local swaps = piv:ne(T.arange(1, k + 1):to(T.int32)):sum(-1)     -- int64
  return (1 - 2 * T.remainder(swaps, 2)):to(dt)
end

local function lu_det_parts(A)
  local LU, piv = K.getrf(A)
  return diagonal(LU), perm_sign(piv, A.dtype)
end

-- prod_{j ~= i} S_j along the last dim, without dividing (S may hold zeros)
local function prod_others(S)
  local k = S.shape[#S.shape]
  if k <= 1 then return T.ones_like(S) end
  local ones = T.ones(cat_shape(batch_of(S.shape, 1), { 1 }), { dtype = S.dtype })
  local left = T.cat({ ones, T.cumprod(S:narrow(-1, 1, k - 1), -1) }, -1)
  local rev = T.arange(k, 0, -1)
  local Sr = S:index_select(-1, rev)
  local right = T.cat({ ones, T.cumprod(Sr:narrow(-1, 1, k - 1), -1) }, -1):index_select(-1, rev)
  return left * right
end

local det_core = autograd.Function {
  name = "LinalgDet",
  forward = function(ctx, A)
    local d, sgn = lu_det_parts(A)
    local det = T.prod(d, -1) * sgn
    ctx:save_for_backward(A, det)
    return det
  end,
  backward = function(ctx, g)
    local A, det = unpack(ctx.saved_tensors)
    -- invertible A: gA = (g conj(det)) A^{-H}
    local Ainv, info = linalg.inv_ex(A)
    local gA = (g * conj(det)):unsqueeze(-1):unsqueeze(-1) * mH(Ainv)
    if not first_bad(info) then return gA end
    -- singular entries (PyTorch's singular case): through A = U S Vh,
    -- d det = conj(det(U) det(Vh))^-1 ... so gA = U diag(g alpha prod_{j~=i} S_j) Vh
    local U, S, Vh = linalg.svd(A)
    local alpha = conj(linalg.det(U) * linalg.det(Vh))
    local D = prod_others(S):to(A.dtype) * (g * alpha):unsqueeze(-1)
    local sing = (U * D:unsqueeze(-2)):matmul(Vh)
    return T.where(info:ne(0):unsqueeze(-1):unsqueeze(-1), sing, gA)
  end,
}
function linalg.det(A)
  check_la_square("det", A)
  return det_core(A)
end

local slogdet_core = autograd.Function {
  name = "LinalgSlogdet",
  forward = function(ctx, A)
    local d, sgn = lu_det_parts(A)
    local ad = T.abs(d)
    local logabs = T.sum(T.log(ad), -1)
    local sign
    if A:is_complex() then
      sign = T.prod(T.where(ad:eq(0), T.zeros({}, { dtype = A.dtype }), d / ad), -1) * sgn
    else
      sign = T.prod(T.sign(d), -1) * sgn
    end
    ctx:save_for_backward(A)
    return sign, logabs
  end,
  backward = function(ctx, gsign, glog)
    local A = unpack(ctx.saved_tensors)
    local Ainv = linalg.inv_ex(A)
    -- d logabsdet = Re tr(A^{-1} dA): gA = glog A^{-H}  (the sign has no real gradient)
    return glog:to(A.dtype):unsqueeze(-1):unsqueeze(-1) * mH(Ainv)
  end,
}
function linalg.slogdet(A)
  check_la_square("slogdet", A)
  return slogdet_core(A)
end

---------------------------------------------------------------------------

---------------------------------------------------------------------------
-- pinv, lstsq, matrix_rank
---------------------------------------------------------------------------
-- PyTorch's pinv_backward
local function pinv_backward(g, pinvA, A)
  local s = A.shape
  local m, n = s[#s - 1], s[#s]
  local pinvAh, gh = mH(pinvA), mH(g)
  if m <= n then
    local Km = gh:matmul(pinvA)
    local KpinvAh = Km:matmul(pinvAh)
    return -mH(pinvA:matmul(Km)) + KpinvAh - A:matmul(pinvA):matmul(KpinvAh)
      + pinvAh:matmul(pinvA):matmul(gh - Km:matmul(A))
  end
  local Km = pinvA:matmul(gh)
  local pinvAhK = pinvAh:matmul(Km)
  return -mH(Km:matmul(pinvA)) + (gh - A:matmul(Km)):matmul(pinvA):matmul(pinvAh) + pinvAhK
    - pinvAhK:matmul(pinvA):matmul(A)
end

-- tolerance per batch entry (..., 1) from atol/rtol and the largest singular value
local function tol_of(fn, A, smax, o)
  local atol, rtol = o.atol, o.rtol
  if o.rcond ~= nil then rtol = o.rcond end
  if o.tol ~= nil then atol = o.tol end
  local s = A.shape
  local rdt = real_dtype(A.dtype)
  if atol ~= nil and not (type(atol) == "number" or is_t(atol)) then fail(fn, "atol must be a number or a tensor") end
  if rtol ~= nil and not (type(rtol) == "number" or is_t(rtol)) then fail(fn, "rtol must be a number or a tensor") end
  if rtol == nil then
    rtol = atol == nil and EPS[dname(A.dtype)] * math.max(s[#s - 1], s[#s]) or 0
  end
  atol = atol or 0
  local at = is_t(atol) and atol:to(rdt) or T.full({}, atol, { dtype = rdt })
  local rt = is_t(rtol) and rtol:to(rdt) or T.full({}, rtol, { dtype = rdt })
  return T.maximum(at:unsqueeze(-1), (rt:unsqueeze(-1) * smax))
end

local pinv_core = autograd.Function {
  name = "LinalgPinv",
  forward = function(ctx, A, o, hermitian)
    local s = A.shape
    local m, n = s[#s - 1], s[#s]
    local P
    if m == 0 or n == 0 then
      P = T.zeros(cat_shape(batch_of(s), { n, m }), { dtype = A.dtype })
    elseif hermitian then
      local L, V, info = K.syevd(A, false, true)
      eig_errors("pinv", info, "eigenvalues")
      local aL = T.abs(L)
      local tol = tol_of("pinv", A, T.amax(aL, -1, true), o)
      local Linv = T.where(aL:gt(tol), 1 / L, T.zeros({}, { dtype = L.dtype })):to(A.dtype)
      P = (V * Linv:unsqueeze(-2)):matmul(mH(V))
    else
      local S, U, Vh, info = K.gesdd(A, "S")
      svd_errors("pinv", info)
      local tol = tol_of("pinv", A, S:narrow(-1, 1, 1), o)
      local Sinv = T.where(S:gt(tol), 1 / S, T.zeros({}, { dtype = S.dtype })):to(A.dtype)
      P = (mH(Vh) * Sinv:unsqueeze(-2)):matmul(mH(U))
    end
    ctx:save_for_backward(A, P)
    return P
  end,
  backward = function(ctx, g)
    local A, P = unpack(ctx.saved_tensors)
    return pinv_backward(g, P, A)
  end,
}
function linalg.pinv(A, o)
  ck("pinv", o, { "atol", "rtol", "rcond", "hermitian", "out" })
  o = type(o) == "table" and o or {}
  check_la("pinv", A, 1)
  check_matrix("pinv", A)
  local herm = o.hermitian == true
  if herm then check_square("pinv", A) end
  return pinv_core(A, o, herm)
end

function linalg.matrix_rank(A, o)
  ck("matrix_rank", o, { "atol", "rtol", "tol", "hermitian", "out" })
  o = type(o) == "table" and o or {}
  check_la("matrix_rank", A, 1)
  check_matrix("matrix_rank", A)
  local S
  local s = A.shape
  if s[#s] == 0 or s[#s - 1] == 0 then return T.zeros(batch_of(s), { dtype = T.int64 }) end
  if o.hermitian then
    check_square("matrix_rank", A)
    local L, _, info = K.syevd(A, false, false)
    eig_errors("matrix_rank", info, "eigenvalues")
    S = T.abs(L)
  else
    local info, _
    S, _, _, info = K.gesdd(A, "N")
    svd_errors("matrix_rank", info)
  end
  local tol = tol_of("matrix_rank", A, T.amax(S, -1, true), o)
  return T.sum(S:gt(tol), -1)
end

local lstsq_core = autograd.Function {
  name = "LinalgLstsq",
  forward = function(ctx, A, B, driver, rcond)
    local Xf, rank, sv, info = K.gels(A, B, driver, rcond)
    ctx:save_for_backward(A, B)
    local n = A.shape[#A.shape]
    last_info = { Xf, rank, sv, info }
    return Xf:narrow(-2, 1, n):clone()
  end,
  backward = function(ctx, gX)
    local A, B = unpack(ctx.saved_tensors)
    local P = T.no_grad(function() return pinv_core(A, {}, false) end)
    local gA, gB
    if ctx.needs_input_grad[1] then gA = pinv_backward(gX:matmul(mH(B)), P, A) end
    if ctx.needs_input_grad[2] then gB = mH(P):matmul(gX) end
    return gA, gB
  end,
}
local DRIVERS = { gels = true, gelsy = true, gelsd = true, gelss = true }
function linalg.lstsq(A, B, ...)
  local fn = "lstsq"
  local pos, o = opts_of(...)
  ck(fn, o, { "rcond", "driver" })
  local rcond = o.rcond
  if rcond == nil and type(pos[1]) == "number" then rcond = pos[1] end
  check_la(fn, A, 1)
  check_tensor(fn, B, 2)
  same_dtype(fn, A, B, "input", "other")
  if A:dim() < 2 then fail(fn, "input must have at least 2 dimensions.") end
  if B:dim() < 1 then fail(fn, "other must have at least 1 dimension.") end
  local driver = o.driver or "gelsy"
  if not DRIVERS[driver] then fail(fn, "parameter `driver` should be one of (gels, gelsy, gelsd, gelss)") end
  local vector = B:dim() == A:dim() - 1
  local Bm = vector and B:unsqueeze(-1) or B
  local as, bs = A.shape, Bm.shape
  if as[#as - 1] ~= bs[#bs - 1] then
    fail(fn, vector and "input.size(-2) should match other.size(-1)" or "input.size(-2) should match other.size(-2)")
  end
  local batch = broadcast(batch_of(as), batch_of(bs))
  if not batch then fail(fn, "the batch dimensions of input and other do not broadcast") end
  local m, n = as[#as - 1], as[#as]
  if rcond == nil then rcond = EPS[dname(A.dtype)] * math.max(m, n) end
  local X = lstsq_core(expand_batch(A, batch), expand_batch(Bm, batch), driver, rcond)
  local Xf, rank, sv = unpack(last_info)
  local rdt = real_dtype(A.dtype)
  local residuals = T.zeros({ 0 }, { dtype = rdt })
  if m > n and driver ~= "gelsy" then
    local full = true
    if driver ~= "gels" then for _, r in ipairs(flat(rank)) do if r ~= n then full = false break end end end
    if full then
      local rest = Xf:narrow(-2, n + 1, m - n)
      residuals = T.sum(T.abs(rest) ^ 2, -2)
      if vector then residuals = residuals:squeeze(-1) end
    end
  end
  if driver == "gels" then rank = T.zeros({ 0 }, { dtype = T.int64 }) end
  if driver ~= "gelsd" and driver ~= "gelss" then sv = T.zeros({ 0 }, { dtype = rdt }) end
  if vector then X = X:squeeze(-1) end
  return X, residuals, rank, sv
end

---------------------------------------------------------------------------
return true
