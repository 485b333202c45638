-- Every differentiable C function (registered with LT_DIFF, so the autograd
-- trampoline routes it to the hook) must have a backward rule: without one
-- the failure would show only when someone calls backward through it.
local T = require "ltensor"
local ag = T.autograd

local function has_rule(name)
  if ag.rules[name] or ag.inplace_rules[name] then return true end
  -- an in-place op without its own rule uses the out-of-place one
  return name:sub(-1) == "_" and ag.rules[name:sub(1, -2)] ~= nil
end

describe("the op list", function()
  it("lists the differentiable C functions", function()
    local names = T._diff_ops()
    table.sort(names)
    assert.is_true(#names > 50)
    local seen = {}
    for _, n in ipairs(names) do seen[n] = true end
    for _, n in ipairs({ "add", "mul", "exp", "sum", "matmul", "index", "cat" }) do
      assert.is_true(seen[n], n)
    end
  end)

  it("has a backward rule for every differentiable C function", function()
    local names = T._diff_ops()
    table.sort(names)
    local missing = {}
    for _, n in ipairs(names) do
      if not has_rule(n) then missing[#missing + 1] = n end
    end
    assert.are.same({}, missing, "LT_DIFF functions without a backward rule: " .. table.concat(missing, ", "))
  end)
end)

describe("the op list (src/binding/l_oplist.h)", function()
  local list = T._op_list()
  local diff = {}
  for _, n in ipairs(T._diff_ops()) do diff[n] = true end

  it("has one line per op with its arity, family, dtype rule and flags", function()
    assert.is_true(#list > 80)
    local seen = {}
    for _, op in ipairs(list) do
      assert.is_nil(seen[op.name], "listed twice: " .. op.name)
      seen[op.name] = true
      assert.is_true(op.arity >= 1 and op.arity <= 3, op.name)
      assert.truthy(({ unary = 1, binary = 1, reduce = 1, dim = 1, sort = 1 })[op.family], op.name)
      assert.truthy(({ same = 1, bool = 1, float = 1, int64 = 1, index = 1, real = 1 })[op.rule], op.name)
    end
    for _, n in ipairs({ "add", "exp", "eq", "bitwise_and", "sum", "softmax", "sort" }) do
      assert.is_true(seen[n], n)
    end
  end)

  it("registers every line as it says (T.name, t:name, t:name_, differentiable)", function()
    local wrong = {}
    for _, op in ipairs(list) do
      local n = op.name
      if type(T[n]) ~= "function" or type(T._methods[n]) ~= "function" then wrong[#wrong + 1] = n end
      if op.inplace and type(T._methods[n .. "_"]) ~= "function" then wrong[#wrong + 1] = n .. "_" end
      if op.diff ~= (diff[n] == true) then wrong[#wrong + 1] = n .. " (diff)" end
      if op.inplace and op.diff ~= (diff[n .. "_"] == true) then wrong[#wrong + 1] = n .. "_ (diff)" end
    end
    assert.are.same({}, wrong)
  end)

  it("lists the differentiable ops of the list without a backward rule: none", function()
    local missing = {}
    for _, op in ipairs(list) do
      if op.diff and not has_rule(op.name) then missing[#missing + 1] = op.name end
      if op.diff and op.inplace and not has_rule(op.name .. "_") then missing[#missing + 1] = op.name .. "_" end
    end
    assert.are.same({}, missing, "differentiable ops without a backward rule: " .. table.concat(missing, ", "))
  end)

  it("gives the result dtypes its rules name", function()
    local i = T.tensor({ 1, 2, 3 }, { dtype = T.int32 })
    local by = {}
    for _, op in ipairs(list) do by[op.name] = op end
    assert.equal("int64", by.sum.rule)
    assert.equal(T.int64, i:sum().dtype)
    assert.equal(T.int64, i:cumsum(1).dtype)
    assert.equal("float", by.exp.rule)
    assert.equal(T.get_default_dtype(), i:exp().dtype)
    assert.equal("bool", by.eq.rule)
    assert.equal(T.bool, i:eq(i).dtype)
    assert.equal("index", by.argmax.rule)
    assert.equal(T.int64, T.tensor({ 1.5, 2 }):argmax().dtype)
    assert.equal("real", by.abs.rule)
    assert.equal(T.float32, T.tensor({ 1, 2 }, { dtype = T.complex64 }):abs().dtype)
  end)
end)

describe("the backward rules added for the op list", function()
  local gradcheck = T.autograd.gradcheck
  local function rnd(shape) return T.randn(shape, { dtype = T.float64, requires_grad = true }) end

  it("unfold adds each window's gradient back (overlapping windows accumulate)", function()
    assert.is_true(gradcheck(function(a) return a:unfold(2, 3, 1) end, { rnd({ 2, 6 }) }))
    assert.is_true(gradcheck(function(a) return a:unfold(1, 2, 3) end, { rnd({ 7, 2 }) }))
    local x = T.ones(5, { requires_grad = true })
    x:unfold(1, 3, 1):sum():backward()
    assert.are.same({ 1, 2, 3, 2, 1 }, x.grad:totable())
  end)

  it("index_add, index_copy and index_fill differentiate both inputs", function()
    local idx = T.tensor({ 3, 1 })
    assert.is_true(gradcheck(function(a, s) return a:index_add(1, idx, s, { alpha = 2 }) end, { rnd({ 4, 3 }), rnd({ 2, 3 }) }))
    assert.is_true(gradcheck(function(a, s) return a:index_copy(2, idx, s) end, { rnd({ 2, 4 }), rnd({ 2, 2 }) }))
    assert.is_true(gradcheck(function(a, v) return a:index_fill(1, idx, v) end, { rnd({ 4, 2 }), rnd({}) }))
    local x = rnd({ 3 })
    local y = x:clone()
    y:index_add_(1, T.tensor({ 2 }), T.ones(1, { dtype = T.float64 }))
    y:sum():backward()
    assert.are.same({ 1, 1, 1 }, x.grad:totable())
  end)

  it("real, imag, conj and angle give PyTorch's complex gradients", function()
    local x = T.tensor({ 3.0, 4.0 }, { dtype = T.float64, requires_grad = true })
    x:real():sum():backward()
    assert.are.same({ 1, 1 }, x.grad:totable())
    local c = T.sqrt(T.tensor({ -4.0, -9.0 }, { dtype = T.complex128 }))   -- 2i, 3i
    c.requires_grad = true
    c:imag():sum():backward()
    assert.is_true(c.grad:imag():eq(T.ones(2, { dtype = T.float64 })):all():item())
    assert.is_true(c.grad:real():eq(T.zeros(2, { dtype = T.float64 })):all():item())
    local r = T.tensor({ -1.0, 2.0 }, { dtype = T.float64, requires_grad = true })
    r:angle():sum():backward()
    assert.are.same({ 0, 0 }, r.grad:totable())
    local q = T.sqrt(T.tensor({ -4.0 }, { dtype = T.complex128 }))   -- 2i: angle = pi/2, d/dz gives i*z/|z|^2 = -0.5
    q.requires_grad = true
    q:angle():sum():backward()
    assert.near(-0.5, q.grad:real():item(), 1e-12)
    assert.near(0, q.grad:imag():item(), 1e-12)
    local k = T.sqrt(T.tensor({ -4.0 }, { dtype = T.complex128 }))
    k.requires_grad = true
    k:conj():real():sum():backward()
    assert.near(1, k.grad:real():item(), 1e-12)
  end)
end)
