-- ltensor.help: the one source of the reference documentation.  `T.help(x)`
-- (and `help(x)` / `?x` at the prompt) returns the text for a function,
-- method, module or name; `make doc` (tools/gen_doc.lua) renders the same
-- entries into doc/; spec/docs_spec.lua checks that every public name has
-- one.
--
-- Entries live in lua/ltensor/docs/<area>.lua, each a list of
--   { name, signature, description, example [, see = {...}] }
-- where name is qualified: "T.zeros", "T.nn.Linear", "T.linalg.solve",
-- "Tensor:view" (a method only), "T.nn.Module:parameters".  A function that
-- is both `T.sum` and `t:sum()` is documented once, as "T.sum".
local T = require "ltensor.core"

local help = {}

-- The documentation areas, in the order `make doc` lists them.
help.AREAS = { "core", "ops", "inplace", "views", "reductions", "structural", "linalg", "random", "autograd", "nn", "nn_layers", "nn_modules", "optim", "training", "io", "onnx", "env" }

local entries, by_name
local function load()
  if entries then return end
  entries, by_name = {}, {}
  for _, area in ipairs(help.AREAS) do
    local ok, list = pcall(require, "ltensor.docs." .. area)
    if ok and type(list) == "table" then
      for _, e in ipairs(list) do
        local entry = { name = e[1], signature = e[2], description = e[3], example = e[4],
                        see = e.see, area = area }
        entries[#entries + 1] = entry
        by_name[entry.name] = entry
      end
    end
  end
end

function help.entries() load() return entries end
function help.entry(name) load() return by_name[name] end

-- The public namespaces: qualified prefix -> table.  Walked lazily because
-- later modules (nn, optim, linalg, ...) add to T after this file loads.
local function namespaces()
  local list = { { "T", T } }
  local function add(prefix, t)
    if type(t) == "table" then list[#list + 1] = { prefix, t } end
  end
  add("T.nn", T.nn)
  add("T.nn.functional", T.nn and T.nn.functional)
  add("T.nn.Transformer", T.nn and T.nn.Transformer)
  add("T.nn.init", T.nn and T.nn.init)
  add("T.nn.utils", T.nn and T.nn.utils)
  add("T.nn.utils.rnn", T.nn and T.nn.utils and T.nn.utils.rnn)
  add("T.linalg", T.linalg)
  add("T.optim", T.optim)
  add("T.optim.lr_scheduler", T.optim and T.optim.lr_scheduler)
  add("T.autograd", T.autograd)
  add("T.distributions", T.distributions)
  add("T.utils", T.utils)
  add("T.utils.data", T.utils and T.utils.data)
  add("T.testing", T.testing)
  add("T.plot", T.plot)
  add("T.onnx", T.onnx)
  return list
end

local function is_public_key(k) return type(k) == "string" and k:match("^[%a][%w_]*$") ~= nil end

-- The classes whose objects users call methods on ("model:parameters()",
-- "opt:step()", "sched:get_last_lr()", "loader:iter()"), by namespace: each
-- family's base class (every layer is a T.nn.Module, every optimizer a
-- T.optim.Optimizer, every scheduler an LRScheduler) documents the methods
-- its classes share, as "T.nn.Module:parameters"; a class documents the
-- methods it adds, as "T.nn.Sequential:append".  virtual: methods every
-- class of the family defines though the base does not.
local FAMILIES = {
  { ns = "T.nn", base = "Module" },
  { ns = "T.optim", base = "Optimizer" },
  { ns = "T.optim.lr_scheduler", base = "LRScheduler", virtual = { get_lr = true } },
  { ns = "T.utils.data" },
  -- distributions: every method a class defines is the base's, and the
  -- properties (d.mean, d.variance, ...) are attributes: "Distribution.mean"
  { ns = "T.distributions", base = "Distribution", all_generic = true,
    virtual = { log_prob = true, cdf = true, icdf = true, enumerate_support = true },
    attributes = { mean = true, variance = true, stddev = true, mode = true, probs = true, logits = true,
      covariance_matrix = true, precision_matrix = true, scale_tril = true, batch_shape = true, event_shape = true } },
}
help.FAMILIES = FAMILIES
-- objects whose class is not a table of a namespace: how to reach the
-- metatable of one (a getter: some are built only to be asked)
local OBJECT_CLASSES = {
  { "T.nn.utils.rnn.PackedSequence", function() return T.nn.utils.rnn.PackedSequence_mt end },
  { "T.Generator", function() return getmetatable(T.Generator()) end },
  { "T.Size", function() return getmetatable(T.Size(1)) end },
  { "T.plot.Figure", function() return getmetatable(T.plot.line({ y = { 1, 2 } })) end },
  { "T.utils.Progress", function() return getmetatable(T.utils.progress(0, { disable = true })) end },
}
-- the metatable of an object class, or nil
local function object_mt(o)
  local ok, mt = pcall(o[2])
  return ok and type(mt) == "table" and mt or nil
end
-- the public functions of such a metatable and of its __index table
local function object_methods(mt)
  local out = {}
  for _, t in ipairs({ mt, rawget(mt, "__index") }) do
    if type(t) == "table" then
      for k, v in pairs(t) do
        if is_public_key(k) and type(v) == "function" then out[k] = v end
      end
    end
  end
  return out
end
-- methods a class redefines with the meaning the base documents
local GENERIC = { init = true, forward = true, extra_repr = true, step = true, state_dict = true,
  load_state_dict = true, get_lr = true, zero_grad = true, add_param_group = true }

-- The attributes a tensor has besides its methods ("Tensor.shape"): what
-- ltl_tensor_index (src/binding/l_attr.c) answers.
help.TENSOR_ATTRIBUTES = { "shape", "dtype", "ndim", "requires_grad", "grad", "grad_fn", "is_leaf", "data", "T" }

local function resolve(path)
  local t = T
  for part in path:gmatch("[^.]+") do
    if part ~= "T" then
      if type(t) ~= "table" then return nil end
      t = t[part]
    end
  end
  return t
end

-- the public function-valued keys reachable from a class table (its own,
-- then through each __index table: a constructor proxy's class, a
-- subclass's parent)
local function method_keys(c)
  local keys, seen, visited, t = {}, {}, {}, c
  while type(t) == "table" and not visited[t] do
    visited[t] = true
    for k, v in pairs(t) do
      if is_public_key(k) and type(v) == "function" and not seen[k] then seen[k] = true keys[#keys + 1] = k end
    end
    local mt = getmetatable(t)
    t = type(mt) == "table" and rawget(mt, "__index") or nil
  end
  table.sort(keys)
  return keys
end

local function is_class(v)
  if type(v) ~= "table" then return false end
  if rawget(v, "_classname") then return true end
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__call") ~= nil
end

-- is k defined at class c itself (not inherited)?  c is a T.nn class, or a
-- constructor proxy whose __index is the class
local function defined_at(c, k)
  if rawget(c, k) ~= nil then return true end
  if rawget(c, "_classname") then return false end
  local mt = getmetatable(c)
  local idx = type(mt) == "table" and rawget(mt, "__index") or nil
  return type(idx) == "table" and rawget(idx, k) ~= nil
end

-- functions of a class called on the class, not on an object
local CLASS_FUNCTIONS = { from_pretrained = true }

-- {qualified name, function} for every documented method of a class: the
-- base's methods, then each class's own (defined there, not inherited from
-- a documented parent, and not a GENERIC redefinition); memoised
local class_method_list, override_list
local function class_methods()
  if class_method_list then return class_method_list end
  local out, overrides = {}, {}
  for _, f in ipairs(FAMILIES) do
    local ns = resolve(f.ns)
    local base = f.base and type(ns) == "table" and ns[f.base] or nil
    local attributes = f.attributes or {}
    if type(base) == "table" then
      local q = f.ns .. "." .. f.base
      for _, k in ipairs(method_keys(base)) do
        if k ~= "new" and not attributes[k] then out[#out + 1] = { q .. ":" .. k, base[k] } end
      end
      for k in pairs(f.virtual or {}) do out[#out + 1] = { q .. ":" .. k } end
      for k in pairs(attributes) do
        out[#out + 1] = { q .. "." .. k, type(base[k]) == "function" and base[k] or nil }
      end
    end
    if type(ns) == "table" then
      local classes = {}
      for name, c in pairs(ns) do
        if is_public_key(name) and c ~= base and is_class(c) then classes[#classes + 1] = name end
      end
      table.sort(classes)
      for _, name in ipairs(classes) do
        local c = ns[name]
        for _, k in ipairs(method_keys(c)) do
          local v, bv = c[k], base and base[k]
          local inherited = bv ~= nil or (f.virtual or {})[k] or attributes[k]
          local generic = f.all_generic or GENERIC[k]
          if k ~= "new" and defined_at(c, k) and (not inherited or (bv ~= v and not generic)) then
            out[#out + 1] = { f.ns .. "." .. name .. (CLASS_FUNCTIONS[k] and "." or ":") .. k, v }
          elseif k ~= "new" and inherited and bv ~= v and type(v) == "function" then
            -- a redefinition: help(opt.step) of an LBFGS is Optimizer:step's entry
            overrides[#overrides + 1] = { f.ns .. "." .. f.base .. (attributes[k] and "." or ":") .. k, v }
          end
        end
      end
    end
  end
  for _, o in ipairs(OBJECT_CLASSES) do
    local mt = object_mt(o)
    if mt then
      for k, v in pairs(object_methods(mt)) do out[#out + 1] = { o[1] .. ":" .. k, v } end
    end
  end
  class_method_list, override_list = out, overrides
  return out
end

-- Every public name: module functions and classes ("T.zeros", "T.nn.Linear"),
-- and tensor methods that are not also module functions ("Tensor:view").
function help.public_names()
  local names, seen = {}, {}
  for _, ns in ipairs(namespaces()) do
    local prefix, t = ns[1], ns[2]
    for k, v in pairs(t) do
      local tv = type(v)
      if is_public_key(k) and (tv == "function" or (tv == "table" and (rawget(v, "_classname") or
          (getmetatable(v) or {}).__call))) then
        local q = prefix .. "." .. k
        if not seen[q] then seen[q] = true names[#names + 1] = q end
      end
    end
  end
  for k, v in pairs(T._methods) do
    if is_public_key(k) and type(v) == "function" and not (type(T[k]) == "function") then
      names[#names + 1] = "Tensor:" .. k
    end
  end
  for _, m in ipairs(class_methods()) do names[#names + 1] = m[1] end
  for _, a in ipairs(help.TENSOR_ATTRIBUTES) do names[#names + 1] = "Tensor." .. a end
  table.sort(names)
  return names
end

-- function value -> qualified name (module functions first, then methods)
local reverse
local function build_reverse()
  reverse = {}
  for _, ns in ipairs(namespaces()) do
    local prefix, t = ns[1], ns[2]
    for k, v in pairs(t) do
      if is_public_key(k) and (type(v) == "function" or type(v) == "table") and reverse[v] == nil then
        reverse[v] = prefix .. "." .. k
      end
    end
  end
  for k, v in pairs(T._methods) do
    if is_public_key(k) and type(v) == "function" and reverse[v] == nil then
      reverse[v] = (type(T[k]) == "function") and ("T." .. k) or ("Tensor:" .. k)
    end
  end
  for _, m in ipairs(class_methods()) do
    if m[2] ~= nil and reverse[m[2]] == nil then reverse[m[2]] = m[1] end
  end
  for _, m in ipairs(override_list) do
    if reverse[m[2]] == nil then reverse[m[2]] = m[1] end
  end
end

function help.name_of(v)
  if reverse == nil or reverse[v] == nil then build_reverse() end
  return reverse[v]
end

-- An in-place method `Tensor:foo_` is documented by its out-of-place entry
-- (`T.foo` or `Tensor:foo`) unless it has its own.
local function base_entry(name)
  local e = help.entry(name)
  if e then return e end
  local base = name:match("^Tensor:([%w_]-)_$")
  if base then return help.entry("T." .. base) or help.entry("Tensor:" .. base) end
  return nil
end
help.base_entry = base_entry

-- Public names without documentation (spec/docs_spec.lua keeps this empty).
function help.undocumented()
  local out = {}
  for _, n in ipairs(help.public_names()) do
    if not base_entry(n) then out[#out + 1] = n end
  end
  return out
end

function help.signature(name)
  local e = help.entry(name)
  return e and e.signature or nil
end

-- Names close to `word` (for "no such name" messages).
local function similar(word)
  local out = {}
  local w = word:lower()
  for _, n in ipairs(help.public_names()) do
    local short = n:match("[%.:]([%w_]+)$") or n
    if short:lower():find(w, 1, true) then out[#out + 1] = n end
    if #out >= 8 then break end
  end
  return out
end

local function render(e)
  local lines = { e.signature, "", e.description }
  if e.example and e.example ~= "" then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Example:"
    for l in (e.example .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = "  " .. l end
  end
  if e.see then lines[#lines + 1] = "" lines[#lines + 1] = "See also: " .. table.concat(e.see, ", ") end
  return table.concat(lines, "\n")
end

-- Names for the class part of "Class:method" / "Class.attribute": the
-- family bases by their PyTorch names, and the words code uses for a tensor.
local CLASS_ALIASES = { Module = "T.nn.Module", Optimizer = "T.optim.Optimizer",
  LRScheduler = "T.optim.lr_scheduler.LRScheduler", Scheduler = "T.optim.lr_scheduler.LRScheduler",
  lr_scheduler = "T.optim.lr_scheduler.LRScheduler", Dataset = "T.utils.data.TensorDataset",
  -- the variable names examples and PyTorch code use
  model = "T.nn.Module", module = "T.nn.Module", m = "T.nn.Module", net = "T.nn.Module", layer = "T.nn.Module",
  opt = "T.optim.Optimizer", optimizer = "T.optim.Optimizer", optim = "T.optim.Optimizer",
  sched = "T.optim.lr_scheduler.LRScheduler", scheduler = "T.optim.lr_scheduler.LRScheduler",
  loader = "T.utils.data.DataLoader", dl = "T.utils.data.DataLoader", ds = "T.utils.data.TensorDataset",
  dataset = "T.utils.data.TensorDataset", Distribution = "T.distributions.Distribution",
  dist = "T.distributions.Distribution", d = "T.distributions.Distribution",
  g = "T.Generator", gen = "T.Generator", generator = "T.Generator", fig = "T.plot.Figure", figure = "T.plot.Figure",
  bar = "T.utils.Progress", progress = "T.utils.Progress", size = "T.Size", Size = "T.Size" }
local TENSOR_WORDS = { Tensor = true, t = true, x = true, tensor = true }

-- the qualified name and family of a class named by its short or qualified name
local function find_class(cls)
  if CLASS_ALIASES[cls] then cls = CLASS_ALIASES[cls] end
  local short = cls:match("([%w_]+)$")
  for _, o in ipairs(OBJECT_CLASSES) do
    if cls == o[1] or short == o[1]:match("([%w_]+)$") then
      local mt = object_mt(o)
      return o[1], mt and object_methods(mt) or {}, {}
    end
  end
  for _, f in ipairs(FAMILIES) do
    local q = f.ns .. "." .. short
    if (cls == short or cls == q) then
      local ns = resolve(f.ns)
      local c = type(ns) == "table" and ns[short] or nil
      if is_class(c) or (c ~= nil and short == f.base) then return q, c, f end
    end
  end
  return nil
end

-- "Class:method" or "Class.attribute": the class's own entry, the entry of
-- the same function under the class that defines it (GRU:flatten_parameters
-- is RNNBase's), else the family base's (SGD:step is Optimizer:step)
local function lookup_member(cls, sep, m)
  if TENSOR_WORDS[cls] then
    for _, q in ipairs(sep == "." and { "Tensor." .. m, "Tensor:" .. m, "T." .. m } or { "Tensor:" .. m, "T." .. m, "Tensor." .. m }) do
      if by_name[q] then return by_name[q], q end
    end
    return nil
  end
  local q, c, f = find_class(cls)
  if not q then return nil end
  for _, n in ipairs({ q .. ":" .. m, q .. "." .. m }) do
    if by_name[n] then return by_name[n], n end
  end
  local v = c[m]
  if type(v) == "function" then
    local n = help.name_of(v)
    if n and by_name[n] then return by_name[n], n end
  end
  if f.base then
    for _, n in ipairs({ f.ns .. "." .. f.base .. ":" .. m, f.ns .. "." .. f.base .. "." .. m }) do
      if by_name[n] then return by_name[n], n end
    end
  end
  return nil
end

-- Resolve a string: a qualified name, "Class:method" ("Module:forward",
-- "SGD:step", "Tensor.grad", "t:view"), a short name ("sum" -> T.sum or
-- Tensor:sum, "step" -> Optimizer:step).
local function lookup_string(s)
  load()
  if by_name[s] then return by_name[s], s end
  local cls, sep, m = s:match("^([%w_.]-[%w_]+)([:.])([%w_]+)$")
  if cls then
    local e, q = lookup_member(cls, sep, m)
    if e then return e, q end
  end
  local short = s:match("^[%w_]+[:%.]([%w_]+)$") or s
  for _, q in ipairs({ "T." .. short, "Tensor:" .. short, "Tensor." .. short, "T.nn." .. short, "T.nn.functional." .. short,
                       "T.linalg." .. short, "T.optim." .. short, "T.nn.Module:" .. short,
                       "T.nn.init." .. short, "T.nn.utils." .. short, "T.distributions." .. short,
                       "T.optim.lr_scheduler." .. short, "T.utils.data." .. short,
                       "T.optim.Optimizer:" .. short, "T.optim.lr_scheduler.LRScheduler:" .. short,
                       "T.utils.data.DataLoader:" .. short }) do
    if by_name[q] then return by_name[q], q end
  end
  return nil
end

-- help(x) -> text.  x: a function, a module table, a class, or a name.
-- The class of an object users call methods on: a module ("T.nn.Linear",
-- or its own class name), an optimizer, a scheduler, a loader, a dataset
-- (their metatables carry "ltensor.optim.SGD"-style __name); nil otherwise.
local function object_class(x)
  if type(x) ~= "table" and type(x) ~= "userdata" then return nil end
  if T.nn and T.nn.is_module and T.nn.is_module(x) then
    local cls = x._classname
    return "T.nn." .. tostring(cls), "T.nn.Module"
  end
  local mt = getmetatable(x)
  local n = type(mt) == "table" and rawget(mt, "__name")
  -- (a class table carries __name too, and __index: it is not an object)
  if type(n) == "string" and n:match("^ltensor%.") and not (type(x) == "table" and rawget(x, "__index")) then
    return "T." .. n:sub(9)
  end
  return nil
end

-- help(obj) for a module, optimizer, scheduler, loader or dataset: its
-- class's entry and the methods documented for it
local function describe_object(x)
  local q, fallback = object_class(x)
  if not q then return nil end
  load()
  local cq, _, f = find_class(q)
  local prefixes = { q .. ":" }
  if f and f.base then prefixes[2] = f.ns .. "." .. f.base .. ":" end
  if not cq and fallback then prefixes[2] = fallback .. ":" end
  local methods, seen = {}, {}
  for _, e in ipairs(entries) do
    for _, p in ipairs(prefixes) do
      local m = e.name:sub(1, #p) == p and e.name:sub(#p + 1)
      if m and not seen[m] then seen[m] = true methods[#methods + 1] = m end
    end
  end
  table.sort(methods)
  local short = q:match("([%w_]+)$")
  if not by_name[q] and #methods == 0 then return nil end
  local ask = cq and short or (fallback or q):match("([%w_]+)$")
  local example = methods[1] or "?"
  for _, m in ipairs({ "parameters", "step", "iter", "get" }) do
    if seen[m] then example = m break end
  end
  local lines = {}
  local e = by_name[q]
  if e then lines[1] = render(e) .. "\n" else lines[1] = "an object of class " .. short .. "\n" end
  lines[#lines + 1] = ("Methods (help(\"%s:<method>\"), e.g. help(\"%s:%s\")):"):format(ask, ask, example)
  lines[#lines + 1] = "  " .. table.concat(methods, ", ")
  return table.concat(lines, "\n")
end

function help.help(x, asked)
  if x == nil and type(asked) == "string" and asked ~= "" then
    return ("no documentation for '%s' (it is nil)"):format(asked)
  end
  if x == nil then
    return table.concat({
      "help(f) or ?f shows the documentation of a function, method, class or module:",
      "  help(T.zeros)   help(\"view\")   ?T.nn.Linear   ?T.linalg   help(\"add_\") (in place)",
      "Methods of objects, as \"Class:method\" (PyTorch's class names, or the usual variable names):",
      "  help(\"Module:forward\")   help(\"Optimizer:step\")   help(\"StepLR:get_last_lr\")   help(\"DataLoader:iter\")",
      "  help(\"model:parameters\")   help(\"opt:zero_grad\")   help(\"sched:step\")   help(opt.step)",
      "  help(model), help(opt), help(loader): the object's class and its methods",
      "Tensor attributes, as \"Tensor.name\": help(\"Tensor.grad\")   help(\"x.shape\")   help(\"grad_fn\")",
      "Reference: doc/index.html (make doc).  Tab completes names, fields and methods."
    }, "\n")
  end
  local name
  if type(x) == "string" then
    local e, q = lookup_string(x)
    if e then return render(e) end
    local sim = similar(x:match("([%w_]+)$") or x)
    return ("no documentation for '%s'"):format(x) ..
           (#sim > 0 and ("; similar names: " .. table.concat(sim, ", ")) or "")
  end
  if getmetatable(x) == T._metatable then
    return "a tensor: " .. tostring(x.dtype) .. " of size {" .. table.concat(x.shape, ", ") ..
           "}; help(\"Tensor:<method>\") documents a method, e.g. help(\"view\"), and help(\"Tensor.<attribute>\") an attribute (" ..
           table.concat(help.TENSOR_ATTRIBUTES, ", ") .. ")"
  end
  name = help.name_of(x)
  if name then
    local e = help.entry(name)
    if e then return render(e) end
    e = base_entry(name)
    if e then return name:gsub("^Tensor:", "t:") .. "(...): the in-place form of " .. e.name .. "\n\n" .. render(e) end
  end
  local obj = describe_object(x)
  if obj then return obj end
  if type(x) == "table" then
    -- a namespace: list its documented names with their one-line summaries
    for _, ns in ipairs(namespaces()) do
      if ns[2] == x then
        local prefix = ns[1]
        local lines = { prefix .. ":" }
        load()
        for _, e in ipairs(entries) do
          local rest = e.name:sub(#prefix + 2)
          if e.name:sub(1, #prefix + 1) == prefix .. "." and not rest:find("[%.:]") then
            lines[#lines + 1] = ("  %-28s %s"):format(rest, (e.description:match("^[^\n]*") or ""))
          end
        end
        return table.concat(lines, "\n")
      end
    end
  end
  if name then return ("no documentation for %s yet"):format(name) end
  return ("no documentation for this %s"):format(type(x))
end

T.help = help.help
return help
