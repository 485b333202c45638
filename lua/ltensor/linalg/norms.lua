-- ltensor.linalg.norms: vector_norm, matrix_norm, norm, cond.
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local L = require "ltensor.linalg.common"
local math, table, linalg = L.math, L.table, L.linalg
local type, unpack, huge = L.type, L.unpack, L.huge
local fail = L.fail
local opts_of, ck = L.opts_of, L.ck
local check_la, check_float = L.check_la, L.check_float
local check_matrix, copy = L.check_matrix, L.copy
local batch_of = L.batch_of
local real_dtype = L.real_dtype
local opt_dims = L.opt_dims
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
  check_float(fn, x, 1)
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
-- the norms' options {ord, dim, keepdim, dtype, out}: ord, dim and keepdim
-- also the first npos positional arguments (a key in the table wins)
local function norm_args(fn, npos, ...)
  local pos, o = opts_of(...)
  ck(fn, o, { "ord", "dim", "keepdim", "dtype", "out" })
  local v = { o.ord, o.dim, o.keepdim }
  for i = 1, npos do
    if v[i] == nil then v[i] = pos[i] end
  end
  return o, v[1], v[2], v[3]
end
function linalg.vector_norm(x, ...)
  local o, ord, dim, keepdim = norm_args("vector_norm", 3, ...)
  return vector_norm("vector_norm", x, ord, dim, keepdim, o.dtype)
end

local function matrix_norm(fn, A, ord, dim, keepdim)
  check_float(fn, A, 1)
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
  local _, ord, dim, keepdim = norm_args("matrix_norm", 1, ...)
  return matrix_norm("matrix_norm", A, ord, dim, keepdim)
end

function linalg.norm(A, ...)
  local fn = "norm"
  local _, ord, dim, keepdim = norm_args(fn, 2, ...)
  check_float(fn, A, 1)
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
return true
