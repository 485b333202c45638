-- BatchNorm folding (lua/ltensor/nn/fusion.lua): T.nn.utils.fuse_conv_bn_eval,
-- fuse_linear_bn_eval, fuse_modules and Module:fuse against PyTorch 1.13's
-- torch.nn.utils.fusion (spec/fixtures/fusion.lua from spec/fixtures/gen_fusion.py).
local T = require "ltensor"
local nn = T.nn
local FX = dofile("spec/fixtures/fusion.lua")

local function tens(f) return T.tensor(f.v, { dtype = T[f.dtype] }):reshape(f.shape) end
local function state(s)
  local out = {}
  for _, kv in ipairs(s) do out[kv[1]] = tens(kv[2]) end
  return out
end
local function close(got, want, tol, what)
  assert.same(want.shape, got.shape, what)
  local d = T.amax(T.abs(got:detach():double() - want:double())):item()
  assert(d <= (tol or 1e-12), (what or "") .. ": max difference " .. d)
end
local function build(c)
  local env = setmetatable({ nn = nn, T = T }, { __index = _G })
  local layer = assert(load("return " .. c.layer, "layer", "t", env))()
  local bn = assert(load("return " .. c.bn, "bn", "t", env))()
  layer:load_state_dict(state(c.layer_state))
  bn:load_state_dict(state(c.bn_state))
  return layer:eval(), bn:eval()
end

describe("nn.utils.fuse_conv_bn_eval / fuse_linear_bn_eval", function()
  for _, c in ipairs(FX) do
    it(c.name .. " matches PyTorch", function()
      local layer, bn = build(c)
      local fused
      if c.kind == "linear" then fused = nn.utils.fuse_linear_bn_eval(layer, bn)
      else fused = nn.utils.fuse_conv_bn_eval(layer, bn) end
      close(fused.weight, tens(c.w), 1e-12, "weight")
      close(fused.bias, tens(c.b), 1e-12, "bias")
      assert.is_true(nn.is_parameter(fused.weight) and nn.is_parameter(fused.bias))
      local out = T.no_grad(function() return fused(tens(c.x)) end)
      close(out, tens(c.out), 1e-10, "output")
      -- the originals are untouched, and still compute the same function
      assert.is_false(rawequal(fused, layer))
      local ref = T.no_grad(function() return bn(layer(tens(c.x))) end)
      close(ref, tens(c.out), 1e-10, "unfused output")
    end)
  end

  it("fuse_conv_bn is fuse_conv_bn_eval", function()
    assert.equal(nn.utils.fuse_conv_bn_eval, nn.utils.fuse_conv_bn)
  end)

  it("refuses modules in training mode, as PyTorch", function()
    local conv, bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
    assert.has_error(function() nn.utils.fuse_conv_bn_eval(conv, bn) end,
      "ltensor.nn.utils.fuse_conv_bn_eval: Fusion only for eval!")
    conv:eval()
    assert.has_error(function() nn.utils.fuse_conv_bn_eval(conv, bn) end,
      "ltensor.nn.utils.fuse_conv_bn_eval: Fusion only for eval!")
  end)

  it("refuses a batch norm without running statistics and wrong modules", function()
    local conv, bn = nn.Conv2d(2, 2, 1):eval(), nn.BatchNorm2d(2, { track_running_stats = false }):eval()
    assert.has_error(function() nn.utils.fuse_conv_bn_eval(conv, bn) end,
      "ltensor.nn.utils.fuse_conv_bn_eval: the batch norm keeps no running statistics (track_running_stats = false): nothing to fold")
    assert.has_error(function() nn.utils.fuse_conv_bn_eval(nn.Linear(2, 2), nn.BatchNorm2d(2)) end,
      "ltensor.nn.utils.fuse_conv_bn_eval: bad argument #1 'conv' (convolution module expected, got Linear)")
    assert.has_error(function() nn.utils.fuse_conv_bn_eval(conv, nn.ReLU()) end,
      "ltensor.nn.utils.fuse_conv_bn_eval: bad argument #2 'bn' (BatchNorm module expected, got ReLU)")
  end)
end)

local function net()
  T.manual_seed(1)
  local Net = nn.Module:extend("FuseNet")
  function Net:init()
    self.conv1 = nn.Conv2d(3, 4, 3, { bias = false })
    self.bn1 = nn.BatchNorm2d(4)
    self.relu = nn.ReLU()
    self.body = nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 2, 1), nn.BatchNorm2d(2))
  end
  function Net:forward(x) return self.body(self.relu(self.bn1(self.conv1(x)))) end
  local m = Net()
  T.no_grad(function()
    for _, nm in ipairs(m:named_modules()) do
      local b = nm[2]
      if b._classname == "BatchNorm2d" then
        b.running_mean:normal_() b.running_var:uniform_(0.5, 2) b.weight:uniform_(0.5, 1.5) b.bias:normal_()
      end
    end
  end)
  return m:eval()
