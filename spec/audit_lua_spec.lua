-- Findings of an audit (issue 22) on the Lua side, each checked against
-- PyTorch 1.13: calls that never returned, errors that named the wrong
-- function or argument (or a Lua runtime error), and results that differed.
local T = require "ltensor"

local function isnan(v) return v ~= v end
local function all_nan(t)
  for _, v in ipairs(t:flatten():totable()) do if not isnan(v) then return false end end
  return true
end
-- the message of a refused call, which must carry no "file:line:" prefix
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

describe("linalg.matrix_exp of a matrix with a huge or non-finite norm", function()
  it("returns (nan) for a float64 norm above DBL_MAX / 2 instead of looping", function()
    local r = T.linalg.matrix_exp(T.tensor({ { 1e308, 0 }, { 0, 1 } }, { dtype = T.float64 }))
    assert.is_true(all_nan(r))   -- torch.linalg.matrix_exp: all nan
    -- exp of all-equal entries is +inf everywhere; PyTorch's own scaling
    -- overflows into nan from ~1e20 on (inf up to 1e10): no finite value either way
    r = T.linalg.matrix_exp(T.tensor({ { 1e300, 1e300 }, { 1e300, 1e300 } }, { dtype = T.float64 }))
    for _, v in ipairs(r:flatten():totable()) do assert.is_true(v ~= v or v == math.huge) end
  end)
  it("gives nan, not the identity, for a float32 norm above 2^127", function()
    for _, v in ipairs({ 2e38, 3e38, 1e38 }) do
      local r = T.linalg.matrix_exp(T.tensor({ { v, 0 }, { 0, 1 } }, { dtype = T.float32 }))
      assert.is_true(all_nan(r), tostring(v))
    end
  end)
  it("propagates inf and nan inputs as nan", function()
    for _, dt in ipairs({ T.float32, T.float64 }) do
      assert.is_true(all_nan(T.linalg.matrix_exp(T.tensor({ { 1 / 0, 0 }, { 0, 1 } }, { dtype = dt }))))
      assert.is_true(all_nan(T.linalg.matrix_exp(T.tensor({ { 0 / 0, 0 }, { 0, 1 } }, { dtype = dt }))))
    end
  end)
  it("still matches PyTorch where the result overflows only partly", function()
    local r = T.linalg.matrix_exp(T.tensor({ { 1000, 0 }, { 0, 1 } }, { dtype = T.float64 })):totable()
    assert.are.equal(math.huge, r[1][1])
    assert.are.equal(0, r[1][2])
    assert.is_true(math.abs(r[2][2] - 2.718281828458697) < 1e-12)
    r = T.linalg.matrix_exp(T.tensor({ { 100, 0 }, { 0, 1 } }, { dtype = T.float64 })):totable()
    assert.is_true(math.abs(r[1][1] / 2.6881171418161316e+43 - 1) < 1e-12)
  end)
end)

describe("split and chunk into more pieces than a table holds", function()
  local big = T.zeros(0, math.floor(2 ^ 53))
  it("split refuses, as unbind does", function()
    assert.are.equal("ltensor.split: too many pieces (9007199254740992) to return in a table",
      err_of(T.split, big, 1, -1))
    assert.are.equal("ltensor.unbind: too many slices (9007199254740992) to return in a table",
      err_of(T.unbind, big, -1))
  end)
  it("chunk refuses", function()
    assert.are.equal("ltensor.chunk: too many pieces (9007199254740992) to return in a table",
      err_of(T.chunk, big, math.floor(2 ^ 53), -1))
    assert.are.equal(3, #T.chunk(big, 3, -1))
  end)
end)
