-- nn: modules, parameters and state dicts; nn.functional losses against
-- values computed by PyTorch 1.13.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local nn, F = T.nn, T.nn.functional

local function close(t, want, tol)
  tol = tol or 1e-5
  local got = type(t) == "number" and { t } or t:reshape({ t:numel() }):totable()
  want = type(want) == "number" and { want } or want
  assert.are.equal(#want, #got)
  for i = 1, #want do
    assert(math.abs(got[i] - want[i]) <= tol * (1 + math.abs(want[i])),
      string.format("element %d: got %.9g want %.9g", i, got[i], want[i]))
  end
end

describe("nn.Module", function()
  it("Linear has PyTorch's shapes and init bound", function()
    T.manual_seed(1)
    local l = nn.Linear(16, 5)
    assert.are.same({ 5, 16 }, l.weight.shape)
    assert.are.same({ 5 }, l.bias.shape)
    assert.is_true(l.weight.requires_grad and l.weight.is_leaf)
    assert(T.amax(T.abs(l.weight)):item() <= 0.25)
    assert(T.amax(T.abs(l.bias)):item() <= 0.25)
    assert.is_nil(nn.Linear(3, 2, false).bias)
    assert.are.same({ 7, 5 }, l(T.randn({ 7, 16 })).shape)
    assert.are.same({ 5 }, l(T.randn({ 16 })).shape)
  end)

  it("parameters, named_parameters, children, state_dict, load_state_dict", function()
    local m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    local names = {}
    for i, np in ipairs(m:named_parameters()) do names[i] = np[1] end
    assert.are.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, names)
    assert.are.equal(4, #m:parameters())
    assert.are.equal(3, #m:children())
    assert.are.equal(m[1], m:children()[1])
    local sd = m:state_dict()
    assert.are.same({ 4, 3 }, sd["0.weight"].shape)
    assert.is_false(sd["0.weight"].requires_grad)
    local m2 = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    m2:load_state_dict(sd)
    local x = T.randn({ 2, 3 })
    assert.is_true(T.equal(m(x), m2(x)))
    assert.has_error(function() m2:load_state_dict({ ["0.weight"] = T.zeros(4, 3) }) end)
    assert.has_error(function()
      local bad = m:state_dict() bad["0.bias"] = T.zeros(5) m2:load_state_dict(bad)
    end)
  end)

  it("custom modules register parameters and submodules on assignment", function()
    local Net = nn.Module:extend("Net")
    function Net:init(d)
      self.scale = nn.Parameter(T.ones(d))
      self.fc = nn.Linear(d, 1)
      self.note = "plain field"
    end
    function Net:forward(x) return self.fc(x * self.scale) end
    local net = Net(3)
    local names = {}
    for i, np in ipairs(net:named_parameters()) do names[i] = np[1] end
    assert.are.same({ "scale", "fc.weight", "fc.bias" }, names)
    assert.are.equal("plain field", net.note)
    local y = net(T.randn({ 4, 3 }))
    y:sum():backward()
    assert.are.same({ 3 }, net.scale.grad.shape)
    net:zero_grad()
    assert.are.same({ 0.0, 0.0, 0.0 }, net.scale.grad:totable())
  end)

  it("train/eval reach children and control Dropout", function()
    T.manual_seed(0)
    local m = nn.Sequential(nn.Dropout(0.5))
    local x = T.ones(1000)
    local y = m(x)
    local zeros = T.eq(y, 0):sum():item()
    assert(zeros > 400 and zeros < 600)
    close(T.amax(y):item(), 2.0)
    m:eval()
    assert.is_false(m[1].training)
    assert.is_true(T.equal(m(x), x))
    m:train()
    assert.is_true(m[1].training)
    assert.has_error(function() nn.Dropout(1.5) end)
  end)

  it("Embedding takes 1-based indices and LayerNorm normalizes the last dims", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local e = nn.Embedding(5, 3)
    local out = e(T.tensor({ { 1, 5 }, { 5, 2 } }))
    assert.are.same({ 2, 2, 3 }, out.shape)
    assert.is_true(T.equal(out[1][2], e.weight[5]))
    out:sum():backward()
    close(e.weight.grad:sum(1), { 4, 4, 4 })
    close(e.weight.grad[5], { 2, 2, 2 })
    local ln = nn.LayerNorm(4)
    local y = ln(T.tensor({ { 1.0, 2.0, 3.0, 4.0 } }))
    -- torch.nn.LayerNorm(4)(torch.tensor([[1.,2.,3.,4.]]))
    close(y, { -1.3416355, -0.4472118, 0.4472118, 1.3416355 })
  end)

  it("activation modules", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local x = T.tensor({ -1.0, 0.0, 2.0 })
    close(nn.ReLU()(x), { 0, 0, 2 })
    close(nn.Tanh()(x), { math.tanh(-1), 0, math.tanh(2) })
    close(nn.Sigmoid()(x), { 1 / (1 + math.exp(1)), 0.5, 1 / (1 + math.exp(-2)) })
    -- torch.nn.GELU()(torch.tensor([-1., 0., 2.]))
    close(nn.GELU()(x), { -0.15865526, 0.0, 1.9544997 })
  end)
end)

describe("nn.functional losses", function()
  local logits = T.tensor({ { 1.0, 2.0, 0.5 }, { 0.1, -1.0, 3.0 } })
  local target = T.tensor({ 2, 3 })

  it("cross_entropy and nll_loss with 1-based classes and reductions", function()
    -- logsumexp(row) - row[target], computed in float64; PyTorch's weighted
    -- mean divides by the sum of the targets' weights
    close(F.cross_entropy(logits, target), 0.26757150153)
    close(F.cross_entropy(logits, target, { reduction = "sum" }), 0.53514300307)
    close(F.cross_entropy(logits, target, { reduction = "none" }), { 0.46436878411, 0.07077421896 })
    close(F.nll_loss(F.log_softmax(logits, 2), target), 0.26757150153)
    close(F.cross_entropy(logits, target, { weight = T.tensor({ 1.0, 2.0, 3.0 }) }), 0.22821204502)
    assert.has_error(function() F.cross_entropy(logits, T.tensor({ 0, 3 })) end,
      "ltensor.nn.functional.nll_loss: Target 0 is out of bounds. (class targets are 1-based: 1..3)")
    assert.has_error(function() F.cross_entropy(logits, T.tensor({ 4, 1 })) end,
      "ltensor.nn.functional.nll_loss: Target 4 is out of bounds. (class targets are 1-based: 1..3)")
    assert.has_error(function() F.cross_entropy(logits, target, { reduction = "avg" }) end)
  end)

  it("cross_entropy gradient is softmax minus one-hot over N", function()
    local x = logits:clone():requires_grad_()
    F.cross_entropy(x, target):backward()
    local p = T.softmax(logits, 2)
    local want = (p - T.tensor({ { 0.0, 1.0, 0.0 }, { 0.0, 0.0, 1.0 } })) / 2
    close(x.grad, want:reshape({ 6 }):totable())
  end)

  it("mse_loss", function()
    local a, b = T.tensor({ 1.0, 2.0, 4.0 }), T.tensor({ 1.5, 2.0, 2.0 })
    close(F.mse_loss(a, b), (0.25 + 4) / 3)
    close(F.mse_loss(a, b, { reduction = "sum" }), 4.25)
    close(F.mse_loss(a, b, "none"), { 0.25, 0, 4 })
  end)
end)

describe("training", function()
  -- In a fresh lua5.4: inside the spec run, the live heap other spec files
  -- leave behind (fixtures, closures) sets Lua's own pacing (the collector
  -- lets garbage grow to about the live heap before a cycle), which would
  -- measure the earlier specs, not this loop.
  it("keeps memory flat over many steps (graphs are freed)", function()
    local f = io.open("/proc/self/status")
    if not f then return end
    f:close()
    local script = os.tmpname()
    local h = assert(io.open(script, "w"))
    h:write([[
      local T = require "ltensor"
      local nn, F = T.nn, T.nn.functional
      local function rss()
        local h = io.open("/proc/self/status") local s = h:read("*a") h:close()
        return tonumber(s:match("VmRSS:%s*(%d+)"))
      end
      T.manual_seed(0)
      local model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3))
      local opt = T.optim.SGD(model:parameters(), { lr = 0.05, momentum = 0.9 })
      local x, y = T.randn({ 16, 8 }), T.randint(1, 4, { 16 })
      local base
      for step = 1, 3000 do
        opt:zero_grad()
        F.cross_entropy(model(x), y):backward()
        opt:step()
        if step == 1000 then base = rss() end
      end
      print("growth_kb=" .. (rss() - base))
    ]])
    h:close()
    local p = assert(io.popen("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='build/?.so;;' lua5.4 " .. script .. " 2>&1"))
    local out = p:read("*a")
    p:close()
    os.remove(script)
    local growth = tonumber(out:match("growth_kb=(%-?%d+)"))
    assert(growth, out)
    assert(growth < 4096, "RSS grew by " .. growth .. " kB")
  end)
end)
