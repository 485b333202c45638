-- autograd nodes recorded by the C rules (src/binding/l_grad_rules.c): their memory
-- cost (issue 13: a deep graph cost 1.3 KB of Lua heap per op), and that
-- everything a Lua-rule node offers works on them too (names, edges, hooks,
-- retain_grad, saved-tensor checks, create_graph).  Not a timed test.
local T = require "ltensor"

local function leaf(data) return T.tensor(data, { dtype = T.float64, requires_grad = true }) end

local function per_op(f, n)
  local x = T.randn(4, { requires_grad = true })
  collectgarbage()
  collectgarbage()
  local m0 = collectgarbage("count")
  local y = x
  for _ = 1, n do y = f(y) end
  collectgarbage()
  collectgarbage()
  local bytes = (collectgarbage("count") - m0) * 1024 / n
  return bytes, x, y
end

describe("autograd nodes", function()
  it("cost a few hundred bytes of Lua heap per op in a 10k-op chain", function()
    local bytes, x, y = per_op(function(y) return y * 1.0001 end, 10000)
    assert.is_true(bytes < 300, ("%.0f bytes per op"):format(bytes))
    y:sum():backward()
    local want = 1.0001 ^ 10000
    assert.is_true(math.abs(x.grad[1]:item() - want) < 1e-3 * want)
    local b2 = per_op(function(y) return -y + 1 end, 5000)
    assert.is_true(b2 < 2 * 300, ("%.0f bytes per two ops"):format(b2))
  end)

  -- the two figures below are Lua 5.4's: older hosts keep user values in a
  -- table per userdata (src/binding/l_compat.h) and collect incrementally
  local lua54 = _VERSION == "Lua 5.4" and not rawget(_G, "jit")
  it("are packed: a 1-D op with a number costs under 150 bytes of Lua heap (was 184)", function()
    if not lua54 then return end
    local bytes = per_op(function(y) return y * 1.0001 end, 10000)
    assert.is_true(bytes < 150, ("%.0f bytes per op"):format(bytes))
  end)

  it("let the backward of a long chain free its gradients young (peak well under twice the graph)", function()
    -- after a forward pass that grew the graph, Lua's generational collector
    -- waits for the heap to double; backward makes only garbage, so it
    -- peaked at 2.4 times the graph before settle_collector (l_backward.c)
    local x = T.ones(1, { requires_grad = true })
    local peak = 0
    local function probe() local m = collectgarbage("count") if m > peak then peak = m end end
    collectgarbage()
    collectgarbage()
    local m0 = collectgarbage("count")
    local y = x
    for i = 1, 200000 do
      y = y * 1.0000001
      if i % 10000 == 0 then y:register_hook(probe) end
    end
    collectgarbage()
    collectgarbage()
    local graph = collectgarbage("count") - m0
    y:backward()
    if lua54 then
      assert.is_true(peak - m0 < 1.8 * graph, ("backward peak %.0f KB for a graph of %.0f KB"):format(peak - m0, graph))
    end
    assert.are.equal(y[1]:item(), x.grad[1]:item())   -- x is 1: the same products in the same order
  end)

  it("keep the names, edges and inputs of PyTorch's nodes", function()
    local a, b = leaf({ { 1, 2 }, { 3, 4 } }), leaf({ { 1, 0 }, { 0, 1 } })
    local y = T.mm(a, b:t())
    assert.are.equal("MmBackward0", y.grad_fn.name)
    assert.are.equal("TBackward0", y.grad_fn.next_functions[2][1].name)
    assert.are.equal("AccumulateGrad", y.grad_fn.next_functions[1][1].name)
    assert.are.equal("NegBackward0", (-a).grad_fn.name)
    assert.are.equal("SubBackward0", (a - 1).grad_fn.name)   -- as PyTorch 1.13's (a - 1).grad_fn
    assert.are.equal("RsubBackward1", (1 - a).grad_fn.name)
    assert.are.equal("UnsafeViewBackward0", a:t():reshape(4).grad_fn.name)
    assert.are.equal("ViewBackward0", a:reshape(4).grad_fn.name)
    assert.are.equal("SqueezeBackward1", a:unsqueeze(1):squeeze(1).grad_fn.name)
    assert.is_nil(y.grad_fn.no_such_field)
  end)

  it("run register_hook and retain_grad on their outputs", function()
    local x = leaf({ 1, 2, 3 })
    local y = x * 2
    local seen
    y:register_hook(function(g) seen = g:clone() return g * 10 end)
    y:retain_grad()
    y:sum():backward()
    assert.are.same({ 1, 1, 1 }, seen:totable())
    assert.are.same({ 10, 10, 10 }, y.grad:totable())   -- as PyTorch 1.13 (hook registered first)
    assert.are.same({ 20, 20, 20 }, x.grad:totable())
  end)

  it("check their saved tensors: modified in place, freed, or released", function()
    local a, b = leaf({ 1, 2 }), T.tensor({ 3, 4 }, { dtype = T.float64 })
    local y = a * b
    b:add_(1)
    assert.has_error(function() y:sum():backward() end)
    local ok, err = pcall(function() y:sum():backward() end)
    assert.is_false(ok)
    assert.matches("saved by MulBackward0", err, 1, true)
    local z = (a * b):sum()
    z:backward()
    ok, err = pcall(function() z:backward() end)
    assert.is_false(ok)
    assert.matches("backward through the graph a second time", err, 1, true)
    local c = T.tensor({ 5, 6 }, { dtype = T.float64 })
    local w = a * c
    c:free()
    ok, err = pcall(function() w:sum():backward() end)
    assert.is_false(ok)
    assert.matches("was freed", err, 1, true)
  end)

  it("differentiate twice under create_graph", function()
    local x = leaf({ 0.5, -1, 2 })
    local y = (x:tanh() * x:exp() + x:sigmoid() / x:pow(2)):sum()
    local g = T.autograd.grad(y, x, { create_graph = true })[1]
    local gg = T.autograd.grad(g:sum(), x)[1]
    assert.is_true(T.autograd.gradcheck(function(v) return (v:tanh() * v:exp() + v:sigmoid() / v:pow(2)):sum() end,
      { leaf({ 0.5, -1, 2 }) }))
    assert.are.equal(3, gg:numel())
    local r = leaf({ -1, 0.5, 2 })
    local gr = T.autograd.grad((r:relu() * r):sum(), r, { create_graph = true })[1]
    assert.are.same({ 0, 1, 4 }, gr:totable())
  end)
end)

