-- Shape bounds (issue 13, item 2): wherever a tensor is made -- creation,
-- views, loaders -- its element count and every stride (the product of the
-- sizes after a dim, counting 0 as 1) must fit in int64, for 0-element
-- tensors too; otherwise a clear error names the function.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local function msg(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local BIG = 4611686018427387904   -- 2^62

describe("shape bounds", function()
  it("refuses 0-element shapes whose strides overflow, at creation", function()
    assert.matches("ltensor%.zeros: tensor too large %(size %[0, 4611686018427387904, 4%] overflows int64%)",
                   msg(T.zeros, 0, BIG, 4))
    assert.matches("ltensor%.zeros: tensor too large", msg(T.zeros, 0, 2 ^ 62, 4))
    assert.matches("ltensor%.zeros: tensor too large", msg(T.zeros, BIG, 0, 4))
    assert.matches("ltensor%.ones: tensor too large", msg(T.ones, { 4, BIG, 0 }))
    assert.matches("ltensor%.empty: tensor too large", msg(T.empty, 0, 2 ^ 40, 2 ^ 40))
    assert.matches("ltensor%.full: tensor too large", msg(T.full, { 0, BIG, 4 }, 1))
    assert.matches("ltensor%.rand: tensor too large", msg(T.rand, 0, BIG, 4))
  end)

  it("refuses huge element counts with the function's name", function()
    assert.matches("ltensor%.empty: tensor too large", msg(T.empty, 2 ^ 40, 2 ^ 40))
    assert.matches("ltensor%.zeros: tensor too large", msg(T.zeros, BIG, 4))
  end)

  it("still makes large 0-element tensors whose strides fit", function()
    local t = T.zeros(0, BIG)
    assert.are.same({ 0, BIG }, t:size())
    assert.are.same({ BIG, 1 }, t:stride())
    assert.are.equal(0, t:numel())
    assert.are.equal(0, t:sum():item())
    assert.are.same({ BIG, 0 }, T.empty(BIG, 0):size())
  end)

  it("refuses views that would produce such shapes", function()
    assert.matches("ltensor%.expand: tensor too large", msg(function() return T.zeros(0, BIG):expand(4, 0, BIG) end))
    assert.matches("ltensor%.expand: tensor too large",
                   msg(function() return T.zeros(1, 0):expand(BIG, 0):expand(4, BIG, 0) end))
    assert.matches("ltensor%.reshape: tensor too large", msg(function() return T.zeros(0):reshape(0, BIG, 8) end))
    assert.matches("ltensor%.expand: tensor too large",
                   msg(function() return T.zeros(0, BIG):unsqueeze(1):expand(8, 0, BIG) end))
    assert.has_error(function() return T.zeros(0):view(BIG, 8, 0) end)
  end)

  it("refuses to unbind into more slices than a table holds", function()
    assert.matches("ltensor%.unbind: too many slices %(9007199254740992%)",
                   msg(function() return T.zeros(0, 2 ^ 53):unbind(-1) end))
  end)

  it("refuses results whose shape does not fit", function()
    assert.matches("ltensor%.sum: tensor too large", msg(function() return T.zeros(0, BIG):sum(1) end))
  end)

  it("walks 0-element tensors with huge dims without overflow", function()
    local x = T.zeros(0, 2 ^ 61)
    assert.are.same({ 0, 2 ^ 61 }, (x + x):size())
    assert.are.same({ 2, 2 ^ 61, 0 }, T.zeros(0, 2 ^ 61, 2):permute(3, 2, 1):contiguous():size())
    assert.are.same({ 2 ^ 61, 0 }, x:t():clone():size())
    assert.are.equal(0, x:sum():item())
  end)
end)

describe("repeat and tile of empty tensors (as PyTorch 1.13)", function()
  it("give an empty tensor of the repeated shape, however large the counts", function()
    local MAXINT = math.maxinteger or 2 ^ 53   -- (Lua 5.1 hosts have no integer subtype)
    assert.are.same({ 0 }, T.tile(T.empty(0), { MAXINT }):size())
    assert.are.same({ 0 }, T.empty(0)["repeat"](T.empty(0), MAXINT):size())
    assert.are.same({ MAXINT, 0 }, T.empty(0)["repeat"](T.empty(0), MAXINT, MAXINT):size())
    assert.are.same({ 0 }, T.tile(T.empty(0), { BIG }):size())
    assert.are.same({ BIG, 0 }, T.empty(0)["repeat"](T.empty(0), BIG, BIG):size())
    assert.are.same({ BIG, 0 }, T.tile(T.empty(0), { BIG, BIG }):size())
    assert.are.same({ 0, 3 }, T.empty(0, 3)["repeat"](T.empty(0, 3), BIG, 1):size())
    assert.are.same({ 0, 12 }, T.ones(2, 3)["repeat"](T.ones(2, 3), 0, 4):size())
    local r = T.zeros(2, 3, { dtype = T.int16 })["repeat"](T.zeros(2, 3, { dtype = T.int16 }), 0, 1)
    assert.are.equal(T.int16, r.dtype)
    assert.is_true(r:is_contiguous())
    -- size * repeat decides: a negative repeat of a size-0 dim is 0
    assert.are.same({ 0 }, T.empty(0)["repeat"](T.empty(0), -1):size())
  end)

  it("still refuse negative or unbounded result sizes", function()
    assert.matches("ltensor%.repeat: Trying to create tensor with negative dimension %-2: %[%-2%]",
                   msg(function() return T.ones(2)["repeat"](T.ones(2), -1) end))
    assert.matches("ltensor%.repeat: Trying to create tensor with negative dimension %-3: %[%-3, 0%]",
                   msg(function() return T.ones(0)["repeat"](T.ones(0), -3, 2) end))
    assert.matches("ltensor%.repeat: tensor too large %(size %[4611686018427387904, 4611686018427387904, 0%]",
                   msg(function() return T.empty(0)["repeat"](T.empty(0), BIG, BIG, BIG) end))
    assert.matches("ltensor%.tile: tensor too large", msg(function() return T.tile(T.ones(1), { 0, BIG, BIG }) end))
    assert.matches("ltensor%.repeat: tensor too large", msg(function() return T.ones(3)["repeat"](T.ones(3), 2305843009213693952) end))
  end)

  it("keep the gradient path of an empty result", function()
    local e = T.empty(0, { requires_grad = true })
    local z = e["repeat"](e, BIG, 1)
    assert.is_true(z.requires_grad)
    z:sum():backward()
    assert.are.same({ 0 }, e.grad:size())
    local x = T.ones(3, { requires_grad = true })
    x["repeat"](x, 0, 2):sum():backward()
    assert.are.same({ 0, 0, 0 }, x.grad:totable())
  end)
end)

describe("advanced indexing with broadcast index tensors", function()
  -- each index tensor is bounded, but expanded ones can broadcast to a shape
  -- whose element count wraps int64 (2^60+1 by 16 is 2^64 + 16): the
  -- offsets buffer was sized by the wrapped count and overrun (ASan)
  local function idx(shape, v) return T.full(shape, v, { dtype = T.int64 }) end
  it("refuse results whose size overflows, when reading and writing", function()
    local t = T.zeros(3, 3)
    local i1 = idx({ 1, 1 }, 1):expand(1152921504606846977, 1)
    local i2 = idx({ 1, 16 }, 1)
    assert.matches("ltensor%.index: tensor too large %(size %[%d+, 16%] overflows int64%)",
                   msg(function() return t[{ i1, i2 }] end))
    assert.matches("ltensor%.index: tensor too large",
                   msg(function() return t[{ idx({ 1, 1 }, 1):expand(BIG, 1), idx({ 1, 1 }, 1):expand(1, BIG) }] end))
    assert.matches("tensor too large", msg(function() t[{ i1, i2 }] = 1 end))
    assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }, t:totable())
  end)

  it("give an empty result without reading the indices when a dim is 0 (as PyTorch)", function()
    local x = T.zeros(0, 3)
    assert.are.same({ 0, 1 }, x[{ {}, T.tensor({ 5 }) }]:size())
    assert.are.same({ 0, 1099511627776 }, x[{ {}, idx({ 1 }, 2):expand(1099511627776) }]:size())
    x[{ {}, T.tensor({ 5 }) }] = 1
    assert.matches("out of bounds", msg(function() return T.zeros(2, 3)[{ {}, T.tensor({ 5 }) }] end))
  end)
