-- ltensor.onnx.ops_math -- elementwise, comparison, reduction, matrix and
-- activation operators.  Each entry: builder(node) -> run(x), x holding the
-- node's inputs by position.  Attributes are read and checked by the
-- builder, at load time; run() only composes ltensor ops (so autograd
-- records every step).
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math = compat.math
local F = require "ltensor.nn.functional"
local U = require "ltensor.onnx.util"
local TP = require "ltensor.onnx.tensor"

local O = {}

local function unary(fn)
  return function(node)
    node:allow()
    node:min_inputs(1)
    return function(x) return fn(x[1]) end
  end
end

O.Relu = unary(function(a) return T.relu(a) end)
O.Sigmoid = unary(function(a) return T.sigmoid(a) end)
O.Tanh = unary(function(a) return T.tanh(a) end)
O.Exp = unary(function(a) return T.exp(a) end)
O.Log = unary(function(a) return T.log(a) end)
O.Sqrt = unary(function(a) return T.sqrt(a) end)
O.Neg = unary(function(a) return T.neg(a) end)
O.Abs = unary(function(a) return T.abs(a) end)
O.Erf = unary(function(a) return T.erf(a) end)
O.Reciprocal = unary(function(a) return T.reciprocal(a) end)
O.Floor = unary(function(a) return T.floor(a) end)
O.Ceil = unary(function(a) return T.ceil(a) end)
O.Round = unary(function(a) return T.round(a) end)   -- half to even, as ONNX
O.Sin = unary(function(a) return T.sin(a) end)
O.Cos = unary(function(a) return T.cos(a) end)
O.Tan = unary(function(a) return T.tan(a) end)
O.Asin = unary(function(a) return T.asin(a) end)
O.Acos = unary(function(a) return T.acos(a) end)
O.Atan = unary(function(a) return T.atan(a) end)
O.Sinh = unary(function(a) return T.sinh(a) end)
O.Cosh = unary(function(a) return T.cosh(a) end)
O.Sign = unary(function(a) return T.sign(a) end)
O.Not = unary(function(a) return T.logical_not(a) end)
O.IsNaN = unary(function(a) return T.isnan(a) end)
O.Softsign = unary(function(a) return a / (T.abs(a) + 1) end)
O.Softplus = unary(function(a) return F.softplus(a) end)
O.HardSwish = unary(function(a) return F.hardswish(a) end)
O.Mish = unary(function(a) return F.mish(a) end)
O.Identity = unary(function(a) return a end)

function O.IsInf(node)
  node:allow("detect_negative", "detect_positive")
  local neg, pos = node:int("detect_negative", 1) ~= 0, node:int("detect_positive", 1) ~= 0
  return function(x)
    local a = x[1]
    if neg and pos then return T.isinf(a) end
    if pos then return T.eq(a, math.huge) end
    if neg then return T.eq(a, -math.huge) end
    return T.zeros_like(a, { dtype = T.bool })
  end
end

-- an activation fn(a, alpha) whose one attribute is alpha (default given)
local function with_alpha(fn, default)
  return function(node)
    node:allow("alpha")
    local alpha = node:number("alpha", default)
    return function(x) return fn(x[1], alpha) end
  end
end
O.LeakyRelu = with_alpha(function(a, alpha) return F.leaky_relu(a, alpha) end, 0.01)
O.Elu = with_alpha(function(a, alpha) return F.elu(a, alpha) end, 1.0)
O.Celu = with_alpha(function(a, alpha) return F.celu(a, alpha) end, 1.0)
O.ThresholdedRelu = with_alpha(function(a, alpha) return T.where(T.gt(a, alpha), a, 0) end, 1.0)
function O.Selu(node)
  node:allow("alpha", "gamma")
  local alpha = node:number("alpha", 1.67326319217681884765625)
  local gamma = node:number("gamma", 1.05070102214813232421875)
  return function(x)
    local a = x[1]
    return gamma * T.where(T.gt(a, 0), a, alpha * (T.exp(a) - 1))
  end
