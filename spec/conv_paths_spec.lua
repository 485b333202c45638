-- spec/conv_paths_spec.lua: every convolution path of src/lt_conv*.c against
-- PyTorch 1.13 (spec/fixtures/conv_paths.lua, tools/gen_conv_paths_fixtures.py):
-- products cut into tiles, strided and 1x1 convolutions, the depthwise
-- kernel, groups, the transposed weight gradient, the batch-1 splits over
-- threads (run at 1 and 2 threads, which must agree); and sizes with a zero
-- in them.
local T = require "ltensor"
local F = T.nn.functional
local H = dofile("spec/helpers.lua")
local fix = dofile("spec/fixtures/conv_paths.lua")

-- the generator's inputs: ((i*7919 + seed*104729) % 2001 - 1000) / 1000
local function val(n, seed, dtype, scale)
  local t = {}
  for i = 0, n - 1 do t[i + 1] = ((i * 7919 + seed * 104729) % 2001 - 1000) / 1000 * (scale or 1) end
  return T.tensor(t, { dtype = dtype })
end

local function check_samples(got, want, what, rtol)
  local flat = got:reshape(-1)
  local scale = 1
  for _, v in ipairs(want.val) do scale = math.max(scale, math.abs(v)) end
  for i, idx in ipairs(want.idx) do
    local v, w = flat[idx]:item(), want.val[i]
    assert.is_true(math.abs(v - w) <= rtol * scale,
      ("%s: element %d is %.10g, expected %.10g"):format(what, idx, v, w))
  end
end

local function check_dot(got, want, seed, what, rtol)
  local r = val(got:numel(), seed, T.float64)
  local d = (got:reshape(-1):double() * r):sum():item()
  assert.is_true(math.abs(d - want[1]) <= rtol * want[2],
    ("%s: sum(. * R) is %.12g, expected %.12g"):format(what, d, want[1]))
end

local function run(c)
  local dt = T[c.dtype]
  local x = val(c.N * c.ci * c.H * c.W, 1, dt):reshape({ c.N, c.ci, c.H, c.W })
  local w = (val(c.co * (c.ci / c.g) * c.k * c.k, 2, dt) * 0.1):reshape({ c.co, c.ci / c.g, c.k, c.k })
  local b = c.bias and val(c.co, 3, dt) or nil
  x:requires_grad_(true)
  w:requires_grad_(true)
  if b then b:requires_grad_(true) end
  local y = F.conv2d(x, w, b, { stride = c.s, padding = c.p, groups = c.g })
  local r = val(y:numel(), 4, dt):reshape(y.shape)
  y:backward(r)
  return y, x.grad, w.grad, b and b.grad
end

