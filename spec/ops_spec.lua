-- Elementwise ops, operators, broadcasting, layouts and the errors they raise.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local nan, inf = 0 / 0, math.huge
local function tt(data, dtype) return T.tensor(data, dtype and { dtype = T[dtype] } or nil) end

local H = dofile("spec/helpers.lua")
local flat, same, raises = H.flat, H.same, H.raises

describe("arithmetic values", function()
  local cases = {
    -- op, a, b, want, dtype of result
    { "add", tt({ 1, 2, 3 }), tt({ 10, 20, 30 }), { 11, 22, 33 }, "int64" },
    { "sub", tt({ 1, 2, 3 }), 1, { 0, 1, 2 }, "int64" },
    { "mul", tt({ 1.5, -2 }), 2, { 3.0, -4.0 }, "float32" },
    { "div", tt({ 7, -7 }), 2, { 3.5, -3.5 }, "float32" },
    { "floor_divide", tt({ 7, -7, 7, -7 }), tt({ 2, 2, -2, -2 }), { 3, -4, -4, 3 }, "int64" },
    { "remainder", tt({ 7, -7, 7, -7 }), tt({ 3, 3, -3, -3 }), { 1, 2, -2, -1 }, "int64" },
    { "fmod", tt({ 7, -7, 7, -7 }), tt({ 3, 3, -3, -3 }), { 1, -1, 1, -1 }, "int64" },
    { "remainder", tt({ 5.5, -5.5 }), 2, { 1.5, 0.5 }, "float32" },
    { "fmod", tt({ 5.5, -5.5 }), 2, { 1.5, -1.5 }, "float32" },
    { "floor_divide", tt({ 5.5, -5.5 }), 2, { 2.0, -3.0 }, "float32" },
    { "pow", tt({ 2, 3, -2 }), 3, { 8, 27, -8 }, "int64" },
    { "pow", tt({ 4.0, 9.0 }), 0.5, { 2.0, 3.0 }, "float32" },
    { "pow", tt({ 2, -1, 1, 5 }), tt({ -1, -3, -2, 0 }), { 0, -1, 1, 1 }, "int64" },
    { "atan2", tt({ 1.0, -1.0 }), tt({ 1.0, 1.0 }), { math.pi / 4, -math.pi / 4 }, "float32" },
    { "maximum", tt({ 1, 5 }), tt({ 3, 2 }), { 3, 5 }, "int64" },
    { "minimum", tt({ nan, 1.0 }), tt({ 0.0, nan }), { nan, nan }, "float32" },
    { "maximum", tt({ nan, 1.0, -inf }), tt({ 0.0, nan, 1.0 }), { nan, nan, 1.0 }, "float32" },
  }
  for i, c in ipairs(cases) do
    it(c[1] .. " case " .. i, function()
      local r = T[c[1]](c[2], c[3])
      assert.equal(T[c[5]], r.dtype)
      same(c[4], r:totable(), 1e-6, c[1])
    end)
  end

  it("add and sub take alpha (a number or {alpha=})", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same({ 21, 42 }, T.add(tt({ 1, 2 }), tt({ 10, 20 }), 2):totable())
    same({ -19, -38 }, T.sub(tt({ 1, 2 }), tt({ 10, 20 }), { alpha = 2 }):totable())
    same({ 3.5 }, T.add(tt({ 1.0 }), tt({ 1.0 }), 2.5):totable())
    raises("alpha must not be a floating point number", T.add, tt({ 1 }), tt({ 1 }), 1.5)
  end)

  it("div with rounding_mode", function()
    same({ -2, -2, 2, 2 }, T.div(tt({ -7, 7, -7, 7 }), tt({ 3, -3, -3, 3 }), { rounding_mode = "trunc" }):totable())
    same({ -3, -3, 2, 2 }, T.div(tt({ -7, 7, -7, 7 }), tt({ 3, -3, -3, 3 }), "floor"):totable())
    assert.equal(T.int64, T.div(tt({ 1 }), 2, { rounding_mode = "floor" }).dtype)
    same({ -2.0 }, T.div(tt({ -7.5 }), 3, { rounding_mode = "trunc" }):totable())
    same({ -3.0 }, T.div(tt({ -7.5 }), 3, { rounding_mode = "floor" }):totable())
    raises("rounding_mode to be one of None, 'trunc', or 'floor' but found 'up'", T.div, tt({ 1 }), 1, "up")
  end)

  it("pow refuses negative integer powers of integers", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    raises("Integers to negative integer powers are not allowed", function() return tt({ 2 }) ^ -1 end)
    raises("Integers to negative integer powers are not allowed", T.pow, tt({ 2 }, "int8"), -2)
    same({ 0.25 }, T.pow(tt({ 2 }), -2.0):totable())
  end)
end)

