-- ltensor.nn.functional.activations: the activation functions of T.nn.functional.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local SELU_ALPHA, SELU_SCALE = H.SELU_ALPHA, H.SELU_SCALE
local math, F = H.math, H.F
local fail, typename, arg_fail, check_t, check_num = H.fail, H.typename, H.arg_fail, H.check_t, H.check_num
local check_int = H.check_int
local check_float, is_opts = H.check_float, H.is_opts
local parse = H.parse
local inplace_result, custom = H.inplace_result, H.custom
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- activations
---------------------------------------------------------------------------
local INPLACE = { "inplace" }

function F.relu(x, ...)
  check_t("relu", 1, "input", x)
  local o = parse("relu", 2, INPLACE, ...)
  if o.inplace then return x:relu_() end
  return T.relu(x)
end
function F.sigmoid(x) return T.sigmoid(x) end
function F.tanh(x) return T.tanh(x) end
function F.silu(x, ...)
  local o = parse("silu", 2, INPLACE, ...)
  check_t("silu", 1, "input", x)
  return inplace_result(x, T.silu(x), o.inplace)
end
function F.gelu(x, ...)
  local approximate = ...
  if type(approximate) == "string" or approximate == nil then
    approximate = approximate or "none"
  else
    approximate = parse("gelu", 2, { "approximate" }, ...).approximate or "none"
  end
  if approximate ~= "none" and approximate ~= "tanh" then
    arg_fail("gelu", 2, "approximate", "\"none\" or \"tanh\" expected, got " ..
             (type(approximate) == "string" and approximate or typename(approximate)))
  end
  check_t("gelu", 1, "input", x)
  if approximate == "tanh" then return T.gelu(x, "tanh") end
  return T.gelu(x)
end

local function dim_arg(fname, x, dim)
  if dim == nil then
    -- PyTorch's legacy implicit dim: 1 for 0-, 1- and 3-D inputs, else 2 (1-based)
    local nd = x:dim()
    return (nd == 0 or nd == 1 or nd == 3) and 1 or 2
  end
  check_int(fname, 2, "dim", dim)
  return dim
end
-- softmax, log_softmax and softmin share their arguments: (input, dim, {dtype=})
-- with dim optional (the legacy implicit dim) and the options allowed in its place
local function softmax_like(fname, op, negate)
  local f
  f = function(x, dim, ...)
    if is_opts(dim) then return f(x, nil, dim) end
    local o = parse(fname, 3, { "_stacklevel", "dtype" }, ...)
    check_t(fname, 1, "input", x)
    if o.dtype then x = x:to(o.dtype) end
    return T[op](negate and -x or x, dim_arg(fname, x, dim))
  end
  return f
end
F.softmax = softmax_like("softmax", "softmax")
F.log_softmax = softmax_like("log_softmax", "log_softmax")
F.softmin = softmax_like("softmin", "softmax", true)

-- where(x > 0, x, x * slope): the gradient is slope at 0, as PyTorch's
function F.leaky_relu(x, ...)
  local o = parse("leaky_relu", 2, { "negative_slope", "inplace" }, ...)
  check_t("leaky_relu", 1, "input", x)
  check_float("leaky_relu", x)
  local s = o.negative_slope or 0.01
  check_num("leaky_relu", 2, "negative_slope", s)
  return inplace_result(x, T.where(T.gt(x, 0), x, x * s), o.inplace)
end

