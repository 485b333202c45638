-- Indexing (SPEC §5): t[i], t[{...}] with ranges, masks and index tensors,
-- assignment through all of them, index_select, masked_select/fill, nonzero,
-- gather and scatter; on contiguous, transposed and expanded inputs.
local T = require "ltensor"

local function check(t, dtype, shape, data)
  assert.equal(dtype, t.dtype)
  assert.same(shape, t.shape)
  if data ~= nil then assert.same(data, t:totable()) end
end

local function raises(substr, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. substr)
  err = tostring(err)
  assert.is_truthy(err:find(substr, 1, true), "error was: " .. err)
end

local function m23() return T.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }) end
local function m23t() return T.tensor({ { 1, 4 }, { 2, 5 }, { 3, 6 } }):t() end  -- same values, transposed layout
local function idx(t) return T.tensor(t, { dtype = T.int64 }) end
local function mask(t) return T.tensor(t, { dtype = T.bool }) end

describe("t[i]", function()
  it("selects along dim 1 as a view, negative from the end", function()
    local a = m23()
    check(a[1], T.int64, { 3 }, { 1, 2, 3 })
    check(a[-1], T.int64, { 3 }, { 4, 5, 6 })
    check(a[2.0], T.int64, { 3 }, { 4, 5, 6 })
    assert.is_true(T._same_storage(a, a[2]))
    check(T.tensor({ 7, 8 })[2], T.int64, {}, 8)
    check(m23t()[2], T.int64, { 3 }, { 4, 5, 6 })
    check(T.tensor({ 1, 2 }):expand(3, 2)[3], T.int64, { 2 }, { 1, 2 })
    check(T.index(a, 1), T.int64, { 3 }, { 1, 2, 3 })
  end)

  it("raises for out-of-range, non-integer and 0-dim cases", function()
    raises("index 5 is out of bounds for dimension 1 with size 2", function() return m23()[5] end)
    raises("ltensor.index: index -3 is out of bounds for dimension 1 with size 2", function() return m23()[-3] end)
    raises("index 0 is out of bounds for dimension 1 with size 2", function() return m23()[0] end)
    raises("invalid index 1.5", function() return m23()[1.5] end)
    raises("invalid index of a 0-dim tensor", function() return T.tensor(1)[1] end)
    raises("index 1 is out of bounds for dimension 1 with size 0", function() return T.zeros(0)[1] end)
    raises("invalid index of type string", function() return m23()[{ "a" }] end)
  end)
end)