describe("convolution paths against PyTorch", function()
  for _, c in ipairs(fix) do
    it(("%s, %s: output and gradients"):format(c.name, c.dtype), function()
      local rtol = c.dtype == "float32" and 2e-5 or 1e-11
      for _, threads in ipairs { 1, 2 } do
        local before = T.get_num_threads()
        T.set_num_threads(threads)
        local ok, y, gx, gw, gb = pcall(run, c)
        T.set_num_threads(before)
        assert(ok, y)
        local tag = ("%s %s (%d threads)"):format(c.name, c.dtype, threads)
        assert.same(c.shape, y.shape)
        check_samples(y, c.out, tag .. ": output", rtol)
        check_dot(y, c.out_dot, 5, tag .. ": output", rtol)
        check_samples(gx, c.gx, tag .. ": input gradient", rtol)
        check_dot(gx, c.gx_dot, 6, tag .. ": input gradient", rtol)
        check_samples(gw, c.gw, tag .. ": weight gradient", rtol)
        check_dot(gw, c.gw_dot, 7, tag .. ": weight gradient", rtol)
        if c.gb then check_samples(gb, c.gb, tag .. ": bias gradient", rtol) end
      end
    end)
  end

  it("gives the same values at 1 and 2 threads on the batch-1 splits", function()
    local x = val(64 * 24 * 24, 1, T.float32):reshape({ 1, 64, 24, 24 })
    local w = val(64 * 64 * 9, 2, T.float32, 0.1):reshape({ 64, 64, 3, 3 })
    local before = T.get_num_threads()
    T.set_num_threads(1)
    local one = T.no_grad(function() return F.conv2d(x, w, nil, { padding = 1 }) end)
    T.set_num_threads(2)
    local two = T.no_grad(function() return F.conv2d(x, w, nil, { padding = 1 }) end)
    T.set_num_threads(before)
    assert.is_true(T.equal(one, two))
  end)

  -- the gradient `which` ("x" or "w") of each case's conv at 1 and 2 threads: the same bits
  local function same_grad_bits(cases, which)
    for _, c in ipairs(cases) do
      local x0 = val(c.N * c.ci * c.H * c.H, 1, c.dt):reshape({ c.N, c.ci, c.H, c.H })
      local w0 = val(c.co * c.ci * c.k * c.k, 2, c.dt, 0.1):reshape({ c.co, c.ci, c.k, c.k })
      local one, two = H.at_1_and_2_threads(function()
        local x, w = x0:clone(), w0:clone()
        local leaf = which == "x" and x or w
        leaf:requires_grad_(true)
        local y = F.conv2d(x, w, nil, { stride = c.s, padding = c.p })
        y:backward(val(y:numel(), 4, c.dt):reshape(y.shape))
        return leaf.grad
      end)
      assert.is_true(T.equal(one, two), ("%s: %d->%d %dx%d"):format(which, c.ci, c.co, c.H, c.H))
    end
  end

  it("gives the same weight gradient bits at 1 and 2 threads when the parts split the input channels", function()
    -- at two threads the weight gradient is cut by big (input) channels,
    -- each part over all samples; every value is summed as by one call
    same_grad_bits({
      { N = 3, ci = 64, co = 64, H = 12, k = 3, s = 1, p = 1, dt = T.float32 },   -- one image per product
      { N = 5, ci = 128, co = 64, H = 7, k = 3, s = 1, p = 1, dt = T.float32 },   -- images share products
      { N = 4, ci = 96, co = 48, H = 10, k = 3, s = 2, p = 1, dt = T.float64 },
      { N = 2, ci = 256, co = 64, H = 9, k = 1, s = 1, p = 0, dt = T.float32 },   -- 1x1: the input is the matrix
    }, "w")
  end)

  it("gives the same input gradient bits at 1 and 2 threads when few image groups are cut by big channels", function()
    -- small grids at batch 8 share products (one or a few image groups):
    -- at two threads each group's input gradient is cut by big channels
    same_grad_bits({
      { N = 8, ci = 128, co = 128, H = 4, k = 3, s = 1, p = 1, dt = T.float32 },   -- one image group
      { N = 5, ci = 96, co = 64, H = 7, k = 3, s = 2, p = 1, dt = T.float64 },
      { N = 1, ci = 256, co = 64, H = 6, k = 3, s = 1, p = 0, dt = T.float32 },   -- one image, row blocks
      { N = 8, ci = 128, co = 256, H = 7, k = 1, s = 2, p = 0, dt = T.float32 },  -- 1x1 stride 2
    }, "x")
  end)

  it("gives the same values at 1 and 2 threads when one image's im2col is shared by the parts", function()
    -- batch 1, one group, not 1x1: at two threads the im2col is built once
    -- (split by rows) and the product split by output channels
    for _, c in ipairs({
      { ci = 96, co = 80, H = 15, W = 11, k = 3, s = 2, p = 1, dt = T.float32, bias = true },
      { ci = 40, co = 48, H = 9, W = 13, k = 5, s = 1, p = 2, dt = T.float64, bias = false },
      { ci = 128, co = 256, H = 14, W = 14, k = 1, s = 2, p = 0, dt = T.float32, bias = true },
    }) do
      local x = val(c.ci * c.H * c.W, 1, c.dt):reshape({ 1, c.ci, c.H, c.W })
      local w = val(c.co * c.ci * c.k * c.k, 2, c.dt, 0.1):reshape({ c.co, c.ci, c.k, c.k })
      local b = c.bias and val(c.co, 3, c.dt) or nil
      local before = T.get_num_threads()
      local out = {}
      for _, n in ipairs({ 1, 2 }) do
        T.set_num_threads(n)
        out[n] = T.no_grad(function() return F.conv2d(x, w, b, { stride = c.s, padding = c.p }) end)
      end
      T.set_num_threads(before)
      assert.is_true(T.equal(out[1], out[2]))
      -- and the direct sum at a few outputs
      local Ho, Wo = out[1]:size(3), out[1]:size(4)
      for _, at in ipairs({ { 1, 1, 1 }, { c.co, Ho, Wo }, { 2, Ho, 1 } }) do
        local o, i, j = at[1], at[2], at[3]
        local acc = b and b[o]:item() or 0
        for ci = 1, c.ci do
          for ki = 1, c.k do
            for kj = 1, c.k do
              local yy, xx = (i - 1) * c.s - c.p + ki, (j - 1) * c.s - c.p + kj
              if yy >= 1 and yy <= c.H and xx >= 1 and xx <= c.W then
                acc = acc + x[1][ci][yy][xx]:item() * w[o][ci][ki][kj]:item()
              end
            end
          end
        end
        assert.is_true(math.abs(out[2][1][o][i][j]:item() - acc) <= 1e-4 * math.max(1, math.abs(acc)))
      end
    end
  end)
end)

