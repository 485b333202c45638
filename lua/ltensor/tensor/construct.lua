-- ltensor.tensor.construct: tensors built from others: polar, tril/triu
-- indices, diagflat, vander, atleast_nd, ravel, take, argwhere, isin,
-- cartesian_prod, combinations.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local unpack, select, type = table.unpack, select, type
local is_t, fail, torch_dtype_name, is_opts, check_t = C.is_t, C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local opts_at, ck, opts_arg = C.opts_at, C.ck, C.opts_arg
local check_int = C.check_int
local named, def, is_float, is_complex = C.named, C.def, C.is_float, C.is_complex
local shape_str = C.shape_str
local check_operand, as_tensor, two_optional = C.check_operand, C.as_tensor, C.two_optional
---------------------------------------------------------------------------
-- Construction
---------------------------------------------------------------------------
function T.polar(abs, angle)
  check_t("polar", 1, abs)
  check_t("polar", 2, angle)
  if abs.dtype ~= angle.dtype or not is_float(abs) then
    fail("polar", ("Expected both inputs to be Float or Double tensors but got %s and %s"):format(
      tostring(abs.dtype), tostring(angle.dtype)))
  end
  return T.complex(abs * T.cos(angle), abs * T.sin(angle))
end
T.polar = named("polar", T.polar)   -- (abs, angle): a third argument is a slip

local function tri_indices(fname, lower)
  return function(rows, cols, offset, opts)
    if is_opts(offset) then opts, offset = offset, nil end
    offset = offset or 0
    check_int(fname, "row", rows)
    check_int(fname, "col", cols)
    check_int(fname, "offset", offset)
    if rows < 0 then fail(fname, ("row must be non-negative, got%d"):format(rows)) end
    if cols < 0 then fail(fname, ("col must be non-negative, got%d"):format(cols)) end
    opts = opts_arg(fname, opts, { "dtype" })
    local dt = opts and opts.dtype or T.int64
    local m = T.ones(rows, cols, { dtype = T.bool })
    m = lower and T.tril(m, offset) or T.triu(m, offset)
    local nz = T.nonzero(m)
    return nz:t():contiguous():to(dt)
  end
end
T.tril_indices = named("tril_indices", tri_indices("tril_indices", true))
T.triu_indices = named("triu_indices", tri_indices("triu_indices", false))

---------------------------------------------------------------------------
-- Construction and shape
---------------------------------------------------------------------------
def("diagflat", function(t, offset)
  check_t("diagflat", 1, t)
  if offset ~= nil then check_int("diagflat", "offset", offset) end
  return T.diag(t:reshape(-1), offset or 0)
end)

-- columns x^(N-1) ... x^0 (x^0 ... x^(N-1) with increasing), in x's dtype
-- promoted with int64; a cumulative product, so differentiable
function T.vander(x, N, increasing, ...)
  check_t("vander", 1, x)
  N, increasing = two_optional("vander", { "N", "increasing" }, N, increasing, ...)
  if x:dim() ~= 1 then fail("vander", "x must be a one-dimensional tensor.") end
  local len = x:size(1)
  if N == nil then N = len end
  check_int("vander", "N", N)
  if N < 0 then fail("vander", "N must be non-negative.") end
  local dt = T.promote_types(x.dtype, T.int64)
  local r = T.ones({ len, 1 }, { dtype = dt })
  if N == 0 then return T.empty({ len, 0 }, { dtype = dt }) end
  if N > 1 then
    r = T.cat({ r, T.cumprod(x:to(dt):unsqueeze(2):expand(len, N - 1), 2) }, 2)
  end
  if increasing then return r end
  return T.flip(r, { 2 })
end
T.vander = named("vander", T.vander)

-- atleast_1d/2d/3d: one tensor -> one, several -> several values, a list -> a list
local function atleast(fname, one)
  return function(...)
    local n = select("#", ...)
    local first = ...
    if n == 1 and type(first) == "table" and not is_t(first) then
      local out = {}
      for i, t in ipairs(first) do check_t(fname, i, t) out[i] = one(t) end
      return out
    end
    if n == 0 then fail(fname, "bad argument #1 (tensor expected, got no value)") end
    local out = {}
    for i = 1, n do
      local t = select(i, ...)
      check_t(fname, i, t)
      out[i] = one(t)
    end
    return unpack(out, 1, n)
  end
end
T.atleast_1d = named("atleast_1d", atleast("atleast_1d", function(t)
  if t:dim() == 0 then return t:reshape({ 1 }) end
  return t
end))
T.atleast_2d = named("atleast_2d", atleast("atleast_2d", function(t)
  if t:dim() == 0 then return t:reshape({ 1, 1 }) end
  if t:dim() == 1 then return t:unsqueeze(1) end
  return t
end))
T.atleast_3d = named("atleast_3d", atleast("atleast_3d", function(t)
  local d = t:dim()
  if d == 0 then return t:reshape({ 1, 1, 1 }) end
  if d == 1 then return t:unsqueeze(1):unsqueeze(3) end
  if d == 2 then return t:unsqueeze(3) end
  return t
end))

def("ravel", function(t) check_t("ravel", 1, t) return t:reshape({ -1 }) end)

def("msort", function(t)
  check_t("msort", 1, t)
  return (T.sort(t, 1))
end)

