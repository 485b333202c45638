-- ltensor.autograd.rules_elementwise: the backward rules of the elementwise
-- ops: unary functions, binary arithmetic, comparisons' max/min, where,
-- clamp (scalar and tensor bounds), complex parts and constructors.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local H = require "ltensor.autograd.helpers"
local math, table = compat.math, compat.table
local pack, select, type, mtype = table.pack, select, type, math.type
local is_t = H.is_t
local need, zero_where, keep_where = H.need, H.zero_where, H.keep_where
local rules = H.rules
local function unary(name, formula, save_out, conj_aware)
  -- formula(node, g, x, y) -> grad of x; conj_aware: the formula handles
  -- complex gradients itself (not holomorphic: src/binding/l_backward.c conj_rule)
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

-- neg, exp, log, tanh, sigmoid and relu (and add, sub, mul, div, pow
-- below) have C rules that take every call, their in-place forms too
-- (src/binding/l_grad_rules.c)
rules.exp2 = unary("Exp2Backward0", function(_, g, _, y) return g * y * LN2 end, true)
rules.expm1 = unary("Expm1Backward0", function(_, g, _, y) return g * (y + 1) end, true)
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
-- src/binding/l_backward.c conj_rule)
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

-- add, sub, mul, div and pow: C rules (src/binding/l_grad_rules.c)
rules.rsub = function(raw, a, b, alpha)   -- rsub(a, b) = b - alpha * a
  local out = raw(a, b, alpha)
  return { name = "RsubBackward0", inputs = { a, b }, alpha = alpha_of(alpha),
    backward = function(n, g)
      local ga
      if need(n, 1) then ga = n.alpha and g * -n.alpha or -g end
      return ga, g
    end }, out
end
rules.floor_divide = function(raw, a, b)
  return { name = "FloorDivideBackward0", inputs = { a, b },
    backward = function(_, g) return T.zeros_like(g), T.zeros_like(g) end }, raw(a, b)
end

-- PyTorch's formulas: half the gradient to each side of a tie, none to
-- the side that lost; a NaN on either side is neither a tie nor a loss, so
-- both sides get the whole gradient (maximum, minimum; T.fmax/T.fmin are
-- autograd Functions of their own, lua/ltensor/tensor/shape.lua)
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
  -- a boolean scalar is the number 1 or 0 (as PyTorch), for the arithmetic below
  return { name = "Atan2Backward0", inputs = { a, b }, saved = { a == true and 1 or a == false and 0 or a, b == true and 1 or b == false and 0 or b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      local d = x * x + y * y
      return need(n, 1) and g * y / d or nil, need(n, 2) and -g * x / d or nil
    end }, out
end
-- fmod and remainder: a - b * div(a, b) with div rounding toward zero
-- (fmod) or down (remainder); d/da = 1, d/db = -div(a, b)
local function mod_rule(name, rounding_mode)
  return function(raw, a, b)
    local out = raw(a, b)
    return { name = name .. (is_t(b) and "Backward1" or "Backward0"), inputs = { a, b }, saved = { a, b, n = 2 },
      backward = function(n, g)
        local gb
        if need(n, 2) then gb = -g * T.div(n.saved[1], n.saved[2], { rounding_mode = rounding_mode }) end
        return g, gb
      end }, out
  end
end
rules.fmod = mod_rule("Fmod", "trunc")
rules.remainder = mod_rule("Remainder", "floor")
rules.lerp = function(raw, a, b, w)
  local out = raw(a, b, w)
  return { name = is_t(w) and "LerpBackward1" or "LerpBackward0", inputs = { a, b, w }, saved = { a, b, w == true and 1 or w == false and 0 or w, n = 3 },
    backward = function(n, g)
      local x, y, wt = n.saved[1], n.saved[2], n.saved[3]
      local gw
      if need(n, 3) then gw = g * (y - x) end
      return g * (-wt + 1), g * wt, gw
    end }, out
end

rules.where = function(raw, c, a, b, ...)
  -- where(condition) alone: nonzero's indices, nothing to differentiate
  if a == nil and b == nil and select("#", ...) == 0 then return nil, raw(c) end
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

-- clamp with tensor bounds: PyTorch's backward (clamp_backward_min_max),
-- which also covers min > max (the result is max, its gradient goes there)
local clamp_scalar_rule = rules.clamp
rules.clamp = function(raw, x, lo, hi)
  local l, h = lo, hi
  if type(lo) == "table" and not is_t(lo) then l, h = lo.min, lo.max end
  if not (is_t(l) or is_t(h)) then return clamp_scalar_rule(raw, x, lo, hi) end
  local out = raw(x, lo, hi)
  local function need(n, i)
    local m = n.need
    if m == nil then return true end
    if mtype(m) == "integer" then return compat.bit(m, i) end
    return m[i] == true
  end
  return { name = "ClampBackward0", inputs = { x, l, h }, saved = { x, l, h, n = 3 },
    backward = function(n, g)
      local v, mn, mx = n.saved[1], n.saved[2], n.saved[3]
      local zero = T.zeros({}, { dtype = g.dtype })
      local inside
      if mn ~= nil then inside = T.ge(v, mn) end
      if mx ~= nil then
        local le = T.le(v, mx)
        inside = inside and T.logical_and(inside, le) or le
      end
      local gx = T.where(inside, g, zero)
      local gmn, gmx
      if mn ~= nil and need(n, 2) then
        local c = T.lt(v, mn)
        if mx ~= nil then c = T.logical_and(c, T.lt(mn, mx)) end
        gmn = T.where(c, g, zero)
      end
      if mx ~= nil and need(n, 3) then
        local c = T.gt(v, mx)
        if mn ~= nil then c = T.logical_or(c, T.lt(mx, mn)) end
        gmx = T.where(c, g, zero)
      end
      return gx, gmn, gmx
    end }, out
end
rules.clip = rules.clamp

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

-- complex construction and views
rules.complex = function(raw, re, im)
  return { name = "ComplexBackward0", inputs = { re, im }, conj_aware = true,
    backward = function(_, g) return T.real(g), T.imag(g) end }, raw(re, im)
end
rules.view_as_real = function(raw, x)
  return { name = "ViewAsRealBackward0", inputs = { x }, view_of = x,
    backward = function(_, g) return T.view_as_complex(g:contiguous()) end }, raw(x)
end
rules.view_as_complex = function(raw, x)
  return { name = "ViewAsComplexBackward0", inputs = { x }, view_of = x, conj_aware = true,
    backward = function(_, g) return T.view_as_real(g) end }, raw(x)
end
return true
