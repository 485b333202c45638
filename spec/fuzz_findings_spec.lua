-- Crashes found by the structure-aware fuzzer (tools/fuzz_api.lua with
-- tools/fuzz_gen.lua, issue 22) under ASan+UBSan, each now a clean result
-- or a named error.  The fuzz log line of each is quoted.
local T = require "ltensor"
local H = require "spec.helpers"
local F = T.nn.functional

describe("fuzz findings", function()
  it("linspace with 0 steps and an integral dtype (heap overflow)", function()
    -- "#34873 T.linspace arg:#1 num=-2147483648; arg:#3 num=0; arg:#4 [dtype]dtype=int32"
    for _, d in ipairs({ T.int32, T.int8, T.uint8, T.int64, T.int16 }) do
      local t = T.linspace(-2147483648, 0, 0, { dtype = d })
      assert.same({ 0 }, t.shape)
      assert.equal(d, t.dtype)
    end
    assert.same({ 0 }, T.logspace(0, 1, 0, { dtype = T.int32 }).shape)
    assert.same({ 1, 2, 3 }, T.linspace(1, 3, 3, { dtype = T.int32 }):totable())
  end)

  it("_ag_attach with ninputs and no inputs table (segfault)", function()
    -- "#139013 T._ag_attach arg:#1 -[inputs]; grad-inputs"
    H.raises("ltensor.autograd.Function: spec.inputs must be a table of 2 inputs (got nil)",
      T._ag_attach, { ninputs = 2 }, T.ones(2))
    H.raises("ltensor.autograd.Function: spec.inputs must be a table of 1 inputs (got number)",
      T._ag_attach, { ninputs = 1, inputs = 5 }, T.ones(2))
    -- a Function built the documented way still works
    local Sq = T.autograd.Function {
      forward = function(ctx, x) ctx:save_for_backward(x) return x * x end,
      backward = function(ctx, g) return g * 2 * ctx.saved_tensors[1] end }
    local x = T.tensor({ 1.5, 2.5 }, { requires_grad = true })
    Sq(x):sum():backward()
    assert.same({ 3, 5 }, x.grad:totable())
  end)

  it("conv2d backward with a padding taller than the im2col block (heap overflow)", function()
    -- "#135360 T.nn.functional.conv2d arg:#4 [padding]num=100; grad-inputs -> backward"
    -- every input pixel meets every tap once when padding >= kernel - 1:
    -- the weight gradient of sum(y) is each input channel's sum
    for _, dt in ipairs({ T.float64, T.float32 }) do
      for _, p in ipairs({ 50, 100, 300 }) do
        T.manual_seed(p)
        local x = T.randn(1, 3, 8, 8, { dtype = dt }):requires_grad_()
        local w = T.randn(16, 3, 3, 3, { dtype = dt }):requires_grad_()
        local y = F.conv2d(x, w, nil, { padding = p })
        assert.same({ 1, 16, 6 + 2 * p, 6 + 2 * p }, y.shape)
        y:sum():backward()
        local want = x:detach():sum({ 1, 3, 4 })   -- per channel
        for c = 1, 3 do
          local g = w.grad:select(2, c)
          assert.is_true(T.allclose(g, T.full_like(g, want[c]:item()), 1e-4, 1e-3), "channel " .. c)
        end
        for c = 1, 3 do   -- and the input's: each channel's taps, summed
          local g = x.grad:select(2, c)
          assert.is_true(T.allclose(g, T.full_like(g, w:detach():select(2, c):sum():item()), 1e-4, 1e-3))
        end
      end
    end
  end)

  it("atan2 and lerp backward with a boolean scalar operand (a raw Lua error)", function()
    -- "#161259 T.atan2 arg:#2=nil; arg:#2 nil->true; ... grad-inputs backward"
    local x = T.ones(2):requires_grad_()
    T.atan2(x, true):sum():backward()                 -- d/dx atan2(x, 1) = 1 / (x^2 + 1)
    assert.is_true(T.allclose(x.grad, T.full({ 2 }, 0.5)))
    x.grad = nil
    T.atan2(false, x):sum():backward()                -- d/dx atan2(0, x) = 0
    assert.is_true(T.equal(x.grad, T.zeros(2)))
    x.grad = nil
    T.lerp(x, T.zeros(2), true):sum():backward()     -- weight 1: the end only
    assert.is_true(T.equal(x.grad, T.zeros(2)))
  end)
  it("autograd.Function's spec counts are bounded (INT_MAX overflowed the loop counter)", function()
    -- "#278439 T._ag_attach arg:swap(2,2); arg:#1 [ninputs]num=2147483647" (seed 201)
    local x = T.ones(2):requires_grad_()
    local function attach(spec) return pcall(T._ag_attach, spec, x * 1) end
    local ok, err = attach({ inputs = { x }, ninputs = 2147483647 })
    assert.is_false(ok)
    assert.equal("ltensor.autograd.Function: spec.ninputs must be an integer from 0 to 1000000 (got 2147483647)", err)
    ok, err = attach({ inputs = { x }, ninputs = 1.5 })
    assert.equal("ltensor.autograd.Function: spec.ninputs must be an integer from 0 to 1000000 (got 1.5)", err)
    ok, err = attach({ inputs = { x }, saved = { n = -1 } })
    assert.equal("ltensor.autograd.Function: spec.saved.n must be an integer from 0 to 1000000 (got -1)", err)
    -- "#440477 T._ag_attach ... arg:#1 [fn_nout]num=inf ... -> backward" (seed 501: backward never returned)
    ok, err = attach({ inputs = { x }, fn_nout = math.huge })
    assert.equal("ltensor.autograd.Function: spec.fn_nout must be an integer from 0 to 1000000 (got inf)", err)
    -- "#294118 T._ag_attach ... arg:#1 [saved][1]freed" (seed 602: a NULL storage read)
    local f = T.ones(2)
    f:free()
    ok, err = attach({ inputs = { x }, saved = { f, n = 1 } })
    assert.equal("ltensor.autograd.Function: spec.saved[1] was freed (with :free() or a <close> variable)", err)
    ok, err = attach({ inputs = { x }, fn_nout = "1" })
    assert.equal("ltensor.autograd.Function: spec.fn_nout must be an integer from 0 to 1000000 (got string)", err)
  end)
  it("max pooling with no windows, and tap indices far out of range, in the 2x2 walk", function()
    -- "#141381 T._max_pool2d arg:#11 num=0; grad-inputs -> backward" (seed 202: SIGFPE, Wo = 0)
    local x = T.randn(1, 1, 4, 4)
    local y, codes = T._max_pool2d(x, 2, 2, 2, 2, 0, 0, 1, 1, 2, 0, "codes")
    assert.same({ 1, 1, 2, 0 }, y.shape)
    local g = T._max_pool_bwd(T.ones(1, 1, 2, 0), codes, 4, 4, true)
    assert.is_true(T.equal(g, T.zeros(1, 1, 4, 4)))
    -- "#415354 T._max_pool_bwd arg:#2 special=-9223372036854775808" (seed 201: signed overflow)
    local _, idx = T._max_pool2d(x, 2, 2, 2, 2, 0, 0, 1, 1, 2, 2)
    idx[1][1][1][1] = math.mininteger or -2 ^ 63   -- (Lua 5.1: a float, exactly INT64_MIN)
    g = T._max_pool_bwd(T.ones(1, 1, 2, 2), idx, 4, 4, true)
    assert.equal(3, g:sum():item())   -- the out-of-range index selects no tap
  end)
  it("a freed tensor as any operand is refused by name, never read", function()
    -- "#86226 T.scatter_add arg:#4 freed" (seed 301: a null storage read)
    local function freed(...) local t = T.ones(...) t:free() return t end
    local mask = T.tensor({ true, false, true })
    local cases = {
      { "scatter_add: bad argument #4", function() return T.scatter_add(T.zeros(3), 1, T.tensor({ 1, 2, 3 }), freed(3)) end },
      { "scatter: bad argument #4", function() return T.scatter(T.zeros(3), 1, T.tensor({ 1, 2, 3 }), freed(3)) end },
      { "scatter_add_: bad argument #4", function() return T.scatter_add_(T.zeros(3), 1, T.tensor({ 1 }), freed(1)) end },
      { "setindex: value tensor was freed", function() local x = T.zeros(3) x[1] = freed(1) end },
      { "where: bad argument #2", function() return T.where(mask, freed(3), 0) end },
      { "clamp: bad argument #3", function() return T.clamp(T.zeros(3), nil, freed(3)) end },
      { "index_put: value tensor was freed", function() return T.index_put(T.zeros(3), { T.tensor({ 1 }) }, freed(1)) end },
      { "index_add: bad argument #4", function() return T.index_add(T.zeros(3), 1, T.tensor({ 1 }), freed(1)) end },
      { "cat: tensor 2 in the list was freed", function() return T.cat({ T.zeros(3), freed(3) }) end },
      { "lerp: bad argument #3", function() return T.lerp(T.zeros(3), T.ones(3), freed(3)) end },
      { "gather: bad argument #1", function() return T.gather(freed(3), 1, T.tensor({ 1 })) end },
      -- a metamethod's error names the op ("add"), not "__add"
      { "add: bad argument #2", function() return T.zeros(3) + freed(3) end },
      { "neg: bad argument #1", function() return -freed(3) end },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[2])
      assert.is_false(ok, c[1])
      assert.is_truthy(tostring(err):find("ltensor." .. c[1], 1, true), tostring(err))
      assert.is_truthy(tostring(err):find("freed", 1, true), tostring(err))
    end
  end)
  it("scatter with a 0-dim index checks it against src as shape {1} (read past an empty src)", function()
    -- "#163446 T.scatter_add arg:#3 drop-dim; arg:#4 zero-size" (seed 901: ASan heap-buffer-overflow)
    local ok, err = pcall(T.scatter_add, T.zeros(3), 1, T.tensor(1), T.zeros(0))
    assert.is_false(ok)
    assert.equal("ltensor.scatter_add: Expected index [] to be smaller than self [3] apart from dimension 1 and to be smaller size than src [0]", err)
    assert.same({ 0, 1, 0 }, T.scatter_add(T.zeros(3), 1, T.tensor(2), T.ones(1)):tolist())
  end)
end)