-- x <= 0: alpha * (exp(x * input_scale) - 1) * scale, else x * scale; the
-- exp only ever sees x <= 0, so a large x on the other branch cannot turn
-- its zero gradient into 0 * inf.  The gradient is PyTorch's elu_backward:
-- chosen by x <= 0, so a NaN input takes the positive branch's (scale), not
-- NaN (the comparison, not the value, picks the branch).
local Elu = custom("EluBackward0", function(ctx, x, alpha, scale, input_scale)
  ctx:save_for_backward(x)
  ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
  local neg = T.expm1(T.clamp_max(x, 0) * input_scale) * alpha
  local y = T.where(T.le(x, 0), neg, x)
  if scale ~= 1 then y = y * scale end
  return y
end, function(ctx, g)
  local x = ctx.saved_tensors[1]
  local c = ctx.input_scale * ctx.alpha * ctx.scale
  local neg = g * T.exp(T.clamp_max(x, 0) * ctx.input_scale) * c
  return T.where(T.le(x, 0), neg, ctx.scale == 1 and g or g * ctx.scale)
end)
local function elu_core(x, alpha, scale, input_scale) return Elu(x, alpha, scale, input_scale) end
function F.elu(x, ...)
  local o = parse("elu", 2, { "alpha", "inplace" }, ...)
  check_t("elu", 1, "input", x)
  check_float("elu", x)
  local a = o.alpha or 1.0
  check_num("elu", 2, "alpha", a)
  return inplace_result(x, elu_core(x, a, 1, 1), o.inplace)
end
function F.selu(x, ...)
  local o = parse("selu", 2, INPLACE, ...)
  check_t("selu", 1, "input", x)
  check_float("selu", x, "elu")
  return inplace_result(x, elu_core(x, SELU_ALPHA, SELU_SCALE, 1), o.inplace)
end
function F.celu(x, ...)
  local o = parse("celu", 2, { "alpha", "inplace" }, ...)
  check_t("celu", 1, "input", x)
  check_float("celu", x, "elu")
  local a = o.alpha or 1.0
  check_num("celu", 2, "alpha", a)
  if a == 0 then fail("celu", "ZeroDivisionError") end
  return inplace_result(x, elu_core(x, a, 1, 1 / a), o.inplace)
end

-- softplus: log(1 + exp(beta x)) / beta, x itself where beta x > threshold;
-- its own backward (sigmoid(beta x)) so that the gradient at 0 is 1/2.
local Softplus = custom("SoftplusBackward0", function(ctx, x, beta, threshold)
  local bx = x * beta
  local over = T.gt(bx, threshold)
  local y = T.where(over, x, T.log1p(T.exp(-T.abs(bx))) / beta + T.clamp_min(x, 0))
  ctx:save_for_backward(x)
  ctx.beta, ctx.threshold = beta, threshold
  return y
end, function(ctx, g)
  local x = ctx.saved_tensors[1]
  local bx = x * ctx.beta
  return T.where(T.gt(bx, ctx.threshold), g, g * T.sigmoid(bx))
end)
function F.softplus(x, ...)
  local o = parse("softplus", 2, { "beta", "threshold" }, ...)
  check_t("softplus", 1, "input", x)
  check_float("softplus", x)
  local beta, th = o.beta or 1, o.threshold or 20
  check_num("softplus", 2, "beta", beta)
  check_num("softplus", 3, "threshold", th)
  return Softplus(x, beta, th)
end

-- logsigmoid(x) = -softplus(-x), gradient 1 - sigmoid(x)
local LogSigmoid = custom("LogSigmoidBackward0", function(ctx, x)
  ctx:save_for_backward(x)
  return T.clamp_max(x, 0) - T.log1p(T.exp(-T.abs(x)))
end, function(ctx, g)
  local x = ctx.saved_tensors[1]
  return g * T.sigmoid(-x)
end)
function F.logsigmoid(x)
  check_t("logsigmoid", 1, "input", x)
  check_float("logsigmoid", x, "log_sigmoid_forward")
  return LogSigmoid(x)
end

function F.softsign(x)
  check_t("softsign", 1, "input", x)
  return x / (T.abs(x) + 1)
end

