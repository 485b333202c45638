-- tostring(t) against PyTorch 1.13's repr (cases in fixtures/print_cases.lua,
-- generated from real PyTorch), print options, and the error messages.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

-- helpers the fixture expressions use (same tensors as the generator's)
local function seq(n)
  local t = {}
  for i = 1, n do t[i] = i - 1 end
  return t
end
local function grid(r, c, div)
  div = div or 1
  local t = {}
  for i = 1, r do
    local row = {}
    for j = 1, c do row[j] = ((i - 1) * c + j - 1) / div end
    t[i] = row
  end
  return t
end
local function cube(a, b, c)
  local t, k = {}, 0
  for i = 1, a do
    t[i] = {}
    for j = 1, b do
      t[i][j] = {}
      for l = 1, c do t[i][j][l] = k; k = k + 1 end
    end
  end
  return t
end
-- complex tensors from {re, im} pairs, built from their bytes
local function cplx(dt, pairs_, shape)
  local fmt = dt == T.complex64 and "<ff" or "<dd"
  local parts = {}
  for i, p in ipairs(pairs_) do parts[i] = string.pack(fmt, p[1], p[2]) end
  return T._frombytes(table.concat(parts), dt, shape or { #pairs_ })
end

local env = setmetatable({ T = T, seq = seq, grid = grid, cube = cube, cplx = cplx }, { __index = _G })

local function with_opts(opts, default, fn)
  local saved_dtype = T.get_default_dtype()
  if default then T.set_default_dtype(T[default]) end
  T.set_printoptions { profile = "default" }
  if opts then T.set_printoptions(opts) end
  local ok, err = pcall(fn)
  T.set_printoptions { profile = "default" }
  T.set_default_dtype(saved_dtype)
  if not ok then error(err, 0) end
end

-- the expression writes a whole-valued float (1.0, 1e10, grid's divisions):
-- a float on Lua 5.3+, an integer (a weak int) where numbers have no
-- integer subtype (spec/host.lua)
local function whole_float(src)
  return src:find("grid(", 1, true) ~= nil or host.writes_whole_float(src)
end

describe("tostring matches PyTorch's repr", function()
  local cases = dofile("spec/fixtures/print_cases.lua")
  for i, c in ipairs(cases) do
    local label = c.lua
    if c.opts then
      local o = {}
      for k, v in pairs(c.opts) do o[#o + 1] = k .. "=" .. tostring(v) end
      table.sort(o)
      label = label .. " with " .. table.concat(o, ",")
    end
    if c.default then label = label .. " (default dtype " .. c.default .. ")" end
    it(("#%d %s"):format(i, label), function()
      with_opts(c.opts, c.default, function()
        local t = assert(load("return " .. c.lua, "case", "t", env))()
        if tostring(t) ~= c.want and whole_float(c.lua) then
          host.needs_integers("the case writes a whole-valued float, a weak int there: " .. c.lua)
        end
        assert.are.equal(c.want, tostring(t))
      end)
    end)
  end
end)

describe("tostring", function()
  after_each(function() T.set_printoptions { profile = "default" } end)

  it("prints the unsigned types PyTorch 1.13 lacks like the other integers", function()
    assert.are.equal("tensor([    1, 65535], dtype=uint16)", tostring(T.tensor({ 1, 65535 }, { dtype = T.uint16 })))
    assert.are.equal("tensor([         0, 4294967295], dtype=uint32)",
      tostring(T.tensor({ 0, 4294967295 }, { dtype = T.uint32 })))
  end)

  it("prints uint64 values above 2^63 as unsigned", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    local t = T._frombytes(string.pack("<I8I8", 1, 0xFFFFFFFFFFFFFFFF), T.uint64, { 2 })
    assert.are.equal("tensor([                   1, 18446744073709551615], dtype=uint64)", tostring(t))
    t = T._frombytes(string.pack("<I8", 0x8000000000000000), T.uint64, {})
    assert.are.equal("tensor(9223372036854775808, dtype=uint64)", tostring(t))
  end)

  it("prints a transposed (non-contiguous) view by its logical order", function()
    local t = T.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
    if not t.transpose then pending("transpose not available yet") return end
    assert.are.equal("tensor([[1, 4],\n        [2, 5],\n        [3, 6]])", tostring(t:transpose(1, 2)))
  end)

  it("prints an expanded view", function()
    local t = T.tensor { 1.5, 2.5 }
    if not t.expand then pending("expand not available yet") return end
    assert.are.equal("tensor([[1.5000, 2.5000],\n        [1.5000, 2.5000]])", tostring(t:expand(2, 2)))
  end)

  it("shows grad_fn instead of requires_grad for a non-leaf", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local a = T.tensor({ 1.0, 2.0 }, { requires_grad = true })
    local ok, b = pcall(function() return a + a end)
    if not ok or b.grad_fn == nil then pending("autograd not available yet") return end
    local s = tostring(b)
    assert.matches("^tensor%(%[2%., 4%.%], grad_fn=<[%w]+Backward%d*>%)$", s)
    assert.is_nil(s:find("requires_grad", 1, true))
  end)

  it("prints a summarised 1000x1000 tensor quickly, reading only the edges", function()
    local t = T.zeros(1000, 1000)
    local gets = 0
    local methods = T._methods
    local get = methods.get
    methods.get = function(...) gets = gets + 1; return get(...) end
    local ok, s = pcall(tostring, t)
    methods.get = get
    assert.is_true(ok, s)
    assert.are.equal(36, gets)
    local t0 = os.clock()
    for _ = 1, 5 do tostring(t) end
    assert.is_true(os.clock() - t0 < 2.0)
  end)

  it("with edgeitems = 0 shows only the ellipsis (PyTorch raises there)", function()
    T.set_printoptions { threshold = 0, edgeitems = 0 }
    assert.are.equal("tensor([ ...])", tostring(T.tensor { 1, 2, 3 }))
    assert.are.equal("tensor([...])", tostring(T.tensor { { 1, 2 }, { 3, 4 } }))
  end)

  it("survives a tensor with more than 1000 elements of value nan", function()
    local t = T.full({ 2000 }, 0 / 0)
    assert.are.equal("tensor([nan, nan, nan,  ..., nan, nan, nan])", tostring(t))
  end)

  it("raises for a freed tensor instead of printing garbage", function()
    local t = T.tensor { 1, 2 }
    t:free()
    assert.has_error(function() tostring(t) end)
  end)
end)

describe("set_printoptions", function()
  after_each(function() T.set_printoptions { profile = "default" } end)

  it("resets sci_mode to automatic when not given, as PyTorch does", function()
    T.set_printoptions { sci_mode = true }
    assert.are.equal("tensor([1.5000e+00, 2.5000e+00])", tostring(T.tensor { 1.5, 2.5 }))
    T.set_printoptions { precision = 4 }
    assert.are.equal("tensor([1.5000, 2.5000])", tostring(T.tensor { 1.5, 2.5 }))
  end)

  it("keeps the other options when one is changed", function()
    T.set_printoptions { precision = 2 }
    T.set_printoptions { linewidth = 100 }
    local o = T.get_printoptions()
    assert.are.same({ 2, 1000, 3, 100 }, { o.precision, o.threshold, o.edgeitems, o.linewidth })
  end)

  it("profile full never summarises", function()
    T.set_printoptions { profile = "full" }
    assert.are.equal(math.huge, T.get_printoptions().threshold)
    local s = tostring(T.zeros(1001))
    assert.is_nil(s:find("...", 1, true))
  end)

  it("accepts no argument (back to automatic sci_mode)", function()
    T.set_printoptions { sci_mode = true }
    T.set_printoptions()
    assert.is_nil(T.get_printoptions().sci_mode)
  end)

  it("rejects bad options", function()
    assert.has_error(function() T.set_printoptions { precision = -1 } end,
      "ltensor.set_printoptions: precision must be in [0, 99], got -1")
    assert.has_error(function() T.set_printoptions { precision = 1.5 } end,
      "ltensor.set_printoptions: precision must be an integer, got 1.5")
    assert.has_error(function() T.set_printoptions { threshold = "x" } end,
      "ltensor.set_printoptions: threshold must be a number, got string")
    assert.has_error(function() T.set_printoptions { sci_mode = 1 } end,
      "ltensor.set_printoptions: sci_mode must be a boolean or nil, got number")
    assert.has_error(function() T.set_printoptions { profile = "long" } end,
      "ltensor.set_printoptions: profile must be 'default', 'short' or 'full', got long")
    assert.has_error(function() T.set_printoptions { precison = 2 } end,
      "ltensor.set_printoptions: unknown option 'precison' (did you mean 'precision'?)")
    assert.has_error(function() T.set_printoptions(3) end,
      "ltensor.set_printoptions: expected a table of options, got number")
  end)

  it("a failed call changes nothing", function()
    T.set_printoptions { precision = 2 }
    pcall(T.set_printoptions, { precision = 3, linewidth = -5 })
    assert.are.equal(2, T.get_printoptions().precision)
  end)
end)
