-- Core: dtypes, conversions between every pair, storage sharing, element access.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local ALL = { "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
  "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128" }

describe("dtypes", function()
  it("are unique module values printing as ltensor.<name>", function()
    local seen = {}
    for _, n in ipairs(ALL) do
      local d = T[n]
      assert.is_not_nil(d, n)
      assert.equal("ltensor." .. n, tostring(d))
      assert.equal(n, d.name)
      assert.is_nil(seen[d])
      seen[d] = true
    end
  end)

  it("have PyTorch's aliases", function()
    local aliases = { byte = "uint8", char = "int8", short = "int16", int = "int32", long = "int64",
      half = "float16", float = "float32", double = "float64", chalf = "complex32",
      cfloat = "complex64", cdouble = "complex128" }
    for a, n in pairs(aliases) do assert.equal(T[n], T[a], a) end
  end)

  it("carry itemsize and category flags", function()
    local sizes = { bool = 1, uint8 = 1, uint16 = 2, uint32 = 4, uint64 = 8, int8 = 1, int16 = 2,
      int32 = 4, int64 = 8, float16 = 2, bfloat16 = 2, float32 = 4, float64 = 8, complex32 = 4,
      complex64 = 8, complex128 = 16 }
    for n, s in pairs(sizes) do assert.equal(s, T[n].itemsize, n) end
    assert.is_true(T.float16.is_floating_point)
    assert.is_false(T.int32.is_floating_point)
    assert.is_true(T.complex64.is_complex)
    assert.is_false(T.float64.is_complex)
    assert.is_false(T.uint8.is_signed)
    assert.is_false(T.bool.is_signed)
    assert.is_true(T.int8.is_signed)
    assert.is_true(T.float32.is_signed)
  end)

  it("default dtype is float32 and can be float64", function()
    assert.equal(T.float32, T.get_default_dtype())
    T.set_default_dtype(T.float64)
    assert.equal(T.float64, T.tensor({1.5}).dtype)
    T.set_default_dtype(T.float32)
    assert.equal(T.float32, T.tensor({1.5}).dtype)
  end)

  it("set_default_dtype refuses non-float dtypes", function()
    assert.has_error(function() T.set_default_dtype(T.int64) end,
      "ltensor.set_default_dtype: only floating-point types are supported as the default type (got int64)")
  end)
end)

describe("conversion between every pair of dtypes", function()
  it("round-trips small integers through every dtype", function()
    local src = T.tensor({ 0, 1, 2, 3, 7 })
    for _, a in ipairs(ALL) do
      for _, b in ipairs(ALL) do
        if a ~= "bool" and b ~= "bool" then
          local x = src:to(T[a]):to(T[b]):to(T.int64):totable()
          assert.same({ 0, 1, 2, 3, 7 }, x, a .. " -> " .. b)
        end
      end
    end
  end)

  it("makes bool from nonzero", function()
    for _, a in ipairs(ALL) do
      assert.same({ false, true, true }, T.tensor({ 0, 1, 3 }):to(T[a]):to(T.bool):totable(), a)
    end
  end)

  it("wraps integers modulo 2^bits", function()
    assert.same({ 44, -1 }, T.tensor({ 300, 255 }):to(T.int8):to(T.int64):totable())
    assert.same({ 255, 0 }, T.tensor({ -1, 256 }):to(T.uint8):to(T.int64):totable())
    assert.same({ 65535 }, T.tensor({ -1 }):to(T.uint16):to(T.int64):totable())
  end)

  it("defines float -> integer for NaN, inf and out-of-range values", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    local x = T.tensor({ 0 / 0, 1 / 0, -1 / 0, 1e30, -1e30, 300.7, -1.9 }, { dtype = T.float64 })
    assert.same({ 0, math.maxinteger, math.mininteger, math.maxinteger, math.mininteger, 300, -1 },
      x:to(T.int64):totable())
    assert.same({ 0, -1, 0, -1, 0, 44, -1 }, x:to(T.int8):to(T.int64):totable())
  end)

  it("rounds float16 and bfloat16 to nearest even", function()
    -- 1 + 2^-11 is halfway between 1 and 1 + 2^-10 in float16: ties to even (1)
    local h = T.tensor({ 1 + 2 ^ -11, 1 + 3 * 2 ^ -11, 65504, 65520, 2 ^ -24, 2 ^ -25 }, { dtype = T.float64 })
    assert.same({ 1.0, 1 + 2 * 2 ^ -10, 65504.0, math.huge, 2 ^ -24, 0.0 },
      h:to(T.float16):to(T.float64):totable())
    local b = T.tensor({ 1 + 2 ^ -8, 1 + 3 * 2 ^ -8, 3.14159 }, { dtype = T.float64 })
    assert.same({ 1.0, 1 + 2 ^ -6, 3.140625 }, b:to(T.bfloat16):to(T.float64):totable())
  end)

  it("keeps NaN and infinities in half types", function()
    local x = T.tensor({ 0 / 0, 1 / 0, -1 / 0 }):to(T.float16):to(T.float32):totable()
    assert.is_true(x[1] ~= x[1])
    assert.equal(math.huge, x[2])
    assert.equal(-math.huge, x[3])
    local y = T.tensor({ 0 / 0 }):to(T.bfloat16):to(T.float32):totable()
    assert.is_true(y[1] ~= y[1])
  end)

  it("keeps the real part when going from complex to real", function()
    local c = T.tensor({ 1.5, -2.5 }):to(T.complex64)
    assert.same({ 1.5, -2.5 }, c:to(T.float64):totable())
    assert.same({ { 1.5, 0.0 }, { -2.5, 0.0 } }, c:totable())
  end)
end)