-- hardtanh: gradient only strictly inside (min_val, max_val), as PyTorch's
function F.hardtanh(x, ...)
  local o = parse("hardtanh", 2, { "min_val", "max_val", "inplace" }, ...)
  check_t("hardtanh", 1, "input", x)
  local lo, hi = o.min_val or -1.0, o.max_val or 1.0
  check_num("hardtanh", 2, "min_val", lo)
  check_num("hardtanh", 3, "max_val", hi)
  if lo > hi then fail("hardtanh", "max_val must be greater than or equal to min_val") end
  local y
  if not x.dtype.is_floating_point and not x.dtype.is_complex then
    -- integral input keeps its dtype: the bounds cast to it (truncated), as PyTorch's
    local function toint(v) return math.tointeger(v) or math.tointeger(v >= 0 and math.floor(v) or math.ceil(v)) end
    y = T.clamp(x, toint(lo), toint(hi))
  elseif not (x.requires_grad and T.is_grad_enabled()) then
    -- no gradient to record: PyTorch's forward itself, one clamp pass (the
    -- where form below took 42% of mobilenet_v2's inference in four passes;
    -- it also turned -0.0 into 0.0, which clamp keeps, as PyTorch does)
    if o.inplace then return x:clamp_(lo, hi) end
    y = T.clamp(x, lo, hi)
  else
    -- the gradient flows strictly inside (lo, hi) and through NaN, as PyTorch's
    y = T.where(T.le(x, lo), lo, T.where(T.ge(x, hi), hi, x))
  end
  return inplace_result(x, y, o.inplace)
end
function F.relu6(x, ...)
  local o = parse("relu6", 2, INPLACE, ...)
  check_t("relu6", 1, "input", x)
  return F.hardtanh(x, { min_val = 0.0, max_val = 6.0, inplace = o.inplace })
end
-- hardsigmoid and hardswish: PyTorch's formulas, forward (min(max(x + 3,
-- 0), 6) / 6, so NaN stays NaN and hardswish(-inf) is -inf * 0 = NaN) and
-- backward (hardsigmoid: g/6 strictly inside (-3, 3), else 0; hardswish:
-- 0 below -3, g (x/3 + 1/2) on the closed [-3, 3], g above: a NaN input,
-- in no range, gets g there and 0 here)
local Hardsigmoid = custom("HardsigmoidBackward0", function(ctx, x)
  ctx:save_for_backward(x)
  return T.clamp(x + 3, 0, 6) / 6
end, function(ctx, g)
  local x = ctx.saved_tensors[1]
  return T.where(T.logical_and(T.gt(x, -3), T.lt(x, 3)), g / 6, 0)
end)
local Hardswish = custom("HardswishBackward0", function(ctx, x)
  ctx:save_for_backward(x)
  return x * T.clamp(x + 3, 0, 6) / 6
end, function(ctx, g)
  local x = ctx.saved_tensors[1]
  return T.where(T.lt(x, -3), 0, T.where(T.le(x, 3), g * (x / 3 + 0.5), g))
end)
-- float-only activations whose one option is inplace: (input, {inplace=})
local function float_inplace(fname, f)
  return function(x, ...)
    local o = parse(fname, 2, INPLACE, ...)
    check_t(fname, 1, "input", x)
    check_float(fname, x)
    return inplace_result(x, f(x), o.inplace)
  end
end
F.hardsigmoid = float_inplace("hardsigmoid", Hardsigmoid)
F.hardswish = float_inplace("hardswish", Hardswish)
F.mish = float_inplace("mish", function(x) return x * T.tanh(Softplus(x, 1, 20)) end)
function F.tanhshrink(x)
  check_t("tanhshrink", 1, "input", x)
  return x - T.tanh(x)
