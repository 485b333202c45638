-- ltensor.linalg.common: the table T.linalg (L.linalg), the LAPACK kernels
-- (L.K) and the argument and shape helpers the linalg files share.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local linalg = T.linalg or {}   -- another module may have started the table
T.linalg = linalg

local TMT = T._metatable
local getmetatable, type, select, pack, unpack = getmetatable, type, select, table.pack, table.unpack
local math_type, huge = math.type, math.huge
-- The LAPACK kernels (T._lapack_*), which validate their arguments too:
-- LAPACK must never see a bad one.  Their errors already name the public
-- function and carry no position (src/binding/l_args.c), so they are called
-- directly.
local K = {}
for _, name in ipairs { "getrf", "getrs", "perm", "geqrf", "orgqr", "solve", "potrf", "qr", "syevd", "geev", "gesdd", "gels", "trsm" } do
  K[name] = T["_lapack_" .. name]
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
  if not is_t(x) then
    fail(fn, ("bad argument #%d (tensor expected, got %s%s)"):format(pos or 1, type(x),
      (pos or 1) == 1 and util.tensor_method_hint(fn) or ""))
  end
end
-- a floating point or complex tensor
local function check_float(fn, x, pos)
  check_tensor(fn, x, pos)
  if not (x:is_floating_point() or x:is_complex()) then
    fail(fn, "Expected a floating point or complex tensor as input. Got " .. tname(x.dtype))
  end
end
-- float32/float64/complex64/complex128, as LAPACK computes
local function check_la(fn, x, pos)
  check_float(fn, x, pos)
  local n = dname(x.dtype)
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
-- a LAPACK dtype (argument 1) and batches of square matrices
local function check_la_square(fn, x, what)
  check_la(fn, x, 1)
  check_square(fn, x, what)
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

local function eig_errors(fn, info, what)
  local i, v = first_bad(info)
  if not i then return end
  if v == -4 then fail(fn, batch_prefix(info, i) .. "The algorithm failed to converge because the input matrix contained non-finite values.") end
  fail(fn, batch_prefix(info, i) .. ("The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated %s (error code: %d)."):format(what, v))
end
local function svd_errors(fn, info) return eig_errors(fn, info, "singular values") end
local L = {}
L.math = math
L.table = table
L.rawlen = rawlen
L.linalg = linalg
L.TMT = TMT
L.getmetatable = getmetatable
L.type = type
L.select = select
L.pack = pack
L.unpack = unpack
L.math_type = math_type
L.huge = huge
L.K = K
L.is_t = is_t
L.fail = fail
L.dname = dname
L.tname = tname
L.EPS = EPS
L.opts_of = opts_of
L.ck = ck
L.opt_arg = opt_arg
L.check_tensor = check_tensor
L.check_float = check_float
L.check_la = check_la
L.check_matrix = check_matrix
L.check_square = check_square
L.check_la_square = check_la_square
L.same_dtype = same_dtype
L.shape_str = shape_str
L.copy = copy
L.batch_of = batch_of
L.cat_shape = cat_shape
L.prod = prod
L.broadcast = broadcast
L.expand_batch = expand_batch
L.mT = mT
L.mH = mH
L.conj = conj
L.real_dtype = real_dtype
L.eye = eye
L.diagonal = diagonal
L.diag_embed = diag_embed
L.tri = tri
L.tril = tril
L.triu = triu
L.flat = flat
L.first_bad = first_bad
L.batch_prefix = batch_prefix
L.opt_dims = opt_dims
L.eig_errors = eig_errors
L.svd_errors = svd_errors
return L