end
function O.HardSigmoid(node)
  node:allow("alpha", "beta")
  local alpha, beta = node:number("alpha", 0.2), node:number("beta", 0.5)
  return function(x) return T.clamp(x[1] * alpha + beta, 0, 1) end
end
function O.Gelu(node)   -- opset 20; accepted when a writer emits it
  node:allow("approximate")
  local approx = node:choice("approximate", "none", "none", "tanh")
  return function(x) return F.gelu(x[1], { approximate = approx }) end
end
function O.PRelu(node)
  node:allow()
  node:min_inputs(2)
  return function(x) return T.where(T.lt(x[1], 0), x[1] * x[2], x[1]) end
end

-- binary arithmetic with ONNX's (numpy) broadcasting
local function binary(fn)
  return function(node)
    node:allow()
    node:min_inputs(2)
    return function(x) return fn(x[1], x[2]) end
  end
end
O.Add = binary(function(a, b) return T.add(a, b) end)
O.Sub = binary(function(a, b) return T.sub(a, b) end)
O.Mul = binary(function(a, b) return T.mul(a, b) end)
-- integer Div truncates toward zero (C's rule, as ONNX's reference)
O.Div = binary(function(a, b)
  if not a.dtype.is_floating_point and not a.dtype.is_complex
    and not b.dtype.is_floating_point and not b.dtype.is_complex then
    return T.div(a, b, { rounding_mode = "trunc" })
  end
  return T.div(a, b)
end)
-- Pow's result has the base's type (ONNX), whatever the exponent's
O.Pow = binary(function(a, b)
  local r = T.pow(a, b)
  if r.dtype ~= a.dtype then r = r:to(a.dtype) end
  return r
end)
O.Equal = binary(function(a, b) return T.eq(a, b) end)
O.Less = binary(function(a, b) return T.lt(a, b) end)
O.Greater = binary(function(a, b) return T.gt(a, b) end)
O.LessOrEqual = binary(function(a, b) return T.le(a, b) end)
O.GreaterOrEqual = binary(function(a, b) return T.ge(a, b) end)
O.And = binary(function(a, b) return T.logical_and(a, b) end)
O.Or = binary(function(a, b) return T.logical_or(a, b) end)
O.Xor = binary(function(a, b) return T.logical_xor(a, b) end)
O.BitwiseAnd = binary(function(a, b) return T.bitwise_and(a, b) end)
O.BitwiseOr = binary(function(a, b) return T.bitwise_or(a, b) end)
O.BitwiseXor = binary(function(a, b) return T.bitwise_xor(a, b) end)

function O.Mod(node)
  node:allow("fmod")
  node:min_inputs(2)
  local fmod = node:int("fmod", 0)
  if fmod ~= 0 and fmod ~= 1 then node:fail("attribute fmod=" .. fmod .. " is not supported") end
  return function(x)
    if fmod == 1 then return T.fmod(x[1], x[2]) end
    if x[1].dtype.is_floating_point then U.rfail("fmod=0 needs integer inputs, got " .. tostring(x[1].dtype)) end
    return T.remainder(x[1], x[2])
  end
end

function O.BitShift(node)
  node:allow("direction")
  local dir = node:choice("direction", nil, "LEFT", "RIGHT")
  return function(x)
    if dir == "LEFT" then return T.bitwise_left_shift(x[1], x[2]) end
    return T.bitwise_right_shift(x[1], x[2])
  end
end

-- variadic Sum / Mean / Max / Min (broadcasting all inputs)
local function variadic(fn, finish)
  return function(node)
    node:allow()
    node:min_inputs(1)
    return function(x)
      local acc = x[1]
      for i = 2, x.n do acc = fn(acc, x[i]) end
      if finish then acc = finish(acc, x.n) end
      return acc
    end
  end
end
O.Sum = variadic(function(a, b) return a + b end)
O.Mean = variadic(function(a, b) return a + b end, function(a, n) return a / n end)
O.Max = variadic(function(a, b) return T.maximum(a, b) end)
O.Min = variadic(function(a, b) return T.minimum(a, b) end)