end)

describe("matmul of expanded batches", function()
  it("refuses batch dims that broadcast past int64, also when the inner sizes differ", function()
    local a = T.zeros(1, 1, 2, 3):expand(2 ^ 40, 1, 2, 3)
    assert.matches("ltensor%.matmul: tensor too large %(the batch dims overflow int64%)",
                   msg(T.matmul, a, T.zeros(1, 1, 4, 5):expand(1, 2 ^ 40, 4, 5)))
    assert.matches("ltensor%.matmul: tensor too large", msg(T.matmul, a, T.zeros(1, 1, 3, 5):expand(1, 2 ^ 40, 3, 5)))
    assert.matches("expected size for first two dimensions of batch2 tensor to be: %[2, 3%] but got: %[2, 4%]",
                   msg(T.matmul, T.zeros(2, 2, 3), T.zeros(2, 4, 5)))
  end)
end)

describe("cat of expanded tensors", function()
  it("refuses sizes along the dim that sum past int64 (four 2^62 views wrapped to 0)", function()
    local x = T.zeros(1):expand(2 ^ 62)
    assert.matches("ltensor%.cat: tensor too large %(the sizes along dimension 1 overflow int64%)",
                   msg(T.cat, { x, x, x, x }))
    local y = T.zeros(1, 1):expand(1, 2 ^ 62)
    assert.matches("ltensor%.cat: tensor too large %(the sizes along dimension 2 overflow int64%)",
                   msg(T.cat, { y, y }, 2))
  end)
end)

