-- max_pool2d's backward: the one-pass path of 2x2/2 windows (which writes
-- every input pixel) against the general scatter, on odd sizes, ties, NaN,
-- ceil_mode and strided input.
local T = require "ltensor"
local F = T.nn.functional

local function grads(x, opts)
  local xr = x:clone():requires_grad_()
  local out = F.max_pool2d(xr, 2, opts)
  local w = T.arange(out:numel(), { dtype = x.dtype }):reshape(out.shape) + 1
  ;(out * w):sum():backward()
  -- the general path: the recorded indices scattered into zeros
  local _, idx = F.max_pool2d_with_indices(x, 2, { stride = 2, ceil_mode = opts and opts.ceil_mode })
  return xr.grad, T._max_pool_bwd(w, idx, x:size(3), x:size(4))
end

describe("max_pool2d backward of 2x2 windows", function()
  it("matches the general scatter on odd sizes (uncovered last row and column get 0)", function()
    T.manual_seed(11)
    for _, dt in ipairs({ T.float32, T.float64 }) do
      local x = T.randn(2, 3, 5, 7, { dtype = dt })
      local g, want = grads(x)
      assert.same({ 2, 3, 5, 7 }, g.shape)
      assert.is_true(g:equal(want))
      assert.equal(0, g[{ {}, {}, 5, {} }]:abs():sum():item())
      assert.equal(0, g[{ {}, {}, {}, 7 }]:abs():sum():item())
    end
  end)

  it("ties go to the first tap and NaN wins, as in the forward", function()
    local x = T.tensor({ { { { 1, 1, 0 / 0, 2 }, { 1, 1, 3, 4 } } } })
    local g = grads(x)
    assert.same({ 1, 0, 2, 0, 0, 0, 0, 0 }, g:reshape(-1):totable())
  end)

  it("ceil_mode windows past the edge take the general path", function()
    T.manual_seed(12)
    local x = T.randn(1, 2, 5, 5, { dtype = T.float64 })
    local g, want = grads(x, { ceil_mode = true })
    assert.is_true(g:equal(want))
  end)

  it("strided input and unbatched input", function()
    T.manual_seed(13)
    local base = T.randn(2, 6, 8, { dtype = T.float64 })
    local x = base:transpose(2, 3)                       -- (2, 8, 6), strided
    local xr = x:clone():requires_grad_()
    F.max_pool2d(xr, 2):sum():backward()
    local xs = x:contiguous():requires_grad_()
    F.max_pool2d(xs, 2):sum():backward()
    assert.is_true(xr.grad:equal(xs.grad))
    assert.equal(2 * 4 * 3, xr.grad:sum():item())
  end)

  it("an empty batch", function()
    local x = T.zeros(0, 2, 4, 4):requires_grad_()
    F.max_pool2d(x, 2):sum():backward()
    assert.same({ 0, 2, 4, 4 }, x.grad.shape)
  end)
  it("max_pool2d's values alone (inference) equal the indexed walk's for any window, stride, padding, dilation, NaN", function()
    -- without indices the pool runs output rows one tap at a time; with
    -- return_indices the window-by-window walk: the values must agree
    local F = T.nn.functional
    T.manual_seed(3)
    local cases = 0
    for trial = 1, 200 do
      local H, W = (trial * 7) % 13 + 1, (trial * 5) % 11 + 1
      local k, s, d = trial % 4 + 1, trial % 3 + 1, (trial % 5 == 0) and 2 or 1
      local p = math.floor(trial / 4) % (math.floor(k / 2) + 1)
      local span = (k - 1) * d + 1
      if span - 2 * p <= H and span - 2 * p <= W then
        local x = T.randn(2, 3, H, W)
        if trial % 7 == 0 then x[1][2][1][1] = 0 / 0 end
        local y = F.max_pool2d(x, k, s, p, d)
        local yi = F.max_pool2d(x, k, s, p, d, false, true)
        assert.is_true(T.equal(y:nan_to_num(-99), yi:nan_to_num(-99)), ("H %d W %d k %d s %d p %d d %d"):format(H, W, k, s, p, d))
        cases = cases + 1
      end
    end
    assert.is_true(cases > 100)
  end)
  it("max_pool2d's indices follow PyTorch's rule: first tap, first maximum, last NaN", function()
    -- torch.nn.functional.max_pool2d(x, k, s, p, d, return_indices=True) + 1
    local nan = 0 / 0
    local x = T.tensor({ { 1, 3, 3, 0, 2 }, { 3, 1, nan, 2, 2 }, { 0, 0, 5, 5, 1 }, { 2, 2, 2, 2, 2 } }):reshape(1, 1, 4, 5)
    local cases = {
      { 3, 2, 1, 1, { 2, 8, 5, 6, 8, 14 } },
      { 2, 1, 0, 1, { 2, 8, 8, 5, 6, 8, 8, 14, 16, 13, 13, 14 } },
      { 2, 2, 1, 2, { 7, 9, 9, 17, 9, 9 } },
      { 3, 1, 1, 1, { 2, 8, 8, 8, 5, 2, 8, 8, 8, 14, 6, 8, 8, 8, 14, 16, 13, 13, 13, 14 } },
    }
    for _, c in ipairs(cases) do
      local _, idx = T.nn.functional.max_pool2d(x, c[1], c[2], c[3], c[4], false, true)
      assert.same(c[5], idx:reshape({ -1 }):tolist())
    end
  end)
  it("max_pool2d's indices by the rule on rows wider than 256 outputs, -inf windows, float32 and float64", function()
    -- the indexed row walk keeps the winning tap per output in chunks of 256:
    -- every chunk boundary, window and tap against the rule written out
    local inf, nan = math.huge, 0 / 0
    for _, dt in ipairs({ T.float32, T.float64 }) do
      for _, c in ipairs({ { 3, 2, 1, 1 }, { 2, 1, 0, 2 }, { 5, 3, 2, 1 } }) do
        local k, s, p, d = c[1], c[2], c[3], c[4]
        local H, W = 5, 900
        local vals = {}
        for n = 1, H * W do
          local r = (n * 7919) % 13
          vals[n] = r == 0 and -inf or (r == 1 and n % 5 == 0) and nan or (r % 4)
        end
        local x = T.tensor(vals, { dtype = dt }):reshape(1, 1, H, W)
        local y, idx = T.nn.functional.max_pool2d(x, k, s, p, d, false, true)
        local Ho, Wo = y:size(3), y:size(4)
        assert.is_true(Wo > 256)
        local got = idx:reshape({ -1 }):tolist()
        for oh = 0, Ho - 1 do
          for ow = 0, Wo - 1 do
            local best, m = 0, -inf
            for i = 0, k - 1 do
              for j = 0, k - 1 do
                local r, q = oh * s - p + i * d, ow * s - p + j * d
                if r >= 0 and r < H and q >= 0 and q < W then
                  local at = r * W + q + 1
                  if best == 0 then best = at end
                  local v = vals[at]
                  if v > m or v ~= v then m, best = v, at end
                end
              end
            end
            assert.equal(best, got[oh * Wo + ow + 1])
          end
        end
      end
    end
  end)
end)