-- elements of t (as if flattened) at 1-based int64 positions, negative
-- from the end; the result has index's shape
def("take", function(t, index)
  check_t("take", 1, t) check_t("take", 2, index)
  if index.dtype ~= T.int64 then
    fail("take", ("take(): Expected a long tensor for index, but got %s"):format(torch_dtype_name(index.dtype)))
  end
  local n = t:numel()
  local fi = index:reshape({ -1 })
  if fi:numel() > 0 then
    local lo, hi = T.min(fi):item(), T.max(fi):item()
    local bad = (lo < -n or lo == 0) and lo or ((hi > n or hi == 0) and hi or nil)
    if bad == nil and T.any(T.eq(fi, 0)):item() then bad = 0 end
    if bad ~= nil then
      fail("take", ("out of range: tried to access index %s on a tensor of %d elements."):format(compat.int_str(bad), n))
    end
    fi = T.where(T.lt(fi, 0), fi + (n + 1), fi)
  end
  return t:reshape({ -1 }):index_select(1, fi):reshape(index.shape)
end)

def("argwhere", function(t) check_t("argwhere", 1, t) return T.nonzero(t) end)

-- whether each element of `elements` is in `test_elements`: a binary
-- search of each element in the sorted test elements (O((n + m) log m))
function T.isin(elements, test_elements, ...)
  check_operand("isin", 1, elements) check_operand("isin", 2, test_elements)
  if not is_t(elements) and not is_t(test_elements) then
    fail("isin", "bad argument #1 (tensor expected, got number)")
  end
  local o = ck("isin", opts_at("isin", 3, ...), { "assume_unique", "invert" })
  local shape = is_t(elements) and elements.shape or {}
  local e0, s0 = as_tensor(elements, test_elements), as_tensor(test_elements, elements)
  local dt = T.promote_types(e0.dtype, s0.dtype)
  for _, x in ipairs({ e0, s0 }) do
    if is_complex(x) or x.dtype == T.bool then
      fail("isin", ("Unsupported input type encountered for isin(): %s"):format(torch_dtype_name(x.dtype)))
    end
  end
  local e, s = e0:detach():to(dt):reshape({ -1 }), s0:detach():to(dt):reshape({ -1 })
  local found
  if s:numel() == 0 or e:numel() == 0 then
    found = T.zeros(e:numel(), { dtype = T.bool })
  else
    local sorted = (T.sort(s))
    local pos = T.clamp(T.searchsorted(sorted, e), 1, s:numel())
    found = T.eq(sorted:index_select(1, pos), e)
  end
  if o.invert then found = T.logical_not(found) end
  return found:reshape(shape)
end
T.isin = named("isin", T.isin)

---------------------------------------------------------------------------
-- Combinatorics
---------------------------------------------------------------------------
local function check_1d(fname, t)
  if t:dim() ~= 1 then fail(fname, ("Expect a 1D vector, but got shape %s"):format(shape_str(t.shape))) end
end
function T.cartesian_prod(...)
  local list, n = C.tensor_args("cartesian_prod", function(t) check_1d("cartesian_prod", t) end, ...)
  if n == 0 then fail("cartesian_prod", "bad argument #1 (tensor expected, got no value)") end
  if n == 1 then return list[1] end
  local args = { unpack(list, 1, n) }
  args[n + 1] = { indexing = "ij" }
  local grids = { T.meshgrid(unpack(args, 1, n + 1)) }
  for i = 1, n do grids[i] = grids[i]:reshape({ -1 }) end
  return T.stack(grids, 2)
end
T.cartesian_prod = named("cartesian_prod", T.cartesian_prod)

local MAX_COMBINATIONS = 268435456   -- 2^28 elements (2 GB of int64 positions)
-- the r-element combinations of a 1-D tensor's elements, in
-- itertools.combinations(_with_replacement) order, as a (C, r) gather
function T.combinations(t, r, with_replacement, ...)
  check_t("combinations", 1, t)
  r, with_replacement = two_optional("combinations", { "r", "with_replacement" }, r, with_replacement, ...)
  r = r == nil and 2 or r
  check_int("combinations", "r", r)
  check_1d("combinations", t)
  if r < 0 then fail("combinations", ("Expect a non-negative number, but got %d"):format(r)) end
  if r == 0 then return T.empty({ 0 }, { dtype = t.dtype }) end
  local n = t:size(1)
  -- the count, C(n, r) or C(n + r - 1, r), before any is built
  local m = with_replacement and n + r - 1 or n
  local count = 1
  if r > m then count = 0 end
  for i = 1, (r <= m and r or 0) do
    count = count * (m - r + i) / i
    if count * r > MAX_COMBINATIONS then
      fail("combinations", ("too many combinations (more than %d elements)"):format(MAX_COMBINATIONS))
    end
  end
  if count == 0 then return T.empty({ 0, r }, { dtype = t.dtype }) end
  count = math.floor(count + 0.5)   -- exact: below 2^28, each step's quotient is an integer
  -- the rows' positions from one C walk (a Lua generator took 9 s for
  -- C(5000, 2)); the gather records the gradient
  local it = T._combinations_index(n, r, with_replacement and true or false, count)
  return t:gather(1, it:view({ -1 })):view({ count, r })
end
T.combinations = named("combinations", T.combinations)
return true
