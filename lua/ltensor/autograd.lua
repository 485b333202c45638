-- ltensor.autograd: the backward rules of reverse-mode differentiation, and
-- the Lua face of the engine in src/l_autograd.c.
--
-- How it hooks in: every differentiable C op is registered with LT_DIFF; when
-- grad mode is on and a tensor argument requires grad, the C trampoline calls
-- the C hook as hook(grad_name, raw_fn, args...) instead of the op.  The hook
-- runs the rule for grad_name from `rules` (an engine plus a table of small
-- rules, as in micrograd/tinygrad):
--
--   rule(raw, args...) -> spec, outputs...
--   spec = { name = "MulBackward0", inputs = {a, b}, saved = {...},
--            backward = function(spec, grad_out...) -> grad per input }
--
-- and the engine turns the spec into a Node (a C userdata): edges to the
-- inputs' nodes, their shapes and dtypes, the saved tensors' versions.  The
-- spec stays the node's Lua half: it loses `inputs` (a graph keeps alive only
-- what backward needs: the `saved` list, freed after backward unless
-- retain_graph) and is what `backward` receives.  Formulas read tensors only
-- through spec.saved so that freeing and version checks (in-place
-- modification of a saved tensor) cover them; need(spec, i) tells whether
-- input i wants a gradient.
--
-- The engine works like PyTorch's: gradients returned for an input are cast to
-- the input's dtype and summed back to its shape (sum_to, broadcasting's
-- backward) in one place, so the formulas below do not do it themselves.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local TMT = T._metatable
local methods = T._methods
local getmeta = T._meta
local set_flag = T._set_requires_grad_flag
local set_grad = T._set_grad_enabled
local is_grad_enabled = T.is_grad_enabled
local pack, unpack, select = table.pack, table.unpack, select
local getmetatable, setmetatable, rawequal, type = getmetatable, setmetatable, rawequal, type

local autograd = {}
T.autograd = autograd

local is_t = util.is_tensor
local fail = util.failer("ltensor.")
-- argument checks in Lua's vocabulary, naming the function
local function argcheck(cond, fname, n, what, v)
  if not cond then fail(fname, ("bad argument #%d (%s expected, got %s)"):format(n, what, type(v))) end
end
local function check_t(fname, n, t) argcheck(is_t(t), fname, n, "tensor", t) end
local function check_opts(fname, n, o) argcheck(o == nil or type(o) == "table", fname, n, "options table", o) end

-- Run f with grad mode b, restoring the previous mode even when f raises.
local function finish_mode(prev, ok, ...)
  set_grad(prev)
  if not ok then error((...), 0) end
  return ...
end
local function with_mode(b, f, ...)
  local prev = set_grad(b)
  return finish_mode(prev, pcall(f, ...))
end

function T.no_grad(f, ...)
  argcheck(type(f) == "function" or (getmetatable(f) or {}).__call, "no_grad", 1, "function", f)
  return with_mode(false, f, ...)
end
function T.enable_grad(f, ...)
  argcheck(type(f) == "function" or (getmetatable(f) or {}).__call, "enable_grad", 1, "function", f)
  return with_mode(true, f, ...)
end
function T.set_grad_enabled(b) return set_grad(b and true or false) end
autograd.no_grad, autograd.enable_grad = T.no_grad, T.enable_grad

local function numel_of(s) local n = 1 for i = 1, #s do n = n * s[i] end return n end

---------------------------------------------------------------------------
-- helpers for the formulas (they run with grad mode = create_graph)
---------------------------------------------------------------------------
local math_type = math.type
-- does input i of the node want a gradient?  (the engine sets n.need, a bit
-- mask or, past 62 inputs, a list of booleans, only when some input does not)
local function need(n, i)
  local m = n.need
  if m == nil then return true end
  if math_type(m) == "integer" then return compat.bit(m, i) end
  return m[i] == true
end

-- sum_to: sum g over leading extra dims and over dims where `shape` has size 1
-- (keepdim), then drop the leading dims: the backward of broadcasting.  The
-- arithmetic is the C engine's (one copy); this checks the arguments.
local function sum_to(g, shape)
  check_t("autograd.sum_to", 1, g)
  argcheck(type(shape) == "table", "autograd.sum_to", 2, "table", shape)
  for i = 1, #shape do
    if math.type(shape[i]) ~= "integer" then fail("autograd.sum_to", "bad argument #2 (shape entry " .. i .. " is not an integer)") end
  end
  return T._sum_to(g, shape)   -- the engine's own sum_to (src/l_autograd.c)
end
autograd.sum_to = sum_to

local function zero_where(cond, x)   -- x with zeros where cond
  return T.where(cond, T.zeros_like(x), x)
end
local function keep_where(cond, x)   -- x where cond, zeros elsewhere
  return T.where(cond, x, T.zeros_like(x))
end

local function normdim(d, nd, extra)
  nd = nd + (extra or 0)
  if d < 0 then d = d + nd + 1 end
  if nd == 0 then d = 1 end
  return d
end

local function is_opts(v)
  return type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0 and next(v) ~= nil
end

-- Reduction arguments as in l_reduce.c: (dim or {dims}) (keepdim) (opts).
-- Returns a sorted list of 1-based dims (nil: all dims), keepdim, opts.
local function rparse(nd, ...)
  local n = select("#", ...)
  local a = { ... }
  local opts, last = nil, n
  for k = 1, n do if is_opts(a[k]) then opts, last = a[k], k - 1 break end end
  local dim, keepdim = nil, false
  if last >= 1 then dim = a[1] end
  if last >= 2 then keepdim = a[2] and true or false end
  if opts then
    if opts.dim ~= nil then dim = opts.dim end
    if opts.keepdim ~= nil then keepdim = opts.keepdim and true or false end
  end
  if dim == nil then return nil, keepdim, opts end
  local list = type(dim) == "table" and dim or { dim }
  if #list == 0 then return nil, keepdim, opts end
  local dims = {}
  for i = 1, #list do dims[i] = normdim(list[i], nd) end
  table.sort(dims)
  if nd == 0 then return nil, keepdim, opts end
  return dims, keepdim, opts
end

-- g of a reduction's output, reshaped to broadcast against its input.
local function unreduce(g, dims, keepdim, in_nd)
  if dims and not keepdim and in_nd > 0 then
    for _, d in ipairs(dims) do g = g:unsqueeze(d) end
  end
  return g
end
local function expand_to(g, shape)
  if #shape == 0 then return g:reshape(shape) end
  return g:expand(shape)
end

---------------------------------------------------------------------------
-- rules
---------------------------------------------------------------------------
local rules = {}
autograd.rules = rules

local function unary(name, formula, save_out, conj_aware)
  -- formula(node, g, x, y) -> grad of x; conj_aware: the formula handles
  -- complex gradients itself (not holomorphic: src/l_backward.c conj_rule)
  local function bw(n, g) return formula(n, g, n.saved[1], n.saved[2]) end
  return function(raw, x, ...)
    local y = raw(x, ...)
    return { name = name, inputs = { x }, saved = { x, save_out and y or nil, n = 2 }, backward = bw,
      args = select("#", ...) > 0 and pack(...) or nil, conj_aware = conj_aware }, y
  end
end

local SQRT2 = math.sqrt(2)
local INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
local TWO_OVER_SQRTPI = 2 / math.sqrt(math.pi)
local LN2, LN10 = math.log(2), math.log(10)

rules.neg = function(raw, x, ...)
  return { name = "NegBackward0", inputs = { x }, backward = function(_, g) return -g end }, raw(x, ...)
end
rules.exp = unary("ExpBackward0", function(_, g, _, y) return g * y end, true)
rules.exp2 = unary("Exp2Backward0", function(_, g, _, y) return g * y * LN2 end, true)
rules.expm1 = unary("Expm1Backward0", function(_, g, _, y) return g * (y + 1) end, true)
rules.log = unary("LogBackward0", function(_, g, x) return g / x end)
rules.log2 = unary("Log2Backward0", function(_, g, x) return g / (x * LN2) end)
rules.log10 = unary("Log10Backward0", function(_, g, x) return g / (x * LN10) end)
rules.log1p = unary("Log1PBackward0", function(_, g, x) return g / (x + 1) end)
rules.sqrt = unary("SqrtBackward0", function(_, g, _, y) return g / (y * 2) end, true)
rules.rsqrt = unary("RsqrtBackward0", function(_, g, _, y) return g * (y * y * y) * -0.5 end, true)
rules.reciprocal = unary("ReciprocalBackward0", function(_, g, _, y) return g * -(y * y) end, true)
rules.square = unary("PowBackward0", function(_, g, x) return g * x * 2 end)
-- sgn: sign for real input, z / |z| for complex (PyTorch: grad * self.sgn())
rules.abs = unary("AbsBackward0", function(_, g, x) return g * T.sgn(x) end)
rules.sin = unary("SinBackward0", function(_, g, x) return g * T.cos(x) end)
rules.cos = unary("CosBackward0", function(_, g, x) return g * -T.sin(x) end)
rules.tan = unary("TanBackward0", function(_, g, _, y) return g * (y * y + 1) end, true)
rules.asin = unary("AsinBackward0", function(_, g, x) return g / T.sqrt(-(x * x) + 1) end)
rules.acos = unary("AcosBackward0", function(_, g, x) return -g / T.sqrt(-(x * x) + 1) end)
rules.atan = unary("AtanBackward0", function(_, g, x) return g / (x * x + 1) end)
rules.sinh = unary("SinhBackward0", function(_, g, x) return g * T.cosh(x) end)
rules.cosh = unary("CoshBackward0", function(_, g, x) return g * T.sinh(x) end)
rules.tanh = unary("TanhBackward0", function(_, g, _, y) return g * (-(y * y) + 1) end, true)
rules.sigmoid = unary("SigmoidBackward0", function(_, g, _, y) return g * y * (-y + 1) end, true)
-- 0 where y <= 0, else g: a NaN passes its gradient, as in PyTorch
rules.relu = unary("ReluBackward0", function(_, g, _, y) return T.where(T.le(y, 0), T.zeros_like(g), g) end, true)
rules.erf = unary("ErfBackward0", function(_, g, x) return g * T.exp(-(x * x)) * TWO_OVER_SQRTPI end)
rules.silu = unary("SiluBackward0", function(_, g, x)
  local s = T.sigmoid(x)
  return g * s * (x * (-s + 1) + 1)
end)
rules.gelu = unary("GeluBackward0", function(n, g, x)
  local approx = n.args and n.args[1]
  if type(approx) == "table" then approx = approx.approximate end
  if approx == "tanh" then
    local k = math.sqrt(2 / math.pi)
    local inner = (x * x * x * 0.044715 + x) * k
    local t = T.tanh(inner)
    local dinner = (x * x * (3 * 0.044715) + 1) * k
    return g * ((t + 1) * 0.5 + x * 0.5 * (-(t * t) + 1) * dinner)
  end
  local cdf = (T.erf(x / SQRT2) + 1) * 0.5
  local pdf = T.exp(x * x * -0.5) * INV_SQRT_2PI
  return g * (cdf + x * pdf)
end)
for _, name in ipairs { "sign", "floor", "ceil", "round", "trunc", "frac_zero" } do
  rules[name] = unary(name:gsub("^%l", string.upper) .. "Backward0", function(_, g) return T.zeros_like(g) end)
