-- A tensor released with t:free() (or a <close> variable), passed where a
-- function reads tensor data: a clear "ltensor.<fn>: ... was freed" error,
-- never a read of released memory.  Each case below crashed (a NULL storage
-- read: SIGSEGV, or UBSan in build/asan) or raised in another function's
-- name before the checks it tests; tools/freed_probe.lua replays every
-- captured valid call with each of its tensors freed.
local T = require "ltensor"
local F = T.nn.functional

local function freed(...)
  local x = T.ones(...)
  x:free()
  return x
end
local function freed_scalar(v)
  local x = T.tensor(v)
  x:free()
  return x
end
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return e
end
-- an options table (or list) whose missing keys free x when they are read:
-- a C function must read its options raw, or x is gone by the time it reads
-- its data
local function freeing(x, t)
  return setmetatable(t or {}, { __index = function() x:free() return nil end })
end

describe("a freed value tensor", function()
  it("masked_fill and masked_fill_ refuse it", function()
    local m = T.tensor({ true, false, true })
    assert.equal("ltensor.masked_fill: bad argument #3 (tensor was freed)",
      err_of(T.masked_fill, T.zeros(3), m, freed_scalar(1.5)))
    assert.equal("ltensor.masked_fill_: bad argument #3 (tensor was freed)",
      err_of(T.masked_fill_, T.zeros(3), m, freed_scalar(1.5)))
    -- as a method, self is not counted
    assert.equal("ltensor.masked_fill: bad argument #2 (tensor was freed)",
      err_of(function() local r = T.zeros(3):masked_fill(m, freed_scalar(1.5)) return r end))   -- (no tail call: LuaJIT drops its frame)
  end)

  it("index_fill and index_fill_ refuse it", function()
    local i = T.tensor({ 1 })
    assert.equal("ltensor.index_fill: bad argument #4 (tensor was freed)",
      err_of(T.index_fill, T.zeros(3), 1, i, freed_scalar(1.5)))
    assert.equal("ltensor.index_fill_: bad argument #4 (tensor was freed)",
      err_of(T.index_fill_, T.zeros(3), 1, i, freed_scalar(1.5)))
  end)

  it("inside T.tensor's nested list is named by its position", function()
    assert.equal("ltensor.tensor: element [1] is a tensor that was freed",
      err_of(T.tensor, { freed_scalar(1.5), 2 }))
    assert.equal("ltensor.tensor: element [2][1] is a tensor that was freed",
      err_of(T.tensor, { { 1 }, { freed_scalar(2) } }))
  end)
end)

describe("a freed tensor inside a table argument", function()
  it("an index list names the position, not a stack slot", function()
    local k = T.tensor({ 1 })
    k:free()
    assert.equal("ltensor.index: index tensor at position 2 was freed",
      err_of(function() return T.zeros(3, 3)[{ 1, k }] end))
  end)

  it("out= names the option", function()
    assert.equal("ltensor.add: bad argument #3 (option 'out': tensor was freed)",
      err_of(T.add, T.zeros(3), 1, { out = freed(3) }))
    assert.equal("ltensor.where: bad argument #4 (option 'out': tensor was freed)",
      err_of(T.where, T.tensor({ true, false, true }), T.ones(3), 0, { out = freed(3) }))
    assert.equal("ltensor.add: bad argument #3 (option 'out': ltensor.Tensor expected, got number)",
      err_of(T.add, T.zeros(3), 1, { out = 5 }))
  end)
end)

describe("options and sizes are read raw", function()
  it("a reduction's options table cannot free the input in the middle of the call", function()
    local x = T.ones(3)
    assert.same({}, T.sum(x, freeing(x, { keepdim = false })).shape)
    x = T.ones(3, 2)
    assert.same({ 2 }, T.std(x, freeing(x, { dim = 1 })).shape)
    x = T.ones(3, 2)
    assert.same({ 2 }, T.var(x, freeing(x, { dim = 1 })).shape)
    x = T.ones(3, 2)
    assert.same({ 2 }, T.norm(x, freeing(x, { dim = 1 })).shape)
    x = T.ones(3, 2)
    assert.equal(3, x:to(freeing(x, { dtype = T.float64 })):size(1))
  end)

  it("a size list's __len and __index are not called", function()
    local g = T.ones(2)
    local called = false
    local sz = setmetatable({}, { __len = function() called = true return 2 end,
                                  __index = function() called = true g:free() return 2 end })
    -- (read raw, the list is empty: a 0-dim shape, which has no diagonal)
    assert.matches("^ltensor%.diagonal: dimension out of range", err_of(T._diagonal_scatter, g, sz, 0, 1, 2))
    assert.is_false(called)
    assert.equal(2, g:numel())
  end)
end)

