-- T.Size: t:size() and t.shape print, compare and unpack like torch.Size
-- (issue 21, SPEC §12 "Sizes").
local T = require "ltensor"
local host = require "spec.host"

describe("a tensor's size", function()
  local x = T.zeros(2, 3)

  it("prints as {2, 3} in a script, not as table: 0x...", function()
    assert.equal("{2, 3}", tostring(x.shape))
    assert.equal("{2, 3}", tostring(x:size()))
    assert.equal("{}", tostring(T.tensor(1.5).shape))
    assert.equal("{0, 4}", tostring(T.zeros(0, 4):size()))
    assert.equal("shape {2, 3}!", "shape " .. x.shape .. "!")
  end)

  it("indexes 1-based and works with #, ipairs and table.unpack", function()
    local s = x:size()
    assert.equal(2, #s)
    assert.equal(2, s[1])
    assert.equal(3, s[2])
    assert.is_nil(s[3])
    local seen = {}
    for i, v in ipairs(s) do seen[i] = v end
    assert.are.same({ 2, 3 }, seen)
    assert.are.same({ 2, 3 }, { (table.unpack or unpack)(s) })
    assert.equal(6, s:numel())
    assert.equal(1, T.tensor(1).shape:numel())
    assert.equal(0, T.zeros(0, 4).shape:numel())
  end)

  it("compares by value with another size", function()
    assert.is_true(x:size() == T.ones(2, 3):size())
    assert.is_true(x.shape == T.Size(2, 3))
    assert.is_true(x.shape == T.Size({ 2, 3 }))
    assert.is_false(x:size() == T.zeros(3, 2):size())
    assert.is_false(x:size() == T.zeros(2, 3, 1):size())
    assert.is_true(T.tensor(1).shape == T.Size({}))
  end)

  it("equals a plain list of the same sizes where Lua consults either side's __eq", function()
    host.needs_mixed_eq("a size equals a plain list")
    assert.is_true(x.shape == { 2, 3 })
    assert.is_false(x.shape == { 2, 4 })
  end)

  it("is taken wherever a size is", function()
    assert.are.same({ 2, 3 }, T.ones(x.shape).shape)
    assert.are.same({ 3, 2 }, x:reshape({ 3, 2 }):view(x:size()):t().shape)
    assert.is_true(T.equal(T.zeros(x:size()), x))
    assert.are.same({ 2, 3 }, T.empty((table.unpack or unpack)(x.shape)).shape)
  end)

  it("is a fresh value each time: changing one does not change the tensor", function()
    local s = x.shape
    s[1] = 99
    assert.equal(2, x.shape[1])
  end)

  it("T.Size refuses what is not a size", function()
    assert.has_error(function() T.Size(2, -1) end,
      "ltensor.Size: bad size at position 2 (non-negative integer expected, got number)")
    assert.has_error(function() T.Size({ "a" }) end,
      "ltensor.Size: bad size at position 1 (non-negative integer expected, got string)")
    assert.has_error(function() T.Size(1.5) end,
      "ltensor.Size: bad size at position 1 (non-negative integer expected, got number)")
  end)
end)
