-- The module system: registries, traversal, train/eval, PyTorch's
-- state_dict keys and strict loading, the PyTorch repr, containers,
-- Embedding's padding_idx/max_norm, and state_dict interchange with PyTorch
-- (spec/fixtures/nnmod.lua and nnmod_interchange.safetensors from
-- tools/gen_nnmod_fixtures.py).
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local nn = T.nn
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/nnmod.lua")

local function tens(f)
  local t = T.tensor(f.data, { dtype = T[f.dtype] })
  return t:reshape(f.shape)
end
local function close(got, want, tol, what)
  tol = tol or 1e-9
  local w = type(want) == "table" and not T.is_tensor(want) and tens(want) or want
  assert.same(w.shape, got.shape, what)
  local d = T.amax(T.abs(got:detach():to(T.float64) - w:to(T.float64))):item()
  assert(d <= tol, (what or "") .. ": max difference " .. d)
end
local function keys_of(sd)
  local out = {}
  for k in pairs(sd) do out[#out + 1] = k end
  return out
end
local function names_of(list)
  local out = {}
  for i, kv in ipairs(list) do out[i] = kv[1] end
  return out
end

-- the model of the fixture's Net (PyTorch):
--   fc1, layers = ModuleList of 3 Linear, seq = Sequential(Linear, ReLU, Linear),
--   emb = Embedding(5, 4, padding_idx = 0 (Lua 1)), buffer steps (int64)
local Net = nn.Module:extend("Net")
function Net:init()
  self.fc1 = nn.Linear(4, 8)
  self.layers = nn.ModuleList({ nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8) })
  self.seq = nn.Sequential(nn.Linear(8, 3), nn.ReLU(), nn.Linear(3, 2))
  self.emb = nn.Embedding(5, 4, { padding_idx = 1 })
  self:register_buffer("steps", T.zeros({ 1 }, { dtype = T.int64 }))
end
function Net:forward(x)
  x = self.fc1(x)
  for _, l in ipairs(self.layers) do x = T.relu(l(x)) end
  return self.seq(x)
end