describe("t[{...}]", function()
  it("selects per dim; fewer keys leave trailing dims whole", function()
    local a = m23()
    check(a[{ 2, 3 }], T.int64, {}, 6)
    check(a[{ -1, -3 }], T.int64, {}, 4)
    check(a[{ 2 }], T.int64, { 3 }, { 4, 5, 6 })
    check(a[{}], T.int64, { 2, 3 }, a:totable())
    check(m23t()[{ 1, 2 }], T.int64, {}, 2)
  end)

  it("takes inclusive {a, b} ranges, {} for a whole dim and {a} keeping the dim", function()
    local a = m23()
    check(a[{ {}, { 2, 3 } }], T.int64, { 2, 2 }, { { 2, 3 }, { 5, 6 } })
    check(a[{ {}, 2 }], T.int64, { 2 }, { 2, 5 })
    check(a[{ { 2 }, { 2 } }], T.int64, { 1, 1 }, { { 5 } })
    check(a[{ { -2, -1 }, { -1, 3 } }], T.int64, { 2, 1 }, { { 3 }, { 6 } })
    check(a[{ {}, { 1, 3, 2 } }], T.int64, { 2, 2 }, { { 1, 3 }, { 4, 6 } })
    check(a[{ {}, { 3, 1 } }], T.int64, { 2, 0 })             -- empty when b < a
    check(a[{ {}, { 2, 10 } }], T.int64, { 2, 2 })            -- clamped like a slice
    check(m23t()[{ {}, { 2, 3 } }], T.int64, { 2, 2 }, { { 2, 3 }, { 5, 6 } })
    local e = T.tensor({ 1, 2, 3 }):expand(2, 3)
    check(e[{ { 2, 2 }, { 1, 2 } }], T.int64, { 1, 2 }, { { 1, 2 } })
    assert.is_true(T._same_storage(a, a[{ {}, { 2, 3 } }]))
  end)

  it("inserts a dim for a boolean entry", function()
    check(m23()[{ true }], T.int64, { 1, 2, 3 })
    check(m23()[{ {}, true }], T.int64, { 2, 1, 3 }, { { { 1, 2, 3 } }, { { 4, 5, 6 } } })
    check(m23()[{ false }], T.int64, { 0, 2, 3 })
    check(T.tensor(4)[{ true }], T.int64, { 1 }, { 4 })
  end)

  it("raises for too many indices and bad ranges", function()
    raises("too many indices for tensor of dimension 2", function() return m23()[{ 1, 1, 1 }] end)
    raises("index 4 is out of bounds for dimension 2 with size 3", function() return m23()[{ 1, 4 }] end)
    raises("index 3 is out of bounds for dimension 1 with size 2", function() return m23()[{ { 3 } }] end)
    raises("range step must be greater than zero", function() return m23()[{ { 1, 2, 0 } }] end)
    raises("a range has at most 3 entries", function() return m23()[{ { 1, 2, 1, 1 } }] end)
  end)
end)

describe("mask indexing", function()
  it("selects the true elements into a 1-D copy", function()
    local a = m23()
    local m = mask({ { true, false, true }, { false, false, true } })
    local r = a[m]
    check(r, T.int64, { 3 }, { 1, 3, 6 })
    assert.is_false(T._same_storage(a, r))
    check(m23t()[m], T.int64, { 3 }, { 1, 3, 6 })
    check(a[mask({ { false, false, false }, { false, false, false } })], T.int64, { 0 })
  end)

  it("takes uint8 tensors as masks, as PyTorch 1.13 does", function()
    local u = function(d) return T.tensor(d, { dtype = T.uint8 }) end
    check(m23()[u({ 1, 0 })], T.int64, { 1, 3 }, { { 1, 2, 3 } })
    check(m23()[u({ 0, 2 })], T.int64, { 1, 3 }, { { 4, 5, 6 } })          -- any non-zero byte is true
    check(m23()[u({ { 1, 0, 1 }, { 0, 0, 1 } })], T.int64, { 3 }, { 1, 3, 6 })
    check(m23()[{ {}, u({ 0, 1, 1 }) }], T.int64, { 2, 2 }, { { 2, 3 }, { 5, 6 } })
    check(m23()[T.tensor(1, { dtype = T.uint8 })], T.int64, { 1, 2, 3 })   -- 0-dim: a new dim
    local a = m23()
    a[u({ 0, 1 })] = 0
    check(a, T.int64, { 2, 3 }, { { 1, 2, 3 }, { 0, 0, 0 } })
    raises("the shape of the mask [3] at index 1 does not match", function() return m23()[u({ 1, 1, 0 })] end)
  end)

  it("covers leading dims when the mask has fewer dims", function()
    check(m23()[mask({ false, true })], T.int64, { 1, 3 }, { { 4, 5, 6 } })
    check(m23()[{ {}, mask({ true, false, true }) }], T.int64, { 2, 2 }, { { 1, 3 }, { 4, 6 } })
  end)

  it("treats a 0-dim bool tensor as a new dim", function()
    check(m23()[T.tensor(true)], T.int64, { 1, 2, 3 })
    check(m23()[T.tensor(false)], T.int64, { 0, 2, 3 })
  end)

  it("raises when the mask shape does not match", function()
    raises("the shape of the mask [3] at index 1 does not match the shape of the indexed tensor [2, 3] at index 1",
      function() return m23()[mask({ true, true, false })] end)
  end)
end)

