-- T.read_csv / T.write_csv: exact round trips, headers, column selection,
-- bad files.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local H = dofile("spec/helpers.lua")

local tmpdir = os.getenv("TMPDIR") or "/tmp"
local n = 0
local made = {}   -- every path handed out, removed at the end
local function tmp(content)
  n = n + 1
  local path = string.format("%s/ltensor_csv_spec_%d_%d.csv", tmpdir, math.random(1073741824), n)
  made[#made + 1] = path
  if content then
    local f = assert(io.open(path, "wb"))
    f:write(content)
    f:close()
  end
  return path
end
local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end
local function bits_equal(a, b)
  -- same values bit for bit, NaN == NaN, -0 ~= 0
  local fa, fb = a:reshape({ -1 }):totable(), b:reshape({ -1 }):totable()
  if #fa ~= #fb then return false end
  for i = 1, #fa do
    local x, y = fa[i], fb[i]
    if x ~= y and not (x ~= x and y ~= y) then return false end
    if x == 0 and y == 0 and 1 / x ~= 1 / y then return false end
  end
  return true
end

describe("write_csv / read_csv round trip", function()
  it("float64 values come back exactly, specials included", function()
    local vals = { 0.1, 1e-300, -0.0, 0 / 0, math.huge, -math.huge, 1 / 3, 2 ^ 53 + 2, 5e-324, 1.7976931348623157e308,
      -123.456, 1e22, 0.30000000000000004, 100 }
    local t = T.tensor(vals, { dtype = T.float64 }):reshape({ 2, 7 })
    local p = tmp()
    T.write_csv(p, t)
    local back = T.read_csv(p, { header = false, dtype = T.float64 })
    assert.same({ 2, 7 }, back.shape)
    assert.equal(T.float64, back.dtype)
    assert.is_true(bits_equal(t, back))
    local text = slurp(p)
    assert.truthy(text:find("^0%.1,1e%-300,%-0,nan,inf,%-inf,"))
    assert.truthy(text:find(",100\n"))
    os.remove(p)
  end)
  it("float32 values come back exactly with the shortest digits", function()
    T.manual_seed(0)
    local t = T.randn({ 50, 4 }, { dtype = T.float32 })
    t[1][1] = 0.1
    t[1][2] = -1 / math.huge   -- -0.0 (Lua 5.1 gives a -0.0 literal the constant of this function's 0)
    t[1][3] = 1e-40   -- subnormal in float32
    t[1][4] = 3.4028234663852886e38
    local p = tmp()
    T.write_csv(p, t)
    local back = T.read_csv(p, { header = false, dtype = T.float32 })
    assert.equal(T.float32, back.dtype)
    assert.is_true(bits_equal(t, back))
    assert.truthy(slurp(p):find("^0%.1,%-0,"))
    os.remove(p)
  end)
  it("integers, booleans and half floats are written as numbers", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    local p = tmp()
    T.write_csv(p, T.tensor({ { 1, -2 }, { 3, 9007199254740993 } }, { dtype = T.int64 }))
    assert.equal("1,-2\n3,9007199254740993\n", slurp(p))
    T.write_csv(p, T.tensor({ true, false }))
    assert.equal("1\n0\n", slurp(p))
    T.write_csv(p, T.tensor({ 0.5, 1.25 }, { dtype = T.float16 }))
    assert.equal("0.5\n1.25\n", slurp(p))
    T.write_csv(p, T.tensor({ 7, -8 }, { dtype = T.int16 }))
    local back = T.read_csv(p, { header = false, dtype = T.int32 })
    assert.equal(T.int32, back.dtype)
    assert.same({ { 7 }, { -8 } }, back:totable())
    os.remove(p)
  end)
  it("writes and reads a header, with another delimiter", function()
    local p = tmp()
    local t = T.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = T.float32 })
    T.write_csv(p, t, { header = { "a", "b;c", 'q"x' }, delimiter = ";" })
    assert.equal('a;"b;c";"q""x"\n1;2;3\n4;5;6\n', slurp(p))
    local back, names = T.read_csv(p, { delimiter = ";" })
    assert.same({ "a", "b;c", 'q"x' }, names)
    assert.is_true(T.equal(t, back))
    os.remove(p)
  end)
  it("empty tensors", function()
    local p = tmp()
    T.write_csv(p, T.zeros({ 0, 3 }), { header = { "x", "y", "z" } })
    local back, names = T.read_csv(p)
    assert.same({ 0, 3 }, back.shape)
    assert.same({ "x", "y", "z" }, names)
    os.remove(p)
  end)
end)