describe("bool semantics (PyTorch 1.13)", function()
  local a, b = tt({ true, true, false, false }), tt({ true, false, true, false })
  it("- raises PyTorch's errors", function()
    raises("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
      function() return a - b end)
    raises("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
      function() return 1 - a end)
    raises("with a bool tensor is not supported", function() return tt({ 1 }) - true end)
    raises("Negation, the `-` operator, on a bool tensor is not supported", function() return -a end)
  end)
  it("/ of bools is float", function()
    same({ 1.0, inf, 0.0, nan }, (a / b):totable())
  end)
end)

describe("operators", function()
  it("== is T.equal (a Lua boolean)", function()
    assert.is_true(tt({ 1, 2 }) == tt({ 1, 2 }))
    assert.is_false(tt({ 1, 2 }) == tt({ 1, 3 }))
    assert.is_false(tt({ 1, 2 }) == tt({ { 1, 2 } }))
    assert.is_true(T.equal(tt({ 1, 2 }), tt({ 1.0, 2.0 })))
    assert.is_false(tt({ nan }) == tt({ nan }))
  end)

  it("< and <= point to lt/le", function()
    raises("lt", function() return tt({ 1 }) < tt({ 2 }) end)
  end)

  it("reject strings clearly", function()
    raises("ltensor.add: expected a tensor, number or boolean as argument 2 (got string)",
      function() return tt({ 1 }) + "1" end)
    raises("expected a tensor, number or boolean", function() return "1" * tt({ 1 }) end)
    raises("expected a tensor, number or boolean", T.sub, tt({ 1 }), {})
  end)

end)

describe("comparisons and logical ops", function()
  it("give bool tensors and handle NaN", function()
    local a, b = tt({ nan, 1.0, -inf, 2.0 }, "float64"), tt({ 0.0, nan, 1.0, inf }, "float64")
    same({ false, false, false, false }, T.eq(a, b):totable())
    same({ true, true, true, true }, T.ne(a, b):totable())
    same({ false, false, true, true }, T.lt(a, b):totable())
    same({ false, false, true, true }, a:le(b):totable())
    same({ false, false, false, false }, a:gt(b):totable())
    same({ false, false, false, false }, a:ge(b):totable())
  end)
  it("compare in the promoted dtype", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same({ true, false }, T.eq(tt({ 16777217, 3 }), 16777216.0):totable())
    same({ true, false }, T.eq(tt({ 1, 0 }, "uint8"), true):totable())
  end)
  it("logical ops", function()
    same({ true, false, false }, T.logical_and(tt({ 1, 0, 2 }), tt({ 1.5, 1.0, 0.0 })):totable())
    same({ true, true, false }, T.logical_or(tt({ 1, 0, 0 }), tt({ 0, 1, 0 })):totable())
    same({ false, true }, T.logical_xor(tt({ true, true }), tt({ true, false })):totable())
    same({ false, true }, tt({ 3, 0 }):logical_not():totable())
  end)
  it("complex tensors have only eq/ne", function()
    local c = T.ones(2, { dtype = T.complex64 })
    same({ true, true }, T.eq(c, c):totable())
    raises("\"lt_cpu\" not implemented for 'ComplexFloat'", T.lt, c, c)
  end)
end)

