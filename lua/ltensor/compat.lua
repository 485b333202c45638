-- ltensor.compat -- the few Lua 5.3/5.4 library functions ltensor's modules
-- use, on every host: Lua 5.1, 5.2, 5.3, 5.4 and LuaJIT (issue 12, SPEC §11).
--
-- A module starts with
--   local compat = require "ltensor.compat"
--   local math, table = compat.math, compat.table
-- and then writes 5.4 code: math.type, math.tointeger, math.maxinteger,
-- math.log(x, base), table.pack/unpack/move, plus compat.idiv (a // b),
-- compat.band/bor/bxor/shl/shr (a & b ...), compat.utf8 (char, len),
-- compat.spack/sunpack (string.pack/unpack of the formats ltensor's file
-- formats use) and compat.rawlen.  On 5.3/5.4 these are the library's own
-- functions (compat.math == math); the operators `//`, `&` ... are compiled
-- with load() there, so results are exact.  Nothing global is changed.
--
-- Numbers on hosts without an integer subtype (5.1, 5.2, LuaJIT): a
-- whole-valued number within int64's range is an "integer" (math.type), any
-- other a "float"; the same rule the C binding applies to weak scalars
-- (README.md, "Lua 5.1, 5.2, 5.3 and LuaJIT").
local compat = {}

local floor, huge = math.floor, math.huge
-- the integer subtype: the host parses 5.3's `//` (asked of the parser, not
-- of math.type, which a host's own polyfill may have added)
local has_int = (loadstring or load)("return 1 // 1") ~= nil
compat.has_integers = has_int            -- false on 5.1, 5.2 and LuaJIT
compat.lua_version = _VERSION            -- "Lua 5.1" on LuaJIT too
compat.luajit = rawget(_G, "jit") ~= nil

-- ---- math -----------------------------------------------------------------
local M = math
if not has_int then
  M = {}
  for k, v in pairs(math) do M[k] = v end
  local TWO63 = 9223372036854775808            -- 2^63, exact as a double
  -- the largest double below 2^63: every lua_Integer conversion in C accepts it
  M.maxinteger = 9223372036854774784
  M.mininteger = -TWO63
  function M.type(x)
    if type(x) ~= "number" then return nil end
    -- (-0.0 counts as an integer here, as math.tointeger takes it; the C
    -- binding's weak-scalar rule makes it a float so that a tensor keeps
    -- the sign: src/binding/l_compat.h, ltc_isinteger)
    if x == floor(x) and x >= -TWO63 and x < TWO63 then return "integer" end
    return "float"
  end
  function M.tointeger(x)
    if type(x) == "number" and x == floor(x) and x >= -TWO63 and x < TWO63 then return x end
    return nil
  end
  function M.ult(a, b)
    if a >= 0 and b >= 0 or a < 0 and b < 0 then return a < b end
    return a >= 0
  end
  local log, log10 = math.log, math.log10
  function M.log(x, base)
    if base == nil then return log(x) end
    if base == 10 and log10 then return log10(x) end
    if base == 2 then return log(x) / log(2) end
    return log(x) / log(base)
  end
  local atan, atan2 = math.atan, math.atan2
  if atan2 then
    function M.atan(y, x)
      if x == nil then return atan(y) end
      return atan2(y, x)
    end
  end
end
compat.math = M

-- ---- table ----------------------------------------------------------------
local Tb = table
if not (table.pack and table.unpack and table.move) then
  Tb = {}
  for k, v in pairs(table) do Tb[k] = v end
  Tb.unpack = table.unpack or unpack
  Tb.pack = table.pack or function(...) return { n = select("#", ...), ... } end
  Tb.move = table.move or function(a1, f, e, t, a2)
    a2 = a2 or a1
    if e >= f then
      if t > e or t <= f or a1 ~= a2 then
        for i = 0, e - f do a2[t + i] = a1[f + i] end
      else
        for i = e - f, 0, -1 do a2[t + i] = a1[f + i] end
      end
    end
    return a2
  end
end
compat.table = Tb
compat.unpack = Tb.unpack
compat.pack = Tb.pack
compat.rawlen = rawget(_G, "rawlen") or function(v)
  if type(v) == "string" then return #v end
  return #v        -- 5.1 and LuaJIT: `#` on a table never calls __len
end

-- #v with a table's __len: `#` calls it from Lua 5.2 on; on 5.1 and LuaJIT
-- it never does, so the library's own code asks through compat.len for the
-- length of a dataset, a DataLoader or a ModuleList.
local len_mm = #setmetatable({}, { __len = function() return 1 end }) == 1
compat.has_len_metamethod = len_mm
if len_mm then
  function compat.len(v) return #v end
else
  function compat.len(v)
    local mt = type(v) == "table" and getmetatable(v)
    local f = type(mt) == "table" and mt.__len
    if f then return f(v) end
    return #v
  end
end

-- ---- number formatting ------------------------------------------------------
-- compat.fmt_num(conv, prec, v): string.format("%." .. prec .. conv, v) for
-- conv "f" or "e", rounded as C's printf rounds (ties to even: 2.5 -> "2",
-- 0.03125 -> "0.0312").  LuaJIT formats numbers itself and rounds an exact
-- tie away from zero ("3", "0.0313"); there the tie is found in the exact
-- digits (a double's expansion ends within 60 places past the tie digit).
local sfmt = string.format
if compat.luajit then
  function compat.fmt_num(conv, prec, v)
    local r = sfmt("%." .. prec .. conv, v)
    if v ~= v or v == huge or v == -huge then return r end
    local long = sfmt("%." .. (prec + 60) .. conv, v)
    local mant, rest = long:match("^(%-?[%d]*%.?" .. ("%d"):rep(prec) .. ")(%d+)")
    if conv == "e" then mant, rest = long:match("^(%-?%d%.?" .. ("%d"):rep(prec) .. ")(%d*)") end
    if not mant or not rest:match("^50*$") then return r end
    local last = tonumber(mant:sub(-1)) or tonumber(mant:sub(-2, -2))
    if last and last % 2 == 1 then return r end            -- odd: away from zero is to even
    mant = mant:gsub("%.$", "")
    if conv == "e" then return mant .. long:match("e[-+]%d+$") end
    return mant
  end
else
  function compat.fmt_num(conv, prec, v) return sfmt("%." .. prec .. conv, v) end
end

-- compat.int_str(v): a whole number written as an integer for an error
-- message ("%d" on 5.3+).  Without the integer subtype a product of sizes
-- can leave int64's range (3 * -2^63 is -2.8e19 as a double), where 5.2's
-- "%d" raises "not a number in proper range"; such a value is written in
-- full with "%.0f".
function compat.int_str(v)
  if has_int and M.type(v) == "integer" then return sfmt("%d", v) end
  if v ~= v or v == huge or v == -huge then return tostring(v) end
  if v == floor(v) and v >= -9223372036854775808 and v < 9223372036854775808 then return sfmt("%d", v) end
  return sfmt("%.0f", v)
end

-- ---- operators: //, & | ~ << >> -------------------------------------------
local function compile(src)
  local f = (loadstring or load)(src)
  return f and f()
end
if has_int then
  -- the 5.3+ operators themselves (this file must parse on 5.1, hence load)
  compat.idiv = compile("return function(a, b) return a // b end")
  compat.band = compile("return function(a, b) return a & b end")
  compat.bor = compile("return function(a, b) return a | b end")
  compat.bxor = compile("return function(a, b) return a ~ b end")
  compat.shl = compile("return function(a, n) return a << n end")
  compat.shr = compile("return function(a, n) return a >> n end")
else
  -- numbers are doubles: exact for integers below 2^53, enough for sizes,
  -- counts and bit masks of up to 53 bits
  function compat.idiv(a, b)
    if type(a) ~= "number" or type(b) ~= "number" then return a:floor_divide(b) end
    return floor(a / b)
  end
  local TWO32 = 4294967296
  local function bits(a, b, op)
    -- non-negative operands below 2^53, bit by bit
    local r, p = 0, 1
    while a > 0 or b > 0 do
      local x, y = a % 2, b % 2
      if op(x, y) then r = r + p end
      a, b, p = (a - x) / 2, (b - y) / 2, p * 2
    end
    return r
  end
  function compat.band(a, b) return bits(a, b, function(x, y) return x == 1 and y == 1 end) end
  function compat.bor(a, b) return bits(a, b, function(x, y) return x == 1 or y == 1 end) end
  function compat.bxor(a, b) return bits(a, b, function(x, y) return x ~= y end) end
  function compat.shl(a, n) return a * 2 ^ n end
  function compat.shr(a, n) return floor(a / 2 ^ n) end
  compat.TWO32 = TWO32
end
-- bit i (1-based) of a non-negative mask
function compat.bit(m, i)
  if has_int then return compat.band(compat.shr(m, i - 1), 1) == 1 end
  return floor(m / 2 ^ (i - 1)) % 2 == 1
end

-- ---- utf8 -----------------------------------------------------------------
local U = rawget(_G, "utf8")
if not U then
  U = {}
  local char = string.char
  function U.char(...)
    local out = {}
    for i = 1, select("#", ...) do
      local c = select(i, ...)
      if c < 0x80 then out[i] = char(c)
      elseif c < 0x800 then out[i] = char(0xC0 + floor(c / 64), 0x80 + c % 64)
      elseif c < 0x10000 then out[i] = char(0xE0 + floor(c / 4096), 0x80 + floor(c / 64) % 64, 0x80 + c % 64)
      else out[i] = char(0xF0 + floor(c / 262144), 0x80 + floor(c / 4096) % 64, 0x80 + floor(c / 64) % 64, 0x80 + c % 64) end
    end
    return table.concat(out)
  end
  -- number of characters, or nil and the position of the first invalid byte
  -- (5.4's strict rules: no overlong forms, no surrogates, at most U+10FFFF)
  function U.len(s, i, j)
    i, j = i or 1, j or #s
    local n = 0
    while i <= j do
      local c = s:byte(i)
      local len, min
      if c < 0x80 then len, min = 1, 0
      elseif c >= 0xC2 and c < 0xE0 then len, min = 2, 0x80
      elseif c >= 0xE0 and c < 0xF0 then len, min = 3, 0x800
      elseif c >= 0xF0 and c < 0xF5 then len, min = 4, 0x10000
      else return nil, i end
      local cp = len == 1 and c or c % (2 ^ (7 - len))
      for k = 1, len - 1 do
        local b = s:byte(i + k)
        if not b or b < 0x80 or b > 0xBF then return nil, i end
        cp = cp * 64 + (b - 0x80)
      end
      if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then return nil, i end
      n, i = n + 1, i + len
    end
    return n
  end
end
compat.utf8 = U

-- ---- string.pack / string.unpack ------------------------------------------
-- On 5.1/5.2/LuaJIT a subset: little-endian "<", integers "i<n>"/"I<n>",
-- "f" (float32) and "d" (float64), any number of items.
local spack, sunpack = string.pack, string.unpack
if not spack then
  local char, byte = string.char, string.byte
  local function f32_bits(x)
    if x ~= x then return 0x7FC00000 end
    local sign = 0
    if x < 0 or (x == 0 and 1 / x < 0) then sign, x = 0x80000000, -x end
    if x == huge then return sign + 0x7F800000 end
    if x == 0 then return sign end
    local m, e = math.frexp(x)              -- x = m * 2^e, 0.5 <= m < 1
    local exp = e + 126
    if exp <= 0 then                         -- subnormal
      local mant = floor(x / 2 ^ -149 + 0.5)
      if mant >= 0x800000 then return sign + 0x800000 end
      return sign + mant
    end
    local mant = m * 2 ^ 24                  -- 24 significant bits, round to nearest even
    local r = floor(mant)
    local frac = mant - r
    if frac > 0.5 or (frac == 0.5 and r % 2 == 1) then r = r + 1 end
    if r >= 0x1000000 then r, exp = r / 2, exp + 1 end
    if exp >= 255 then return sign + 0x7F800000 end
    return sign + exp * 0x800000 + (r - 0x800000)
  end
  local function f32_value(b)
    local sign = b >= 0x80000000 and -1 or 1
    b = b % 0x80000000
    local exp, mant = floor(b / 0x800000), b % 0x800000
    if exp == 255 then return mant == 0 and sign * huge or 0 / 0 end
    if exp == 0 then return sign * mant * 2 ^ -149 end
    return sign * (1 + mant / 0x800000) * 2 ^ (exp - 127)
  end
  local function le(v, n)
    local out = {}
    for k = 1, n do
      local b = v % 256
      out[k] = b
      v = (v - b) / 256
    end
    return char((compat.unpack)(out, 1, n))
  end
  local function f64_bytes(x)
    -- IEEE double, little-endian, from frexp (NaN: the quiet NaN)
    local hi, lo
    if x ~= x then hi, lo = 0x7FF80000, 0
    else
      local sign = 0
      if x < 0 or (x == 0 and 1 / x < 0) then sign, x = 0x80000000, -x end
      if x == huge then hi, lo = sign + 0x7FF00000, 0
      elseif x == 0 then hi, lo = sign, 0
      else
        local m, e = math.frexp(x)            -- x = m * 2^e, 0.5 <= m < 1
        local exp = e + 1022
        local mant
        if exp <= 0 then mant, exp = x / 2 ^ -1074, 0                    -- subnormal: exact
        else mant = (m * 2 - 1) * 2 ^ 52 end                              -- exact: 52 bits
        hi = sign + exp * 0x100000 + floor(mant / 2 ^ 32)
        lo = mant % 2 ^ 32
      end
    end
    return le(lo, 4) .. le(hi, 4)
  end
  local function f64_value(lo, hi)
    local sign = hi >= 0x80000000 and -1 or 1
    hi = hi % 0x80000000
    local exp, mhi = floor(hi / 0x100000), hi % 0x100000
    local mant = mhi * 2 ^ 32 + lo
    if exp == 2047 then return mant == 0 and sign * huge or 0 / 0 end
    if exp == 0 then return sign * mant * 2 ^ -1074 end
    return sign * (1 + mant / 2 ^ 52) * 2 ^ (exp - 1023)
  end
  -- the items of a format: "<" / "=" (little-endian), ">" (big-endian,
  -- for the items after it), "d", "f", "b"/"B" (1 byte), "h"/"H" (2),
  -- "j"/"J" (8), "i<n>", "I<n>"; each item is { kind, size, big_endian }
  local SIZES = { b = 1, B = 1, h = 2, H = 2, j = 8, J = 8 }
  local function items(fmt)
    local out, pos, big = {}, 1, false
    while pos <= #fmt do
      local c = fmt:sub(pos, pos)
      if c == "<" or c == "=" then big = false; pos = pos + 1
      elseif c == ">" then big = true; pos = pos + 1
      elseif c == " " then pos = pos + 1
      elseif c == "d" or c == "f" then out[#out + 1] = { c, c == "d" and 8 or 4, big }; pos = pos + 1
      elseif SIZES[c] then
        out[#out + 1] = { c:lower() == c and "i" or "I", SIZES[c], big }; pos = pos + 1
      else
        local kind, n = fmt:match("^([iI])(%d*)", pos)
        if not kind then error("ltensor.compat: string.pack format '" .. tostring(fmt) .. "' not supported on " .. _VERSION, 3) end
        out[#out + 1] = { kind, tonumber(n) or 4, big }
        pos = pos + 1 + #n
      end
    end
    return out
  end
  -- bytes in the item's order (s: little-endian bytes)
  local function order(s, big) return big and s:reverse() or s end
  function spack(fmt, ...)
    local parts = {}
    for k, it in ipairs(items(fmt)) do
      local v = select(k, ...)
      if it[1] == "f" then parts[k] = order(le(f32_bits(v), 4), it[3])
      elseif it[1] == "d" then parts[k] = order(f64_bytes(v), it[3])
      else
        local b
        if v < 0 then
          -- two's complement byte by byte (v + 2^64 would round in a double)
          b = le(-v - 1, it[2]):gsub(".", function(c) return char(255 - byte(c)) end)
        else b = le(v, it[2]) end
        parts[k] = order(b, it[3])
      end
    end
    return table.concat(parts)
  end
  local function uint(s, pos, n)
    local v, p = 0, 1
    for k = 0, n - 1 do
      v = v + byte(s, pos + k) * p
      p = p * 256
    end
    return v
  end
  function sunpack(fmt, s, pos)
    pos = pos or 1
    local out = {}
    for k, it in ipairs(items(fmt)) do
      local kind, n = it[1], it[2]
      -- the item's bytes, little-endian first
      local b = order(s:sub(pos, pos + n - 1), it[3])
      if #b < n then error("bad argument #2 to 'unpack' (data string too short)", 2) end
      if kind == "f" then out[k] = f32_value(uint(b, 1, 4))
      elseif kind == "d" then out[k] = f64_value(uint(b, 1, 4), uint(b, 5, 4))
      else
        if kind == "i" and byte(b, n) >= 128 then
          -- negative: from the complemented bytes (v - 2^64 would round in a double)
          out[k] = -uint(b:gsub(".", function(c) return char(255 - byte(c)) end), 1, n) - 1
        else out[k] = uint(b, 1, n) end
      end
      pos = pos + n
    end
    out[#out + 1] = pos
    return (compat.unpack)(out, 1, #out)
  end
end
compat.spack, compat.sunpack = spack, sunpack

return compat