end
-- hardshrink, softshrink and threshold as PyTorch's kernels compare: the
-- kept range is chosen by the comparison that holds, so a NaN input is
-- kept (hardshrink, threshold: NaN) or zeroed (softshrink) as there, and
-- the gradient is g wherever the input was not inside the dead zone
-- (softshrink's backward: NaN gets g although its value is 0, as PyTorch's).
local function dead_zone(x, l) return T.logical_and(T.ge(x, -l), T.le(x, l)) end
local Softshrink = custom("SoftshrinkBackward0", function(ctx, x, l)
  ctx:save_for_backward(x)
  ctx.l = l
  return T.where(T.gt(x, l), x - l, T.where(T.lt(x, -l), x + l, 0))
end, function(ctx, g)
  return T.where(dead_zone(ctx.saved_tensors[1], ctx.l), 0, g)
end)
-- hardshrink and softshrink: (input, {lambd=0.5}) on a float input
local function shrink_args(fname, x, ...)
  local o = parse(fname, 2, { "lambd" }, ...)
  check_t(fname, 1, "input", x)
  check_float(fname, x)
  local l = o.lambd or 0.5
  check_num(fname, 2, "lambd", l)
  return l
end
function F.hardshrink(x, ...)
  local l = shrink_args("hardshrink", x, ...)
  return T.where(dead_zone(x, l), 0, x)
end
function F.softshrink(x, ...)
  local l = shrink_args("softshrink", x, ...)
  if l < 0 then fail("softshrink", "lambda must be greater or equal to 0, but found to be " .. l .. ".") end
  return Softshrink(x, l)
end
function F.threshold(x, th, value, ...)
  check_t("threshold", 1, "input", x)
  if is_opts(th) then th, value = th.threshold, th.value end
  local o = parse("threshold", 4, INPLACE, ...)
  check_num("threshold", 2, "threshold", th)
  check_num("threshold", 3, "value", value)
  return inplace_result(x, T.where(T.le(x, th), value, x), o.inplace)
end

-- prelu(x, weight): weight has 1 element or one per channel (dim 2; a 1-D
-- input is one sample of C channels only when C = numel(weight)).
function F.prelu(x, w)
  check_t("prelu", 1, "input", x)
  check_t("prelu", 2, "weight", w)
  check_float("prelu", x)
  local nw = w:numel()
  if w:dim() > 1 then fail("prelu", "weight must be 1-D, but got a " .. w:dim() .. "-D tensor") end
  local ww = w
  if nw ~= 1 then
    local nd = x:dim()
    if nd == 0 then fail("prelu", "Not allow zero-dim input tensor.") end
    local cdim = nd >= 2 and 2 or 1
    local C = x:size(cdim)
    if C ~= nw then
      fail("prelu", ("Mismatch of parameter numbers and input channel size. Found parameter numbers = %d and channel size = %d."):format(nw, C))
    end
    local shape = {}
    for i = 1, nd do shape[i] = 1 end
    shape[cdim] = C
    ww = w:reshape(shape)
  elseif w:dim() == 1 then
    ww = w:reshape({})
  end
  return T.where(T.gt(x, 0), x, x * ww)
end

function F.glu(x, ...)
  local o = parse("glu", 2, { "dim" }, ...)
  check_t("glu", 1, "input", x)
  check_float("glu", x)
  local dim = o.dim or -1
  check_int("glu", 2, "dim", dim)
  if x:dim() == 0 then fail("glu", "glu does not support scalars because halving size must be even") end
  local nd = x:dim()
  local d = dim < 0 and dim + nd + 1 or dim
  if d < 1 or d > nd then
    fail("glu", ("dimension out of range (expected to be in range of [%d, %d], but got %d)"):format(-nd, nd, dim))
  end
  local n = x:size(d)
  if n % 2 ~= 0 then
    fail("glu", ("Halving dimension must be even, but dimension %d is size %d"):format(d, n))
  end
  local a = x:narrow(d, 1, math.floor(n / 2))
  local b = x:narrow(d, math.floor(n / 2) + 1, math.floor(n / 2))
  return a * T.sigmoid(b)
end
H.Softplus = Softplus   -- binary_cross_entropy_with_logits (losses.lua)
return true