describe("autograd with freed tensors", function()
  it("a freed output or input of backward/grad is named", function()
    local p = T.ones(3, { requires_grad = true })
    local l = (p * 2):sum()
    l:free()
    assert.equal("ltensor.backward: element 1 of tensors was freed", err_of(function() l:backward() end))
    assert.equal("ltensor.grad: element 1 of tensors was freed", err_of(T.autograd.grad, { l }, { p }))
    local q = T.ones(3, { requires_grad = true })
    local y = (q * 2):sum()
    q:free()
    assert.equal("ltensor.grad: inputs[1] was freed", err_of(T.autograd.grad, { y }, { q }))
  end)

  it("a hook that frees its gradient or returns a freed tensor is blamed", function()
    local p = T.ones(3, { requires_grad = true })
    local y = p * 2
    y:register_hook(function(g) g:free() end)
    assert.equal("ltensor.backward: hook 1 freed the gradient it was given or returned a freed tensor",
      err_of(function() (y * 3):sum():backward() end))
    local q = T.ones(3, { requires_grad = true })
    q:register_hook(function(g) local z = g:clone() z:free() return z end)
    assert.equal("ltensor.backward: hook 1 freed the gradient it was given or returned a freed tensor",
      err_of(function() (q * 3):sum():backward() end))
  end)

  it("a custom Function's backward returning a freed gradient is named", function()
    local Fn = T.autograd.Function({
      forward = function(_, x) return x * 2 end,
      backward = function(_, g) local z = g * 2 z:free() return z end,
    })
    local p = T.ones(3, { requires_grad = true })
    assert.equal("ltensor.backward: the gradient FunctionBackward returned for its input 1 was freed",
      err_of(function() Fn.apply(p):sum():backward() end))
  end)

  it("a freed .grad is not accumulated into", function()
    local p = T.ones(3, { requires_grad = true })
    ;(p * 2):sum():backward()
    p.grad:free()
    assert.equal("ltensor.backward: the .grad of a tensor was freed (set it to nil to drop it instead)",
      err_of(function() (p * 2):sum():backward() end))
    p.grad = nil
    ;(p * 2):sum():backward()
    assert.same({ 2, 2, 2 }, p.grad:totable())
  end)
end)

describe("nn.functional's argument checks", function()
  it("name the function and the argument", function()
    assert.equal("ltensor.nn.functional.linear: bad argument #3 'bias' (tensor was freed)",
      err_of(F.linear, T.zeros(2, 3), T.ones(4, 3), freed(4)))
    assert.equal("ltensor.nn.functional.conv2d: bad argument #2 'weight' (tensor was freed)",
      err_of(F.conv2d, T.zeros(1, 1, 3, 3), freed(1, 1, 2, 2)))
    assert.equal("ltensor.nn.functional.batch_norm: bad argument #2 'running_mean' (tensor was freed)",
      err_of(F.batch_norm, T.zeros(2, 3), freed(3), T.ones(3)))
    assert.equal("ltensor.nn.functional.cross_entropy: bad argument #3 'weight' (tensor was freed)",
      err_of(F.cross_entropy, T.zeros(2, 3), T.tensor({ 1, 2 }), { weight = freed(3) }))
    -- the target was read through x.shape first: "ltensor.index: ..."
    local tgt = T.tensor({ 1, 2 })
    tgt:free()
    assert.equal("ltensor.nn.functional.cross_entropy: bad argument #2 'target' (tensor was freed)",
      err_of(F.cross_entropy, T.zeros(2, 3), tgt))
    assert.equal("ltensor.nn.functional.nll_loss: bad argument #2 'target' (tensor was freed)",
      err_of(F.nll_loss, T.zeros(2, 3), tgt))
    assert.is_false(T._is_freed(T.ones(1)))
    assert.is_true(T._is_freed(freed(1)))
    assert.is_false(T._is_freed(1))
  end)
end)