describe("index tensor indexing", function()
  it("gathers rows with 1-based, negative-from-the-end indices", function()
    local a = m23()
    check(a[idx({ 2, 1, -1 })], T.int64, { 3, 3 }, { { 4, 5, 6 }, { 1, 2, 3 }, { 4, 5, 6 } })
    check(a[idx({ { 1 }, { 2 } })], T.int64, { 2, 1, 3 }, { { { 1, 2, 3 } }, { { 4, 5, 6 } } })
    check(a[idx(2)], T.int64, { 3 }, { 4, 5, 6 })
    check(a[T.tensor({ 2 }, { dtype = T.int32 })], T.int64, { 1, 3 }, { { 4, 5, 6 } })
    check(m23t()[idx({ 2 })], T.int64, { 1, 3 }, { { 4, 5, 6 } })
    check(a[idx({})], T.int64, { 0, 3 })
    assert.is_false(T._same_storage(a, a[idx({ 1 })]))
  end)

  it("applies tensors inside a table key per dim, PyTorch's placement rules", function()
    local a = m23()
    check(a[{ {}, idx({ 3, 1 }) }], T.int64, { 2, 2 }, { { 3, 1 }, { 6, 4 } })
    check(a[{ idx({ 1, 2 }), idx({ 3, 1 }) }], T.int64, { 2 }, { 3, 4 })          -- pointwise
    check(a[{ idx({ { 1 }, { 2 } }), idx({ 1, 3 }) }], T.int64, { 2, 2 }, { { 1, 3 }, { 4, 6 } }) -- broadcast
    check(a[{ 2, idx({ 3, 3 }) }], T.int64, { 2 }, { 6, 6 })
    local x = T.zeros(2, 3, 4)
    check(x[{ idx({ 1, 2 }), {}, idx({ 1, 2 }) }], T.float32, { 2, 3 })       -- non-adjacent: index dims first
    check(x[{ {}, idx({ 1, 2 }), idx({ 1, 2 }) }], T.float32, { 2, 2 })       -- adjacent: stay in place
    check(x[{ {}, idx({ { 1, 2, 3 } }) }], T.float32, { 2, 1, 3, 4 })
  end)

  it("accepts nonzero(as_tuple) results as a key", function()
    local a = m23()
    local nz = mask({ { false, true, false }, { true, false, false } }):nonzero({ as_tuple = true })
    check(a[nz], T.int64, { 2 }, { 2, 4 })
  end)

  it("raises for bad index tensors", function()
    raises("index 3 is out of bounds for dimension 1 with size 2", function() return m23()[idx({ 1, 3 })] end)
    raises("index -3 is out of bounds for dimension 1 with size 2", function() return m23()[idx({ -3 })] end)
    raises("index 0 is out of bounds for dimension 2 with size 3", function() return m23()[{ {}, idx({ 0 }) }] end)
    raises("tensors used as indices must be long, int, byte or bool tensors", function()
      return m23()[T.tensor({ 1.0 })]
    end)
    raises("shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]", function()
      return m23()[{ idx({ 1, 2 }), idx({ 1, 2, 3 }) }]
    end)
  end)
end)

