-- Reference entries: the in-place forms t:op_(...) of the elementwise
-- operations (PyTorch's trailing underscore).  Each writes T.op(t, ...) into
-- t's own storage and returns t; help("abs_") shows its entry here, and its
-- "see" line the out-of-place function.
-- Format (lua/ltensor/help.lua): { name, signature, description, example }.
local E = {}

local COMMON = " Writes the result into t's own storage and returns t (other views of that storage see it). " ..
  "The result must fit t's dtype (PyTorch's safe casting: T.arange(3):sqrt_() raises, T.arange(3):float():sqrt_() works), " ..
  "it broadcasts to t's shape, not beyond, and a leaf that requires grad refuses it (use T.no_grad for parameter updates)."

-- name -> { arguments, what it computes, setup, call [, result comment] }
local FLOAT = "local t = T.tensor({0.25, 0.5})"
local OPS = {
  abs = { "", "|t|", "local t = T.tensor({-1.5, 2.5})", "t:abs_()", "1.5, 2.5" },
  neg = { "", "-t", "local t = T.tensor({-1.5, 2.5})", "t:neg_()", "1.5, -2.5" },
  sign = { "", "the sign (-1, 0 or 1)", "local t = T.tensor({-1.5, 0, 2.5})", "t:sign_()", "-1, 0, 1" },
  sgn = { "", "the sign (z / |z| for complex)", "local t = T.tensor({-1.5, 2.5})", "t:sgn_()", "-1, 1" },
  reciprocal = { "", "1 / t", FLOAT, "t:reciprocal_()", "4, 2" },
  square = { "", "t * t", FLOAT, "t:square_()", "0.0625, 0.25" },
  sqrt = { "", "the square root", FLOAT, "t:sqrt_()", "0.5, 0.707" },
  rsqrt = { "", "1 / sqrt(t)", FLOAT, "t:rsqrt_()", "2, 1.414" },
  exp = { "", "e^t", FLOAT, "t:exp_()" }, exp2 = { "", "2^t", FLOAT, "t:exp2_()" },
  expm1 = { "", "e^t - 1", FLOAT, "t:expm1_()" },
  log = { "", "the natural logarithm", FLOAT, "t:log_()" }, log2 = { "", "the base-2 logarithm", FLOAT, "t:log2_()", "-2, -1" },
  log10 = { "", "the base-10 logarithm", FLOAT, "t:log10_()" }, log1p = { "", "log(1 + t)", FLOAT, "t:log1p_()" },
  sin = { "", "the sine", FLOAT, "t:sin_()" }, cos = { "", "the cosine", FLOAT, "t:cos_()" }, tan = { "", "the tangent", FLOAT, "t:tan_()" },
  asin = { "", "the arcsine", FLOAT, "t:asin_()" }, acos = { "", "the arccosine", FLOAT, "t:acos_()" },
  atan = { "", "the arctangent", FLOAT, "t:atan_()" },
  sinh = { "", "the hyperbolic sine", FLOAT, "t:sinh_()" }, cosh = { "", "the hyperbolic cosine", FLOAT, "t:cosh_()" },
  tanh = { "", "the hyperbolic tangent", FLOAT, "t:tanh_()" }, asinh = { "", "the inverse hyperbolic sine", FLOAT, "t:asinh_()" },
  acosh = { "", "the inverse hyperbolic cosine", "local t = T.tensor({1.5, 2.5})", "t:acosh_()" },
  atanh = { "", "the inverse hyperbolic tangent", FLOAT, "t:atanh_()" },
  sigmoid = { "", "1 / (1 + e^-t)", FLOAT, "t:sigmoid_()" }, relu = { "", "max(t, 0)", "local t = T.tensor({-1.5, 2.5})", "t:relu_()", "0, 2.5" },
  silu = { "", "t * sigmoid(t)", FLOAT, "t:silu_()" },
  gelu = { "[{approximate=}]", "the Gaussian error linear unit", FLOAT, "t:gelu_()" },
  erf = { "", "the error function", FLOAT, "t:erf_()" }, erfc = { "", "1 - erf(t)", FLOAT, "t:erfc_()" },
  i0 = { "", "the modified Bessel function of order 0", FLOAT, "t:i0_()" },
  sinc = { "", "sin(pi t) / (pi t)", FLOAT, "t:sinc_()" },
  deg2rad = { "", "degrees to radians", "local t = T.tensor({90.5, 180.5})", "t:deg2rad_()" },
  rad2deg = { "", "radians to degrees", FLOAT, "t:rad2deg_()" },
  floor = { "", "rounded down", "local t = T.tensor({-1.5, 2.5})", "t:floor_()", "-2, 2" },
  ceil = { "", "rounded up", "local t = T.tensor({-1.5, 2.5})", "t:ceil_()", "-1, 3" },
  trunc = { "", "rounded toward zero", "local t = T.tensor({-1.5, 2.5})", "t:trunc_()", "-1, 2" },
  frac = { "", "t - trunc(t)", "local t = T.tensor({-1.25, 2.5})", "t:frac_()", "-0.25, 0.5" },
  round = { "[{decimals=}]", "rounded half to even", "local t = T.tensor({0.5, 1.5, 2.25})", "t:round_()", "0, 2, 2" },
  logit = { "[eps]", "log(t / (1 - t))", FLOAT, "t:logit_()" },
  nan_to_num = { "[nan [, posinf [, neginf]]]", "NaN and infinities replaced", "local t = T.tensor({0/0, 1/0, 0.5})", "t:nan_to_num_(0, 100)", "0, 100, 0.5" },
  clamp = { "min, max", "limited to [min, max]", "local t = T.tensor({-1.5, 0.5, 2.5})", "t:clamp_(0, 1)", "0, 0.5, 1" },
  clamp_min = { "min", "max(t, min)", "local t = T.tensor({-1.5, 0.5})", "t:clamp_min_(0)", "0, 0.5" },
  clamp_max = { "max", "min(t, max)", "local t = T.tensor({-1.5, 2.5})", "t:clamp_max_(1)", "-1.5, 1" },
  add = { "other [, {alpha=}]", "t + alpha * other", FLOAT, "t:add_(T.tensor({1.5, 2.5}))", "1.75, 3" },
  sub = { "other [, {alpha=}]", "t - alpha * other", FLOAT, "t:sub_(0.25)", "0, 0.25" },
  mul = { "other", "t * other", FLOAT, "t:mul_(4)", "1, 2" },
  div = { "other [, {rounding_mode=}]", "t / other", FLOAT, "t:div_(0.5)", "0.5, 1" },
  pow = { "exponent", "t ^ exponent", FLOAT, "t:pow_(2)", "0.0625, 0.25" },
  float_power = { "exponent", "t ^ exponent in float64 (t must be float64)", "local t = T.tensor({1.5, 2.5}, {dtype = T.float64})", "t:float_power_(2)", "2.25, 6.25" },
  atan2 = { "other", "the angle of the point (other, t)", FLOAT, "t:atan2_(T.tensor({0.5, -0.5}))" },
  hypot = { "other", "sqrt(t^2 + other^2)", "local t = T.tensor({3.5, 0.5})", "t:hypot_(T.tensor({1.5, 0.5}))" },
  copysign = { "other", "|t| with other's sign", FLOAT, "t:copysign_(-1)", "-0.25, -0.5" },
  fmod = { "other", "C's fmod (the dividend's sign)", "local t = T.tensor({-3.5, 3.5})", "t:fmod_(2)", "-1.5, 1.5" },
  remainder = { "other", "Python's % (the divisor's sign)", "local t = T.tensor({-3.5, 3.5})", "t:remainder_(2)", "0.5, 1.5" },
  floor_divide = { "other", "floor(t / other)", "local t = T.tensor({-3.5, 3.5})", "t:floor_divide_(2)", "-2, 1" },
  xlogy = { "other", "t * log(other), 0 where t is 0", FLOAT, "t:xlogy_(T.tensor({2.5, 0.5}))" },
  ldexp = { "other", "t * 2^other", FLOAT, "t:ldexp_(T.tensor({2, 3}))", "1, 4" },
  lerp = { "end, weight", "t + weight * (end - t)", FLOAT, "t:lerp_(T.ones(2), 0.5)", "0.625, 0.75" },
  addcmul = { "t1, t2 [, {value=1}]", "t + value * t1 * t2", FLOAT, "t:addcmul_(T.tensor({1.5, 2.5}), T.tensor({2, 4}), {value = 0.5})", "1.75, 5.5" },
  addcdiv = { "t1, t2 [, {value=1}]", "t + value * t1 / t2", FLOAT, "t:addcdiv_(T.tensor({1.5, 2.5}), T.tensor({2, 4}), {value = 2})", "1.75, 1.75" },
  renorm = { "p, dim, maxnorm", "each slice along dim rescaled to p-norm at most maxnorm", "local t = T.randn(3, 4)", "t:renorm_(2, 1, 1)", "every row of norm <= 1" },
  gcd = { "other", "the greatest common divisor (integers)", "local t = T.tensor({12, 18})", "t:gcd_(T.tensor({8, 12}))", "4, 6" },
  lcm = { "other", "the least common multiple (integers)", "local t = T.tensor({4, 6})", "t:lcm_(T.tensor({6, 4}))", "12, 12" },
  bitwise_not = { "", "~t (bool and integers)", "local t = T.tensor({0, 5})", "t:bitwise_not_()", "-1, -6" },
  bitwise_and = { "other", "t & other", "local t = T.tensor({12, 10})", "t:bitwise_and_(6)", "4, 2" },
  bitwise_or = { "other", "t | other", "local t = T.tensor({12, 10})", "t:bitwise_or_(1)", "13, 11" },
  bitwise_xor = { "other", "t ~ other (XOR)", "local t = T.tensor({12, 10})", "t:bitwise_xor_(6)", "10, 12" },
  bitwise_left_shift = { "other", "t << other", "local t = T.tensor({1, 3})", "t:bitwise_left_shift_(2)", "4, 12" },
  bitwise_right_shift = { "other", "t >> other", "local t = T.tensor({8, -8})", "t:bitwise_right_shift_(2)", "2, -2" },
}

local names = {}
for k in pairs(OPS) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do
  local o = OPS[k]
  local example = o[3] .. "\n" .. o[4] .. (o[5] and ("   -- t is " .. o[5]) or ("   -- t holds T." .. k .. " of its old values"))
  E[#E + 1] = { "Tensor:" .. k .. "_", ("t:%s_(%s)"):format(k, o[1]),
    ("t = %s: the in-place form of T.%s."):format(o[2], k) .. COMMON, example, see = { "T." .. k } }
end
return E