describe("storage", function()
  it("is shared by views and counted by the collector", function()
    local a = T.zeros(4)
    local v = a.data -- a view sharing storage
    v:set(2, 5)
    assert.equal(5.0, a:get(2))
    a = nil
    collectgarbage()
    collectgarbage()
    assert.equal(5.0, v:get(2))
  end)

  it("supports up to 16 dims with a clear error beyond", function()
    local s = {}
    for i = 1, 16 do s[i] = 1 end
    assert.equal(16, T.zeros(s):dim())
    s[17] = 1
    assert.has_error(function() T.zeros(s) end, "ltensor.zeros: too many dimensions (17 > 16)")
  end)
end)

describe("element access", function()
  it("get/set are 1-based with negative indices", function()
    local t = T.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.equal(6, t:get(2, 3))
    assert.equal(6, t:get(-1, -1))
    t:set(1, 2, 20)
    assert.equal(20, t:get(1, 2))
    assert.equal("integer", math.type(t:get(1, 1)))
  end)

  it("get reports out-of-bounds indices 1-based", function()
    local t = T.zeros(4)
    assert.has_error(function() t:get(5) end, "ltensor.get: index 5 is out of bounds for dimension 1 with size 4")
    assert.has_error(function() t:get(0) end, "ltensor.get: index 0 is out of bounds for dimension 1 with size 4" ..
      " (indices are 1-based: 1 is the first, -1 the last)")
    assert.has_error(function() t:get(1, 1) end, "ltensor.get: expected 1 indices, got 2")
  end)

  it("item gives Lua types by dtype", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    assert.equal("integer", math.type(T.tensor(3):item()))
    assert.equal("float", math.type(T.tensor(3.0):item()))
    assert.equal(true, T.tensor(true):item())
    assert.has_error(function() T.zeros(2):item() end,
      "ltensor.item: a Tensor with 2 elements cannot be converted to Scalar")
  end)

  it("size/stride/dim/numel/is_contiguous", function()
    local t = T.zeros(2, 3, 4)
    assert.same({ 2, 3, 4 }, t.shape)
    assert.same({ 12, 4, 1 }, t:stride())
    assert.equal(3, t:size(-2))
    assert.equal(3, t:dim())
    assert.equal(24, t:numel())
    assert.is_true(t:is_contiguous())
    assert.equal(2, #t)
    assert.has_error(function() t:size(4) end,
      "ltensor.size: dimension out of range (expected to be in range of [-3, 3], but got 4)")
  end)

  it("refuses to set unknown fields and integral requires_grad", function()
    local t = T.zeros(2, { dtype = T.int64 })
    assert.has_error(function() t.foo = 1 end, "ltensor.__newindex: cannot set field 'foo' of a tensor")
    assert.has_error(function() t.requires_grad = true end,
      "ltensor.requires_grad_: only Tensors of floating point and complex dtype can require gradients")
    local f = T.zeros(2)
    f.requires_grad = true
    assert.is_true(f.requires_grad)
    assert.is_true(f.is_leaf)
  end)
end)

describe("storage release (every Lua host)", function()
  it("free() releases at once", function()
    local t = T.ones(3)
    t:free()
    assert.has_error(function() return t:get(1) end)
  end)
end)