describe("nn.Module traversal", function()
  it("names parameters, buffers, modules and state_dict keys as PyTorch", function()
    host.needs_pairs_mm("state_dict keys in PyTorch's order through pairs()")
    local net = Net()
    assert.same(FX.modules.net_param_names, names_of(net:named_parameters()))
    assert.same(FX.modules.net_module_names, names_of(net:named_modules()))
    assert.same(FX.modules.net_keys, keys_of(net:state_dict()))
    assert.same({ "steps" }, names_of(net:named_buffers()))
    assert.equal(FX.modules.num_params_net, net:num_parameters())
    assert.equal(net.seq, net:get_submodule("seq"))
    assert.equal(net.seq[3], net:get_submodule("seq.2"))
    assert.is_true(rawequal(net.layers[2].bias, net:get_parameter("layers.1.bias")))
    assert.is_true(rawequal(net.steps, net:get_buffer("steps")))
    H.raises("ltensor.nn.Module.get_submodule: Sequential has no attribute `7`", function() net:get_submodule("seq.7") end)
  end)

  it("children, named_children, modules and apply in definition order", function()
    local net = Net()
    assert.same({ "fc1", "layers", "seq", "emb" }, names_of(net:named_children()))
    assert.equal(4, #net:children())
    assert.equal(11, #net:modules())
    local seen = {}
    net:apply(function(m) seen[#seen + 1] = m._classname end)
    assert.equal("Net", seen[#seen])
    assert.equal("Linear", seen[1])
  end)

  it("Sequential: PyTorch keys 0.., Lua indices 1.., negative from the end", function()
    host.needs_pairs_mm("state_dict keys in PyTorch's order through pairs()")
    local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert.same(FX.modules.seq_keys, keys_of(s:state_dict()))
    assert.equal(FX.modules.seq_repr, tostring(s))
    assert.equal(3, #s)
    assert.equal("ReLU", s[2]._classname)
    assert.equal(s[3], s[-1])
    assert.is_nil(s[4])
    s:append(nn.Tanh())
    assert.equal("Tanh", s[4]._classname)
    s:insert(1, nn.Identity())
    assert.same({ "0", "1", "2", "3", "4" }, names_of(s:named_children()))
    assert.equal("Identity", s[1]._classname)
    assert.equal("Identity", s:remove(1)._classname)
    s[2] = nn.Sigmoid()
    assert.equal("Sigmoid", s[2]._classname)
    assert.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, keys_of(s:state_dict()))
    local named = nn.Sequential({ { "fc", nn.Linear(2, 2) }, { "act", nn.ReLU() } })
    assert.same({ "fc.weight", "fc.bias" }, keys_of(named:state_dict()))
    assert.equal(named.fc, named[1])
    H.raises("ltensor.nn.Sequential: bad argument #2 (Module expected, got number)", function() nn.Sequential(nn.ReLU(), 3) end)
    H.raises("index 9 is out of range", function() s[9] = nn.ReLU() end)
  end)

  it("ModuleList iterates with ipairs and ModuleDict keeps its order", function()
    host.needs_ipairs_index("ipairs() over a ModuleList")
    local l = nn.ModuleList({ nn.Linear(1, 1), nn.Linear(1, 2) })
    local n = 0
    for i, m in ipairs(l) do n = n + 1 assert.equal(i, m.out_features) end
    assert.equal(2, n)
    l:append(nn.Linear(1, 3))
    assert.same({ "0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias" }, keys_of(l:state_dict()))
    local d = nn.ModuleDict({ { "b", nn.Linear(1, 1) }, { "a", nn.ReLU() } })
    assert.same({ "b", "a" }, d:keys())
    assert.equal("ReLU", d.a._classname)
    assert.equal("ModuleDict(\n  (b): Linear(in_features=1, out_features=1, bias=True)\n  (a): ReLU()\n)", tostring(d))
    local d2 = nn.ModuleDict({ z = nn.ReLU(), y = nn.Tanh() })
    assert.same({ "y", "z" }, d2:keys())
    d2:pop("y")
    assert.same({ "z" }, d2:keys())
  end)

  it("prints the tree as PyTorch", function()
    local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Dropout(0.1), nn.LayerNorm(4), nn.GELU(),
      nn.Softmax(2), nn.Linear(3, 1, false))
    -- dims are 1-based in ltensor: Softmax(2) is PyTorch's Softmax(dim=1)
    local want = FX.modules.repr_misc:gsub("Softmax%(dim=1%)", "Softmax(dim=2)")
    assert.equal(want, tostring(s))
    local Custom = nn.Module:extend("Custom")
    function Custom:init() self.inner = nn.Linear(1, 1) end
    function Custom:extra_repr() return "scale=2\nshift=1" end
    assert.equal("Custom(\n  scale=2\n  shift=1\n  (inner): Linear(in_features=1, out_features=1, bias=True)\n)",
      tostring(Custom()))
  end)

  it("train()/eval() reach every descendant; zero_grad; requires_grad_", function()
    local net = Net()
    net:eval()
    for _, m in ipairs(net:modules()) do assert.is_false(m.training) end
    net:train()
    for _, m in ipairs(net:modules()) do assert.is_true(m.training) end
    H.raises("training mode is expected to be boolean", function() net:train(1) end)
    local y = net(T.randn({ 2, 4 }))
    T.sum(y):backward()
    assert.is_not_nil(net.fc1.weight.grad)
    net:zero_grad()
    assert.equal(0, T.amax(T.abs(net.fc1.weight.grad)):item())
    net:zero_grad(true)
    assert.is_nil(net.fc1.weight.grad)
    net:requires_grad_(false)
    assert.is_false(net.fc1.weight.requires_grad)
    assert.equal(0, net:num_parameters({ only_trainable = true }))
    net:requires_grad_()
    assert.is_true(net.layers[3].bias.requires_grad)
  end)

  it("register_buffer: persistent or not, int64 kept by to(float64)", function()
    host.needs_pairs_mm("state_dict keys in PyTorch's order through pairs()")
    local m = nn.Linear(2, 2)
    m:register_buffer("running", T.zeros({ 2 }))
    m:register_buffer("scratch", T.ones({ 2 }), false)
    m:register_buffer("count", T.zeros({}, { dtype = T.int64 }))
    assert.same({ "weight", "bias", "running", "count" }, keys_of(m:state_dict()))
    assert.same({ "running", "scratch", "count" }, names_of(m:named_buffers()))
    m:double()
    assert.equal(T.float64, m.weight.dtype)
    assert.equal(T.float64, m.running.dtype)
    assert.equal(T.int64, m.count.dtype)
    assert.is_true(m.weight.requires_grad)
    assert.is_true(rawequal(m.weight, m:parameters()[1]))
    H.raises("ltensor.nn.Module.register_buffer: attribute 'weight' already exists", function()
      m:register_buffer("weight", T.zeros({ 1 })) end)
    H.raises("buffer name can't contain \".\"", function() m:register_buffer("a.b", T.zeros({ 1 })) end)
  end)

  it("checks names and values given to the registries", function()
    local m = nn.Module()
    assert.equal("Module()", tostring(m))
    H.raises("ltensor.nn.Module.register_parameter: bad argument #2 'param' (Tensor expected, got number)",
      function() m:register_parameter("w", 3) end)
    H.raises("parameter name can't contain \".\"", function() m:register_parameter("a.b", T.zeros({ 1 })) end)
    H.raises("ltensor.nn.Module.add_module: bad argument #2 'module' (Module expected, got table)",
      function() m:add_module("x", {}) end)
    H.raises("module name can't be empty string", function() m:add_module("", nn.ReLU()) end)
    H.raises("ltensor.nn.Module.to: nn.Module.to only accepts floating point or complex dtypes",
      function() nn.Linear(1, 1):to(T.int32) end)
    H.raises("ltensor.nn.Module.apply: bad argument #1 'fn' (function expected, got number)", function() m:apply(3) end)
    m:register_parameter("w", nn.Parameter(T.ones({ 2 })))
    m:register_parameter("w", nil)
    assert.equal(0, #m:parameters())
    m.fc = nn.Linear(1, 1)
    m.fc = nil
    assert.equal(0, #m:children())
  end)

  it("clone() deep-copies parameters and buffers", function()
    local a = Net()
    local b = a:clone()
    assert.is_true(T.equal(a.fc1.weight, b.fc1.weight))
    assert.is_false(rawequal(a.fc1.weight, b.fc1.weight))
    T.no_grad(function() b.fc1.weight:fill_(0) end)
    assert.is_false(T.equal(a.fc1.weight, b.fc1.weight))
    assert.same(keys_of(a:state_dict()), keys_of(b:state_dict()))
    assert.is_true(b.fc1.weight.requires_grad and b.fc1.weight.is_leaf)
    assert.equal(Net, b._class)
  end)
end)

describe("nn.Module state_dict / load_state_dict", function()
  it("round-trips through T.save/T.load with PyTorch keys", function()
    T.manual_seed(1)
    local a, b = Net(), Net()
    local path = os.tmpname()
    T.save(path, a:state_dict())
    local sd = T.load(path)
    os.remove(path)
    local got, want = keys_of(sd), {}
    for i, v in ipairs(FX.modules.net_keys) do want[i] = v end
    table.sort(got) table.sort(want)
    assert.same(want, got)
    local r = b:load_state_dict(sd)
    assert.same({}, r.missing_keys)
    assert.same({}, r.unexpected_keys)
    local x = T.randn({ 3, 4 })
    assert.is_true(T.equal(a(x), b(x)))
    assert.equal(T.int64, sd.steps.dtype)
  end)

  it("load_state_dict(T.load(path)) ignores the file's metadata (T.load's second result)", function()
    local a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    local path = os.tmpname()
    T.save(path, a:state_dict(), { ltensor_note = "saved by a spec" })
    local r = b:load_state_dict(T.load(path))
    os.remove(path)
    assert.same({}, r.missing_keys)
    assert.is_true(T.equal(a.weight, b.weight))
  end)

  it("loads in place without recording autograd", function()
    local m = nn.Linear(2, 2)
    local w = m.weight
    m:load_state_dict({ weight = T.ones({ 2, 2 }), bias = T.zeros({ 2 }) })
    assert.is_true(rawequal(w, m.weight))
    assert.is_true(m.weight.is_leaf)
    assert.is_true(m.weight.requires_grad)
    assert.is_true(T.equal(m.weight, T.ones({ 2, 2 })))
    -- dtype converted as copy_ does
    m:load_state_dict({ weight = T.ones({ 2, 2 }, { dtype = T.float64 }) * 2, bias = T.zeros({ 2 }) })
    assert.equal(T.float32, m.weight.dtype)
    assert.equal(2, m.weight[1][1]:item())
  end)

  it("strict loading names every missing key, unexpected key and shape mismatch (PyTorch's text)", function()
    local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    local sd = s:state_dict()
    local bad = {}
    for k, v in pairs(sd) do bad[k] = v end
    bad["2.bias"] = nil
    bad["0.weight"] = T.zeros({ 4, 2 })
    bad["extra.weight"] = T.zeros({ 1 })
    local before = s[1].bias:clone()
    local ok, err = pcall(function() s:load_state_dict(bad) end)
    assert.is_false(ok)
    local want = FX.load_error:gsub("torch%.Size%(%[(.-)%]%)", "{%1}")
    assert.equal("ltensor.nn.Module.load_state_dict: " .. want, err)
    -- nothing copied when it raises
    assert.is_true(T.equal(before, s[1].bias))
  end)

  it("non-strict loading reports missing/unexpected keys but still refuses shape mismatches", function()
    local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    local r = s:load_state_dict({ ["0.weight"] = T.ones({ 3, 2 }), ["foo"] = T.zeros({ 1 }) }, { strict = false })
    assert.same({ "0.bias", "2.weight", "2.bias" }, r.missing_keys)
    assert.same({ "foo" }, r.unexpected_keys)
    assert.is_true(T.equal(s[1].weight, T.ones({ 3, 2 })))
    r = s:load_state_dict({ ["0.bias"] = T.ones({ 3 }) }, false)
    assert.is_true(T.equal(s[1].bias, T.ones({ 3 })))
    H.raises("size mismatch for 0.bias: copying a param with shape {4} from checkpoint, the shape in current model is {3}.",
      function() s:load_state_dict({ ["0.bias"] = T.ones({ 4 }) }, { strict = false }) end)
    H.raises('While copying the parameter named "0.bias", expected torch.Tensor or Tensor-like object from checkpoint but received number',
      function() s:load_state_dict({ ["0.bias"] = 3 }, { strict = false }) end)
    H.raises("Expected state_dict to be dict-like, got number", function() s:load_state_dict(3) end)
    H.raises("unknown option 'strct'", function() s:load_state_dict({}, { strct = false }) end)
  end)

  it("a state_dict of another architecture names the layer and the key", function()
    local a = nn.Sequential(nn.Linear(2, 3))
    local b = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 4))
    H.raises('Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "2.weight", "2.bias". ',
      function() b:load_state_dict(a:state_dict()) end)
  end)

  it("LSTM and MultiheadAttention keys are PyTorch's", function()
    host.needs_pairs_mm("state_dict keys in PyTorch's order through pairs()")
    assert.same(FX.modules.lstm_keys, keys_of(nn.LSTM(3, 4, { num_layers = 2, bidirectional = true }):state_dict()))
    assert.same(FX.modules.mha_keys, keys_of(nn.MultiheadAttention(8, 2):state_dict()))
    assert.same(FX.modules.mha_kv_keys,
      keys_of(nn.MultiheadAttention(8, 2, { kdim = 3, vdim = 5, add_bias_kv = true }):state_dict()))
  end)

  it("state_dict options: prefix and keep_vars", function()
    host.needs_pairs_mm("state_dict keys in PyTorch's order through pairs()")
    local m = nn.Linear(2, 2)
    local sd = m:state_dict({ prefix = "enc." })
    assert.same({ "enc.weight", "enc.bias" }, keys_of(sd))
    assert.is_false(sd["enc.weight"].requires_grad)
    assert.is_true(rawequal(m.weight, m:state_dict({ keep_vars = true }).weight))
  end)
end)

describe("PyTorch interchange", function()
  -- Tagger: Embedding(10, 6, padding_idx=0) -> LSTM(6, 8, 2 layers, batch_first)
  -- -> Sequential(Linear(8, 8), Tanh, Linear(8, 4)) -> LayerNorm(4)
  local Tagger = nn.Module:extend("Tagger")
  function Tagger:init()
    self.emb = nn.Embedding(10, 6, { padding_idx = 1 })
    self.lstm = nn.LSTM(6, 8, { num_layers = 2, batch_first = true })
    self.head = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 4))
    self.norm = nn.LayerNorm(4)
  end
  function Tagger:forward(idx)
    local y = self.lstm(self.emb(idx))
    return self.norm(self.head(y))
  end

  it("a PyTorch state_dict saved as safetensors loads and gives PyTorch's output", function()
    host.needs_pairs_mm("state_dict keys in PyTorch's order through pairs()")
    local sd = T.load("spec/fixtures/nnmod_interchange.safetensors")
    local input, output = sd.__input__, sd.__output__
    sd.__input__, sd.__output__ = nil, nil
    local m = Tagger()
    assert.same(FX.interchange.keys, keys_of(m:state_dict()))
    m:load_state_dict(sd)
    m:eval()
    local out = T.no_grad(function() return m(input) end)
    close(out, output, 1e-5, "Tagger output")
  end)

  it("ltensor's saved state_dict holds exactly the tensors PyTorch's model expects", function()
    local m = Tagger()
    local path = os.tmpname()
    T.save(path, m:state_dict())
    local back = T.load(path)
    os.remove(path)
    local want = {}
    for i, k in ipairs(FX.interchange.keys) do want[i] = k end
    table.sort(want)
    local got = {}
    for k in pairs(back) do got[#got + 1] = k end
    table.sort(got)
    assert.same(want, got)
    local sd = m:state_dict()
    for k, v in pairs(back) do assert.same(sd[k].shape, v.shape) assert.is_true(T.equal(sd[k], v)) end
  end)
end)

describe("nn.Embedding", function()
  local E = FX.embedding
  it("padding_idx (1-based) gets no gradient, as PyTorch's padding_idx", function()
    local e = nn.Embedding(6, 3, { padding_idx = E.padding_idx, dtype = T.float64 })
    assert.equal(0, T.amax(T.abs(e.weight[E.padding_idx])):item())
    e:load_state_dict({ weight = tens(E.weight) })
    local idx = tens(E.idx)
    local out = e(idx)
    close(out, E.out)
    T.sum(out * tens(E.g)):backward()
    close(e.weight.grad, E.grad)
    assert.equal("Embedding(6, 3, padding_idx=3)", tostring(e))
    assert.equal(6, nn.Embedding(6, 3, { padding_idx = -1 }).padding_idx)
    H.raises("Padding_idx must be within num_embeddings", function() nn.Embedding(6, 3, { padding_idx = 7 }) end)
  end)

  it("passes gradcheck in float64; the padding row's gradient is zero by definition", function()
    local e = nn.Embedding(4, 2, { padding_idx = 2, dtype = T.float64 })
    local idx = T.tensor({ { 1, 2 }, { 2, 4 }, { 4, 4 } })
    -- without padding_idx the gradient is the true one (repeated indices accumulate)
    assert.is_true(T.autograd.gradcheck(function(w) return nn._embedding(idx, w) end, { e.weight }))
    -- with it, as PyTorch, the padding row gets exactly zero (not the numerical derivative)
    T.sum(e(idx) * 3):backward()
    assert.same({ 0, 0 }, e.weight.grad[2]:totable())
    assert.same({ 3, 3 }, e.weight.grad[1]:totable())
  end)

  it("max_norm renormalises the looked-up rows in place", function()
    local e = nn.Embedding(6, 3, { max_norm = 1.0, dtype = T.float64 })
    e:load_state_dict({ weight = tens(E.mn_weight0) })
    local out = e(tens(E.mn_idx))
    close(out, E.mn_out, 1e-7)
    close(e.weight, E.mn_weight1, 1e-7)
  end)

  it("checks its indices", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local e = nn.Embedding(4, 2)
    H.raises("index out of range in self", function() e(T.tensor({ 5 })) end)
    H.raises("index out of range in self", function() e(T.tensor({ 0 })) end)
    H.raises("Expected tensor for argument #1 'indices'", function() e(T.tensor({ 1.0 })) end)
    H.check(e(T.zeros({ 0 }, { dtype = T.int64 })), T.float32, { 0, 2 })
    H.check(e(T.tensor(2)), T.float32, { 2 })
  end)

  it("looks up the same rows without a graph (no_grad), and checks its indices there too", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    local e = nn.Embedding(5, 3, { padding_idx = 2 })
    local idx = T.tensor({ { 1, 2 }, { 5, 1 } })
    local a = e(idx)
    local b = T.no_grad(function() return e(idx) end)
    assert.is_true(T.equal(a, b))
    assert.same({ 2, 2, 3 }, b.shape)
    assert.is_true(a.requires_grad)
    assert.is_false(b.requires_grad)
    H.check(T.no_grad(function() return e(T.tensor(3, { dtype = T.int32 })) end), T.float32, { 3 })
    H.raises("index out of range in self", function() T.no_grad(function() return e(T.tensor({ 6 })) end) end)
    H.raises("Expected tensor for argument #1 'indices'", function() T.no_grad(function() return e(T.tensor({ 1.0 })) end) end)
  end)

  it("from_pretrained freezes by default", function()
    local w = T.randn({ 3, 2 })
    local e = nn.Embedding.from_pretrained(w)
    assert.is_false(e.weight.requires_grad)
    assert.is_true(T.equal(e(T.tensor({ 2 })), w[{ { 2, 2 } }]))
  end)
end)

describe("the dtype option of nn's constructors", function()
  -- as the factories take it (T.zeros(2, {dtype = "float64"})); a name was
  -- handed on to t:to(name), which read it as a device
  local nn = T.nn
  local ctors = {
    Linear = function(o) return nn.Linear(4, 4, o) end,
    Conv1d = function(o) return nn.Conv1d(2, 2, 3, o) end,
    Conv2d = function(o) return nn.Conv2d(2, 2, 3, o) end,
    ConvTranspose2d = function(o) return nn.ConvTranspose2d(2, 2, 3, o) end,
    Embedding = function(o) return nn.Embedding(4, 2, o) end,
    EmbeddingBag = function(o) return nn.EmbeddingBag(4, 2, o) end,
    LayerNorm = function(o) return nn.LayerNorm(4, o) end,
    BatchNorm1d = function(o) return nn.BatchNorm1d(4, o) end,
    GroupNorm = function(o) return nn.GroupNorm(2, 4, o) end,
    RMSNorm = function(o) return nn.RMSNorm(4, o) end,
    PReLU = function(o) return nn.PReLU(o) end,
    LSTM = function(o) return nn.LSTM(4, 4, o) end,
    GRU = function(o) return nn.GRU(4, 4, o) end,
    RNNCell = function(o) return nn.RNNCell(4, 4, o) end,
    MultiheadAttention = function(o) return nn.MultiheadAttention(4, 2, o) end,
    TransformerEncoderLayer = function(o) return nn.TransformerEncoderLayer(4, 2, o) end,
  }
  local names = {}
  for k in pairs(ctors) do names[#names + 1] = k end
  table.sort(names)
  local function err_of(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return e
  end

  it("takes a dtype or its name, as T.zeros does", function()
    assert.equal(T.float64, T.zeros(2, { dtype = "float64" }).dtype)
    for _, name in ipairs(names) do
      for _, d in ipairs({ T.float64, "float64", "double", "ltensor.float64" }) do
        local opts = { dtype = d }
        local m = ctors[name](opts)
        local params = m:parameters()
        assert.is_true(#params > 0, name)
        for _, p in ipairs(params) do assert.equal(T.float64, p.dtype, name .. " " .. tostring(d)) end
        assert.equal(d, opts.dtype)   -- the caller's table is left as it was
      end
    end
    local m = nn.Linear(4, 4, { dtype = "float64" })
    assert.equal(T.float64, m(T.ones(2, 4, { dtype = T.float64 })).dtype)
  end)

  it("refuses anything else in the module's name", function()
    for _, name in ipairs(names) do
      assert.equal("ltensor.nn." .. name .. ": bad option 'dtype' (unknown dtype name 'flot64')",
        err_of(ctors[name], { dtype = "flot64" }))
      assert.equal("ltensor.nn." .. name .. ": bad option 'dtype' (ltensor dtype expected, got number)",
        err_of(ctors[name], { dtype = 5 }))
    end
  end)
end)