describe("a free() made by a __gc finalizer while an op runs", function()
  -- the op's allocations run collection steps, and a step runs the
  -- finalizers of dead objects: x:free() in one ran in the middle of the op
  -- (a NULL storage read: SIGSEGV; a read of the released block under ASan)
  local ops = {
    add = function(x) return x + 1 end,
    matmul = function(x) return x:matmul(x) end,
    cat = function(x) return T.cat({ x, x }) end,
    sum = function(x) return x:sum(1) end,
    clone = function(x) return x:clone() end,
    gather = function(x) return T.gather(x, 1, T.ones(300, 300, { dtype = T.int64 })) end,
    conv2d = function(x) return F.conv2d(x:view(1, 1, 300, 300), T.ones(2, 1, 3, 3)) end,
  }
  -- an object with a finalizer, made garbage (a table's __gc from Lua 5.2)
  local function on_gc(f)
    if newproxy then getmetatable(newproxy(true)).__gc = f return end
    setmetatable({}, { __gc = f })
  end
  local names = {}
  for k in pairs(ops) do names[#names + 1] = k end
  table.sort(names)
  for _, name in ipairs(names) do
    it("is carried out after the op returns (" .. name .. ")", function()
      local op = ops[name]
      local deferred = 0
      for i = 1, 5 do
        T.manual_seed(i)
        local x = T.randn(300, 300)
        local want = op(x:clone())
        local during
        on_gc(function()
          x:free()
          during = not T._is_freed(x)   -- deferred: an op was running
        end)
        -- the op's first block goes over the limit: a full collection runs
        -- (the finalizer above with it) and g's dead block makes room
        local g = T.empty(1024, 1024)
        g = nil
        local prev = T.set_memory_limit(T.memory_stats().live)
        local ok, got = pcall(op, x)
        T.set_memory_limit(prev)
        assert(ok, got)
        assert.is_true(T.equal(want, got), name)
        if during ~= nil then
          deferred = deferred + 1
          assert.is_true(during)
          assert.is_false(T._is_freed(x))   -- still usable until then
          T.ones(1):free()                  -- the next free() outside an op carries it out
          assert.is_true(T._is_freed(x))
          assert.equal("ltensor.sum: bad self (tensor was freed)", err_of(function() local r = x:sum() return r end))
        end
      end
      -- (LuaJIT's collections from inside a C function ran no finalizer
      -- here: the case is checked where it happens)
      if _VERSION == "Lua 5.4" then assert.equal(5, deferred, "the finalizer did not run during " .. name) end
    end)
  end

  it("is immediate outside ops, also inside T.with_promotion's function", function()
    local x = T.ones(100)
    x:free()
    assert.is_true(T._is_freed(x))
    local y = T.ones(100)
    T.with_promotion("torch", function() y:free() end)
    assert.is_true(T._is_freed(y))
  end)
end)

describe("a freed tensor passed to a public function written in Lua", function()
  -- the first C function its body handed the tensor to raised in its own
  -- name: "ltensor.index: ..." (x.shape), "ltensor.is_floating_point: ..."
  it("is refused in the name of the function called", function()
    local cases = {
      { "ltensor.lgamma: bad argument #1 (tensor was freed)", T.lgamma, freed(3) },
      { "ltensor.erfinv: bad argument #1 (tensor was freed)", T.erfinv, freed(3) },
      { "ltensor.linalg.solve: bad argument #2 (tensor was freed)", T.linalg.solve, T.eye(2), freed(2) },
      { "ltensor.linalg.cross: bad argument #2 (tensor was freed)", T.linalg.cross, T.ones(3), freed(3) },
      { "ltensor.orgqr: bad argument #1 (tensor was freed)", T.orgqr, freed(2, 2), T.ones(2) },
      { "ltensor.nn.Parameter: bad argument #1 (tensor was freed)", T.nn.Parameter, freed(2) },
      { "ltensor.distributions.Normal.log_prob: bad argument #1 (tensor was freed)",
        function(v) local d = T.distributions.Normal(0, 1) local r = d:log_prob(v) return r end, freed(2) },
    }
    for _, c in ipairs(cases) do
      assert.equal(c[1], err_of(c[2], table.unpack(c, 3)))
    end
  end)

  it("as self of a method, and as an nn module's input", function()
    assert.equal("ltensor.new_zeros: bad self (tensor was freed)",
      err_of(function() local y = freed(3):new_zeros(2) return y end))
    assert.equal("ltensor.new_zeros: bad argument #1 (tensor was freed)",
      err_of(function() local y = T.ones(3):new_zeros(freed(2)) return y end))
    assert.equal("ltensor.detach: bad self (tensor was freed)",
      err_of(function() local y = freed(3):detach() return y end))
    local conv, emb = T.nn.Conv2d(1, 1, 3), T.nn.Embedding(4, 2)
    assert.equal("ltensor.nn.Conv2d: bad argument #1 (tensor was freed)",
      err_of(function() local y = conv(freed(1, 1, 4, 4)) return y end))
    assert.equal("ltensor.nn.Embedding: bad argument #1 (tensor was freed)",
      err_of(function() local y = emb:forward(freed(2)) return y end))
  end)

  it("in a list of tensors, by its position", function()
    assert.equal("ltensor.linalg.multi_dot: bad argument #1 (tensor at position 2 was freed)",
      err_of(T.linalg.multi_dot, { T.ones(2, 2), freed(2, 2) }))
    assert.equal("ltensor.nn.utils.rnn.pad_sequence: bad argument #1 (tensor at position 2 was freed)",
      err_of(T.nn.utils.rnn.pad_sequence, { T.ones(2), freed(2) }))
    -- a list of numbers is not scanned; live tensors pass
    assert.same({ 2, 2 }, T.linalg.multi_dot({ T.ones(2, 2), T.ones(2, 2) }).shape)
  end)

  it("given to a dataset class called as a function (TensorDataset)", function()
    assert.equal("ltensor.utils.data.TensorDataset: bad argument #2 (tensor was freed)",
      err_of(function() local d = T.utils.data.TensorDataset(T.ones(3, 2), freed(3)) return d end))
  end)
end)

describe("gather and index_select's out=", function()
  -- the options were not read: a freed out= (or any other) was accepted
  -- and ignored
  local x = T.tensor({ { 0, 1, 2 }, { 3, 4, 5 }, { 6, 7, 8 } }, { dtype = T.float32 })
  local idx = T.tensor({ { 1 }, { 3 }, { 2 } })

  it("refuses a freed tensor by name", function()
    assert.equal("ltensor.gather: bad argument #4 (option 'out': tensor was freed)",
      err_of(T.gather, x, 2, idx, { out = freed(3, 1) }))
    assert.equal("ltensor.index_select: bad argument #4 (option 'out': tensor was freed)",
      err_of(T.index_select, x, 1, T.tensor({ 1, 2 }), { out = freed(2, 3) }))
    assert.equal("ltensor.gather: bad argument #3 (option 'out': tensor was freed)",
      err_of(function() local r = x:gather(2, idx, { out = freed(3, 1) }) return r end))
  end)

  it("writes the result into out and returns it", function()
    local o = T.zeros(3, 1)
    assert.is_true(rawequal(o, T.gather(x, 2, idx, { out = o })))
    assert.same({ { 0 }, { 5 }, { 7 } }, o:totable())
    local o2 = T.zeros(2, 3)
    assert.is_true(rawequal(o2, x:index_select(1, T.tensor({ 3, 1 }), { out = o2 })))
    assert.same({ { 6, 7, 8 }, { 0, 1, 2 } }, o2:totable())
    assert.same({ { 0 }, { 5 }, { 7 } }, T.gather(x, 2, idx, { sparse_grad = false }):totable())
  end)

  it("refuses a wrong shape, dtype or key", function()
    assert.equal("ltensor.gather: output with shape [5] doesn't match the result shape [3, 1]",
      err_of(T.gather, x, 2, idx, { out = T.zeros(5) }))
    assert.equal("ltensor.index_select: Expected out tensor to have dtype float32, but got float64 instead",
      err_of(T.index_select, x, 1, T.tensor({ 1 }), { out = T.zeros(1, 3, { dtype = T.float64 }) }))
    assert.equal("ltensor.gather: unknown option 'outt' (did you mean 'out'?)", err_of(T.gather, x, 2, idx, { outt = 1 }))
    assert.equal("ltensor.gather: bad argument #5 (unexpected extra argument (got number))",
      err_of(T.gather, x, 2, idx, nil, 5))
  end)
end)

describe("the other functions with out=", function()
  -- reductions, T.linalg and nn.functional.normalize took out= among their
  -- options and ignored it: a freed one passed unseen, a live one stayed
  -- unwritten
  it("refuse a freed out by name", function()
    local x = T.tensor({ { 0, 1, 2 }, { 3, 4, 5 } }, { dtype = T.float32 })
    for _, f in ipairs({ "sum", "mean", "prod", "amax", "argmax", "all", "std", "var", "norm", "logsumexp", "max" }) do
      assert.equal("ltensor." .. f .. ": bad argument #2 (option 'out': tensor was freed)",
        err_of(T[f], x, { out = freed(1) }), f)
    end
    local A = T.tensor({ { 2, 1 }, { 1, 3 } }, { dtype = T.float32 })
    assert.equal("ltensor.linalg.solve: bad argument #3 (option 'out': tensor was freed)",
      err_of(T.linalg.solve, A, T.ones(2), { out = freed(2) }))
    assert.equal("ltensor.linalg.vector_norm: bad argument #2 (option 'out': tensor was freed)",
      err_of(T.linalg.vector_norm, T.ones(3), { out = freed(1) }))
    -- a tensor option of a Lua function: formatted into a message (ltensor.__tostring) or read by
    -- another op (ltensor.to) before
    assert.equal("ltensor.linalg.vector_norm: bad argument #2 (option 'ord': tensor was freed)",
      err_of(T.linalg.vector_norm, T.ones(3), { ord = freed({}) }))
    assert.equal("ltensor.linalg.pinv: bad argument #2 (option 'rtol': tensor was freed)",
      err_of(T.linalg.pinv, A, { rtol = freed({}) }))
    assert.equal("ltensor.linalg.lu_factor: bad option 'out' (element 1: tensor was freed)",
      err_of(T.linalg.lu_factor, A, { out = { freed(2, 2), T.zeros(2, { dtype = T.int32 }) } }))
    assert.equal("ltensor.nn.functional.normalize: bad option 'out' (tensor was freed)",
      err_of(F.normalize, T.ones(2, 2), { out = freed(2, 2) }))
  end)

  it("write into a live one and return it", function()
    local x = T.tensor({ { 0, 1, 2 }, { 3, 4, 5 } }, { dtype = T.float32 })
    local o = T.zeros(2)
    assert.is_true(rawequal(o, T.sum(x, 2, { out = o })))
    assert.same({ 3, 12 }, o:totable())
    local o0 = T.zeros({})
    assert.is_true(rawequal(o0, x:mean({ out = o0 })))
    assert.equal(2.5, o0:item())
    assert.equal("ltensor.sum: output with shape [3] doesn't match the result shape []",
      err_of(T.sum, x, { out = T.zeros(3) }))
    assert.equal("ltensor.max: out= with a dim is not supported (the result is a (values, indices) pair)",
      err_of(T.max, x, 1, { out = T.zeros(3) }))
    local A = T.tensor({ { 2, 1 }, { 1, 3 } }, { dtype = T.float32 })
    local s = T.zeros(2)
    assert.is_true(rawequal(s, T.linalg.solve(A, T.tensor({ 3, 4 }, { dtype = T.float32 }), { out = s })))
    assert.is_true(T.allclose(s, T.ones(2)))
    local LU, piv = T.zeros(2, 2), T.zeros(2, { dtype = T.int32 })
    local a, b = T.linalg.lu_factor(A, { out = { LU, piv } })
    assert.is_true(rawequal(a, LU) and rawequal(b, piv))
    assert.same({ 1, 2 }, piv:totable())
    local n = T.zeros(2, 2)
    assert.is_true(rawequal(n, F.normalize(T.ones(2, 2), { out = n })))
    assert.is_true(T.allclose(n, T.full({ 2, 2 }, math.sqrt(0.5))))
  end)
end)
