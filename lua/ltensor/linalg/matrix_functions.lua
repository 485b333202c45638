-- ltensor.linalg.matrix_functions: matrix_power, multi_dot, cross, vecdot,
-- matrix_exp, tensorinv, tensorsolve, and the torch.* aliases of linalg
-- functions (det, inverse, pinverse ...), installed after the other files.
require "ltensor.linalg.solve"
require "ltensor.linalg.decompositions"
require "ltensor.linalg.norms"
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local L = require "ltensor.linalg.common"
local math, table, linalg = L.math, L.table, L.linalg
local type, select, math_type, huge = L.type, L.select, L.math_type, L.huge
local is_t, fail, tname = L.is_t, L.fail, L.tname
local util = require "ltensor.util"
local ck, check_tensor = L.ck, L.check_tensor
local check_la, check_la_square = L.check_la, L.check_la_square
local check_matrix, check_square, same_dtype, shape_str = L.check_matrix, L.check_square, L.same_dtype, L.shape_str
local cat_shape, prod, broadcast = L.cat_shape, L.prod, L.broadcast
local mH = L.mH
local conj, eye, diagonal = L.conj, L.eye, L.diagonal
local opt_dims = L.opt_dims
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

-- cross and vecdot's arguments: two tensors, then {dim = -1, out}; the dim
local function pair_dim(fn, a, b, o)
  check_tensor(fn, a, 1)
  check_tensor(fn, b, 2)
  ck(fn, o, { "dim", "out" })
  return (type(o) == "table" and o.dim) or -1
end

function linalg.cross(a, b, o)
  local fn = "cross"
  local dim = pair_dim(fn, a, b, o)
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
  local dim = pair_dim(fn, x, y, o)
  same_dtype(fn, x, y, "x", "y")
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
  check_la_square(fn, A)
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
  if math_type(ind) ~= "integer" or ind <= 0 then   -- (a string compared with 0 raised in Lua)
    fail(fn, "Expected a strictly positive integer for 'ind', but got " .. (type(ind) == "string" and ("'" .. ind .. "'") or tostring(ind)))
  end
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
  check_la_square(fn, F, "L")
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
-- out= (a trailing options table's): checked before the work (a freed
-- tensor refused by name) and written after (util.into_out); it was
-- accepted by the option checks and ignored
local function with_out(name, f)
  local fname = "linalg." .. name
  return function(...)
    local n = select("#", ...)
    local last = n > 0 and select(n, ...) or nil
    local out = type(last) == "table" and getmetatable(last) == nil and rawget(last, "out") or nil
    if out == nil then return f(...) end
    util.check_out(fname, out, (is_t(out) or type(out) ~= "table") and 1 or #out)
    return util.into_out(fname, out, f(...))
  end
end
do
  local names = {}
  for name, f in pairs(linalg) do
    if type(f) == "function" and type(name) == "string" and not name:match("^_") then names[#names + 1] = name end
  end
  for _, name in ipairs(names) do linalg[name] = with_out(name, checked(name, linalg[name])) end
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
return true