describe("t[...] = v", function()
  it("writes numbers and booleans into a selected view", function()
    local a = m23()
    a[1] = 0
    assert.same({ { 0, 0, 0 }, { 4, 5, 6 } }, a:totable())
    a[{ 2, -1 }] = 9
    assert.same({ { 0, 0, 0 }, { 4, 5, 9 } }, a:totable())
    a[{ {}, { 1, 2 } }] = 2.7 -- converted to the tensor's dtype
    assert.same({ { 2, 2, 0 }, { 2, 2, 9 } }, a:totable())
    local b = T.zeros(2)
    b[2] = true
    assert.same({ 0.0, 1.0 }, b:totable())
    local s = T.tensor(1.0)
    s[{}] = 5
    assert.equal(5.0, s:item())
  end)

  it("writes broadcastable tensors, dropping leading size-1 dims of the value", function()
    local a = m23()
    a[{ {}, 2 }] = T.tensor({ 8, 9 })
    assert.same({ { 1, 8, 3 }, { 4, 9, 6 } }, a:totable())
    a[2] = T.tensor({ { 7, 7, 7 } })
    assert.same({ { 1, 8, 3 }, { 7, 7, 7 } }, a:totable())
    a[{}] = T.tensor({ 0, 1, 2 })
    assert.same({ { 0, 1, 2 }, { 0, 1, 2 } }, a:totable())
    a[1] = T.tensor({ 1.9, 2.9, 3.9 }) -- cast to int64 like copy_
    assert.same({ 1, 2, 3 }, a[1]:totable())
  end)

  it("writes through transposed tensors into the shared storage", function()
    local a = m23()
    local t = a:t()
    t[1] = 100
    assert.same({ { 100, 2, 3 }, { 100, 5, 6 } }, a:totable())
  end)

  it("copies through a temporary when the value aliases the destination", function()
    local a = T.tensor({ 1, 2, 3, 4 })
    a[{ { 2, 4 } }] = a[{ { 1, 3 } }]
    assert.same({ 1, 1, 2, 3 }, a:totable())
    local b = T.tensor({ 1, 2, 3 })
    b[idx({ 3, 2, 1 })] = b
    assert.same({ 3, 2, 1 }, b:totable())
  end)

  it("writes by mask", function()
    local a = m23()
    local m = mask({ { true, false, true }, { false, false, true } })
    a[m] = -1
    assert.same({ { -1, 2, -1 }, { 4, 5, -1 } }, a:totable())
    a[m] = T.tensor({ 10, 20, 30 })
    assert.same({ { 10, 2, 20 }, { 4, 5, 30 } }, a:totable())
    a[mask({ false, true })] = T.tensor({ 0, 0, 0 })
    assert.same({ { 10, 2, 20 }, { 0, 0, 0 } }, a:totable())
    a[mask({ false, false })] = T.zeros(0, 3, { dtype = T.int64 })
    assert.same({ { 10, 2, 20 }, { 0, 0, 0 } }, a:totable())
    local t = m23t()
    t[m] = 0
    assert.same({ { 0, 2, 0 }, { 4, 5, 0 } }, t:totable())
  end)

  it("writes by index tensor; the last duplicate wins", function()
    local a = m23()
    a[idx({ 2 })] = 0
    assert.same({ { 1, 2, 3 }, { 0, 0, 0 } }, a:totable())
    local v = T.tensor({ 1, 2, 3 })
    v[idx({ 1, 1, -1 })] = T.tensor({ 7, 8, 9 })
    assert.same({ 8, 2, 9 }, v:totable())
    local b = m23()
    b[{ idx({ 1, 2 }), idx({ 3, 1 }) }] = T.tensor({ 30, 40 })
    assert.same({ { 1, 2, 30 }, { 40, 5, 6 } }, b:totable())
  end)

  it("bumps the version counter", function()
    local a = m23()
    local v0 = T._version(a)
    a[1] = 0
    local v1 = T._version(a)
    assert.is_true(v1 > v0)
    a[mask({ true, false })] = 1
    assert.is_true(T._version(a) > v1)
  end)

  it("raises for bad values and shapes", function()
    raises("value must be a number, a boolean or a tensor (got string)", function() m23()[1] = "x" end)
    raises("must match the size of tensor b", function() m23()[1] = T.tensor({ 1, 2 }) end)
    raises("shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]",
      function() m23()[mask({ { true, true, true }, { false, false, false } })] = T.tensor({ 1, 2 }) end)
    raises("refer to a single memory location", function()
      local e = T.tensor({ 1, 2 }):expand(3, 2)
      e[idx({ 1 })] = 0
    end)
    raises("refer to a single memory location", function()
      local e = T.tensor({ 1, 2 }):expand(3, 2)
      e[{}] = 0
    end)
    raises("ltensor.setindex: index 3 is out of bounds for dimension 1 with size 2", function() m23()[3] = 0 end)
  end)
end)