describe("the fused linear layer", function()
  local F = T.nn.functional
  local function rnd(shape) return T.randn(shape, { dtype = T.float64, requires_grad = true }) end
  local function composite(x, w, b)
    local y = T.matmul(x, w:t())
    if b ~= nil then y = y + b end
    return y
  end

  it("matches matmul + add in value and gradient, with and without a bias", function()
    for _, shape in ipairs({ { 5, 3 }, { 2, 4, 3 }, { 0, 3 }, { 1, 3 } }) do
      for _, bias in ipairs({ true, false }) do
        local x, w, b = rnd(shape), rnd({ 4, 3 }), bias and rnd({ 4 }) or nil
        local y = F.linear(x, w, b)
        local yr = composite(x, w, b)
        assert.is_true(T.allclose(y, yr))
        if y:numel() > 0 then
          local gs = T.autograd.grad(y:sum(), bias and { x, w, b } or { x, w })
          local gr = T.autograd.grad((yr * 1):sum(), bias and { x, w, b } or { x, w })
          for i = 1, #gs do assert.is_true(T.allclose(gs[i], gr[i])) end
        end
      end
    end
    assert.are.equal("AddmmBackward0", F.linear(rnd({ 2, 3 }), rnd({ 4, 3 }), rnd({ 4 })).grad_fn.name)
    assert.are.equal("MmBackward0", F.linear(rnd({ 2, 3 }), rnd({ 4, 3 })).grad_fn.name)
  end)

  it("passes gradcheck for transposed operands and under create_graph", function()
    local x, w, b = rnd({ 3, 4 }), rnd({ 3, 5 }), rnd({ 5 })
    assert.is_true(T.autograd.gradcheck(function(a, m, c) return F.linear(a:t(), m:t(), c) end, { x, w, b }))
    local xs, ws = rnd({ 2, 3 }), rnd({ 2, 3 })
    local g = T.autograd.grad((F.linear(xs, ws) ^ 2):sum(), ws, { create_graph = true })[1]
    local gg = T.autograd.grad(g:sum(), xs)[1]
    assert.are.same({ 2, 3 }, gg.shape)
  end)

  it("trains nn.Linear in float32 as before (the gradient of the weight is contiguous)", function()
    T.manual_seed(0)
    local lin = T.nn.Linear(8, 3)
    local x = T.randn(4, 8)
    F.cross_entropy(lin(x), T.tensor({ 1, 2, 3, 1 })):backward()
    assert.is_true(lin.weight.grad:is_contiguous())
    local w2 = lin.weight:detach():requires_grad_()
    local b2 = lin.bias:detach():requires_grad_()
    F.cross_entropy(composite(x, w2, b2), T.tensor({ 1, 2, 3, 1 })):backward()
    assert.is_true(T.allclose(lin.weight.grad, w2.grad, 1e-5, 1e-6))
    assert.is_true(T.allclose(lin.bias.grad, b2.grad, 1e-5, 1e-6))
  end)

  it("raises the errors of matmul for shapes that do not fit", function()
    assert.has_error(function() F.linear(T.randn(2, 3), T.randn(4, 5)) end)
    local ok, err = pcall(T._linear, T.randn(2, 3), T.randn(4, 5))
    assert.is_false(ok)
    assert.matches("ltensor._linear: mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)", err, 1, true)
  end)
end)