describe("unary ops", function()
  local x = tt({ 0.5, 1.0, 4.0 }, "float64")
  local fns = {
    sqrt = math.sqrt, exp = math.exp, log = math.log, sin = math.sin, cos = math.cos, tan = math.tan,
    atan = math.atan, asin = function(v) return v <= 1 and math.asin(v) or nan end,
    acos = function(v) return v <= 1 and math.acos(v) or nan end,
    exp2 = function(v) return 2 ^ v end, expm1 = function(v) return math.exp(v) - 1 end,
    log2 = function(v) return math.log(v, 2) end, log10 = function(v) return math.log(v, 10) end,
    log1p = function(v) return math.log(1 + v) end, rsqrt = function(v) return 1 / math.sqrt(v) end,
    reciprocal = function(v) return 1 / v end, square = function(v) return v * v end,
    sinh = function(v) return (math.exp(v) - math.exp(-v)) / 2 end,
    cosh = function(v) return (math.exp(v) + math.exp(-v)) / 2 end,
    tanh = function(v) return (math.exp(2 * v) - 1) / (math.exp(2 * v) + 1) end,
    sigmoid = function(v) return 1 / (1 + math.exp(-v)) end,
    silu = function(v) return v / (1 + math.exp(-v)) end,
    neg = function(v) return -v end, abs = math.abs,
  }
  for name, f in pairs(fns) do
    it(name .. " matches its definition, as function, method and in place", function()
      local want = {}
      for i, v in ipairs(x:totable()) do want[i] = f(v) end
      same(want, T[name](x):totable(), 1e-12, name)
      same(want, x[name](x):totable(), 1e-12, name)
      local y = x:clone()
      y[name .. "_"](y)
      same(want, y:totable(), 1e-12, name .. "_")
    end)
  end

  it("float functions of integers give the default dtype; in place refuses", function()
    local i = tt({ 1, 4 })
    assert.equal(T.float32, i:sqrt().dtype)
    same({ 1.0, 2.0 }, i:sqrt():totable())
    raises("result type Float can't be cast to the desired output type Long", function() i:sqrt_() end)
  end)

  it("sign, relu, rounding", function()
    same({ -1.0, 0.0, 1.0, 0.0 }, tt({ -2.5, 0.0, 3.0, nan }):sign():totable())
    same({ -1, 0, 1 }, tt({ -5, 0, 7 }, "int16"):sign():totable())
    same({ 0.0, 0.0, 2.0, nan }, tt({ -1.0, 0.0, 2.0, nan }):relu():totable())
    same({ 0, 3 }, tt({ -1, 3 }):relu():totable())
    same({ 0.0, 2.0, 2.0, -0.0, -2.0, 4.0 }, tt({ 0.5, 1.5, 2.5, -0.5, -1.5, 3.5 }):round():totable())
    same({ 1.0, -1.0 }, tt({ 1.5, -1.5 }):trunc():totable())
    same({ 1.0, -2.0 }, tt({ 1.5, -1.5 }):floor():totable())
    same({ 2.0, -1.0 }, tt({ 1.5, -1.5 }):ceil():totable())
    same({ 7 }, tt({ 7 }):floor():totable())
    raises("torch.sgn", T.sign, T.ones(1, { dtype = T.complex64 }))
  end)

  it("rounding and relu refuse bool and complex with PyTorch's messages", function()
    local b, c = tt({ true, false }), T.ones(2, { dtype = T.complex64 })
    for _, op in ipairs({ "floor", "ceil", "round", "trunc" }) do
      raises("not implemented for 'Bool'", T[op], b)
      raises("not implemented for 'Bool'", function() b[op .. "_"](b) end)
    end
    raises("floor is not supported for complex inputs", T.floor, c)
    raises("ceil is not supported for complex inputs", T.ceil, c)
    raises("trunc is not supported for complex inputs", T.trunc, c)
    raises("not implemented for 'ComplexFloat'", T.round, c)
    raises("Boolean inputs not supported for relu", T.relu, b)
    raises("Boolean inputs not supported for relu", function() b:relu_() end)
    raises("clamp is not supported for complex types", T.relu, c)
    same({ 3, -2 }, tt({ 3, -2 }, "int32"):round():totable())   -- integers stay as they are
  end)

  it("round with decimals rounds x * 10^d half to even", function()
    local x = tt({ 1.2345, -2.5678, 0.125, 1234.5 }, "float64")
    same({ 1.23, -2.57, 0.12, 1234.5 }, T.round(x, { decimals = 2 }):totable(), 1e-15)
    same({ 1.23, -2.57, 0.12, 1234.5 }, x:round(2):totable(), 1e-15)
    same({ 0.0, -0.0, 0.0, 1200.0 }, x:round({ decimals = -2 }):totable())
    same({ 1.0, -3.0, 0.0, 1234.0 }, x:round({ decimals = 0 }):totable())
    local f = tt({ 0.125, 2.675 })
    same({ 0.12, 2.68 }, f:round(2):totable(), 1e-6)
    assert.equal(T.float32, f:round(2).dtype)
    f:round_(1)
    same({ 0.1, 2.7 }, f:totable(), 1e-6)
    raises("not implemented for 'Long'", T.round, tt({ 1, 2 }), { decimals = 1 })
  end)

  it("gelu exact and tanh, erf", function()
    same({ 0.8413447460685429 }, T.gelu(tt({ 1.0 }, "float64")):totable(), 1e-12)
    same({ 0.8411919906082768 }, T.gelu(tt({ 1.0 }, "float64"), { approximate = "tanh" }):totable(), 1e-12)
    same({ 0.8427007929497149 }, T.erf(tt({ 1.0 }, "float64")):totable(), 1e-12)
    raises("approximate argument must be either none or tanh", T.gelu, tt({ 1.0 }), { approximate = "x" })
  end)

  it("classification ops", function()
    local v = tt({ 1.0, nan, inf, -inf })
    same({ false, true, false, false }, v:isnan():totable())
    same({ false, false, true, true }, v:isinf():totable())
    same({ true, false, false, false }, v:isfinite():totable())
    same({ false, false }, tt({ 1, 2 }):isnan():totable())
    same({ true, true }, tt({ 1, 2 }):isfinite():totable())
  end)

  it("bitwise_not", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same({ -1, 0 }, tt({ 0, -1 }):bitwise_not():totable())
    same({ 255 }, T.bitwise_not(tt({ 0 }, "uint8")):totable())
    raises("not implemented for 'Float'", T.bitwise_not, tt({ 1.0 }))
  end)
end)

