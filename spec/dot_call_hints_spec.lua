-- A method called with '.' instead of ':' (issue 21 item 4): x.size(1),
-- m.parameters(), opt.step(), d.log_prob(x) say what happened and what to
-- write, in the words of x.sum()'s hint:
-- "...; a method is called with ':', as x:size(...)".
-- The tensor methods written in C know the call came through a field
-- (Lua's debug info, namewhat "field"); the Lua classes' methods check self.
-- The calls below are not tail calls (`local r = x.size(1)`): see the
-- pending case for LuaJIT.
local T = require "ltensor"

local function err_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end
local function says(expected, f, ...)
  assert.are.equal(expected, err_of(f, ...))
end

describe("a tensor method called with '.'", function()
  local x
  before_each(function() x = T.ones(2, 3) end)

  it("x.size(1): the 1 taken as the tensor is named", function()
    says("ltensor.size: bad argument #1 (ltensor.Tensor expected, got number; a method is called with ':', "
      .. "as x:size(...))", function() local r = x.size(1) return r end)
  end)
  it("x.view(2, 3)", function()
    says("ltensor.view: bad argument #1 (ltensor.Tensor expected, got number; a method is called with ':', "
      .. "as x:view(...))", function() local r = x.view(2, 3) return r end)
  end)
  it("x.sum() and x.sum(1)", function()
    says("ltensor.sum: bad argument #1 (ltensor.Tensor expected, got no value; a method is called with ':', "
      .. "as x:sum(...))", function() local r = x.sum() return r end)
    says("ltensor.sum: bad argument #1 (ltensor.Tensor expected, got number; a method is called with ':', "
      .. "as x:sum(...))", function() local r = x.sum(1) return r end)
  end)
  it("x.add(y) and x.mul(2): the lone argument taken as self, the second missing", function()
    says("ltensor.add: expected a tensor, number or boolean as argument 2 (got no value; a method is called "
      .. "with ':', as x:add(...))", function() local r = x.add(x) return r end)
    says("ltensor.mul: expected a tensor, number or boolean as argument 2 (got no value; a method is called "
      .. "with ':', as x:mul(...))", function() local r = x.mul(2) return r end)
    says("ltensor.matmul: bad argument #2 (ltensor.Tensor expected, got no value; a method is called with "
      .. "':', as x:matmul(...))", function() local r = x.matmul(x) return r end)
  end)
  it("methods written in Lua: x.roll(1, 1), x.backward(), x.det()", function()
    says("ltensor.roll: bad argument #1 (tensor expected, got number; a method is called with ':', "
      .. "as x:roll(...))", function() return x.roll(1, 1) end)
    says("ltensor.backward: bad argument #1 (tensor expected, got nil; a method is called with ':', "
      .. "as x:backward(...))", function() return x.backward() end)
    says("ltensor.linalg.det: bad argument #1 (tensor expected, got nil; a method is called with ':', "
      .. "as x:det(...))", function() return x.det() end)
  end)
  -- LuaJIT keeps no name for a function reached by a tail call
  -- (`return x.size(1)`), so the C side cannot tell it came through a field
  local tail_it = rawget(_G, "jit") and pending or it
  tail_it("a tail call x.size(1) (pending on LuaJIT: no debug name for a tail call)", function()
    says("ltensor.size: bad argument #1 (ltensor.Tensor expected, got number; a method is called with ':', "
      .. "as x:size(...))", function() return x.size(1) end)
  end)
  it("a call that is not through a field keeps the plain message", function()
    local size = x.size
    says("ltensor.size: bad argument #1 (ltensor.Tensor expected, got number)", function() return size(1) end)
  end)
  it("legal calls with a number first are untouched", function()
    assert.are.equal(3, T.add(1, T.tensor(2)):item())
    assert.are.equal(2, x:size(1))
    assert.are.same({ 3, 2 }, x:view(3, 2).shape)
  end)
end)

describe("an nn module's method called with '.'", function()
  local x, m
  before_each(function() x = T.ones(2, 3) m = T.nn.Linear(3, 2) end)

  it("m.parameters(), m.train(), m.zero_grad(), m.state_dict()", function()
    for _, name in ipairs({ "parameters", "train", "eval", "zero_grad", "state_dict", "children", "modules" }) do
      says("ltensor.nn.Module." .. name .. ": bad self (ltensor.nn.Module expected, got nil); a method is called "
        .. "with ':', as m:" .. name .. "(...)", function() return m[name]() end)
    end
  end)
  it("m.load_state_dict(sd) and m.to(dtype): the argument taken as self is named", function()
    local sd = m:state_dict()
    says("ltensor.nn.Module.load_state_dict: bad self (ltensor.nn.Module expected, got ltensor.nn.StateDict); "
      .. "a method is called with ':', as m:load_state_dict(...)", function() return m.load_state_dict(sd) end)
    says("ltensor.nn.Module.to: bad self (ltensor.nn.Module expected, got ltensor.dtype); a method is called "
      .. "with ':', as m:to(...)", function() return m.to(T.float64) end)
  end)
  it("m.forward(x), for a library module and a user's class", function()
    says("ltensor.nn.Linear.forward: bad self (ltensor.nn.Module expected, got ltensor.Tensor); a method is "
      .. "called with ':', as m:forward(...)", function() return m.forward(x) end)
    local Net = T.nn.Module:extend("Net")
    function Net:init() self.fc = T.nn.Linear(3, 2) end
    function Net:forward(a) return self.fc(a) end
    local net = Net()
    assert.are.same({ 2, 2 }, net(x).shape)
    assert.are.same({ 2, 2 }, net:forward(x).shape)
    says("ltensor.nn.Net.forward: bad self (ltensor.nn.Module expected, got ltensor.Tensor); a method is "
      .. "called with ':', as m:forward(...)", function() return net.forward(x) end)
    says("ltensor.nn.Module.parameters: bad self (ltensor.nn.Module expected, got nil); a method is called "
      .. "with ':', as m:parameters(...)", function() return net.parameters() end)
  end)
  it("a class's static function is not taken for a method", function()
    assert.are.same({ 2, 2 }, T.nn.Transformer.generate_square_subsequent_mask(2).shape)
  end)
end)

describe("an optimizer's and a scheduler's method called with '.'", function()
  local m, opt, sched
  before_each(function()
    m = T.nn.Linear(3, 2)
    opt = T.optim.SGD(m:parameters(), { lr = 0.1 })
    sched = T.optim.lr_scheduler.StepLR(opt, 2)
  end)

  it("opt.step(), opt.zero_grad(), opt.load_state_dict(sd)", function()
    says("ltensor.optim.Optimizer.step: bad self (ltensor.optim.Optimizer expected, got nil); a method is "
      .. "called with ':', as opt:step(...)", function() return opt.step() end)
    says("ltensor.optim.Optimizer.zero_grad: bad self (ltensor.optim.Optimizer expected, got nil); a method "
      .. "is called with ':', as opt:zero_grad(...)", function() return opt.zero_grad() end)
    local sd = opt:state_dict()
    says("ltensor.optim.Optimizer.load_state_dict: bad self (ltensor.optim.Optimizer expected, got table); a "
      .. "method is called with ':', as opt:load_state_dict(...)", function() return opt.load_state_dict(sd) end)
  end)
  it("a class's own step (LBFGS) says the same", function()
    local lb = T.optim.LBFGS(m:parameters())
    says("ltensor.optim.LBFGS.step: bad self (ltensor.optim.Optimizer expected, got function); a method is "
      .. "called with ':', as opt:step(...)", function() return lb.step(function() return 0 end) end)
  end)
  it("sched.step(), sched.get_last_lr()", function()
    says("ltensor.optim.lr_scheduler.LRScheduler.step: bad self (ltensor.optim.lr_scheduler.LRScheduler "
      .. "expected, got nil); a method is called with ':', as sched:step(...)", function() return sched.step() end)
    says("ltensor.optim.lr_scheduler.LRScheduler.get_last_lr: bad self (ltensor.optim.lr_scheduler.LRScheduler "
      .. "expected, got nil); a method is called with ':', as sched:get_last_lr(...)",
      function() return sched.get_last_lr() end)
  end)
  it("the ':' calls work", function()
    opt:zero_grad()
    opt:step()
    sched:step()
    assert.are.equal(0.1, sched:get_last_lr()[1])
  end)
end)

describe("a data loader's and a distribution's method called with '.'", function()
  it("loader.iter(), ds.get(1)", function()
    local ds = T.utils.data.TensorDataset(T.ones(4, 3))
    local loader = T.utils.data.DataLoader(ds, { batch_size = 2 })
    says("ltensor.utils.data.DataLoader.iter: bad self (ltensor.utils.data.DataLoader expected, got nil); a "
      .. "method is called with ':', as loader:iter(...)", function() return loader.iter() end)
    says("ltensor.utils.data.TensorDataset.get: bad self (ltensor.utils.data.TensorDataset expected, got "
      .. "number); a method is called with ':', as ds:get(...)", function() return ds.get(1) end)
    local n = 0
    for xb in loader:iter() do n = n + xb:size(1) end
    assert.are.equal(4, n)
  end)
  it("d.sample(), d.log_prob(x), Distribution.stddev(1)", function()
    local d = T.distributions.Normal(0, 1)
    says("ltensor.distributions.Normal.sample: bad self (ltensor.distributions.Distribution expected, got "
      .. "nil); a method is called with ':', as d:sample(...)", function() return d.sample() end)
    says("ltensor.distributions.Normal.log_prob: bad self (ltensor.distributions.Distribution expected, got "
      .. "ltensor.Tensor); a method is called with ':', as d:log_prob(...)",
      function() return d.log_prob(T.zeros(2)) end)
    says("ltensor.distributions.Distribution.stddev: bad self (ltensor.distributions.Distribution expected, "
      .. "got number); a method is called with ':', as d:stddev(...)",
      function() return T.distributions.Distribution.stddev(1) end)
    -- the accessors and ':' calls still work
    assert.are.equal(1, d.stddev:item())
    assert.are.equal(0, d:sample():dim())
  end)
end)
