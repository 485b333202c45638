-- Creation: the random generator against a Lua model of xoshiro256** (Lua 5.3+).
-- Lua 5.3+ only (issue 12): the reference model of the generator needs 64-bit
-- integer arithmetic (wrapping * and +, >>, ~), which Lua 5.1, 5.2 and
-- LuaJIT lack; the fixed-sequence cases in creation_spec.lua run everywhere.

-- logspace, eye, and the random generator.
local T = require "ltensor"

local function errmsg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t return out end
  for _, v in ipairs(t) do flat(v, out) end
  return out
end

-- An independent Lua model of the documented generator: splitmix64 seeding
-- and xoshiro256** (Lua integers wrap modulo 2^64, >> is a logical shift).
local function reference(seed)
  local x = seed
  local function splitmix()
    x = x + 0x9e3779b97f4a7c15
    local z = x
    z = (z ~ (z >> 30)) * 0xbf58476d1ce4e5b9
    z = (z ~ (z >> 27)) * 0x94d049bb133111eb
    return z ~ (z >> 31)
  end
  local s = {splitmix(), splitmix(), splitmix(), splitmix()}
  local function rotl(v, k) return (v << k) | (v >> (64 - k)) end
  return function()
    local result = rotl(s[2] * 5, 7) * 9
    local t = s[2] << 17
    s[3] = s[3] ~ s[1]
    s[4] = s[4] ~ s[2]
    s[2] = s[2] ~ s[3]
    s[1] = s[1] ~ s[4]
    s[3] = s[3] ~ t
    s[4] = rotl(s[4], 45)
    return result
  end
end


describe("the random generator", function()
  it("produces the documented xoshiro256** stream after manual_seed", function()
    -- randint over the whole int64 range returns the raw words shifted by 2^63
    for _, seed in ipairs{0, 42, -7, 1234567} do
      T.manual_seed(seed)
      local got = T.randint(math.mininteger, math.maxinteger, {6}):totable()
      local nxt = reference(seed)
      for i = 1, 6 do assert.are.equal(math.mininteger + nxt(), got[i]) end
    end
  end)
end)

describe("the random generator", function()
  it("turns words into uniform floats with 53 (float64) or 24 (float32) bits", function()
    T.manual_seed(3)
    local d = T.rand(4, {dtype = T.float64}):totable()
    local f = T.rand(4):totable()
    local nxt = reference(3)
    for i = 1, 4 do assert.are.equal((nxt() >> 11) * 2.0 ^ -53, d[i]) end
    for i = 1, 4 do assert.are.equal((nxt() >> 40) * 2.0 ^ -24, f[i]) end
  end)
end)

describe("the random generator", function()
  it("draws normals by Box-Muller on two 53-bit uniforms", function()
    T.manual_seed(11)
    local z = T.randn(4, {dtype = T.float64}):totable()
    local nxt = reference(11)
    for i = 1, 4, 2 do
      local u1, u2 = (nxt() >> 11) * 2.0 ^ -53, (nxt() >> 11) * 2.0 ^ -53
      local r, th = math.sqrt(-2 * math.log(1 - u1)), 2 * math.pi * u2
      assert.is_true(math.abs(z[i] - r * math.cos(th)) < 1e-12)
      assert.is_true(math.abs(z[i + 1] - r * math.sin(th)) < 1e-12)
    end
  end)
end)
