-- Complex gradients follow PyTorch's convention (grad * conj(df/dz) for a
-- holomorphic f): for each function, L = real(sum(f(z) * w)) with complex
-- weights w, and the gradients of z (and of a second complex or a real
-- operand) must be PyTorch 1.13's (spec/fixtures/gen_complex_grads.py).
local T = require "ltensor"
local R = dofile("spec/fixtures/complex_grads.lua")

local function ct(list)
  local re, im = {}, {}
  for i, p in ipairs(list) do re[i], im[i] = p[1], p[2] end
  return T.complex(T.tensor(re, { dtype = T.float64 }), T.tensor(im, { dtype = T.float64 }))
end

local function max_err(got, want)
  local err = 0
  if got:is_complex() then
    local re, im = T.real(got):totable(), T.imag(got):totable()
    for i = 1, #want do err = math.max(err, math.abs(re[i] - want[i][1]), math.abs(im[i] - want[i][2])) end
  else
    local g = got:totable()
    for i = 1, #want do err = math.max(err, math.abs(g[i] - want[i])) end
  end
  return err
end

local ops = {
  mul = function(a, b) return a * b end, div = function(a, b) return a / b end,
  sub = function(a, b) return a - b * 2 end, square = function(a) return a * a end,
  exp = function(a) return a:exp() end, log = function(a) return a:log() end,
  sin = function(a) return a:sin() end, cos = function(a) return a:cos() end, tan = function(a) return a:tan() end,
  tanh = function(a) return a:tanh() end, sigmoid = function(a) return a:sigmoid() end,
  sqrt = function(a) return a:sqrt() end, rsqrt = function(a) return a:rsqrt() end,
  reciprocal = function(a) return a:reciprocal() end, pow3 = function(a) return a:pow(3) end,
  powzz = function(a, b) return a:pow(b) end, asinh = function(a) return a:asinh() end,
  cumsum = function(a) return a:cumsum(1) end, prod = function(a) return a:prod():expand(4) end,
  mean = function(a) return a:mean():expand(4) end,
  matmul = function(a, b) return a:view(2, 2):matmul(b:view(2, 2)):reshape(4) end,
  mixed = function(a, _, r) return a * r end, mixed_div = function(a, _, r) return r / a end,
  abs = function(a) return a:abs() * 1 end, angle = function(a) return a:angle() * 1 end,
  real = function(a) return T.real(a) * 1 end, imag = function(a) return T.imag(a) * 1 end,
  conj = function(a) return T.conj(a) * 1 end, sgn = function(a) return a:sgn() end,
}

describe("complex gradients", function()
  local z, u, r, w = ct(R.z), ct(R.u), T.tensor(R.r, { dtype = T.float64 }), ct(R.w)
  local names = {}
  for k in pairs(ops) do names[#names + 1] = k end
  table.sort(names)
  for _, name in ipairs(names) do
    it(name .. " gives PyTorch's (conjugate) gradients under a complex upstream gradient", function()
      local a, b, rr = z:clone():requires_grad_(), u:clone():requires_grad_(), r:clone():requires_grad_()
      local y = ops[name](a, b, rr)
      local L = y:is_complex() and T.real(y * w):sum() or (y * T.real(w)):sum()
      L:backward()
      local want = R.out[name]
      for which, t in pairs({ a = a, b = b, r = rr }) do
        if want[which] then
          assert.is_not_nil(t.grad, which)
          local e = max_err(t.grad, want[which])
          assert.is_true(e < 1e-9, ("%s: max error %g"):format(which, e))
        else
          assert.is_nil(t.grad, which)
        end
      end
    end)
  end

  it("a custom Function's backward gets the complex gradient as it is", function()
    local seen
    local F = T.autograd.Function({
      name = "Twice",
      forward = function(_, x) return x * 2 end,
      backward = function(_, g) seen = g return g * 2 end,
    })
    local a = z:clone():requires_grad_()
    T.real(F.apply(a) * w):sum():backward()
    -- d real(sum(2 a w)) : PyTorch hands the Function conj(w)... as its grad_output
    assert.is_true(max_err(seen, (function() local c = T.conj(w) local re, im = T.real(c):totable(), T.imag(c):totable()
      local t = {} for i = 1, #re do t[i] = { re[i], im[i] } end return t end)()) < 1e-12)
  end)
end)
