-- ltensor.linalg: T.linalg, PyTorch 1.13's torch.linalg over the LAPACK inside
-- OpenBLAS (the batched kernels T._lapack_* of src/l_lapack.c).
--
-- This module does what PyTorch does around its kernels: argument checks and
-- error messages (every one starts with "ltensor.linalg.<fn>:"), the vector
-- case of B, broadcasting of batch dims (by expanding, so that the gradient of
-- a broadcast operand is summed back by expand's own backward), options
-- tables, and the gradients.  An op built from differentiable ops (norms,
-- cross, vecdot, multi_dot, matrix_power, matrix_rank) gets autograd for
-- free; an op that calls LAPACK is an autograd.Function whose backward is
-- PyTorch's formula (torch/csrc/autograd/FunctionsManual.cpp), written with
-- differentiable ops.  Results that cannot have a gradient (info, pivots,
-- rank) are returned beside the Function's outputs, never through it.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local autograd = T.autograd

local linalg = T.linalg or {}   -- another module may have started the table
T.linalg = linalg

local TMT = T._metatable
local getmetatable, type, select, pack, unpack = getmetatable, type, select, table.pack, table.unpack
local math_type, huge = math.type, math.huge
-- The kernels validate their arguments too (LAPACK must never see a bad one);
-- their errors are re-raised without the position of this file.
local function strip(ok, ...)
  if ok then return ... end
  local msg = ...
  if type(msg) == "string" then msg = msg:gsub("^[^\n]-:%d+: (ltensor%.)", "%1") end
  error(msg, 0)
end
local K = {}
for _, name in ipairs { "getrf", "getrs", "perm", "geqrf", "orgqr", "solve", "potrf", "qr", "syevd", "geev", "gesdd", "gels", "trsm" } do
  local f = T["_lapack_" .. name]
  K[name] = function(...) return strip(pcall(f, ...)) end
end

---------------------------------------------------------------------------
-- helpers
---------------------------------------------------------------------------
local is_t = util.is_tensor
local fail = util.failer("ltensor.linalg.")

local function dname(dt) return tostring(dt):match("([^.]+)$") end
local tname = util.torch_name
local EPS = { float32 = 1.1920928955078125e-07, float64 = 2.220446049250313e-16,
              complex64 = 1.1920928955078125e-07, complex128 = 2.220446049250313e-16 }

-- split a trailing options table off positional arguments
local function opts_of(...)
  local a = pack(...)
  local o = a[a.n]
  if a.n >= 1 and type(o) == "table" and not is_t(o) then
    a[a.n] = nil
    a.n = a.n - 1
    return a, o
  end
  return a, {}
end

-- an options table's keys, checked by the library's one checker (l_args.c):
-- "ltensor.linalg.<fn>: unknown option 'ordd' (did you mean 'ord'?)"
local function ck(fn, o, known)
  if type(o) == "table" and not is_t(o) then T._check_opts("linalg." .. fn, o, known) end
  return o
end

-- PyTorch's optional positional argument (qr's mode, svd's full_matrices,
-- eigh's UPLO), or the same under its keyword in a trailing options table,
-- whose other keys must be known: a misspelt key is an error, not a default
-- (checked by ck, the library's one checker).
local function opt_arg(fn, o, key, ty, known)
  if o == nil then return nil end
  if type(o) == "table" and not is_t(o) then
    local names = {}
    for name in pairs(known) do names[#names + 1] = name end
    table.sort(names)
    ck(fn, o, names)
    return o[key]
  end
  if type(o) ~= ty then fail(fn, ("bad argument #2 '%s' (%s expected, got %s)"):format(key, ty, type(o))) end
  return o
end

local function check_tensor(fn, x, pos)
  if not is_t(x) then fail(fn, ("bad argument #%d (tensor expected, got %s)"):format(pos or 1, type(x))) end
end
-- float32/float64/complex64/complex128, as LAPACK computes
local function check_la(fn, x, pos)
  check_tensor(fn, x, pos)
  local n = dname(x.dtype)
  if not (x:is_floating_point() or x:is_complex()) then
    fail(fn, "Expected a floating point or complex tensor as input. Got " .. tname(x.dtype))
  end
  if not EPS[n] then fail(fn, "Low precision dtypes not supported. Got " .. tname(x.dtype)) end
end
local function check_matrix(fn, x, what)
  if x:dim() < 2 then
    fail(fn, ("The input tensor %s must have at least 2 dimensions."):format(what or "A"))
  end
end
local function check_square(fn, x, what)
  check_matrix(fn, x, what)
  local s = x.shape
  if s[#s] ~= s[#s - 1] then
    fail(fn, ("%s must be batches of square matrices, but they are %d by %d matrices"):format(what or "A", s[#s - 1], s[#s]))
  end
end
local function same_dtype(fn, a, b, na, nb)
  if a.dtype ~= b.dtype then
    fail(fn, ("Expected %s and %s to have the same dtype, but found %s of type %s and %s of type %s instead.")
      :format(na, nb, na, tname(a.dtype), nb, tname(b.dtype)))
  end
end

local function shape_str(s) return table.concat(s, "x") end
local function copy(s) local r = {} for i = 1, #s do r[i] = s[i] end return r end
local function batch_of(s, k) local r = {} for i = 1, #s - (k or 2) do r[i] = s[i] end return r end
local function cat_shape(a, b) local r = copy(a) for i = 1, #b do r[#r + 1] = b[i] end return r end
local function prod(s) local n = 1 for i = 1, #s do n = n * s[i] end return n end
-- broadcast two batch shapes; nil if they do not broadcast
local function broadcast(a, b)
  local n = math.max(#a, #b)
  local r = {}
  for i = 1, n do
    local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
    if x == y or y == 1 then r[i] = x elseif x == 1 then r[i] = y else return nil end
  end
  return r
end
local function expand_batch(x, batch, k)
  local s = x.shape
  local want = cat_shape(batch, { table.unpack(s, #s - (k or 2) + 1, #s) })
  local same = #want == #s
  if same then for i = 1, #s do if s[i] ~= want[i] then same = false break end end end
  if same then return x end
  return x:expand(want)
end

local function mT(x) return x:transpose(-1, -2) end
local function mH(x)
  local t = x:transpose(-1, -2)
  if t:is_complex() then t = t:conj() end
  return t
end
local function conj(x) if x:is_complex() then return x:conj() end return x end
local function real_dtype(dt)
  local n = dname(dt)
  if n == "complex64" then return T.float32 elseif n == "complex128" then return T.float64 end
  return dt
end
local function eye(n, dt) return T.eye(n, { dtype = dt }) end

-- the 1-based diagonal of the trailing matrices, (..., min(m, n)): differentiable
local function diagonal(x)
  local s = x.shape
  local m, n = s[#s - 1], s[#s]
  local k = math.min(m, n)
  if m ~= k then x = x:narrow(-2, 1, k) end
  if n ~= k then x = x:narrow(-1, 1, k) end
  local flat = cat_shape(batch_of(s), { k * k })
  if k == 0 then return T.zeros(cat_shape(batch_of(s), { 0 }), { dtype = x.dtype }) end
  return x:reshape(flat):index_select(-1, T.arange(1, k * k + 1, k + 1))
end
local function diag_embed(v)
  local k = v.shape[#v.shape]
  return v:unsqueeze(-1) * eye(k, v.dtype)
end
-- tril / triu of the trailing matrices (T.tril from the structural ops when present)
local function tri(x, k, lower)
  local s = x.shape
  local m, n = s[#s - 1], s[#s]
  local d = T.arange(n):view(1, n) - T.arange(m):view(m, 1)   -- j - i
  local keep = lower and d:le(k) or d:ge(k)
  return T.where(keep, x, T.zeros({}, { dtype = x.dtype }))
end
local function tril(x, k) return tri(x, k or 0, true) end
local function triu(x, k) return tri(x, k or 0, false) end

-- values of an int32/int64 tensor as a flat Lua list
local function flat(t) return t:reshape({ t:numel() }):totable() end
-- first batch entry with a nonzero info: index (1-based), value
local function first_bad(info)
  local v = flat(info)
  for i = 1, #v do if v[i] ~= 0 then return i, v[i] end end
end
local function batch_prefix(info, i)
  if info:dim() == 0 then return "" end
  return ("(Batch element %d): "):format(i)
end

-- dims from an option (a number or a table of numbers, 1-based, negative from
-- the end) -> positive 1-based positions in the given order; range and
-- duplicates checked
local function opt_dims(fn, d, nd)
  if d == nil then return nil end
  local list = type(d) == "table" and d or { d }
  local r, seen = {}, {}
  for i, v in ipairs(list) do
    if math_type(v) ~= "integer" then fail(fn, "dim must be an integer or a table of integers") end
    local lo, hi = -math.max(nd, 1), math.max(nd, 1)
    if v == 0 or v < lo or v > hi then
      fail(fn, ("dimension out of range (expected to be in range of [%d, %d], but got %d)"):format(lo, hi, v)
        .. (v == 0 and " (dims are 1-based: 1 is the first, -1 the last)" or ""))
    end
    local z = v < 0 and nd + v + 1 or v
    if seen[z] then fail(fn, "dim " .. v .. " appears multiple times in the list of dims") end
    seen[z] = true
    r[i] = z
  end
  return r
end

---------------------------------------------------------------------------
-- solve, inv, lu_factor, lu_solve
---------------------------------------------------------------------------
local last_info
local solve_core
local householder_diff   -- defined with householder_product
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
  check_la(fn, A, 1)
  check_square(fn, A)
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

function linalg.lu_factor_ex(A, o)
  check_la("lu_factor_ex", A, 1)
  check_matrix("lu_factor_ex", A)
  ck("lu_factor_ex", o, { "pivot", "check_errors", "out" })
  if type(o) == "table" and o.pivot == false then fail("lu_factor_ex", "LU without pivoting is not implemented on the CPU") end
  return lu_factor_ex(A)
end
function linalg.lu_factor(A, o)
  check_la("lu_factor", A, 1)
  check_matrix("lu_factor", A)
  ck("lu_factor", o, { "pivot", "out" })
  if type(o) == "table" and o.pivot == false then fail("lu_factor", "LU without pivoting is not implemented on the CPU") end
  local LU, piv, info = lu_factor_ex(A)
  local i, v = first_bad(info)
  if i then
    fail("lu_factor", batch_prefix(info, i) .. ("U[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"):format(v, v))
  end
  return LU, piv
end

-- P, L, U with A = P L U
function linalg.lu(A, o)
  check_la("lu", A, 1)
  check_matrix("lu", A)
  ck("lu", o, { "pivot", "out" })
  if type(o) == "table" and o.pivot == false then fail("lu", "LU without pivoting is not implemented on the CPU") end
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
  check_la("det", A, 1)
  check_square("det", A)
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
  check_la("slogdet", A, 1)
  check_square("slogdet", A)
  return slogdet_core(A)
end

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
  check_la(fn, A, 1)
  check_square(fn, A)
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
local function eig_errors(fn, info, what)
  local i, v = first_bad(info)
  if not i then return end
  if v == -4 then fail(fn, batch_prefix(info, i) .. "The algorithm failed to converge because the input matrix contained non-finite values.") end
  fail(fn, batch_prefix(info, i) .. ("The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated %s (error code: %d)."):format(what, v))
end

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
  check_la("eigh", A, 1)
  check_square("eigh", A)
  local L, V = eigh_core(A, uplo_of("eigh", o))
  eig_errors("eigh", last_info, "eigenvalues")
  return L, V
end
function linalg.eigvalsh(A, o)
  check_la("eigvalsh", A, 1)
  check_square("eigvalsh", A)
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
function linalg.eig(A)
  check_la("eig", A, 1)
  check_square("eig", A)
  if A.requires_grad and T.is_grad_enabled() then fail("eig", "the derivative of linalg.eig is not implemented") end
  local w, V, info = K.geev(A, true)
  if first_bad(info) then eig_nonfinite("eig", info) end
  return w, V
end
function linalg.eigvals(A)
  check_la("eigvals", A, 1)
  check_square("eigvals", A)
  if A.requires_grad and T.is_grad_enabled() then fail("eigvals", "the derivative of linalg.eigvals is not implemented") end
  local w, _, info = K.geev(A, false)
  if first_bad(info) then eig_nonfinite("eigvals", info) end
  return w
end

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
local function svd_errors(fn, info)
  local i, v = first_bad(info)
  if not i then return end
  if v == -4 then fail(fn, batch_prefix(info, i) .. "The algorithm failed to converge because the input matrix contained non-finite values.") end
  fail(fn, batch_prefix(info, i) .. ("The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values (error code: %d)."):format(v))
end
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
    local info
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
-- norms, cond
---------------------------------------------------------------------------
local function sgn(x)
  if x:is_complex() then
    local a = T.abs(x)
    return T.where(a:eq(0), T.zeros({}, { dtype = x.dtype }), x / a:to(x.dtype))
  end
  return T.sign(x)
end

local function all_dims(nd) local r = {} for i = 1, nd do r[i] = i end return r end
local function keep_shape(shape, dims)
  local r = copy(shape)
  for _, d in ipairs(dims) do r[d] = 1 end
  return r
end

local function vnorm_forward(x, ord, dims, keepdim)
  local a = T.abs(x)
  if ord == 2 then return T.sqrt(T.sum(a * a, dims, keepdim))
  elseif ord == huge then return T.amax(a, dims, keepdim)
  elseif ord == -huge then return T.amin(a, dims, keepdim)
  elseif ord == 0 then return T.sum(a:ne(0):to(a.dtype), dims, keepdim)
  elseif ord == 1 then return T.sum(a, dims, keepdim)
  end
  return T.pow(T.sum(T.pow(a, ord), dims, keepdim), 1 / ord)
end

local vnorm_core = autograd.Function {
  name = "LinalgVectorNorm",
  forward = function(ctx, x, ord, dims, keepdim)
    local r = vnorm_forward(x, ord, dims, keepdim)
    ctx.ord, ctx.dims, ctx.keepdim = ord, dims, keepdim
    ctx:save_for_backward(x, r)
    return r
  end,
  backward = function(ctx, g)
    local x, norm = unpack(ctx.saved_tensors)
    local p, dims = ctx.ord, ctx.dims
    if not ctx.keepdim then
      local ks = keep_shape(x.shape, dims)
      g, norm = g:reshape(ks), norm:reshape(ks)
    end
    local zero = T.zeros({}, { dtype = norm.dtype })
    local r
    if p == 0 then return T.zeros_like(x)
    elseif p == 1 then r = sgn(x) * g:to(x.dtype)
    elseif p == 2 then r = g:to(x.dtype) * (x / norm:to(x.dtype))
      r = T.where(norm:eq(0), T.zeros({}, { dtype = x.dtype }), r)
    elseif p == huge or p == -huge then
      local ax = T.abs(x)
      local mask = ax:eq(norm):logical_or(ax:isnan()):to(norm.dtype)
      r = sgn(x) * ((g / T.sum(mask, dims, true)) * mask):to(x.dtype)
    elseif p < 1 then
      local ax = T.abs(x)
      local sc = T.where(x:eq(0), zero, T.pow(ax, p - 1))
      r = sgn(x) * (sc * g * T.pow(norm, 1 - p)):to(x.dtype)
    elseif p < 2 then
      local sv = T.where(norm:eq(0), zero, g / T.pow(norm, p - 1))
      r = sgn(x) * (T.pow(T.abs(x), p - 1) * sv):to(x.dtype)
    else
      local sv = T.where(norm:eq(0), zero, g / T.pow(norm, p - 1))
      r = x * (T.pow(T.abs(x), p - 2) * sv):to(x.dtype)
    end
    return r
  end,
}

local function vector_norm(fn, x, ord, dim, keepdim, dtype)
  check_tensor(fn, x, 1)
  if not (x:is_floating_point() or x:is_complex()) then
    fail(fn, "Expected a floating point or complex tensor as input. Got " .. tname(x.dtype))
  end
  if ord ~= nil and type(ord) ~= "number" then fail(fn, "ord must be a number, got " .. tostring(ord)) end
  ord = ord or 2
  if dtype then x = x:to(dtype) end
  local nd = x:dim()
  local was0 = nd == 0
  if was0 then x = x:reshape({ 1 }) nd = 1 end
  local dims = opt_dims(fn, dim, nd) or all_dims(nd)
  if #dims == 0 then dims = all_dims(nd) end
  if ord < 0 or ord == huge then
    for _, d in ipairs(dims) do
      if x.shape[d] == 0 then
        fail(fn, ("Expected reduction dim %d to have non-zero size."):format(d))
      end
    end
  end
  local r = vnorm_core(x, ord, dims, keepdim and true or false)
  if was0 then r = r:reshape({}) end
  return r
end
function linalg.vector_norm(x, ...)
  local pos, o = opts_of(...)
  ck("vector_norm", o, { "ord", "dim", "keepdim", "dtype", "out" })
  local ord = o.ord
  if ord == nil then ord = pos[1] end
  local dim = o.dim
  if dim == nil then dim = pos[2] end
  local keepdim = o.keepdim
  if keepdim == nil then keepdim = pos[3] end
  return vector_norm("vector_norm", x, ord, dim, keepdim, o.dtype)
end

local function matrix_norm(fn, A, ord, dim, keepdim)
  check_tensor(fn, A, 1)
  if not (A:is_floating_point() or A:is_complex()) then
    fail(fn, "Expected a floating point or complex tensor as input. Got " .. tname(A.dtype))
  end
  check_matrix(fn, A)
  ord = ord == nil and "fro" or ord
  local nd = A:dim()
  local dims = opt_dims(fn, dim or { -2, -1 }, nd)
  if #dims ~= 2 then fail(fn, "dim must be a 2-tuple. Got " .. #dims .. " dims") end
  local d1, d2 = dims[1], dims[2]
  if ord == "fro" then return vector_norm(fn, A, 2, dims, keepdim) end
  local function restore(r)   -- r reduced over d1, d2 without keepdim
    if keepdim then
      local lo, hi = math.min(d1, d2), math.max(d1, d2)
      r = r:unsqueeze(lo):unsqueeze(hi)
    end
    return r
  end
  if ord == "nuc" or ord == 2 or ord == -2 then
    check_la(fn, A, 1)
    local M = A:movedim({ d1, d2 }, { nd - 1, nd })
    local S = linalg.svdvals(M)
    local r
    if ord == "nuc" then r = T.sum(S, -1)
    elseif ord == 2 then r = T.amax(S, -1) else r = T.amin(S, -1) end
    return restore(r)
  end
  if ord == 1 or ord == -1 or ord == huge or ord == -huge then
    local sum_d, red_d = d1, d2          -- 1: max over columns of the column sums
    if ord == huge or ord == -huge then sum_d, red_d = d2, d1 end
    local s = T.sum(T.abs(A), sum_d, true)
    local r = (ord > 0) and T.amax(s, red_d, true) or T.amin(s, red_d, true)
    if not keepdim then r = r:squeeze(math.max(d1, d2)):squeeze(math.min(d1, d2)) end
    return r
  end
  fail(fn, "Order " .. tostring(ord) .. " not supported.")
end
function linalg.matrix_norm(A, ...)
  local pos, o = opts_of(...)
  ck("matrix_norm", o, { "ord", "dim", "keepdim", "dtype", "out" })
  local ord = o.ord
  if ord == nil then ord = pos[1] end
  return matrix_norm("matrix_norm", A, ord, o.dim, o.keepdim)
end

function linalg.norm(A, ...)
  local fn = "norm"
  local pos, o = opts_of(...)
  ck(fn, o, { "ord", "dim", "keepdim", "dtype", "out" })
  local ord = o.ord
  if ord == nil then ord = pos[1] end
  local dim = o.dim
  if dim == nil then dim = pos[2] end
  local keepdim = o.keepdim
  check_tensor(fn, A, 1)
  if not (A:is_floating_point() or A:is_complex()) then
    fail(fn, "Expected a floating point or complex tensor as input. Got " .. tname(A.dtype))
  end
  if dim ~= nil then
    local d = type(dim) == "table" and dim or { dim }
    if #d == 1 then
      if type(ord) == "string" then fail(fn, "Order " .. ord .. " not supported.") end
      return vector_norm(fn, A, ord, d, keepdim)
    end
    if #d == 2 then return matrix_norm(fn, A, ord, d, keepdim) end
    fail(fn, "If dim is specified, it must be of length 1 or 2. Got " .. #d)
  end
  if ord ~= nil then
    local nd = A:dim()
    if nd ~= 1 and nd ~= 2 then
      fail(fn, ("If dim is not specified but ord is, the input must be 1D or 2D. Got %dD."):format(nd))
    end
    if nd == 1 then
      if type(ord) == "string" then fail(fn, "Order " .. ord .. " not supported.") end
      return vector_norm(fn, A, ord, nil, keepdim)
    end
    return matrix_norm(fn, A, ord, { 1, 2 }, keepdim)
  end
  return vector_norm(fn, A, 2, nil, keepdim)
end

function linalg.cond(A, ...)
  local fn = "cond"
  local pos, o = opts_of(...)
  ck(fn, o, { "p", "out" })
  local p = o.p
  if p == nil then p = pos[1] end
  check_la(fn, A, 1)
  check_matrix(fn, A)
  if p == nil or p == 2 or p == -2 then
    local S = linalg.svdvals(A)
    local k = S.shape[#S.shape]
    if k == 0 then return T.zeros(batch_of(A.shape), { dtype = real_dtype(A.dtype) }) end
    local smax, smin = S:narrow(-1, 1, 1):squeeze(-1), S:narrow(-1, k, 1):squeeze(-1)
    if p == -2 then return smin / smax end
    return smax / smin
  end
  if not (p == "fro" or p == "nuc" or p == 1 or p == -1 or p == huge or p == -huge) then
    fail(fn, "Order " .. tostring(p) .. " not supported.")
  end
  local s = A.shape
  if s[#s] ~= s[#s - 1] then
    fail(fn, ("(ord=%s): A must be batches of square matrices, but they are %d by %d matrices"):format(tostring(p), s[#s - 1], s[#s]))
  end
  local Ainv, info = linalg.inv_ex(A)
  local r = matrix_norm(fn, A, p) * matrix_norm(fn, Ainv, p)
  -- singular entries: +inf, as PyTorch
  return T.where(info:ne(0), T.full({}, huge, { dtype = r.dtype }), r)
end

---------------------------------------------------------------------------
-- matrix_power, multi_dot, cross, vecdot
---------------------------------------------------------------------------
function linalg.matrix_power(A, n)
  local fn = "matrix_power"
  check_tensor(fn, A, 1)
  if math_type(n) ~= "integer" then fail(fn, "bad argument #2 (integer expected, got " .. type(n) .. ")") end
  check_square(fn, A)
  local s = A.shape
  if n == 0 then return eye(s[#s], A.dtype):expand(s):clone() end
  if n < 0 then
    if n == math.mininteger then fail(fn, "bad argument #2 (the power " .. n .. " is out of range)") end
    check_la(fn, A, 1)
    A = linalg.inv(A)
    n = -n
  end
  if n == 1 then return A:clone() end
  -- binary powering (as PyTorch: same products, same rounding)
  local result, z
  while n > 0 do
    z = z and z:matmul(z) or A
    if n % 2 == 1 then result = result and result:matmul(z) or z end
    n = math.floor(n / 2)
  end
  return result
end

function linalg.multi_dot(list)
  local fn = "multi_dot"
  if type(list) ~= "table" or is_t(list) then fail(fn, "expected a table of tensors") end
  local n = #list
  if n < 2 then fail(fn, "expected at least 2 tensors but got " .. n) end
  local ms = {}
  for i = 1, n do
    local t = list[i]
    check_tensor(fn, t, i)
    local d = t:dim()
    if i == 1 then
      if d ~= 1 and d ~= 2 then fail(fn, ("the first tensor must be 1D or 2D but got %dD"):format(d)) end
      if d == 1 then t = t:unsqueeze(1) end
    elseif i == n then
      if d ~= 1 and d ~= 2 then fail(fn, ("the last tensor must be 1D or 2D but got %dD"):format(d)) end
      if d == 1 then t = t:unsqueeze(-1) end
    elseif d ~= 2 then
      fail(fn, ("tensor %d must be 2D but got %dD"):format(i, d))
    end
    if t.dtype ~= list[1].dtype then
      fail(fn, ("all tensors must have be the same dtype but tensor 1 is %s and tensor %d %s"):format(tname(list[1].dtype), i, tname(t.dtype)))
    end
    ms[i] = t
  end
  for i = 1, n - 1 do
    local a, b = ms[i].shape, ms[i + 1].shape
    if a[2] ~= b[1] then
      fail(fn, ("tensors %d and %d with shapes %s and %s cannot be multiplied"):format(i, i + 1, shape_str(list[i].shape), shape_str(list[i + 1].shape)))
    end
  end
  -- the cheapest parenthesisation (matrix-chain order, as PyTorch)
  local p = { ms[1].shape[1] }
  for i = 1, n do p[i + 1] = ms[i].shape[2] end
  local cost, split = {}, {}
  for i = 1, n do cost[i] = { [i] = 0 } split[i] = {} end
  for len = 2, n do
    for i = 1, n - len + 1 do
      local j = i + len - 1
      cost[i][j] = math.huge
      for kk = i, j - 1 do
        local c = cost[i][kk] + cost[kk + 1][j] + p[i] * p[kk + 1] * p[j + 1]
        if c < cost[i][j] then cost[i][j], split[i][j] = c, kk end
      end
    end
  end
  local function chain(i, j)
    if i == j then return ms[i] end
    local kk = split[i][j]
    return chain(i, kk):matmul(chain(kk + 1, j))
  end
  local r = chain(1, n)
  if list[1]:dim() == 1 then r = r:squeeze(1) end
  if list[n]:dim() == 1 then r = r:squeeze(-1) end
  return r
end

function linalg.cross(a, b, o)
  local fn = "cross"
  check_tensor(fn, a, 1)
  check_tensor(fn, b, 2)
  ck(fn, o, { "dim", "out" })
  local dim = (type(o) == "table" and o.dim) or -1
  if a.dtype ~= b.dtype then
    fail(fn, ("expected a and b to have the same dtype, but got %s and %s"):format(tname(a.dtype), tname(b.dtype)))
  end
  local shape = broadcast(a.shape, b.shape)
  if not shape then
    fail(fn, ("the shapes %s and %s cannot be broadcast"):format(shape_str(a.shape), shape_str(b.shape)))
  end
  local nd = #shape
  local d = opt_dims(fn, dim, nd)[1]
  if (a.shape[d - nd + a:dim()] or 1) ~= 3 or (b.shape[d - nd + b:dim()] or 1) ~= 3 then
    fail(fn, ("inputs dimension %d must have length 3. Got %d and %d"):format(dim, a.shape[d - nd + a:dim()] or 1, b.shape[d - nd + b:dim()] or 1))
  end
  a, b = a:expand(shape), b:expand(shape)
  local function c(t, i) return t:narrow(d, i, 1) end
  local x = c(a, 2) * c(b, 3) - c(a, 3) * c(b, 2)
  local y = c(a, 3) * c(b, 1) - c(a, 1) * c(b, 3)
  local z = c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1)
  return T.cat({ x, y, z }, d)
end

function linalg.vecdot(x, y, o)
  local fn = "vecdot"
  check_tensor(fn, x, 1)
  check_tensor(fn, y, 2)
  ck(fn, o, { "dim", "out" })
  local dim = (type(o) == "table" and o.dim) or -1
  if x.dtype ~= y.dtype then
    fail(fn, ("Expected x and y to have the same dtype, but found x of type %s and y of type %s instead."):format(tname(x.dtype), tname(y.dtype)))
  end
  local nd = math.max(x:dim(), y:dim())
  local d = opt_dims(fn, dim, nd)[1] - nd - 1       -- from the end, negative
  return T.sum(conj(x) * y, d)
end

---------------------------------------------------------------------------
-- matrix_exp, tensorinv, tensorsolve, aliases
---------------------------------------------------------------------------
-- exp(A) by scaling and squaring: Taylor to degree 18 on A / 2^s with
-- ||A / 2^s||_1 <= 1/2 (truncation below 1e-20), then s squarings; built from
-- matmul, so it is differentiable and batched.
function linalg.matrix_exp(A)
  local fn = "matrix_exp"
  check_la(fn, A, 1)
  check_square(fn, A)
  local n = A.shape[#A.shape]
  if A:numel() == 0 then return A:clone() end
  local norm = T.no_grad(function() return T.amax(T.sum(T.abs(A), -2)):item() end)
  if norm ~= norm or norm == huge then return A + (norm * 0) end   -- NaN/inf propagate
  local s = 0
  -- log2(norm / 0.5) written so it cannot overflow (norm > DBL_MAX / 2), and
  -- A * 2^-s rather than A / 2^s: 2^s is inf in float32 once s > 127 (and in
  -- Lua once s > 1023), while 2^-s stays exact down to s = 149 / 1074
  if norm > 0.5 then s = math.ceil(math.log(norm, 2) + 1) end
  local X = s > 0 and A * (2 ^ -s) or A
  local I = eye(n, A.dtype)
  -- Horner: I + X (I + X/2 (I + X/3 (...)))
  local R = I + X / 18
  for k = 17, 1, -1 do R = I + X:matmul(R) / k end
  for _ = 1, s do R = R:matmul(R) end
  return R
end

function linalg.tensorinv(A, o)
  local fn = "tensorinv"
  ck(fn, o, { "ind", "out" })
  check_la(fn, A, 1)
  local ind = (type(o) == "table" and o.ind) or (math_type(o) == "integer" and o) or 2
  if ind <= 0 then fail(fn, "Expected a strictly positive integer for 'ind', but got " .. tostring(ind)) end
  local s = A.shape
  local outer, inner = {}, {}
  for i = 1, #s do if i <= ind then outer[#outer + 1] = s[i] else inner[#inner + 1] = s[i] end end
  local po, pi = prod(outer), prod(inner)
  if po ~= pi then
    fail(fn, ("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got %d != %d"):format(pi, po))
  end
  return linalg.inv(A:reshape({ po, pi })):reshape(cat_shape(inner, outer))
end

function linalg.tensorsolve(A, B, o)
  local fn = "tensorsolve"
  check_la(fn, A, 1)
  check_tensor(fn, B, 2)
  ck(fn, o, { "dims", "out" })
  local dims = type(o) == "table" and o.dims or nil
  if dims then
    local d = opt_dims(fn, dims, A:dim())
    local to = {}
    for i = 1, #d do to[i] = A:dim() - #d + i end
    A = A:movedim(d, to)
  end
  local s = A.shape
  local rest = {}
  for i = B:dim() + 1, #s do rest[#rest + 1] = s[i] end
  local nb, nr = B:numel(), prod(rest)
  if prod(s) ~= nb * nr or nb ~= nr then
    fail(fn, "Expected self to satisfy the requirement prod(result.shape) == prod(self.shape[other.ndim:]), but got shapes " ..
      shape_str(s) .. " and " .. shape_str(B.shape))
  end
  return linalg.solve(A:reshape({ nb, nr }), B:reshape({ nb })):reshape(rest)
end

linalg.matmul = T.matmul
function linalg.diagonal(A, o)
  ck("diagonal", o, { "offset", "dim1", "dim2" })
  o = type(o) == "table" and o or {}
  if not T.diagonal then fail("diagonal", "needs T.diagonal") end
  return T.diagonal(A, o.offset or 0, o.dim1 or -2, o.dim2 or -1)
end

-- torch.cholesky_solve(B, L [, upper]) / torch.cholesky_inverse(L [, upper]):
-- A = L L^H (or U^H U) given its factor; two triangular solves, differentiable
local function chol_upper(fn, u)
  if type(u) == "table" then u = u.upper end
  if u ~= nil and type(u) ~= "boolean" then fail(fn, "upper must be a boolean") end
  return u == true
end
local function cholesky_solve(B, F, upper)
  local fn = "cholesky_solve"
  check_la(fn, B, 1)
  check_la(fn, F, 2)
  upper = chol_upper(fn, upper)
  check_square(fn, F, "L")
  check_matrix(fn, B, "B")
  same_dtype(fn, B, F, "B", "L")
  -- A X = B with A = L L^H: L Y = B, then L^H X = Y
  local Lf = upper and mH(F) or F
  local Y = linalg.solve_triangular(Lf, B, { upper = false })
  return linalg.solve_triangular(mH(Lf), Y, { upper = true })
end
local function cholesky_inverse(F, upper)
  local fn = "cholesky_inverse"
  check_la(fn, F, 1)
  check_square(fn, F, "L")
  local n = F.shape[#F.shape]
  return cholesky_solve(eye(n, F.dtype):expand(F.shape), F, chol_upper(fn, upper))
end

-- A non-nil argument past a function's parameters is a slip that PyTorch
-- refuses ("takes N positional arguments"), never dropped (issue 11): each
-- T.linalg function with fixed parameters checks the count (nparams comes
-- from debug.getinfo on Lua 5.2+; 5.1/LuaJIT skip the check; vararg
-- functions split their options themselves).
local function checked(name, f, qualified)
  local info = debug.getinfo(f, "u")
  local np = info and not info.isvararg and info.nparams
  if not np then return f end
  return function(...)
    local n = select("#", ...)
    if n > np then
      for i = np + 1, n do
        local v = select(i, ...)
        if v ~= nil then
          error(("%s: bad argument #%d (unexpected extra argument (got %s))"):format(qualified or "ltensor.linalg." .. name,
            i, is_t(v) and "ltensor.Tensor" or type(v)), 0)
        end
      end
    end
    return f(...)
  end
end
do
  local names = {}
  for name, f in pairs(linalg) do
    if type(f) == "function" and type(name) == "string" and not name:match("^_") then names[#names + 1] = name end
  end
  for _, name in ipairs(names) do linalg[name] = checked(name, linalg[name]) end
end

-- PyTorch's older torch.* names and tensor methods for the same operations
local function logdet(A)
  local sign, la = linalg.slogdet(A)
  if A:is_complex() then return T.log(sign) + la:to(A.dtype) end
  return T.where(sign:lt(0), T.full({}, 0 / 0, { dtype = la.dtype }), la)
end
local aliases = {
  det = linalg.det, slogdet = linalg.slogdet, logdet = logdet, inverse = linalg.inv,
  matrix_power = linalg.matrix_power, matrix_exp = linalg.matrix_exp,
  cholesky_solve = cholesky_solve, cholesky_inverse = cholesky_inverse, lu_unpack = T.lu_unpack,
  geqrf = T.geqrf, orgqr = linalg.householder_product,
  pinverse = function(A, rcond) return linalg.pinv(A, { rtol = type(rcond) == "number" and rcond or 1e-15 }) end,
}
local methods = T._methods
for name, f in pairs(aliases) do
  f = checked(name, f, "ltensor." .. name)   -- an extra argument raises, as linalg's own names do
  if T[name] == nil then T[name] = f end
  if methods[name] == nil then methods[name] = f end
end

return linalg
