-- Nested checkpoints in safetensors (issue 21 item 5, SPEC §12): model and
-- optimizer state, epoch and config in one file that other safetensors
-- readers still see as tensors.
local T = require "ltensor"
local host = require "spec.host"

local function tmp() local p = os.tmpname() os.remove(p) return p .. ".safetensors" end
local function header(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  local n = 0
  for i = 8, 1, -1 do n = n * 256 + s:byte(i) end
  return T._json.decode(s:sub(9, 8 + n))
end

describe("T.save / T.load of a nested checkpoint", function()
  it("brings back model state, optimizer state, epoch and config, nested as saved", function()
    T.manual_seed(0)
    local model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 1))
    local opt = T.optim.Adam(model:parameters(), { lr = 0.01 })
    local x, y = T.randn(8, 3), T.randn(8, 1)
    local function step(m, o)
      o:zero_grad()
      local loss = T.nn.functional.mse_loss(m(x), y)
      loss:backward()
      o:step()
      return loss:item()
    end
    step(model, opt)
    local path = tmp()
    T.save(path, { model = model:state_dict(), optimizer = opt:state_dict(), epoch = 10,
      config = { name = "run-1", hidden = { 4, 1 }, dropout = 0.25, shuffle = true } })
    local ck, meta = T.load(path)
    os.remove(path)
    assert.equal(10, ck.epoch)
    assert.equal("run-1", ck.config.name)
    assert.are.same({ 4, 1 }, ck.config.hidden)
    assert.equal(0.25, ck.config.dropout)
    assert.is_true(ck.config.shuffle)
    assert.are.same({}, meta)   -- the tree is T.load's, not the user's metadata
    -- a fresh model and optimizer continue exactly where the first left off
    local model2 = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 1))
    local opt2 = T.optim.Adam(model2:parameters(), { lr = 1 })
    model2:load_state_dict(ck.model)
    opt2:load_state_dict(ck.optimizer)
    assert.equal(0.01, opt2.param_groups[1].lr)
    assert.equal(step(model, opt), step(model2, opt2))
    assert.is_true(T.equal(model[3].weight, model2[3].weight))
  end)

  it("keeps a state_dict's key order", function()
    local model = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Linear(2, 2), T.nn.BatchNorm1d(2))
    local path = tmp()
    T.save(path, { model = model:state_dict(), step = 1 })
    local ck = T.load(path)
    os.remove(path)
    assert.are.same(getmetatable(model:state_dict()).__keys, getmetatable(ck.model).__keys)
  end)

  it("stores the tensors under flattened keys, so other readers see them", function()
    local path = tmp()
    T.save(path, { model = { fc = { weight = T.ones(2, 2) } }, opt = { state = { [1] = { m = T.zeros(3) } } }, n = 1 })
    local h = header(path)
    os.remove(path)
    assert.truthy(h["model.fc.weight"])
    assert.are.same({ 2, 2 }, h["model.fc.weight"].shape)
    assert.truthy(h["opt.state.1.m"])
    assert.truthy(h.__metadata__["ltensor.checkpoint"])
  end)

  it("keeps numbers exact: integers as integers, floats to the last bit, inf and nan", function()
    local path = tmp()
    local third = 1 / 3
    T.save(path, { a = 3, b = third, c = math.huge, d = -math.huge, e = 0 / 0, f = -0.5, w = T.ones(1) })
    local ck = T.load(path)
    os.remove(path)
    assert.equal(3, ck.a)
    assert.equal(third, ck.b)
    assert.equal(math.huge, ck.c)
    assert.equal(-math.huge, ck.d)
    assert.is_true(ck.e ~= ck.e)
    assert.equal(-0.5, ck.f)
  end)

  it("keeps 64-bit integers exact (Lua 5.3+)", function()
    host.needs_integers("64-bit integers")
    local path = tmp()
    T.save(path, { big = math.maxinteger, small = math.mininteger, w = T.ones(1) })
    local ck = T.load(path)
    os.remove(path)
    assert.equal(math.maxinteger, ck.big)
    assert.equal(math.mininteger, ck.small)
    assert.equal("integer", math.type(ck.big))
  end)

  it("writes a flat table of tensors as plain safetensors, as before", function()
    local path = tmp()
    T.save(path, { ["fc.weight"] = T.ones(2) })
    local h = header(path)
    local d = T.load(path)
    os.remove(path)
    assert.is_nil(h.__metadata__ and h.__metadata__["ltensor.checkpoint"])
    assert.is_true(T.equal(d["fc.weight"], T.ones(2)))
  end)

  it("refuses what a checkpoint cannot hold, naming where it is", function()
    local path = tmp()
    assert.has_error(function() T.save(path, { epoch = 1, fn = print }) end,
      "ltensor.save: 'fn' is a function: a checkpoint holds tensors, numbers, strings, booleans and tables of them")
    local loop = { w = T.ones(1) }
    loop.self = loop
    assert.has_error(function() T.save(path, { a = loop }) end, "ltensor.save: 'a.self' is a table that contains itself")
    assert.has_error(function() T.save(path, { ["a.b"] = T.ones(1), a = { b = T.ones(1) } }) end,
      "ltensor.save: two entries flatten to the key 'a.b' (rename one: keys are joined with '.')")
    assert.has_error(function() T.save(path, { x = { [{}] = 1 } }) end,
      "ltensor.save: 'x' has a table key: keys must be strings, numbers or booleans")
    local f = io.open(path, "rb")
    assert.is_nil(f)   -- nothing written by a refused save
  end)

  it("refuses a damaged tree with a clear error", function()
    local path = tmp()
    T.save(path, { w = T.ones(1) }, { ["ltensor.checkpoint"] = '["T",[[["s","w"],["t","nope"]]]]' })
    assert.has_error(function() T.load(path) end,
      "ltensor.load: '" .. path .. "': the checkpoint tree is damaged (no tensor 'nope')")
    T.save(path, { w = T.ones(1) }, { ["ltensor.checkpoint"] = '["T",' })
    assert.has_error(function() T.load(path) end,
      "ltensor.load: '" .. path .. "': the checkpoint tree is not valid JSON")
    T.save(path, { w = T.ones(1) }, { ["ltensor.checkpoint"] = '["q",1]' })
    assert.has_error(function() T.load(path) end,
      "ltensor.load: '" .. path .. "': the checkpoint tree is damaged (unknown node kind 'q')")
    os.remove(path)
  end)
end)