describe("clamp, where, lerp", function()
  it("clamp with nil bounds, promotion and NaN", function()
    same({ nan, 1.0, -1.0, 1.5 }, T.clamp(tt({ nan, 1.0, -inf, 2.0 }, "float64"), -1.0, 1.5):totable())
    same({ 1.0, 1.0, -5.0 }, T.clamp(tt({ 2.3, 2.1, -5.0 }, "float64"), nil, 1):totable())
    same({ 251, 251, 251 }, T.clamp(tt({ 1, 7, 10 }, "uint8"), -5):totable())
    same({ 2, 5, 8 }, tt({ 1, 5, 10 }):clamp(2, 8):totable())
    same({ 0.0, 1.5 }, tt({ -1.0, 1.5 }):clamp_min(0):totable())
    same({ -1.0, 0.0 }, tt({ -1.0, 1.5 }):clamp_max(0):totable())
    assert.equal(T.float32, T.clamp(tt({ 1, 2 }), 0.5).dtype)
    same({ 2, 3 }, T.clamp(tt({ 1, 5 }), tt({ 2, 2 }), tt({ 4, 3 })):totable())
    local y = tt({ -3.0, 3.0 })
    y:clamp_(-1, 1)
    same({ -1.0, 1.0 }, y:totable())
    raises("at least one of 'min' or 'max' must not be None", T.clamp, tt({ 1 }))
    raises("clamp is not supported for complex types", T.clamp, T.ones(1, { dtype = T.complex64 }), 0)
  end)

  it("a NaN bound makes every element NaN, as PyTorch's vectorised clamp", function()
    same({ nan, nan, nan }, T.clamp(tt({ nan, -5.0, 5.0 }), nan, 1.0):totable())
    same({ nan, nan, nan }, T.clamp(tt({ nan, -5.0, 5.0 }, "float64"), -1, nan):totable())
    same({ nan, nan }, tt({ -5.0, 5.0 }):clamp_min(nan):totable())
    same({ nan, -1.0, nan }, T.clamp(tt({ nan, -5.0, 5.0 }), tt({ -1.0, -1.0, nan }), 1.0):totable())
  end)

  it("clamp_ with tensor bounds refuses a promotion it cannot write back", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local i = tt({ 5, -9 }, "int32")
    raises("result type Float can't be cast to the desired output type Int", function() i:clamp_(tt({ 0.5, 0.5 })) end)
    raises("result type Char can't be cast to the desired output type Bool",
      function() tt({ true }):clamp_(tt({ 1 }, "int8")) end)
    raises("result type ComplexFloat can't be cast to the desired output type Float",
      function() tt({ 1.0 }):clamp_(T.ones(1, { dtype = T.complex64 })) end)
    raises("not implemented for 'ComplexFloat'", T.clamp, tt({ 1.0 }), T.ones(1, { dtype = T.complex64 }))
    i:clamp_(tt({ 0, 0 }, "int64"))
    same({ 5, 0 }, i:totable())
    assert.equal(T.int32, i.dtype)
  end)

  it("where takes weak scalars and broadcasts", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local c = tt({ true, false, true })
    local r = T.where(c, 1, 2.5)
    assert.equal(T.float32, r.dtype)
    same({ 1.0, 2.5, 1.0 }, r:totable())
    assert.equal(T.int64, T.where(c, 1, 2).dtype)
    same({ 1, 9, 3 }, T.where(c, tt({ 1, 2, 3 }, "uint8"), 9):totable())
    same({ { 1, 0 }, { 1, 0 } }, T.where(tt({ true, false }), tt({ { 1 }, { 1 } }), 0):totable())
    same({ 1, 9, 3 }, tt({ 1, 2, 3 }):where(c, 9):totable())   -- Tensor.where(cond, other)
    raises("where expected condition to be a boolean tensor, but got a tensor with dtype Float",
      T.where, tt({ 1.0 }), 1, 2)
  end)

  it("lerp", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same({ 5.0, 7.5 }, T.lerp(tt({ 0.0, 5.0 }), tt({ 10.0, 10.0 }), 0.5):totable())
    same({ 2.0 }, tt({ 0.0 }):lerp(tt({ 10.0 }), tt({ 0.2 })):totable(), 1e-6)
  end)

  it("lerp wants one floating dtype for start, end and a tensor weight", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    raises("expected dtype float for `end` but got dtype double", T.lerp, tt({ 1.0 }), tt({ 1.0 }, "float64"), 0.5)
    raises("expected dtype double for `weight` but got dtype float",
      T.lerp, tt({ 1.0 }, "float64"), tt({ 1.0 }, "float64"), tt({ 0.5 }))
    raises("expected dtype long int for `end` but got dtype int", T.lerp, tt({ 1 }), tt({ 1 }, "int32"), 0.5)
    raises("not implemented for 'Long'", T.lerp, tt({ 1, 2 }), tt({ 3, 4 }), 0.5)
    local h = T.lerp(tt({ 0.0 }, "float16"), tt({ 4.0 }, "float16"), 0.25)
    assert.equal(T.float16, h.dtype)
    same({ 1.0 }, h:totable())
  end)
end)

