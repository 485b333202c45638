-- help has something for every name a user can reach (issue 21 item 8):
-- every public function and class, every tensor method and attribute, and
-- every method of the objects users call methods on -- modules, optimizers,
-- schedulers, loaders, datasets -- found here by walking the objects
-- themselves (not help's own list of names), so a method added to a class
-- without an entry fails this spec.
local T = require "ltensor"
local help = require "ltensor.help"

-- the text help gives, and whether it documents something (an entry with
-- an example, not "no documentation ...")
local function documented(x)
  local ok, s = pcall(T.help, x)
  return ok and type(s) == "string" and not s:find("^no documentation") and s:find("Example:", 1, true) ~= nil
end

local function is_public(k) return type(k) == "string" and k:match("^[%a][%w_]*$") ~= nil end

-- the public function-valued keys reachable from a table through its
-- __index tables (an object's class, the class's parent, ...)
local function methods_of(x)
  local out, seen, visited = {}, {}, {}
  local t = getmetatable(x)
  if type(x) == "table" and rawget(x, "_classname") then t = x end   -- a T.nn class
  while type(t) == "table" and not visited[t] do
    visited[t] = true
    for k, v in pairs(t) do
      if is_public(k) and type(v) == "function" and not seen[k] then seen[k] = true out[#out + 1] = k end
    end
    local idx = rawget(t, "__index")
    if type(idx) ~= "table" or visited[idx] then
      local mt = getmetatable(t)
      idx = type(mt) == "table" and rawget(mt, "__index") or nil
    end
    t = idx
  end
  table.sort(out)
  return out
end

-- tables under T that are not for users: the backward formulas and the
-- ONNX operator table (keyed by ONNX names; T.onnx.load documents them);
-- tables ending in _mt are the metatables of objects, whose methods are
-- checked as methods below
local INTERNAL = { ["T._methods"] = true, ["T.autograd.rules"] = true, ["T.autograd.inplace_rules"] = true,
  ["T.onnx.operators"] = true }

local function missing_list(list) return "no help for: " .. table.concat(list, ", ") end

describe("help covers", function()
  it("every public name", function()
    local missing = {}
    for _, n in ipairs(help.public_names()) do
      if not help.base_entry(n) then missing[#missing + 1] = n end
    end
    assert.equal(0, #missing, missing_list(missing))
    assert.truthy(#help.public_names() > 850)
  end)

  it("every function and class of every namespace, asked for by value", function()
    local missing, visited = {}, {}
    local function walk(prefix, t, depth)
      if visited[t] or depth > 4 then return end
      visited[t] = true
      for k, v in pairs(t) do
        if is_public(k) then
          local q = prefix .. "." .. k
          local is_class = type(v) == "table" and (rawget(v, "_classname") or (getmetatable(v) or {}).__call)
          if type(v) == "function" or is_class then
            if not documented(v) then missing[#missing + 1] = q end
          elseif type(v) == "table" and getmetatable(v) == nil and not INTERNAL[q] and not q:match("_mt$") then
            walk(q, v, depth + 1)
          end
        end
      end
    end
    walk("T", T, 0)
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
  end)

  it("every tensor method, as help(\"Tensor:name\") and by value", function()
    local missing = {}
    for k, v in pairs(T._methods) do
      if is_public(k) and type(v) == "function" then
        if not documented("Tensor:" .. k) or not documented(v) then missing[#missing + 1] = k end
      end
    end
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
  end)

  it("every tensor attribute ltl_tensor_index answers, as help(\"Tensor.name\") and help(\"x.name\")", function()
    local src = assert(io.open("src/binding/l_attr.c")):read("*a")
    local body = src:match("int ltl_tensor_index%(lua_State %*L%)(.-)\n}\n")
    assert.truthy(body, "ltl_tensor_index not found in l_attr.c")
    local attrs = { T = true }   -- t.T: the case 'T' with k[1] == 0
    for name in body:gmatch('strcmp%(k, "([%w_]+)"%)') do attrs[name] = true end
    local missing, n = {}, 0
    for a in pairs(attrs) do
      n = n + 1
      if not documented("Tensor." .. a) or not documented("x." .. a) then missing[#missing + 1] = a end
    end
    assert.equal(0, #missing, missing_list(missing))
    assert.truthy(n >= 9)
    for _, a in ipairs(help.TENSOR_ATTRIBUTES) do assert.truthy(attrs[a], a .. " is listed but not an attribute") end
  end)

  it("every method of every nn class, as help(\"Class:method\")", function()
    local missing, classes = {}, 0
    for name, c in pairs(T.nn) do
      if is_public(name) and type(c) == "table" and rawget(c, "_classname") then
        classes = classes + 1
        for _, m in ipairs(methods_of(c)) do
          if m ~= "new" and not documented(name .. ":" .. m) then missing[#missing + 1] = name .. ":" .. m end
        end
      end
    end
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
    assert.truthy(classes > 80)
    -- a class of the user's own: the Module API
    local Net = T.nn.Module:extend("Net")
    for _, m in ipairs(methods_of(Net)) do
      if m ~= "new" then assert.truthy(documented("Module:" .. m), "Module:" .. m) end
    end
    for _, q in ipairs({ "Module:forward", "Module:parameters", "Module:named_parameters", "Module:children",
                         "Module:modules", "Module:train", "Module:eval", "Module:to", "Module:zero_grad",
                         "Module:state_dict", "Module:load_state_dict", "Module:apply", "Module:register_buffer",
                         "model:parameters", "Linear:forward", "Sequential:append", "GRU:flatten_parameters" }) do
      assert.truthy(documented(q), q)
    end
  end)

  local function params() return { T.zeros(2, { requires_grad = true }) } end

  it("every method of every optimizer, as help(\"SGD:step\"), help(\"Optimizer:step\") and by value", function()
    local missing, n = {}, 0
    for name, ctor in pairs(T.optim) do
      if is_public(name) and type(ctor) == "table" and (getmetatable(ctor) or {}).__call then
        n = n + 1
        local opt = ctor(params(), name == "SGD" and { lr = 0.1 } or nil)
        for _, m in ipairs(methods_of(opt)) do
          if not documented(name .. ":" .. m) or not documented(opt[m]) then missing[#missing + 1] = name .. ":" .. m end
        end
      end
    end
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
    assert.truthy(n >= 10)
    for _, m in ipairs({ "step", "zero_grad", "state_dict", "load_state_dict", "add_param_group" }) do
      assert.truthy(documented("Optimizer:" .. m), m)
      assert.truthy(documented("opt:" .. m), m)
    end
  end)

  it("every method of every LR scheduler, as help(\"StepLR:step\") and help(\"LRScheduler:step\")", function()
    local S = T.optim.lr_scheduler
    local function opt() return T.optim.SGD(params(), { lr = 0.1, momentum = 0.9 }) end
    local build = {
      StepLR = function(o) return S.StepLR(o, 2) end,
      MultiStepLR = function(o) return S.MultiStepLR(o, { 2, 4 }) end,
      ExponentialLR = function(o) return S.ExponentialLR(o, 0.9) end,
      CosineAnnealingLR = function(o) return S.CosineAnnealingLR(o, 10) end,
      OneCycleLR = function(o) return S.OneCycleLR(o, 0.1, { total_steps = 10 }) end,
      LinearLR = function(o) return S.LinearLR(o) end,
      ConstantLR = function(o) return S.ConstantLR(o) end,
      LambdaLR = function(o) return S.LambdaLR(o, function(e) return 0.9 ^ e end) end,
      SequentialLR = function(o) return S.SequentialLR(o, { S.LinearLR(o), S.ExponentialLR(o, 0.9) }, { 2 }) end,
      ReduceLROnPlateau = function(o) return S.ReduceLROnPlateau(o) end,
    }
    local missing = {}
    for name, ctor in pairs(S) do
      if is_public(name) and type(ctor) == "table" and (getmetatable(ctor) or {}).__call then
        assert.truthy(build[name], "a scheduler this spec does not build: " .. name)
        local s = build[name](opt())
        for _, m in ipairs(methods_of(s)) do
          if not documented(name .. ":" .. m) or not documented(s[m]) then missing[#missing + 1] = name .. ":" .. m end
        end
      end
    end
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
    for _, m in ipairs({ "step", "get_last_lr", "state_dict", "load_state_dict" }) do
      assert.truthy(documented("LRScheduler:" .. m), m)
      assert.truthy(documented("sched:" .. m), m)
    end
  end)

  it("every method of DataLoader and the datasets, as help(\"DataLoader:iter\")", function()
    local D = T.utils.data
    local ds = D.TensorDataset(T.zeros(4, 2), T.zeros(4))
    local objects = { DataLoader = D.DataLoader(ds, { batch_size = 2 }), TensorDataset = ds, Subset = D.Subset(ds, { 1, 2 }) }
    local missing = {}
    for name, ctor in pairs(D) do
      if is_public(name) and type(ctor) == "table" and (getmetatable(ctor) or {}).__call then
        local o = assert(objects[name], "a data class this spec does not build: " .. name)
        local ms = methods_of(o)
        assert.truthy(#ms > 0, name)
        for _, m in ipairs(ms) do
          if not documented(name .. ":" .. m) then missing[#missing + 1] = name .. ":" .. m end
        end
      end
    end
    assert.equal(0, #missing, missing_list(missing))
    assert.truthy(documented("loader:iter"))
  end)

  it("every method and attribute of every distribution, as help(\"Normal:log_prob\") and help(\"d.mean\")", function()
    local D = T.distributions
    local props = { mean = true, variance = true, stddev = true, probs = true, logits = true, mode = true,
      covariance_matrix = true, precision_matrix = true, scale_tril = true }
    local missing = {}
    for name, c in pairs(D) do
      if is_public(name) and type(c) == "table" and name ~= "Distribution" then
        local seen, t = {}, c
        while type(t) == "table" and not seen[t] do
          seen[t] = true
          for k, v in pairs(t) do
            if is_public(k) and k ~= "new" and type(v) == "function" then
              local q = name .. (props[k] and "." or ":") .. k
              if not documented(q) then missing[#missing + 1] = q end
            end
          end
          t = (getmetatable(t) or {}).__index
        end
      end
    end
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
    for _, q in ipairs({ "d.mean", "d:sample", "dist:log_prob", "Distribution.batch_shape", "Normal.event_shape" }) do
      assert.truthy(documented(q), q)
    end
  end)

  it("the methods of a PackedSequence", function()
    local packed = T.nn.utils.rnn.pack_padded_sequence(T.randn(3, 2, 4), { 3, 2 })
    for _, m in ipairs(methods_of(packed)) do assert.truthy(documented("PackedSequence:" .. m), m) end
    assert.truthy(documented(packed.to))
  end)

  it("the methods of generators, sizes, figures and progress bars, as help(\"Generator:manual_seed\")", function()
    local objects = { Generator = T.Generator(1), Size = T.zeros(2).shape, Figure = T.plot.line({ y = { 1, 2 } }),
                      Progress = T.utils.progress(0, { disable = true }) }
    local missing = {}
    for name, o in pairs(objects) do
      local ms = methods_of(o)
      assert.truthy(#ms > 0, name)
      for _, m in ipairs(ms) do
        if not documented(name .. ":" .. m) or not documented(o[m]) then missing[#missing + 1] = name .. ":" .. m end
      end
      assert.truthy(T.help(o):find("Methods", 1, true), name)
    end
    table.sort(missing)
    assert.equal(0, #missing, missing_list(missing))
    assert.truthy(documented("g:get_state"))
    assert.truthy(documented("fig:save"))
  end)

  it("help(obj) names an object's class and lists its methods", function()
    local model = T.nn.Linear(3, 2)
    local opt = T.optim.SGD(model:parameters(), { lr = 0.1 })
    local sched = T.optim.lr_scheduler.StepLR(opt, 2)
    local loader = T.utils.data.DataLoader(T.utils.data.TensorDataset(T.zeros(4, 2)))
    local s = T.help(model)
    assert.truthy(s:find("T.nn.Linear(in_features", 1, true), s)
    assert.truthy(s:find("named_parameters", 1, true), s)
    s = T.help(opt)
    assert.truthy(s:find("T.optim.SGD(params", 1, true), s)
    assert.truthy(s:find("add_param_group, load_state_dict, state_dict, step, zero_grad", 1, true), s)
    s = T.help(sched)
    assert.truthy(s:find("get_last_lr", 1, true), s)
    assert.truthy(T.help(loader):find("iter", 1, true))
    local Net = T.nn.Module:extend("Net")
    function Net:init() self.fc = T.nn.Linear(2, 2) end
    s = T.help(Net())
    assert.truthy(s:find("an object of class Net", 1, true), s)
    assert.truthy(s:find('help("Module:parameters")', 1, true), s)
    -- and help() says how to ask
    s = T.help()
    for _, form in ipairs({ 'help("Module:forward")', 'help("Optimizer:step")', 'help("Tensor.grad")', "help(model)" }) do
      assert.truthy(s:find(form, 1, true), form)
    end
  end)

  it("resolves a method to the entry of the class that documents it", function()
    local first = function(q) return (T.help(q):match("^[^\n]*")) end
    assert.equal("opt:step([closure])", first("SGD:step"))
    assert.equal("opt:step([closure])", first("LBFGS:step"))
    assert.equal("opt:step([closure])", first(T.optim.Adam({ T.zeros(1, { requires_grad = true }) }).step))
    assert.equal("sched:step()   |   plateau:step(metric)", first("ReduceLROnPlateau:step"))
    assert.equal("sched:step()   |   plateau:step(metric)", first("sched:step"))
    assert.equal("rnn:flatten_parameters()", first("LSTM:flatten_parameters"))
    assert.equal("t.grad   |   t.grad = g | nil", first("x.grad"))
    assert.equal("t:view(size...)", first("x:view"))
  end)
end)
