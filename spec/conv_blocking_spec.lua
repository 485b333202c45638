-- The convolution kernels cut their work into blocks: im2col columns of up
-- to 1 MB (a whole image when it fits, else bands of rows), gemms over
-- smaller bands inside a block, and the 2x2 max-pool rows 8 windows at a
-- time.  These cases make every cut land somewhere awkward (several column
-- blocks with a short last one, a band that ends a block, rows of fewer,
-- exactly and a few more than 8 windows) and check the results against
-- references built from plain tensor ops, in float32 and float64.
local T = require "ltensor"
local F = T.nn.functional

-- conv2d as a sum over taps of shifted, strided slices of the zero-padded
-- input (float64 throughout): no im2col, no gemm
local function conv_ref(x, w, b, stride, pad, dil, groups)
  x, w = x:double(), w:double()
  local N, H, W = x:size(1), x:size(3), x:size(4)
  local O, Cg, kh, kw = w:size(1), w:size(2), w:size(3), w:size(4)
  local xp = F.pad(x, { pad[2], pad[2], pad[1], pad[1] })
  local Ho = math.floor((H + 2 * pad[1] - dil[1] * (kh - 1) - 1) / stride[1]) + 1
  local Wo = math.floor((W + 2 * pad[2] - dil[2] * (kw - 1) - 1) / stride[2]) + 1
  local Og = math.floor(O / groups)
  local parts = {}
  for g = 0, groups - 1 do
    local og = T.zeros(N, Og, Ho, Wo, { dtype = T.float64 })
    for c = 1, Cg do
      for i = 1, kh do
        for j = 1, kw do
          local r0, c0 = (i - 1) * dil[1] + 1, (j - 1) * dil[2] + 1
          local sl = xp[{ {}, { g * Cg + c }, { r0, r0 + (Ho - 1) * stride[1], stride[1] },
            { c0, c0 + (Wo - 1) * stride[2], stride[2] } }]                       -- (N, 1, Ho, Wo)
          local wt = w[{ { g * Og + 1, (g + 1) * Og }, c, i, j }]:reshape(1, Og, 1, 1)
          og = og + sl * wt
        end
      end
    end
    parts[#parts + 1] = og
  end
  local out = T.cat(parts, 2)
  if b then out = out + b:double():reshape(1, O, 1, 1) end
  return out
end

local function near(got, want, tol, what)
  local d = (got:double() - want):abs():max():item()
  local scale = want:abs():max():item() + 1
  assert.is_true(d <= tol * scale, ("%s: max difference %.3g (scale %.3g)"):format(what, d, scale))
end

describe("convolution blocking", function()
  -- (channels, kernel, image, out channels): columns of K * W values per row,
  -- so the 1 MB column block holds a few rows; the gemm band is a few rows
  local cases = {
    { name = "several column blocks, short last one", C = 3, k = 5, H = 181, W = 150, O = 4, pad = 2 },
    { name = "bands of one row, output channels split", C = 8, k = 3, H = 61, W = 230, O = 40, pad = 1 },
    { name = "small image, whole", C = 2, k = 3, H = 9, W = 11, O = 3, pad = 1 },
  }
  for _, dt in ipairs({ T.float32, T.float64 }) do
    for _, c in ipairs(cases) do
      it(c.name .. " (" .. dt.name .. "): forward, input and weight gradients", function()
        T.manual_seed(21)
        local x = T.randn({ 2, c.C, c.H, c.W }, { dtype = dt }):requires_grad_()
        local w = T.randn({ c.O, c.C, c.k, c.k }, { dtype = dt }):requires_grad_()
        local b = T.randn({ c.O }, { dtype = dt }):requires_grad_()
        local y = F.conv2d(x, w, b, { padding = c.pad })
        local tol = dt == T.float32 and 2e-5 or 1e-12
        local want = conv_ref(x:detach(), w:detach(), b:detach(), { 1, 1 }, { c.pad, c.pad }, { 1, 1 }, 1)
        near(y, want, tol, "forward")
        -- the reference's gradients through autograd of the plain ops
        local g = T.randn(y.shape, { dtype = dt })
        ;(y * g):sum():backward()
        local xr, wr, br = x:detach():double():requires_grad_(), w:detach():double():requires_grad_(),
          b:detach():double():requires_grad_()
        ;(conv_ref(xr, wr, br, { 1, 1 }, { c.pad, c.pad }, { 1, 1 }, 1) * g:double()):sum():backward()
        near(x.grad, xr.grad, tol * 4, "input gradient")
        near(w.grad, wr.grad, tol * 40, "weight gradient")
        near(b.grad, br.grad, tol * 40, "bias gradient")
      end)
    end
  end

  it("strided, dilated, grouped and non-contiguous input, batch 1 and batch N alike", function()
    T.manual_seed(22)
    local base = T.randn(3, 6, 47, 40)
    local x = base:transpose(3, 4)                            -- (3, 6, 40, 47), strided
    local w = T.randn(9, 2, 3, 4)
    local y = F.conv2d(x, w, nil, { stride = { 2, 1 }, padding = { 1, 2 }, dilation = { 2, 3 }, groups = 3 })
    near(y, conv_ref(x, w, nil, { 2, 1 }, { 1, 2 }, { 2, 3 }, 3), 2e-5, "forward")
    for n = 1, 3 do
      local one = F.conv2d(x[{ { n } }], w, nil, { stride = { 2, 1 }, padding = { 1, 2 }, dilation = { 2, 3 }, groups = 3 })
      assert.is_true(one:equal(y[{ { n } }]), "sample " .. n .. " alone")
    end
  end)

  it("the input gradient does not depend on the batch split", function()
    -- a sample's input gradient is computed by itself: alone or in a batch,
    -- on one thread or several, the same bits
    T.manual_seed(23)
    local w = T.randn(32, 16, 3, 3)
    local g = T.randn(4, 32, 14, 14)
    local all = T._conv_big(g, w, nil, 1, 1, 1, 1, 1, 1, 1, 14, 14)
    for n = 1, 4 do
      local one = T._conv_big(g[{ { n } }], w, nil, 1, 1, 1, 1, 1, 1, 1, 14, 14)
      assert.is_true(one:equal(all[{ { n } }]), "sample " .. n)
    end
    assert.same({ 4, 16, 14, 14 }, all.shape)
  end)
end)

describe("2x2 max-pool rows of any width", function()
  -- the four taps of every window, as strided slices
  local function pool_ref(x)
    local H, W = x:size(3), x:size(4)
    local Ho, Wo = math.floor(H / 2), math.floor(W / 2)
    local function tap(di, dj)
      return x[{ {}, {}, { 1 + di, 2 * Ho - 1 + di, 2 }, { 1 + dj, 2 * Wo - 1 + dj, 2 } }]
    end
    return T.maximum(T.maximum(tap(0, 0), tap(0, 1)), T.maximum(tap(1, 0), tap(1, 1)))
  end
  for _, dt in ipairs({ T.float32, T.float64 }) do
    it("forward values and the backward from tap codes (" .. dt.name .. ")", function()
      T.manual_seed(24)
      for _, W in ipairs({ 2, 6, 14, 15, 16, 17, 18, 30, 35, 600 }) do
        local x = T.randn({ 2, 3, 5, W }, { dtype = dt })
        x = T.where(T.rand(x.shape):lt(0.3), 0.5, x)        -- ties
        local xr = x:clone():requires_grad_()
        local y = F.max_pool2d(xr, 2)                        -- autograd keeps tap codes
        assert.is_true(y:equal(pool_ref(x)), "values, width " .. W)
        local w = T.randn(y.shape, { dtype = dt })
        ;(y * w):sum():backward()
        local _, idx = F.max_pool2d_with_indices(x, 2)
        assert.is_true(xr.grad:equal(T._max_pool_bwd(w, idx, x:size(3), x:size(4))), "gradient, width " .. W)
        local none = T.no_grad(function() return F.max_pool2d(x, 2) end)
        assert.is_true(none:equal(y), "values without indices, width " .. W)
      end
    end)
  end

  it("the module and the functional form give the same gradient with and without indices", function()
    T.manual_seed(25)
    local x = T.randn(2, 4, 12, 20)
    x[1][1][1][3] = 0 / 0
    local a, b = x:clone():requires_grad_(), x:clone():requires_grad_()
    local ya = T.nn.MaxPool2d(2)(a)
    local yb, ib = F.max_pool2d(b, 2, { return_indices = true })
    assert.equal("int64", ib.dtype.name)
    local w = T.randn(ya.shape)
    ;(ya * w):sum():backward()
    ;(yb * w):sum():backward()
    assert.is_true(a.grad:equal(b.grad))
    assert.is_true(ya:isnan():equal(yb:isnan()))
  end)

  it("tap codes need the tiled geometry", function()
    local ok, err = pcall(T._max_pool2d, T.randn(1, 1, 6, 6), 3, 3, 3, 3, 0, 0, 1, 1, 2, 2, "codes")
    assert.is_false(ok)
    assert.truthy(tostring(err):find("ltensor._max_pool2d: tap codes need 2x2 windows", 1, true), tostring(err))
    local _, codes = T._max_pool2d(T.randn(1, 1, 6, 6), 2, 2, 2, 2, 0, 0, 1, 1, 3, 3, "codes")
    assert.equal("uint8", codes.dtype.name)
    ok, err = pcall(T._max_pool_bwd, T.randn(1, 1, 3, 3), codes, 6, 6)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("ltensor._max_pool_bwd: tap codes need 2x2 windows", 1, true), tostring(err))
  end)
end)