describe("complex helpers", function()
  it("real and imag are views, abs and angle are real", function()
    local z = T.zeros(2, { dtype = T.complex64 })
    local re, im = z:real(), z:imag()
    assert.equal(T.float32, re.dtype)
    im:fill_(2)
    re:fill_(-1)
    same({ 5 ^ 0.5, 5 ^ 0.5 }, z:abs():totable(), 1e-6)
    same({ math.pi - math.atan(2), math.pi - math.atan(2) }, z:angle():totable(), 1e-6)
    same({ -2.0, -2.0 }, z:conj():imag():totable())
    assert.equal(T.float64, T.zeros(1, { dtype = T.complex128 }):real().dtype)
    same({ 0.0, math.pi }, tt({ 1.0, -1.0 }):angle():totable(), 1e-6)
    local r = tt({ 1.0 })
    assert.is_true(rawequal(r, r:real()))
    raises("imag is not implemented for tensors with non-complex dtypes", T.imag, r)
  end)
end)

describe("complex special values (PyTorch's vectorised formulas)", function()
  local function cplx(dtype, pairs)
    local z = T.zeros(#pairs, { dtype = T[dtype] })
    local re, im = {}, {}
    for i, p in ipairs(pairs) do re[i], im[i] = p[1], p[2] end
    z:real():copy_(T.tensor(re, { dtype = T.float64 }))
    z:imag():copy_(T.tensor(im, { dtype = T.float64 }))
    return z
  end
  for _, dt in ipairs({ "complex64", "complex128" }) do
    it("reciprocal and rsqrt of 0 are nan+nan*i, log2/log10 of 0 are -inf+0i (" .. dt .. ")", function()
      local z = cplx(dt, { { 0.0, 0.0 }, { 3.0, -4.0 }, { 0.5, 0.0 } })
      same({ { nan, nan }, { 0.12, 0.16 }, { 2.0, 0.0 } }, z:reciprocal():totable(), 1e-6)
      same({ { nan, nan }, { 0.4, 0.2 }, { 2 ^ 0.5, 0.0 } }, z:rsqrt():totable(), 1e-6)
      same({ { -inf, 0.0 }, { math.log(5, 2), math.atan(-4, 3) / math.log(2) }, { -1.0, 0.0 } },
        z:log2():totable(), 1e-6)
      same({ { -inf, 0.0 } }, cplx(dt, { { 0.0, 0.0 } }):log10():totable())
    end)

    it("atan is i/2 log((i+z)/(i-z)), silu is z / (1 + exp(-z)) (" .. dt .. ")", function()
      local z = cplx(dt, { { -0.0, -2.0 }, { -1.0, 0.0 }, { 1.0, 2.0 } })
      same({ { math.pi / 2, -0.5493061443340549 }, { -math.pi / 4, 0.0 }, { 1.3389725222944935, 0.4023594781085251 } },
        z:atan():totable(), 1e-6)
      same({ { -1.5574077246549023, -1.0 }, { -0.2689414213699951, 0.0 }, { 0.2145379819, 2.4462692760 } },
        z:silu():totable(), 1e-6)
    end)
  end
end)

describe("isclose / allclose", function()
  it("compare within tolerances", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same({ true, false, false }, T.isclose(tt({ 1.0, nan, 1.0 }), tt({ 1.0 + 1e-7, nan, 1.1 })):totable())
    same({ true }, T.isclose(tt({ nan }), tt({ nan }), { equal_nan = true }):totable())
    same({ true }, T.isclose(tt({ inf }), tt({ inf })):totable())
    assert.is_true(T.allclose(tt({ 1.0, 2.0 }), tt({ 1.0, 2.0 + 1e-6 })))
    assert.is_false(T.allclose(tt({ 1.0 }), tt({ 1.1 })))
  end)
  it("compare complex tensors on |a - b| and |b|, NaN in either part", function()
    local function c(re, im) return T.complex(T.tensor(re), T.tensor(im)) end
    for _, dt in ipairs({ T.complex64, T.complex128 }) do
      local a = c({ 1, 2, 0 / 0, 1, 1 / 0 }, { 1, 0, 0, 0 / 0, 0 }):to(dt)
      local b = c({ 1, 2, 0 / 0, 1, 1 / 0 }, { 1 + 1e-7, 1e-3, 0, 0 / 0, 1 }):to(dt)
      same({ true, false, false, false, false }, T.isclose(a, b):totable())
      same({ true, false, true, true, false }, T.isclose(a, b, { equal_nan = true }):totable())
      same({ true, true, false, false, true }, T.isclose(a, a):totable())
      assert.is_true(T.allclose(a:narrow(1, 1, 2), a:narrow(1, 1, 2)))
      assert.is_false(T.allclose(a:narrow(1, 1, 2), b:narrow(1, 1, 2)))
    end
  end)
end)

describe("broadcasting and layouts", function()
  it("raises PyTorch's message with 1-based dims", function()
    raises("ltensor.add: the size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 2",
      T.add, T.ones(2, 3), T.ones(2, 4))
    raises("the size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
      function() return T.ones(3) * T.ones(4) end)
    raises("output with shape [2] doesn't match the broadcast shape [3, 2]",
      function() local a = T.ones(2); a:add_(T.ones(3, 2)) end)
  end)

  it("broadcasts across ranks and size-1 dims", function()
    local a = T.tensor({ { 1 }, { 2 }, { 3 } })
    local b = T.tensor({ 10, 20 })
    same({ { 11, 21 }, { 12, 22 }, { 13, 23 } }, (a + b):totable())
    assert.same({ 3, 2 }, (a + b).shape)
  end)

  it("transposed inputs give outputs with the same stride order", function()
    local a = T.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = T.float32 })
    local at = a:t()
    local r = at * 2
    assert.same({ 1, 3 }, r:stride())
    same({ { 2, 8 }, { 4, 10 }, { 6, 12 } }, r:totable())
    same({ { 2, 4, 6 }, { 8, 10, 12 } }, (a + at:t()):totable())
    same({ { 11, 24 }, { 12, 25 }, { 13, 26 } }, (at + T.tensor({ 10, 20 })):totable())
    local s = a + at:t()
    assert.is_true(s:is_contiguous())
  end)

  it("expanded inputs read correctly; writing into them is refused", function()
    local e = T.tensor({ 1, 2, 3 }):expand(2, 3)
    same({ { 2, 4, 6 }, { 2, 4, 6 } }, (e + e):totable())
    raises("more than one element of the written-to tensor refers to a single memory location",
      function() e:add_(1) end)
  end)

  it("in place with an aliasing input reads the original values", function()
    local a = T.tensor({ { 1, 2 }, { 3, 4 } })
    a:add_(a:t())
    same({ { 2, 5 }, { 5, 8 } }, a:totable())
  end)

  it("zero-size and zero-dim tensors", function()
    local e = T.zeros(0, 3) + T.ones(3)
    assert.same({ 0, 3 }, e.shape)
    assert.same({ 0 }, (T.zeros(0) * 2).shape)
    local z = T.tensor(2.5) * T.tensor(2.0)
    assert.same({}, z.shape)
    assert.equal(5.0, z:item())
    assert.same({ 3 }, (T.tensor(1.0) + T.ones(3)).shape)
    assert.same({}, T.add(1, 2).shape)
    assert.equal(T.int64, T.add(1, 2).dtype)
    raises("must match", function() return T.zeros(0) + T.ones(2) end)
  end)

  it("non-contiguous, sliced and casting paths agree with the contiguous result", function()
    local big = T.arange and T.arange(0, 3 * 70000):view(3, 70000) or nil
    if not big then return end
    local f = big:float()
    local h = f:half()
    local r1 = (f:t() * 2):t()
    assert.equal(f:get(3, 69999) * 2, r1:get(3, 69999))
    local r2 = h + 1                      -- float16 computes in float32, chunk by chunk
    assert.equal(T.float16, r2.dtype)
    assert.equal(1 + 1000, r2:get(1, 1001))
    assert.equal(2 * 70000 + 69998 + 1, (f:t() + 1):get(69999, 3))
  end)