end

describe("nn.utils.fuse_modules", function()
  it("folds named conv, bn [, relu] lists into a copy (Identity in the other places)", function()
    local m = net()
    local x = T.randn({ 2, 3, 6, 6 })
    local ref = T.no_grad(function() return m(x) end)
    local f = nn.utils.fuse_modules(m, { { "conv1", "bn1", "relu" }, { "body.0", "body.1" } })
    assert.equal("BatchNorm2d", m.bn1._classname)   -- the original is untouched
    assert.equal("Sequential", f.conv1._classname)
    assert.equal("Identity", f.bn1._classname)
    assert.equal("Identity", f.relu._classname)
    assert.equal("Identity", f.body[2]._classname)
    local got = T.no_grad(function() return f(x) end)
    assert(T.amax(T.abs(got - ref)):item() < 1e-5)
  end)

  it("works in place and reports unsupported lists and unknown names", function()
    local m = net()
    assert.equal(m, nn.utils.fuse_modules(m, { "conv1", "bn1" }, { inplace = true }))
    assert.equal("Identity", m.bn1._classname)
    assert.has_error(function() nn.utils.fuse_modules(m, { { "bn1", "conv1" } }) end,
      "ltensor.nn.utils.fuse_modules: cannot fuse modules bn1, conv1 (Identity,conv): supported are conv+bn, conv+bn+relu, conv+relu, linear+bn and linear+relu")
    assert.has_error(function() nn.utils.fuse_modules(m, { { "conv9", "bn1" } }) end,
      "ltensor.nn.utils.fuse_modules: module 'conv9' not found")
  end)
end)

describe("Module:fuse", function()
  it("folds every Conv followed by a BatchNorm inside Sequentials, in place", function()
    local m = net()
    local x = T.randn({ 2, 3, 6, 6 })
    local ref = T.no_grad(function() return m(x) end)
    assert.equal(m, m:fuse())
    assert.equal("BatchNorm2d", m.bn1._classname)   -- not in a Sequential: order is not data flow
    assert.equal("Identity", m.body[2]._classname)
    assert.equal("Identity", m.body[5]._classname)
    assert.is_not_nil(m.body[4].bias)
    local got = T.no_grad(function() return m(x) end)
    assert(T.amax(T.abs(got - ref)):item() < 1e-5)
  end)

  it("needs eval mode", function()
    local m = nn.Sequential(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))
    assert.has_error(function() m:fuse() end, "ltensor.nn.utils.fuse_conv_bn_eval: Fusion only for eval!")
  end)
end)

describe("the *_weights folding functions' arguments (a fuzz finding)", function()
  it("refuse a missing or mistyped tensor by name, not with a Lua runtime error", function()
    local U = T.nn.utils
    assert.has_error(function() U.fuse_conv_bn_weights(T.ones(2, 1, 1, 1), nil, nil, T.ones(2), 1.5) end,
      "ltensor.nn.utils.fuse_conv_bn_weights: bad argument #3 'bn_rm' (Tensor expected, got nil)")
    assert.has_error(function() U.fuse_conv_bn_weights(nil, nil, T.zeros(2), T.ones(2), 1e-5) end,
      "ltensor.nn.utils.fuse_conv_bn_weights: bad argument #1 'weight' (Tensor expected, got nil)")
    assert.has_error(function() U.fuse_linear_bn_weights(T.ones(2, 2), nil, T.zeros(2), T.ones(2), 1e-5, "x") end,
      "ltensor.nn.utils.fuse_linear_bn_weights: bad argument #6 'bn_w' (Tensor expected, got string)")
    assert.has_error(function() U.fuse_linear_bn_weights(T.ones(2, 2), nil, T.zeros(2), T.ones(2), nil) end,
      "ltensor.nn.utils.fuse_linear_bn_weights: bad argument #5 'bn_eps' (number expected, got nil)")
  end)
  it("fuse_modules refuses a module name that is not a string, by position", function()
    local m = T.nn.Sequential(T.nn.Conv2d(1, 2, 3), T.nn.BatchNorm2d(2))
    m:eval()
    local ok, err = pcall(T.nn.utils.fuse_modules, m, { { "1", T.uint32 } })
    assert.is_false(ok)
    assert.equal("ltensor.nn.utils.fuse_modules: modules_to_fuse: module names are strings (got ltensor.dtype at position 2)", err)
  end)
end)