describe("convolution sizes with a zero", function()
  it("a batch of 0 gives an empty output, forward and backward", function()
    for _, g in ipairs { 1, 4 } do
      local x = T.zeros(0, 4, 5, 5):requires_grad_(true)
      local w = T.ones(4, 4 / g, 3, 3):requires_grad_(true)
      local y = F.conv2d(x, w, nil, { padding = 1, groups = g })
      assert.same({ 0, 4, 5, 5 }, y.shape)
      y:sum():backward()
      assert.same({ 0, 4, 5, 5 }, x.grad.shape)
      assert.is_true(T.equal(w.grad, T.zeros(4, 4 / g, 3, 3)))
    end
  end)

  it("no input channels gives the bias, and zero gradients", function()
    local x = T.zeros(2, 0, 5, 5):requires_grad_(true)
    local w = T.zeros(3, 0, 3, 3):requires_grad_(true)
    local b = T.tensor({ 1, 2, 3 }, { dtype = T.float32 }):requires_grad_(true)
    local y = F.conv2d(x, w, b, { padding = 1 })
    assert.same({ 2, 3, 5, 5 }, y.shape)
    assert.equal(2 * 25 * 6, y:sum():item())
    y:sum():backward()
    assert.same({ 2, 0, 5, 5 }, x.grad.shape)
    assert.same({ 50, 50, 50 }, b.grad:totable())
  end)

  it("no output channels gives an empty output", function()
    local x = T.ones(2, 3, 5, 5):requires_grad_(true)
    local w = T.zeros(0, 3, 3, 3):requires_grad_(true)
    local y = F.conv2d(x, w, nil, { padding = 1 })
    assert.same({ 2, 0, 5, 5 }, y.shape)
    y:sum():backward()
    assert.is_true(T.equal(x.grad, T.zeros(2, 3, 5, 5)))
  end)

  it("a 1x1 output from a depthwise kernel as large as the input", function()
    local x = val(2 * 3 * 3 * 3, 1, T.float64):reshape({ 2, 3, 3, 3 })
    local w = val(3 * 9, 2, T.float64):reshape({ 3, 1, 3, 3 })
    local y = F.conv2d(x, w, nil, { groups = 3 })
    assert.same({ 2, 3, 1, 1 }, y.shape)
    local want = (x * w:reshape({ 1, 3, 3, 3 })):sum({ 3, 4 })
    assert.is_true(T.allclose(y:reshape({ 2, 3 }), want, 1e-12, 1e-12))
  end)
end)