end)

describe("out= and in-place", function()
  it("write into out and return it, bumping nothing else", function()
    local o = T.empty(2)
    local r = T.add(T.ones(2), 1, { out = o })
    assert.is_true(rawequal(o, r))
    same({ 2.0, 2.0 }, o:totable())
    local c = T.empty(2, { dtype = T.bool })
    T.lt(tt({ 1.0, 3.0 }), 2, { out = c })
    same({ true, false }, c:totable())
  end)

  it("in place, the safe-cast check comes before the dtype's kernel check", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local f, c = tt({ 1.5 }), T.ones(1, { dtype = T.complex64 })
    raises("result type ComplexFloat can't be cast to the desired output type Float", function() f:remainder_(c) end)
    raises("result type ComplexFloat can't be cast to the desired output type Float", function() f:fmod_(c) end)
    raises("result type ComplexFloat can't be cast to the desired output type Float",
      function() f:bitwise_and_(c) end)
    raises("result type Float can't be cast to the desired output type Int",
      function() tt({ 1 }, "int32"):bitwise_and_(tt({ 1.0 })) end)
    raises("not implemented for 'Float'", function() f:bitwise_and_(tt({ 1 })) end)
    raises("result type Float can't be cast to the desired output type Long",
      function() T.bitwise_and(tt({ 1 }), tt({ 1.0 }), { out = tt({ 0 }) }) end)
  end)

  it("in-place methods return self", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local a = tt({ 1.0, 2.0 })
    assert.is_true(rawequal(a, a:mul_(2)))
    same({ 2.0, 4.0 }, a:totable())
    a:sub_(1):div_(2)
    same({ 0.5, 1.5 }, a:totable())
  end)
end)

