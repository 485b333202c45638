-- spec/conv_winograd_spec.lua: the Winograd F(4x4, 3x3) path of float32 3x3
-- stride-1 convolutions (src/core/lt_conv_wino.c) and the input gradient
-- through it, against the im2col path in float64.  T._conv_small and
-- T._conv_big take a 13th argument that forces a path (true: Winograd
-- where it applies, false: im2col), so small shapes reach it too.
local T = require "ltensor"
local F = T.nn.functional
require "ltensor.busted"

-- max |got - want| over max |want| (got float32, want float64)
local function rel_err(got, want)
  local scale = want:abs():max():item()
  return (got:double() - want):abs():max():item() / (scale > 0 and scale or 1)
end

local function fwd(x, w, b, p, force)
  local H, W = x:size(3) + 2 * p - 2, x:size(4) + 2 * p - 2
  return T._conv_small(x, w, b, 1, 1, p, p, 1, 1, 1, H, W, force)
end
local function bwd(go, w, p, H, W, force)
  return T._conv_big(go, w, nil, 1, 1, p, p, 1, 1, 1, H, W, force)
end

local TOL = 2e-5

describe("conv Winograd F(4,3)", function()
  T.manual_seed(7)
  local cases = {
    -- N, Cin, Cout, H, W, padding, bias
    { 1, 3, 5, 6, 6, 1, true },
    { 2, 7, 9, 9, 11, 0, false },       -- odd planes, no padding
    { 2, 7, 9, 5, 4, 2, true },         -- padding 2, a partial tile
    { 3, 17, 33, 3, 3, 1, true },       -- planes smaller than a tile
    { 1, 9, 10, 2, 2, 2, false },       -- 2x2 input, padding 2: 4x4 output
    { 2, 12, 20, 16, 13, 1, false },    -- even height, odd width
    { 1, 65, 70, 12, 12, 1, true },     -- over 64 channels, not multiples of 8
    { 1, 4, 6, 8, 8, 3, true },         -- padding 3 (forward only through Winograd)
  }
  for _, c in ipairs(cases) do
    local N, ci, co, H, W, p, bias = (table.unpack or unpack)(c)
    local name = ("%dx%d->%d %dx%d padding %d%s"):format(N, ci, co, H, W, p, bias and " bias" or "")
    it("forward matches float64: " .. name, function()
      local x = T.randn(N, ci, H, W)
      local w = T.randn(co, ci, 3, 3) * (1 / math.sqrt(ci * 9))
      local b = bias and T.randn(co) or nil
      local want = fwd(x:double(), w:double(), b and b:double(), p, false)
      local got = fwd(x, w, b, p, true)
      assert.are.same(want:size(), got:size())
      assert.is_true(rel_err(got, want) < TOL, name .. ": error " .. rel_err(got, want))
    end)
    it("input gradient matches float64: " .. name, function()
      local w = T.randn(co, ci, 3, 3) * (1 / math.sqrt(co * 9))
      local go = T.randn(N, co, H + 2 * p - 2, W + 2 * p - 2)
      local b = bias and T.randn(ci) or nil   -- (conv_transpose's bias)
      local want = T._conv_big(go:double(), w:double(), b and b:double(), 1, 1, p, p, 1, 1, 1, H, W, false)
      local got = T._conv_big(go, w, b, 1, 1, p, p, 1, 1, 1, H, W, true)
      assert.are.same(T.Size({ N, ci, H, W }), got:size())
      assert.is_true(rel_err(got, want) < TOL, name .. ": error " .. rel_err(got, want))
    end)
  end

  it("runs (the bits differ from im2col's float32 result, within the tolerance)", function()
    local x, w = T.randn(1, 8, 10, 10), T.randn(8, 8, 3, 3)
    local a, b = fwd(x, w, nil, 1, true), fwd(x, w, nil, 1, false)
    assert.is_false(T.equal(a, b))
    assert.is_true(rel_err(a, b:double()) < TOL)
  end)

  it("keeps im2col's NaN and inf placement (non-finite inputs or weights take that path)", function()
    local x, w = T.randn(1, 8, 12, 12), T.randn(8, 8, 3, 3)
    x[{ 1, 1, 1, 1 }] = math.huge
    x[{ 1, 2, 6, 6 }] = 0 / 0
    assert.tensor_equal(fwd(x, w, nil, 1, true), fwd(x, w, nil, 1, false))
    local y = fwd(x, w, nil, 1, true)
    assert.is_false(y[{ 1, 1, 4, 12 }]:isnan():item())
    local go = T.randn(1, 8, 12, 12)
    go[{ 1, 3, 2, 2 }] = -math.huge
    assert.tensor_equal(bwd(go, w, 1, 12, 12, true), bwd(go, w, 1, 12, 12, false))
    local w2 = w:clone()
    w2[{ 1, 1, 1, 1 }] = 0 / 0
    local x2 = T.randn(1, 8, 12, 12)
    assert.tensor_equal(fwd(x2, w2, nil, 1, true), fwd(x2, w2, nil, 1, false))
  end)

  it("finds a non-finite value anywhere in a large input or weight at 2 threads (the scan is split)", function()
    local before = T.get_num_threads()
    T.set_num_threads(2)
    local ok, err = pcall(function()
      for _, where in ipairs({ "x last", "x middle", "w last" }) do
        local x, w = T.randn(1, 64, 40, 40), T.randn(64, 64, 3, 3)
        if where == "x last" then x[{ 1, 64, 40, 40 }] = math.huge
        elseif where == "x middle" then x[{ 1, 40, 20, 20 }] = 0 / 0
        else w[{ 64, 64, 3, 3 }] = -math.huge end
        assert.tensor_equal(fwd(x, w, nil, 1, true), fwd(x, w, nil, 1, false))
      end
    end)
    T.set_num_threads(before)
    assert(ok, err)
  end)

  it("leaves float64, strides, dilation and groups to the other paths", function()
    local x, w = T.randn(1, 4, 9, 9, { dtype = T.float64 }), T.randn(4, 4, 3, 3, { dtype = T.float64 })
    assert.is_true(T.equal(fwd(x, w, nil, 1, true), fwd(x, w, nil, 1, false)))
    local xf, wf = x:float(), T.randn(4, 2, 3, 3)
    local g1 = T._conv_small(xf, wf, nil, 1, 1, 1, 1, 1, 1, 2, 9, 9, true)
    assert.is_true(T.equal(g1, T._conv_small(xf, wf, nil, 1, 1, 1, 1, 1, 1, 2, 9, 9, false)))
    local s2 = T._conv_small(xf, w:float(), nil, 2, 2, 1, 1, 1, 1, 1, 5, 5, true)
    assert.is_true(T.equal(s2, T._conv_small(xf, w:float(), nil, 2, 2, 1, 1, 1, 1, 1, 5, 5, false)))
  end)

  -- the public path: 64 -> 64 channels at 28x28 (49 tiles) takes Winograd
  it("F.conv2d forward and backward at a dispatched shape, non-contiguous input", function()
    local x64 = T.randn(2, 64, 28, 28, { dtype = T.float64 })
    local w64 = T.randn(64, 64, 3, 3, { dtype = T.float64 }) * (1 / 24)
    local b64 = T.randn(64, { dtype = T.float64 })
    local xt = x64:float():transpose(3, 4):contiguous():transpose(3, 4)   -- same values, strided
    assert.is_false(xt:is_contiguous())
    local x = xt:clone():requires_grad_()
    local w = w64:float():requires_grad_()
    local y = F.conv2d(x, w, b64:float(), 1, 1)
    local want = F.conv2d(x64, w64, b64, 1, 1)
    assert.is_true(rel_err(y:detach(), want) < TOL)
    local go = T.randn(2, 64, 28, 28)
    y:backward(go)
    local xr = x64:clone():requires_grad_()
    F.conv2d(xr, w64, b64, 1, 1):backward(go:double())
    assert.is_true(rel_err(x.grad, xr.grad) < TOL)
    local y2 = F.conv2d(xt, w, b64:float(), 1, 1)
    assert.is_true(T.equal(y2:detach(), y:detach()))
  end)
end)
