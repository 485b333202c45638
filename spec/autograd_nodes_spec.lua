-- autograd nodes recorded by the C rules (src/l_grad_rules.c): their memory
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

  it("keep the names, edges and inputs of PyTorch's nodes", function()
    local a, b = leaf({ { 1, 2 }, { 3, 4 } }), leaf({ { 1, 0 }, { 0, 1 } })
    local y = T.mm(a, b:t())
    assert.are.equal("MmBackward0", y.grad_fn.name)
    assert.are.equal("TBackward0", y.grad_fn.next_functions[2][1].name)
    assert.are.equal("AccumulateGrad", y.grad_fn.next_functions[1][1].name)
    assert.are.equal("NegBackward0", (-a).grad_fn.name)
    assert.are.equal("SubBackward1", (a - 1).grad_fn.name)
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
