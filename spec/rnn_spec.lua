-- Recurrent layers (T.nn.RNN/LSTM/GRU and cells) against PyTorch 1.13:
-- outputs, final states and gradients for the weights PyTorch had
-- (spec/fixtures/nnmod.lua from tools/gen_nnmod_fixtures.py), through the
-- fused C step loop and through the reference path of tensor ops.
local T = require "ltensor"
local nn = T.nn
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/nnmod.lua")

local function tens(f)
  if f == nil then return nil end
  local dt = T[f.dtype]
  local t = T.tensor(f.data, { dtype = dt })
  return t:reshape(f.shape)
end
local function close(got, want, tol, what)
  tol = tol or 1e-9
  assert.same(want.shape, got.shape, what)
  local w = tens(want)
  local d = T.amax(T.abs(got:detach() - w)):item()
  assert(d <= tol, (what or "") .. ": max difference " .. d)
end
-- Lua options from the fixture's PyTorch keyword arguments
local function lua_opts(o)
  local r = { dtype = T.float64 }
  for k, v in pairs(o) do r[k] = v end
  return r
end

-- runs a case with the fused path on or off
local function run_case(c, fused)
  local saved = T._rnn_forward
  if not fused then T._rnn_forward = nil end
  local ok, err = pcall(function()
    local m = nn[c.cls](c.input_size, c.hidden_size, lua_opts(c.opts))
    m:load_state_dict(c.params_t)
    local x = tens(c.x):requires_grad_()
    local h0, c0, out, h
    if c.h0 then
      h0 = tens(c.h0):requires_grad_()
      if c.cls == "LSTM" then
        c0 = tens(c.c0):requires_grad_()
        out, h = m(x, { h0, c0 })
      else
        out, h = m(x, h0)
      end
    else
      out, h = m(x)
    end
    close(out, c.out, 1e-9, c.name .. " output")
    local loss = T.sum(out * tens(c.g_out))
    if c.cls == "LSTM" then
      close(h[1], c.h_n, 1e-9, c.name .. " h_n")
      close(h[2], c.c_n, 1e-9, c.name .. " c_n")
      loss = loss + T.sum(h[1] * tens(c.g_h)) + T.sum(h[2] * tens(c.g_c))
    else
      close(h, c.h_n, 1e-9, c.name .. " h_n")
      loss = loss + T.sum(h * tens(c.g_h))
    end
    loss:backward()
    close(x.grad, c.dx, 1e-9, c.name .. " dx")
    if h0 then close(h0.grad, c.dh0, 1e-9, c.name .. " dh0") end
    if c0 then close(c0.grad, c.dc0, 1e-9, c.name .. " dc0") end
    for _, np in ipairs(m:named_parameters()) do
      close(np[2].grad, c.grads[np[1]], 1e-9, c.name .. " grad " .. np[1])
    end
  end)
  T._rnn_forward = saved
  if not ok then error(err, 0) end
end

local function prepare(c)
  c.params_t = {}
  for k, v in pairs(c.params) do c.params_t[k] = tens(v) end
end