describe("sum and mean over one dim (C rule)", function()
  local function rnd(shape) return T.randn(shape, { dtype = T.float64, requires_grad = true }) end

  it("match the gradient of the list-of-dims form for every dim and keepdim", function()
    for _, f in ipairs({ "sum", "mean" }) do
      for _, d in ipairs({ 1, 2, 3, -1, -3 }) do
        for _, keep in ipairs({ true, false }) do
          local x = rnd({ 2, 3, 4 })
          local y = x[f](x, d, keep)
          assert.are.equal(f == "sum" and "SumBackward1" or "MeanBackward1", y.grad_fn.name)
          local w = T.randn(y.shape, { dtype = T.float64 })
          local g = T.autograd.grad((y * w):sum(), x)[1]
          -- the same reduction written as a list of dims
          local x2 = x:detach():requires_grad_()
          local y2 = x2[f](x2, { d }, keep)
          local g2 = T.autograd.grad((y2 * w):sum(), x2)[1]
          assert.is_true(T.allclose(g, g2), f .. " " .. d .. " " .. tostring(keep))
        end
      end
    end
    assert.is_true(T.autograd.gradcheck(function(v) return v:mean(-1) end, { rnd({ 3, 2 }) }))
    assert.is_true(T.autograd.gradcheck(function(v) return v:sum(1, true) end, { rnd({ 3 }) }))
  end)

  it("handle empty inputs and raise the reductions' errors", function()
    local e = rnd({ 0, 3 })
    local g = T.autograd.grad(e:mean(1):sum(), e)[1]
    assert.are.same({ 0, 3 }, g.shape)
    local z = rnd({ 2, 0 })
    local gz = T.autograd.grad(z:mean(2):sum(), z)[1]
    assert.are.same({ 2, 0 }, gz.shape)
    assert.has_error(function() rnd({ 2, 3 }):sum(3) end)
  end)
end)

