-- Elementwise ops through Lua's integer operators (Lua 5.3+).
-- Lua 5.3+ only (issue 12): these cases use the integer operators (// & | ~ << >>)
-- or 64-bit integer arithmetic, which Lua 5.1, 5.2 and LuaJIT lack; the
-- methods (floor_divide, bitwise_and ...) are tested in the main file.

local T = require "ltensor"

local nan, inf = 0 / 0, math.huge
local function tt(data, dtype) return T.tensor(data, dtype and { dtype = T[dtype] } or nil) end

local H = dofile("spec/helpers.lua")
local flat, same, raises = H.flat, H.same, H.raises


describe("arithmetic values", function()
  it("integer overflow wraps and INT_MIN // -1 does not trap", function()
    same({ -56, -29, -28 }, (tt({ 100, 127, -128 }, "int8") + 100):totable())
    same({ math.mininteger }, (tt({ math.maxinteger }) + 1):totable())
    same({ math.mininteger }, (tt({ math.mininteger }) // -1):totable())
    same({ 0 }, (tt({ math.mininteger }) % -1):totable())
    same({ -2147483648 }, T.div(tt({ -2147483648 }, "int32"), -1, "trunc"):totable())
    same({ -128 }, tt({ -128 }, "int8"):abs():totable())
    same({ -128 }, (-tt({ -128 }, "int8")):totable())
    same({ 0, 254 }, (tt({ 0, 127 }, "uint8") * 2):totable())
    same({ 1 }, (tt({ 65535 }, "uint16") * tt({ 65535 }, "uint16")):totable())
  end)
end)

describe("arithmetic values", function()
  it("integer division by zero raises and never traps", function()
    for _, dt in ipairs({ "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64" }) do
      local a, b = tt({ 7, 1 }, dt), tt({ 0, 1 }, dt)
      raises("integer division by zero", function() return a // b end)
      raises("integer division by zero", function() return a % b end)
      raises("integer division by zero", T.fmod, a, b)
      raises("integer division by zero", T.div, a, b, "trunc")
      raises("integer division by zero", T.div, a, 0, "floor")
    end
    same({ inf, nan }, (tt({ 1, 0 }) / 0):totable())
  end)
end)

describe("arithmetic values", function()
  it("float division by zero follows IEEE", function()
    same({ inf, -inf, nan }, (tt({ 1.0, -1.0, 0.0 }) / 0.0):totable())
    same({ inf, -inf, nan }, (tt({ 1.0, -1.0, 0.0 }) // 0.0):totable())
    same({ nan, nan }, (tt({ 1.0, -1.0 }) % 0.0):totable())
  end)
end)

describe("bool semantics (PyTorch 1.13)", function()
  local a, b = tt({ true, true, false, false }), tt({ true, false, true, false })
  it("+ is or, * is and, comparisons and bitwise ops stay bool", function()
    same({ true, true, true, false }, (a + b):totable())
    same({ true, false, false, false }, (a * b):totable())
    same({ false, true, true, false }, (a ~ b):totable())
    same({ false, false, true, true }, (~a):totable())
    assert.equal(T.int64, (a << 1).dtype)
  end)
end)

describe("operators", function()
  it("accept Lua numbers on either side", function()
    local x = tt({ 1.0, 2.0 })
    same({ 1.0, 0.0 }, (2 - x):totable())
    same({ 2.0, 1.0 }, (2 / x):totable())
    same({ 3.0, 4.0 }, (2 + x):totable())
    same({ 2.0, 4.0 }, (2 ^ x):totable())
    same({ 1.0, 4.0 }, (x ^ 2):totable())
    same({ -1.0, -2.0 }, (-x):totable())
    same({ 0, 1 }, (3 // tt({ 4, 2 })):totable())
    same({ 1, 0 }, (5 % tt({ 2, 5 })):totable())
    same({ 3, 2 }, (tt({ 3, 6 }) & 3):totable())
    same({ 7 }, (4 | tt({ 3 })):totable())
    same({ 4 }, (1 << tt({ 2 })):totable())
    same({ 1 }, (tt({ 4 }) >> 2):totable())
    same({ -2 }, (~tt({ 1 })):totable())
  end)
end)

describe("operators", function()
  it("bitwise ops refuse floats as PyTorch and Lua do", function()
    raises("\"bitwise_and_cpu\" not implemented for 'Float'", function() return tt({ 1.0 }) & 1 end)
    raises("not implemented for 'Double'", T.bitwise_left_shift, tt({ 1.0 }, "float64"), 1)
    raises("number has no integer representation", function() return tt({ 1 }) | 1.5 end)
    same({ 1 }, (tt({ 3 }) & 1.0):totable())
  end)
end)

describe("vectorised transcendental kernels", function()
  it("the two-operand fast path keeps promotion and errors", function()
    assert.equal(T.float32, (T.ones(1) + 1).dtype)
    assert.equal(T.float32, (T.ones(1, { dtype = T.int32 }) + 1.5).dtype)
    assert.equal(T.int32, (T.ones(1, { dtype = T.int32 }) * 3).dtype)
    assert.equal(T.int64, (T.ones(1, { dtype = T.bool }) + 1).dtype)
    assert.equal(T.float64, (T.ones(2) + T.ones(2, { dtype = T.float64 })).dtype)
    assert.has_error(function() return T.ones(1, { dtype = T.int32 }) // T.zeros(1, { dtype = T.int32 }) end,
      "ltensor.floor_divide: integer division by zero")
    assert.equal(7, (3 + T.tensor({ 4 }, { dtype = T.int16 })):item())
  end)
end)
