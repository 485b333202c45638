-- autograd: graph recording, the engine, errors, and gradcheck of every
-- differentiable op (float64 central differences against backward).
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)

local gradcheck = T.autograd.gradcheck
local function leaf(data) return T.tensor(data, { dtype = T.float64, requires_grad = true }) end
local function rnd(shape, lo, hi)
  lo, hi = lo or -1, hi or 1
  local t = T.no_grad(function() return T.rand(shape, { dtype = T.float64 }) * (hi - lo) + lo end)
  return t:requires_grad_()
end
local function close(a, b, tol)
  tol = tol or 1e-9
  local x, y = a:reshape({ a:numel() }):totable(), T.tensor(b, { dtype = a.dtype })
  y = y:reshape({ y:numel() }):totable()
  assert.are.equal(#y, #x)
  for i = 1, #x do
    if math.abs(x[i] - y[i]) > tol * (1 + math.abs(y[i])) then
      error(string.format("element %d: got %.12g, want %.12g", i, x[i], y[i]), 2)
    end
  end
end

describe("autograd graph", function()
  it("records nodes named as PyTorch with next_functions", function()
    local x = leaf({ 1, 2, 3 })
    local y = x * 2
    local z = y:sum()
    assert.are.equal("MulBackward0", y.grad_fn.name)   -- PyTorch 1.13: (x * 2).grad_fn is MulBackward0
    assert.are.equal("SumBackward0", z.grad_fn.name)
    assert.are.equal(y.grad_fn, z.grad_fn.next_functions[1][1])
    assert.are.equal("AccumulateGrad", y.grad_fn.next_functions[1][1].name)
    assert.is_true(z.requires_grad)
    assert.is_false(z.is_leaf)
    assert.is_true(x.is_leaf)
    assert.is_nil(x.grad_fn)
    assert.are.equal("SumBackward1", x:sum(1).grad_fn.name)
    assert.are.equal("MeanBackward1", x:mean(1).grad_fn.name)
    assert.are.equal("AddBackward0", (x + x).grad_fn.name)
    assert.are.equal("DivBackward0", (x / x).grad_fn.name)
    assert.are.equal("PowBackward0", (x ^ 2).grad_fn.name)
    assert.are.equal("PowBackward1", T.pow(x, x).grad_fn.name)
    assert.are.equal("ViewBackward0", x:view(3, 1).grad_fn.name)
    assert.are.equal("ExpandBackward0", x:expand(2, 3).grad_fn.name)
    assert.are.equal("IndexBackward0", x[T.tensor({ 1, 1 })].grad_fn.name)
    assert.are.equal("MmBackward0", T.mm(x:view(1, 3), x:view(3, 1)).grad_fn.name)
    assert.matches("grad_fn=<MulBackward0>", tostring(y), 1, true)
  end)

  it("accumulates into leaves and sums broadcast gradients back (sum_to)", function()
    local a = leaf({ 1, 2, 3 })
    local b = leaf({ 1 })
    local c = leaf({ { 1 }, { 2 } })
    ;(a + b + c):sum():backward()
    close(a.grad, { 2, 2, 2 })
    close(b.grad, { 6 })
    close(c.grad, { { 3 }, { 3 } })
    ;(a * 3):sum():backward()
    close(a.grad, { 5, 5, 5 })
  end)

  it("gives no gradient to Lua scalars and integer tensors", function()
    local a = leaf({ 1, 2 })
    local i = T.tensor({ 3, 4 })
    local y = (a * i + 2):sum()
    y:backward()
    close(a.grad, { 3, 4 })
    assert.is_nil(i.grad)
    assert.is_false(i.requires_grad)
  end)

  it("casts gradients back to the input dtype", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local a = T.tensor({ 1.0, 2.0 }, { requires_grad = true })  -- float32
    local b = leaf({ 3, 4 })                                     -- float64
    local y = (a * b):sum()
    assert.are.equal(T.float64, y.dtype)
    y:backward()
    assert.are.equal(T.float32, a.grad.dtype)
    assert.are.equal(T.float64, b.grad.dtype)
    local c = T.tensor({ 1.0, 2.0 }, { requires_grad = true })
    c:double():sum():backward()
    assert.are.equal(T.float32, c.grad.dtype)
    close(c.grad, { 1, 1 })
  end)

  it("walks a chain of 100000 ops without recursion", function()
    local a = leaf(2.0)
    local v = a
    for _ = 1, 100000 do v = v * 1.0 end
    v:backward()
    close(a.grad, 1.0)
  end)

  it("handles zero-dim and empty tensors", function()
    local s = leaf(3.0)
    ;(s * s):backward()
    close(s.grad, 6.0)
    local e = T.zeros({ 0, 3 }, { dtype = T.float64, requires_grad = true })
    e:sum():backward()
    assert.are.same({ 0, 3 }, e.grad.shape)
  end)

  it("differentiates through transposed and expanded inputs", function()
    local w = leaf({ { 1, 2 }, { 3, 4 } })
    local y = (w:t() * T.tensor({ 1.0, 10.0 }, { dtype = T.float64 })):sum()
    y:backward()
    close(w.grad, { { 1, 1 }, { 10, 10 } })
  end)
end)

describe("graph nodes (C engine)", function()
  it("are ltensor.Node userdata with names, edges and AccumulateGrad leaves", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local x = leaf({ 1, 2 })
    local i = T.tensor({ 3.0, 4.0 }, { dtype = T.float64 })
    local y = x * i
    local gf = y.grad_fn
    assert.are.equal("userdata", type(gf))
    assert.are.equal(T.autograd.Node, getmetatable(gf))
    assert.are.equal("MulBackward0", tostring(gf))
    local nf = gf.next_functions
    assert.are.equal(2, #nf)
    assert.are.equal("AccumulateGrad", nf[1][1].name)
    assert.are.equal(1, nf[1][2])
    assert.are.equal(x, nf[1][1].variable)
    assert.is_nil(nf[2][1])                              -- i needs no gradient
    assert.are.equal(nf[1][1], (x + 1).grad_fn.next_functions[1][1])   -- one AccumulateGrad per leaf
    local v, idx = T.tensor({ { 5.0, 1.0 } }, { requires_grad = true }):max(2)
    assert.are.equal(2, v.grad_fn.next_functions[1][1] and 2)
    assert.is_false(idx.requires_grad)                   -- indices are not differentiable
    assert.is_nil(idx.grad_fn)
  end)

  it("records nothing for an op that returns its input unchanged", function()
    local x = leaf({ 1, 2 })
    local c = x:contiguous()
    assert.are.equal(x, c)
    assert.is_nil(c.grad_fn)
  end)

  it("are freed with their tensors (no registry keeps a graph alive)", function()
    local x = leaf({ 1, 2 })
    local weak = setmetatable({}, { __mode = "v" })
    do
      local y = (x * 2):exp()
      weak[1], weak[2] = y.grad_fn, y.grad_fn.next_functions[1][1]
      y:sum():backward()
    end
    collectgarbage()
    collectgarbage()
    assert.is_nil(weak[1])
    assert.is_nil(weak[2])
    close(x.grad, { 2 * math.exp(2), 2 * math.exp(4) })
  end)
end)

describe("hooks, multiple roots and create_graph", function()
  it("runs tensor hooks on leaves and non-leaves; a hook's result replaces the gradient", function()
    local x = leaf({ 1, 2 })
    local seen
    local h = x:register_hook(function(g) seen = g:clone() return g * 10 end)
    local y = x * 3
    y:register_hook(function(g) return g + 1 end)
    y:sum():backward()
    close(seen, { 6, 6 })          -- (1 + 1) * 3
    close(x.grad, { 60, 60 })
    h.remove()
    ;(x * 1):sum():backward()
    close(x.grad, { 61, 61 })
    assert.has_error(function() T.tensor({ 1.0 }):register_hook(function() end) end,
      "ltensor.register_hook: cannot register a hook on a tensor that doesn't require gradient")
  end)

  it("a hook may run its own backward on another graph", function()
    local x, w = leaf({ 1, 2 }), leaf({ 3 })
    local y = x * 2
    local other = (w * w):sum()   -- hooks run in the grad mode of the run (create_graph)
    y:register_hook(function(g) other:backward() return g end)
    y:sum():backward()
    close(x.grad, { 2, 2 })
    close(w.grad, { 6 })
  end)

  it("a hook may run a nested backward through the same graph", function()
    local x = leaf({ 1, 2 })
    local y = x * 2
    local z, w = (y * y):sum(), (y * 3):sum()
    local once = false
    y:register_hook(function(g)
      if not once then once = true w:backward({ retain_graph = true }) end
      return g
    end)
    z:backward()
    close(x.grad, { 8 + 6, 16 + 6 })
  end)

  it("backward over several roots with explicit gradients (numbers too)", function()
    local x = leaf({ 1, 2 })
    local a, b = x * 2, (x * x):sum()
    T.autograd.backward({ a, b }, { T.tensor({ 1.0, 0.0 }, { dtype = T.float64 }), 2 })
    close(x.grad, { 2 + 4, 0 + 8 })
    local z = x * 1
    z:backward(T.ones(2, { dtype = T.float64 }))
    close(x.grad, { 7, 9 })
    assert.has_error(function() (x * 2):backward(T.ones(3, { dtype = T.float64 })) end,
      "ltensor.backward: Mismatch in shape: grad_output[1] has a shape of {3} and output[1] has a shape of {2}.")
  end)

  it("backward(create_graph) leaves a differentiable .grad", function()
    local x = leaf({ 1, 2 })
    ;(x * x * x):sum():backward({ create_graph = true })
    assert.is_true(x.grad.requires_grad)
    close(x.grad, { 3, 12 })
    local g = x.grad
    x.grad = nil
    g:sum():backward()
    close(x.grad, { 6, 12 })
  end)

  it("autograd.grad: the same input twice, and inputs that do not require grad", function()
    local x = leaf({ 1, 2 })
    local g = T.autograd.grad((x * x):sum(), { x, x })
    assert.are.equal(2, g.n)
    close(g[1], { 2, 4 })
    close(g[2], { 2, 4 })
    assert.is_false(g[1].requires_grad)
    assert.has_error(function() T.autograd.grad((x * 2):sum(), { T.ones(2) }) end,
      "ltensor.grad: one of the differentiated Tensors does not require grad")
    assert.has_error(function() T.autograd.grad((x * 2):sum(), { x * 1 }) end,
      "ltensor.grad: One of the differentiated Tensors appears to not have been used in the graph. " ..
      "Set allow_unused=true if this is the desired behavior.")
    local h = x * 2
    close(T.autograd.grad((h * h):sum(), h)[1], { 4, 8 })    -- a non-leaf input
  end)

  it("frees autograd.Function saved tensors after backward", function()
    local Sq = T.autograd.Function {
      forward = function(ctx, x) ctx:save_for_backward(x) return x * x end,
      backward = function(ctx, g) return g * 2 * ctx.saved_tensors[1] end,
    }
    local x = leaf({ 1, 2 })
    local y = Sq:apply(x):sum()
    y:backward()
    close(x.grad, { 2, 4 })
    local ok, err = pcall(function() y:backward() end)
    assert.is_false(ok)
    assert.matches("Trying to backward through the graph a second time", err, 1, true)
  end)

  it("refuses in-place ops on views of non-leaves that require grad", function()
    local x = leaf({ 1, 2, 3 })
    local y = x * 1
    assert.has_error(function() y:narrow(1, 1, 2):mul_(2) end,
      "ltensor.mul_: an in-place operation on a view of a tensor that requires grad is not supported " ..
      "(write into the base tensor with t[key] = v, or use out-of-place ops)")
  end)
end)

describe("backward arguments and errors", function()
  it("needs an explicit grad for non-scalar outputs", function()
    local x = leaf({ 1, 2 })
    assert.has_error(function() (x * 2):backward() end,
      "ltensor.backward: grad can be implicitly created only for scalar outputs")
    local y = x * 2
    y:backward(T.tensor({ 1.0, 0.5 }, { dtype = T.float64 }))
    close(x.grad, { 2, 1 })
    assert.has_error(function() (x * 2):backward(T.ones(3, { dtype = T.float64 })) end)
  end)

  it("refuses a second backward through freed saved tensors, unless retain_graph", function()
    local x = leaf({ 1, 2 })
    local y = (x * x):sum()
    y:backward({ retain_graph = true })
    y:backward()
    close(x.grad, { 4, 8 })
    local ok, err = pcall(function() y:backward() end)
    assert.is_false(ok)
    assert.matches("Trying to backward through the graph a second time", err, 1, true)
    assert.matches("retain_graph=true", err, 1, true)
  end)

  it("refuses in-place ops on leaves that require grad and on their views", function()
    local x = leaf({ 1, 2 })
    assert.has_error(function() x:add_(1) end,
      "ltensor.add_: a leaf Variable that requires grad is being used in an in-place operation.")
    assert.has_error(function() x[1] = 5 end,
      "ltensor.setindex: a leaf Variable that requires grad is being used in an in-place operation.")
    assert.has_error(function() x:narrow(1, 1, 1):mul_(2) end,
      "ltensor.mul_: a view of a leaf Variable that requires grad is being used in an in-place operation.")
    T.no_grad(function() x:add_(1) end)   -- allowed without grad mode
    close(x:detach(), { 2, 3 })
  end)

  it("detects saved tensors modified in place (version counter)", function()
    local x = leaf({ 1, 2 })
    local h = x * 1
    local e = h:exp()
    e:add_(1)
    local ok, err = pcall(function() e:sum():backward() end)
    assert.is_false(ok)
    assert.matches("one of the variables needed for gradient computation has been modified by an inplace operation", err, 1, true)
    assert.matches("is at version 1; expected version 0 instead", err, 1, true)
  end)

  it("rebases the history of non-leaves modified in place", function()
    local x = leaf({ 1, 2, 3 })
    local y = x * 2
    y:mul_(x)          -- y = 2x^2
    assert.are.equal("MulBackward0", y.grad_fn.name)
    y[2] = 0           -- drop element 2
    y:sum():backward()
    close(x.grad, { 4, 0, 12 })
    -- a saved tensor overwritten by the in-place op itself is detected
    local z = x * 1
    z:mul_(z)
    assert.has_error(function() z:sum():backward() end)
  end)

  it("raises for requires_grad on integer tensors and on outputs without a grad_fn", function()
    assert.has_error(function() T.tensor({ 1, 2 }, { requires_grad = true }) end)
    local i = T.tensor({ 1, 2 })
    assert.has_error(function() i.requires_grad = true end)
    local x = T.tensor({ 1.0 })
    assert.has_error(function() x:sum():backward() end,
      "ltensor.backward: element 1 of tensors does not require grad and does not have a grad_fn")
  end)
end)

describe("grad mode", function()
  it("no_grad and enable_grad restore the mode, even on error", function()
    local x = leaf({ 1, 2 })
    local y = T.no_grad(function() return x * 2 end)
    assert.is_false(y.requires_grad)
    assert.is_true(T.is_grad_enabled())
    assert.has_error(function() T.no_grad(function() error("boom", 0) end) end, "boom")
    assert.is_true(T.is_grad_enabled())
    local z = T.no_grad(function() return T.enable_grad(function() return x * 2 end) end)
    assert.is_true(z.requires_grad)
    assert.is_true(T.set_grad_enabled(false))
    assert.is_false((x * 2).requires_grad)
    assert.is_false(T.set_grad_enabled(true))
    assert.are.equal(7, T.no_grad(function(a, b) return a + b end, 3, 4))
  end)

  it("detach shares storage without history; requires_grad_ and retain_grad", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local x = leaf({ 1, 2 })
    local d = (x * 2):detach()
    assert.is_false(d.requires_grad)
    assert.is_true(d.is_leaf)
    local y = x * 3
    assert.is_true(T._same_storage(y, y:detach()))
    y:retain_grad()
    ;(y * y):sum():backward()
    close(y.grad, { 6, 12 })
    close(x.grad, { 18, 36 })
    local f = T.tensor({ 1.0 }):requires_grad_()
    assert.is_true(f.requires_grad)
    f:requires_grad_(false)
    assert.is_false(f.requires_grad)
  end)
end)

describe("autograd.grad", function()
  it("returns gradients without touching .grad", function()
    local x = leaf({ 1, 2 })
    local y = leaf({ 3, 4 })
    local g = T.autograd.grad((x * y):sum(), { x, y })
    close(g[1], { 3, 4 })
    close(g[2], { 1, 2 })
    assert.is_nil(x.grad)
  end)

  it("computes second derivatives with create_graph", function()
    local x = leaf({ 1, 2, 3 })
    local g = T.autograd.grad((x * x * x):sum(), { x }, nil, { create_graph = true })[1]
    close(g, { 3, 12, 27 })
    local gg = T.autograd.grad(g:sum(), { x })[1]
    close(gg, { 6, 12, 18 })
    local w = leaf({ { 1, 2 }, { 3, 4 } })
    local v = leaf({ 1, -1 })
    local gw = T.autograd.grad(T.matmul(w, v):pow(2):sum(), { w }, nil, { create_graph = true })[1]
    local gv = T.autograd.grad(gw:sum(), { v })[1]
    assert.are.same({ 2 }, gv.shape)
    -- d/dv sum_ij 2 (Wv)_i v_j = 2 * (W^T 1 * sum(v) + sum_i (Wv)_i)
    close(gv, { 2 * (4 * 0 + (-1 - 1)), 2 * (6 * 0 + (-1 - 1)) })
  end)

  it("reports unused inputs unless allow_unused", function()
    local x, y = leaf({ 1 }), leaf({ 2 })
    assert.has_error(function() T.autograd.grad((x * 2):sum(), { x, y }) end)
    local g = T.autograd.grad((x * 2):sum(), { x, y }, nil, { allow_unused = true })
    close(g[1], { 2 })
    assert.is_nil(g[2])
  end)
end)

describe("autograd.Function", function()
  it("runs user forward/backward with saved tensors", function()
    local Cube = T.autograd.Function {
      name = "Cube",
      forward = function(ctx, x)
        ctx:save_for_backward(x)
        return x * x * x
      end,
      backward = function(ctx, g)
        local x = ctx.saved_tensors[1]
        return g * 3 * x * x
      end,
    }
    local x = leaf({ 1, 2 })
    local y = Cube:apply(x)
    assert.are.equal("CubeBackward", y.grad_fn.name)
    y:sum():backward()
    close(x.grad, { 3, 12 })
    assert.is_true(gradcheck(function(a) return Cube.apply(a) end, { rnd({ 3 }) }))
  end)
end)

describe("gradcheck", function()
  it("raises on a wrong derivative", function()
    local Bad = T.autograd.Function {
      forward = function(_, x) return x * 2 end,
      backward = function(_, g) return g * 3 end,
    }
    assert.has_error(function() gradcheck(function(a) return Bad:apply(a) end, { rnd({ 2 }) }) end)
    assert.is_false(gradcheck(function(a) return Bad:apply(a) end, { rnd({ 2 }) }, { raise_exception = false }))
  end)

  local unary = {
    "neg", "exp", "exp2", "expm1", "sqrt", "rsqrt", "reciprocal", "square", "abs", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "silu", "gelu",
    "log", "log2", "log10", "log1p",
  }
  for _, name in ipairs(unary) do
    it("unary " .. name, function()
      local positive = name:match("^log") or name:match("sqrt")
      local x = positive and rnd({ 2, 3 }, 0.2, 2) or rnd({ 2, 3 }, -0.9, 0.9)
      assert.is_true(gradcheck(function(a) return T[name](a) end, { x }))
      -- non-contiguous input
      assert.is_true(gradcheck(function(a) return T[name](a:t()) end, { x }))
    end)
  end

  it("binary arithmetic with broadcasting, scalars and both operand orders", function()
    local a, b = rnd({ 2, 3 }), rnd({ 3 }, 0.5, 2)
    for _, f in ipairs {
      function(x, y) return x + y end, function(x, y) return x - y end, function(x, y) return x * y end,
      function(x, y) return x / y end, function(x, y) return T.add(x, y, 2.5) end,
      function(x, y) return T.sub(x, y, 0.5) end, function(x, y) return 2 - x * y end,
      function(x, y) return 3 / y + x end, function(x, y) return T.maximum(x, y) end,
      function(x, y) return T.minimum(x, y) end, function(x, y) return T.atan2(x, y) end,
      function(x, y) return T.lerp(x, y, 0.3) end, function(x, y) return T.rsub(x, y) end,
    } do
      assert.is_true(gradcheck(f, { a, b }))
    end
  end)

  it("pow with scalar and tensor exponents and a scalar base", function()
    local x, e = rnd({ 4 }, 0.5, 2), rnd({ 4 }, -1, 2)
    assert.is_true(gradcheck(function(a) return a ^ 3 end, { x }))
    assert.is_true(gradcheck(function(a) return T.pow(a, 0.5) end, { x }))
    assert.is_true(gradcheck(function(a, b) return T.pow(a, b) end, { x, e }))
    assert.is_true(gradcheck(function(b) return 2 ^ b end, { e }))
  end)

  it("clamp, where, fmod, remainder", function()
    local x = leaf({ -2, -0.5, 0.3, 1.5, 3 })
    assert.is_true(gradcheck(function(a) return T.clamp(a, -1, 1) end, { x }))
    assert.is_true(gradcheck(function(a) return T.clamp_min(a, 0) end, { x }))
    assert.is_true(gradcheck(function(a) return T.clamp_max(a, 0) end, { x }))
    local y = rnd({ 5 })
    local c = T.tensor({ true, false, true, false, true })
    assert.is_true(gradcheck(function(a, b) return T.where(c, a, b) end, { x, y }))
    assert.is_true(gradcheck(function(a, b) return a:where(c, b) end, { x, y }))
    assert.is_true(gradcheck(function(a) return T.fmod(a, 0.7) end, { x }))
    assert.is_true(gradcheck(function(a) return T.remainder(a, 0.7) end, { x }))
  end)

  it("reductions with and without dims and keepdim", function()
    local x = rnd({ 2, 3, 4 }, 0.5, 1.5)
    for _, f in ipairs {
      function(a) return a:sum() end, function(a) return a:sum(2) end, function(a) return a:sum({ 1, 3 }, true) end,
      function(a) return a:mean() end, function(a) return a:mean(-1, true) end, function(a) return a:prod() end,
      function(a) return a:prod(2) end, function(a) return a:std() end, function(a) return a:var(2, true) end,
      function(a) return a:var(1, { correction = 0 }) end, function(a) return a:norm() end,
      function(a) return a:norm(1, 3) end, function(a) return a:logsumexp(2) end, function(a) return a:cumsum(3) end,
      function(a) return a:cumprod(2) end, function(a) return a:softmax(2) end, function(a) return a:log_softmax(-1) end,
      function(a) return a:amax(2) end, function(a) return a:amin({ 1, 2 }, true) end, function(a) return a:max() end,
      function(a) return (a:max(2)) end, function(a) return (a:min(3, true)) end,
      function(a) return (a:sort(2)) end, function(a) return (a:topk(2, 3)) end,
    } do
      assert.is_true(gradcheck(f, { x }))
    end
  end)

  it("max/amax split ties evenly; max with a dim picks the index", function()
    local x = leaf({ 1, 3, 3 })
    x:max():backward()
    close(x.grad, { 0, 0.5, 0.5 })
    local y = leaf({ { 1, 3, 3 } })
    y:amax(2):sum():backward()
    close(y.grad, { { 0, 0.5, 0.5 } })
    local z = leaf({ { 5, 1 }, { 2, 7 } })
    local v, i = z:max(2)
    assert.are.same({ 1, 2 }, i:totable())
    v:sum():backward()
    close(z.grad, { { 1, 0 }, { 0, 1 } })
  end)

  it("views and indexing", function()
    local x = rnd({ 3, 4 })
    for _, f in ipairs {
      function(a) return a:view(4, 3) end, function(a) return a:reshape(12) end, function(a) return a:t():reshape(12) end,
      function(a) return a:flatten() end, function(a) return a:transpose(1, 2) end, function(a) return a:permute(2, 1) end,
      function(a) return a:unsqueeze(2):expand(3, 2, 4) end, function(a) return a:view(1, 3, 4):squeeze(1) end,
      function(a) return a:narrow(2, 2, 2) end, function(a) return a:select(1, -1) end,
      function(a) return a[2] end, function(a) return a[{ 2, 3 }] end, function(a) return a[{ { 1, 2 }, {} }] end,
      function(a) return a[T.tensor({ 3, 1, 3, -1 })] end, function(a) return a[T.gt(a, 0)] end,
      function(a) return a:index_select(2, T.tensor({ 4, 4, 1 })) end, function(a) return a:movedim(1, 2) end,
      function(a) return a:gather(2, T.tensor({ { 1, 1 }, { 2, 4 }, { 3, 3 } })) end,
      function(a) return a:masked_fill(T.gt(a, 0), 0.5) end,
      function(a) return T.cat({ a, a * 2 }, 2) end, function(a) return T.stack({ a, a }, 1) end,
      function(a) return T.cat({ a[1], a[2] }) end, function(a) return a:contiguous() end,
      function(a) return a:clone() end, function(a) return a:double() end, function(a) return a:to(T.float64) end,
    } do
      assert.is_true(gradcheck(f, { x }))
    end
  end)

  it("gather with repeated indices accumulates", function()
    local x = leaf({ 1, 2, 3 })
    x[T.tensor({ 2, 2, 3 })]:sum():backward()
    close(x.grad, { 0, 2, 1 })
  end)

  it("in-place ops on non-leaves", function()
    local x = rnd({ 2, 3 })
    assert.is_true(gradcheck(function(a) local h = a * 1 h:mul_(a) h:add_(1) return h end, { x }))
    assert.is_true(gradcheck(function(a) local h = a * 1 h:sin_() h:clamp_(-0.5, 0.5) h:mul_(2) return h end, { x }))
    assert.is_true(gradcheck(function(a) local h = a * 1 h[{ 1, 2 }] = 0 h[2] = a[1] return h end, { x }))
    assert.is_true(gradcheck(function(a) local h = T.zeros(2, 3, { dtype = T.float64 }) h:copy_(a) return h * h end, { x }))
  end)

  it("matmul family including 1-D and batched operands", function()
    local m, n, k = rnd({ 3, 4 }), rnd({ 4, 2 }), rnd({ 4 })
    local b1, b2 = rnd({ 2, 3, 4 }), rnd({ 2, 4, 2 })
    assert.is_true(gradcheck(T.mm, { m, n }))
    assert.is_true(gradcheck(T.matmul, { m, n }))
    assert.is_true(gradcheck(T.matmul, { m, k }))
    assert.is_true(gradcheck(T.matmul, { k, n }))
    assert.is_true(gradcheck(T.matmul, { k, k:detach():clone():requires_grad_() }))
    assert.is_true(gradcheck(T.matmul, { b1, n }))       -- broadcast batch
    assert.is_true(gradcheck(T.matmul, { k, b2 }))
    assert.is_true(gradcheck(T.matmul, { b1, k }))
    assert.is_true(gradcheck(T.bmm, { b1, b2 }))
    assert.is_true(gradcheck(T.mv, { m, k }))
    assert.is_true(gradcheck(T.dot, { k, k:detach():clone():requires_grad_() }))
    assert.is_true(gradcheck(T.outer, { k, rnd({ 3 }) }))
  end)
end)

describe("autograd argument errors", function()
  it("name the function and the argument", function()
    assert.has_error(function() T.no_grad(1) end, "ltensor.no_grad: bad argument #1 (function expected, got number)")
    -- (the method table's detach(1) is x.detach(1)'s call: issue 21's hint)
    assert.has_error(function() T._methods.detach(1) end,
      "ltensor.detach: bad argument #1 (tensor expected, got number; a method is called with ':', as x:detach(...))")
    local g = T.ones(2, { requires_grad = true })
    local y = (g * 2):sum()
    assert.has_error(function() y:backward("x") end,
      "ltensor.backward: bad argument #2 (tensor or number expected, got string)")
  end)
  it("refuse a freed tensor in a recorded op instead of crashing", function()
    local g = T.ones(2, { requires_grad = true })
    local f = T.ones(2)
    f:free()
    assert.has_error(function() f:add_(g) end, "ltensor.add_: bad argument #1 (tensor was freed)")
  end)
end)
