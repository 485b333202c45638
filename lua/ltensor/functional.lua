-- ltensor.functional (T.nn.functional): activations, dropout, losses,
-- normalisation and attention, with PyTorch 1.13's semantics.
--
-- Most functions are compositions of differentiable tensor ops, so autograd
-- differentiates them for free.  Where the composition would give a wrong
-- gradient at a kink (softplus at 0 through abs/relu, BCE at 0 or 1) or
-- would be slow, the function has its own backward (autograd.Function) or a
-- fused C kernel from src/l_nnfused.c with a rule registered at the bottom of
-- this file (batch/layer/group norm, log_softmax + nll, relu's backward).
--
-- Calling convention (conformance README, "Call conventions"): tensors and
-- PyTorch's positional arguments are positional, nil standing for a skipped
-- optional tensor; keyword arguments go in a trailing options table, which
-- may follow any prefix of the positional ones.  Dims and class indices are
-- 1-based.  Other engineers install conv/pool/pad functions into this same
-- table from their own modules.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
require "ltensor.autograd"
local autograd = T.autograd

local F = {}

local TMT = T._metatable
local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.functional.")
F._fail = fail

-- Argument checks: a bad argument raises an error naming the function and
-- the argument instead of a Lua runtime error deep inside the computation.
local typename = util.mtname
local function arg_fail(fname, n, name, msg)
  fail(fname, ("bad argument #%d '%s' (%s)"):format(n, name, msg))
end
local function check_t(fname, n, name, x, optional)
  if x == nil and optional then return end
  if not is_t(x) then arg_fail(fname, n, name, "Tensor expected, got " .. typename(x)) end
end
local function check_num(fname, n, name, x, optional)
  if x == nil and optional then return end
  if type(x) ~= "number" then arg_fail(fname, n, name, "number expected, got " .. typename(x)) end
end
local function check_int(fname, n, name, x, optional)
  if x == nil and optional then return end
  if math.type(x) ~= "integer" then arg_fail(fname, n, name, "integer expected, got " .. typename(x)) end
end
local function check_bool(fname, n, name, x)
  if x ~= nil and type(x) ~= "boolean" then arg_fail(fname, n, name, "boolean expected, got " .. typename(x)) end
end

local function check_float(fname, x, what)
  if not x.dtype.is_floating_point then
    fail(fname, ('"%s" not implemented for \'%s\''):format(what or fname, util.torch_name(x.dtype)))
  end
end
F._check_float = check_float

-- machine epsilon per floating dtype (torch.finfo(dtype).eps)
local EPS = { float32 = 1.1920928955078125e-07, float64 = 2.220446049250313e-16,
  float16 = 0.0009765625, bfloat16 = 0.0078125 }

---------------------------------------------------------------------------
-- options tables
---------------------------------------------------------------------------
-- k is not in allowed (a set): the one checker words it, with its suggestion
local function unknown_option(fname, k, allowed)
  local names = {}
  for name in pairs(allowed) do if name ~= "|" then names[#names + 1] = name end end
  table.sort(names)
  T._check_opts("nn.functional." .. fname, { [k] = true }, names)
  fail(fname, ("unknown option '%s'"):format(tostring(k)))   -- ('|', or no names at all)
end
local function is_opts(v)
  return type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0
end

-- parse(fname, first, names, ...): the arguments after the required ones.
-- names lists PyTorch's optional positional parameters in order; more keys
-- may be allowed in the options table by listing them after a "|" entry.
-- Returns a table name -> value (options override nothing: a key given both
-- positionally and in the options table raises).
-- options that must be booleans wherever they appear
-- hyper-parameters that are always numbers (a table or string there is a
-- mistake that would otherwise surface as an arithmetic error inside)
local NUM_OPTS = { alpha = true, beta = true, k = true, eps = true, negative_slope = true,
                   lambd = true, min_val = true, max_val = true, margin = true, delta = true, label_smoothing = true }
local BOOL_OPTS = { inplace = true, training = true, keepdim = true, log_target = true, swap = true, full = true,
  is_causal = true, zero_infinity = true, log_input = true, use_input_stats = true, align_corners = true }
local parse_cache = setmetatable({}, { __mode = "k" })
local function parse(fname, first, names, ...)
  if select("#", ...) == 0 then return {} end   -- the common call: nothing to check
  local allowed = parse_cache[names]
  local npos = #names
  if not allowed then
    allowed = {}
    for i, k in ipairs(names) do
      if k == "|" then npos = i - 1 else allowed[k] = true end
    end
    allowed["|"] = npos
    parse_cache[names] = allowed
  end
  npos = allowed["|"]
  local o = {}
  local n = select("#", ...)
  for i = 1, n do
    local v = select(i, ...)
    if i == n and is_opts(v) then
      for k, val in next, v do
        if not allowed[k] or k == "|" then unknown_option(fname, k, allowed) end
        if o[k] ~= nil then fail(fname, ("got multiple values for argument '%s'"):format(k)) end
        o[k] = val
      end
    else
      if i > npos then
        if v ~= nil then
          fail(fname, ("takes at most %d positional arguments (%d given)"):format(first - 1 + npos, first - 1 + n))
        end
      else
        o[names[i]] = v
      end
    end
  end
  for k in pairs(BOOL_OPTS) do
    local v = o[k]
    if v ~= nil and type(v) ~= "boolean" then
      fail(fname, ("bad argument '%s' (boolean expected, got %s)"):format(k, typename(v)))
    end
  end
  for k in pairs(NUM_OPTS) do
    local v = o[k]
    if v ~= nil and type(v) ~= "number" then
      fail(fname, ("bad argument '%s' (number expected, got %s)"):format(k, typename(v)))
    end
  end
  return o
end
-- parse, fail and check_float are shared with nn_layers.lua (and open to the
-- modules that install conv/pool/pad functions into this table)
F._parse = parse

local function reduction_of(fname, r)
  if r == nil then return "mean" end
  if r ~= "mean" and r ~= "sum" and r ~= "none" then
    fail(fname, (type(r) == "string" and r or typename(r)) .. " is not a valid value for reduction")
  end
  return r
end
local function reduce(loss, r)
  if r == "mean" then return T.mean(loss) elseif r == "sum" then return T.sum(loss) end
  return loss
end

-- the old loss form f(input, target, "sum") is kept: a string is the reduction
local function loss_opts(o) if type(o) == "string" then return { reduction = o } end return o end

local function shape_str(s) return "[" .. table.concat(s, ", ") .. "]" end
local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- a tensor from a value for which PyTorch takes a Python scalar or a tensor
local function inplace_result(x, y, inplace)
  if inplace then x:copy_(y) return x end
  return y
end

-- a function with its own backward.  fwd(ctx, ...) runs with grad off;
-- bwd(ctx, g) returns a gradient per argument (nil for non-tensors).
local function custom(name, fwd, bwd)
  return autograd.Function { name = name, forward = fwd, backward = bwd }
end

---------------------------------------------------------------------------
-- linear, embedding, one_hot (kept from the first nn)
---------------------------------------------------------------------------
function F.linear(x, w, b)
  check_t("linear", 1, "input", x)
  check_t("linear", 2, "weight", w)
  check_t("linear", 3, "bias", b, true)
  -- one gemm with the bias, recorded as one node (T._linear); other forms
  -- (dtypes, shapes, 1-D input) go through matmul + add
  local dt = x.dtype
  if (dt == T.float32 or dt == T.float64) and w.dtype == dt and w:dim() == 2 and x:dim() >= 2
    and (b == nil or (b.dtype == dt and b:dim() == 1 and b:size(1) == w:size(1))) and x:size(-1) == w:size(2) then
    if x:dim() == 2 then return T._linear(x, w, b) end
    if x:is_contiguous() and x:numel() > 0 then
      local shape = x.shape
      shape[#shape] = w:size(1)
      return T._linear(x:reshape({ -1, x:size(-1) }), w, b):reshape(shape)
    end
  end
  local out = T.matmul(x, w:t())
  if b ~= nil then out = out + b end
  return out
end

function F.bilinear(x1, x2, w, b)
  check_t("bilinear", 1, "input1", x1)
  check_t("bilinear", 2, "input2", x2)
  check_t("bilinear", 3, "weight", w)
  check_t("bilinear", 4, "bias", b, true)
  -- y_k = x1 W_k x2^T + b_k
  local lead = {}
  for i = 1, x1:dim() - 1 do lead[i] = x1:size(i) end
  local a = x1:reshape({ -1, x1:size(-1) })
  local c = x2:reshape({ -1, x2:size(-1) })
  local t = T.matmul(a:unsqueeze(2):unsqueeze(2), w:unsqueeze(1))   -- (N,O,1,I2)
  local y = T.sum(t:squeeze(3) * c:unsqueeze(2), 3)
  if b ~= nil then y = y + b end
  lead[#lead + 1] = w:size(1)
  return y:reshape(lead)
end

function F.embedding(idx, weight, ...)
  check_t("embedding", 1, "input", idx)
  check_t("embedding", 2, "weight", weight)
  local o = parse("embedding", 3, { "padding_idx" }, ...)
  check_int("embedding", 3, "padding_idx", o.padding_idx, true)
  if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == T.bool then
    arg_fail("embedding", 1, "input", "expected an integer tensor of indices, got " .. idx.dtype.name)
  end
  local out = weight[idx]
  if o.padding_idx ~= nil and o.padding_idx < 0 then o.padding_idx = weight:size(1) + o.padding_idx + 1 end
  if o.padding_idx ~= nil and out.requires_grad then
    -- the padding row gets no gradient: route its lookups through a detached copy
    local pad = T.eq(idx, o.padding_idx):unsqueeze(-1)
    out = T.where(pad, out:detach(), out)
  end
  return out
end

-- a bool mask (target's shape with C inserted at class_dim) selecting each target's class
local function class_mask(target, C, class_dim, nd)
  local shape = {}
  for i = 1, nd do shape[i] = 1 end
  shape[class_dim] = C
  return T.eq(target:unsqueeze(class_dim), T.arange(1, C + 1):reshape(shape))
end

function F.one_hot(t, num_classes)
  check_t("one_hot", 1, "input", t)
  if num_classes == -1 then num_classes = nil end
  check_int("one_hot", 2, "num_classes", num_classes, true)
  if t.dtype ~= T.int64 then fail("one_hot", "one_hot is only applicable to index tensor of type int64") end
  if num_classes == nil then
    if t:numel() == 0 then fail("one_hot", "Can not infer total number of classes from empty tensor.") end
    num_classes = T.amax(t):item()
  end
  if t:numel() > 0 then
    local lo, hi = T.amin(t):item(), T.amax(t):item()
    if lo < 1 then fail("one_hot", "Class values must be positive (1-based).") end
    if hi > num_classes then fail("one_hot", "Class values must not exceed num_classes.") end
  end
  return class_mask(t, num_classes, t:dim() + 1, t:dim() + 1):to(T.int64)
end

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
function F.softmax(x, dim, ...)
  if is_opts(dim) then return F.softmax(x, nil, dim) end
  local o = parse("softmax", 3, { "_stacklevel", "dtype" }, ...)
  check_t("softmax", 1, "input", x)
  if o.dtype then x = x:to(o.dtype) end
  return T.softmax(x, dim_arg("softmax", x, dim))
end
function F.log_softmax(x, dim, ...)
  if is_opts(dim) then return F.log_softmax(x, nil, dim) end
  local o = parse("log_softmax", 3, { "_stacklevel", "dtype" }, ...)
  check_t("log_softmax", 1, "input", x)
  if o.dtype then x = x:to(o.dtype) end
  return T.log_softmax(x, dim_arg("log_softmax", x, dim))
end
function F.softmin(x, dim, ...)
  if is_opts(dim) then return F.softmin(x, nil, dim) end
  local o = parse("softmin", 3, { "_stacklevel", "dtype" }, ...)
  check_t("softmin", 1, "input", x)
  if o.dtype then x = x:to(o.dtype) end
  return T.softmax(-x, dim_arg("softmin", x, dim))
end

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
local SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
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
  else
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
function F.hardsigmoid(x, ...)
  local o = parse("hardsigmoid", 2, INPLACE, ...)
  check_t("hardsigmoid", 1, "input", x)
  check_float("hardsigmoid", x)
  return inplace_result(x, Hardsigmoid(x), o.inplace)
end
function F.hardswish(x, ...)
  local o = parse("hardswish", 2, INPLACE, ...)
  check_t("hardswish", 1, "input", x)
  check_float("hardswish", x)
  return inplace_result(x, Hardswish(x), o.inplace)
end
function F.mish(x, ...)
  local o = parse("mish", 2, INPLACE, ...)
  check_t("mish", 1, "input", x)
  check_float("mish", x)
  return inplace_result(x, x * T.tanh(Softplus(x, 1, 20)), o.inplace)
end
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
function F.hardshrink(x, ...)
  local o = parse("hardshrink", 2, { "lambd" }, ...)
  check_t("hardshrink", 1, "input", x)
  check_float("hardshrink", x)
  local l = o.lambd or 0.5
  check_num("hardshrink", 2, "lambd", l)
  return T.where(dead_zone(x, l), 0, x)
end
function F.softshrink(x, ...)
  local o = parse("softshrink", 2, { "lambd" }, ...)
  check_t("softshrink", 1, "input", x)
  check_float("softshrink", x)
  local l = o.lambd or 0.5
  check_num("softshrink", 2, "lambd", l)
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

---------------------------------------------------------------------------
-- dropout
---------------------------------------------------------------------------
local function check_p(fname, p)
  check_num(fname, 2, "p", p)
  if not (p >= 0 and p <= 1) then fail(fname, "dropout probability has to be between 0 and 1, but got " .. p) end
end
local DROPOUT = { "p", "training", "inplace" }
local function bernoulli_keep(shape, p, dtype)
  return T.no_grad(function() return T.ge(T.rand(shape), p):to(dtype) end)
end
function F.dropout(x, ...)
  local o = parse("dropout", 2, DROPOUT, ...)
  local p, training = o.p or 0.5, o.training
  if training == nil then training = true end
  check_t("dropout", 1, "input", x)
  check_p("dropout", p)
  if not training or p == 0 then return x end
  local y
  if p == 1 then y = x * 0
  else y = x * (bernoulli_keep(x.shape, p, x.dtype) * (1 / (1 - p))) end
  return inplace_result(x, y, o.inplace)
end
-- whole channels dropped: the mask is (N, C, 1, ...) (or (C, 1, ...) for an
-- unbatched input of one dim fewer than batched_dim)
local function feature_dropout(fname, x, o, batched_dim)
  local p, training = o.p or 0.5, o.training
  if training == nil then training = true end
  check_t(fname, 1, "input", x)
  check_p(fname, p)
  if not training or p == 0 then return x end
  local nd = x:dim()
  if nd < 2 then fail(fname, "Feature dropout requires at least 2 dimensions in the input") end
  local shape = {}
  -- batched_dim nil: always (N, C, ...), as 1.13's dropout2d (a 3-D input is (N, C, L))
  local batched = batched_dim == nil or nd == batched_dim
  for i = 1, nd do shape[i] = 1 end
  if batched then shape[1], shape[2] = x:size(1), x:size(2) else shape[1] = x:size(1) end
  local y
  if p == 1 then y = x * 0
  else y = x * (bernoulli_keep(shape, p, x.dtype) * (1 / (1 - p))) end
  return inplace_result(x, y, o.inplace)
end
function F.dropout1d(x, ...)
  local o = parse("dropout1d", 2, DROPOUT, ...)
  check_t("dropout1d", 1, "input", x)
  if x:dim() ~= 2 and x:dim() ~= 3 then
    fail("dropout1d", "dropout1d: Expected 2D or 3D input, but received a " .. x:dim() .. "D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
  end
  return feature_dropout("dropout1d", x, o, 3)
end
function F.dropout2d(x, ...)
  local o = parse("dropout2d", 2, DROPOUT, ...)
  check_t("dropout2d", 1, "input", x)
  return feature_dropout("dropout2d", x, o, nil)
end
function F.dropout3d(x, ...)
  local o = parse("dropout3d", 2, DROPOUT, ...)
  check_t("dropout3d", 1, "input", x)
  return feature_dropout("dropout3d", x, o, 5)
end
-- alpha dropout keeps SELU's self-normalising mean and variance
local function alpha_dropout(fname, x, o, feature)
  local p, training = o.p or 0.5, o.training
  if training == nil then training = false end
  check_t(fname, 1, "input", x)
  check_p(fname, p)
  if not training or p == 0 then return x end
  if p == 1 then return inplace_result(x, x * 0, o.inplace) end
  -- PyTorch's constants: keep with prob 1 - p, x * a * keep + b,
  -- b = (keep - 1) alpha a + alpha a p, alpha = SELU's scale * alpha
  local alpha = SELU_ALPHA * SELU_SCALE
  local a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
  local shape = x.shape
  if feature then
    shape = {}
    for i = 1, x:dim() do shape[i] = i <= 2 and x:size(i) or 1 end
  end
  local keep = bernoulli_keep(shape, p, x.dtype)
  local b = (keep - 1) * (alpha * a) + alpha * a * p
  return inplace_result(x, x * (keep * a) + b, o.inplace)
end
function F.alpha_dropout(x, ...)
  return alpha_dropout("alpha_dropout", x, parse("alpha_dropout", 2, DROPOUT, ...), false)
end
function F.feature_alpha_dropout(x, ...)
  return alpha_dropout("feature_alpha_dropout", x, parse("feature_alpha_dropout", 2, DROPOUT, ...), true)
end

---------------------------------------------------------------------------
-- losses
---------------------------------------------------------------------------
local LOSS = { "size_average", "reduce", "reduction" }

local function loss_pair(fname, input, target, nlabel)
  check_t(fname, 1, "input", input)
  check_t(fname, 2, nlabel or "target", target)
end

function F.mse_loss(input, target, ...)
  loss_pair("mse_loss", input, target)
  local o = parse("mse_loss", 3, LOSS, loss_opts(...))
  local d = input - target
  return reduce(d * d, reduction_of("mse_loss", o.reduction))
end
function F.l1_loss(input, target, ...)
  loss_pair("l1_loss", input, target)
  local o = parse("l1_loss", 3, LOSS, loss_opts(...))
  return reduce(T.abs(input - target), reduction_of("l1_loss", o.reduction))
end

-- huber: 0.5 d^2 for |d| < delta, delta (|d| - delta/2) beyond
function F.huber_loss(input, target, ...)
  loss_pair("huber_loss", input, target)
  local o = parse("huber_loss", 3, { "reduction", "delta" }, loss_opts(...))
  local r = reduction_of("huber_loss", o.reduction)
  local delta = o.delta or 1.0
  check_num("huber_loss", 3, "delta", delta)
  if not (delta > 0) then fail("huber_loss", "huber_loss does not support non-positive values for delta.") end
  local d = input - target
  local ad = T.abs(d)
  return reduce(T.where(T.lt(ad, delta), d * d * 0.5, (ad - 0.5 * delta) * delta), r)
end
-- smooth_l1 with beta = 0 is |x - y|, its gradient PyTorch's kernel's:
-- -g where x - y <= 0 (an exact tie included), g where it is >= 0, and
-- (x - y) g / 0 otherwise (NaN); the target's the same with the roles swapped
local function l1_beta0_grad(d, g)
  return T.where(T.le(d, 0), -g, T.where(T.ge(d, 0), g, d * g / 0))
end
local SmoothL1Beta0 = custom("SmoothL1LossBackward0", function(ctx, a, b)
  local d = a - b
  ctx:save_for_backward(d)
  return T.abs(d)
end, function(ctx, g)
  local d = ctx.saved_tensors[1]
  return l1_beta0_grad(d, g), l1_beta0_grad(-d, g)
end)
function F.smooth_l1_loss(input, target, ...)
  loss_pair("smooth_l1_loss", input, target)
  local o = parse("smooth_l1_loss", 3, { "size_average", "reduce", "reduction", "beta" }, loss_opts(...))
  local r = reduction_of("smooth_l1_loss", o.reduction)
  local beta = o.beta or 1.0
  check_num("smooth_l1_loss", 3, "beta", beta)
  if beta < 0 then fail("smooth_l1_loss", "smooth_l1_loss does not support negative values for beta.") end
  if beta == 0 then return reduce(SmoothL1Beta0(input, target), r) end
  local d = input - target
  local ad = T.abs(d)
  return reduce(T.where(T.lt(ad, beta), d * d * (0.5 / beta), ad - 0.5 * beta), r)
end

-- kl_div(input, target): input holds log-probabilities; the target
-- probabilities (log_target: log-probabilities).  reduction "batchmean"
-- divides the sum by the batch size.
function F.kl_div(input, target, ...)
  loss_pair("kl_div", input, target)
  local o = parse("kl_div", 3, { "size_average", "reduce", "reduction", "log_target" }, loss_opts(...))
  local r = o.reduction or "mean"
  if r ~= "batchmean" then r = reduction_of("kl_div", r) end
  local l
  if o.log_target then
    l = T.exp(target) * (target - input)
  else
    l = T.xlogy(target, target) - target * input
  end
  if r == "batchmean" then
    if input:dim() == 0 then return T.sum(l) end
    return T.sum(l) / input:size(1)
  end
  return reduce(l, r)
end

-- class-index checks shared by nll_loss and cross_entropy
local function nll_checks(fname, input, target, weight)
  if not is_t(target) or target.dtype.is_floating_point or target.dtype == T.bool or target.dtype.is_complex then
    fail(fname, "expected target to be an int64 tensor of class indices")
  end
  local nd = input:dim()
  if nd < 1 then fail(fname, "input tensor should be 1D or more") end
  local class_dim = nd == 1 and 1 or 2
  local C = input:size(class_dim)
  if nd == 1 or nd == 2 then
    if target:dim() > 1 then fail(fname, "0D or 1D target tensor expected, multi-target not supported") end
    if nd == 2 and target:size(1) ~= input:size(1) then
      fail(fname, ("Expected input batch_size (%d) to match target batch_size (%d)."):format(input:size(1), target:size(1)))
    end
    if nd == 1 and target:dim() ~= 0 then
      fail(fname, ("Expected input batch_size (1) to match target batch_size (%d)."):format(target:size(1)))
    end
  else
    if target:dim() ~= nd - 1 then
      fail(fname, ("Expected target dimensions (%d) to match input dimensions (%d), got target dims %d"):format(nd - 1, nd, target:dim()))
    end
    local ok = target:size(1) == input:size(1)
    for i = 3, nd do if target:size(i - 1) ~= input:size(i) then ok = false end end
    if not ok then
      local want = { input:size(1) }
      for i = 3, nd do want[#want + 1] = input:size(i) end
      fail(fname, ("expected target size %s, got %s"):format(shape_str(want), shape_str(target.shape)))
    end
  end
  if weight ~= nil then
    check_t(fname, 3, "weight", weight)
    if weight:numel() ~= C then
      fail(fname, ("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %s"):format(C, shape_str(weight.shape)))
    end
  end
  return nd, class_dim, C
end
local function check_targets(fname, target, C, ignore)
  if target:numel() == 0 then return end
  T.no_grad(function()
    local bad = T.logical_or(T.lt(target, 1), T.gt(target, C))
    if ignore ~= nil then bad = T.logical_and(bad, T.ne(target, ignore)) end
    if T.any(bad):item() then
      -- the first offending target, as PyTorch's loop reports it
      fail(fname, "Target " .. T.masked_select(target, bad)[1]:item() .. " is out of bounds. (class targets are 1-based: 1.." .. C .. ")")
    end
  end)
end

local NLL = { "weight", "size_average", "ignore_index", "reduce", "reduction" }

-- nll_loss(input, target [, weight] [, opts]): input (C), (N, C) or
-- (N, C, d1, ...) log-probabilities; target (), (N) or (N, d1, ...) int64
-- classes in 1..C.  opts: reduction, weight (C), ignore_index (1-based,
-- like the targets; default none).  "mean" divides by the summed weights of
-- the counted targets.
local function nll_composite(input, target, weight, ignore, r, class_dim, C, nd)
  local mask = class_mask(target, C, class_dim, nd)
  if ignore ~= nil then mask = T.logical_and(mask, T.ne(target, ignore):unsqueeze(class_dim)) end
  local picked = T.sum(T.where(mask, input, 0), class_dim)
  local w
  if weight ~= nil then
    local shape = {}
    for i = 1, nd do shape[i] = 1 end
    shape[class_dim] = C
    w = T.sum(T.where(mask, weight:reshape(shape):to(input.dtype), 0), class_dim)
  elseif ignore ~= nil then
    w = T.any(mask, class_dim):to(input.dtype)
  end
  local loss = w and -(picked * w) or -picked
  if r == "none" then return loss end
  if r == "sum" then return T.sum(loss) end
  if w then return T.sum(loss) / T.sum(w) end
  return T.mean(loss)
end
F._nll_composite = nll_composite

function F.nll_loss(input, target, ...)
  check_t("nll_loss", 1, "input", input)
  local o = parse("nll_loss", 3, NLL, loss_opts(...))
  local r = reduction_of("nll_loss", o.reduction)
  check_int("nll_loss", 3, "ignore_index", o.ignore_index, true)
  local nd, class_dim, C = nll_checks("nll_loss", input, target, o.weight)
  -- the fused kernel checks the targets itself, in the same words
  local fused = F._nll_fused and F._nll_fused(input, target, o.weight, o.ignore_index, r, false)
  if fused then return fused end
  check_targets("nll_loss", target, C, o.ignore_index)
  return nll_composite(input, target, o.weight, o.ignore_index, r, class_dim, C, nd)
end

-- cross_entropy(input, target [, weight] [, opts]): log_softmax over the
-- class dim then nll_loss; a floating target of input's shape holds class
-- probabilities.  opts: reduction, weight, ignore_index, label_smoothing.
function F.cross_entropy(input, target, ...)
  check_t("cross_entropy", 1, "input", input)
  local o = parse("cross_entropy", 3, { "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing" },
    loss_opts(...))
  local r = reduction_of("cross_entropy", o.reduction)
  local ls = o.label_smoothing or 0
  check_num("cross_entropy", 3, "label_smoothing", ls)
  if not (ls >= 0 and ls <= 1) then
    fail("cross_entropy", "label_smoothing must be between 0.0 and 1.0. Got: " .. ls)
  end
  check_t("cross_entropy", 3, "weight", o.weight, true)
  local nd = input:dim()
  if nd < 1 then fail("cross_entropy", "input tensor should be 1D or more") end
  local class_dim = nd == 1 and 1 or 2
  local C = input:size(class_dim)
  local wshape
  if o.weight ~= nil then
    if o.weight:numel() ~= C then
      fail("cross_entropy", ("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %s"):format(C, shape_str(o.weight.shape)))
    end
    wshape = {}
    for i = 1, nd do wshape[i] = 1 end
    wshape[class_dim] = C
  end
  if is_t(target) and target.dtype.is_floating_point then
    -- class probabilities
    if not same_shape(target.shape, input.shape) then
      fail("cross_entropy", ("Expected target size %s, got %s"):format(shape_str(input.shape), shape_str(target.shape)))
    end
    check_float("cross_entropy", input, "log_softmax")
    local logp = T.log_softmax(input, class_dim)
    if ls > 0 then target = target * (1 - ls) + ls / C end
    local lw = logp * target
    if wshape then lw = lw * o.weight:reshape(wshape):to(input.dtype) end
    local loss = -T.sum(lw, class_dim)
    if r == "mean" then
      if input:numel() == 0 then return T.sum(loss) / 0 end
      return T.sum(loss) / (input:numel() / C)
    end
    return reduce(loss, r)
  end
  check_int("cross_entropy", 3, "ignore_index", o.ignore_index, true)
  nll_checks("nll_loss", input, target, o.weight)
  check_float("cross_entropy", input, "log_softmax")
  local ignore = o.ignore_index
  local loss
  local logp
  if F._nll_fused and ls == 0 then
    local fused = F._nll_fused(input, target, o.weight, ignore, r, true)
    if fused then return fused end
  end
  check_targets("nll_loss", target, C, o.ignore_index)
  logp = T.log_softmax(input, class_dim)
  loss = nll_composite(logp, target, o.weight, ignore, r, class_dim, C, nd)
  if ls > 0 then
    -- PyTorch 1.13: (1 - ls) * nll + ls / C * smooth, smooth = -sum_c w_c logp_c
    -- over the counted targets, "mean" divided as nll's mean is
    local lw = logp
    if wshape then lw = lw * o.weight:reshape(wshape):to(input.dtype) end
    local smooth = -T.sum(lw, class_dim)
    local keep
    if ignore ~= nil then
      keep = T.ne(target, ignore)
      smooth = T.where(keep, smooth, 0)
    end
    local sm
    if r == "none" then sm = smooth
    elseif r == "sum" then sm = T.sum(smooth)
    else
      local denom
      if o.weight ~= nil then
        local safe = keep and T.where(keep, target, 1) or target
        local wt = o.weight:to(input.dtype)[safe:reshape({ -1 })]
        if keep then wt = T.where(keep:reshape({ -1 }), wt, 0) end
        denom = T.sum(wt)
      elseif keep then
        denom = T.sum(keep):to(input.dtype)
      else
        denom = target:numel()
      end
      sm = T.sum(smooth) / denom
    end
    loss = loss * (1 - ls) + sm * (ls / C)
  end
  return loss
end

local function check_same_size(fname, input, target)
  if not same_shape(input.shape, target.shape) then
    fail(fname, ("Using a target size (%s) that is different to the input size (%s) is deprecated. Please ensure they have the same size."):format(
      shape_str(target.shape), shape_str(input.shape)))
  end
end

-- binary_cross_entropy: logs clamped at -100 as PyTorch's; its own backward
-- (x - t) / max(x (1 - x), 1e-12) so that 0 and 1 give finite gradients
local BCE = custom("BinaryCrossEntropyBackward0", function(ctx, x, t)
  local lx = T.clamp_min(T.log(x), -100)
  local l1x = T.clamp_min(T.log(-x + 1), -100)
  ctx:save_for_backward(x, t)
  return -(t * lx + (-t + 1) * l1x)
end, function(ctx, g)
  local s = ctx.saved_tensors
  local x, t = s[1], s[2]
  local gx, gt
  if ctx.needs_input_grad[1] then gx = g * (x - t) / T.clamp_min(x * (-x + 1), 1e-12) end
  if ctx.needs_input_grad[2] then
    gt = g * (T.clamp_min(T.log(-x + 1), -100) - T.clamp_min(T.log(x), -100))
  end
  return gx, gt
end)
function F.binary_cross_entropy(input, target, ...)
  loss_pair("binary_cross_entropy", input, target)
  local o = parse("binary_cross_entropy", 3, { "weight", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("binary_cross_entropy", o.reduction)
  check_t("binary_cross_entropy", 3, "weight", o.weight, true)
  check_same_size("binary_cross_entropy", input, target)
  check_float("binary_cross_entropy", input)
  if input:numel() > 0 then
    T.no_grad(function()
      if T.any(T.logical_or(T.lt(input, 0), T.gt(input, 1))):item() then
        fail("binary_cross_entropy", "all elements of input should be between 0 and 1")
      end
    end)
  end
  local l = BCE(input, target)
  if o.weight ~= nil then l = l * o.weight end
  return reduce(l, r)
end

-- with logits: (1 - t) x + lw (log1p(exp(-|x|)) + max(-x, 0)), lw = 1 + (pw - 1) t;
-- its own backward, exact at x = 0 where abs and max have kinks
local BCEL = custom("BinaryCrossEntropyWithLogitsBackward0", function(ctx, x, t, pw)
  local sp = T.log1p(T.exp(-T.abs(x))) + T.clamp_min(-x, 0)   -- softplus(-x)
  local l
  if pw ~= nil then
    local lw = (pw - 1) * t + 1
    l = (-t + 1) * x + lw * sp
  else
    l = (-t + 1) * x + sp
  end
  ctx:save_for_backward(x, t, pw)
  return l
end, function(ctx, g)
  local s = ctx.saved_tensors
  local x, t, pw = s[1], s[2], s[3]
  local gx, gt, gpw
  local sig = T.sigmoid(x)
  if ctx.needs_input_grad[1] then
    if pw ~= nil then
      local lw = (pw - 1) * t + 1
      -- d/dx [(1 - t) x + lw softplus(-x)] = (1 - t) - lw (1 - sigmoid(x))
      gx = g * ((-t + 1) - lw * (-sig + 1))
    else
      gx = g * (sig - t)
    end
  end
  if ctx.needs_input_grad[2] then
    if pw ~= nil then
      local sp = T.log1p(T.exp(-T.abs(x))) + T.clamp_min(-x, 0)
      gt = g * (-x + (pw - 1) * sp)
    else
      gt = g * -x
    end
  end
  if pw ~= nil and ctx.needs_input_grad[3] then
    local sp = T.log1p(T.exp(-T.abs(x))) + T.clamp_min(-x, 0)
    gpw = g * t * sp
  end
  return gx, gt, gpw
end)
function F.binary_cross_entropy_with_logits(input, target, ...)
  loss_pair("binary_cross_entropy_with_logits", input, target)
  local o = parse("binary_cross_entropy_with_logits", 3,
    { "weight", "size_average", "reduce", "reduction", "pos_weight" }, loss_opts(...))
  local r = reduction_of("binary_cross_entropy_with_logits", o.reduction)
  check_t("binary_cross_entropy_with_logits", 3, "weight", o.weight, true)
  check_t("binary_cross_entropy_with_logits", 3, "pos_weight", o.pos_weight, true)
  check_float("binary_cross_entropy_with_logits", input)
  if not same_shape(input.shape, target.shape) then
    fail("binary_cross_entropy_with_logits", ("Target size (%s) must be the same as input size (%s)"):format(
      shape_str(target.shape), shape_str(input.shape)))
  end
  local l = BCEL(input, target, o.pos_weight)
  if o.weight ~= nil then l = l * o.weight end
  return reduce(l, r)
end

function F.soft_margin_loss(input, target, ...)
  loss_pair("soft_margin_loss", input, target)
  local o = parse("soft_margin_loss", 3, LOSS, loss_opts(...))
  local r = reduction_of("soft_margin_loss", o.reduction)
  check_float("soft_margin_loss", input)
  return reduce(Softplus(-target * input, 1, math.huge), r)
end

function F.margin_ranking_loss(x1, x2, target, ...)
  check_t("margin_ranking_loss", 1, "input1", x1)
  check_t("margin_ranking_loss", 2, "input2", x2)
  check_t("margin_ranking_loss", 3, "target", target)
  local o = parse("margin_ranking_loss", 4, { "margin", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("margin_ranking_loss", o.reduction)
  local m = o.margin or 0
  check_num("margin_ranking_loss", 4, "margin", m)
  if x1:dim() ~= x2:dim() or x1:dim() ~= target:dim() then
    fail("margin_ranking_loss", ("margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: %s, input2: %s, target: %s "):format(
      shape_str(x1.shape), shape_str(x2.shape), shape_str(target.shape)))
  end
  return reduce(T.clamp_min(-target * (x1 - x2) + m, 0), r)
end

function F.hinge_embedding_loss(input, target, ...)
  loss_pair("hinge_embedding_loss", input, target)
  local o = parse("hinge_embedding_loss", 3, { "margin", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("hinge_embedding_loss", o.reduction)
  local m = o.margin or 1.0
  local zeros = T.zeros_like(input)
  local margin_clamp = T.clamp_min(-input + m, 0)
  local out_margin = T.where(T.ne(target, 1), margin_clamp, zeros)
  local out_self = T.where(T.ne(target, -1), input, zeros)
  return reduce(out_margin + out_self, r)
end

-- cosine_embedding_loss(x1, x2, y): 1 - cos for y = 1, max(0, cos - margin) for y = -1
function F.cosine_embedding_loss(x1, x2, target, ...)
  local fname = "cosine_embedding_loss"
  check_t(fname, 1, "input1", x1)
  check_t(fname, 2, "input2", x2)
  check_t(fname, 3, "target", target)
  local o = parse(fname, 4, { "margin", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local margin = o.margin or 0
  check_num(fname, 4, "margin", margin)
  local td = target:dim()
  if td == 1 then
    if x1:dim() ~= 2 or x2:dim() ~= 2 then
      fail(fname, ("1D target tensor expects 2D input tensors, but found inputs with sizes %s and %s."):format(shape_str(x1.shape), shape_str(x2.shape)))
    end
  elseif td == 0 then
    if x1:dim() ~= 1 or x2:dim() ~= 1 then
      fail(fname, ("0D target tensor expects 1D input tensors, but found inputs with sizes %s and %s."):format(shape_str(x1.shape), shape_str(x2.shape)))
    end
  else
    fail(fname, "0D or 1D target tensor expected, multi-target not supported")
  end
  local EPS12 = 1e-12
  local dim = td + 1
  local prod = T.sum(x1 * x2, dim)
  local m1 = T.sum(x1 * x1, dim) + EPS12
  local m2 = T.sum(x2 * x2, dim) + EPS12
  local cos = prod / T.sqrt(m1 * m2)
  local pos = T.where(T.eq(target, 1), -cos + 1, 0)
  local neg = T.where(T.eq(target, -1), T.clamp_min(cos - margin, 0), 0)
  return reduce(pos + neg, r)
end

-- pairwise_distance(x1, x2 [, p [, eps [, keepdim]]]): ||x1 - x2 + eps||_p over the last dim
function F.pairwise_distance(x1, x2, ...)
  check_t("pairwise_distance", 1, "x1", x1)
  check_t("pairwise_distance", 2, "x2", x2)
  local o = parse("pairwise_distance", 3, { "p", "eps", "keepdim" }, ...)
  local p, eps = o.p or 2.0, o.eps or 1e-6
  local d = x1 - x2 + eps
  local nd = math.max(x1:dim(), x2:dim())
  if nd == 0 then return T.norm(d:reshape({ 1 }), p, 1, o.keepdim or false) end
  return T.norm(d, p, -1, o.keepdim or false)
end

function F.cosine_similarity(x1, x2, ...)
  check_t("cosine_similarity", 1, "x1", x1)
  check_t("cosine_similarity", 2, "x2", x2)
  local o = parse("cosine_similarity", 3, { "dim", "eps" }, ...)
  local dim, eps = o.dim or 2, o.eps or 1e-8
  if math.type(dim) ~= "integer" then fail("cosine_similarity", "dim must be an integer, got " .. typename(dim)) end
  -- PyTorch 1.13.1: each input divided by its own norm, clamped at eps,
  -- then the dot product: sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))).
  -- Tiny vectors keep their true cosine (norms above eps are untouched)
  -- and the result stays within [-1, 1].  As there, the clamp changes the
  -- norm's value but not its gradient (a clone clamped in place without
  -- grad): below eps the norm is n - n + eps, the second n detached.
  x1, x2 = T.broadcast_tensors(x1, x2)
  local function unit(x)
    local n = T.linalg.vector_norm(x, 2, dim, true)
    local nd = n:detach()
    return x / T.where(T.lt(nd, eps), n - nd + eps, n)
  end
  return T.sum(unit(x1) * unit(x2), dim)
end

function F.triplet_margin_loss(a, p, n, ...)
  local fname = "triplet_margin_loss"
  check_t(fname, 1, "anchor", a)
  check_t(fname, 2, "positive", p)
  check_t(fname, 3, "negative", n)
  local o = parse(fname, 4, { "margin", "p", "eps", "swap", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local margin, pn, eps = o.margin or 1.0, o.p or 2, o.eps or 1e-6
  check_num(fname, 4, "margin", margin)
  check_num(fname, 5, "p", pn)
  local ad, pd, ndim = a:dim(), p:dim(), n:dim()
  if ad ~= pd or pd ~= ndim then
    fail(fname, ("The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor %dD, positive %dD, and negative %dD inputs"):format(ad, pd, ndim))
  end
  if ad ~= 1 and ad ~= 2 then
    fail(fname, ("The anchor, positive, and negative tensors are expected to be 1D or 2D, but got: anchor %dD, positive %dD, and negative %dD inputs"):format(ad, pd, ndim))
  end
  local dpos = F.pairwise_distance(a, p, pn, eps)
  local dneg = F.pairwise_distance(a, n, pn, eps)
  if o.swap then dneg = T.minimum(dneg, F.pairwise_distance(p, n, pn, eps)) end
  return reduce(T.clamp_min(dpos - dneg + margin, 0), r)
end

function F.poisson_nll_loss(input, target, ...)
  loss_pair("poisson_nll_loss", input, target)
  local o = parse("poisson_nll_loss", 3, { "log_input", "full", "size_average", "eps", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("poisson_nll_loss", o.reduction)
  local log_input = o.log_input
  if log_input == nil then log_input = true end
  local eps = o.eps or 1e-8
  local l
  if log_input then l = T.exp(input) - target * input
  else l = input - target * T.log(input + eps) end
  if o.full then
    -- Stirling's term for target > 1: t log t - t + 0.5 log(2 pi t)
    local big = T.gt(target, 1)
    local ts = T.where(big, target, 1)
    local st = ts * T.log(ts) - ts + T.log(ts * (2 * math.pi)) * 0.5
    l = l + T.where(big, st, 0)
  end
  return reduce(l, r)
end

function F.gaussian_nll_loss(input, target, var, ...)
  local fname = "gaussian_nll_loss"
  check_t(fname, 1, "input", input)
  check_t(fname, 2, "target", target)
  check_t(fname, 3, "var", var)
  local o = parse(fname, 4, { "full", "eps", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local eps = o.eps or 1e-6
  -- var of input's shape, or input's shape with the last dim 1 or dropped
  if not same_shape(var.shape, input.shape) then
    local ish = input.shape
    local vsh = var.shape
    if #vsh == #ish - 1 or (#ish == 0) then
      var = var:unsqueeze(-1)
    elseif not (#vsh == #ish and vsh[#vsh] == 1) then
      fail(fname, "var is of incorrect size")
    end
    vsh = var.shape
    for i = 1, #ish - 1 do
      if vsh[i] ~= ish[i] then fail(fname, "var is of incorrect size") end
    end
  end
  if T.no_grad(function() return T.any(T.lt(var, 0)):item() end) then fail(fname, "var has negative entry/entries") end
  -- clamp without cutting the gradient, as PyTorch's in-place clamp under no_grad
  local vc = var + T.no_grad(function() return T.clamp_min(var, eps) - var end)
  local d = input - target
  local l = (T.log(vc) + d * d / vc) * 0.5
  if o.full then l = l + 0.5 * math.log(2 * math.pi) end
  return reduce(l, r)
end

-- multi_margin_loss(input (N, C) or (C), target (N) or () 1-based classes
-- [, {p=1, margin=1, weight=}]): sum over i ~= y of max(0, margin - x_y + x_i)^p w_y / C
function F.multi_margin_loss(input, target, ...)
  local fname = "multi_margin_loss"
  loss_pair(fname, input, target)
  local o = parse(fname, 3, { "p", "margin", "weight", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local p, margin = o.p or 1, o.margin or 1
  if p ~= 1 and p ~= 2 then fail(fname, "only p == 1 and p == 2 supported") end
  check_num(fname, 4, "margin", margin)
  check_t(fname, 5, "weight", o.weight, true)
  check_float(fname, input, "multi_margin_loss_cpu")
  local unbatched = input:dim() <= 1
  local x = unbatched and input:reshape({ 1, -1 }) or input
  if x:dim() ~= 2 then fail(fname, "inconsistent input size, expected 1D or 2D input, got " .. input:dim() .. "D") end
  local N, C = x:size(1), x:size(2)
  local t = target:reshape({ -1 })
  if t:numel() ~= N then
    fail(fname, ("inconsistent target size, expected %d but got %s"):format(N, shape_str(target.shape)))
  end
  if target.dtype.is_floating_point or target.dtype == T.bool then fail(fname, "expected an int64 target of class indices") end
  check_targets(fname, t, C, nil)
  if o.weight ~= nil and o.weight:numel() ~= C then fail(fname, "inconsistent weight size, expected " .. C .. " but got " .. shape_str(o.weight.shape)) end
  local ti = t:to(T.int64):unsqueeze(2)
  local z = T.clamp_min(x - T.gather(x, 2, ti) + margin, 0)
  if p == 2 then z = z * z end
  if o.weight ~= nil then z = z * o.weight:to(x.dtype)[t:to(T.int64)]:unsqueeze(2) end
  local hot = T.eq(ti, T.arange(1, C + 1):reshape({ 1, C }))
  local l = T.sum(T.where(hot, 0, z), 2) / C
  if unbatched then l = l:reshape(target.shape) end
  return reduce(l, r)
end

-- multilabel_margin_loss(input (N, C) or (C), target of input's shape): each
-- row of target lists 1-based classes, ended by the first entry < 1 (PyTorch's
-- -1 padding, shifted); sum over listed j and unlisted i of max(0, 1 - (x_j - x_i)) / C
function F.multilabel_margin_loss(input, target, ...)
  local fname = "multilabel_margin_loss"
  loss_pair(fname, input, target)
  local o = parse(fname, 3, LOSS, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  check_float(fname, input, "multilabel_margin_loss_forward_out_frame")
  if not same_shape(input.shape, target.shape) then
    fail(fname, ("inconsistent target size: %s for input of size: %s"):format(shape_str(target.shape), shape_str(input.shape)))
  end
  if target.dtype.is_floating_point or target.dtype == T.bool then fail(fname, "expected an int64 target of class indices") end
  local unbatched = input:dim() <= 1
  local x = unbatched and input:reshape({ 1, -1 }) or input
  local t = (unbatched and target:reshape({ 1, -1 }) or target):to(T.int64)
  local C = x:size(2)
  local valid = T.no_grad(function() return T.cumprod(T.ge(t, 1):to(T.int64), 2):to(T.bool) end)
  if T.any(T.logical_and(valid, T.gt(t, C))):item() then fail(fname, "target index out of range") end
  local tc = T.clamp(t, 1, math.max(C, 1))
  local cls = T.arange(1, C + 1):reshape({ 1, 1, C })
  local is_target = T.any(T.logical_and(T.eq(tc:unsqueeze(3), cls), valid:unsqueeze(3)), 2)   -- (N, C)
  local xj = T.gather(x, 2, tc):unsqueeze(3)                                                    -- (N, C_j, 1)
  local z = T.clamp_min(x:unsqueeze(2) - xj + 1, 0)                                             -- (N, C_j, C_i)
  local keep = T.logical_and(valid:unsqueeze(3), T.logical_not(is_target):unsqueeze(2))
  local l = T.sum(T.where(keep, z, 0), { 2, 3 }) / C
  if unbatched then l = l:reshape({}) end
  return reduce(l, r)
end

function F.multilabel_soft_margin_loss(input, target, ...)
  loss_pair("multilabel_soft_margin_loss", input, target)
  local o = parse("multilabel_soft_margin_loss", 3, { "weight", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("multilabel_soft_margin_loss", o.reduction)
  local l = -(target * F.logsigmoid(input) + (-target + 1) * F.logsigmoid(-input))
  if o.weight ~= nil then l = l * o.weight end
  local C = input:size(-1)
  l = T.sum(l, -1) / C
  return reduce(l, r)
end

-- ctc_loss(log_probs, targets, input_lengths, target_lengths [, {blank=1,
-- reduction="mean", zero_infinity=false}]): connectionist temporal
-- classification, as PyTorch 1.13's (alpha-beta recursions over time, in
-- log space, vectorised over the batch and the extended label positions).
-- log_probs (T, N, C) or (T, C); targets (N, S) padded or the concatenated
-- 1-D targets; lengths as tensors or Lua lists.  Classes and blank are
-- 1-based.  The gradient is PyTorch's: exp(lp) - exp(lcab + nll - lp).
local NEG_INF = -math.huge
local function lse3(a, b, c)
  local m = T.maximum(T.maximum(a, b), c)
  local ms = T.where(T.eq(m, NEG_INF), 0, m)
  return ms + T.log(T.exp(a - ms) + T.exp(b - ms) + T.exp(c - ms))
end
local function shift_right(x, k, fill)   -- x[..., s - k], fill for s <= k
  local L = x:size(-1)
  if k >= L then return T.full_like(x, fill) end
  local pad = T.full_like(x:narrow(-1, 1, k), fill)
  return T.cat({ pad, x:narrow(-1, 1, L - k) }, -1)
end
local function shift_left(x, k, fill)    -- x[..., s + k]
  local L = x:size(-1)
  if k >= L then return T.full_like(x, fill) end
  local pad = T.full_like(x:narrow(-1, 1, k), fill)
  return T.cat({ x:narrow(-1, k + 1, L - k), pad }, -1)
end

local CTC = custom("CtcLossBackward0", function(ctx, lp, lab, allow2, valid, ilen, slen, zero_inf)
  -- lp (T, N, C); lab (N, L') extended labels; allow2 (N, L') the s-2 skip;
  -- valid (N, L') positions inside 2 S_n + 1; ilen, slen (N) int64
  local Tn, N = lp:size(1), lp:size(2)
  local Lp = lab:size(2)
  local lpe = T.gather(lp, 3, lab:unsqueeze(1):expand({ Tn, N, Lp }))   -- (T, N, L')
  local first = T.lt(T.arange(1, Lp + 1):reshape({ 1, Lp }), 3)
  local alpha = T.where(T.logical_and(first, valid), lpe[1], NEG_INF)
  local alphas = { alpha }
  for t = 2, Tn do
    local new = lse3(alpha, shift_right(alpha, 1, NEG_INF), T.where(allow2, shift_right(alpha, 2, NEG_INF), NEG_INF)) + lpe[t]
    new = T.where(valid, new, NEG_INF)
    alpha = T.where(T.lt(ilen, t):unsqueeze(2), alpha, new)   -- frozen past the input's end
    alphas[t] = alpha
  end
  -- the last two positions 2 S_n + 1 and 2 S_n (1-based)
  local last = (slen * 2 + 1):unsqueeze(2)
  local a1 = T.gather(alpha, 2, last):squeeze(2)
  local a2 = T.where(T.gt(slen, 0), T.gather(alpha, 2, T.clamp_min(last - 1, 1)):squeeze(2), NEG_INF)
  local loss = -lse3(a1, a2, T.full_like(a1, NEG_INF))
  if T.any(T.eq(ilen, 0)):item() then
    loss = T.where(T.eq(ilen, 0), T.where(T.eq(slen, 0), 0, math.huge), loss)
  end
  local inf = T.isinf(loss)
  if zero_inf then loss = T.where(inf, 0, loss) end
  ctx:save_for_backward(lp)
  ctx.lpe, ctx.alphas, ctx.lab, ctx.allow2, ctx.valid, ctx.ilen, ctx.slen = lpe, alphas, lab, allow2, valid, ilen, slen
  ctx.nll, ctx.inf, ctx.zero_inf = loss, inf, zero_inf
  return loss
end, function(ctx, g)
  local lp = ctx.saved_tensors[1]
  local lpe, alphas, lab, allow2, valid, ilen, slen = ctx.lpe, ctx.alphas, ctx.lab, ctx.allow2, ctx.valid, ctx.ilen, ctx.slen
  return T.no_grad(function()
    local Tn, N, C = lp:size(1), lp:size(2), lp:size(3)
    local Lp = lab:size(2)
    local pos = T.arange(1, Lp + 1):reshape({ 1, Lp })
    local last = (slen * 2 + 1):unsqueeze(2)
    local ends = T.logical_and(T.logical_or(T.eq(pos, last), T.eq(pos, last - 1)), valid)
    local allow2_next = shift_left(allow2, 2, false)   -- may s jump to s + 2?
    local beta
    local ab = {}
    for t = Tn, 1, -1 do
      local init = T.where(ends, lpe[t], NEG_INF)
      local rec
      if beta then
        rec = lse3(beta, shift_left(beta, 1, NEG_INF), T.where(allow2_next, shift_left(beta, 2, NEG_INF), NEG_INF)) + lpe[t]
        rec = T.where(valid, rec, NEG_INF)
      else
        rec = T.full_like(init, NEG_INF)
      end
      local at_end = T.eq(ilen, t):unsqueeze(2)
      local inside = T.gt(ilen, t):unsqueeze(2)
      beta = T.where(at_end, init, T.where(inside, rec, NEG_INF))
      ab[t] = alphas[t] + beta
    end
    local abs = T.stack(ab, 1)                                           -- (T, N, L')
    local m = T.amax(abs, 3, true)
    local ms = T.where(T.eq(m, NEG_INF), 0, m)
    local e = T.exp(abs - ms)
    local sums = T.scatter_add(T.zeros({ Tn, N, C }, { dtype = lp.dtype }), 3, lab:unsqueeze(1):expand({ Tn, N, Lp }), e)
    local lcab = T.log(sums) + ms
    local nll = ctx.nll:reshape({ 1, N, 1 })
    local grad = T.exp(lp) - T.exp(lcab + nll - lp)
    local tpos = T.arange(1, Tn + 1):reshape({ Tn, 1, 1 })
    local live = T.le(tpos, ilen:reshape({ 1, N, 1 }))
    if ctx.zero_inf then live = T.logical_and(live, T.logical_not(ctx.inf):reshape({ 1, N, 1 })) end
    grad = T.where(live, grad, 0) * g:reshape({ 1, N, 1 })
    return grad
  end)
end)

local function lengths_of(fname, name, v, N, n)
  if is_t(v) then
    if v.dtype.is_floating_point or v.dtype == T.bool then arg_fail(fname, n, name, "expected an integer tensor") end
    v = v:to(T.int64):reshape({ -1 })
  elseif type(v) == "table" then
    v = T.tensor(#v > 0 and v or {}, { dtype = T.int64 }):reshape({ -1 })
  elseif math.type(v) == "integer" then
    v = T.tensor({ v }, { dtype = T.int64 })
  else
    arg_fail(fname, n, name, "tensor or table of integers expected, got " .. typename(v))
  end
  if v:numel() ~= N then fail(fname, name .. " must be of size batch_size") end
  return v
end

function F.ctc_loss(log_probs, targets, input_lengths, target_lengths, ...)
  local fname = "ctc_loss"
  check_t(fname, 1, "log_probs", log_probs)
  check_t(fname, 2, "targets", targets)
  local o = parse(fname, 5, { "blank", "reduction", "zero_infinity" }, ...)
  local r = reduction_of(fname, o.reduction)
  local blank = o.blank or 1
  check_int(fname, 5, "blank", blank)
  check_float(fname, log_probs, "ctc_loss_cpu")
  local unbatched = log_probs:dim() == 2
  if unbatched then
    log_probs = log_probs:unsqueeze(2)
    targets = targets:unsqueeze(1)
  end
  if log_probs:dim() ~= 3 then fail(fname, "log_probs must be 2-D (T, C) or 3-D (T, N, C)") end
  local Tn, N, C = log_probs:size(1), log_probs:size(2), log_probs:size(3)
  if blank < 1 or blank > C then fail(fname, "blank must be in label range") end
  local ilen = lengths_of(fname, "input_lengths", input_lengths, N, 3)
  local slen = lengths_of(fname, "target_lengths", target_lengths, N, 4)
  if targets.dtype.is_floating_point or targets.dtype == T.bool then
    arg_fail(fname, 2, "targets", "expected an integer tensor of class indices")
  end
  local il, sl = ilen:totable(), slen:totable()
  local smax = 0
  for n = 1, N do
    if il[n] < 0 or il[n] > Tn then
      fail(fname, ("Expected input_lengths to have value at most %d, but got value %d"):format(Tn, il[n]))
    end
    if sl[n] < 0 then fail(fname, "target_lengths must be non-negative") end
    smax = math.max(smax, sl[n])
  end
  -- the padded (N, smax) targets
  local tg
  if targets:dim() == 1 and not unbatched then
    local total = 0
    for n = 1, N do total = total + sl[n] end
    if targets:numel() < total then
      fail(fname, ("Expected tensor to have size at least %d at dimension 1, but got size %d for argument #2 'targets'"):format(total, targets:numel()))
    end
    local rows, off = {}, 0
    local flat = targets:to(T.int64)
    for n = 1, N do
      local row = T.full({ smax }, blank, { dtype = T.int64 })
      if sl[n] > 0 then row:narrow(1, 1, sl[n]):copy_(flat:narrow(1, off + 1, sl[n])) end
      off = off + sl[n]
      rows[n] = row
    end
    tg = N > 0 and T.stack(rows, 1) or T.zeros({ 0, smax }, { dtype = T.int64 })
  else
    if targets:dim() ~= 2 or targets:size(1) ~= N then fail(fname, "targets must be (N, S) or 1-D") end
    if targets:size(2) < smax then
      fail(fname, ("Expected tensor to have size at least %d at dimension 2, but got size %d for argument #2 'targets'"):format(smax, targets:size(2)))
    end
    tg = targets:to(T.int64):narrow(2, 1, smax)
  end
  local Lp = 2 * smax + 1
  local pos = T.arange(1, Lp + 1):reshape({ 1, Lp })
  local odd = T.eq(T.remainder(pos, 2), 0)                 -- 1-based even positions hold labels
  local lab
  if smax > 0 then
    local idx = T.clamp(T.div(pos, 2, { rounding_mode = "floor" }), 1, smax):expand({ N, Lp })
    lab = T.where(odd, T.gather(tg, 2, idx), blank)
  else
    lab = T.full({ N, Lp }, blank, { dtype = T.int64 })
  end
  if smax > 0 then
    local used = T.logical_and(odd, T.le(pos, (slen * 2):unsqueeze(2)))
    local bad = T.logical_and(used, T.logical_or(T.lt(lab, 1), T.gt(lab, C)))
    if T.any(bad):item() then fail(fname, "target index out of range") end
  end
  local allow2 = T.logical_and(T.logical_and(T.ne(lab, blank), T.gt(pos, 2)), T.ne(lab, shift_right(lab, 2, blank)))
  local valid = T.le(pos, (slen * 2 + 1):unsqueeze(2))
  local loss = CTC(log_probs, lab, allow2, valid, ilen, slen, o.zero_infinity and true or false)
  if unbatched then loss = loss:squeeze(1) end
  if r == "mean" then
    return T.mean(loss / T.clamp_min(slen, 1):to(loss.dtype):reshape(loss.shape))
  end
  return reduce(loss, r)
end

---------------------------------------------------------------------------
-- normalisation
---------------------------------------------------------------------------
local function stat_dims(nd, from)   -- {from, ..., nd}
  local d = {}
  for i = from, nd do d[#d + 1] = i end
  return d
end
-- a (1, C, 1, ...) view of a per-channel vector for an nd-dim input
local function chan(v, nd, dtype)
  if v == nil then return nil end
  local shape = { 1 }
  for i = 2, nd do shape[i] = 1 end
  shape[2] = v:numel()
  v = v:reshape(shape)
  if dtype and v.dtype ~= dtype then v = v:to(dtype) end
  return v
end

-- the composite forms (differentiable by construction); the fused C kernels
-- replace them where they apply (see the bottom of this file)
local function norm_composite(x, dims, eps, w, b)
  local mu = T.mean(x, dims, true)
  local xc = x - mu
  local var = T.mean(xc * xc, dims, true)
  local y = xc * T.rsqrt(var + eps)
  if w ~= nil then y = y * w end
  if b ~= nil then y = y + b end
  return y, mu, var
end
F._norm_composite = norm_composite

local function check_vec(fname, n, name, v, C)
  if v == nil then return end
  check_t(fname, n, name, v)
  if v:numel() ~= C then
    fail(fname, ("%s should contain %d elements not %d"):format(name, C, v:numel()))
  end
end

-- batch_norm(x, running_mean, running_var [, weight [, bias]] [, opts]):
-- opts training (false), momentum (0.1), eps (1e-5).  Training normalises
-- with the batch statistics and, when running stats are given, updates them
-- in place: r = (1 - m) r + m stat, the variance unbiased.
function F.batch_norm(x, rm, rv, ...)
  local fname = "batch_norm"
  check_t(fname, 1, "input", x)
  local o = parse(fname, 4, { "weight", "bias", "training", "momentum", "eps" }, ...)
  local w, b = o.weight, o.bias
  local training = o.training or false
  local momentum = o.momentum
  if momentum == nil then momentum = 0.1 end
  local eps = o.eps or 1e-5
  check_t(fname, 2, "running_mean", rm, true)
  check_t(fname, 3, "running_var", rv, true)
  check_bool(fname, 6, "training", training)
  check_num(fname, 7, "momentum", momentum)
  check_num(fname, 8, "eps", eps)
  check_float(fname, x, "batch_norm")
  local nd = x:dim()
  if nd < 2 then
    fail(fname, ("Expected 2D or more input (got %dD input)"):format(nd))
  end
  local C = x:size(2)
  check_vec(fname, 2, "running_mean", rm, C)
  check_vec(fname, 3, "running_var", rv, C)
  check_vec(fname, 4, "weight", w, C)
  check_vec(fname, 5, "bias", b, C)
  if training then
    local per = math.floor(x:numel() / math.max(C, 1))
    if per <= 1 and x:numel() > 0 then
      fail(fname, ("Expected more than 1 value per channel when training, got input size %s"):format(shape_str(x.shape)))
    end
  elseif rm == nil or rv == nil then
    fail(fname, "running_mean and running_var must be defined in evaluation mode")
  end
  local fused = F._bn_fused and x:numel() > 0 and F._bn_fused(x, rm, rv, w, b, training, momentum, eps)
  if fused then return fused end
  local dims = { 1 }
  for i = 3, nd do dims[#dims + 1] = i end
  local dt = x.dtype
  if training then
    local y, mu, var = norm_composite(x, dims, eps, chan(w, nd, dt), chan(b, nd, dt))
    if rm ~= nil or rv ~= nil then
      local n = math.floor(x:numel() / C)
      T.no_grad(function()
        if rm ~= nil then rm:mul_(1 - momentum):add_(mu:detach():reshape({ C }):to(rm.dtype) * momentum) end
        if rv ~= nil then
          local unb = var:detach():reshape({ C }) * (n / math.max(n - 1, 1))
          rv:mul_(1 - momentum):add_(unb:to(rv.dtype) * momentum)
        end
      end)
    end
    return y
  end
  local fe = F._bn_eval_fused and x:numel() > 0 and F._bn_eval_fused(x, rm, rv, w, b, eps)
  if fe then return fe end
  local y = (x - chan(rm, nd, dt)) * T.rsqrt(chan(rv, nd, dt) + eps)
  if w ~= nil then y = y * chan(w, nd, dt) end
  if b ~= nil then y = y + chan(b, nd, dt) end
  return y
end

-- instance_norm(x [, running_mean, running_var, weight, bias] [, opts]):
-- each (sample, channel) plane normalised over its spatial dims.
function F.instance_norm(x, ...)
  local fname = "instance_norm"
  check_t(fname, 1, "input", x)
  local o = parse(fname, 2, { "running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps" }, ...)
  local rm, rv, w, b = o.running_mean, o.running_var, o.weight, o.bias
  local use_input_stats = o.use_input_stats
  if use_input_stats == nil then use_input_stats = true end
  local momentum, eps = o.momentum or 0.1, o.eps or 1e-5
  check_float(fname, x, "instance_norm")
  local nd = x:dim()
  if nd < 3 then
    fail(fname, ("Expected 3D or more input (got %dD input)"):format(nd))
  end
  local N, C = x:size(1), x:size(2)
  check_vec(fname, 2, "running_mean", rm, C)
  check_vec(fname, 3, "running_var", rv, C)
  check_vec(fname, 4, "weight", w, C)
  check_vec(fname, 5, "bias", b, C)
  if use_input_stats then
    local per = math.floor(x:numel() / math.max(N * C, 1))
    if per <= 1 and x:numel() > 0 then
      fail(fname, ("Expected more than 1 spatial element when training, got input size %s"):format(shape_str(x.shape)))
    end
  end
  -- as PyTorch: batch_norm over the (1, N*C, spatial...) reshape
  local shape = x.shape
  local rs = { 1, N * C }
  for i = 3, nd do rs[i] = shape[i] end
  local xr = x:reshape(rs)
  local rm2, rv2
  if rm ~= nil then rm2 = rm:unsqueeze(1):expand({ N, C }):reshape({ N * C }):clone() end
  if rv ~= nil then rv2 = rv:unsqueeze(1):expand({ N, C }):reshape({ N * C }):clone() end
  local w2 = w and w:unsqueeze(1):expand({ N, C }):reshape({ N * C }) or nil
  local b2 = b and b:unsqueeze(1):expand({ N, C }):reshape({ N * C }) or nil
  local y = F.batch_norm(xr, rm2, rv2, w2, b2, { training = use_input_stats, momentum = momentum, eps = eps })
  if use_input_stats then
    T.no_grad(function()
      if rm ~= nil then rm:copy_(T.mean(rm2:reshape({ N, C }), 1)) end
      if rv ~= nil then rv:copy_(T.mean(rv2:reshape({ N, C }), 1)) end
    end)
  end
  return y:reshape(shape)
end

local function check_normalized_shape(fname, x, shape)
  local k = #shape
  local nd = x:dim()
  local ok = k >= 1 and nd >= k
  if ok then
    for i = 1, k do if x:size(nd - k + i) ~= shape[i] then ok = false end end
  end
  if not ok then
    local want = { "*" }
    for i = 1, k do want[#want + 1] = tostring(shape[i]) end
    fail(fname, ("Given normalized_shape=%s, expected input with shape %s, but got input of size%s"):format(
      shape_str(shape), "[" .. table.concat(want, ", ") .. "]", shape_str(x.shape)))
  end
end
local function shape_arg(fname, s)
  if math.type(s) == "integer" then return { s } end
  if type(s) ~= "table" or is_t(s) then
    arg_fail(fname, 2, "normalized_shape", "integer or table of integers expected, got " .. typename(s))
  end
  for i = 1, #s do
    if math.type(s[i]) ~= "integer" then arg_fail(fname, 2, "normalized_shape", "integer or table of integers expected") end
  end
  return s
end
local function check_affine(fname, n, name, v, shape)
  if v == nil then return end
  check_t(fname, n, name, v)
  if not same_shape(v.shape, shape) then
    fail(fname, ("Expected %s to be of same shape as normalized_shape, but got %s of shape %s and normalized_shape = %s"):format(
      name, name, shape_str(v.shape), shape_str(shape)))
  end
end

-- layer_norm(x, normalized_shape [, weight [, bias [, eps]]] [, {eps=}])
function F.layer_norm(x, normalized_shape, ...)
  local fname = "layer_norm"
  check_t(fname, 1, "input", x)
  local shape = shape_arg(fname, normalized_shape)
  local o = parse(fname, 3, { "weight", "bias", "eps" }, ...)
  local w, b, eps = o.weight, o.bias, o.eps or 1e-5
  check_num(fname, 5, "eps", eps)
  check_affine(fname, 3, "weight", w, shape)
  check_affine(fname, 4, "bias", b, shape)
  check_normalized_shape(fname, x, shape)
  check_float(fname, x, "LayerNormKernelImpl")
  local fused = F._ln_fused and x:numel() > 0 and F._ln_fused(x, #shape, w, b, eps)
  if fused then return fused end
  local k = #shape
  local dims = {}
  for i = 1, k do dims[i] = x:dim() - k + i end
  return (norm_composite(x, dims, eps, w, b))
end

-- rms_norm(x, normalized_shape [, weight] [, {eps=}]): x rsqrt(mean(x^2) + eps) weight,
-- eps the dtype's machine epsilon by default (PyTorch 2.x)
function F.rms_norm(x, normalized_shape, ...)
  local fname = "rms_norm"
  check_t(fname, 1, "input", x)
  local shape = shape_arg(fname, normalized_shape)
  local o = parse(fname, 3, { "weight", "eps" }, ...)
  local w, eps = o.weight, o.eps
  check_num(fname, 4, "eps", eps, true)
  check_affine(fname, 3, "weight", w, shape)
  check_normalized_shape(fname, x, shape)
  check_float(fname, x, "rms_norm")
  if eps == nil then eps = EPS[x.dtype.name] or EPS.float32 end
  local k = #shape
  local dims = {}
  for i = 1, k do dims[i] = x:dim() - k + i end
  local y = x * T.rsqrt(T.mean(x * x, dims, true) + eps)
  if w ~= nil then y = y * w end
  return y
end

-- group_norm(x, num_groups [, weight [, bias]] [, {eps=}])
function F.group_norm(x, num_groups, ...)
  local fname = "group_norm"
  check_t(fname, 1, "input", x)
  check_int(fname, 2, "num_groups", num_groups)
  local o = parse(fname, 3, { "weight", "bias", "eps" }, ...)
  local w, b, eps = o.weight, o.bias, o.eps or 1e-5
  check_num(fname, 5, "eps", eps)
  local nd = x:dim()
  if nd < 2 then fail(fname, ("Expected at least 2 dimensions for input tensor but received %d"):format(nd)) end
  local N, C = x:size(1), x:size(2)
  if num_groups <= 0 or C % num_groups ~= 0 then
    fail(fname, ("Expected number of channels in input to be divisible by num_groups, but got input of shape %s and num_groups=%d"):format(
      shape_str(x.shape), num_groups))
  end
  if w ~= nil then
    check_t(fname, 3, "weight", w)
    if w:dim() ~= 1 or w:numel() ~= C then
      fail(fname, ("Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape %s and input of shape %s"):format(shape_str(w.shape), shape_str(x.shape)))
    end
  end
  if b ~= nil then
    check_t(fname, 4, "bias", b)
    if b:dim() ~= 1 or b:numel() ~= C then
      fail(fname, ("Expected bias to be a vector of size equal to the number of channels in input, but got bias of shape %s and input of shape %s"):format(shape_str(b.shape), shape_str(x.shape)))
    end
  end
  check_float(fname, x, "GroupNormKernelImpl")
  local fused = F._gn_fused and x:numel() > 0 and F._gn_fused(x, num_groups, w, b, eps)
  if fused then return fused end
  local shape = x.shape
  local xr = x:reshape({ N, num_groups, math.floor(C / num_groups) * math.floor(x:numel() / math.max(N * C, 1)) })
  local y = norm_composite(xr, { 3 }, eps):reshape(shape)
  local dt = x.dtype
  if w ~= nil then y = y * chan(w, nd, dt) end
  if b ~= nil then y = y + chan(b, nd, dt) end
  return y
end

-- local_response_norm(x, size [, alpha, beta, k]): across channels
function F.local_response_norm(x, size, ...)
  local fname = "local_response_norm"
  check_t(fname, 1, "input", x)
  check_int(fname, 2, "size", size)
  -- PyTorch's message comes from the avg_pool3d it runs; a size below 1 would
  -- leave the sliding sum empty here
  if size < 1 then fail(fname, ("kernel size should be greater than zero, but got size: %d"):format(size)) end
  local o = parse(fname, 3, { "alpha", "beta", "k" }, ...)
  local alpha, beta, k = o.alpha or 1e-4, o.beta or 0.75, o.k or 1.0
  local nd = x:dim()
  if nd < 3 then
    fail(fname, ("Expected 3D or higher dimensionality input (got %d dimensions)"):format(nd))
  end
  if x:numel() == 0 then return x end
  local C = x:size(2)
  local sq = x * x
  -- zero-pad the channel dim by size/2 before and (size-1)/2 after, then a
  -- sliding sum of width `size`
  local before, after = math.floor(size / 2), math.floor((size - 1) / 2)
  local zs = x.shape
  local parts = {}
  if before > 0 then zs[2] = before parts[#parts + 1] = T.zeros(zs, { dtype = x.dtype }) end
  parts[#parts + 1] = sq
  if after > 0 then
    local za = x.shape za[2] = after
    parts[#parts + 1] = T.zeros(za, { dtype = x.dtype })
  end
  local padded = #parts > 1 and T.cat(parts, 2) or sq
  local acc
  for i = 1, size do
    local s = padded:narrow(2, i, C)
    acc = acc and acc + s or s
  end
  local div = T.pow(acc * (alpha / size) + k, beta)
  return x / div
end

-- normalize(x [, {p=2, dim=2, eps=1e-12}]): x / max(||x||_p, eps) along dim
function F.normalize(x, ...)
  local fname = "normalize"
  check_t(fname, 1, "input", x)
  local o = parse(fname, 2, { "p", "dim", "eps", "out" }, ...)
  local p, dim, eps = o.p or 2.0, o.dim or 2, o.eps or 1e-12
  check_num(fname, 2, "p", p)
  check_int(fname, 3, "dim", dim)
  if x:dim() == 0 then dim = 1 x = x:reshape({ 1 }) end
  local n = T.norm(x, p, dim, true)
  return x / T.clamp_min(n, eps):expand_as(x)
end

---------------------------------------------------------------------------
-- attention
---------------------------------------------------------------------------
-- scaled_dot_product_attention(q, k, v [, attn_mask] [, {attn_mask=, dropout_p=,
-- is_causal=, scale=}]): softmax(q k^T scale + mask) v over batched leading
-- dims (PyTorch 2.x).  A bool mask: true attends; a float mask is added;
-- is_causal masks above the top-left-aligned diagonal.
function F.scaled_dot_product_attention(q, k, v, ...)
  local fname = "scaled_dot_product_attention"
  check_t(fname, 1, "query", q)
  check_t(fname, 2, "key", k)
  check_t(fname, 3, "value", v)
  local o = parse(fname, 4, { "attn_mask", "dropout_p", "is_causal", "scale" }, ...)
  local mask, dp, causal, scale = o.attn_mask, o.dropout_p or 0.0, o.is_causal, o.scale
  check_t(fname, 4, "attn_mask", mask, true)
  check_num(fname, 5, "dropout_p", dp)
  check_num(fname, 7, "scale", scale, true)
  if q:dim() < 2 or k:dim() < 2 or v:dim() < 2 then
    fail(fname, ("Expected query, key and value to have at least 2 dimensions, but got query.dim: %d, key.dim: %d and value.dim: %d instead."):format(q:dim(), k:dim(), v:dim()))
  end
  check_float(fname, q, "scaled_dot_product_attention")
  if q.dtype ~= k.dtype or q.dtype ~= v.dtype then
    fail(fname, ("Expected query, key, and value to have the same dtype, but got query.dtype: %s key.dtype: %s and value.dtype: %s instead."):format(
      q.dtype.name, k.dtype.name, v.dtype.name))
  end
  local E = q:size(-1)
  if k:size(-1) ~= E then
    fail(fname, ("Expected query and key to have the same last dimension (embedding size), but got %d and %d"):format(E, k:size(-1)))
  end
  if k:size(-2) ~= v:size(-2) then
    fail(fname, ("Expected key and value to have the same sequence length, but got %d and %d"):format(k:size(-2), v:size(-2)))
  end
  if causal and mask ~= nil then
    fail(fname, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
  end
  local L, S = q:size(-2), k:size(-2)
  if scale == nil then scale = E > 0 and 1 / math.sqrt(E) or 1 end
  local att = T.matmul(q, k:transpose(-2, -1)) * scale
  if causal then
    local keep = T.no_grad(function()
      local i = T.arange(1, L + 1):reshape({ L, 1 })
      local j = T.arange(1, S + 1):reshape({ 1, S })
      return T.ge(i, j)
    end)
    att = T.masked_fill(att, T.logical_not(keep), -math.huge)
  elseif mask ~= nil then
    if mask.dtype == T.bool then
      att = T.masked_fill(att, T.logical_not(mask), -math.huge)
    else
      att = att + mask
    end
  end
  att = T.softmax(att, -1)
  if dp > 0 then att = F.dropout(att, dp, true) end
  return T.matmul(att, v)
end

---------------------------------------------------------------------------
-- fused C kernels (src/l_nnfused.c) and their backward rules
---------------------------------------------------------------------------
-- The kernels take contiguous float32/float64 tensors; other dtypes keep the
-- composite forms above.  Each rule's backward runs the fused C backward,
-- except under create_graph (grad mode on while backward runs), where it
-- uses the same formula written in differentiable ops, the statistics
-- recomputed from x so that second derivatives are right.
local rules = autograd.rules
local FUSED = { float32 = true, float64 = true }

local function need(n, i)   -- does input i want a gradient? (autograd.lua's need)
  local m = n.need
  if m == nil then return true end
  if math.type(m) == "integer" then return compat.bit(m, i) end
  return m[i] == true
end

-- the differentiable backward of y = (x - mean) rstd w + b, x viewed as xv
-- with statistics over `dims`; w viewed as wv (nil: no weight), its
-- gradient summed over `wdims`
local function norm_backward_composite(xv, gv, dims, wv, wdims, eps)
  local mu = T.mean(xv, dims, true)
  local xc = xv - mu
  local rs = T.rsqrt(T.mean(xc * xc, dims, true) + eps)
  local xh = xc * rs
  local gw = wv and gv * wv or gv
  local dx = rs * (gw - T.mean(gw, dims, true) - xh * T.mean(gw * xh, dims, true))
  return dx, T.sum(gv * xh, wdims), T.sum(gv, wdims)
end

-- rows (layer and group norm): y, mean, rstd = _norm_rows(x, w, b, R, D, eps, G, Cg, S)
local function rows_bw(n, g)
  local s = n.saved
  local x, w, mean, rstd = s[1], s[2], s[3], s[4]
  local nx, nw, nb = need(n, 1), w ~= nil and need(n, 2), n.has_b and need(n, 3)
  if T.is_grad_enabled() then
    local xv, gv, dims, wv, wdims
    if n.G > 0 then
      local N = math.floor(n.R / n.G)
      local sh = { N, n.G, n.Cg, n.S }
      xv, gv, dims, wdims = x:reshape(sh), g:reshape(sh), { 3, 4 }, { 1, 4 }
      wv = w and w:reshape({ 1, n.G, n.Cg, 1 })
    else
      xv, gv, dims, wdims = x:reshape({ n.R, n.D }), g:reshape({ n.R, n.D }), { 2 }, { 1 }
      wv = w and w:reshape({ 1, n.D })
    end
    local dx, dw, db = norm_backward_composite(xv, gv, dims, wv, wdims, n.eps)
    return nx and dx:reshape(x.shape) or nil, nw and dw:reshape(w.shape) or nil,
      nb and db:reshape(n.b_shape) or nil
  end
  local dx, dw, db = T._norm_rows_backward(g:contiguous(), x, mean, rstd, w, n.R, n.D, n.G, n.Cg, n.S, nx, nw, nb)
  return dx, dw and dw:reshape(w.shape), db and db:reshape(n.b_shape)
end
rules._norm_rows = function(raw, x, w, b, R, D, eps, G, Cg, S)
  local y, mean, rstd = raw(x, w, b, R, D, eps, G, Cg, S)
  return { name = G > 0 and "NativeGroupNormBackward0" or "NativeLayerNormBackward0", inputs = { x, w, b }, ninputs = 3,
    saved = { x, w, mean, rstd, n = 4 }, R = R, D = D, G = G, Cg = Cg, S = S, eps = eps,
    has_b = b ~= nil, b_shape = b and b.shape, nondiff = { [2] = true, [3] = true }, backward = rows_bw }, y, mean, rstd
end

-- channels (batch norm, training): y, mean, rstd, var = _norm_chan(x, w, b, eps)
local function chan_bw(n, g)
  local s = n.saved
  local x, w, mean, rstd = s[1], s[2], s[3], s[4]
  local nx, nw, nb = need(n, 1), w ~= nil and need(n, 2), n.has_b and need(n, 3)
  if T.is_grad_enabled() then
    local N, C = x:size(1), x:size(2)
    local sh = { N, C, math.floor(x:numel() / math.max(N * C, 1)) }
    local dx, dw, db = norm_backward_composite(x:reshape(sh), g:reshape(sh), { 1, 3 }, w and w:reshape({ 1, C, 1 }),
      { 1, 3 }, n.eps)
    return nx and dx:reshape(x.shape) or nil, nw and dw:reshape(w.shape) or nil, nb and db:reshape(n.b_shape) or nil
  end
  local dx, dw, db = T._norm_chan_backward(g:contiguous(), x, mean, rstd, w, nx, nw, nb)
  return dx, dw and dw:reshape(w.shape), db and db:reshape(n.b_shape)
end
rules._norm_chan = function(raw, x, w, b, eps)
  local y, mean, rstd, var = raw(x, w, b, eps)
  return { name = "NativeBatchNormBackward0", inputs = { x, w, b }, ninputs = 3, saved = { x, w, mean, rstd, n = 4 },
    eps = eps, has_b = b ~= nil, b_shape = b and b.shape, nondiff = { [2] = true, [3] = true, [4] = true },
    backward = chan_bw }, y, mean, rstd, var
end

-- cross entropy / nll over rows: loss, lse, wsum = _xent(x, target, w,
-- ignore, with_lse, red): red 0 gives each row's loss, 1 their sum, 2 their
-- mean over the counted weights (sum / wsum), in the one call and node
local function xent_bw(n, g)
  local s = n.saved
  local x, target, w, lse = s[1], s[2], s[3], s[4]
  if n.red ~= 0 then   -- the reduced loss: each row's share of g
    if n.red == 2 then g = g / s[5] end
    g = g:expand({ x:size(1) })
  end
  if T.is_grad_enabled() then
    local K = x:size(2)
    local hot = T.eq(target:unsqueeze(2), T.arange(1, K + 1):reshape({ 1, K }))
    local coef = g
    if w ~= nil then coef = coef * w[target] end
    if n.ignore ~= nil then coef = T.where(T.eq(target, n.ignore), 0, coef) end
    coef = coef:unsqueeze(2)
    if n.with_lse then return coef * (T.softmax(x, 2) - hot:to(x.dtype)) end
    return T.where(hot, -coef, 0)
  end
  return T._xent_backward(g:contiguous(), x, target, w, lse, n.ignore, n.with_lse)
end
rules._xent = function(raw, x, target, w, ignore, with_lse, red)
  local loss, lse, wsum = raw(x, target, w, ignore, with_lse, red)
  return { name = "NllLossBackward0", inputs = { x }, ninputs = 1,
    saved = { x, target, w, lse, wsum, n = 5 }, ignore = ignore, with_lse = with_lse, red = red or 0,
    nondiff = { [2] = true, [3] = true }, backward = xent_bw }, loss, lse, wsum
end

-- relu's backward: one pass in C (the composite under create_graph)
local function relu_bw(n, g)
  local y = n.saved[2]
  -- 0 where y <= 0, else g (a NaN passes g, as PyTorch's threshold_backward)
  if T.is_grad_enabled() or not FUSED[y.dtype.name] then return T.where(T.le(y, 0), T.zeros_like(g), g) end
  return T._threshold_backward(g, y, 0)
end
rules.relu = function(raw, x, ...)
  local y = raw(x, ...)
  return { name = "ReluBackward0", inputs = { x }, saved = { x, y, n = 2 }, backward = relu_bw }, y
end

local function cdt(v, dtype)
  if v == nil then return nil end
  if v.dtype ~= dtype then v = v:to(dtype) end
  return v:contiguous()
end

function F._ln_fused(x, k, w, b, eps)
  if not FUSED[x.dtype.name] then return nil end
  local D = 1
  for i = x:dim() - k + 1, x:dim() do D = D * x:size(i) end
  local y = T._norm_rows(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), math.floor(x:numel() / D), D, eps, 0, 0, 0)
  return y
end

function F._gn_fused(x, G, w, b, eps)
  if not FUSED[x.dtype.name] then return nil end
  local N, C = x:size(1), x:size(2)
  local S = math.floor(x:numel() / (N * C))
  local Cg = math.floor(C / G)
  local y = T._norm_rows(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), N * G, Cg * S, eps, G, Cg, S)
  return y
end

function F._bn_fused(x, rm, rv, w, b, training, momentum, eps)
  if not training or not FUSED[x.dtype.name] then return nil end
  local y, mean, _, var = T._norm_chan(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), eps)
  if rm ~= nil or rv ~= nil then
    local n = math.floor(x:numel() / x:size(2))
    T.no_grad(function()
      if rm ~= nil then rm:mul_(1 - momentum):add_(mean:to(rm.dtype) * momentum) end
      if rv ~= nil then rv:mul_(1 - momentum):add_((var * (n / math.max(n - 1, 1))):to(rv.dtype) * momentum) end
    end)
  end
  return y
end

-- eval batch norm: y = x * scale + shift per channel in one pass, scale and
-- shift folded from the running statistics (the per-frame inference case,
-- where every op's overhead counts)
local function bn_eval_bw(n, g)
  local s = n.saved
  local x, w, scale, rm, rv = s[1], s[2], s[3], s[4], s[5]
  local nd = x:dim()
  local C = x:size(2)
  local sh = { 1, C }
  for i = 3, nd do sh[i] = 1 end
  local dims = { 1 }
  for i = 3, nd do dims[#dims + 1] = i end
  local gx, gw, gb
  if need(n, 1) then gx = g * scale:reshape(sh) end
  if w ~= nil and need(n, 2) then
    gw = T.sum(g * (x - rm:reshape(sh)) * T.rsqrt(rv + n.eps):reshape(sh), dims)
  end
  if n.has_b and need(n, 3) then gb = T.sum(g, dims) end
  return gx, gw, gb
end
rules._norm_chan_eval = function(raw, x, w, b, rm, rv, eps)
  local y, scale = raw(x, w, b, rm, rv, eps)
  return { name = "NativeBatchNormBackward0", inputs = { x, w, b }, ninputs = 3, saved = { x, w, scale, rm, rv, n = 5 },
    eps = eps, has_b = b ~= nil, nondiff = { [2] = true }, backward = bn_eval_bw }, y, scale
end
function F._bn_eval_fused(x, rm, rv, w, b, eps)
  if not FUSED[x.dtype.name] then return nil end
  local y = T._norm_chan_eval(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), cdt(rm, x.dtype), cdt(rv, x.dtype), eps)
  return y
end

local XENT_RED = { none = 0, sum = 1, mean = 2 }
function F._nll_fused(input, target, weight, ignore, r, with_lse)
  if not FUSED[input.dtype.name] then return nil end
  local nd = input:dim()
  local C = input:size(nd == 1 and 1 or 2)
  local x2
  if nd == 1 then x2 = input:reshape({ 1, C })
  elseif nd == 2 then x2 = input
  else x2 = input:movedim(2, -1):reshape({ -1, C }) end
  local t1 = target
  if t1:dim() ~= 1 then t1 = t1:reshape({ -1 }) end
  local red = XENT_RED[r]
  local loss = T._xent(x2:contiguous(), t1:contiguous(), cdt(weight, input.dtype), ignore, with_lse, red)
  if red == 0 then return loss:reshape(target.shape) end
  return loss
end

return F