describe("index_select", function()
  it("gathers along any dim", function()
    local a = m23()
    check(a:index_select(2, idx({ 3, 1, 3 })), T.int64, { 2, 3 }, { { 3, 1, 3 }, { 6, 4, 6 } })
    check(T.index_select(a, 1, idx({ 2 })), T.int64, { 1, 3 }, { { 4, 5, 6 } })
    check(a:index_select(-1, T.tensor({ -1 }, { dtype = T.int32 })), T.int64, { 2, 1 }, { { 3 }, { 6 } })
    check(m23t():index_select(1, idx({ 2, 1 })), T.int64, { 2, 3 }, { { 4, 5, 6 }, { 1, 2, 3 } })
    check(T.tensor({ 5, 6 }):expand(2, 2):index_select(2, idx({ 2 })), T.int64, { 2, 1 }, { { 6 }, { 6 } })
    check(a:index_select(1, idx(2)), T.int64, { 1, 3 }, { { 4, 5, 6 } })
    check(a:index_select(1, idx({})), T.int64, { 0, 3 })
  end)

  it("raises for bad indices", function()
    raises("Index is supposed to be a vector", function() m23():index_select(1, idx({ { 1 } })) end)
    raises("Expected dtype int32 or int64 for index", function() m23():index_select(1, T.tensor({ 1.0 })) end)
    raises("index 4 is out of bounds for dimension 2 with size 3", function() m23():index_select(2, idx({ 4 })) end)
    raises("dimension out of range", function() m23():index_select(3, idx({ 1 })) end)
  end)
end)

describe("masked_select / masked_fill", function()
  local m = mask({ { true, false, true }, { false, false, true } })

  it("masked_select broadcasts mask and input", function()
    check(m23():masked_select(m), T.int64, { 3 }, { 1, 3, 6 })
    check(m23t():masked_select(mask({ false, true, true })), T.int64, { 4 }, { 2, 3, 5, 6 })
    check(T.tensor({ 1, 2, 3 }):masked_select(m), T.int64, { 3 }, { 1, 3, 3 })
    check(T.tensor(5):masked_select(T.tensor(true)), T.int64, { 1 }, { 5 })
    check(T.tensor(5):masked_select(T.tensor(false)), T.int64, { 0 })
    raises("masked_select only supports boolean masks, but got mask with dtype int64", function()
      m23():masked_select(idx({ 1, 0, 1 }))
    end)
    raises("must match the size of tensor b (2)", function() m23():masked_select(mask({ true, false })) end)
  end)

  it("masked_fill returns a filled copy of the broadcast shape, keeping the dtype", function()
    local a = m23()
    check(a:masked_fill(m, -1), T.int64, { 2, 3 }, { { -1, 2, -1 }, { 4, 5, -1 } })
    assert.same({ { 1, 2, 3 }, { 4, 5, 6 } }, a:totable())
    check(T.masked_fill(a, mask({ false, true, false }), 2.9), T.int64, { 2, 3 }, { { 1, 2, 3 }, { 4, 2, 6 } })
    check(T.tensor({ 1.0, 2.0 }):masked_fill(mask({ { true }, { false } }), T.tensor(0.5)), T.float32, { 2, 2 },
      { { 0.5, 0.5 }, { 1.0, 2.0 } })
    check(m23t():masked_fill(m, 0), T.int64, { 2, 3 }, { { 0, 2, 0 }, { 4, 5, 0 } })
  end)

  it("masked_fill_ writes in place and bumps the version", function()
    local a = m23()
    local v0 = T._version(a)
    local r = a:masked_fill_(m, 0)
    assert.equal(a, r)
    assert.same({ { 0, 2, 0 }, { 4, 5, 0 } }, a:totable())
    assert.is_true(T._version(a) > v0)
    local t = m23t()
    t:masked_fill_(mask({ true, false, false }), 9)
    assert.same({ { 9, 2, 3 }, { 9, 5, 6 } }, t:totable())
  end)

  it("masked_fill raises PyTorch's errors", function()
    raises("masked_fill_ only supports boolean masks, but got mask with dtype float32", function()
      m23():masked_fill_(T.tensor({ 1.0, 0.0, 1.0 }), 0)
    end)
    raises("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)", function()
      m23():masked_fill_(m, T.tensor({ 1 }))
    end)
    raises("mask of shape [2, 2, 3] cannot be broadcast to the shape [2, 3]", function()
      m23():masked_fill_(mask({ { { true, true, true }, { true, true, true } }, { { true, true, true }, { true, true, true } } }), 0)
    end)
    raises("refer to a single memory location", function()
      T.tensor({ 1, 2 }):expand(2, 2):masked_fill_(mask({ true, false }), 0)
    end)
  end)
end)