function O.Where(node)
  node:allow()
  node:min_inputs(3)
  return function(x) return T.where(x[1], x[2], x[3]) end
end

-- Clip: bounds as attributes (opset < 11) or optional inputs (>= 11)
function O.Clip(node)
  if node.opset < 11 then
    node:allow("min", "max")
    local lo, hi = node:number("min", nil), node:number("max", nil)
    return function(x) return T.clamp(x[1], lo, hi) end
  end
  node:allow()
  return function(x)
    local a = x[1]
    local lo = x[2] and U.number(x[2], "min")
    local hi = x[3] and U.number(x[3], "max")
    if lo == nil and hi == nil then return a end
    return T.clamp(a, lo, hi)
  end
end

function O.Cast(node)
  node:allow("to", "saturate")
  local code = node:int("to", nil)
  if code == nil then node:fail("attribute 'to' is missing") end
  local dt = TP.DTYPES[code]
  if not dt then node:fail("attribute to=" .. TP.dtype_name(code) .. " is not supported") end
  return function(x)
    if x[1].dtype == dt then return x[1] end
    return x[1]:to(dt)
  end
end
function O.CastLike(node)
  node:allow("saturate")
  node:min_inputs(2)
  return function(x) return x[1]:to(x[2].dtype) end
end

function O.Constant(node)
  node:allow("value", "value_float", "value_floats", "value_int", "value_ints")
  local name = node.attr_names[1]
  if #node.attr_names ~= 1 then node:fail("needs exactly one value attribute") end
  local v
  if name == "value" then v = node:tensor("value")
  elseif name == "value_float" then v = T.tensor(node:float(name), { dtype = T.float32 })
  elseif name == "value_floats" then v = T.tensor(node:floats(name), { dtype = T.float32 }):reshape({ -1 })
  elseif name == "value_int" then v = T.tensor(node:int(name), { dtype = T.int64 })
  else v = T.tensor(node:ints(name), { dtype = T.int64 }):reshape({ -1 }) end
  return function() return v end
end

-- MatMul: numpy's matmul (batched, 1-D operands promoted), as T.matmul
function O.MatMul(node)
  node:allow()
  node:min_inputs(2)
  return function(x) return T.matmul(x[1], x[2]) end
end

function O.Gemm(node)
  node:allow("alpha", "beta", "transA", "transB")
  node:min_inputs(2)
  local alpha, beta = node:number("alpha", 1.0), node:number("beta", 1.0)
  local ta, tb = node:int("transA", 0) ~= 0, node:int("transB", 0) ~= 0
  return function(x)
    local a, b, c = x[1], x[2], x[3]
    if ta then a = a:t() end
    if tb then b = b:t() end
    local y = T.matmul(a, b)
    if alpha ~= 1 then y = y * alpha end
    if c ~= nil and beta ~= 0 then y = y + (beta == 1 and c or c * beta) end
    return y
  end
end

function O.Einsum(node)
  node:allow("equation")
  local eq = node:string("equation", nil)
  if not eq then node:fail("attribute 'equation' is missing") end
  return function(x)
    local args = {}
    for i = 1, x.n do args[i] = x[i] end
    return T.einsum(eq, compat.unpack(args, 1, x.n))
  end
end

-- Softmax / LogSoftmax / Hardmax: opset >= 13 along one axis (default -1);
-- before, the input is seen as 2-D [prod(d < axis), prod(d >= axis)]
local function softmax_like(fn)
  return function(node)
    node:allow("axis")
    local new = node.opset >= 13
    local axis = node:int("axis", new and -1 or 1)
    return function(x)
      local a = x[1]
      local r = a:dim()
      if r == 0 then return fn(a:reshape({ 1 }), 1):reshape({}) end
      local d = U.dim(axis, r)
      if new or d == r then return fn(a, d) end
      local s = a.shape
      return fn(a:reshape({ U.prod(s, 1, d - 1), -1 }), 2):reshape(s)
    end
  end
