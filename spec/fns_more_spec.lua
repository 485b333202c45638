-- spec/fns_more_spec.lua: the PyTorch 1.13 functions composed in
-- lua/ltensor/tensor/ (addcmul, addcdiv, heaviside, gcd, lcm,
-- float_power, ldexp, frexp, positive, inner, vdot, ger, chain_matmul,
-- diagflat, vander, atleast_*d, ravel, msort, take, argwhere, isin,
-- trapezoid/trapz, cumulative_trapezoid, cartesian_prod, combinations,
-- renorm, std_mean, var_mean, tensor_split, h/v/dsplit, h/v/d/column/row_stack,
-- unflatten, randint_like, i0): values, result dtypes and gradients against
-- PyTorch 1.13 (spec/fixtures/fns_more.lua, made by
-- spec/fixtures/gen_fns_more.py), then edge cases and every error message.
local T = require "ltensor"
local compat = require "ltensor.compat"
local unpack = compat.table.unpack
local FX = dofile("spec/fixtures/fns_more.lua")

local function build(s, rg)
  local t
  local n = 1
  for _, d in ipairs(s.shape) do n = n * d end
  local dt = T[s.dtype]
  if dt.is_complex then
    local re, im = {}, {}
    for i, z in ipairs(s.v) do re[i], im[i] = z[1], z[2] end
    local rdt = dt == T.complex64 and T.float32 or T.float64
    t = T.complex(T.tensor(re, { dtype = rdt }), T.tensor(im, { dtype = rdt }))
    if n == 0 then t = T.empty({ 0 }, { dtype = dt }) end
  elseif n == 0 then
    t = T.empty({ 0 }, { dtype = dt })
  else
    t = T.tensor(s.v, { dtype = dt })
  end
  t = t:reshape(s.shape)
  if rg then t.requires_grad = true end
  local leaf = t
  if s.nc then t = t:t() end
  return t, leaf
end

local function parts(t)
  t = t:detach():reshape({ -1 })
  if t:is_complex() then
    return T.real(t):to(T.float64):totable(), T.imag(t):to(T.float64):totable()
  end
  if t:is_floating_point() then return t:to(T.float64):totable() end
  return t:totable()
end

local RTOL = { float64 = 1e-10, float32 = 2e-6, complex128 = 1e-10, complex64 = 2e-6, float16 = 1e-3, bfloat16 = 1e-2 }
local function close(a, e, rtol)
  if type(e) == "boolean" or type(a) == "boolean" then return a == e end
  if e ~= e then return a ~= a end
  if e == math.huge or e == -math.huge then return a == e end
  return math.abs(a - e) <= rtol * math.abs(e) + rtol * 1e-3
end

-- actual tensor against a fixture spec: dtype, shape, values
local function check(where, a, s, tol)
  assert(T.is_tensor(a), where .. ": expected a tensor, got " .. type(a))
  assert.are.equal(s.dtype, a.dtype.name, where .. ": dtype")
  assert.are.same(s.shape, a.shape, where .. ": shape")
  local rtol = tol or RTOL[s.dtype] or 0
  local re, im = parts(s.nc and a:t() or a)
  for i = 1, #s.v do
    local e = s.v[i]
    local ok
    if type(e) == "table" then ok = close(re[i], e[1], rtol) and close(im[i], e[2], rtol)
    else ok = close(re[i], e, rtol) end
    if not ok then
      error(("%s: element %d is %s, PyTorch gives %s"):format(where, i,
        type(e) == "table" and (tostring(re[i]) .. "," .. tostring(im[i])) or tostring(re[i]),
        type(e) == "table" and (tostring(e[1]) .. "," .. tostring(e[2])) or tostring(e)), 0)
    end
  end
end

