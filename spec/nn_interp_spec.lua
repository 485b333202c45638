-- F.interpolate's 5-D modes and nearest-exact beyond the PyTorch values of
-- conv_spec.lua: finite-difference gradients, double backward, strided
-- inputs, the Upsample module, and infinities kept (no 0 * inf from an axis
-- the 1-D and 3-D paths add).
local T = require "ltensor"
local F = T.nn.functional

local function gradcheck(fn, x)
  assert.is_true(T.autograd.gradcheck(fn, { x }))
end

describe("interpolate: trilinear, nearest-exact and 5-D", function()
  it("trilinear gradients match finite differences (both align_corners, size and scale)", function()
    T.manual_seed(3)
    local x = T.randn(1, 2, 2, 3, 3, { dtype = T.float64 }):requires_grad_()
    gradcheck(function(t) return F.interpolate(t, { size = { 3, 2, 5 }, mode = "trilinear" }) end, x)
    gradcheck(function(t) return F.interpolate(t, { scale_factor = 1.5, mode = "trilinear", align_corners = true }) end, x)
  end)

  it("nearest-exact gradients on 3-D, 4-D and 5-D input", function()
    T.manual_seed(4)
    for _, shape in ipairs({ { 2, 1, 5 }, { 1, 2, 3, 4 }, { 1, 1, 2, 3, 2 } }) do
      local x = T.randn(shape, { dtype = T.float64 }):requires_grad_()
      gradcheck(function(t) return F.interpolate(t, { scale_factor = 1.7, mode = "nearest-exact" }) end, x)
    end
  end)

  it("double backward through trilinear (the input gradient is linear in the output gradient)", function()
    T.manual_seed(5)
    local x = T.randn(1, 1, 2, 2, 2, { dtype = T.float64 }):requires_grad_()
    local w = T.randn(1, 1, 4, 4, 4, { dtype = T.float64 }):requires_grad_()
    local v = T.randn(1, 1, 2, 2, 2, { dtype = T.float64 })
    local y = (F.interpolate(x, { scale_factor = 2, mode = "trilinear" }) * w):sum()
    local g = T.autograd.grad({ y }, { x }, { create_graph = true })[1]
    -- g = interp^T(w), so d<g, v>/dw = interp(v)
    local gw = T.autograd.grad({ (g * v):sum() }, { w })[1]
    local want = F.interpolate(v, { scale_factor = 2, mode = "trilinear" })
    assert.is_true((gw - want):abs():max():item() < 1e-12)
  end)

  it("takes strided and expanded input as its contiguous copy", function()
    T.manual_seed(6)
    local base = T.randn(2, 3, 4, 5, 6)
    local x = base:transpose(3, 5)                       -- (2, 3, 6, 5, 4), strided
    local want = F.interpolate(x:contiguous(), { size = { 3, 4, 5 }, mode = "trilinear" })
    assert.is_true(F.interpolate(x, { size = { 3, 4, 5 }, mode = "trilinear" }):equal(want))
    local e = T.randn(1, 1, 3):expand(2, 4, 3)
    assert.is_true(F.interpolate(e, { size = 5, mode = "nearest-exact" })
      :equal(F.interpolate(e:contiguous(), { size = 5, mode = "nearest-exact" })))
  end)

  it("an empty batch gives an empty result of the output size", function()
    local y = F.interpolate(T.zeros(0, 2, 2, 3, 4), { scale_factor = 2, mode = "nearest-exact" })
    assert.same({ 0, 2, 4, 6, 8 }, y.shape)
    assert.same({ 0, 3, 2, 2, 2 }, F.interpolate(T.zeros(0, 3, 1, 1, 1), { size = 2, mode = "trilinear" }).shape)
  end)

  it("nearest modes keep infinities (a gather, no arithmetic)", function()
    local x = T.tensor({ { { 1, math.huge, -math.huge } } })
    assert.same({ 1, 1, math.huge, math.huge, -math.huge, -math.huge },
      F.interpolate(x, { scale_factor = 2, mode = "nearest-exact" }):reshape(-1):totable())
    local x5 = x:reshape(1, 1, 1, 1, 3)
    assert.same({ 1, 1, math.huge, math.huge, -math.huge, -math.huge },
      F.interpolate(x5, { size = { 1, 1, 6 } }):reshape(-1):totable())
  end)

  it("nn.Upsample runs trilinear and nearest-exact", function()
    local x = T.arange(8, { dtype = T.float32 }):reshape(1, 1, 2, 2, 2)
    local up = T.nn.Upsample({ scale_factor = 2, mode = "trilinear", align_corners = true })
    local y = up(x)
    assert.same({ 1, 1, 4, 4, 4 }, y.shape)
    assert.equal(0, y[{ 1, 1, 1, 1, 1 }]:item())
    assert.equal(7, y[{ 1, 1, 4, 4, 4 }]:item())
    local ne = T.nn.Upsample({ size = 3, mode = "nearest-exact" })
    assert.same({ 0, 2, 4 }, ne(T.arange(5, { dtype = T.float32 }):reshape(1, 1, 5)):reshape(-1):totable())
  end)
end)