end
rules.frac = unary("FracBackward0", function(_, g) return g end)

-- the elementwise functions of the op list's later lines (written as for
-- real numbers: for complex input the engine applies them conjugated,
-- src/l_backward.c conj_rule)
local PI = math.pi
rules.asinh = unary("AsinhBackward0", function(_, g, x) return g * T.rsqrt(x * x + 1) end)
-- acosh: 1 / sqrt(x^2 - 1) for real x (finite below -1, as PyTorch); for
-- complex z, 1 / (sqrt(z + 1) sqrt(z - 1)), the branch PyTorch takes
rules.acosh = unary("AcoshBackward0", function(_, g, x)
  if x.dtype.is_complex then return g * (T.rsqrt(x + 1) * T.rsqrt(x - 1)) end
  return g * T.rsqrt(x * x - 1)
end)
rules.atanh = unary("AtanhBackward0", function(_, g, x) return g * T.reciprocal(-(x * x) + 1) end)
rules.erfc = unary("ErfcBackward0", function(_, g, x) return g * T.exp(-(x * x)) * -TWO_OVER_SQRTPI end)
rules.deg2rad = unary("Deg2RadBackward0", function(_, g) return g * (PI / 180) end)
rules.rad2deg = unary("Rad2DegBackward0", function(_, g) return g * (180 / PI) end)
-- sinc' = (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at x = 0
rules.sinc = unary("SincBackward0", function(_, g, x)
  local px = x * PI
  local d = (px * T.cos(px) - T.sin(px)) / (px * x)
  return g * zero_where(T.eq(x, 0), d)
end)
-- sgn: 0 for real input; for complex, (g - s Re(conj(s) g)) / |z|, 0 at z = 0
rules.sgn = unary("SgnBackward0", function(_, g, x, y)
  if not x.dtype.is_complex then return T.zeros_like(g) end
  local a = T.abs(x)
  local r = (g - y * T.real(T.conj(y) * g)) / a
  return T.where(T.eq(a, 0), T.zeros_like(r), r)
end, true, true)
-- logit: g / (x (1 - x)); without eps NaN outside [0, 1], with eps 0
-- outside [eps, 1 - eps] (PyTorch's logit_backward)
rules.logit = unary("LogitBackward0", function(n, g, x)
  local eps = n.args and n.args[1]
  if type(eps) == "table" then eps = eps.eps end
  local d = g / (x * (-x + 1))
  if type(eps) == "number" and eps >= 0 then
    local out = T.logical_or(T.lt(x, eps), T.gt(x, 1 - eps))
    return T.where(out, T.zeros_like(d), d)
  end
  return T.where(T.logical_or(T.lt(x, 0), T.gt(x, 1)), T.full_like(d, 0 / 0), d)
end)
rules.nan_to_num = unary("NanToNumBackward0", function(_, g, x) return g * T.isfinite(x) end)

-- binary functions of the op list (a Lua number operand has no gradient)
local function binary_rule(name, formula, save_out)
  return function(raw, a, b, ...)
    local out = raw(a, b, ...)
    return { name = name, inputs = { a, b }, saved = { a, b, save_out and out or nil, n = 3 },
      backward = function(n, g)
        return formula(n, g, n.saved[1], n.saved[2], n.saved[3])
      end }, out
  end
end
rules.hypot = binary_rule("HypotBackward0", function(n, g, a, b, y)
  return need(n, 1) and g * a / y or nil, need(n, 2) and g * b / y or nil
end, true)
-- copysign: d/da = copysign(1, b) * sign(a)... as PyTorch: result / a, 0
-- where a = 0; none for b
rules.copysign = binary_rule("CopysignBackward0", function(n, g, a, _, y)
  local ga
  if need(n, 1) then
    local r = y / a
    ga = g * T.where(T.eq(a, 0), T.zeros_like(r), r)
  end
  return ga, is_t(n.saved[2]) and need(n, 2) and T.zeros_like(g) or nil
end, true)
rules.logaddexp = binary_rule("LogaddexpBackward0", function(n, g, a, b)
  return need(n, 1) and g / (T.exp(b - a) + 1) or nil, need(n, 2) and g / (T.exp(a - b) + 1) or nil
end)
rules.logaddexp2 = binary_rule("Logaddexp2Backward0", function(n, g, a, b)
  return need(n, 1) and g / (T.exp2(b - a) + 1) or nil, need(n, 2) and g / (T.exp2(a - b) + 1) or nil
end)
-- xlogy (PyTorch 1.13's formulas): xlogy(g, y) for x, 0 where x = 0 and
-- y <= 0; g x / y for y
rules.xlogy = binary_rule("XlogyBackward0", function(n, g, x, y)
  local gx, gy
  if need(n, 1) and is_t(x) then
    gx = T.xlogy(g, y)
    gx = T.where(T.logical_and(T.eq(x, 0), T.le(y, 0)), T.zeros_like(gx), gx)
  end
  if need(n, 2) and is_t(y) then gy = g * x / y end
  return gx, gy
end)

-- binary arithmetic ---------------------------------------------------------
local function alpha_of(al)
  if type(al) == "table" then al = al.alpha end
  if al == 1 then al = nil end
  return al
end

-- (the hot rules share their backward functions: no closure per recorded op)
local function add_bw(n, g)
  local gb = n.alpha and need(n, 2) and g * n.alpha or g
  return g, gb
end
rules.add = function(raw, a, b, alpha)
  local out = raw(a, b, alpha)
  return { name = (is_t(a) and is_t(b)) and "AddBackward0" or "AddBackward1", inputs = { a, b }, alpha = alpha_of(alpha),
    backward = add_bw }, out
end
local function sub_bw(n, g)
  local gb
  if need(n, 2) then gb = n.alpha and g * -n.alpha or -g end
  return g, gb
end
rules.sub = function(raw, a, b, alpha)
  local out = raw(a, b, alpha)
  local name = (is_t(a) and is_t(b)) and "SubBackward0" or (is_t(a) and "SubBackward1" or "RsubBackward1")
  return { name = name, inputs = { a, b }, alpha = alpha_of(alpha), backward = sub_bw }, out
end
rules.rsub = function(raw, a, b, alpha)   -- rsub(a, b) = b - alpha * a
  local out = raw(a, b, alpha)
  return { name = "RsubBackward0", inputs = { a, b }, alpha = alpha_of(alpha),
    backward = function(n, g)
      local ga
      if need(n, 1) then ga = n.alpha and g * -n.alpha or -g end
      return ga, g
    end }, out
end
local function mul_bw(n, g)
  local x, y = n.saved[1], n.saved[2]
  return need(n, 1) and g * y or nil, need(n, 2) and g * x or nil
end
rules.mul = function(raw, a, b)
  local out = raw(a, b)
  return { name = (is_t(a) and is_t(b)) and "MulBackward0" or "MulBackward1", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = mul_bw }, out
end
local function div_bw(n, g)
  local x, y = n.saved[1], n.saved[2]
  local ga, gb
  if need(n, 1) then ga = g / y end
  -- -g * ((x / y) / y), in PyTorch's order: y * y underflows first
  if need(n, 2) then gb = -g * ((x / y) / y) end
  return ga, gb
end
rules.div = function(raw, a, b, opts)
  local out = raw(a, b, opts)
  local mode = type(opts) == "table" and opts.rounding_mode or (type(opts) == "string" and opts) or nil
  if mode then
    return { name = is_t(b) and "DivBackward2" or "DivBackward3", inputs = { a, b },
      backward = function(n, g) return T.zeros_like(g), need(n, 2) and T.zeros_like(g) or nil end }, out
  end
  return { name = (is_t(a) and is_t(b)) and "DivBackward0" or "DivBackward1", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = div_bw }, out
end
rules.true_divide = rules.div
rules.floor_divide = function(raw, a, b)
  return { name = "FloorDivideBackward0", inputs = { a, b },
    backward = function(_, g) return T.zeros_like(g), T.zeros_like(g) end }, raw(a, b)
end
rules.pow = function(raw, a, b)
  local out = raw(a, b)
  -- a boolean scalar is the number 1 or 0 (as PyTorch), for the rules' arithmetic
  if type(a) == "boolean" then a = a and 1 or 0 end
  if type(b) == "boolean" then b = b and 1 or 0 end
  if not is_t(b) then
    return { name = "PowBackward0", inputs = { a }, saved = { a, b, n = 2 },
      backward = function(n, g)
        local x, e = n.saved[1], n.saved[2]
        if e == 0 then return T.zeros_like(g) end
        return g * e * T.pow(x, e - 1)
      end }, out
  elseif not is_t(a) then
    return { name = "PowBackward2", inputs = { a, b }, saved = { a, out, b, n = 3 },
      backward = function(n, g)
        local base, y, e = n.saved[1], n.saved[2], n.saved[3]
        -- 0^e: zero gradient where e >= 0 (PyTorch's pow_backward_exponent)
        if base == 0 then
          local ok = e.dtype.is_complex and T.logical_and(T.eq(T.imag(e), 0), T.ge(T.real(e), 0)) or T.ge(e, 0)
          return nil, zero_where(ok, g * y * math.log(base))
        end
        return nil, g * y * math.log(base)
      end }, out
  end
  return { name = "PowBackward1", inputs = { a, b }, saved = { a, b, out, n = 3 },
    backward = function(n, g)
      local x, e, y = n.saved[1], n.saved[2], n.saved[3]
      local ga, gb
      if need(n, 1) then ga = zero_where(T.eq(e, 0), g * e * T.pow(x, e - 1)) end
      -- (a complex exponent: its real part decides, as PyTorch's pow_backward_exponent)
      local er = e:is_complex() and T.real(e) or e
      if need(n, 2) then gb = zero_where(T.logical_and(T.eq(x, 0), T.ge(er, 0)), g * y * T.log(x)) end
      return ga, gb
    end }, out
end
rules.float_power = rules.pow

-- PyTorch's formulas: half the gradient to each side of a tie, none to
-- the side that lost; a NaN on either side is neither a tie nor a loss, so
-- both sides get the whole gradient (maximum, minimum; T.fmax/T.fmin are
-- autograd Functions of their own, lua/ltensor/structural.lua)
local function maxmin_elem(name, beats)
  return function(raw, a, b)
    local out = raw(a, b)
    return { name = name, inputs = { a, b }, saved = { a, b, n = 2 },
      backward = function(n, g)
        local x, y = n.saved[1], n.saved[2]
        local base = T.where(T.eq(x, y), g * 0.5, g)
        local ga, gb
        if need(n, 1) then ga = T.where(beats(y, x), T.zeros_like(base), base) end
        if need(n, 2) then gb = T.where(beats(x, y), T.zeros_like(base), base) end
        return ga, gb
      end }, out
  end
end
rules.maximum = maxmin_elem("MaximumBackward0", T.gt)
rules.minimum = maxmin_elem("MinimumBackward0", T.lt)

rules.atan2 = function(raw, a, b)
  local out = raw(a, b)
  return { name = "Atan2Backward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      local d = x * x + y * y
      return need(n, 1) and g * y / d or nil, need(n, 2) and -g * x / d or nil
    end }, out
end
rules.fmod = function(raw, a, b)
  local out = raw(a, b)
  return { name = is_t(b) and "FmodBackward1" or "FmodBackward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local gb
      if need(n, 2) then gb = -g * T.div(n.saved[1], n.saved[2], { rounding_mode = "trunc" }) end
      return g, gb
    end }, out
end
rules.remainder = function(raw, a, b)
  local out = raw(a, b)
  return { name = is_t(b) and "RemainderBackward1" or "RemainderBackward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local gb
      if need(n, 2) then gb = -g * T.div(n.saved[1], n.saved[2], { rounding_mode = "floor" }) end
      return g, gb
    end }, out
end
rules.lerp = function(raw, a, b, w)
  local out = raw(a, b, w)
  return { name = is_t(w) and "LerpBackward1" or "LerpBackward0", inputs = { a, b, w }, saved = { a, b, w, n = 3 },
    backward = function(n, g)
      local x, y, wt = n.saved[1], n.saved[2], n.saved[3]
      local gw
      if need(n, 3) then gw = g * (y - x) end
      return g * (-wt + 1), g * wt, gw
    end }, out
end

rules.where = function(raw, c, a, b)
  local out = raw(c, a, b)
  return { name = "WhereBackward0", inputs = { c, a, b }, saved = { c, n = 1 },
    backward = function(n, g)
      local cond = n.saved[1]
      return nil, need(n, 2) and keep_where(cond, g) or nil, need(n, 3) and zero_where(cond, g) or nil
    end }, out
end

rules.clamp = function(raw, x, lo, hi)
  local out = raw(x, lo, hi)
  if type(lo) == "table" and not is_t(lo) then lo, hi = lo.min, lo.max end
  if is_t(lo) or is_t(hi) then
    return { name = "ClampBackward0", inputs = { x, lo, hi }, saved = { x, lo, hi, n = 3 },
      backward = function(n, g)
        local v, mn, mx = n.saved[1], n.saved[2], n.saved[3]
        local gx = g
        if mn ~= nil then gx = zero_where(T.lt(v, mn), gx) end
        if mx ~= nil then gx = zero_where(T.gt(v, mx), gx) end
        local gmn, gmx
        if mn ~= nil and need(n, 2) then gmn = keep_where(T.lt(v, mn), g) end
        if mx ~= nil and need(n, 3) then gmx = keep_where(T.gt(v, mx), g) end
        return gx, gmn, gmx
      end }, out
  end
  return { name = "ClampBackward1", inputs = { x }, saved = { x, lo, hi, n = 3 },
    backward = function(n, g)
      local v, mn, mx = n.saved[1], n.saved[2], n.saved[3]
      if mn ~= nil then g = zero_where(T.lt(v, mn), g) end
      if mx ~= nil then g = zero_where(T.gt(v, mx), g) end
      return g
    end }, out
end
rules.clip = rules.clamp
rules.clamp_min = function(raw, x, lo) local s, o = rules.clamp(function(v, l) return raw(v, l) end, x, lo, nil) s.name = "ClampMinBackward0" return s, o end
rules.clamp_max = function(raw, x, hi) local s, o = rules.clamp(function(v, _, h) return raw(v, h) end, x, nil, hi) s.name = "ClampMaxBackward0" return s, o end

-- reductions ----------------------------------------------------------------
local function sum_bw(n, g) return expand_to(unreduce(g, n.dims, n.keepdim, #n.shape), n.shape) end
rules.sum = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local dims, keepdim = rparse(#shape, ...)
  return { name = dims and "SumBackward1" or "SumBackward0", inputs = { x }, dims = dims, keepdim = keepdim, shape = shape,
    backward = sum_bw }, out
end
rules.nansum = rules.sum
local function mean_bw(n, g) return expand_to(unreduce(g, n.dims, n.keepdim, #n.shape) / n.count, n.shape) end
rules.mean = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local dims, keepdim = rparse(#shape, ...)
  local count = out:numel() > 0 and x:numel() / out:numel() or 0
  return { name = dims and "MeanBackward1" or "MeanBackward0", inputs = { x }, dims = dims, keepdim = keepdim, shape = shape, count = count,
    backward = mean_bw }, out
end
-- prod's gradient as PyTorch's prod_backward: when the input holds no zero,
-- g * y / x; otherwise, for every slice, the product of the elements before
-- and after each one (exclusive cumulative products from both ends), which
-- is exact at zeros (and gives a NaN element the product of the others).
-- The whole-tensor product with more than one zero and no graph to record
-- has zero gradient everywhere, as there.
local function exclusive_cumprod(v, d)
  local n = v:size(d)
  local ones = T.ones_like(v:narrow(d, 1, 1))
  return T.cat({ ones, v:narrow(d, 1, n - 1) }, d):cumprod(d)
end
local function prod_safe_zeros(g, v, d)
  if v:numel() == 0 then return g:expand(v.shape) end
  local left = exclusive_cumprod(v, d)
  local right = exclusive_cumprod(v:flip({ d }), d):flip({ d })
  return g * (left * right)
end
rules.prod = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local dims, keepdim = rparse(#shape, ...)
  return { name = dims and "ProdBackward1" or "ProdBackward0", inputs = { x }, saved = { x, out, n = 2 },
    dims = dims, keepdim = keepdim, shape = shape,
    backward = function(n, g)
      local v, y = n.saved[1], n.saved[2]
      if #n.shape == 0 then return g end
      g, y = unreduce(g, n.dims, n.keepdim, #n.shape), unreduce(y, n.dims, n.keepdim, #n.shape)
      local zeros = T.sum(T.eq(v, 0)):item()
      if zeros == 0 then return g * (y / v) end
      if not n.dims then
        if zeros > 1 and not T.is_grad_enabled() then return T.zeros_like(v) end
        return prod_safe_zeros(g:reshape({ 1 }), v:reshape({ -1 }), 1):reshape(n.shape)
      end
      return prod_safe_zeros(g, v, n.dims[1])
    end }, out
end

-- max/min: with a dim, (values, indices) and the gradient goes to the index;
-- without one, ties share the gradient evenly (PyTorch's MaxBackward1).
local function arange_along(n, dim, nd, dtype)
  local r = T.arange(1, n + 1)
  local shape = {}
  for i = 1, nd do shape[i] = 1 end
  shape[dim] = n
  r = r:reshape(shape)
  if dtype then r = r:to(dtype) end
  return r
end
-- Without an index the gradient is shared: max()/min() share it evenly
-- among the elements equal to the result, or among the NaNs when the result
-- is NaN (PyTorch's evenly_distribute_backward); amax/amin divide by the
-- count of elements equal to the result, so a NaN result (no element
-- equals it) gives NaN gradients, as PyTorch's scale_grad_by_count.
local function reduce_minmax(name_dim, name_all, evenly)
  return function(raw, x, ...)
    local r = pack(raw(x, ...))
    local shape = x.shape
    if select("#", ...) >= 1 and is_t((...)) then return nil, unpack(r, 1, r.n) end -- maximum path
    local dims, keepdim = rparse(#shape, ...)
    if r.n >= 2 and dims then
      return { name = name_dim, inputs = { x }, saved = { r[2], n = 1 }, dim = dims[1], keepdim = keepdim, shape = shape, nondiff = { [2] = true },
        backward = function(n, g)
          local idx = n.saved[1]
          local nd = #n.shape
          if nd == 0 then return g end
          if not n.keepdim then g, idx = g:unsqueeze(n.dim), idx:unsqueeze(n.dim) end
          local hot = T.eq(idx, arange_along(n.shape[n.dim], n.dim, nd))
          return keep_where(hot, g:expand(n.shape))
        end }, unpack(r, 1, r.n)
    end
    return { name = name_all, inputs = { x }, saved = { x, r[1], n = 2 }, dims = dims, keepdim = keepdim, shape = shape,
      evenly = evenly and not dims,
      backward = function(n, g)
        local v, y = n.saved[1], n.saved[2]
        local nd = #n.shape
        g, y = unreduce(g, n.dims, n.keepdim, nd), unreduce(y, n.dims, n.keepdim, nd)
        if n.evenly then
          local mask = (y:item() ~= y:item()) and T.isnan(v) or T.eq(v, y)
          return keep_where(mask, expand_to(g / T.sum(mask), n.shape))
        end
        local mask = T.eq(v, y)
        local cnt = n.dims and T.sum(mask, n.dims, true) or T.sum(mask)
        return expand_to(g / cnt, n.shape) * mask:to(v.dtype)
      end }, unpack(r, 1, r.n)
  end
end
rules.max = reduce_minmax("MaxBackward0", "MaxBackward1", true)
rules.min = reduce_minmax("MinBackward0", "MinBackward1", true)
rules.amax = reduce_minmax("AmaxBackward0", "AmaxBackward0", false)
rules.amin = reduce_minmax("AminBackward0", "AminBackward0", false)

local function stdvar(name, is_std)
  return function(raw, x, ...)
    local out = raw(x, ...)
    local shape = x.shape
    local args = pack(...)
    local correction = 1
    local first = 1
    if type(args[1]) == "boolean" then correction = args[1] and 1 or 0 first = 2 end
    local dims, keepdim, opts = rparse(#shape, unpack(args, first, args.n))
    if opts then
      if opts.unbiased ~= nil then correction = opts.unbiased and 1 or 0 end
      if opts.correction ~= nil then correction = opts.correction end
    end
    local N = x:numel() / math.max(out:numel(), 1)
    return { name = name, inputs = { x }, saved = { x, out, n = 2 }, dims = dims, keepdim = keepdim, shape = shape,
      denom = N - correction,
      backward = function(n, g)
        local v, y = n.saved[1], n.saved[2]
        local nd = #n.shape
        g = unreduce(g, n.dims, n.keepdim, nd)
        local mu = n.dims and T.mean(v, n.dims, true) or T.mean(v)
        local r = g * (v - mu) / n.denom
        -- std: 0 where the std is 0 (PyTorch masks g / (2 std) there)
        if is_std then
          local sd = unreduce(y, n.dims, n.keepdim, nd)
          return zero_where(T.eq(sd, 0):expand(n.shape), r / sd)
        end
        return r * 2
      end }, out
  end
end
rules.var = stdvar("VarBackward0", false)
rules.std = stdvar("StdBackward0", true)

rules.norm = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local args = pack(...)
  local p, first = 2, 1
  if type(args[1]) == "number" or type(args[1]) == "string" then p, first = args[1], 2
  elseif args[1] == nil and args.n >= 2 then first = 2 end
  local dims, keepdim, opts = rparse(#shape, unpack(args, first, args.n))
  if opts and opts.p ~= nil then p = opts.p end
  if p == "fro" then p = 2 elseif p == "inf" then p = math.huge elseif p == "-inf" then p = -math.huge end
  return { name = dims and "NormBackward1" or "NormBackward0", inputs = { x }, saved = { x, out, n = 2 }, p = p, dims = dims, keepdim = keepdim, shape = shape,
    backward = function(n, g)
      local v, y = n.saved[1], n.saved[2]
      local nd, pp = #n.shape, n.p
      g, y = unreduce(g, n.dims, n.keepdim, nd), unreduce(y, n.dims, n.keepdim, nd)
      if pp == 0 then return T.zeros_like(v) end
      if pp == 1 then return g * T.sign(v) end
      if pp == math.huge or pp == -math.huge then
        local mask = T.eq(T.abs(v), y)
        local cnt = n.dims and T.sum(mask, n.dims, true) or T.sum(mask)
        return keep_where(mask, g * T.sign(v) / cnt)
      end
      -- PyTorch's norm_backward, written with |v| / y (at most 1) so that
      -- tiny entries do not underflow into 0/0: p >= 2: v |v|^(p-2) / y^(p-1)
      -- = (v/y) (|v|/y)^(p-2); p < 2: sgn(v) (|v|/y)^(p-1), 0 at v = 0 when p < 1
      local r
      if pp == 2 then r = v / y
      elseif pp > 2 then r = (v / y) * T.pow(T.abs(v) / y, pp - 2)
      else
        r = T.sign(v) * T.pow(T.abs(v) / y, pp - 1)
        if pp < 1 then r = zero_where(T.eq(v, 0), r) end
      end
      return zero_where(T.eq(y, 0), g * r)
    end }, out
end

rules.logsumexp = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local dims, keepdim = rparse(#shape, ...)
  return { name = "LogsumexpBackward0", inputs = { x }, saved = { x, out, n = 2 }, dims = dims, keepdim = keepdim, shape = shape,
    backward = function(n, g)
      local nd = #n.shape
      return unreduce(g, n.dims, n.keepdim, nd) * T.exp(n.saved[1] - unreduce(n.saved[2], n.dims, n.keepdim, nd))
    end }, out
end

local function one_dim(x, d)
  if is_opts(d) then d = d.dim end
  return normdim(d, x:dim())
end
-- the reversed cumulative sum (w_k + w_k+1 + ... + w_n along d), summed in
-- that order as PyTorch's reversed_cumsum: total - cumsum + w would turn
-- an inf on one side into NaN on the other
local function revcumsum(w, d) return w:flip({ d }):cumsum(d):flip({ d }) end
rules.cumsum = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "CumsumBackward0", inputs = { x }, dim = one_dim(x, d), nd = x:dim(),
    backward = function(n, g)
      if n.nd == 0 then return g end
      return revcumsum(g, n.dim)
    end }, out
end
-- cumprod's gradient as PyTorch's cumprod_backward.  Without zeros in the
-- input: the reversed cumulative sum of g * y, divided by x.  With zeros,
-- dividing by x would give NaN, so: before a slice's first zero the same
-- formula over that part; at the first zero, the sum over the run up to the
-- second zero of g_j times the product of the x between them, times the
-- product of everything before it; after it, 0.  Under create_graph the
-- gradient is built from products that leave each element out (O(n^2)), so
-- that it can be differentiated again.
local function cumprod_bw_zeros(x, y, g, d)
  local n = x:size(d)
  local is_zero = T.eq(x, 0)
  local cnt = T.cumsum(is_zero, d)
  local before = T.eq(cnt, 0)
  local part_before = T.where(before, revcumsum(T.where(before, y * g, 0), d) / x, 0)
  local run = T.eq(cnt, 1)
  local first_zero = T.logical_and(run, is_zero)
  local between = T.logical_and(run, T.logical_not(is_zero))
  local s = (T.where(between, x, 1):cumprod(d) * T.where(run, g, 0)):sum(d, true)
  local ones = T.ones_like(y:narrow(d, 1, 1))
  local prev = T.cat({ ones, y:narrow(d, 1, n - 1) }, d)
  return part_before + T.where(first_zero, s * prev, 0)
end
local function cumprod_bw_graph(x, g, d)
  local n = x:size(d)
  local ones = T.ones_like(x:narrow(d, 1, 1))
  local cols = {}
  for k = 1, n do
    local omitted
    if k == 1 then
      omitted = T.cat({ ones, x:narrow(d, 2, n - 1):cumprod(d) }, d)
    elseif k == n then
      omitted = T.prod(x:narrow(d, 1, k - 1), d, true)
    else
      local upto = T.prod(x:narrow(d, 1, k - 1), d, true)
      local after = x:narrow(d, k + 1, n - k):cumprod(d)
      omitted = T.cat({ upto, upto * after }, d)
    end
    cols[k] = (g:narrow(d, k, n - k + 1) * omitted):sum(d, true)
  end
  return T.cat(cols, d)
end
rules.cumprod = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "CumprodBackward0", inputs = { x }, saved = { x, out, n = 2 }, dim = one_dim(x, d), nd = x:dim(),
    backward = function(n, g)
      if n.nd == 0 then return g end
      local v, y = n.saved[1], n.saved[2]
      if v:numel() <= 1 or v:size(n.dim) == 1 then return g end
      if not T.any(T.eq(v, 0)):item() then return revcumsum(g * y, n.dim) / v end
      if T.is_grad_enabled() then return cumprod_bw_graph(v, g, n.dim) end
      return cumprod_bw_zeros(v, y, g, n.dim)
    end }, out
end
rules.softmax = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "SoftmaxBackward0", inputs = { x }, saved = { out, n = 1 }, dim = one_dim(x, d),
    backward = function(n, g)
      local y = n.saved[1]
      return y * (g - T.sum(g * y, n.dim, true))
    end }, out
end
rules.log_softmax = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "LogSoftmaxBackward0", inputs = { x }, saved = { out, n = 1 }, dim = one_dim(x, d),
    backward = function(n, g)
      return g - T.exp(n.saved[1]) * T.sum(g, n.dim, true)
    end }, out
end

-- views and shape ops -----------------------------------------------------------
local function reshape_back(name)
  return function(raw, x, ...)
    local out = raw(x, ...)
    local nm = name
    if nm == "reshape" then nm = T._same_storage(out, x) and "ViewBackward0" or "UnsafeViewBackward0" end
    return { name = nm, inputs = { x }, shape = x.shape, view_of = x,
      backward = function(n, g) return g:reshape(n.shape) end }, out
  end
end
rules.view = reshape_back("ViewBackward0")
rules.reshape = reshape_back("reshape")
rules.flatten = reshape_back("reshape")
rules.unflatten = reshape_back("UnflattenBackward0")
rules.view_as = reshape_back("ViewBackward0")
rules.reshape_as = reshape_back("reshape")
rules.squeeze = function(raw, x, ...)
  local s, o = reshape_back(select("#", ...) > 0 and "SqueezeBackward1" or "SqueezeBackward0")(raw, x, ...)
  return s, o
end
rules.unsqueeze = reshape_back("UnsqueezeBackward0")
rules.expand = function(raw, x, ...)
  return { name = "ExpandBackward0", inputs = { x }, view_of = x, backward = function(_, g) return g end }, raw(x, ...)
end
rules.expand_as = rules.expand
rules.broadcast_to = rules.expand
rules.transpose = function(raw, x, d0, d1)
  return { name = "TransposeBackward0", inputs = { x }, d0 = d0, d1 = d1, view_of = x,
    backward = function(n, g) return g:transpose(n.d0, n.d1) end }, raw(x, d0, d1)
end
rules.swapaxes = rules.transpose
rules.swapdims = rules.transpose
rules.t = function(raw, x)
  return { name = "TBackward0", inputs = { x }, view_of = x, backward = function(_, g) return g:t() end }, raw(x)
end
rules.permute = function(raw, x, ...)
  local out = raw(x, ...)
  local p = type((...)) == "table" and (...) or { ... }
  local nd = x:dim()
  local inv = {}
  for i = 1, #p do inv[normdim(p[i], nd)] = i end
  return { name = "PermuteBackward0", inputs = { x }, inv = inv, view_of = x,
    backward = function(n, g) return g:permute(n.inv) end }, out
end

-- zeros of `shape` with g placed at [start, start+len) along dim, built with
-- cat so that it stays differentiable under create_graph
local function pad_along(g, shape, dim, start, len)
  local parts = {}
  local function zeros(k)
    local s = { table.unpack(shape) }
    s[dim] = k
    return T.zeros(s, { dtype = g.dtype })
  end
  if start > 1 then parts[#parts + 1] = zeros(start - 1) end
  parts[#parts + 1] = g
  local rest = shape[dim] - (start - 1) - len
  if rest > 0 then parts[#parts + 1] = zeros(rest) end
  if #parts == 1 then return g end
  return T.cat(parts, dim)
end

rules.narrow = function(raw, x, dim, start, len)
  local out = raw(x, dim, start, len)
  local shape = x.shape
  local d = normdim(dim, #shape)
  if start < 0 then start = start + shape[d] + 1 end
  return { name = "SliceBackward0", inputs = { x }, shape = shape, dim = d, start = start, len = len, view_of = x,
    backward = function(n, g) return pad_along(g, n.shape, n.dim, n.start, n.len) end }, out
end
rules.select = function(raw, x, dim, i)
  local out = raw(x, dim, i)
  local shape = x.shape
  local d = normdim(dim, #shape)
  if i < 0 then i = i + shape[d] + 1 end
  return { name = "SelectBackward0", inputs = { x }, shape = shape, dim = d, i = i, view_of = x,
    backward = function(n, g) return pad_along(g:unsqueeze(n.dim), n.shape, n.dim, n.i, 1) end }, out
end

-- zeros(shape) with the k slices of src (k along dim) added at positions idx
-- (1-based, may repeat): index_add.  A one-hot matmul when the core has no
-- index_add, so duplicates accumulate as they must.
local function index_add_into(shape, dim, idx, src)
  argcheck(type(shape) == "table", "autograd.index_add_into", 1, "table", shape)
  for i = 1, #shape do
    argcheck(math.type(shape[i]) == "integer", "autograd.index_add_into", 1, "list of sizes", shape[i])
  end
  argcheck(math.type(dim) == "integer" and shape[dim] ~= nil, "autograd.index_add_into", 2, "dim of shape", dim)
  check_t("autograd.index_add_into", 3, idx)
  check_t("autograd.index_add_into", 4, src)
  local n = shape[dim]
  idx = idx:reshape({ idx:numel() }) % (n + 1)   -- negative indices count from the end
  if T.index_add then
    return T.index_add(T.zeros(shape, { dtype = src.dtype }), dim, idx, src)
  end
  if T.scatter_add and #shape > 0 then
    local bshape = {}
    for i = 1, #shape do bshape[i] = 1 end
    bshape[dim] = idx:numel()
    local full = idx:reshape(bshape):expand(src.shape)
    return T.scatter_add(T.zeros(shape, { dtype = src.dtype }), dim, full, src)
  end
  local k = idx:numel()
  local hot = T.eq(idx:reshape({ k, 1 }), T.arange(1, n + 1):reshape({ 1, n })):to(src.dtype)
  local nd = #shape
  local s = src
  if dim ~= nd then s = s:transpose(dim, nd) end
  local r = T.matmul(s, hot)
  if dim ~= nd then r = r:transpose(dim, nd) end
  return r
end
autograd.index_add_into = index_add_into

local function key_kind(key)
  if math.type(key) == "integer" then return "int" end
  if is_t(key) then return key.dtype == T.bool and "mask" or "tensor" end
  if type(key) == "table" then
    local all_int, adv = true, false
    for i = 1, #key do
      local k = key[i]
      if is_t(k) then adv = true all_int = false
      elseif math.type(k) ~= "integer" then all_int = false end
    end
    if adv then return "advanced" end
    return all_int and "ints" or "basic"
  end
  return "other"
end

rules.index = function(raw, x, key)
  local out = raw(x, key)
  local kind = key_kind(key)
  local shape = x.shape
  if kind == "int" then
    local i = key < 0 and key + shape[1] + 1 or key
    return { name = "SelectBackward0", inputs = { x }, shape = shape, dim = 1, i = i, view_of = x,
      backward = function(n, g) return pad_along(g:unsqueeze(1), n.shape, 1, n.i, 1) end }, out
  elseif kind == "tensor" then
    return { name = "IndexBackward0", inputs = { x }, saved = { key, n = 1 }, shape = shape,
      backward = function(n, g)
        local idx = n.saved[1]
        local k = idx:numel()
        local rest = { k }
        for i = 2, #n.shape do rest[i] = n.shape[i] end
        return index_add_into(n.shape, 1, idx, g:reshape(rest))
      end }, out
  elseif kind == "ints" or kind == "basic" or kind == "mask" then
    -- no repeated positions: write g into zeros through the same key
    return { name = kind == "mask" and "IndexBackward0" or (kind == "ints" and "SelectBackward0" or "SliceBackward0"),
      inputs = { x }, saved = { key, n = 1 }, shape = shape, dtype = x.dtype, view_of = kind ~= "mask" and x or nil,
      backward = function(n, g)
        local z = T.zeros(n.shape, { dtype = g.dtype })
        z[n.saved[1]] = g
        return z
      end }, out
  end
  -- advanced keys mixed with basic ones: index the positions instead
  return { name = "IndexBackward0", inputs = { x }, saved = { key, n = 1 }, shape = shape,
    backward = function(n, g)
      local total = numel_of(n.shape)
      local pos = T.no_grad(function() return T.arange(1, total + 1):reshape(n.shape)[n.saved[1]] end)
      return index_add_into({ total }, 1, pos, g:reshape({ g:numel() })):reshape(n.shape)
    end }, out
end
rules.index_select = function(raw, x, dim, idx)
  local out = raw(x, dim, idx)
  local shape = x.shape
  return { name = "IndexSelectBackward0", inputs = { x }, saved = { idx, n = 1 }, shape = shape, dim = normdim(dim, #shape),
    backward = function(n, g) return index_add_into(n.shape, n.dim, n.saved[1], g) end }, out
end
rules.masked_fill = function(raw, x, mask, v)
  local out = raw(x, mask, v)
  return { name = is_t(v) and "MaskedFillBackward1" or "MaskedFillBackward0", inputs = { x, mask, v }, saved = { mask, n = 1 },
    backward = function(n, g)
      local m = n.saved[1]
      local gv
      if need(n, 3) then gv = T.sum(keep_where(m, g)) end
      return zero_where(m, g), nil, gv
    end }, out
end
rules.gather = function(raw, x, dim, idx)
  local out = raw(x, dim, idx)
  local shape = x.shape
  return { name = "GatherBackward0", inputs = { x }, saved = { idx, n = 1 }, shape = shape, dim = normdim(dim, #shape),
    backward = function(n, g)
      local id = n.saved[1]
      local d, nd = n.dim, #n.shape
      if T.scatter_add then return T.scatter_add(T.zeros(n.shape, { dtype = g.dtype }), d, id, g) end
      -- one-hot over the gathered dim: (.., k, n, ..) summed over k
      local hot = T.eq(id:unsqueeze(d + 1), arange_along(n.shape[d], d + 1, nd + 1))
      local r = T.sum(keep_where(hot, g:unsqueeze(d + 1):expand(hot.shape)), d)
      return sum_to(r, n.shape)
    end }, out
end

rules.where_method = function(raw, x, c, y)
  local out = raw(x, c, y)
  return { name = "WhereBackward0", inputs = { x, c, y }, saved = { c, n = 1 },
    backward = function(n, g)
      local cond = n.saved[1]
      return need(n, 1) and keep_where(cond, g) or nil, nil, need(n, 3) and zero_where(cond, g) or nil
    end }, out
end
rules.movedim = function(raw, x, src, dst)
  local out = raw(x, src, dst)
  return { name = "PermuteBackward0", inputs = { x }, src = src, dst = dst, view_of = x,
    backward = function(n, g) return g:movedim(n.dst, n.src) end }, out
end
rules.masked_select = function(raw, x, mask)
  local out = raw(x, mask)
  return { name = "MaskedSelectBackward0", inputs = { x }, saved = { mask, n = 1 }, shape = x.shape,
    backward = function(n, g)
      local m = n.saved[1]
      local full = T.zeros(n.shape, { dtype = g.dtype })
      local z = (full + T.zeros_like(m, { dtype = g.dtype }))   -- the broadcast shape of x and mask
      z[m:expand(z.shape)] = g
      return z
    end }, out
end
-- values and 1-based indices along dim (sort, topk): scatter g back
local function sorted_rule(name, dim_of)
  return function(raw, x, ...)
    local r = pack(raw(x, ...))
    local nd = x:dim()
    return { name = name, inputs = { x }, saved = { r[2], n = 1 }, shape = x.shape, dim = normdim(dim_of(...) or -1, nd),
      nondiff = { [2] = true },
      backward = function(n, g)
        if #n.shape == 0 then return g end
        return T.scatter_add(T.zeros(n.shape, { dtype = g.dtype }), n.dim, n.saved[1], g)
      end }, unpack(r, 1, r.n)
  end
end
rules.sort = sorted_rule("SortBackward0", function(d)
  if math.type(d) == "integer" then return d end
  if is_opts(d) then return d.dim end
end)
rules.topk = sorted_rule("TopkBackward0", function(_, d, opts)
  if math.type(d) == "integer" then return d end
  if is_opts(d) then return d.dim end
  if is_opts(opts) then return opts.dim end
end)
rules.scatter_add = function(raw, x, dim, idx, src)
  local out = raw(x, dim, idx, src)
  return { name = "ScatterAddBackward0", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim,
    backward = function(n, g)
      return g, nil, nil, need(n, 4) and T.gather(g, n.dim, n.saved[1]) or nil
    end }, out
end
rules.scatter = function(raw, x, dim, idx, src, ...)
  local out = raw(x, dim, idx, src, ...)
  return { name = is_t(src) and "ScatterBackward0" or "ScatterBackward1", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim,
    backward = function(n, g)
      local id = n.saved[1]
      local gx
      if need(n, 1) then gx = T.scatter(g, n.dim, id, 0) end
      return gx, nil, nil, need(n, 4) and T.gather(g, n.dim, id) or nil
    end }, out
end

rules.cat = function(raw, list, dim, ...)
  local out = raw(list, dim, ...)
  local inputs, sizes = {}, {}
  local d = dim or 1
  local nd
  for i = 1, #list do
    local x = list[i]
    inputs[i] = x
    if is_t(x) and not nd and not (x:dim() == 1 and x:numel() == 0) then nd = x:dim() end
  end
  d = normdim(d, nd or 1)
  for i = 1, #list do
    local x = list[i]
    sizes[i] = (is_t(x) and x:dim() > 0 and not (x:dim() == 1 and x:numel() == 0 and nd ~= 1)) and x:size(d) or 0
  end
  return { name = "CatBackward0", inputs = inputs, ninputs = #list, sizes = sizes, dim = d,
    backward = function(n, g)
      local r, off = {}, 1
      for i = 1, n.ninputs do
        local s = n.sizes[i]
        if need(n, i) then r[i] = g:narrow(n.dim, off, s) end
        off = off + s
      end
      return unpack(r, 1, n.ninputs)
    end }, out
end
rules.concat = rules.cat
rules.stack = function(raw, list, dim, ...)
  local out = raw(list, dim, ...)
  local inputs = {}
  for i = 1, #list do inputs[i] = list[i] end
  return { name = "StackBackward0", inputs = inputs, ninputs = #list, dim = normdim(dim or 1, out:dim() - 1, 1),
    backward = function(n, g)
      local r = {}
      for i = 1, n.ninputs do
        if need(n, i) then r[i] = g:select(n.dim, i) end
      end
      return unpack(r, 1, n.ninputs)
    end }, out
end

-- copies and casts ----------------------------------------------------------------
local function identity_rule(name)
  return function(raw, x, ...)
    local out = raw(x, ...)
    if rawequal(out, x) then return nil, out end
    return { name = name, inputs = { x }, backward = function(_, g) return g end }, out
  end
end
rules.clone = identity_rule("CloneBackward0")
rules.contiguous = identity_rule("CloneBackward0")
for _, name in ipairs { "to", "float", "double", "half", "bfloat16", "cfloat", "cdouble", "type_as" } do
  rules[name] = identity_rule("ToCopyBackward0")
end
rules.positive = identity_rule("AliasBackward0")

-- matrix products ---------------------------------------------------------------
local function mT(x) return x:transpose(-1, -2) end
local function mm_bw(n, g)
  local x, y = n.saved[1], n.saved[2]
  return need(n, 1) and T.mm(g, y:t()) or nil, need(n, 2) and T.mm(x:t(), g) or nil
end
rules.mm = function(raw, a, b)
  local out = raw(a, b)
  return { name = "MmBackward0", inputs = { a, b }, saved = { a, b, n = 2 }, backward = mm_bw }, out
end
rules.bmm = function(raw, a, b)
  local out = raw(a, b)
  return { name = "BmmBackward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      return need(n, 1) and T.bmm(g, mT(y)) or nil, need(n, 2) and T.bmm(mT(x), g) or nil
    end }, out
end
rules.dot = function(raw, a, b)
  local out = raw(a, b)
  return { name = "DotBackward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      return need(n, 1) and y * g or nil, need(n, 2) and x * g or nil
    end }, out
end
rules.mv = function(raw, a, b)
  local out = raw(a, b)
  return { name = "MvBackward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      return need(n, 1) and g:unsqueeze(2) * y:unsqueeze(1) or nil, need(n, 2) and T.mv(x:t(), g) or nil
    end }, out
end
rules.outer = function(raw, a, b)
  local out = raw(a, b)
  return { name = "MulBackward0", inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      return need(n, 1) and T.mv(g, y) or nil, need(n, 2) and T.mv(g:t(), x) or nil
    end }, out
end
rules.ger = rules.outer
rules.matmul = function(raw, a, b)
  local out = raw(a, b)
  local da, db = a:dim(), b:dim()
  local name = (da == 1 and db == 1) and "DotBackward0" or (da == 2 and db == 1) and "MvBackward0"
    or (da == 2 and db == 2) and "MmBackward0" or (da == 1 and db == 2) and "SqueezeBackward1" or "BmmBackward0"
  return { name = name, inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      local dx, dy = x:dim(), y:dim()
      local ga, gb
      if dx == 1 and dy == 1 then
        return need(n, 1) and g * y or nil, need(n, 2) and g * x or nil
      elseif dx == 1 then       -- (k) @ (..., k, m) -> (..., m)
        local g2 = g:unsqueeze(-2)
        if need(n, 1) then ga = T.matmul(g2, mT(y)):squeeze(-2) end
        if need(n, 2) then gb = T.matmul(x:unsqueeze(2), g2) end
      elseif dy == 1 then       -- (..., n, k) @ (k) -> (..., n)
        local g2 = g:unsqueeze(-1)
        if need(n, 1) then ga = T.matmul(g2, y:unsqueeze(1)) end
        if need(n, 2) then gb = T.matmul(mT(x), g2):squeeze(-1) end
      else
        if need(n, 1) then ga = T.matmul(g, mT(y)) end
        if need(n, 2) then gb = T.matmul(mT(x), g) end
      end
      return ga, gb
    end }, out
end

-- the fused linear layer (src/l_grad_linear.c; the engine records it with a C
-- rule: this one serves the op list and documents the formulas)
rules._linear = function(raw, x, w, b)
  local out = raw(x, w, b)
  return { name = b ~= nil and "AddmmBackward0" or "MmBackward0", inputs = { x, w, b }, ninputs = b ~= nil and 3 or 2,
    saved = { x, w, n = 2 },
    backward = function(n, g)
      local sx, sw = n.saved[1], n.saved[2]
      local gb
      if n.ninputs == 3 and need(n, 3) then gb = g:sum(1) end
      return need(n, 1) and T.mm(g, sw) or nil, need(n, 2) and T.mm(g:t(), sx) or nil, gb
    end }, out
end

-- complex parts --------------------------------------------------------------
-- The engine casts each returned gradient to its input's dtype, so a real
-- gradient for a complex input arrives as g + 0i.
local function unit_i(dtype)   -- the complex scalar i, as a 0-dim tensor
  return T.sqrt(T.full({}, -1, { dtype = dtype }))
end
rules.real = function(raw, x)
  local out = raw(x)
  if rawequal(out, x) then return nil, out end
  return { name = "RealBackward0", inputs = { x }, view_of = x, backward = function(_, g) return g end }, out
end
rules.imag = function(raw, x)
  local out = raw(x)
  local dt = x.dtype
  return { name = "ImagBackward0", inputs = { x }, view_of = x,
    backward = function(_, g) return g:to(dt) * unit_i(dt) end }, out
end
rules.conj = function(raw, x)
  local out = raw(x)
  if rawequal(out, x) then return nil, out end
  return { name = "ConjBackward0", inputs = { x }, conj_aware = true, backward = function(_, g) return T.conj(g) end }, out
end
-- PyTorch's angle_backward: zeros for real inputs; g * z / |z|^2 * i (0 at z = 0)
rules.angle = function(raw, x)
  local out = raw(x)
  return { name = "AngleBackward0", inputs = { x }, saved = { x, n = 1 },
    backward = function(n, g)
      local z = n.saved[1]
      if not z:is_complex() then return T.zeros_like(z, { dtype = g.dtype }) end
      local a = z:abs()
      local r = g:to(z.dtype) * z / (a * a) * unit_i(z.dtype)
      return T.where(T.eq(a, 0), T.zeros_like(r), r)
    end }, out
end

-- unfold: every window's gradient added back at its positions along dim
rules.unfold = function(raw, x, dim, size, step)
  local out = raw(x, dim, size, step)
  local shape = x.shape
  return { name = "UnfoldBackward0", inputs = { x }, shape = shape, dim = normdim(dim, math.max(#shape, 1)), size = size,
    step = step, view_of = x,
    backward = function(n, g)
      if #n.shape == 0 then return g:reshape({}) end
      local d, k = n.dim, g.shape[n.dim]
      local src = g:movedim(-1, d + 1)               -- (..., windows, size, ...)
      local sshape = src.shape
      local merged = {}
      for i = 1, #sshape do
        if i == d then merged[#merged + 1] = sshape[d] * sshape[d + 1]
        elseif i ~= d + 1 then merged[#merged + 1] = sshape[i] end
      end
      local pos = T.no_grad(function()
        return (T.arange(0, k):reshape({ k, 1 }) * n.step + T.arange(1, n.size + 1):reshape({ 1, n.size })):reshape({ k * n.size })
      end)
      return index_add_into(n.shape, d, pos, src:reshape(merged))
    end }, out
end

-- index_add / index_copy / index_fill (their in-place forms use these too)
local function alpha_of(a)
  if type(a) == "number" then return a end
  if is_opts(a) and a.alpha ~= nil then return a.alpha end
  return 1
end
rules.index_add = function(raw, x, dim, idx, src, a, ...)
  local out = raw(x, dim, idx, src, a, ...)
  local alpha = alpha_of(a)
  return { name = "IndexAddBackward0", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim, alpha = alpha,
    backward = function(n, g)
      local gs
      if need(n, 4) then
        gs = g:dim() == 0 and g or g:index_select(n.dim, n.saved[1])
        if n.alpha ~= 1 then gs = gs * n.alpha end
      end
      return g, nil, nil, gs
    end }, out
end
rules.index_copy = function(raw, x, dim, idx, src, ...)
  local out = raw(x, dim, idx, src, ...)
  return { name = "IndexCopyBackward0", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim,
    backward = function(n, g)
      local id = n.saved[1]
      local gx, gs
      if need(n, 1) then gx = g:dim() == 0 and T.zeros_like(g) or g:index_fill(n.dim, id, 0) end
      if need(n, 4) then gs = g:dim() == 0 and g or g:index_select(n.dim, id) end
      return gx, nil, nil, gs
    end }, out
end
rules.index_fill = function(raw, x, dim, idx, v, ...)
  local out = raw(x, dim, idx, v, ...)
  return { name = "IndexFillBackward" .. (is_t(v) and "1" or "0"), inputs = { x, dim, idx, v }, saved = { idx, n = 1 },
    dim = dim,
    backward = function(n, g)
      local id = n.saved[1]
      local gx, gv
      if need(n, 1) then gx = g:dim() == 0 and T.zeros_like(g) or g:index_fill(n.dim, id, 0) end
      if need(n, 4) then gv = T.sum(g:dim() == 0 and g or g:index_select(n.dim, id)) end
      return gx, nil, nil, gv
    end }, out
end

-- in-place ops with a rule of their own (others reuse the out-of-place rule)
local inplace_rules = {}
inplace_rules.copy_ = function(raw, dst, src, ...)
  local out = raw(dst, src, ...)
  return { name = "CopyBackwards", inputs = { dst, src },
    backward = function(n, g) return need(n, 1) and T.zeros_like(g) or nil, g end }, out
end
inplace_rules.fill_ = function(raw, dst, v)
  local out = raw(dst, v)
  return { name = "FillBackward" .. (is_t(v) and "1" or "0"), inputs = { dst, v },
    backward = function(n, g) return need(n, 1) and T.zeros_like(g) or nil, need(n, 2) and T.sum(g) or nil end }, out
end
inplace_rules.zero_ = function(raw, dst)
  local out = raw(dst)
  return { name = "ZeroBackward0", inputs = { dst }, backward = function(_, g) return T.zeros_like(g) end }, out
end
inplace_rules.setindex = function(raw, dst, key, v)
  raw(dst, key, v)
  local kind = key_kind(key)
  return { name = (kind == "tensor" or kind == "mask" or kind == "advanced") and "IndexPutBackward0" or "CopySlices",
    inputs = { dst, true, v }, saved = { key, n = 1 },
    backward = function(n, g)
      local k = n.saved[1]
      local gd, gv
      if need(n, 1) then gd = g:clone() gd[k] = 0 end
      if need(n, 3) then gv = g[k] end
      return gd, nil, gv
    end }, dst
end
-- out-of-place rules that do not read their first input in backward: their
-- in-place variants need no copy of the old value
local NO_SELF = { add = true, sub = true, neg = true, relu = true, sigmoid = true, tanh = true, exp = true,
  copy_ = true, fill_ = true, zero_ = true, setindex = true, clone = true }

---------------------------------------------------------------------------
-- the hook
---------------------------------------------------------------------------
local function unknown_rule(name)
  return function(raw, ...)
    local args = pack(...)
    local inputs = {}
    for i = 1, args.n do
      local a = args[i]
      if is_t(a) then inputs[#inputs + 1] = a
      elseif type(a) == "table" and getmetatable(a) == nil then
        for _, e in ipairs(a) do if is_t(e) then inputs[#inputs + 1] = e end end
      end
    end
    return { name = name .. "Backward", inputs = inputs, ninputs = #inputs,
      backward = function() fail("backward", "the derivative for '" .. name .. "' is not implemented") end },
      raw(...)
  end
end

local hook
autograd.inplace_rules = inplace_rules
-- the ops the engine's C rules (src/binding/l_grad_rules.c) compute gradients
-- with, by the names of AG_FNS (src/binding/l_autograd.h; T._ag_init checks
-- that the two agree)
local cfns = { mul = methods.mul, add = methods.add, sub = methods.sub, div = methods.div, neg = methods.neg,
  mm = methods.mm, t = methods.t, transpose = methods.transpose, reshape = methods.reshape,
  expand = methods.expand, pow = methods.pow, zeros_like = methods.zeros_like or T.zeros_like, where = T.where,
  le = methods.le, threshold_backward = T._threshold_backward, rsub = methods.rsub or T.rsub, sum = methods.sum,
  add_ = methods.add_, unsqueeze = methods.unsqueeze }
hook, autograd.Node = T._ag_init { rules = rules, inplace_rules = inplace_rules, no_self = NO_SELF,
  unknown = unknown_rule, methods = methods, cfns = cfns }
T._set_autograd_hook(hook)
local spec_of = T._ag_spec

---------------------------------------------------------------------------
-- the engine's entry points (src/l_autograd.c: T._ag_run)
---------------------------------------------------------------------------
local ERR_FREED = "Trying to backward through the graph a second time (or directly access saved tensors after they " ..
  "have already been freed). Saved intermediate values of the graph are freed when you call .backward() or " ..
  "autograd.grad(). Specify retain_graph=true if you need to backward through the graph a second time or if you " ..
  "need to access saved tensors after calling backward."

local run = T._ag_run

local function modes(opts)
  local create = opts.create_graph and true or false
  local retain = opts.retain_graph
  if retain == nil then retain = create end
  return retain and true or false, create
end

-- T.autograd.backward(tensors [, grad_tensors] [, opts])
function autograd.backward(tensors, grad_tensors, opts)
  if is_opts(grad_tensors) then grad_tensors, opts = nil, grad_tensors end
  argcheck(is_t(tensors) or type(tensors) == "table", "autograd.backward", 1, "tensor or list of tensors", tensors)
  check_opts("autograd.backward", 3, opts)
  if opts then T._check_opts("autograd.backward", opts, { "retain_graph", "create_graph" }) end
  local retain, create = modes(opts or {})
  run("backward", tensors, grad_tensors, retain, create)
end

-- t:backward([grad] [, opts])
function methods.backward(t, grad, opts)
  check_t("backward", 1, t)
  if is_opts(grad) then grad, opts = nil, grad end
  argcheck(grad == nil or is_t(grad) or type(grad) == "number", "backward", 2, "tensor or number", grad)
  check_opts("backward", 3, opts)
  if opts then
    T._check_opts("backward", opts, { "retain_graph", "create_graph" })
    local retain, create = modes(opts)
    run("backward", t, grad, retain, create)
  else
    run("backward", t, grad, false, false)
  end
end

-- T.autograd.grad(outputs, inputs [, grad_outputs] [, opts]) -> list of gradients
function autograd.grad(outputs, inputs, grad_outputs, opts)
  if is_opts(grad_outputs) then grad_outputs, opts = nil, grad_outputs end
  argcheck(is_t(outputs) or type(outputs) == "table", "autograd.grad", 1, "tensor or list of tensors", outputs)
  argcheck(is_t(inputs) or type(inputs) == "table", "autograd.grad", 2, "tensor or list of tensors", inputs)
  check_opts("autograd.grad", 4, opts)
  if opts then T._check_opts("autograd.grad", opts, { "retain_graph", "create_graph", "allow_unused" }) end
  opts = opts or {}
  local retain, create = modes(opts)
  return run("grad", outputs, grad_outputs, retain, create, inputs or {}, opts.allow_unused)
end

---------------------------------------------------------------------------
-- tensor methods
---------------------------------------------------------------------------
function methods.detach(t) check_t("detach", 1, t) return t.data end
function methods.detach_(t)
  check_t("detach_", 1, t)
  local m = getmeta(t)
  if m then m.grad_fn, m.output_nr, m.base = nil, nil, nil end
  set_flag(t, false)
  return t
end
function methods.requires_grad_(t, b)
  check_t("requires_grad_", 1, t)
  if b == nil then b = true end
  t.requires_grad = b
  return t
end
function methods.retain_grad(t)
  check_t("retain_grad", 1, t)
  if not t.requires_grad then fail("retain_grad", "can't retain_grad on Tensor that has requires_grad=false") end
  local m = getmeta(t, true)
  local gf = m.grad_fn
  if not gf then return t end  -- leaves keep their grad anyway
  gf = spec_of(gf)
  gf.retained = gf.retained or setmetatable({}, { __mode = "v" })
  gf.retained[m.output_nr or 1] = t
  m.retains_grad = true
  return t
end
function methods.register_hook(t, fn)
  check_t("register_hook", 1, t)
  argcheck(type(fn) == "function" or (getmetatable(fn) or {}).__call, "register_hook", 2, "function", fn)
  if not t.requires_grad then fail("register_hook", "cannot register a hook on a tensor that doesn't require gradient") end
  local m = getmeta(t, true)
  local hs
  if m.grad_fn then
    local gf = spec_of(m.grad_fn)
    gf.pre_hooks = gf.pre_hooks or {}
    local nr = m.output_nr or 1
    gf.pre_hooks[nr] = gf.pre_hooks[nr] or {}
    hs = gf.pre_hooks[nr]
  else
    m.hooks = m.hooks or {}
    hs = m.hooks
  end
  hs[#hs + 1] = fn
  return { remove = function() for i, h in ipairs(hs) do if h == fn then table.remove(hs, i) break end end end }
end

---------------------------------------------------------------------------
-- autograd.Function
---------------------------------------------------------------------------
local Ctx = {}
Ctx.__index = function(ctx, k)
  if k == "saved_tensors" then
    local n = rawget(ctx, "_node")
    if n then
      if n.saved == false then fail("backward", ERR_FREED) end
      local s = n.saved or {}
      return { unpack(s, 1, s.n or #s) }
    end
    local s = rawget(ctx, "_saved") or {}
    return { unpack(s, 1, s.n or #s) }
  end
  return Ctx[k]
end
function Ctx:save_for_backward(...) rawset(self, "_saved", pack(...)) end
function Ctx:mark_non_differentiable(...)
  local nd = rawget(self, "_nondiff") or {}
  for i = 1, select("#", ...) do nd[select(i, ...)] = true end
  rawset(self, "_nondiff", nd)
end
function Ctx:set_materialize_grads(b) rawset(self, "_no_materialize", not b) end

local function function_backward(n, ...)
  local ctx = n.ctx
  local gs = pack(...)
  if not rawget(ctx, "_no_materialize") then
    for i = 1, n.fn_nout do
      if gs[i] == nil and n.fn_out_shapes[i] then gs[i] = T.zeros(n.fn_out_shapes[i], { dtype = n.out_dtypes[i] }) end
    end
  end
  local r = pack(n.user_backward(ctx, unpack(gs, 1, n.fn_nout)))
  local out = {}
  for i = 1, n.ninputs do out[i] = r[i] end
  return unpack(out, 1, n.ninputs)
end

function autograd.Function(def)
  if not (type(def) == "table" and type(def.forward) == "function" and type(def.backward) == "function") then
    fail("autograd.Function", "expected a table with forward and backward functions")
  end
  local F = { forward = def.forward, backward = def.backward, name = def.name or "Function" }
  function F.apply(...)
    local args = pack(...)
    local first = 1
    if rawequal(args[1], F) then first = 2 end
    local inputs = {}
    for i = first, args.n do inputs[#inputs + 1] = args[i] end
    local nin = args.n - first + 1
    local needs = {}
    local any = false
    if is_grad_enabled() then
      for i = 1, nin do
        local x = inputs[i]
        needs[i] = is_t(x) and x.requires_grad or false
        any = any or needs[i]
      end
    end
    local ctx = setmetatable({ needs_input_grad = needs }, Ctx)
    local outs = pack(with_mode(false, def.forward, ctx, unpack(inputs, 1, nin)))
    if not any then return unpack(outs, 1, outs.n) end
    for i = 1, outs.n do
      local o = outs[i]
      if is_t(o) then
        for k = 1, nin do
          if rawequal(o, inputs[k]) then outs[i] = o.data break end  -- an input returned as is: a new view
        end
      end
    end
    local out_dtypes, out_shapes = {}, {}
    for i = 1, outs.n do if is_t(outs[i]) then out_dtypes[i], out_shapes[i] = outs[i].dtype, outs[i].shape end end
    -- the node's name: "<name>Backward", or the name itself when it already
    -- is one (the library's own Functions take PyTorch's "EluBackward0")
    local gname = F.name:match("Backward%d*$") and F.name or F.name .. "Backward"
    local spec = { name = gname, inputs = inputs, ninputs = nin, saved = rawget(ctx, "_saved"),
      ctx = ctx, user_backward = def.backward, conj_aware = true,   -- a Function's backward gets PyTorch's gradients as they are
      out_dtypes = out_dtypes, fn_nout = outs.n, fn_out_shapes = out_shapes, nondiff = rawget(ctx, "_nondiff") and {} or nil,
      backward = function_backward }
    local nd = rawget(ctx, "_nondiff")
    if nd then for i = 1, outs.n do if nd[outs[i]] then spec.nondiff[i] = true end end end
    rawset(ctx, "_node", spec)
    return T._ag_attach(spec, unpack(outs, 1, outs.n))
  end
  return setmetatable(F, { __call = function(_, ...) return F.apply(...) end })
end

---------------------------------------------------------------------------
-- gradcheck: central finite differences in float64 against autograd
---------------------------------------------------------------------------
local function flat_values(t)
  local v = t:reshape({ t:numel() }):totable()
  return v
end

function autograd.gradcheck(fn, inputs, opts)
  argcheck(type(fn) == "function" or (getmetatable(fn) or {}).__call, "autograd.gradcheck", 1, "function", fn)
  argcheck(is_t(inputs) or type(inputs) == "table", "autograd.gradcheck", 2, "tensor or list of tensors", inputs)
  check_opts("autograd.gradcheck", 3, opts)
  opts = opts or {}
  local eps = opts.eps or 1e-6
  local atol = opts.atol or 1e-5
  local rtol = opts.rtol or 1e-3
  local raise = opts.raise_exception ~= false
  local single = is_t(inputs)
  local ins = single and { inputs } or inputs
  local function call()
    local r = pack(fn(unpack(ins, 1, #ins)))
    local outs = {}
    for i = 1, r.n do if is_t(r[i]) then outs[#outs + 1] = r[i] end end
    return outs
  end
  local function report(msg)
    if raise then fail("gradcheck", msg) end
    return false
  end
  for i, x in ipairs(ins) do
    if is_t(x) and x.requires_grad and x.dtype ~= T.float64 then
      return report("input " .. i .. " is " .. tostring(x.dtype) .. "; gradcheck needs float64 inputs")
    end
  end
  local nouts = #call()
  for oi = 1, nouts do
    -- a fresh graph per output: the numerical pass below writes into the inputs
    local out = call()[oi]
    if out.requires_grad then
      local no = out:numel()
      -- analytical jacobian rows, one backward per output element
      local ana = {}
      local diff_in = {}
      for i, x in ipairs(ins) do if is_t(x) and x.requires_grad then diff_in[#diff_in + 1] = i end end
      local xs = {}
      for k, i in ipairs(diff_in) do xs[k] = ins[i] end
      for j = 1, no do
        local go = T.zeros({ no }, { dtype = out.dtype })
        go:set(j, 1)
        local gs = autograd.grad({ out }, xs, { go:reshape(out.shape) }, { retain_graph = true, allow_unused = true })
        for k = 1, #xs do
          ana[k] = ana[k] or {}
          local gv = gs[k] and flat_values(gs[k]) or nil
          for p = 1, xs[k]:numel() do
            ana[k][p] = ana[k][p] or {}
            ana[k][p][j] = gv and gv[p] or 0.0
          end
        end
      end
      -- numerical jacobian
      for k, i in ipairs(diff_in) do
        local x = ins[i]
        local data = x.data
        local flat = data:is_contiguous() and data:reshape({ x:numel() }) or nil
        if not flat then fail("gradcheck", "input " .. i .. " must be contiguous") end
        for p = 1, x:numel() do
          local orig = flat:get(p)
          flat:set(p, orig + eps)
          local plus = T.no_grad(function() return flat_values(call()[oi]) end)
          flat:set(p, orig - eps)
          local minus = T.no_grad(function() return flat_values(call()[oi]) end)
          flat:set(p, orig)
          for j = 1, no do
            local num = (plus[j] - minus[j]) / (2 * eps)
            local a = ana[k][p][j]
            if not (math.abs(a - num) <= atol + rtol * math.abs(num)) then
              return report(string.format("Jacobian mismatch for output %d with respect to input %d,\n" ..
                "numerical: %.10g\nanalytical: %.10g\n(at input element %d, output element %d)", oi, i, num, a, p, j))
            end
          end
        end
      end
    end
  end
  return true
end

-- The module's own functions (they are also T's): package.loaded holds
-- this table, not T, so a traceback names T's other functions 'ltensor.*'
-- rather than through this module
-- (T.autograd: backward, grad, no_grad, Function, ...)
return T.autograd