describe("threads", function()
  it("get/set_num_threads and large work gives the same result on any count", function()
    local n0 = T.get_num_threads()
    assert.is_true(n0 >= 1)
    local x = T.ones(100003) * 3
    T.set_num_threads(1)
    local a = (x * x + 1):totable()
    T.set_num_threads(4)
    assert.equal(4, T.get_num_threads())
    local b = (x * x + 1):totable()
    T.set_num_threads(n0)
    assert.equal(#a, #b)
    assert.equal(10.0, b[100003])
    for i = 1, #a, 997 do assert.equal(a[i], b[i]) end
    raises("number of threads must be positive", T.set_num_threads, 0)
  end)
end)

describe("vectorised transcendental kernels", function()
  local specials = { 0, -0.0, 1, -1, 0.5, -0.625, 0.7, 3, -20, 88.7, 89, -87.5, -103.5, -104.5, 1e-40, -1e-40,
                     1e-30, 9000, -8193, 1e6, 1e30, inf, -inf, nan }
  local function ref(name, x)
    if name == "exp" then return math.exp(x)
    elseif name == "log" then return x < 0 and nan or (x == 0 and -inf or math.log(x))
    elseif name == "sin" then return (x == inf or x == -inf) and nan or math.sin(x)
    elseif name == "cos" then return (x == inf or x == -inf) and nan or math.cos(x)
    elseif name == "sigmoid" then return 1 / (1 + math.exp(-x))
    elseif name == "tanh" then
      if x ~= x then return nan end
      if math.abs(x) > 20 then return x > 0 and 1 or -1 end
      if math.abs(x) < 1e-4 then return x end
      local e = math.exp(2 * x); return (e - 1) / (e + 1)
    end
  end
  for _, dt in ipairs { "float32", "float64" } do
    for _, name in ipairs { "exp", "log", "tanh", "sigmoid", "sin", "cos" } do
      it(name .. " " .. dt .. ": special values, contiguous and strided runs agree with the reference", function()
        -- 40 copies so the contiguous run is long enough for the vector loop
        local data = {}
        for r = 1, 40 do for i = 1, #specials do data[#data + 1] = specials[i] end end
        local x = T.tensor(data, { dtype = T[dt] })
        local xs = x:to(T.float64):totable()
        local got = x[name](x):totable()
        local strided = T.stack({ x, x }, 2):t()[1]   -- a stride-2 view of the same values
        local got2 = strided[name](strided):totable()
        local tol = dt == "float32" and 4e-7 or 1e-14
        for i = 1, #xs do
          local w = ref(name, xs[i])
          if dt == "float32" and math.abs(w) > 3.4028234663852886e38 and w == w then w = w > 0 and inf or -inf end
          for _, g in ipairs { got[i], got2[i] } do
            if w ~= w then
              assert.is_true(g ~= g, name .. "(" .. xs[i] .. ") want nan, got " .. tostring(g))
            elseif w == inf or w == -inf then
              assert.equal(w, g, name .. "(" .. xs[i] .. ")")
            else
              assert.is_true(math.abs(g - w) <= 1e-37 + tol * math.abs(w),
                name .. "(" .. xs[i] .. ") want " .. w .. ", got " .. tostring(g))
            end
          end
        end
      end)
    end
  end
  it("gelu float32 stays within 1e-6 of the erf formula, -inf gives nan as PyTorch", function()
    local x = T.linspace(-8, 8, 4001)
    local g = x:gelu():totable()
    local xs = x:to(T.float64)
    local w = (xs * 0.5 * ((xs / math.sqrt(2)):erf() + 1)):totable()
    for i = 1, #g do assert.is_true(math.abs(g[i] - w[i]) <= 1e-6 + 2e-6 * math.abs(w[i]), "gelu " .. i) end
    local s = T.tensor({ -inf, inf, nan }):gelu():totable()
    assert.is_true(s[1] ~= s[1]); assert.equal(inf, s[2]); assert.is_true(s[3] ~= s[3])
  end)
end)

describe("tiled iteration of operands with crossed layouts", function()
  for _, nt in ipairs { 1, 2 } do
    it("a transposed operand plus a contiguous one, odd sizes, with a cast (" .. nt .. " threads)", function()
      local old = T.get_num_threads()
      T.set_num_threads(nt)
      local a = T.arange(0, 800 * 701):reshape(800, 701):to(T.float32)   -- 800 x 701: over 2 x 262144 elements, so 2 threads split it
      local b = T.arange(0, 701 * 800):reshape(701, 800):t()              -- int64, transposed view
      local c = a + b
      local d = a:contiguous() + b:contiguous()
      T.set_num_threads(old)
      assert.equal(T.float32, c.dtype)
      assert.is_true(T.equal(c, d))
      local ct = c:totable()
      assert.equal(0 + 0, ct[1][1])
      assert.equal((799 * 701 + 700) + (700 * 800 + 799), ct[800][701])
      assert.equal((5 * 701 + 9) + (9 * 800 + 5), ct[6][10])
    end)
  end
end)

describe("the worker pool (work split across kept threads)", function()
  local function with_threads(nt, f)
    local old = T.get_num_threads()
    T.set_num_threads(nt)
    local ok, err = pcall(f)
    T.set_num_threads(old)
    if not ok then error(err, 0) end
  end
  for _, nt in ipairs { 2, 3 } do
    it("large contiguous, broadcast and transposed operands match the 1-thread result (" .. nt .. " threads)", function()
      local n = 300007   -- odd: the last chunk is short
      local a = T.arange(0, n):to(T.float32)
      local b = T.arange(0, n):to(T.float32) * 0.5
      local m = T.arange(0, 700 * 700):reshape(700, 700):to(T.float32)
      local row = T.arange(0, 700):reshape(1, 700):to(T.float32)
      local col = T.arange(0, 700):reshape(700, 1):to(T.float32)
      local want = {}
      with_threads(1, function()
        want = { (a * b):sum():item(), (a * 3):sum():item(), (m + row):sum():item(), (m + col):sum():item(),
                 (m:t() + m:t()):sum():item(), (m:t() + m):sum():item() }
      end)
      with_threads(nt, function()
        for _ = 1, 20 do   -- repeated calls reuse the parked workers
          local got = { (a * b):sum():item(), (a * 3):sum():item(), (m + row):sum():item(), (m + col):sum():item(),
                        (m:t() + m:t()):sum():item(), (m:t() + m):sum():item() }
          for i = 1, #want do assert.equal(want[i], got[i]) end
        end
        local s = m:t() + m:t()
        assert.same({ 1, 700 }, s:stride())   -- laid out as the inputs: one contiguous run
        assert.equal(699 * 700 * 2, s[1][700]:item())
        assert.equal(n - 1 + (n - 1) * 0.5, (a + b)[n]:item())
      end)
    end)
  end
  it("an integer division by zero in any chunk still raises", function()
    with_threads(2, function()
      local a = T.ones(400000, { dtype = T.int32 })
      local b = T.ones(400000, { dtype = T.int32 })
      b[399999] = 0
      assert.has_error(function() return T.floor_divide(a, b) end, "ltensor.floor_divide: integer division by zero")
    end)
  end)
end)

-- The methods behind Lua 5.3's integer operators: the only spelling on Lua
-- 5.1, 5.2 and LuaJIT (issue 12); ops_lua53_spec.lua tests the operators.
describe("operators as methods (every Lua host)", function()
  it("floor_divide and bitwise_* give what // & | ~ << >> give", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    same({ 0, 1 }, T.floor_divide(3, tt({ 4, 2 })):totable())
    same({ inf, -inf, nan }, tt({ 1.0, -1.0, 0.0 }):floor_divide(0.0):totable())
    same({ 3, 2 }, tt({ 3, 6 }):bitwise_and(3):totable())
    same({ 7 }, T.bitwise_or(4, tt({ 3 })):totable())
    same({ 4 }, T.bitwise_left_shift(1, tt({ 2 })):totable())
    same({ 1 }, tt({ 4 }):bitwise_right_shift(2):totable())
    same({ -2 }, tt({ 1 }):bitwise_not():totable())
    local a, b = tt({ true, true, false, false }), tt({ true, false, true, false })
    same({ false, true, true, false }, a:bitwise_xor(b):totable())
    same({ false, false, true, true }, a:bitwise_not():totable())
    raises("integer division by zero", T.floor_divide, tt({ 7 }), tt({ 0 }))
    raises("\"bitwise_and_cpu\" not implemented for 'Float'", T.bitwise_and, tt({ 1.0 }), 1)
  end)
end)