describe("read_csv", function()
  it("reads a header, the default dtype, CRLF, blanks, quotes and empty fields", function()
    local p = tmp('x, y ,"z"\r\n1,2.5,"3"\r\n\r\n  4 ,5e1,\r\n')
    local t, names = T.read_csv(p)
    assert.same({ "x", "y", "z" }, names)
    assert.equal(T.get_default_dtype(), t.dtype)
    local v = t:totable()
    assert.same({ 1, 2.5, 3 }, v[1])
    assert.same({ 4, 50 }, { v[2][1], v[2][2] })
    assert.is_true(v[2][3] ~= v[2][3])
    os.remove(p)
  end)
  it("selects columns by name or 1-based position, in the order given", function()
    local p = tmp("a,b,c\n1,2,3\n4,5,6\n")
    local t, names = T.read_csv(p, { columns = { "c", "a" }, dtype = T.float64 })
    assert.same({ "c", "a" }, names)
    assert.same({ { 3, 1 }, { 6, 4 } }, t:totable())
    t, names = T.read_csv(p, { columns = { 2 } })
    assert.same({ "b" }, names)
    assert.same({ { 2 }, { 5 } }, t:totable())
    local nh = T.read_csv(tmp("1,2\n3,4\n"), { header = false, columns = { 2 }, dtype = T.int64 })
    assert.same({ { 2 }, { 4 } }, nh:totable())
    assert.equal(T.int64, nh.dtype)
    os.remove(p)
  end)
  it("without a header returns only the tensor", function()
    local p = tmp("1,2\n3,4")
    local t, names = T.read_csv(p, { header = false })
    assert.same({ { 1, 2 }, { 3, 4 } }, t:totable())
    assert.is_nil(names)
    os.remove(p)
  end)
  it("reads the digits data set", function()
    local p = tmp()
    os.execute("gzip -dc examples/data/digits.csv.gz > '" .. p .. "'")
    local t = T.read_csv(p, { header = false, dtype = T.float32 })
    assert.same({ 1797, 65 }, t.shape)
    os.remove(p)
  end)
  it("names the line and column of a bad field", function()
    local p = tmp("a,b\n1,2\n3,abc\n")
    H.raises("ltensor.read_csv: line 3, column 2: 'abc' is not a number", function() T.read_csv(p) end)
    p = tmp("a,b\n1,2\n\n4,5,6\n")
    H.raises("ltensor.read_csv: line 4 has 3 fields, expected 2", function() T.read_csv(p) end)
    p = tmp("1,2x\n")
    H.raises("ltensor.read_csv: line 1, column 2: '2x' is not a number", function() T.read_csv(p, { header = false }) end)
    p = tmp("a,b\n1.5,2\n")
    H.raises("ltensor.read_csv: a value is not an integer, can't read it as ltensor.int64",
      function() T.read_csv(p, { dtype = T.int64 }) end)
  end)
  it("checks files and options", function()
    H.raises("ltensor.read_csv: cannot open '/nonexistent/x.csv'", function() T.read_csv("/nonexistent/x.csv") end)
    local p = tmp("")
    H.raises("is empty (no header line)", function() T.read_csv(p) end)
    assert.same({ 0, 0 }, T.read_csv(p, { header = false }).shape)
    p = tmp("a,b\n1,2\n")
    H.raises("ltensor.read_csv: unknown option 'delimeter' (did you mean 'delimiter'?)",
      function() T.read_csv(p, { delimeter = ";" }) end)
    H.raises("ltensor.read_csv: no column named 'c' (the columns are: a, b)", function() T.read_csv(p, { columns = { "c" } }) end)
    H.raises("ltensor.read_csv: column 3 is out of range (the file has 2 columns; columns are 1-based)",
      function() T.read_csv(p, { columns = { 3 } }) end)
    H.raises("ltensor.read_csv: column 0 is out of range", function() T.read_csv(p, { columns = { 0 } }) end)
    H.raises("ltensor.read_csv: column names need a header", function() T.read_csv(p, { header = false, columns = { "a" } }) end)
    H.raises("ltensor.read_csv: delimiter must be a single character, got ';;'", function() T.read_csv(p, { delimiter = ";;" }) end)
    H.raises("ltensor.read_csv: expected a file name, got number", function() T.read_csv(3) end)
  end)
end)

describe("write_csv", function()
  it("checks its arguments and leaves no temporary file on failure", function()
    H.raises("ltensor.write_csv: bad argument #2 (tensor expected, got table)", function() T.write_csv(tmp(), {}) end)
    H.raises("ltensor.write_csv: expected a 1-D or 2-D tensor, got 3 dimensions", function() T.write_csv(tmp(), T.zeros({ 1, 1, 1 })) end)
    H.raises("ltensor.write_csv: header has 1 names for 2 columns",
      function() T.write_csv(tmp(), T.zeros({ 1, 2 }), { header = { "a" } }) end)
    H.raises("ltensor.write_csv: complex tensors are not supported",
      function() T.write_csv(tmp(), T.zeros({ 1, 2 }, { dtype = T.complex64 })) end)
    H.raises("ltensor.write_csv: unknown option 'headers' (did you mean 'header'?)",
      function() T.write_csv(tmp(), T.zeros({ 1, 2 }), { headers = { "a", "b" } }) end)
    H.raises("ltensor.write_csv: cannot open '/nonexistent/dir/x.csv' for writing", function() T.write_csv("/nonexistent/dir/x.csv", T.zeros({ 1 })) end)
  end)
  it("writes non-contiguous tensors in logical order", function()
    local p = tmp()
    T.write_csv(p, T.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = T.float64 }):t())
    assert.equal("1,3\n2,4\n", slurp(p))
    os.remove(p)
  end)
end)

teardown(function()
  for _, p in ipairs(made) do os.remove(p) end
end)