local function run(c, rg)
  local ins, leaves = {}, {}
  for i, s in ipairs(c.inputs) do
    local want = rg and c.grads[i] ~= nil
    ins[i], leaves[i] = build(s, want)
  end
  local env = setmetatable({ T = T, unpack = unpack }, { __index = _G })
  local args = {}
  for i = 1, #ins do args[i] = "x" .. i end
  local src = (#args > 0 and ("local " .. table.concat(args, ", ") .. " = ...\n") or "") .. "return " .. c.lua
  local f = assert((loadstring or load)(src, "=" .. c.lua, "t", env))
  if setfenv then setfenv(f, env) end
  return compat.table.pack(f(unpack(ins, 1, #ins))), ins, leaves
end

describe("the functions composed from existing ops", function()
  describe("against PyTorch 1.13", function()
    for k, c in ipairs(FX) do
      it(("%d: %s"):format(k, c.lua), function()
        local outs = run(c, false)
        assert.are.equal(#c.outs, outs.n, "number of results")
        for i, s in ipairs(c.outs) do check(c.lua .. " result " .. i, outs[i], s, c.tol) end
      end)
      if c.grads then
        it(("%d: the gradient of %s"):format(k, c.lua), function()
          local outs, _, leaves = run(c, true)
          local loss
          for i = 1, outs.n do
            local o = outs[i]
            if T.is_tensor(o) and o.requires_grad then
              local n = o:numel()
              local go = T.cos(T.arange(n, { dtype = T.float64 }) + 1):reshape(o.shape):to(o.dtype)
              local term = T.sum(o * go)
              if term:is_complex() then term = T.real(term) end
              loss = loss and loss + term or term
            end
          end
          loss:backward()
          for i, g in ipairs(c.grads) do
            if g then
              local s = c.inputs[i]
              local got = leaves[i].grad
              if got == nil then got = T.zeros_like(leaves[i]) end
              if s.nc then got = got:t() end
              check(c.lua .. " gradient " .. i, got, { dtype = g.dtype, shape = g.shape, v = g.v })
            end
          end
        end)
      end
    end
  end)

  describe("edge cases", function()
    it("in-place forms write into their tensor and return it", function()
      local F32 = { dtype = T.float32 }   -- (whole floats are integers on Lua 5.1/LuaJIT)
      local a = T.tensor({ 1, 2 }, F32)
      assert.are.equal(a, a:addcmul_(T.tensor({ 2, 3 }, F32), T.tensor({ 1, 1 }, F32)))
      assert.are.same({ 3.0, 5.0 }, a:totable())
      assert.are.equal(a, a:addcdiv_(T.tensor({ 2, 3 }, F32), T.tensor({ 2, 3 }, F32), { value = 2 }))
      assert.are.same({ 5.0, 7.0 }, a:totable())
      local g = T.tensor({ 12, 9 })
      assert.are.equal(g, g:gcd_(T.tensor({ 8, 6 })))
      assert.are.same({ 4, 3 }, g:totable())
      assert.are.equal(g, g:lcm_(T.tensor({ 6, 2 })))
      assert.are.same({ 12, 6 }, g:totable())
      local d = T.tensor({ 2.0, 3.0 }, { dtype = T.float64 })
      assert.are.equal(d, d:float_power_(2))
      assert.are.same({ 4.0, 9.0 }, d:totable())
      local l = T.tensor({ 1, 3 }, F32)
      assert.are.equal(l, l:ldexp_(T.tensor({ 2, -1 })))
      assert.are.same({ 4.0, 1.5 }, l:totable())
      local i = T.tensor({ 0 }, F32)
      assert.are.equal(i, i:i0_())
      assert.are.same({ 1.0 }, i:totable())
      local r = T.tensor({ { 3, 4 }, { 0.3, 0.4 } }, F32)
      assert.are.equal(r, r:renorm_(2, 1, 1))
      assert.is_true(math.abs(r:get(1, 1) - 0.6) < 1e-6 and math.abs(r:get(2, 2) - 0.4) < 1e-7)
    end)

    it("in-place forms follow autograd's and overlap rules, and write through non-contiguous views", function()
      local x = T.tensor({ 1.5, 2.5 }, { requires_grad = true })
      local y = x * 1
      y:addcmul_(x, x)
      T.sum(y):backward()
      assert.are.same({ 4.0, 6.0 }, x.grad:totable())   -- d(x + x^2)/dx
      local ok, e = pcall(function() return x:addcmul_(x, x) end)
      assert.is_false(ok)
      assert.are.equal("ltensor.addcmul_: a leaf Variable that requires grad is being used in an in-place operation.", e)
      ok, e = pcall(function() return T.ones(1, 3):expand(2, 3):addcdiv_(T.ones(2, 3), T.ones(2, 3)) end)
      assert.is_false(ok)
      assert.are.equal("ltensor.addcdiv_:", e:sub(1, 17))
      local c = T.tensor({ { 4, 6 }, { 8, 9 } }):t()
      c:gcd_(T.tensor({ 2, 3 }))
      assert.are.same({ { 2, 1 }, { 2, 3 } }, c:totable())
    end)

    it("positive, atleast_*, ravel and the splits return views of their input", function()
      local x = T.arange(6.0):reshape(2, 3)
      assert.are.equal(x, T.positive(x))
      assert.are.equal(x, T.atleast_2d(x))
      T.ravel(x)[2] = 40
      assert.are.equal(40, x:get(1, 2))
      local a, b = T.tensor_split(x, 2, 2)
      b[{ 1, 1 }] = -1
      assert.are.equal(-1, x:get(1, 3))
      local h1 = T.hsplit(x, { 3 })
      assert.are.same({ 2, 2 }, h1.shape)
      assert.are.same({ 2, 2 }, a.shape)
      local u = T.unflatten(x, 2, { 3, 1 })
      u[{ 2, 1, 1 }] = 7
      assert.are.equal(7, x:get(2, 1))
    end)

    it("gcd and lcm take a Lua integer as a weak scalar", function()
      assert.are.same({ 2, 3, 6 }, T.gcd(T.tensor({ 4, 9, 6 }), 6):totable())
      assert.are.equal(T.int32, T.lcm(T.tensor({ 4 }, { dtype = T.int32 }), 6).dtype)
      assert.are.same({ 12 }, T.lcm(4, T.tensor({ 6 })):totable())
    end)

    it("float_power is float64, or complex128 with a complex operand", function()
      assert.are.equal(T.float64, T.float_power(T.tensor({ 1 }, { dtype = T.int8 }), 2).dtype)
      assert.are.equal(T.float64, T.float_power(T.tensor({ true }), T.tensor({ 2.0 })).dtype)
      local z = T.complex(T.tensor({ 1 }, { dtype = T.float32 }), T.tensor({ 1 }, { dtype = T.float32 }))
      assert.are.equal(T.complex128, T.float_power(2, z).dtype)
    end)

    it("frexp's mantissa times 2^exponent gives the input back", function()
      local x = T.randn(50, { dtype = T.float64 }) * 1e5
      local m, e = T.frexp(x)
      assert.are.equal(T.int32, e.dtype)
      assert.is_true(T.equal(T.ldexp(m, e), x))
      local am = T.abs(m)
      assert.is_true(T.all(T.logical_and(T.ge(am, 0.5), T.lt(am, 1))):item())
    end)

    it("vander is differentiable (PyTorch 1.13's is not: checked numerically)", function()
      local x = T.tensor({ 0.5, -1.5, 2.0 }, { dtype = T.float64, requires_grad = true })
      assert.is_true(T.autograd.gradcheck(function(v) return T.vander(v, 4) end, { x }))
      assert.is_true(T.autograd.gradcheck(function(v) return T.vander(v, 3, true) end, { x }))
    end)

    it("i0's gradient is I1 (checked numerically too)", function()
      local x = T.tensor({ 0.3, -2.0, 9.5, -15.0 }, { dtype = T.float64, requires_grad = true })
      assert.is_true(T.autograd.gradcheck(T.i0, { x }))
      assert.are.equal("I0Backward0", T.i0(x).grad_fn.name)
    end)

    it("combinations and cartesian_prod carry gradients to repeated elements", function()
      local x = T.tensor({ 1.0, 2.0, 3.0 }, { dtype = T.float64, requires_grad = true })
      assert.is_true(T.autograd.gradcheck(function(v) return T.combinations(v, 2, true) end, { x }))
      assert.is_true(T.autograd.gradcheck(function(v) return T.cartesian_prod(v, v * 2) end, { x }))
    end)

    it("randint_like takes the shape and dtype of its input, and a generator", function()
      local x = T.zeros(3, 4, { dtype = T.int32 })
      local r = T.randint_like(x, 5)
      assert.are.same({ 3, 4 }, r.shape)
      assert.are.equal(T.int32, r.dtype)
      assert.is_true(T.all(T.logical_and(T.ge(r, 0), T.lt(r, 5))):item())
      local f = T.randint_like(T.zeros(1000), -3, 3)
      assert.are.equal(T.float32, f.dtype)
      assert.are.equal(-3, T.min(f):item())
      assert.are.equal(2, T.max(f):item())
      assert.are.same(f:trunc():totable(), f:totable())
      assert.are.equal(T.int16, T.randint_like(f, 2, { dtype = T.int16 }).dtype)
      local g1, g2 = T.Generator(7), T.Generator(7)
      local a = T.randint_like(T.zeros(20), 0, 100, { generator = g1 })
      local b = T.randint(0, 100, { 20 }, { generator = g2, dtype = T.float32 })
      assert.is_true(T.equal(a, b))
      assert.are.same({ 0 }, T.randint_like(T.zeros(0), 3).shape)
    end)

    it("isin works on large inputs without an n*m table", function()
      local e = T.arange(100000)
      local r = T.isin(e, T.tensor({ 5, 99999, 100000, -1 }))
      assert.are.equal(2, T.sum(r):item())
      assert.is_true(r:get(6) and r:get(100000))
    end)
  end)

  describe("errors", function()
    local function err(msg, f, ...)
      local ok, e = pcall(f, ...)
      assert.is_false(ok, "expected an error: " .. msg)
      assert.are.equal(msg, e)
    end
    local f2, i2 = T.tensor({ 1, 2 }, { dtype = T.float32 }), T.tensor({ 1, 2 })
    local c2 = T.complex(f2, f2)
    local M_renorm_ = T._methods.renorm_

    it("pointwise", function()
      err("ltensor.addcdiv: Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.",
        T.addcdiv, f2, i2, i2)
      err("ltensor.addcmul: bad argument #2 (tensor expected, got number)", T.addcmul, f2, 2, f2)
      err("ltensor.addcmul: unknown option 'valeu' (did you mean 'value'?)", T.addcmul, f2, f2, f2, { valeu = 2 })
      err("ltensor.addcmul: value must be a number (got string)", T.addcmul, f2, f2, f2, { value = "2" })
      err("ltensor.addcmul_: output with shape [2] doesn't match the broadcast shape [3, 2]", function()
        return f2:clone():addcmul_(T.ones(3, 2), f2)
      end)
      err("ltensor.heaviside: heaviside is not yet implemented for complex tensors.", T.heaviside, c2, c2)
      err("ltensor.heaviside: heaviside is not yet implemented for tensors with different dtypes.", T.heaviside, f2, f2:double())
      local hx = T.tensor({ -1, 0 }, { dtype = T.float32, requires_grad = true })
      local hy = T.heaviside(hx, f2)
      assert.is_true(hy.requires_grad)
      err("ltensor.heaviside: derivative for aten::heaviside is not implemented", function() T.sum(hy):backward() end)
      err("ltensor.gcd: \"gcd_cpu\" not implemented for 'Float'", T.gcd, f2, f2)
      err("ltensor.lcm: \"lcm_cpu\" not implemented for 'Double'", T.lcm, i2, f2:double())
      err("ltensor.gcd: \"gcd_cpu\" not implemented for 'Bool'", T.gcd, T.tensor({ true }), T.tensor({ false }))
      err("ltensor.gcd_: \"gcd_cpu\" not implemented for 'Float'", function() return i2:clone():gcd_(2.5) end)
      err("ltensor.gcd_: output with shape [2] doesn't match the broadcast shape [3, 2]", function()
        return i2:clone():gcd_(T.ones(3, 2, { dtype = T.int64 }))
      end)
      err("ltensor.float_power_: the base given to float_power_ has dtype Float but the operation's result requires dtype Double",
        function() return f2:clone():float_power_(2) end)
      err("ltensor.float_power: bad argument #1 (tensor expected, got number)", T.float_power, 2, 3)
      err("ltensor.ldexp_: result type Float can't be cast to the desired output type Long", function() return i2:clone():ldexp_(i2) end)
      err("ltensor.frexp: torch.frexp() only supports floating-point dtypes", T.frexp, i2)
      err("ltensor.positive: The `+` operator, on a bool tensor is not supported.", T.positive, T.tensor({ true }))
      err("ltensor.i0: \"i0_vml_cpu\" not implemented for 'ComplexFloat'", T.i0, c2)
      err("ltensor.i0_: result type Float can't be cast to the desired output type Long", function() return i2:clone():i0_() end)
    end)

    it("products", function()
      err("ltensor.inner: inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]", T.inner, T.ones(2, 3), T.ones(4))
      err("ltensor.vdot: 1D tensors expected, but got 2D and 1D tensors", T.vdot, T.ones(2, 2), T.ones(2))
      err("ltensor.vdot: dot : expected both vectors to have same dtype, but found Double and Float", T.vdot, f2:double(), f2)
      err("ltensor.vdot: inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively",
        T.vdot, T.ones(3), T.ones(4))
      err("ltensor.chain_matmul: chain_matmul(): Expected one or more matrices", T.chain_matmul)
      err("ltensor.chain_matmul: Tensor dimension is 1, expected 2 instead.", T.chain_matmul, T.ones(2, 2), T.ones(2))
      -- (Lua 5.1 reports no parameter counts: extra arguments go unchecked there)
      if debug.getinfo(function(_) end, "u").nparams == 1 then
        err("ltensor.ger: bad argument #3 (unexpected extra argument (got number))", T.ger, f2, f2, 1)
      end
    end)

    it("construction and shape", function()
      err("ltensor.vander: x must be a one-dimensional tensor.", T.vander, T.ones(2, 2))
      err("ltensor.vander: N must be non-negative.", T.vander, f2, -1)
      err("ltensor.vander: unknown option 'incresing' (did you mean 'increasing'?)", T.vander, f2, { incresing = true })
      err("ltensor.atleast_2d: bad argument #2 (tensor expected, got number)", T.atleast_2d, f2, 3)
      err("ltensor.take: take(): Expected a long tensor for index, but got Float", T.take, f2, f2)
      err("ltensor.take: out of range: tried to access index 7 on a tensor of 6 elements.", T.take, T.ones(2, 3), T.tensor({ 1, 7 }))
      err("ltensor.take: out of range: tried to access index -7 on a tensor of 6 elements.", T.take, T.ones(2, 3), T.tensor({ -7 }))
      err("ltensor.take: out of range: tried to access index 0 on a tensor of 6 elements.", T.take, T.ones(2, 3), T.tensor({ 2, 0, 3 }))
      err("ltensor.take: out of range: tried to access index 1 on a tensor of 0 elements.", T.take, T.ones(0), T.tensor({ 1 }))
      err("ltensor.isin: Unsupported input type encountered for isin(): ComplexFloat", T.isin, c2, c2)
      err("ltensor.isin: Unsupported input type encountered for isin(): Bool", T.isin, i2, T.tensor({ true }))
      err("ltensor.isin: unknown option 'invret' (did you mean 'invert'?)", T.isin, i2, i2, { invret = true })
      err("ltensor.unflatten: unflatten: sizes must be non-empty", T.unflatten, T.ones(4), 1, {})
      err("ltensor.unflatten: unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 2 (5) in the input tensor",
        T.unflatten, T.ones(2, 5), 2, { 2, 2 })
      err("ltensor.unflatten: unflatten: Provided sizes [-1, 2] don't multiply up to the size of dim 2 (5) in the input tensor",
        T.unflatten, T.ones(2, 5), -1, { -1, 2 })
      err("ltensor.unflatten: bad argument #3 (a table of sizes expected, got number)", T.unflatten, T.ones(2, 5), 2, 5)
      err("ltensor.unflatten: dimension out of range (expected to be in range of [-2, 2], but got 3)", T.unflatten, T.ones(2, 5), 3, { 5 })
    end)

    it("integration and combinatorics", function()
      err("ltensor.trapezoid: trapezoid: There must be one `x` value for each sample point", T.trapezoid, T.ones(3), T.ones(2))
      err("ltensor.trapz: trapezoid: There must be one `x` value for each sample point", T.trapz, T.ones(3), T.ones(2))
      err("ltensor.trapezoid: trapezoid: received a bool input for `y`, but bool is not supported", T.trapezoid, T.tensor({ true }))
      err("ltensor.trapezoid: trapezoid: received a bool input for `x` or `y`, but bool is not supported",
        T.trapezoid, f2, T.tensor({ true, false }))
      err("ltensor.cumulative_trapezoid: cumulative_trapezoid: There must be one `x` value for each sample point",
        T.cumulative_trapezoid, T.ones(3), T.ones(2))
      err("ltensor.cumulative_trapezoid: cumulative_trapezoid: received a bool input for `y`, but bool is not supported",
        T.cumulative_trapezoid, T.tensor({ true }))
      err("ltensor.trapezoid: Dimension specified as -1 but tensor has no dimensions", T.trapezoid, T.tensor(1.0))
      err("ltensor.trapezoid: x and dx cannot both be given", T.trapezoid, f2, f2, { dx = 2 })
      err("ltensor.trapezoid: Currently, we only support dx as a real number.", T.trapezoid, f2, { dx = true })
      err("ltensor.trapezoid: unknown option 'dimm' (did you mean 'dim'?)", T.trapezoid, f2, { dimm = 1 })
      err("ltensor.cartesian_prod: Expect a 1D vector, but got shape [2, 2]", T.cartesian_prod, T.ones(2, 2))
      err("ltensor.combinations: Expect a 1D vector, but got shape [2, 2]", T.combinations, T.ones(2, 2))
      err("ltensor.combinations: Expect a non-negative number, but got -1", T.combinations, f2, -1)
      err("ltensor.combinations: too many combinations (more than 268435456 elements)", T.combinations, f2, 1099511627776, true)
      err("ltensor.combinations: too many combinations (more than 268435456 elements)", T.combinations, T.arange(1000), 5)
      assert.are.same({ 0, 3 }, T.combinations(f2, 3).shape)
      assert.are.same({ 0, 1099511627776 }, T.combinations(f2, 1099511627776).shape)
    end)

    it("an op composed of others raises its ops' errors in its own name, only while it runs", function()
      local ok, e = pcall(T.std_mean, T.tensor({ 1, 2 }))   -- std's dtype check, inside std_mean
      assert.is_false(ok)
      assert.are.equal("ltensor.std_mean: std and var only support floating point and complex dtypes", e)
      assert.is_nil(T._public_name())
      ok, e = pcall(T.std, T.tensor({ 1, 2 }))
      assert.are.equal("ltensor.std: std and var only support floating point and complex dtypes", e)
      ok, e = pcall(T.tensor_split, T.tensor({ { 1, 2 } }), { 1 }, 3)   -- nested composites: the outer one names it
      assert.is_false(ok)
      assert.are.equal("ltensor.tensor_split:", e:sub(1, 21))
      assert.is_nil(T._public_name())
    end)

    it("renorm and the statistics", function()
      err("ltensor.renorm: renorm: expected maxnorm to be >= 0 but got -1", T.renorm, T.ones(2, 2), 2, 1, -1)
      err("ltensor.renorm: renorm: non-positive-norm not supported", T.renorm, T.ones(2, 2), 0, 1, 1)
      err("ltensor.renorm: renorm: input needs at least 2 dimensions, got 1 dimensions", T.renorm, T.ones(2), 2, 1, 1)
      err("ltensor.renorm: linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
        T.renorm, T.ones(2, 2, { dtype = T.int64 }), 2, 1, 1)
      err("ltensor.renorm: dimension out of range (expected to be in range of [-2, 2], but got 3)", T.renorm, T.ones(2, 2), 2, 3, 1)
      local ok, e = pcall(T.std_mean, i2)
      assert.is_false(ok)
      assert.are.equal("ltensor.std_mean:", e:sub(1, 17))
    end)

    it("splitting and stacking", function()
      err("ltensor.tensor_split: tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims", T.tensor_split, T.tensor(1.0), 2)
      err("ltensor.tensor_split: number of sections must be larger than 0, got 0", T.tensor_split, T.ones(3), 0)
      err("ltensor.tensor_split: tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float",
        T.tensor_split, T.ones(3), T.tensor(1, { dtype = T.float32 }))
      err("ltensor.tensor_split: tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims",
        T.tensor_split, T.ones(3), T.tensor({ { 1 } }))
      err("ltensor.hsplit: hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!", T.hsplit, T.tensor(1.0), 2)
      err("ltensor.hsplit: hsplit attempted to split along dimension 2, but the size of the dimension 5 is not divisible by the split_size 2!",
        T.hsplit, T.ones(2, 5), 2)
      err("ltensor.vsplit: vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!", T.vsplit, T.ones(2), 2)
      err("ltensor.dsplit: dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!", T.dsplit, T.ones(2, 2), 2)
      err("ltensor.dsplit: dsplit attempted to split along dimension 3, but the size of the dimension 3 is not divisible by the split_size 2!",
        T.dsplit, T.ones(2, 2, 3), 2)
      err("ltensor.hstack: hstack expects a non-empty TensorList", T.hstack, {})
      err("ltensor.tensor_split: too many pieces (1099511627776; at most 8192, returned as several values)", T.tensor_split, T.ones(3), 1099511627776)
      err("ltensor.hsplit: too many pieces (1099511627776; at most 8192, returned as several values)", T.hsplit, T.ones(0), 1099511627776)
      err("ltensor.renorm_: bad argument #1 (tensor expected, got nil; a method is called with ':', as x:renorm_(...))",
        M_renorm_)
      err("ltensor.vstack: bad argument #1 (a list of tensors expected, got ltensor.Tensor)", T.vstack, f2)
      err("ltensor.column_stack: bad argument #2 (tensor expected, got number)", T.column_stack, { f2, 2 })
      err("ltensor.randint_like: unknown option 'dtpye' (did you mean 'dtype'?)", T.randint_like, f2, 3, { dtpye = T.int32 })
    end)
  end)
end)

describe("combinations of many elements", function()
  -- the rows came from a recursive Lua generator filling a Lua table: 9 s
  -- for C(5000, 2) (PyTorch 1.13: about 1 s); now one C walk and a gather
  local function rows_ok(y, n, r, wr)
    -- spot checks against the rank of a row in lexicographic order
    assert.equal(1, y[1][1]:item())
    assert.equal(wr and 1 or r, y[1][r]:item())
    assert.equal(n, y[-1][r]:item())
    assert.equal(wr and n or n - r + 1, y[-1][1]:item())
    local d = y[{ {}, { 2, r } }] - y[{ {}, { 1, r - 1 } }]
    assert.is_true((wr and d:ge(0) or d:gt(0)):all():item())   -- each row increasing
  end

  it("C(5000, 2), with replacement, and r = 3, in order", function()
    -- (how long they take is bench/'s business, not a spec's)
    local x = T.arange(1, 5001)
    local y = T.combinations(x, 2)
    assert.same({ 12497500, 2 }, y.shape)
    rows_ok(y, 5000, 2, false)
    -- row k of C(n, 2): the pair after (1, n) is (2, 3)
    assert.same({ 2, 3 }, y[5000]:totable())
    y = nil
    local w = T.combinations(x, 2, true)
    assert.same({ 12502500, 2 }, w.shape)
    rows_ok(w, 5000, 2, true)
    w = nil
    local z = T.combinations(T.arange(1, 301), 3)
    assert.same({ 4455100, 3 }, z.shape)
    rows_ok(z, 300, 3, false)
    local zw = T.combinations(T.arange(1, 301), 3, true)
    assert.same({ 4545100, 3 }, zw.shape)
    rows_ok(zw, 300, 3, true)
    assert.same({ { 1, 2, 3 }, { 1, 2, 4 } }, T.combinations(T.arange(1, 5), 3)[{ { 1, 2 } }]:totable())
    collectgarbage()
  end)

  it("the index walk checks its request", function()
    local ok, e = pcall(T._combinations_index, 3, 2, false, 4)
    assert.is_false(ok)
    assert.equal("ltensor.combinations: only 3 of 4 rows", e)
    ok, e = pcall(T._combinations_index, 3, 0, false, 1)
    assert.equal("ltensor.combinations: bad index request (n 3, r 0, 1 rows)", e)
    assert.same({ { 1, 1 }, { 1, 2 }, { 2, 2 } }, T._combinations_index(2, 2, true, 3):totable())
  end)
end)
