-- ltensor.distributions.special: T.lgamma, T.digamma, T.polygamma (n = 1)
-- and T.erfinv with their gradients, unless the core already has them.
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local B = require "ltensor.distributions.base"
local util = require "ltensor.util"
local inf = math.huge
local math, is_t = B.math, B.is_t
local fail, pi = B.fail, B.pi
---------------------------------------------------------------------------
-- special functions with gradients
---------------------------------------------------------------------------
local trigamma_f = autograd.Function {
  name = "Trigamma",
  forward = function(ctx, x) ctx:save_for_backward(x) return T._trigamma(x) end,
  backward = function(ctx) fail("polygamma", "the gradient of polygamma(1, x) is not implemented") end,
}
local digamma_f = autograd.Function {
  name = "Digamma",
  forward = function(ctx, x) ctx:save_for_backward(x) return T._digamma(x) end,
  backward = function(ctx, g) local x = ctx.saved_tensors[1] return g * trigamma_f(x) end,
}
local lgamma_f = autograd.Function {
  name = "Lgamma",
  forward = function(ctx, x) ctx:save_for_backward(x) return T._lgamma(x) end,
  backward = function(ctx, g) local x = ctx.saved_tensors[1] return g * digamma_f(x) end,
}
-- x is argument #pos (1 unless given); anything after it is a slip (issue 11)
local function check_special(name, x, pos, ...)
  pos = pos or 1
  if not is_t(x) then
    error(("ltensor.%s: bad argument #%d (tensor expected, got %s%s)"):format(name, pos, type(x),
      pos == 1 and util.tensor_method_hint(name) or ""), 0)
  end
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil then
      error(("ltensor.%s: bad argument #%d (unexpected extra argument (got %s))"):format(name, pos + i,
        is_t(v) and "ltensor.Tensor" or type(v)), 0)
    end
  end
end
if not T.lgamma then
  T.lgamma = function(x, ...) check_special("lgamma", x, 1, ...) return lgamma_f(x) end
  T._methods.lgamma = T.lgamma
end
if not T.digamma then
  T.digamma = function(x, ...) check_special("digamma", x, 1, ...) return digamma_f(x) end
  T._methods.digamma = T.digamma
end
if not T.polygamma then
  T.polygamma = function(n, x, ...)
    check_special("polygamma", x, 2, ...)
    if n == 0 then return digamma_f(x) end
    if n ~= 1 then error("ltensor.polygamma: only n = 0 and n = 1 are implemented, got " .. tostring(n), 0) end
    return trigamma_f(x)
  end
end

---------------------------------------------------------------------------
-- T.erfinv (unless the core has it): Giles' approximation ("Approximating
-- the erfinv function", GPU Computing Gems, 2011) refined by two Newton
-- steps on erf in float64, so the result is exact to a few ulp in every
-- floating dtype; +-1 give +-inf and |x| > 1 NaN, as PyTorch.  The gradient
-- is sqrt(pi)/2 exp(erfinv(x)^2).
---------------------------------------------------------------------------
local function erfinv_forward(x)
  local dt = x.dtype
  local y = x:to(T.float64)
  local w = -((1 - y) * (1 + y)):log()
  local ws = w - 2.5
  local p1 = T.full_like(ws, 2.81022636e-08)
  for _, c in ipairs { 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
    -0.00417768164, 0.246640727, 1.50140941 } do p1 = p1 * ws + c end
  local wl = w:sqrt() - 3
  local p2 = T.full_like(wl, -0.000200214257)
  for _, c in ipairs { 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
    0.00943887047, 1.00167406, 2.83297682 } do p2 = p2 * wl + c end
  local r = T.where(w:lt(5), p1, p2) * y
  local k = 2 / math.sqrt(pi)
  for _ = 1, 2 do
    local step = (T.erf(r) - y) / ((-(r * r)):exp() * k)
    r = r - T.where(step:isfinite(), step, T.zeros_like(step))
  end
  r = T.where(y:abs():eq(1), y * inf, r)
  r = T.where(y:abs():gt(1), T.full_like(r, 0 / 0), r)
  return r:to(dt)
end
local erfinv_f = autograd.Function {
  name = "Erfinv",
  forward = function(ctx, x)
    local r = erfinv_forward(x)
    ctx:save_for_backward(r)
    return r
  end,
  backward = function(ctx, g)
    local r = ctx.saved_tensors[1]
    return g * (r * r):exp() * (math.sqrt(pi) / 2)
  end,
}
if not T.erfinv then
  T.erfinv = function(x, ...)
    check_special("erfinv", x, 1, ...)
    if not (x.dtype == T.float64 or x.dtype == T.float32 or x.dtype == T.float16 or x.dtype == T.bfloat16) then
      x = x:to(T.get_default_dtype())   -- integers and bools promote to the default float type, as torch
    end
    return erfinv_f(x)
  end
  T._methods.erfinv = T.erfinv
end
return true
