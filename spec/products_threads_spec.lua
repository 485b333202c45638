-- Products and threads.  Products with a single output row or column (a
-- layer at batch 1: Linear, mv, one RNN step) large enough to be split over
-- the state's threads (src/core/lt_mv_split.c): the result is each output's
-- whole dot product, whatever the thread count, and equals the float64
-- product.  Products that stay on the calling thread (mid sizes, or any
-- under T.set_num_threads(1)) run OpenBLAS in tiles (src/core/lt_gemm_tiles.c)
-- and equal the float64 product for every operand layout.
local T = require "ltensor"

local function close(a, b, tol)
  local d = (a:double() - b:double()):abs():max():item()
  assert(d <= tol, ("max difference %g > %g"):format(d, tol))
end

-- the same computation at one thread and at the state's default
local function at_threads(n, f)
  local before = T.get_num_threads()
  T.set_num_threads(n)
  local ok, r = pcall(f)
  T.set_num_threads(before)
  assert(ok, r)
  return r
end

describe("a batch-1 product split over the threads", function()
  local threads = math.max(2, T.get_num_threads())
  T.manual_seed(1)

  it("mm of one row by a wide matrix equals the float64 product", function()
    local x, W = T.randn(1, 512), T.randn(512, 1000)
    local y = at_threads(threads, function() return T.mm(x, W) end)
    assert.same({ 1, 1000 }, y.shape)
    close(y, T.mm(x:double(), W:double()), 1e-4)
    -- the same bits at one thread (each output is one dot product either way)
    assert.is_true(T.equal(y, at_threads(1, function() return T.mm(x, W) end)))
  end)

  it("mv (one output column) and a transposed, non-contiguous matrix", function()
    local A, v = T.randn(700, 400), T.randn(400)
    close(at_threads(threads, function() return T.mv(A, v) end), T.mv(A:double(), v:double()), 1e-4)
    local At = T.randn(400, 700):t()
    close(at_threads(threads, function() return T.mv(At, v) end), T.mv(At:double(), v:double()), 1e-4)
    local v2 = T.randn(800):narrow(1, 1, 400)   -- a vector view
    close(at_threads(threads, function() return T.mv(A, v2) end), T.mv(A:double(), v2:double()), 1e-4)
  end)

  it("F.linear at batch 1, with and without bias, float32 and float64", function()
    local F = T.nn.functional
    for _, dt in ipairs({ T.float32, T.float64 }) do
      local x, W, b = T.randn(1, 256, { dtype = dt }), T.randn(1024, 256, { dtype = dt }), T.randn(1024, { dtype = dt })
      local ref = T.mm(x:double(), W:double():t())
      close(at_threads(threads, function() return F.linear(x, W) end), ref, 1e-4)
      close(at_threads(threads, function() return F.linear(x, W, b) end), ref + b:double(), 1e-4)
    end
  end)

  it("one row or column between OpenBLAS's gemv threading size and the split size: the built-in gemv", function()
    -- 1568 -> 10 (a small CNN's classifier), 300 x 200 mv, transposed and
    -- strided operands, accumulating onto a bias: equal at 1 and 2 threads
    local F = T.nn.functional
    for _, dt in ipairs({ T.float32, T.float64 }) do
      local x, W, b = T.randn(1, 1568, { dtype = dt }), T.randn(10, 1568, { dtype = dt }), T.randn(10, { dtype = dt })
      local ref = T.mm(x:double(), W:double():t()) + b:double()
      local y1 = at_threads(1, function() return F.linear(x, W, b) end)
      local y2 = at_threads(threads, function() return F.linear(x, W, b) end)
      close(y1, ref, 1e-4)
      assert.is_true(T.equal(y1, y2))
      local A, v = T.randn(300, 200, { dtype = dt }), T.randn(400, { dtype = dt }):narrow(1, 1, 200)
      close(at_threads(1, function() return T.mv(A, v) end), T.mv(A:double(), v:double()), 1e-4)
      close(at_threads(threads, function() return T.mv(A:t():contiguous():t(), v) end), T.mv(A:double(), v:double()), 1e-4)
      close(at_threads(1, function() return T.mm(x, W:t()) end), T.mm(x:double(), W:double():t()), 1e-4)
    end
  end)

  it("a product too small to split and a dot product are unchanged", function()
    local x, W = T.randn(1, 16), T.randn(16, 8)
    close(at_threads(threads, function() return T.mm(x, W) end), T.mm(x:double(), W:double()), 1e-5)
    local a, b = T.randn(1, 300000), T.randn(300000, 1)
    close(at_threads(threads, function() return T.mm(a, b) end), T.mm(a:double(), b:double()), 1e-2)
  end)

  it("an LSTM at batch 1 gives the one-thread result, and its gradients too", function()
    local lstm = T.nn.LSTM(256, 256, { num_layers = 2 })
    local x = T.randn(3, 1, 256)
    local function run()
      lstm:zero_grad()
      local out, hc = lstm(x)
      ;(out:sum() + hc[1]:sum() * 0.5):backward()
      return { out, lstm.weight_hh_l0.grad:clone(), lstm.weight_ih_l1.grad:clone() }
    end
    local many = at_threads(threads, run)
    local one = at_threads(1, run)
    for i = 1, 3 do close(many[i], one[i], 1e-4) end
  end)
end)

describe("a product kept on the calling thread (OpenBLAS in tiles)", function()
  T.manual_seed(2)
  local function ref(a, b) return T.mm(a:double(), b:double()) end
  it("equals the float64 product for mid sizes, transposed operands, odd sizes, at 1 thread and at the default", function()
    for _, n in ipairs({ { 70, 130, 90 }, { 128, 128, 128 }, { 200, 64, 300 }, { 65, 257, 129 } }) do
      local M, K, N = n[1], n[2], n[3]
      for _, ta in ipairs({ false, true }) do
        for _, tb in ipairs({ false, true }) do
          local a = ta and T.randn(K, M):t() or T.randn(M, K)
          local b = tb and T.randn(N, K):t() or T.randn(K, N)
          for _, th in ipairs({ 1, math.max(2, T.get_num_threads()) }) do
            local y = at_threads(th, function() return T.mm(a, b) end)
            close(y, ref(a, b), 1e-3)
          end
        end
      end
    end
  end)
  it("accumulates onto a bias (F.linear at one thread) and works in float64", function()
    local F = T.nn.functional
    local x, W, bias = T.randn(96, 200), T.randn(150, 200), T.randn(150)
    local y = at_threads(1, function() return F.linear(x, W, bias) end)
    close(y, T.mm(x:double(), W:double():t()) + bias:double(), 1e-3)
    local xd, Wd = T.randn(90, 110, { dtype = T.float64 }), T.randn(110, 120, { dtype = T.float64 })
    local yd = at_threads(1, function() return T.mm(xd, Wd) end)
    close(yd, ref(xd, Wd), 1e-10)
  end)
end)