end
O.Softmax = softmax_like(function(a, d) return T.softmax(a, d) end)
O.LogSoftmax = softmax_like(function(a, d) return T.log_softmax(a, d) end)

-- Reductions: axes as an attribute (ReduceSum from opset 13, the others
-- from 18: an input), keepdims (default 1), noop_with_empty_axes
local function reduce(fn)
  return function(node)
    node:allow("axes", "keepdims", "noop_with_empty_axes")
    local keep = node:int("keepdims", 1) ~= 0
    local noop = node:int("noop_with_empty_axes", 0) ~= 0
    local attr_axes = node:ints("axes", nil)
    local from_input = (node.op == "ReduceSum" and node.opset >= 13) or node.opset >= 18
    if from_input and attr_axes then node:fail("attribute 'axes' is not supported from this opset: axes is an input") end
    return function(x)
      local a = x[1]
      local axes = attr_axes
      if from_input and x[2] then axes = U.ints(x[2], "axes") end
      if axes == nil or #axes == 0 then
        if noop then return a end
        axes = {}
        for i = 1, a:dim() do axes[i] = i - 1 end
      end
      local r = a:dim()
      if r == 0 then return fn(a, nil, false) end
      return fn(a, U.dims(axes, r), keep)
    end
  end
end
local function all_or(dims, a)
  if dims then return dims end
  local out = {}
  for i = 1, a:dim() do out[i] = i end
  return out
end
O.ReduceSum = reduce(function(a, d, k) return T.sum(a, all_or(d, a), k) end)
O.ReduceMean = reduce(function(a, d, k) return T.mean(a, all_or(d, a), k) end)
O.ReduceMax = reduce(function(a, d, k) return T.amax(a, all_or(d, a), k) end)
O.ReduceMin = reduce(function(a, d, k) return T.amin(a, all_or(d, a), k) end)
O.ReduceProd = reduce(function(a, d, k)
  local dims = all_or(d, a)
  table.sort(dims, function(p, q) return p > q end)
  for _, dd in ipairs(dims) do a = T.prod(a, dd, k) end
  return a
end)
O.ReduceSumSquare = reduce(function(a, d, k) return T.sum(a * a, all_or(d, a), k) end)
O.ReduceL1 = reduce(function(a, d, k) return T.sum(T.abs(a), all_or(d, a), k) end)
O.ReduceL2 = reduce(function(a, d, k) return T.sqrt(T.sum(a * a, all_or(d, a), k)) end)
O.ReduceLogSum = reduce(function(a, d, k) return T.log(T.sum(a, all_or(d, a), k)) end)
O.ReduceLogSumExp = reduce(function(a, d, k) return T.logsumexp(a, all_or(d, a), k) end)

-- ArgMax / ArgMin: int64 0-based indices (select_last_index picks the last
-- of equal extremes)
local function arg(which)
  return function(node)
    node:allow("axis", "keepdims", "select_last_index")
    local axis = node:int("axis", 0)
    local keep = node:int("keepdims", 1) ~= 0
    local last = node:int("select_last_index", 0) ~= 0
    return function(x)
      local a = x[1]
      local r = a:dim()
      if r == 0 then a = a:reshape({ 1 }); r = 1 end
      local d = U.dim(axis, r)
      if last then
        local n = a:size(d)
        local i = T[which](T.flip(a, { d }), d, keep)
        return (n - i)   -- flipped 1-based i -> 0-based index n - i
      end
      return T[which](a, d, keep) - 1
    end
  end
end
O.ArgMax = arg("argmax")
O.ArgMin = arg("argmin")

function O.CumSum(node)
  node:allow("exclusive", "reverse")
  node:min_inputs(2)
  local excl, rev = node:int("exclusive", 0) ~= 0, node:int("reverse", 0) ~= 0
  return function(x)
    local a = x[1]
    local d = U.dim(U.number(x[2], "axis"), a:dim())
    if rev then a = T.flip(a, { d }) end
    local y = T.cumsum(a, d)
    if excl then y = y - a end
    if rev then y = T.flip(y, { d }) end
    return y
  end
end

return O