-- each backward formula once (issue 19): the ops with a C rule have no Lua
-- rule, so the C rule takes every form of the call, the in-place op too
describe("the C rules", function()
  local ag = T.autograd
  local function rnd(shape, lo)
    local x = T.randn(shape, { dtype = T.float64 })
    if lo then x = x:abs() + lo end
    return x:requires_grad_()
  end
  -- a node recorded in C has no Lua table: no backward field
  local function c_node(y, name)
    assert.are.equal(name, y.grad_fn.name)
    assert.is_nil(y.grad_fn.backward, name .. " was recorded by a Lua rule")
  end
  local function check(f, inputs) assert.is_true(ag.gradcheck(f, inputs)) end

  it("are the only rules of their ops", function()
    for name in pairs(ag.crules) do assert.is_nil(ag.rules[name], name) end
    for _, name in ipairs({ "add", "sub", "mul", "div", "neg", "exp", "log", "tanh", "sigmoid", "relu", "pow", "sum",
      "mean", "matmul", "mm", "_linear" }) do
      assert.is_true(ag.crules[name], name)
    end
  end)

  it("take alpha, options and weak scalars in add and sub", function()
    local a, b = rnd({ 2, 3 }), rnd({ 3 })
    c_node(T.add(a, b, 2.5), "AddBackward0")
    c_node(T.add(a, b, { alpha = -2 }), "AddBackward0")
    c_node(T.add(a, true), "AddBackward0")
    c_node(T.sub(2, a, { alpha = 3 }), "RsubBackward1")
    local g = ag.grad(T.add(a, b, 2.5):sum(), { a, b })
    assert.are.same(T.ones({ 2, 3 }, { dtype = T.float64 }):totable(), g[1]:totable())
    assert.are.same({ 5, 5, 5 }, g[2]:totable())
    g = ag.grad(T.sub(a, b, { alpha = 3 }):sum(), { b })
    assert.are.same({ -6, -6, -6 }, g[1]:totable())
    g = ag.grad(T.sub(a, b, 1.0):sum(), { b })
    assert.are.same({ -2, -2, -2 }, g[1]:totable())
    check(function(x, y) return T.sub(x, y, -0.5) end, { a, b })
  end)

  it("record the in-place ops, reading a copy of the old value where backward needs it", function()
    local a, b = rnd({ 2, 3 }, 0.5), rnd({ 3 }, 0.5)
    for _, c in ipairs({
      { "add_", "AddBackward0", function(x, y) return (x * 1):add_(y, 2) end },
      { "sub_", "SubBackward0", function(x, y) return (x * 1):sub_(y) end },
      { "mul_", "MulBackward0", function(x, y) return (x * 1):mul_(y) end },
      { "div_", "DivBackward0", function(x, y) return (x * 1):div_(y) end },
      { "pow_", "PowBackward1", function(x, y) return (x * 1):pow_(y) end },
      { "exp_", "ExpBackward0", function(x) return (x * 1):exp_() end },
      { "log_", "LogBackward0", function(x) return (x * 1):log_() end },
      { "tanh_", "TanhBackward0", function(x) return (x * 1):tanh_() end },
      { "sigmoid_", "SigmoidBackward0", function(x) return (x * 1):sigmoid_() end },
      { "neg_", "NegBackward0", function(x) return (x * 1):neg_() end },
      { "relu_", "ReluBackward0", function(x) return (x - 1):relu_() end },
    }) do
      c_node(c[3](a, b), c[2])
      check(c[3], { a, b })
    end
    -- the target as the other operand: saved before the write, so backward refuses
    local z = a * 1
    z:mul_(z)
    local ok, err = pcall(function() z:sum():backward() end)
    assert.is_false(ok)
    assert.matches("modified by an inplace operation", err, 1, true)
    -- a target that did not require grad gets a history
    local t = T.ones({ 2, 3 }, { dtype = T.float64 })
    t:mul_(a)
    c_node(t, "MulBackward0")
    assert.are.same(T.ones({ 2, 3 }):totable(), ag.grad(t:sum(), a)[1]:totable())
  end)

  it("take div's rounding modes and pow's tensor exponents", function()
    local a, b = rnd({ 2, 3 }, 0.5), rnd({ 3 }, 0.5)
    c_node(T.div(a, b, "trunc"), "DivBackward2")
    c_node(T.div(a, 2, { rounding_mode = "floor" }), "DivBackward2")
    local g = ag.grad(T.div(a, b, "floor"):sum(), { a, b })
    assert.are.same({ 0, 0, 0 }, g[2]:totable())
    c_node(T.pow(a, b), "PowBackward1")
    c_node(T.pow(2, b), "PowBackward2")
    c_node(T.pow(a, true), "PowBackward0")
    check(function(x, y) return T.pow(x, y) end, { a, b })
    check(function(y) return T.pow(1.5, y) end, { b })
    -- 0 ^ e: no gradient to e where e >= 0 (PyTorch's pow_backward_exponent)
    local e = T.tensor({ -1, 0, 2 }, { dtype = T.float64, requires_grad = true })
    assert.are.same({ -math.huge, 0, 0 }, ag.grad(T.pow(0, e):sum(), e)[1]:totable())
  end)

  it("take every form of sum and mean", function()
    local x = rnd({ 2, 3, 4 })
    c_node(x:sum({ 3, 1 }), "SumBackward1")
    c_node(x:mean({ dim = 2, keepdim = true }), "MeanBackward1")
    c_node(x:sum({}), "SumBackward0")
    c_node(x:mean(1, false, { dtype = T.complex128 }), "MeanBackward1")
    c_node(rnd({}):sum(1), "SumBackward0")
    for _, f in ipairs({
      function(v) return v:sum({ 3, 1 }) end, function(v) return v:mean({ -1, 2 }, true) end,
      function(v) return v:mean({ dim = { 1, 3 } }) end, function(v) return v:sum(2, { keepdim = true }) end,
      function(v) return v:mean(nil, true) end,
    }) do
      check(f, { x })
    end
    local g = ag.grad(x:mean({ 1, 3 }):sum(), x)[1]
    assert.is_true(T.allclose(g, T.full({ 2, 3, 4 }, 1 / 8, { dtype = T.float64 })))
  end)

  it("take every form of matmul", function()
    for _, c in ipairs({
      { { 3 }, { 3 }, "DotBackward0" }, { { 2, 3 }, { 3 }, "MvBackward0" }, { { 2, 3 }, { 3, 4 }, "MmBackward0" },
      { { 3 }, { 3, 4 }, "SqueezeBackward1" }, { { 3 }, { 2, 3, 4 }, "BmmBackward0" },
      { { 2, 4, 3 }, { 3 }, "BmmBackward0" }, { { 2, 1, 2, 3 }, { 3, 3, 4 }, "BmmBackward0" },
    }) do
      local a, b = rnd(c[1]), rnd(c[2])
      c_node(T.matmul(a, b), c[3])
      check(function(x, y) return T.matmul(x, y) end, { a, b })
    end
  end)
end)
