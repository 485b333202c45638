-- Reference entries: elementwise operations and comparisons.  Every op is
-- a module function and a method; `t:op_(...)` is the in-place form (safe
-- casting: the result must fit t's dtype).
local E = {}
local function add(name, sig, desc, ex) E[#E + 1] = { name, sig, desc, ex } end

local unary = {
  abs = "Absolute value (magnitude for complex).", neg = "Negation, -t. Also T.negative.",
  negative = "Alias of neg.", sign = "-1, 0 or 1 by sign (for bool input, the input).",
  reciprocal = "1 / t (integral input promotes to the default float).", square = "t * t.",
  sqrt = "Square root.", rsqrt = "1 / sqrt(t).", exp = "e^t.", exp2 = "2^t.", expm1 = "e^t - 1, accurate near 0.",
  log = "Natural logarithm.", log2 = "Base-2 logarithm.", log10 = "Base-10 logarithm.", log1p = "log(1 + t), accurate near 0.",
  sin = "Sine.", cos = "Cosine.", tan = "Tangent.", asin = "Arcsine.", acos = "Arccosine.", atan = "Arctangent.",
  sinh = "Hyperbolic sine.", cosh = "Hyperbolic cosine.", tanh = "Hyperbolic tangent.",
  sigmoid = "1 / (1 + e^-t).", relu = "max(t, 0).", silu = "t * sigmoid(t) (swish).",
  erf = "The error function.", floor = "Round down.", ceil = "Round up.", trunc = "Round toward zero.",
  isnan = "true where t is NaN (bool result).", isinf = "true where t is +-inf.", isfinite = "true where t is neither NaN nor infinite.",
  real = "The real part of a complex tensor (a view); t itself for real input.", imag = "The imaginary part of a complex tensor (a view).",
  conj = "Complex conjugate.", angle = "The argument of a complex number (0 or pi for real input).",
  logical_not = "true where t is zero/false (bool result).", bitwise_not = "Bitwise NOT of bool and integer tensors (also unary ~).",
  asinh = "Inverse hyperbolic sine (complex too).", acosh = "Inverse hyperbolic cosine (NaN below 1 for real input; complex too).",
  atanh = "Inverse hyperbolic tangent (+-inf at +-1; complex too).",
  erfc = "The complementary error function 1 - erf(t), accurate where erf(t) is near 1.",
  deg2rad = "Degrees to radians (not for complex).", rad2deg = "Radians to degrees (not for complex).",
  sinc = "The normalised sinc: sin(pi t) / (pi t), 1 at 0 (complex too).",
  frac = "t - trunc(t): the fractional part with t's sign (floating dtypes only).",
  signbit = "true where the sign bit is set: negatives, -0.0 and negative NaN (bool result; no complex).",
  isposinf = "true where t is +inf (bool result).", isneginf = "true where t is -inf (bool result).",
  sgn = "sign for real input; z / |z| (0 at 0) for complex.",
}
-- examples for the ops the default input (a float tensor) does not suit
local UNARY_EX = {
  bitwise_not = "T.bitwise_not(T.tensor({0, 5, -1}))   -- -1, -6, 0\nT.bitwise_not(T.tensor({true, false}))   -- false, true",
  logical_not = "T.logical_not(T.tensor({0, 2, -1}))   -- true, false, false",
  imag = "local z = T.complex(T.tensor({1.5, 0.5}), T.tensor({2.5, -1.5}))\nT.imag(z)   -- 2.5, -1.5",
  real = "local z = T.complex(T.tensor({1.5, 0.5}), T.tensor({2.5, -1.5}))\nT.real(z)   -- 1.5, 0.5",
  conj = "local z = T.complex(T.tensor({1.5}), T.tensor({2.5}))\nT.conj(z)   -- 1.5-2.5i",
  acosh = "T.acosh(T.tensor({1.5, 2.5}))",
  isnan = "T.isnan(T.tensor({0.5, 0/0}))   -- false, true",
  isinf = "T.isinf(T.tensor({1/0, -1/0, 0.5}))   -- true, true, false",
}
local names = {}
for k in pairs(unary) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do
  add("T." .. k, ("T.%s(t)  |  t:%s()"):format(k, k),
    unary[k] .. " Elementwise; float-valued ops promote bool and integral input to the default dtype.",
    UNARY_EX[k] or ("T.%s(T.tensor({0.5, 2.5}))"):format(k))
end

local binary = {
  add = { "T.add(a, b [, {alpha=}])", "a + alpha * b, broadcast and promoted (Lua numbers are weak scalars)." },
  sub = { "T.sub(a, b [, {alpha=}])", "a - alpha * b. Also T.subtract." },
  subtract = { "T.subtract(a, b)", "Alias of sub." },
  rsub = { "T.rsub(a, b)", "b - a." },
  mul = { "T.mul(a, b)", "a * b. Also T.multiply." }, multiply = { "T.multiply(a, b)", "Alias of mul." },
  div = { "T.div(a, b [, {rounding_mode=}])", "True division a / b (integral input gives the default float); rounding_mode \"trunc\" or \"floor\" rounds and keeps integer dtypes. Integer division by zero raises `integer division by zero`." },
  divide = { "T.divide(a, b [, opts])", "Alias of div." }, true_divide = { "T.true_divide(a, b)", "Alias of div without rounding." },
  floor_divide = { "T.floor_divide(a, b)", "floor(a / b); the // operator." },
  remainder = { "T.remainder(a, b)", "a - floor(a / b) * b: the sign of the divisor, as Python's %; the % operator." },
  fmod = { "T.fmod(a, b)", "C's fmod: the sign of the dividend." },
  pow = { "T.pow(a, b)", "a^b; the ^ operator." },
  atan2 = { "T.atan2(a, b)", "The angle of the point (b, a)." },
  hypot = { "T.hypot(a, b)", "sqrt(a^2 + b^2) without overflow (floating dtypes only)." },
  copysign = { "T.copysign(a, b)", "|a| with the sign of b (-0.0 counts as negative); integral input gives the default float." },
  logaddexp = { "T.logaddexp(a, b)", "log(e^a + e^b) without overflow; equal infinities give themselves (floating dtypes only, no in-place form)." },
  logaddexp2 = { "T.logaddexp2(a, b)", "log2(2^a + 2^b) without overflow (floating dtypes only, no in-place form)." },
  xlogy = { "T.xlogy(a, b)", "a * log(b), 0 where a is 0 (unless b is NaN); either side may be a Lua number." },
  maximum = { "T.maximum(a, b)", "Elementwise larger value (NaN propagates)." },
  minimum = { "T.minimum(a, b)", "Elementwise smaller value (NaN propagates)." },
  lerp = { "T.lerp(a, b, w)", "a + w * (b - a)." },
  logical_and = { "T.logical_and(a, b)", "Elementwise AND of truth values (bool result)." },
  logical_or = { "T.logical_or(a, b)", "Elementwise OR of truth values." },
  logical_xor = { "T.logical_xor(a, b)", "Elementwise XOR of truth values." },
  bitwise_and = { "T.bitwise_and(a, b)", "Bitwise AND of bool/integer tensors; the & operator." },
  bitwise_or = { "T.bitwise_or(a, b)", "Bitwise OR; the | operator." },
  bitwise_xor = { "T.bitwise_xor(a, b)", "Bitwise XOR; the ~ operator." },
  bitwise_left_shift = { "T.bitwise_left_shift(a, b)", "a << b for integer tensors." },
  bitwise_right_shift = { "T.bitwise_right_shift(a, b)", "a >> b (arithmetic for signed types)." },
  eq = { "T.eq(a, b)", "Elementwise a == b (bool result). Note: `a == b` on two tensors is T.equal." },
  ne = { "T.ne(a, b)", "Elementwise a ~= b. Also T.not_equal." }, not_equal = { "T.not_equal(a, b)", "Alias of ne." },
  lt = { "T.lt(a, b)", "Elementwise a < b. Also T.less. (`a < b` on tensors raises and points here.)" }, less = { "T.less(a, b)", "Alias of lt." },
  le = { "T.le(a, b)", "Elementwise a <= b. Also T.less_equal." }, less_equal = { "T.less_equal(a, b)", "Alias of le." },
  gt = { "T.gt(a, b)", "Elementwise a > b. Also T.greater." }, greater = { "T.greater(a, b)", "Alias of gt." },
  ge = { "T.ge(a, b)", "Elementwise a >= b. Also T.greater_equal." }, greater_equal = { "T.greater_equal(a, b)", "Alias of ge." },
}
-- examples for the ops that take floats only, or three arguments
local BINARY_EX = {
  hypot = "T.hypot(T.tensor({3, 5}):float(), T.tensor({4, 12}):float())   -- 5, 13",
  logaddexp = "T.logaddexp(T.tensor({-100.5, 0.5}), T.tensor({-100.5, 0.5}))   -- -99.81, 1.19",
  logaddexp2 = "T.logaddexp2(T.tensor({0.5, 1.5}), T.tensor({0.5, 1.5}))   -- 1.5, 2.5",
  lerp = "T.lerp(T.tensor({0.5, 1.5}), T.tensor({2.5, 3.5}), 0.25)   -- 1, 2\nT.lerp(T.zeros(2), T.ones(2), T.tensor({0.5, 0.75}))   -- a tensor weight",
  atan2 = "T.atan2(T.tensor({1.5, -1.5}), T.tensor({-0.5, 0.5}))",
  xlogy = "T.xlogy(T.tensor({0, 2}), T.tensor({0.5, 2.5}))   -- 0, 1.83",
}
names = {}
for k in pairs(binary) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do
  add("T." .. k, binary[k][1], binary[k][2] .. " Broadcasts and promotes as PyTorch does.",
    BINARY_EX[k] or ("T.%s(T.tensor({1, 2, 3}), 2)"):format(k))
end

add("T.clamp", "T.clamp(t, min, max)", "Limits values to [min, max]; either bound may be nil, and each may be a number or a tensor broadcast against t (gradients flow to tensor bounds where they are active). Also T.clip.", "T.clamp(T.tensor({-2.0, 0.5, 3}), 0, 1)   -- 0 0.5 1\nT.clamp(T.tensor({1.0, 5}), T.tensor({2.0, 2}), nil)   -- 2 5")
add("T.clip", "T.clip(t, min, max)", "Alias of clamp.", "T.clip(T.tensor({-2.5, 0.5, 3.5}), -1, 1)   -- -1, 0.5, 1")
add("T.clamp_min", "T.clamp_min(t, min)", "max(t, min).", "T.clamp_min(T.tensor({-2.5, 0.5}), 0)   -- 0, 0.5")
add("T.clamp_max", "T.clamp_max(t, max)", "min(t, max).", "T.clamp_max(T.tensor({-2.5, 1.5}), 1)   -- -2.5, 1")
add("T.round", "T.round(t [, {decimals=}])", "Round half to even, optionally to a number of decimals.", "T.round(T.tensor({0.5, 1.5, 2.25}), {decimals = 1})")
add("T.logit", "T.logit(t [, eps] [, {eps=, out=}])  |  t:logit_([eps])",
  "log(t / (1 - t)); with eps (>= 0) t is first clamped to [eps, 1 - eps]. Integral input gives the default float.",
  "T.logit(T.tensor({0.25, 0.5, 1.0}), 1e-6)")
add("T.nan_to_num", "T.nan_to_num(t [, nan [, posinf [, neginf]]] [, {nan=, posinf=, neginf=, out=}])  |  t:nan_to_num_(...)",
  "Replaces NaN (by 0), +inf and -inf (by the largest and lowest finite values of t's dtype unless given); integral input is returned unchanged (a copy).",
  "T.nan_to_num(T.tensor({0/0, 1/0, -1/0, 2}), 0, 100)")
add("T.gelu", "T.gelu(t [, {approximate=\"none\"|\"tanh\"}])", "The Gaussian error linear unit.", "T.gelu(T.tensor({-1.5, 0.5, 2.5}))\nT.gelu(T.randn(4), {approximate = \"tanh\"})")
add("T.equal", "T.equal(a, b)", "true if a and b have the same shape and values (a Lua boolean); `a == b` on tensors.", "T.equal(T.ones(2), T.ones(2))  -- true")
add("T.allclose", "T.allclose(a, b [, {rtol=1e-5, atol=1e-8, equal_nan=false}])", "true if every |a - b| <= atol + rtol * |b| (complex too: the modulus; NaN in either part is NaN).", "local x = T.tensor({1.5, 2.5})\nT.allclose(x, x + 1e-7)   -- true")
add("T.isclose", "T.isclose(a, b [, {rtol=, atol=, equal_nan=}])", "Elementwise closeness (bool result).", "T.isclose(T.tensor({1.5, 2.5}), T.tensor({1.5, 2.6}))   -- true, false")
add("T.masked_fill", "T.masked_fill(t, mask, value)", "A copy of t with value where the bool mask is true; in place as masked_fill_.", "local x = T.tensor({-1.5, 0.5, -2.5})\nx:masked_fill(x:lt(0), 0)   -- 0, 0.5, 0")
for _, e in ipairs({
  -- more pointwise functions (addcmul ... i0)
  { "T.addcmul", "T.addcmul(input, t1, t2 [, {value=1}])",
    "input + value * t1 * t2, broadcast together in the three tensors' promoted dtype (a fractional value is truncated for integer tensors, as PyTorch 1.13). Differentiable. `t:addcmul_(t1, t2 [, {value=}])` works in place.",
    "T.addcmul(T.zeros(2), T.tensor({1.0, 2.0}), T.tensor({3.0, 4.0}), {value = 0.5})   -- 1.5, 4" },
  { "T.addcdiv", "T.addcdiv(input, t1, t2 [, {value=1}])",
    "input + value * t1 / t2 (true division), broadcast together; t1 and t2 may not both be integral. Differentiable. `t:addcdiv_(t1, t2 [, {value=}])` works in place.",
    "T.addcdiv(T.ones(2), T.tensor({1.0, 3.0}), T.tensor({2.0, 4.0}), {value = 2})   -- 2, 2.5" },
  { "T.heaviside", "T.heaviside(input, values)",
    "The Heaviside step: 0 where input < 0, 1 where input > 0, values where input == 0 (NaN gives 0). Both tensors of the same real dtype, broadcast together. Not differentiable: backward through it raises, as in PyTorch.",
    "T.heaviside(T.tensor({-1.5, 0, 2}), T.tensor({0.5}))   -- 0, 0.5, 1" },
  { "T.gcd", "T.gcd(a, b)",
    "The elementwise greatest common divisor (non-negative) of integer tensors, or a tensor and a Lua integer; gcd(0, 0) = 0. `t:gcd_(b)` works in place.",
    "T.gcd(T.tensor({12, -18, 0}), T.tensor({8, 12, 5}))   -- 4, 6, 5" },
  { "T.lcm", "T.lcm(a, b)",
    "The elementwise least common multiple (non-negative) of integer tensors; 0 where either is 0. Overflow wraps. `t:lcm_(b)` works in place.",
    "T.lcm(T.tensor({4, 6, 0}), T.tensor({6, 4, 3}))   -- 12, 12, 0" },
  { "T.float_power", "T.float_power(a, b)",
    "a ^ b computed in float64 (complex128 when either side is complex); either side may be a Lua number. Differentiable. `t:float_power_(b)` needs t to be float64 (complex128) already.",
    "T.float_power(T.tensor({2, 3}), 2)   -- 4., 9. (float64)" },
  { "T.ldexp", "T.ldexp(input, other)",
    "input * 2^other, as PyTorch (integer inputs give the default float dtype). Differentiable in input. `t:ldexp_(other)` works in place on a floating t.",
    "T.ldexp(T.tensor({1.0, 3.0}), T.tensor({3, -1}))   -- 8, 1.5" },
  { "T.frexp", "T.frexp(t)",
    "Two results: the mantissa (t's dtype, magnitude in [0.5, 1), t's sign) and the int32 exponent with t = mantissa * 2^exponent; 0, inf and NaN keep their value with exponent 0. Floating t only; the mantissa is differentiable.",
    "local m, e = T.frexp(T.tensor({8.0, -0.3}))   -- m: 0.5, -0.6; e: 4, -1" },
  { "T.positive", "T.positive(t)", "Returns t itself (unary plus); an error for bool tensors.",
    "T.positive(T.tensor({-1, 2}))" },
  { "T.i0", "T.i0(t)",
    "The modified Bessel function of the first kind of order 0, elementwise (Cephes' Chebyshev expansions, as PyTorch; computed in float64). Integer input gives the default float dtype. Differentiable (the derivative is I1). `t:i0_()` works in place on a floating t.",
    "T.i0(T.tensor({0.0, 1.0, -2.0}))   -- 1, 1.2661, 2.2796" },
}) do E[#E + 1] = e end
return E