describe("shape bounds in the loaders", function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- an .npy file with this header and no data
  local function npy(name, shape, fortran)
    local h = ("{'descr': '<f4', 'fortran_order': %s, 'shape': %s, }"):format(fortran and "True" or "False", shape)
    h = h .. (" "):rep((64 - (10 + #h + 1) % 64) % 64) .. "\n"
    local path = dir .. "/" .. name .. ".npy"
    local f = assert(io.open(path, "wb"))
    f:write("\147NUMPY\1\0", string.char(#h % 256, math.floor(#h / 256)), h)
    f:close()
    return path
  end

  it("T.load_npy refuses shapes whose strides overflow int64", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    local p = npy("a", "(0, 9223372036854775807, 4)")
    assert.matches("ltensor%.load_npy: '.-a%.npy': shape %(0, 9223372036854775807, 4%) is too large %(its element count or strides overflow int64%)",
                   msg(T.load_npy, p))
    assert.matches("ltensor%.load_npy: .- is too large", msg(T.load_npy, npy("b", "(4611686018427387904, 0, 4)", true)))
  end)

  it("T.load_npy of shape (2^63-1, 0) gives an empty tensor whose ops stay bounded", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    for _, fortran in ipairs { false, true } do
      local t = T.load_npy(npy("c", "(9223372036854775807, 0)", fortran))
      assert.are.same({ math.maxinteger, 0 }, t:size())
      assert.are.equal(0, t:numel())
      assert.are.equal(0, t:sum():item())
      assert.are.same({ math.maxinteger, 0 }, (t + 1):size())
      assert.are.same({ 0, math.maxinteger }, t:t():contiguous():size())
      assert.matches("ltensor%.sum: tensor too large", msg(function() return t:sum(2) end))
      assert.is_string(tostring(t))
    end
  end)

  -- a safetensors file: 8-byte header length, JSON header, no data
  local function st(name, shape)
    local h = ('{"x": {"dtype": "F32", "shape": %s, "data_offsets": [0, 0]}}'):format(shape)
    local path = dir .. "/" .. name .. ".safetensors"
    local f = assert(io.open(path, "wb"))
    f:write(string.pack("<I8", #h), h)
    f:close()
    return path
  end

  it("T.load refuses shapes whose strides overflow int64", function()
    host.needs_integers("int64 values beyond 2^53, which a double cannot hold")
    assert.matches("ltensor%.load: tensor 'x': shape %[0, 9223372036854775807, 4%] is too large",
                   msg(T.load, st("a", "[0, 9223372036854775807, 4]")))
    local t = T.load(st("b", "[9223372036854775807, 0]")).x
    assert.are.same({ math.maxinteger, 0 }, t:size())
  end)
end)