describe("nn.RNN / LSTM / GRU", function()
  for _, c in ipairs(FX.rnn) do
    prepare(c)
    it(c.name .. " matches PyTorch (fused C loop)", function() run_case(c, true) end)
    it(c.name .. " matches PyTorch (tensor-op path)", function() run_case(c, false) end)
  end

  it("has PyTorch's parameter names, order, repr and init bound", function()
    for _, c in ipairs(FX.rnn) do
      local m = nn[c.cls](c.input_size, c.hidden_size, lua_opts(c.opts))
      local names = {}
      for i, np in ipairs(m:named_parameters()) do
        names[i] = np[1]
        assert(T.amax(T.abs(np[2])):item() <= 1 / math.sqrt(c.hidden_size), np[1])
      end
      assert.same(c.param_names, names)
      assert.equal(c.repr, tostring(m))
    end
  end)

  it("accepts num_layers positionally and float32 input", function()
    T.manual_seed(1)
    local m = nn.GRU(3, 4, 2)
    assert.equal(2, m.num_layers)
    local out, h = m(T.randn({ 5, 2, 3 }))
    H.check(out, T.float32, { 5, 2, 4 })
    H.check(h, T.float32, { 2, 2, 4 })
  end)

  it("float32 fused path agrees with the tensor-op path", function()
    T.manual_seed(2)
    local m = nn.LSTM(5, 6, { num_layers = 2, bidirectional = true })
    local x = T.randn({ 7, 3, 5 }):requires_grad_()
    local out, hc = m(x)
    T.sum(out * out):backward()
    local g1 = x.grad:clone()
    local w1 = m.weight_hh_l1_reverse.grad:clone()
    local saved = T._rnn_forward
    T._rnn_forward = nil
    m:zero_grad(true)
    x.grad = nil
    local out2, hc2 = m(x)
    T.sum(out2 * out2):backward()
    T._rnn_forward = saved
    assert(T.amax(T.abs(out - out2)):item() < 1e-5)
    assert(T.amax(T.abs(hc[2] - hc2[2])):item() < 1e-5)
    assert(T.amax(T.abs(x.grad - g1)):item() < 1e-4)
    assert(T.amax(T.abs(m.weight_hh_l1_reverse.grad - w1)):item() < 1e-4)
  end)

  it("passes gradcheck in float64 (fused path, all inputs)", function()
    T.manual_seed(3)
    for _, cls in ipairs({ "RNN", "LSTM", "GRU" }) do
      local m = nn[cls](2, 3, { dtype = T.float64, bidirectional = true })
      local x = T.randn({ 3, 2, 2 }, { dtype = T.float64 }):requires_grad_()
      local h0 = T.randn({ 2, 2, 3 }, { dtype = T.float64 }):requires_grad_()
      local params = m:parameters()
      local inputs = { x, h0 }
      for _, p in ipairs(params) do inputs[#inputs + 1] = p end
      assert.is_true(T.autograd.gradcheck(function(xx, hh)
        local out, h
        if cls == "LSTM" then out, h = m(xx, { hh, hh * 0.5 }) h = h[2] else out, h = m(xx, hh) end
        return out, h
      end, inputs))
    end
  end)

  it("supports double backward (create_graph) through the fused layer", function()
    local function run(fused)
      local saved = T._rnn_forward
      if not fused then T._rnn_forward = nil end
      T.manual_seed(6)
      local m = nn.LSTM(2, 3, { dtype = T.float64 })
      local x = T.randn({ 3, 2, 2 }, { dtype = T.float64 }):requires_grad_()
      local out = m(x)
      local g = T.autograd.grad({ T.sum(out * out) }, { m.weight_hh_l0, x }, { create_graph = true })
      T.sum(g[1] * g[1] + 0 * T.sum(g[2])):backward()
      T._rnn_forward = saved
      return m.weight_ih_l0.grad, x.grad
    end
    local a1, a2 = run(true)
    local b1, b2 = run(false)
    assert(T.amax(T.abs(a1 - b1)):item() < 1e-12)
    assert(T.amax(T.abs(a2 - b2)):item() < 1e-12)
  end)

  it("inference (no graph: a two-step workspace) gives the same outputs and states", function()
    for _, cls in ipairs({ "LSTM", "GRU", "RNN" }) do
      T.manual_seed(1)
      local m = nn[cls](3, 4, { num_layers = 2, bidirectional = true })
      for _, len in ipairs({ 1, 2, 5 }) do
        local x = T.randn({ len, 2, 3 })
        local a, ha = m(x)
        local b, hb = T.no_grad(function() return m(x) end)
        assert.is_true(T.equal(a, b))
        assert.is_true(a.requires_grad)
        assert.is_false(b.requires_grad)
        assert.is_nil(b.grad_fn)
        if cls == "LSTM" then
          assert.is_true(T.equal(ha[1], hb[1]) and T.equal(ha[2], hb[2]))
        else
          assert.is_true(T.equal(ha, hb))
        end
      end
    end
  end)

  it("generates a token at a time without a graph: the states carry over as in one sequence", function()
    -- batch 1, one step per call, float32 (a language model's generation loop)
    for _, cls in ipairs({ "LSTM", "GRU" }) do
      T.manual_seed(2)
      local m = nn[cls](6, 5, { num_layers = 2 })
      local x = T.randn({ 4, 1, 6 })
      local whole, hw = m(x)
      local h
      T.no_grad(function()
        for t = 1, 4 do
          local y
          y, h = m(x:narrow(1, t, 1), h)
          assert.is_true(T.allclose(y[1], whole[t], 1e-6, 1e-6))
        end
      end)
      local last = cls == "LSTM" and h[1] or h
      assert.is_true(T.allclose(last, cls == "LSTM" and hw[1] or hw, 1e-6, 1e-6))
    end
  end)

  it("gives the same outputs and gradients with the batch cut over threads as on one thread", function()
    -- 20 steps x 16 rows x hidden 64 is past the split threshold (run_bands
    -- in src/binding/l_rnn.c): with 2 threads each band of rows runs the sequence on
    -- its own thread; forward, reverse direction and backward agree to
    -- rounding (OpenBLAS may order a row's sums differently for another
    -- number of rows, so bit equality is not promised, as in PyTorch)
    local nt = T.get_num_threads()
    for _, cls in ipairs({ "LSTM", "GRU", "RNN" }) do
      for _, dt in ipairs({ T.float32, T.float64 }) do
        T.manual_seed(3)
        local m = nn[cls](8, 64, { bidirectional = true, dtype = dt })
        local x = T.randn({ 20, 17, 8 }, { dtype = dt, requires_grad = true })   -- 17: bands of unequal height
        local function run(threads)
          T.set_num_threads(threads)
          for _, p in ipairs(m:parameters()) do p.grad = nil end
          x.grad = nil
          local y = m(x)
          local loss = (y * y):sum()
          loss:backward()
          local grads = { x.grad:clone() }
          for _, p in ipairs(m:parameters()) do grads[#grads + 1] = p.grad:clone() end
          return y:detach(), grads
        end
        local ok, err = pcall(function()
          local y1, g1 = run(1)
          local y2, g2 = run(2)
          local tol = dt == T.float64 and { rtol = 1e-12, atol = 1e-12 } or { rtol = 1e-5, atol = 1e-6 }
          assert.is_true(T.allclose(y1, y2, tol), cls .. " output")
          for i = 1, #g1 do assert.is_true(T.allclose(g1[i], g2[i], tol), cls .. " gradient " .. i) end
        end)
        T.set_num_threads(nt)
        assert(ok, err)
      end
    end
  end)

  it("dropout between layers only in training", function()
    T.manual_seed(4)
    local m = nn.LSTM(3, 4, { num_layers = 2, dropout = 0.5 })
    local x = T.randn({ 4, 2, 3 })
    m:eval()
    local a = m(x)
    local b = m(x)
    assert.is_true(T.equal(a, b))
    m:train()
    local c = m(x)
    assert.is_false(T.equal(a, c))
  end)

  it("handles a zero-length sequence", function()
    local m = nn.GRU(3, 4)
    local h0 = T.randn({ 1, 2, 4 })
    local out, h = m(T.zeros({ 0, 2, 3 }), h0)
    H.check(out, T.float32, { 0, 2, 4 })
    assert.is_true(T.equal(h, h0))
  end)

  it("handles an empty batch, input_size 0 and a non-contiguous h0", function()
    for _, cls in ipairs({ "RNN", "LSTM", "GRU" }) do
      local m = nn[cls](3, 1, { bidirectional = true, num_layers = 2 })
      local x = T.randn({ 4, 0, 3 }):requires_grad_()
      local out, h = m(x)
      H.check(out, T.float32, { 4, 0, 2 })
      H.check(cls == "LSTM" and h[1] or h, T.float32, { 4, 0, 1 })
      T.sum(out):backward()
      H.check(x.grad, T.float32, { 4, 0, 3 })
      local x2 = T.randn({ 3, 2, 3 })
      local h0 = T.randn({ 2, 4, 1 }):transpose(1, 2)
      local a = cls == "LSTM" and m(x2, { h0, h0 }) or m(x2, h0)
      local hc = h0:contiguous()
      local b = cls == "LSTM" and m(x2, { hc, hc }) or m(x2, hc)
      assert.is_true(T.equal(a, b))
    end
    H.check(nn.GRU(0, 2)(T.zeros({ 3, 2, 0 })), T.float32, { 3, 2, 2 })
    H.check(nn.LSTMCell(3, 2)(T.randn({ 0, 3 })), T.float32, { 0, 2 })
  end)

  it("accepts a non-contiguous (transposed) input", function()
    T.manual_seed(5)
    local m = nn.RNN(3, 4)
    local x = T.randn({ 2, 5, 3 })
    local a = m(x:transpose(1, 2))
    local b = m(x:transpose(1, 2):contiguous())
    assert.is_true(T.allclose(a, b))
  end)

  it("raises PyTorch's errors", function()
    local m = nn.LSTM(3, 4)
    H.raises("ltensor.nn.LSTM: input.size(-1) must be equal to input_size. Expected 3, got 5",
      function() m(T.randn({ 2, 3, 5 })) end)
    H.raises("LSTM: Expected input to be 2-D or 3-D but received 1-D tensor", function() m(T.randn({ 5 })) end)
    H.raises("Expected hidden[0] size {1, 3, 4}, got {1, 2, 4}",
      function() m(T.randn({ 2, 3, 3 }), { T.randn({ 1, 2, 4 }), T.randn({ 1, 3, 4 }) }) end)
    H.raises("For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors",
      function() m(T.randn({ 2, 2, 3 }), { T.randn({ 1, 4 }), T.randn({ 1, 4 }) }) end)
    H.raises("For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors",
      function() m(T.randn({ 2, 3 }), { T.randn({ 1, 1, 4 }), T.randn({ 1, 1, 4 }) }) end)
    local g = nn.GRU(3, 4)
    H.raises("Expected hidden size {1, 3, 4}, got {1, 2, 4}", function() g(T.randn({ 2, 3, 3 }), T.randn({ 1, 2, 4 })) end)
    H.raises("For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
      function() g(T.randn({ 2, 3 }), T.randn({ 1, 1, 4 })) end)
    H.raises("For batched 3-D input, hx should also be 3-D but got 2-D tensor",
      function() g(T.randn({ 2, 2, 3 }), T.randn({ 1, 4 })) end)
    H.raises("ltensor.nn.RNN: Unknown nonlinearity 'x'. Select from 'tanh' or 'relu'.",
      function() nn.RNN(3, 4, { nonlinearity = "x" }) end)
    H.raises("dropout should be a number in range [0, 1]", function() nn.LSTM(3, 4, { dropout = 2 }) end)
    H.raises("hidden_size must be greater than zero", function() nn.LSTM(3, 0) end)
    H.raises("num_layers must be greater than zero", function() nn.LSTM(3, 4, 0) end)
    H.raises("proj_size has to be smaller than hidden_size", function() nn.LSTM(3, 4, { proj_size = 4 }) end)
    H.raises("proj_size argument is only supported for LSTM, not RNN or GRU", function() nn.GRU(3, 4, { proj_size = 2 }) end)
    H.raises("proj_size should be a positive integer or zero", function() nn.LSTM(3, 4, { proj_size = -1 }) end)
    H.raises("Expected hidden[1] size {1, 2, 4}, got {1, 2, 2}", function()
      nn.LSTM(3, 4, { proj_size = 2 })(T.randn({ 2, 2, 3 }), { T.randn({ 1, 2, 2 }), T.randn({ 1, 2, 2 }) }) end)
    H.raises("unknown option 'num_layer' (did you mean 'num_layers'?)", function() nn.LSTM(3, 4, { num_layer = 2 }) end)
    H.raises("does not match the parameters' dtype", function() m(T.randn({ 2, 3, 3 }, { dtype = T.float64 })) end)
    H.raises("expected a floating point input", function() m(T.ones({ 2, 3, 3 }, { dtype = T.int64 })) end)
  end)
end)

describe("nn.RNNCell / LSTMCell / GRUCell", function()
  for _, c in ipairs(FX.cells) do
    it(c.name .. " matches PyTorch", function()
      local opts = lua_opts(c.opts)
      local m = nn[c.cls](c.input_size, c.hidden_size, opts)
      local p = {}
      for k, v in pairs(c.params) do p[k] = tens(v) end
      m:load_state_dict(p)
      assert.equal(c.repr, tostring(m))
      local x = tens(c.x):requires_grad_()
      local h0, c0
      local h, cc
      if c.h0 then
        h0 = tens(c.h0):requires_grad_()
        if c.cls == "LSTMCell" then
          c0 = tens(c.c0):requires_grad_()
          h, cc = m(x, { h0, c0 })
        else
          h = m(x, h0)
        end
      else
        h, cc = m(x)
      end
      close(h, c.h, 1e-9, "h")
      local loss = T.sum(h * tens(c.g_h))
      if c.cls == "LSTMCell" then
        close(cc, c.c, 1e-9, "c")
        loss = loss + T.sum(cc * tens(c.g_c))
      end
      loss:backward()
      close(x.grad, c.dx, 1e-9, "dx")
      if h0 then close(h0.grad, c.dh0, 1e-9, "dh0") end
      if c0 then close(c0.grad, c.dc0, 1e-9, "dc0") end
      for _, np in ipairs(m:named_parameters()) do close(np[2].grad, c.grads[np[1]], 1e-9, np[1]) end
    end)
  end

  it("raises on inconsistent sizes", function()
    local m = nn.GRUCell(3, 4)
    H.raises("input has inconsistent input_size: got 5 expected 3", function() m(T.randn({ 2, 5 })) end)
    H.raises("Input batch size 2 doesn't match hidden batch size 3", function() m(T.randn({ 2, 3 }), T.randn({ 3, 4 })) end)
    H.raises("GRUCell: Expected input to be 1-D or 2-D but received 3-D tensor", function() m(T.randn({ 1, 2, 3 })) end)
    local l = nn.LSTMCell(3, 4)
    H.raises("hidden1 has inconsistent hidden_size: got 5, expected 4", function()
      l(T.randn({ 2, 3 }), { T.randn({ 2, 4 }), T.randn({ 2, 5 }) }) end)
  end)
end)

describe("T._rnn_mm (the layer's whole-sequence products)", function()
  local T = require "ltensor"
  it("equals matmul for transposed operands, bands with a remainder, a bias, both float dtypes", function()
    for _, dt in ipairs({ T.float32, T.float64 }) do
      local a, b = T.randn(1003, 40, { dtype = dt }), T.randn(70, 40, { dtype = dt }):t()
      local bias = T.randn(70, { dtype = dt })
      local want = T.matmul(a, b) + bias
      local got = T._rnn_mm(a, b, bias)
      assert.is_true((got - want):abs():max():item() < (dt == T.float32 and 1e-4 or 1e-10))
      local at = T.randn(40, 1003, { dtype = dt }):t()
      assert.is_true((T._rnn_mm(at, b) - T.matmul(at, b)):abs():max():item() < (dt == T.float32 and 1e-4 or 1e-10))
    end
    assert.same({ 0, 5 }, T._rnn_mm(T.randn(0, 3), T.randn(3, 5)).shape)
    assert.same({ { 0, 0 } }, T._rnn_mm(T.randn(1, 0), T.randn(0, 2)):totable())
  end)
  it("checks its arguments", function()
    local function msg(...) local ok, e = pcall(T._rnn_mm, ...) assert.is_false(ok) return tostring(e) end
    assert.is_truthy(msg(T.randn(2), T.randn(2, 2)):find("ltensor._rnn_mm: expected two matrices", 1, true))
    assert.is_truthy(msg(T.randn(2, 2), T.randn(2, 2, { dtype = T.float64 })):find("one dtype", 1, true))
    assert.is_truthy(msg(T.ones(2, 2, { dtype = T.int32 }), T.ones(2, 2, { dtype = T.int32 })):find("float32 or float64", 1, true))
    assert.is_truthy(msg(T.randn(2, 3), T.randn(2, 2)):find("inner sizes differ (3 and 2)", 1, true))
    assert.is_truthy(msg(T.randn(2, 2), T.randn(2, 2), T.randn(3)):find("bias must be a contiguous vector", 1, true))
  end)
end)