describe("nonzero", function()
  it("returns 1-based int64 coordinates, one row per nonzero element", function()
    check(T.tensor({ { 0, 1 }, { 2, 0 } }):nonzero(), T.int64, { 2, 2 }, { { 1, 2 }, { 2, 1 } })
    check(T.tensor({ 0.0, -0.0, 0 / 0, 3 }):nonzero(), T.int64, { 2, 1 }, { { 3 }, { 4 } })
    check(mask({ false, false }):nonzero(), T.int64, { 0, 1 })
    check(T.nonzero(m23t()), T.int64, { 6, 2 })
    check(T.tensor(3):nonzero(), T.int64, { 1, 0 })
    check(T.tensor({ 1, 0 }):expand(2, 2):nonzero(), T.int64, { 2, 2 }, { { 1, 1 }, { 2, 1 } })
  end)

  it("as_tuple gives one 1-D tensor per dim", function()
    local r = T.tensor({ { 0, 1 }, { 2, 0 } }):nonzero({ as_tuple = true })
    assert.equal(2, #r)
    check(r[1], T.int64, { 2 }, { 1, 2 })
    check(r[2], T.int64, { 2 }, { 2, 1 })
  end)
end)

describe("gather / scatter", function()
  it("gather picks along a dim with 1-based indices", function()
    local a = m23()
    check(a:gather(2, idx({ { 1, 1 }, { 3, 2 } })), T.int64, { 2, 2 }, { { 1, 1 }, { 6, 5 } })
    check(T.gather(a, 1, idx({ { 2, 1, 2 } })), T.int64, { 1, 3 }, { { 4, 2, 6 } })
    check(m23t():gather(2, idx({ { -1 }, { 1 } })), T.int64, { 2, 1 }, { { 3 }, { 4 } })
    check(T.tensor({ 1, 2 }):expand(2, 2):gather(2, idx({ { 2 }, { 1 } })), T.int64, { 2, 1 }, { { 2 }, { 1 } })
    raises("gather(): Expected dtype int64 for index", function() a:gather(1, T.tensor({ { 1.0 } })) end)
    raises("Index tensor must have the same number of dimensions as input tensor", function()
      a:gather(1, idx({ 1 }))
    end)
    raises("index 3 is out of bounds for dimension 1 with size 2", function() a:gather(1, idx({ { 3 } })) end)
    raises("Size does not match at dimension 2", function() a:gather(1, idx({ { 1, 1, 1, 1 } })) end)
  end)

  it("scatter writes src (or a number) at the indexed positions", function()
    local z = T.zeros(2, 3)
    check(z:scatter(2, idx({ { 1 }, { 3 } }), 5), T.float32, { 2, 3 }, { { 5, 0, 0 }, { 0, 0, 5 } })
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 } }, z:totable())
    z:scatter_(1, idx({ { 2, 1, 2 } }), T.tensor({ { 1.0, 2.0, 3.0 } }))
    assert.same({ { 0, 2, 0 }, { 1, 0, 3 } }, z:totable())
    check(T.zeros(3):scatter_add(1, idx({ 1, 1, 3 }), T.tensor({ 1.0, 2.0, 3.0 })), T.float32, { 3 }, { 3, 0, 3 })
    check(T.zeros(3, { dtype = T.int64 }):scatter(1, idx({ 1, 1 }), T.tensor({ 4, 5 }), { reduce = "add" }),
      T.int64, { 3 }, { 9, 0, 0 })
    local t = T.zeros(3, 2):t()
    t:scatter_(2, idx({ { 3 }, { 1 } }), 1)
    assert.same({ { 0, 0, 1 }, { 1, 0, 0 } }, t:totable())
  end)

  it("scatter raises for mismatched dtypes and overlapping destinations", function()
    raises("scatter(): Expected self.dtype to be equal to src.dtype", function()
      T.zeros(3):scatter(1, idx({ 1 }), T.tensor({ 1 }))
    end)
    raises("refer to a single memory location", function()
      T.zeros(1):expand(3):scatter_(1, idx({ 1 }), 1)
    end)
    raises("index 4 is out of bounds for dimension 1 with size 3", function()
      T.zeros(3):scatter(1, idx({ 4 }), 1)
    end)
  end)
