-- Every differentiable C function (registered with LT_DIFF, so the autograd
-- trampoline routes it to the hook) must have a backward rule: without one
-- the failure would show only when someone calls backward through it.
local T = require "ltensor"
local ag = T.autograd

local function has_rule(name)
  if ag.rules[name] or ag.inplace_rules[name] or ag.crules[name] then return true end
  -- an in-place op without its own rule uses the out-of-place one (in Lua or C)
  local base = name:sub(1, -2)
  return name:sub(-1) == "_" and (ag.rules[base] ~= nil or ag.crules[base] ~= nil)
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
      assert.truthy(({ same = 1, bool = 1, float = 1, int64 = 1, index = 1, real = 1, logical = 1 })[op.rule], op.name)
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

-- The list is the truth (issue 19): for every line, the dtype rule it states
-- is what T.<name> gives on each dtype class.  An op that refuses a class
-- (bitwise ops on floats, sqrt of bool under strict rules ...) is skipped
-- for that class, but every line must run on at least two classes, so a
-- line cannot pass by refusing everything.
describe("the op list's dtype rules", function()
  local classes = {
    { name = "bool", make = function() return T.tensor({ true, false, true }) end },
    { name = "int32", make = function() return T.tensor({ 1, 2, 3 }, { dtype = T.int32 }) end },
    { name = "uint8", make = function() return T.tensor({ 1, 2, 3 }, { dtype = T.uint8 }) end },
    { name = "float64", make = function() return T.tensor({ 0.25, 0.5, 0.75 }, { dtype = T.float64 }) end },
    { name = "float16", make = function() return T.tensor({ 0.25, 0.5, 0.75 }, { dtype = T.float16 }) end },
    { name = "complex64", make = function() return T.tensor({ 0.25, 0.5, 0.75 }, { dtype = T.complex64 }) end },
  }
  -- the extra arguments an op needs beyond its tensors
  local extra = {
    clamp = { 0, 2 }, clamp_min = { 1 }, clamp_max = { 1 },
    cumsum = { 1 }, cumprod = { 1 }, softmax = { 1 }, log_softmax = { 1 },
    topk = { 2 }, sort = {}, argsort = {},
  }
  -- square is pow(x, 2): its Lua 2 takes part in the common dtype
  local implicit = { square = { 2 } }
  local function expected(rule, dt)
    if rule == "same" then return dt end
    if rule == "bool" then return T.bool end
    if rule == "logical" then return dt == T.uint8 and T.uint8 or T.bool end
    if rule == "index" then return T.int64 end
    if rule == "float" then
      return (dt == T.bool or not dt.is_floating_point and not dt.is_complex) and T.get_default_dtype() or dt
    end
    if rule == "int64" then
      return (dt == T.bool or not dt.is_floating_point and not dt.is_complex) and T.int64 or dt
    end
    if rule == "real" then
      if dt == T.complex64 then return T.float32 end
      if dt == T.complex128 then return T.float64 end
      return dt
    end
    error("unknown rule " .. tostring(rule))
  end

  for _, op in ipairs(T._op_list()) do
    it(op.name .. " gives the '" .. op.rule .. "' dtype on every class it accepts", function()
      local ran, wrong = 0, {}
      for _, c in ipairs(classes) do
        local args = {}
        for i = 1, op.arity do args[i] = c.make() end
        for _, a in ipairs(extra[op.name] or {}) do args[#args + 1] = a end
        local ok, r = pcall(T[op.name], (table.unpack or unpack)(args))
        if ok then
          ran = ran + 1
          local operands = { args[1] }
          for i = 2, #args do if type(args[i]) ~= "table" then operands[#operands + 1] = args[i] end end
          for _, s in ipairs(implicit[op.name] or {}) do operands[#operands + 1] = s end
          local common = #operands > 1 and T.result_type((table.unpack or unpack)(operands)) or args[1].dtype
          local want = expected(op.rule, common)
          if r.dtype ~= want then
            wrong[#wrong + 1] = ("%s -> %s (rule '%s' says %s)"):format(c.name, r.dtype.name, op.rule, want.name)
          end
        end
      end
      assert.are.same({}, wrong)
      assert.is_true(ran >= 2, op.name .. " ran on fewer than two dtype classes")
    end)
  end
end)

describe("the op list's documentation", function()
  it("has a reference entry (help) for every line", function()
    local help = require "ltensor.help"
    local missing = {}
    for _, op in ipairs(T._op_list()) do
      if not help.entry(op.name) and not help.entry("T." .. op.name) then missing[#missing + 1] = op.name end
    end
    assert.are.same({}, missing, "op-list lines without a help entry: " .. table.concat(missing, ", "))
  end)
end)

describe("the C rules' Lua functions (AG_FNS)", function()
  local function init(cfns)
    return pcall(T._ag_init, { rules = {}, inplace_rules = {}, no_self = {}, unknown = function() end,
      methods = {}, cfns = cfns })
  end
  it("are bound by name: a missing name is refused at load time", function()
    local ok, err = init({ mul = T.mul })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("cfns.add must be a function", 1, true), err)
  end)
  it("refuses a table with names the C rules do not use", function()
    local all = {}
    for _, n in ipairs({ "mul", "add", "sub", "div", "neg", "mm", "t", "transpose", "reshape", "expand", "pow",
      "zeros_like", "where", "le", "threshold_backward", "rsub", "sum", "add_", "unsqueeze", "squeeze", "matmul", "eq",
      "ge", "log", "logical_and", "real", "imag" }) do
      all[n] = T.add
    end
    all.extra = T.add
    local ok, err = init(all)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("cfns has 28 entries, the C rules use 27", 1, true), err)
  end)
end)
