-- ltensor.tensor.pointwise: PyTorch 1.13 pointwise functions composed from
-- existing ops: addcmul, addcdiv, heaviside, gcd, lcm, float_power, ldexp,
-- frexp, positive; randint_like, i0, masked_scatter.  Each is built from
-- differentiable tensor ops, so autograd covers it without a rule of its own
-- (two are Functions: i0, whose derivative is i1, and heaviside, whose
-- backward raises as PyTorch's); the element loops all run in C.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local M = T._methods
local type = type
local is_t, fail, torch_dtype_name, is_opts, check_t = C.is_t, C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local opts_at, ck, check_num = C.opts_at, C.ck, C.check_num
local check_int = C.check_int
local named, def, is_float, is_complex, is_integral = C.named, C.def, C.is_float, C.is_complex, C.is_integral
local shape_str, common = C.shape_str, C.common
local check_operand, as_tensor, into = C.check_operand, C.as_tensor, C.into
local autograd = require "ltensor.autograd"
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
return true
