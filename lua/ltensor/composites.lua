-- ltensor.composites: PyTorch 1.13 functions composed from existing ops
-- (addcmul ... i0).  Each is built from differentiable tensor ops, so
-- autograd covers it without a rule of its own (two are Functions: i0,
-- whose derivative is i1, and heaviside, whose backward raises as
-- PyTorch's); the element loops all run in C inside those ops.
-- Dims, positions and split points are 1-based.
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local S = require "ltensor.structural"
local math, table = compat.math, compat.table
local unpack = table.unpack
local autograd = T.autograd
local M = T._methods

local fail, check_t, is_t, opts_at, ck, normdim, def = S.fail, S.check_t, S.is_t, S.opts_at, S.ck, S.normdim, S.def
local check_int, check_num, torch_dtype_name, shape_str, is_opts = S.check_int, S.check_num, S.torch_dtype_name, S.shape_str, S.is_opts
local named = S.named

local function is_float(t) return t:is_floating_point() end
local function is_complex(t) return t:is_complex() end
local function is_integral(t) return not t:is_floating_point() and not t:is_complex() end
-- a tensor or a Lua number (a weak scalar) at argument #n
local function check_operand(fname, n, x)
  if not is_t(x) and type(x) ~= "number" then
    fail(fname, ("bad argument #%d (tensor or number expected, got %s)"):format(n, type(x)))
  end
end
-- a Lua number as a 0-dim tensor of the dtype it takes next to `other`
local function as_tensor(x, other)
  if is_t(x) then return x end
  return T.tensor(x, { dtype = T.result_type(other, x) })
end
-- a method that works in place: the out-of-place result written into t,
-- which must keep its shape (PyTorch's in-place broadcasting rule)
local function into(fname, t, r)
  local ts, rs = t.shape, r.shape
  local same = #ts == #rs
  for i = 1, #ts do same = same and ts[i] == rs[i] end
  if not same then
    fail(fname, ("output with shape %s doesn't match the broadcast shape %s"):format(shape_str(ts), shape_str(rs)))
  end
  return t:copy_(r)
end

-- f(t, a, b [, opts]): two optional positional arguments that PyTorch also
-- takes by keyword (names); the options table may follow any prefix of them
local function two_optional(fname, names, a, b, ...)
  local o
  if is_opts(a) then o, a, b = a, nil, nil
  elseif is_opts(b) then o, b = b, nil
  else o = opts_at(fname, 4, ...) end
  ck(fname, o, names)
  if a == nil then a = o[names[1]] end
  if b == nil then b = o[names[2]] end
  return a, b
end

---------------------------------------------------------------------------
-- Pointwise
---------------------------------------------------------------------------
-- input + value * t1 * t2 and input + value * t1 / t2, in PyTorch's order
-- of operations ((value * t1) op t2) and in the three tensors' common dtype
local function addc(fname, div)
  return function(input, t1, t2, ...)
    check_t(fname, 1, input) check_t(fname, 2, t1) check_t(fname, 3, t2)
    local o = ck(fname, opts_at(fname, 4, ...), { "value" })
    local value = o.value == nil and 1 or o.value
    check_num(fname, "value", value)
    local dt = T.result_type(input, t1, t2)
    if div then
      if is_integral(t1) and is_integral(t2) then
        fail(fname, "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")
      end
    elseif not is_float(T.zeros(0, { dtype = dt })) and not is_complex(T.zeros(0, { dtype = dt })) then
      -- PyTorch 1.13 casts a fractional value to the integer dtype
      value = value < 0 and math.ceil(value) or math.floor(value)
    end
    local a, b = t1:to(dt), t2:to(dt)
    if value ~= 1 then a = a * value end
    return input, (div and a / b or a * b)
  end
end
local addcmul_args, addcdiv_args = addc("addcmul", false), addc("addcdiv", true)
def("addcmul", function(...) local input, p = addcmul_args(...) return input + p end)
def("addcdiv", function(...) local input, p = addcdiv_args(...) return input + p end)
local addcmul_args_, addcdiv_args_ = addc("addcmul_", false), addc("addcdiv_", true)
M.addcmul_ = named("addcmul_", function(...) local input, p = addcmul_args_(...) return into("addcmul_", input, input + p) end)
M.addcdiv_ = named("addcdiv_", function(...) local input, p = addcdiv_args_(...) return into("addcdiv_", input, input + p) end)

-- 0 below zero, 1 above, `values` where input is 0 (NaN input gives 0, as
-- PyTorch's kernel).  Not differentiable: as in PyTorch the result of
-- inputs that require grad is in the graph, and backward through it raises.
local Heaviside = autograd.Function {
  name = "NotImplemented",
  forward = function(_, input, values)
    return T.where(T.eq(input, 0), values, T.gt(input, 0):to(input.dtype))
  end,
  backward = function() fail("heaviside", "derivative for aten::heaviside is not implemented") end,
}
def("heaviside", function(input, values)
  check_t("heaviside", 1, input) check_t("heaviside", 2, values)
  if is_complex(input) or is_complex(values) then fail("heaviside", "heaviside is not yet implemented for complex tensors.") end
  if input.dtype ~= values.dtype then fail("heaviside", "heaviside is not yet implemented for tensors with different dtypes.") end
  return Heaviside.apply(input, values)
end)

-- gcd by Euclid's algorithm on whole tensors: each round replaces (a, b)
-- by (b, a mod b) where b is still nonzero (at most ~92 rounds for int64)
local function int_pair(fname, a, b)
  check_operand(fname, 1, a) check_operand(fname, 2, b)
  if not is_t(a) and not is_t(b) then fail(fname, "bad argument #1 (tensor expected, got number)") end
  a, b = as_tensor(a, b), as_tensor(b, a)
  local dt = T.promote_types(a.dtype, b.dtype)
  if not is_integral(a:to(dt)) or dt == T.bool then
    fail(fname, ('"%s_cpu" not implemented for \'%s\''):format(fname:gsub("_$", ""), torch_dtype_name(dt)))
  end
  return a:to(dt), b:to(dt)
end
local function gcd_of(a, b)
  a, b = T.broadcast_tensors(T.abs(a), T.abs(b))
  while T.any(T.ne(b, 0)):item() do
    local nz = T.ne(b, 0)
    local r = T.remainder(a, T.where(nz, b, T.ones_like(b)))
    a, b = T.where(nz, b, a), T.where(nz, r, b)
  end
  return a:contiguous()
end
local function lcm_of(a, b)
  local g = gcd_of(a, b)
  local z = T.eq(g, 0)
  local q = T.div(a, T.where(z, T.ones_like(g), g), { rounding_mode = "trunc" })
  return T.where(z, T.zeros_like(g), T.abs(q * b))
end
def("gcd", function(a, b) return gcd_of(int_pair("gcd", a, b)) end)
def("lcm", function(a, b) return lcm_of(int_pair("lcm", a, b)) end)
M.gcd_ = named("gcd_", function(a, b) check_t("gcd_", 1, a) return into("gcd_", a, gcd_of(int_pair("gcd_", a, b))) end)
M.lcm_ = named("lcm_", function(a, b) check_t("lcm_", 1, a) return into("lcm_", a, lcm_of(int_pair("lcm_", a, b))) end)

-- pow in float64 (complex128 when either side is complex)
local function fp_dtype(a, b)
  if (is_t(a) and is_complex(a)) or (is_t(b) and is_complex(b)) then return T.complex128 end
  return T.float64
end
def("float_power", function(a, b)
  check_operand("float_power", 1, a) check_operand("float_power", 2, b)
  if not is_t(a) and not is_t(b) then fail("float_power", "bad argument #1 (tensor expected, got number)") end
  local dt = fp_dtype(a, b)
  if is_t(a) then a = a:to(dt) end
  if is_t(b) then b = b:to(dt) end
  return T.pow(a, b)
end)
M.float_power_ = named("float_power_", function(a, b)
  check_t("float_power_", 1, a) check_operand("float_power_", 2, b)
  local dt = fp_dtype(a, b)
  if a.dtype ~= dt then
    fail("float_power_", ("the base given to float_power_ has dtype %s but the operation's result requires dtype %s"):format(
      torch_dtype_name(a.dtype), torch_dtype_name(dt)))
  end
  if is_t(b) then b = b:to(dt) end
  return into("float_power_", a, T.pow(a, b))
end)

-- input * 2^other, as PyTorch's mul(input, pow(2.0, other)); exp2 gives
-- pow(2.0, other)'s dtype (the default float one for integers) on every
-- host, where 2.0 would be a weak int on Lua 5.1/LuaJIT
def("ldexp", function(a, b)
  check_t("ldexp", 1, a) check_t("ldexp", 2, b)
  return a * T.exp2(b)
end)
M.ldexp_ = named("ldexp_", function(a, b)
  check_t("ldexp_", 1, a) check_t("ldexp_", 2, b)
  local r = a * T.exp2(b)
  if is_float(r) and not is_float(a) and not is_complex(a) then
    fail("ldexp_", ("result type %s can't be cast to the desired output type %s"):format(torch_dtype_name(r.dtype), torch_dtype_name(a.dtype)))
  end
  return into("ldexp_", a, r)
end)

-- mantissa in [0.5, 1) with x's sign and an int32 exponent, x = m * 2^e;
-- 0, inf and NaN keep their value with exponent 0.  Found in float64 (exact
-- for every floating dtype): e from log2, then one step up or down where
-- rounding put the mantissa outside [0.5, 1); 2^e is applied in two halves
-- so that neither overflows.  The mantissa's gradient is grad / 2^e.
local function scale_down(v, e)
  local h = T.floor(e / 2)
  return v / T.exp2(h) / T.exp2(e - h)
end
def("frexp", function(x)
  check_t("frexp", 1, x)
  if not is_float(x) then fail("frexp", "torch.frexp() only supports floating-point dtypes") end
  local xd = x:to(T.float64)
  local e = T.no_grad(function()
    local a = T.abs(xd)
    local ok = T.logical_and(T.isfinite(a), T.ne(a, 0))
    local one = T.ones_like(a)
    local safe = T.where(ok, a, one)
    local ex = T.floor(T.log2(safe)) + 1
    local m = scale_down(safe, ex)
    ex = T.where(T.ge(m, 1), ex + 1, T.where(T.lt(m, 0.5), ex - 1, ex))
    return T.where(ok, ex, T.zeros_like(ex))
  end)
  return scale_down(xd, e):to(x.dtype), e:to(T.int32)
end)

def("positive", function(t)
  check_t("positive", 1, t)
  if t.dtype == T.bool then fail("positive", "The `+` operator, on a bool tensor is not supported.") end
  return t
end)

---------------------------------------------------------------------------
-- Products
---------------------------------------------------------------------------
def("inner", function(a, b)
  check_t("inner", 1, a) check_t("inner", 2, b)
  if a:dim() == 0 or b:dim() == 0 then return a * b end
  if a:size(-1) ~= b:size(-1) then
    fail("inner", ("inner() the last dimension must match on both input tensors but got shapes %s and %s"):format(
      shape_str(a.shape), shape_str(b.shape)))
  end
  return T.tensordot(a, b, { { a:dim() }, { b:dim() } })
end)

def("vdot", function(a, b)
  check_t("vdot", 1, a) check_t("vdot", 2, b)
  if a:dim() ~= 1 or b:dim() ~= 1 then
    fail("vdot", ("1D tensors expected, but got %dD and %dD tensors"):format(a:dim(), b:dim()))
  end
  if a.dtype ~= b.dtype then
    fail("vdot", ("dot : expected both vectors to have same dtype, but found %s and %s"):format(
      torch_dtype_name(a.dtype), torch_dtype_name(b.dtype)))
  end
  if a:numel() ~= b:numel() then
    fail("vdot", ("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of elements, but got %d and %d elements respectively"):format(
      a:numel(), b:numel(), a:numel(), b:numel()))
  end
  if is_complex(a) then return T.sum(T.conj(a) * b) end
  return T.dot(a, b)
end)

def("ger", function(a, b) return T.outer(a, b) end)

function T.chain_matmul(...)
  local n = select("#", ...)
  local list = {}
  for i = 1, n do
    local m = select(i, ...)
    check_t("chain_matmul", i, m)
    if m:dim() ~= 2 then
      fail("chain_matmul", ("Tensor dimension is %d, expected 2 instead."):format(m:dim()))
    end
    list[i] = m
  end
  if n == 0 then fail("chain_matmul", "chain_matmul(): Expected one or more matrices") end
  if n == 1 then return list[1]:clone() end
  return T.linalg.multi_dot(list)
end
T.chain_matmul = named("chain_matmul", T.chain_matmul)

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
-- Integration
---------------------------------------------------------------------------
-- (y [, x] [, {dx=, dim=-1}]): x a tensor of sample points, or a spacing dx
local function trap_args(fname, y, x, ...)
  check_t(fname, 1, y)
  local o
  if is_opts(x) or (type(x) == "table" and not is_t(x) and next(x) == nil) then o, x = x, nil
  else o = opts_at(fname, 3, ...) end
  ck(fname, o, { "dx", "dim" })
  if x ~= nil then check_t(fname, 2, x) end
  if x ~= nil and o.dx ~= nil then fail(fname, "x and dx cannot both be given") end
  local dim = o.dim == nil and -1 or o.dim
  if y:dim() == 0 then
    fail(fname, ("Dimension specified as %s but tensor has no dimensions"):format(tostring(dim)))
  end
  dim = normdim(fname, dim, y:dim())
  local dx = o.dx
  if dx ~= nil and type(dx) ~= "number" then
    fail(fname, "Currently, we only support dx as a real number.")
  end
  local base = fname == "trapz" and "trapezoid" or fname
  if x == nil and y.dtype == T.bool then
    fail(fname, ("%s: received a bool input for `y`, but bool is not supported"):format(base))
  end
  if x ~= nil and (y.dtype == T.bool or x.dtype == T.bool) then
    fail(fname, ("%s: received a bool input for `x` or `y`, but bool is not supported"):format(base))
  end
  if x ~= nil then
    if x:dim() == 1 then
      if x:size(1) ~= y:size(dim) then fail(fname, ("%s: There must be one `x` value for each sample point"):format(base)) end
      local s = {}
      for i = 1, y:dim() do s[i] = 1 end
      s[dim] = x:size(1)
      x = x:reshape(s)
    elseif x:dim() < y:dim() then
      local s = {}
      for i = 1, y:dim() - x:dim() do s[i] = 1 end
      for i = 1, x:dim() do s[#s + 1] = x:size(i) end
      x = x:reshape(s)
    end
  end
  return y, x, dx == nil and 1 or dx, dim
end
local function trapezoid(fname)
  return function(...)
    local y, x, dx, dim = trap_args(fname, ...)
    local n = y:size(dim)
    if n == 0 then
      local s = y.shape
      table.remove(s, dim)
      return T.zeros(s, { dtype = y.dtype })
    end
    if x == nil then
      return (T.sum(y, dim) - (y:select(dim, 1) + y:select(dim, -1)) * 0.5) * dx
    end
    local d = x:narrow(dim, 2, x:size(dim) - 1) - x:narrow(dim, 1, x:size(dim) - 1)
    return T.sum(d * (y:narrow(dim, 2, n - 1) + y:narrow(dim, 1, n - 1)), dim) / 2.0
  end
end
T.trapezoid = named("trapezoid", trapezoid("trapezoid"))
T.trapz = named("trapz", trapezoid("trapz"))
function T.cumulative_trapezoid(...)
  local y, x, dx, dim = trap_args("cumulative_trapezoid", ...)
  local n = y:size(dim)
  local m = n > 0 and n - 1 or 0
  local left, right = y:narrow(dim, 1, m), y:narrow(dim, n > 0 and 2 or 1, m)
  if x == nil then
    -- dx / 2 is a float for PyTorch; a whole one is an integer on Lua 5.1/LuaJIT
    if is_integral(y) then left, right = left:to(T.get_default_dtype()), right:to(T.get_default_dtype()) end
    return T.cumsum((dx / 2) * (left + right), dim)
  end
  local k = x:size(dim)
  local d = x:narrow(dim, 2, k - 1) - x:narrow(dim, 1, k - 1)
  return T.cumsum((left + right) * d, dim) / 2.0
end
T.cumulative_trapezoid = named("cumulative_trapezoid", T.cumulative_trapezoid)

---------------------------------------------------------------------------
-- Combinatorics
---------------------------------------------------------------------------
local function check_1d(fname, t)
  if t:dim() ~= 1 then fail(fname, ("Expect a 1D vector, but got shape %s"):format(shape_str(t.shape))) end
end
function T.cartesian_prod(...)
  local n = select("#", ...)
  local list = {}
  for i = 1, n do
    local t = select(i, ...)
    check_t("cartesian_prod", i, t)
    check_1d("cartesian_prod", t)
    list[i] = t
  end
  if n == 0 then fail("cartesian_prod", "bad argument #1 (tensor expected, got no value)") end
  if n == 1 then return list[1] end
  local args = { unpack(list, 1, n) }
  args[n + 1] = { indexing = "ij" }
  local grids = { T.meshgrid(unpack(args, 1, n + 1)) }
  for i = 1, n do grids[i] = grids[i]:reshape({ -1 }) end
  return T.stack(grids, 2)
end
T.cartesian_prod = named("cartesian_prod", T.cartesian_prod)

local MAX_COMBINATIONS = 268435456   -- 2^28 elements: the index table is built in Lua
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
  local idx, cur = {}, {}
  local function gen(pos, start)
    if pos > r then
      for i = 1, r do idx[#idx + 1] = cur[i] end
      return
    end
    for v = start, n do
      cur[pos] = v
      gen(pos + 1, with_replacement and v or v + 1)
    end
  end
  gen(1, 1)
  local it = T.tensor(idx, { dtype = T.int64 })
  return t:index_select(1, it):reshape({ #idx / r, r })
end
T.combinations = named("combinations", T.combinations)

---------------------------------------------------------------------------
-- Norms and statistics
---------------------------------------------------------------------------
-- each slice along dim whose p-norm exceeds maxnorm scaled down to it
-- (PyTorch's factor maxnorm / (norm + 1e-7))
local function renorm(fname, t, p, dim, maxnorm)
  check_t(fname, 1, t)
  check_num(fname, "p", p)
  check_int(fname, "dim", dim)
  check_num(fname, "maxnorm", maxnorm)
  if not is_float(t) and not is_complex(t) then
    fail(fname, ("linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s"):format(torch_dtype_name(t.dtype)))
  end
  if not (p > 0) then fail(fname, "renorm: non-positive-norm not supported") end
  if not (maxnorm >= 0) then fail(fname, ("renorm: expected maxnorm to be >= 0 but got %s"):format(tostring(maxnorm))) end
  if t:dim() <= 1 then fail(fname, ("renorm: input needs at least 2 dimensions, got %d dimensions"):format(t:dim())) end
  dim = normdim(fname, dim, t:dim())
  local others = {}
  for i = 1, t:dim() do if i ~= dim then others[#others + 1] = i end end
  local norm = T.linalg.vector_norm(t, p, others, true)
  local factor = T.where(T.gt(norm, maxnorm), maxnorm / (norm + 1e-7), T.ones_like(norm))
  return t * factor
end
def("renorm", function(t, p, dim, maxnorm) return renorm("renorm", t, p, dim, maxnorm) end)
M.renorm_ = named("renorm_", function(t, p, dim, maxnorm)
  local r = renorm("renorm_", t, p, dim, maxnorm)
  return t:copy_(r)
end)

-- std_mean / var_mean: T.std / T.var and the mean over the same dims
local function dims_keep(...)
  local dims, keepdim
  local a2, a3, a4 = select(2, ...)
  if type(a2) == "number" or (type(a2) == "table" and not is_t(a2) and not is_opts(a2) and #a2 > 0) then dims = a2 end
  if type(a3) == "boolean" then keepdim = a3 end
  for _, o in ipairs({ a2, a3, a4 }) do
    if is_opts(o) then
      if o.dim ~= nil then dims = o.dim end
      if o.keepdim ~= nil then keepdim = o.keepdim end
    end
  end
  return dims, keepdim
end
local function stat_mean(fname, stat)
  return function(...)
    check_t(fname, 1, (...))
    local s = stat(...)
    local dims, keepdim = dims_keep(...)
    return s, T.mean((...), dims, keepdim or false)
  end
end
T.std_mean = named("std_mean", stat_mean("std_mean", T.std))
T.var_mean = named("var_mean", stat_mean("var_mean", T.var))

---------------------------------------------------------------------------
-- Splitting and stacking
---------------------------------------------------------------------------
-- the pieces of dim d: `sections` nearly equal ones (the first n % sections
-- one longer), or pieces starting at the 1-based positions in `indices`
-- (PyTorch's split points + 1; negative from the end, clamped to the dim)
-- The pieces come back as several values, which every Lua host can return
-- up to some thousands of: more is refused rather than run out of stack.
local MAX_PIECES = 8192
local function split_pieces(fname, t, d, sections, indices)
  local n = t:size(d)
  local out = {}
  local pieces = sections or #indices + 1
  if sections and sections <= 0 then fail(fname, ("number of sections must be larger than 0, got %s"):format(compat.int_str(sections))) end
  if pieces > MAX_PIECES then
    fail(fname, ("too many pieces (%s; at most %d, returned as several values)"):format(compat.int_str(pieces), MAX_PIECES))
  end
  if sections then
    local base, extra = math.floor(n / sections), n % sections
    local start = 0
    for i = 1, sections do
      local len = base + (i <= extra and 1 or 0)
      out[i] = t:narrow(d, start + 1, len)
      start = start + len
    end
    return out
  end
  local function pos(i)   -- 1-based start position -> 0-based, clamped
    check_int(fname, "index", i)
    local p = i > 0 and i - 1 or (i < 0 and n + i or 0)
    if p < 0 then p = 0 end
    if p > n then p = n end
    return p
  end
  -- piece k runs from split point k-1 to split point k (empty when they
  -- are out of order), as PyTorch's slices
  local start = 0
  for k = 1, #indices do
    local stop = pos(indices[k])
    out[k] = t:narrow(d, start + 1, stop > start and stop - start or 0)
    start = stop
  end
  out[#indices + 1] = t:narrow(d, start + 1, n - start)
  return out
end
-- indices_or_sections as a number, a table, or an integer tensor
local function ios_of(fname, ios)
  if is_t(ios) then
    if ios.dtype ~= T.int64 then
      fail(fname, ("tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s"):format(torch_dtype_name(ios.dtype)))
    end
    if ios:dim() > 1 then
      fail(fname, ("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with %d dims"):format(ios:dim()))
    end
    if ios:dim() == 0 then return ios:item(), nil end
    return nil, ios:totable()
  end
  if type(ios) == "table" then return nil, ios end
  check_int(fname, "sections", ios)
  return ios, nil
end
def("tensor_split", function(t, ios, dim, ...)
  check_t("tensor_split", 1, t)
  local o
  if is_opts(dim) then o, dim = dim, nil else o = opts_at("tensor_split", 4, ...) end
  ck("tensor_split", o, { "dim" })
  if dim == nil then dim = o.dim end
  if t:dim() == 0 then
    fail("tensor_split", "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
  end
  local d = normdim("tensor_split", dim == nil and 1 or dim, t:dim())
  local sections, indices = ios_of("tensor_split", ios)
  return unpack(split_pieces("tensor_split", t, d, sections, indices))
end)
local function dsplit_like(fname, mind, dim_of)
  return function(t, ios)
    check_t(fname, 1, t)
    if t:dim() < mind then
      fail(fname, ("%s requires a tensor with at least %d dimension, but got a tensor with %d dimensions!"):format(fname, mind, t:dim()))
    end
    local d = dim_of(t)
    local sections, indices = ios_of(fname, ios)
    if sections then
      if sections == 0 or t:size(d) % sections ~= 0 then
        fail(fname, ("%s attempted to split along dimension %d, but the size of the dimension %d is not divisible by the split_size %d!"):format(
          fname, d, t:size(d), sections))
      end
    end
    return unpack(split_pieces(fname, t, d, sections, indices))
  end
end
def("hsplit", dsplit_like("hsplit", 1, function(t) return t:dim() == 1 and 1 or 2 end))
def("vsplit", dsplit_like("vsplit", 2, function() return 1 end))
def("dsplit", dsplit_like("dsplit", 3, function() return 3 end))

local function stack_list(fname, list, ...)
  if not (type(list) == "table" and not is_t(list)) then
    fail(fname, ("bad argument #1 (a list of tensors expected, got %s)"):format(is_t(list) and "ltensor.Tensor" or type(list)))
  end
  if select("#", ...) > 0 and (...) ~= nil then fail(fname, "bad argument #2 (unexpected extra argument)") end
  if #list == 0 then fail(fname, ("%s expects a non-empty TensorList"):format(fname)) end
  for i, t in ipairs(list) do check_t(fname, i, t) end
  return list
end
function T.hstack(list, ...)
  local ts = T.atleast_1d(stack_list("hstack", list, ...))
  return T.cat(ts, ts[1]:dim() == 1 and 1 or 2)
end
function T.vstack(list, ...) return T.cat(T.atleast_2d(stack_list("vstack", list, ...)), 1) end
function T.row_stack(list, ...) return T.cat(T.atleast_2d(stack_list("row_stack", list, ...)), 1) end
function T.dstack(list, ...) return T.cat(T.atleast_3d(stack_list("dstack", list, ...)), 3) end
function T.column_stack(list, ...)
  local ts = {}
  for i, t in ipairs(stack_list("column_stack", list, ...)) do
    ts[i] = t:dim() <= 1 and t:reshape({ t:numel(), 1 }) or t
  end
  return T.cat(ts, 2)
end
for _, n in ipairs({ "hstack", "vstack", "row_stack", "dstack", "column_stack" }) do T[n] = named(n, T[n]) end

-- dim split into sizes (one of them may be -1); a view where possible
def("unflatten", function(t, dim, sizes)
  check_t("unflatten", 1, t)
  local d = normdim("unflatten", dim, t:dim())
  if type(sizes) ~= "table" or is_t(sizes) then
    fail("unflatten", ("bad argument #3 (a table of sizes expected, got %s)"):format(type(sizes)))
  end
  if #sizes == 0 then fail("unflatten", "unflatten: sizes must be non-empty") end
  local n, known, infer = t:size(d), 1, nil
  for i = 1, #sizes do
    check_int("unflatten", "size", sizes[i])
    if sizes[i] == -1 and infer == nil then infer = i
    elseif sizes[i] < 0 then infer = false
    else known = known * sizes[i] end
  end
  local s = { unpack(sizes) }
  local ok = infer ~= false
  if ok and infer then
    ok = known ~= 0 and n % known == 0
    if ok then s[infer] = math.floor(n / known) end
  elseif ok then
    ok = known == n
  end
  if not ok then
    fail("unflatten", ("unflatten: Provided sizes %s don't multiply up to the size of dim %d (%d) in the input tensor"):format(
      shape_str(sizes), d, n))
  end
  local shape = t.shape
  local out = {}
  for i = 1, d - 1 do out[#out + 1] = shape[i] end
  for i = 1, #s do out[#out + 1] = s[i] end
  for i = d + 1, #shape do out[#out + 1] = shape[i] end
  return t:reshape(out)
end)

---------------------------------------------------------------------------
-- Random and special functions
---------------------------------------------------------------------------
-- randint_like(t, [low,] high [, {dtype=, generator=}]): T.randint with t's
-- shape, in t's dtype unless one is given
function T.randint_like(t, a, b, ...)
  check_t("randint_like", 1, t)
  local low, high, o
  if is_opts(b) then low, high, o = 0, a, b
  elseif b == nil then low, high, o = 0, a, opts_at("randint_like", 4, ...)
  else low, high, o = a, b, opts_at("randint_like", 4, ...) end
  ck("randint_like", o, { "dtype", "generator" })
  check_int("randint_like", "high", high)
  check_int("randint_like", "low", low)
  return T.randint(low, high, t.shape, { dtype = o.dtype or t.dtype, generator = o.generator })
end
T.randint_like = named("randint_like", T.randint_like)

-- I0 and I1 (modified Bessel functions of the first kind) by Cephes'
-- Chebyshev expansions, the ones PyTorch uses, evaluated in float64 on
-- whole tensors (Clenshaw's recurrence)
local I0_A = { -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
  1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
  -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
  9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
  -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
  1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
  -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
  1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
  -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
  1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1 }
local I0_B = { -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
  3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
  1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
  -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
  7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
  -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
  3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
  2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
  8.04490411014108831608E-1 }
local I1_A = { 2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
  -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
  3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
  -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
  9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
  -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
  4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
  -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
  2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
  -1.76416518357834055153E-1, 2.52587186443633654823E-1 }
local I1_B = { 7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
  -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
  -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
  4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
  -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
  3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
  -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
  -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
  7.78576235018280120474E-1 }
local function chbevl(y, c)
  local b0, b1, b2 = T.full(y.shape, c[1], { dtype = T.float64 }), T.zeros_like(y), nil
  for i = 2, #c do
    b2, b1 = b1, b0
    b0 = y * b1 - b2 + c[i]
  end
  return 0.5 * (b0 - b2)
end
-- exp(-|x|)-scaled pieces put together: [0, 8] by A, (8, inf) by B
local function bessel(x, A, B, odd)
  local a = T.abs(x)
  local small = T.le(a, 8)
  local ys = T.where(small, a, T.full({}, 8.0, { dtype = T.float64 })) / 2 - 2
  local yb = 32.0 / T.where(small, T.full({}, 16.0, { dtype = T.float64 }), a) - 2
  local ea = T.exp(a)
  local lo = ea * chbevl(ys, A)
  if odd then lo = lo * a end
  local hi = ea * chbevl(yb, B) / T.sqrt(a)
  local r = T.where(small, lo, hi)
  if odd then r = T.where(T.lt(x, 0), -r, r) end
  return r
end
local function i0_dtype(x) return is_float(x) and x.dtype or T.get_default_dtype() end
local I0 = autograd.Function {
  name = "I0Backward0",
  forward = function(ctx, x)
    ctx:save_for_backward(x)
    return bessel(x:to(T.float64), I0_A, I0_B, false):to(i0_dtype(x))
  end,
  backward = function(ctx, g)
    local x = ctx.saved_tensors[1]
    return g * T.no_grad(function() return bessel(x:to(T.float64), I1_A, I1_B, true):to(g.dtype) end)
  end,
}
def("i0", function(x)
  check_t("i0", 1, x)
  if is_complex(x) then fail("i0", ('"i0_vml_cpu" not implemented for \'%s\''):format(torch_dtype_name(x.dtype))) end
  return I0.apply(x)
end)
M.i0_ = named("i0_", function(x)
  check_t("i0_", 1, x)
  if not is_float(x) then
    fail("i0_", ("result type %s can't be cast to the desired output type %s"):format(
      torch_dtype_name(T.get_default_dtype()), torch_dtype_name(x.dtype)))
  end
  return into("i0_", x, T.i0(x))
end)

-- masked_scatter(x, mask, source): x with source's leading elements, in
-- row-major order, where the bool mask is true.  Built as
-- where(mask, source[cumsum(mask)], x), so autograd covers it: x gets the
-- gradient where the mask is false, source the gradient at the masked
-- positions in order (zeros for its unused tail), as PyTorch.
local function masked_scatter_of(fname, x, mask, source, shape)
  local m, xe = mask:expand(shape), x:expand(shape)
  local flat = m:reshape({ -1 })
  local pos = T.cumsum(flat, 1)   -- the running count of true positions (int64)
  local k = flat:numel() > 0 and pos[-1]:item() or 0
  if k > source:numel() then fail(fname, "Number of elements of source < number of ones in mask") end
  if k == 0 then return xe:clone() end
  local vals = source:reshape({ -1 }):narrow(1, 1, k):index_select(1, T.clamp(pos, 1, k))
  return T.where(m, vals:reshape(shape), xe)
end
local function masked_scatter_check(fname, x, mask, source)
  check_t(fname, 1, x) check_t(fname, 2, mask) check_t(fname, 3, source)
  if mask.dtype ~= T.bool then
    fail(fname, ("masked_scatter only supports boolean masks, but got mask with dtype %s"):format(tostring(mask.dtype):gsub("^ltensor%.", "")))
  end
  if source.dtype ~= x.dtype then
    fail(fname, ("masked_scatter: expected self and source to have same dtypes but got %s and %s"):format(
      torch_dtype_name(x.dtype), torch_dtype_name(source.dtype)))
  end
end
def("masked_scatter", function(x, mask, source)
  masked_scatter_check("masked_scatter", x, mask, source)
  return masked_scatter_of("masked_scatter", x, mask, source, T.broadcast_shapes(x.shape, mask.shape))
end)
M.masked_scatter_ = named("masked_scatter_", function(x, mask, source)
  masked_scatter_check("masked_scatter_", x, mask, source)
  local ok, bs = pcall(T.broadcast_shapes, x.shape, mask.shape)
  if not ok or shape_str(bs) ~= shape_str(x.shape) then
    fail("masked_scatter_", ("mask of shape %s cannot be broadcast to the shape %s of the tensor"):format(shape_str(mask.shape), shape_str(x.shape)))
  end
  return x:copy_(masked_scatter_of("masked_scatter_", x, mask, source, x.shape))
end)
T.masked_scatter_ = M.masked_scatter_   -- as T.masked_fill_

return {}