end)

describe("index_add / index_copy / index_fill", function()
  it("index_add accumulates slices (duplicates add up), with alpha", function()
    check(T.zeros(3, 2):index_add(1, idx({ 1, 3, 1 }), T.ones(3, 2)), T.float32, { 3, 2 },
      { { 2, 2 }, { 0, 0 }, { 1, 1 } })
    check(T.zeros(3, 2):index_add(2, idx({ -1 }), T.tensor({ { 1.0 }, { 2.0 }, { 3.0 } }), { alpha = 2 }), T.float32,
      { 3, 2 }, { { 0, 2 }, { 0, 4 }, { 0, 6 } })
    local t = T.zeros(2, 3):t()
    t:index_add_(1, idx({ 2 }), T.ones(1, 2))
    assert.same({ { 0, 0 }, { 1, 1 }, { 0, 0 } }, t:totable())
  end)

  it("index_copy and index_fill write along a dim", function()
    check(T.zeros(2, 3, { dtype = T.int64 }):index_copy(2, idx({ 3, 1 }), T.tensor({ { 1, 2 }, { 3, 4 } })), T.int64,
      { 2, 3 }, { { 2, 0, 1 }, { 4, 0, 3 } })
    check(T.zeros(2, 3):index_fill(2, idx({ 1, 3 }), 5), T.float32, { 2, 3 }, { { 5, 0, 5 }, { 5, 0, 5 } })
    local a = T.zeros(3)
    local v0 = T._version(a)
    a:index_fill_(1, idx({ 2 }), T.tensor(1.5))
    assert.same({ 0, 1.5, 0 }, a:totable())
    assert.is_true(T._version(a) > v0)
  end)

  it("raise PyTorch's errors", function()
    raises("Number of indices (2) should be equal to source.size(dim) (3)", function()
      T.zeros(3):index_add(1, idx({ 1, 2 }), T.ones(3))
    end)
    raises("source tensor shape must match self tensor shape, excluding the specified dimension", function()
      T.zeros(3, 2):index_add(1, idx({ 1 }), T.ones(1, 3))
    end)
    raises("must have the same scalar type", function() T.zeros(3):index_copy(1, idx({ 1 }), T.tensor({ 1 })) end)
    raises("argument alpha must not be a floating point number", function()
      T.zeros(3, { dtype = T.int64 }):index_add(1, idx({ 1 }), T.tensor({ 1 }), { alpha = 0.5 })
    end)
    raises("index 4 is out of bounds for dimension 1 with size 3", function() T.zeros(3):index_fill(1, idx({ 4 }), 1) end)
    raises("Expected dtype int32 or int64 for index", function() T.zeros(3):index_fill(1, T.tensor({ 1.0 }), 1) end)
  end)
end)
