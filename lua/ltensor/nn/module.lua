-- ltensor.nn.module: the table T.nn and its module system (Parameter,
-- Module, state_dict interchange with PyTorch) in plain Lua over the tensor
-- ops.  The classes attach to this table from their own files (nn/*.lua);
-- ltensor.nn loads them all.
--
-- Modules are tables whose parameters, buffers and submodules are kept in
-- ordered registries (assignment `self.fc = nn.Linear(...)` registers, as in
-- PyTorch's __setattr__), so parameters() and state_dict() come out in
-- definition order.  Traversal: parameters / named_parameters / buffers /
-- named_buffers / children / named_children / modules / named_modules return
-- lists ({name, value} pairs for the named ones); apply(fn), train(b),
-- eval(), zero_grad([set_to_none]), requires_grad_([b]), num_parameters(),
-- to(dtype) / double() / float(), clone() (deep copy), get_submodule /
-- get_parameter / get_buffer ("a.b.c" paths).
--
-- state_dict keys are PyTorch's, also where Lua counts from 1: containers
-- name their children "0", "1", ... so seq[1] (Lua) is "0.weight" in the
-- state dict, and files interchange with PyTorch unchanged.  Class targets
-- and Embedding indices (padding_idx too) are 1-based.
local T = require "ltensor.core"
local util = require "ltensor.util"
local unchecked = util.unchecked
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local nn = {}

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.")

-- Argument checks: bad arguments raise an error naming the function and the
-- argument, not a Lua runtime error from deep inside.
local typename = util.mtname
local function check_size(fname, n, name, v)
  if math.type(v) ~= "integer" or v < 0 then
    fail(fname, ("bad argument #%d '%s' (non-negative integer expected, got %s)"):format(n, name,
      math.type(v) and tostring(v) or typename(v)))
  end
end
local function check_type(fname, n, name, v, ty, optional)
  if v == nil and optional then return end
  if type(v) ~= ty then
    fail(fname, ("bad argument #%d '%s' (%s expected, got %s)"):format(n, name, ty, typename(v)))
  end
end

-- Parameters: leaf tensors that require grad, remembered in a weak set so that
-- assignment to a module registers them.
local param_set = setmetatable({}, { __mode = "k" })
function nn.Parameter(t, requires_grad)
  if not is_t(t) then fail("Parameter", "expected a tensor") end
  if requires_grad == nil then requires_grad = true end
  if not t.is_leaf then t = t:detach() end
  t.requires_grad = requires_grad
  param_set[t] = true
  return t
end
function nn.is_parameter(t) return param_set[t] == true end
---------------------------------------------------------------------------
-- Module
--
-- The class API the layer files build on (nn/conv.lua, nn/layers.lua, ...):
--   local C = nn.Module:extend("Conv2d")   -- class; C(...) calls C:init(...)
--   function C:init(...)  self.weight = nn.Parameter(t) ... end
--   function C:forward(x) ... end
--   function C:extra_repr() return "in_channels=3, ..." end  -- tostring(m)
--   self:register_buffer("running_mean", t [, persistent])   -- state_dict
-- Hooks a class may override: init, forward, extra_repr (one line, or
-- several separated by "\n", as PyTorch), _repr_name (the name printed, by
-- default the class name).  Submodule names are strings; the containers
-- (Sequential, ModuleList) name their children "0", "1", ... as PyTorch,
-- so that state_dict keys interchange unchanged, while Lua indexing stays
-- 1-based: seq[1] is the child named "0".
---------------------------------------------------------------------------
local Module = { __name = "ltensor.nn.Module", _classname = "Module" }
nn.Module = Module

local function is_module(v) return type(v) == "table" and rawget(v, "_modules") ~= nil end
nn.is_module = is_module

-- Instances: fields live in the instance; parameters and submodules live in
-- ordered registries and are found through __index.
local function instance_index(self, k)
  local p = rawget(self, "_params")
  local v = p.map[k]
  if v ~= nil then return v end
  local b = rawget(self, "_buffers").map[k]
  if b ~= nil then return b end
  local m = rawget(self, "_modules").map[k]
  if m ~= nil then return m end
  return rawget(self, "_class")[k]
end

-- The set of the names in reg.keys (a name may be listed with no value: a
-- declared, empty slot), rebuilt when keys was replaced (containers renumber
-- their children): registering n names is O(n), not a scan of the list per
-- name (nn.RNN(4, 4, 16384) took 37 s to build its 65536 parameters).
local function listed(reg)
  if reg.listed_for ~= reg.keys then
    local set = {}
    for _, key in ipairs(reg.keys) do set[key] = true end
    reg.listed, reg.listed_for = set, reg.keys
  end
  return reg.listed
end
local function reg_set(reg, k, v)
  if reg.map[k] == nil then
    local set = listed(reg)
    if not set[k] then
      reg.keys[#reg.keys + 1] = k
      set[k] = true
    end
  end
  reg.map[k] = v
end
local function reg_del(reg, k)
  reg.map[k] = nil
  local set = listed(reg)
  if not set[k] then return end
  set[k] = nil
  for i, key in ipairs(reg.keys) do if key == k then table.remove(reg.keys, i) break end end
end

local function instance_newindex(self, k, v)
  local params, buffers, mods = rawget(self, "_params"), rawget(self, "_buffers"), rawget(self, "_modules")
  if is_t(v) and (param_set[v] or params.map[k] ~= nil) then
    param_set[v] = true
    reg_del(buffers, k) reg_del(mods, k)
    reg_set(params, k, v)
  elseif is_t(v) and buffers.map[k] ~= nil then
    reg_set(buffers, k, v)
  elseif is_module(v) then
    reg_del(params, k) reg_del(buffers, k)
    reg_set(mods, k, v)
  else
    if v == nil then reg_del(params, k) reg_del(buffers, k) reg_del(mods, k) end
    rawset(self, k, v)
  end
end

local function new_instance(class)
  local obj = {
    _class = class,
    _params = { keys = {}, map = {} },
    _buffers = { keys = {}, map = {} },
    _modules = { keys = {}, map = {} },
    _nonpersistent = {},
    training = true,
  }
  return setmetatable(obj, class._instance_mt)
end

local function make_instance_mt(class)
  return {
    __index = instance_index,
    __newindex = instance_newindex,
    __call = function(self, ...)
      local f = self.forward   -- self is right here: skip forward's self check
      return (unchecked[f] or f)(self, ...)
    end,
    __tostring = function(self) return self:__repr() end,
    __name = "ltensor.nn." .. class._classname,
    __len = function(self) return #rawget(self, "_modules").keys end,
  }
end
Module._instance_mt = make_instance_mt(Module)

-- m.parameters() / m.forward(x) for m:parameters() / m:forward(x): the
-- methods check their self (util.self_checked) and say what to write.  The
-- base class's are checked at the end of this file; a subclass's forward,
-- and its overrides of the base's methods, as they are defined (the class
-- table's __newindex), so user classes get the hint too.  Other functions of
-- a class may be static (Transformer.generate_square_subsequent_mask(n)):
-- left as they are.
local checked_names = { forward = true }
local define_method = util.method_definer(checked_names, function(class)
  return { prefix = "nn." .. rawget(class, "_classname") .. ".", expected = "ltensor.nn.Module", var = "m",
    key = "_modules" }
end)

-- Class creation: local Net = nn.Module:extend("Net"); function Net:init(...) end
function Module:extend(name)
  if name ~= nil and type(name) ~= "string" then
    fail("Module.extend", "bad argument #1 'name' (string expected, got " .. typename(name) .. ")")
  end
  local class = setmetatable({ _classname = name or "Module", _super = self }, {
    __index = self,
    __call = function(c, ...) return c.new(...) end,
    __newindex = define_method,
  })
  -- a subclass of a container keeps the container's indexing
  local mt = make_instance_mt(class)
  local parent_mt = rawget(self, "_instance_mt")
  if parent_mt then
    mt.__index, mt.__newindex = parent_mt.__index, parent_mt.__newindex
  end
  class._instance_mt = mt
  class.new = function(...)
    local obj = new_instance(class)
    obj:init(...)
    return obj
  end
  return class
end
Module.new = function()
  return new_instance(Module)
end
setmetatable(Module, { __call = function(_, ...) return Module.new(...) end })

function Module:init() end
function Module:forward()
  fail(self._classname, "forward is not implemented")
end
function Module:register_parameter(name, t)
  check_type("Module.register_parameter", 1, "name", name, "string")
  if t ~= nil and not is_t(t) then
    fail("Module.register_parameter", "bad argument #2 'param' (Tensor expected, got " .. typename(t) .. ")")
  end
  if name:find(".", 1, true) then fail("Module.register_parameter", "parameter name can't contain \".\"") end
  if name == "" then fail("Module.register_parameter", "parameter name can't be empty string \"\"") end
  if t == nil then reg_del(rawget(self, "_params"), name) return end
  param_set[t] = true
  reg_del(rawget(self, "_buffers"), name) reg_del(rawget(self, "_modules"), name)
  reg_set(rawget(self, "_params"), name, t)
end
-- register_buffer(name, t [, persistent]): a tensor that is part of the
-- module's state (moved by to(), saved by state_dict() unless persistent is
-- false) but is not a parameter.  t may be nil (a declared, empty slot).
function Module:register_buffer(name, t, persistent)
  check_type("Module.register_buffer", 1, "name", name, "string")
  if t ~= nil and not is_t(t) then
    fail("Module.register_buffer", "cannot assign '" .. typename(t) .. "' object to buffer '" .. name ..
      "' (torch Tensor or None required)")
  end
  if name:find(".", 1, true) then fail("Module.register_buffer", "buffer name can't contain \".\"") end
  if name == "" then fail("Module.register_buffer", "buffer name can't be empty string \"\"") end
  if rawget(self, "_params").map[name] ~= nil or rawget(self, "_modules").map[name] ~= nil then
    fail("Module.register_buffer", "attribute '" .. name .. "' already exists")
  end
  if persistent == nil then persistent = true end
  rawset(self, name, nil)
  reg_set(rawget(self, "_buffers"), name, t)
  rawget(self, "_nonpersistent")[name] = (not persistent) or nil
end
function Module:add_module(name, m)
  if math.type(name) == "integer" then name = tostring(name) end
  if type(name) ~= "string" then
    fail("Module.add_module", "bad argument #1 'name' (string expected, got " .. typename(name) .. ")")
  end
  if m ~= nil and not is_module(m) then
    fail("Module.add_module", "bad argument #2 'module' (Module expected, got " .. typename(m) .. ")")
  end
  if name:find(".", 1, true) then fail("Module.add_module", "module name can't contain \".\", got: " .. name) end
  if name == "" then fail("Module.add_module", "module name can't be empty string \"\"") end
  reg_del(rawget(self, "_params"), name) reg_del(rawget(self, "_buffers"), name)
  rawset(self, name, nil)
  reg_set(rawget(self, "_modules"), name, m)
end
Module.register_module = Module.add_module

function Module:children()
  local out = {}
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do if mods.map[k] then out[#out + 1] = mods.map[k] end end
  return out
end
-- The named_* lists ({name, value} pairs, as before) are also iterators,
-- so PyTorch's `for name, p in model:named_parameters() do` works: the
-- generic for calls the list with the previous name as control (nil at the
-- start), and gets the next name and value.
local list_index = setmetatable({}, { __mode = "k" })   -- list -> name -> position
local NamedList = { __name = "ltensor.nn.NamedList" }
function NamedList.__call(list, _, prev)
  local i = 1
  if prev ~= nil then
    local pos = list_index[list]
    if pos == nil then
      pos = {}
      for k, pair in ipairs(list) do pos[pair[1]] = k end
      list_index[list] = pos
    end
    i = (pos[prev] or #list) + 1
  end
  local pair = list[i]
  if pair == nil then return nil end
  return pair[1], pair[2]
end
local function named_list(out) return setmetatable(out, NamedList) end

function Module:named_children()
  local out = {}
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do if mods.map[k] then out[#out + 1] = { k, mods.map[k] } end end
  return named_list(out)
end
-- named_modules([prefix]): {name, module} for this module ("" or prefix)
-- and every descendant, depth first in definition order, each module once.
local function named_modules(self, prefix, out, seen)
  if seen[self] then return out end
  seen[self] = true
  out[#out + 1] = { prefix, self }
  local mods = rawget(self, "_modules")
  for _, k in ipairs(mods.keys) do
    local m = mods.map[k]
    if m then named_modules(m, prefix == "" and k or prefix .. "." .. k, out, seen) end
  end
  return out
end
function Module:named_modules(prefix)
  check_type("Module.named_modules", 1, "prefix", prefix, "string", true)
  return named_list(named_modules(self, prefix or "", {}, {}))
end
function Module:modules()
  local out = {}
  for i, nm in ipairs(self:named_modules()) do out[i] = nm[2] end
  return out
end

-- get_submodule("layers.0.fc"): the module at a dotted path (PyTorch's names)
function Module:get_submodule(target)
  check_type("Module.get_submodule", 1, "target", target, "string")
  local m = self
  if target == "" then return m end
  for item in target:gmatch("[^.]+") do
    local c = rawget(m, "_modules").map[item]
    if c == nil then fail("Module.get_submodule", m:_get_name() .. " has no attribute `" .. item .. "`") end
    m = c
  end
  return m
end
local function split_last(target)
  local mod, name = target:match("^(.*)%.([^.]*)$")
  if mod then return mod, name end
  return "", target
end
-- Module.get_<kind>(target): the member of the submodule at target's
-- prefix ("a.b" of "a.b.c") named by its last part, from that module's which
local function member_getter(kind, which)
  local fname = "Module.get_" .. kind
  Module["get_" .. kind] = function(self, target)
    check_type(fname, 1, "target", target, "string")
    local mp, name = split_last(target)
    local m = self:get_submodule(mp)
    local v = rawget(m, which).map[name]
    if v == nil then fail(fname, m:_get_name() .. " has no " .. kind .. " `" .. name .. "`") end
    return v
  end
end
member_getter("parameter", "_params")
member_getter("buffer", "_buffers")

-- named_parameters([prefix [, recurse]]): a list of {name, tensor} in
-- definition order (own parameters first, then each child's with "child."
-- prefixed); a tensor shared by two modules is listed once.
local function named_members(self, which, prefix, recurse, out, seen, seen_mod)
  if seen_mod[self] then return out end
  seen_mod[self] = true
  local reg = rawget(self, which)
  for _, k in ipairs(reg.keys) do
    local p = reg.map[k]
    if p ~= nil and not seen[p] then seen[p] = true out[#out + 1] = { prefix .. k, p } end
  end
  if recurse then
    local mods = rawget(self, "_modules")
    for _, k in ipairs(mods.keys) do
      if mods.map[k] then named_members(mods.map[k], which, prefix .. k .. ".", true, out, seen, seen_mod) end
    end
  end
  return out
end
local function prefix_of(fname, prefix)
  check_type(fname, 1, "prefix", prefix, "string", true)
  if prefix and prefix ~= "" then return prefix .. "." end
  return ""
end
-- Module.named_<kind>s([prefix [, recurse = true]]) -> {{name, member}, ...}
-- over the members in self[which], and Module.<kind>s([recurse]) -> the
-- members alone (through self:named_<kind>s, so an override is seen)
local function member_lists(kind, which)
  local named, fname = "named_" .. kind .. "s", "Module.named_" .. kind .. "s"
  Module[named] = function(self, prefix, recurse)
    util.check_flag(fail, fname, "recurse", recurse, 2)
    if recurse == nil then recurse = true end
    return named_list(named_members(self, which, prefix_of(fname, prefix), recurse, {}, {}, {}))
  end
  Module[kind .. "s"] = function(self, recurse)
    util.check_flag(fail, "Module." .. kind .. "s", "recurse", recurse, 1)
    local out = {}
    for i, nm in ipairs(self[named](self, nil, recurse)) do out[i] = nm[2] end
    return out
  end
end
member_lists("parameter", "_params")
member_lists("buffer", "_buffers")
-- num_parameters([{only_trainable = false}]): the number of scalars in the
-- (distinct) parameters.
function Module:num_parameters(opts)
  check_type("Module.num_parameters", 1, "opts", opts, "table", true)
  if opts then
    T._check_opts("nn.Module.num_parameters", opts, { "only_trainable" })   -- the one checker
    util.check_flag(fail, "Module.num_parameters", "only_trainable", opts.only_trainable)
  end
  local only = opts and opts.only_trainable
  local n = 0
  for _, p in ipairs(self:parameters()) do
    if not only or p.requires_grad then n = n + p:numel() end
  end
  return n
end

function Module:train(mode)
  if mode == nil then mode = true end
  if type(mode) ~= "boolean" then
    fail("Module.train", "training mode is expected to be boolean")
  end
  for _, m in ipairs(self:modules()) do rawset(m, "training", mode) end
  return self
end
function Module:eval() return self:train(false) end

function Module:zero_grad(set_to_none)
  util.check_flag(fail, "Module.zero_grad", "set_to_none", set_to_none, 1)
  for _, p in ipairs(self:parameters()) do
    if set_to_none then p.grad = nil
    elseif p.grad ~= nil then T.no_grad(function() p.grad:zero_() end) end
  end
end
function Module:requires_grad_(b)
  if b == nil then b = true end
  for _, p in ipairs(self:parameters()) do p:requires_grad_(b) end
  return self
end

-- to(dtype) / double() / float() / half(): converts the floating point
-- parameters and buffers (not integer buffers such as num_batches_tracked,
-- as PyTorch).  The converted parameters are new tensors: build optimizers
-- after converting.
function Module:to(dtype)
  if type(dtype) == "table" and not is_module(dtype) then dtype = dtype.dtype end
  if type(dtype) ~= "userdata" or typename(dtype) ~= "ltensor.dtype" then
    fail("Module.to", "bad argument #1 'dtype' (dtype expected, got " .. typename(dtype) .. ")")
  end
  if not dtype.is_floating_point and not dtype.is_complex then
    fail("Module.to", "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=" .. tostring(dtype))
  end
  T.no_grad(function()
    for _, m in ipairs(self:modules()) do
      local params = rawget(m, "_params")
      for _, k in ipairs(params.keys) do
        local p = params.map[k]
        if p ~= nil and (p.dtype.is_floating_point or p.dtype.is_complex) and p.dtype ~= dtype then
          local q = nn.Parameter(p:detach():to(dtype), p.requires_grad)
          params.map[k] = q
        end
      end
      local bufs = rawget(m, "_buffers")
      for _, k in ipairs(bufs.keys) do
        local b = bufs.map[k]
        if b ~= nil and (b.dtype.is_floating_point or b.dtype.is_complex) and b.dtype ~= dtype then
          bufs.map[k] = b:to(dtype)
        end
      end
    end
  end)
  return self
end
function Module:double() return self:to(T.float64) end
function Module:float() return self:to(T.float32) end
function Module:half() return self:to(T.float16) end

-- clone(): a deep copy (PyTorch's copy.deepcopy of a module): new parameter
-- and buffer tensors with the same values, plain tables copied, functions
-- and other values shared.
local function deepcopy(v, memo)
  if memo[v] ~= nil then return memo[v] end
  if is_t(v) then
    local c
    if param_set[v] then
      c = T.no_grad(function() return v:detach():clone() end)
      c = nn.Parameter(c, v.requires_grad)
    else
      c = T.no_grad(function() return v:detach():clone() end)
    end
    memo[v] = c
    return c
  end
  if type(v) ~= "table" then return v end
  local mt = getmetatable(v)
  if mt ~= nil and not is_module(v) and type(mt) == "table" and mt.__name and not rawget(v, "_class") then
    return v  -- a userdata-like object with a class (dtype, generator): shared
  end
  local c = {}
  memo[v] = c
  for k, x in next, v do rawset(c, deepcopy(k, memo), deepcopy(x, memo)) end
  return setmetatable(c, mt)
end
function Module:clone()
  local memo = {}
  -- classes are shared, never copied
  for _, m in ipairs(self:modules()) do memo[rawget(m, "_class")] = rawget(m, "_class") end
  return deepcopy(self, memo)
end

-- An ordered name -> tensor table: pairs() visits the keys in PyTorch's
-- order (a module's parameters, then its buffers, then each child's).
local function ordered_dict(keys, map)
  local fname = "ordered_dict"
  if type(keys) ~= "table" then fail(fname, "bad argument #1 'keys' (table expected, got " .. typename(keys) .. ")") end
  if type(map) ~= "table" then fail(fname, "bad argument #2 'map' (table expected, got " .. typename(map) .. ")") end
  local mt = getmetatable(map)
  if mt ~= nil and not (type(mt) == "table" and rawget(mt, "__name") == "ltensor.nn.StateDict") then
    fail(fname, "bad argument #2 'map' (a plain table expected, got " .. typename(map) .. ")")
  end
  for i, k in ipairs(keys) do
    if k ~= k then fail(fname, ("bad argument #1 'keys' (entry %d is NaN)"):format(i)) end
  end
  return setmetatable(map, {
    __pairs = function(t)
      local i = 0
      return function()
        repeat
          i = i + 1
          local k = keys[i]
          if k == nil then return nil end
          local v = rawget(t, k)
          if v ~= nil then return k, v end
        until false
      end, t, nil
    end,
    __name = "ltensor.nn.StateDict",
    __keys = keys,   -- the order, also where pairs() ignores __pairs (5.1, LuaJIT)
  })
end
nn.ordered_dict = ordered_dict

-- The state entries of one module, PyTorch's _save_to_state_dict: its
-- parameters, then its persistent buffers (nil entries skipped).
local function own_state(m)
  local out = {}
  local params = rawget(m, "_params")
  for _, k in ipairs(params.keys) do
    if params.map[k] ~= nil then out[#out + 1] = { k, params.map[k], "param" } end
  end
  local bufs, np = rawget(m, "_buffers"), rawget(m, "_nonpersistent")
  for _, k in ipairs(bufs.keys) do
    if bufs.map[k] ~= nil and not np[k] then out[#out + 1] = { k, bufs.map[k], "buffer" } end
  end
  return out
end
-- visits (module, prefix) depth first, as PyTorch's recursive state_dict
-- (a module reached twice is visited twice: keys exist for both paths)
local function walk_state(m, prefix, fn)
  for _, e in ipairs(own_state(m)) do fn(prefix .. e[1], e[2], m, e[3]) end
  local mods = rawget(m, "_modules")
  for _, k in ipairs(mods.keys) do
    if mods.map[k] then walk_state(mods.map[k], prefix .. k .. ".", fn) end
  end
end

-- state_dict([{prefix = "", keep_vars = false}]): name -> tensor with
-- PyTorch's keys ("0.weight", "fc1.bias", "layers.2.weight",
-- "1.running_mean"); values are detached tensors sharing the parameters'
-- memory (keep_vars: the parameters themselves).
function Module:state_dict(opts)
  check_type("Module.state_dict", 1, "opts", opts, "table", true)
  opts = opts or {}
  T._check_opts("nn.Module.state_dict", opts, { "prefix", "keep_vars" })   -- the one checker
  util.check_flags(fail, "Module.state_dict", opts)
  check_type("Module.state_dict", 1, "opts.prefix", opts.prefix, "string", true)
  local keys, map = {}, {}
  walk_state(self, opts.prefix or "", function(name, t)
    if map[name] == nil then keys[#keys + 1] = name end
    map[name] = opts.keep_vars and t or t:detach()
  end)
  return ordered_dict(keys, map)
end

local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end

-- load_state_dict(sd [, strict | {strict = true}]): copies every entry into
-- the existing parameter or buffer in place (no autograd recording, dtype
-- converted as copy_ does).  Strict: a missing key, an unexpected key or a
-- shape mismatch raises one error naming all of them, in PyTorch's words;
-- not strict: missing and unexpected keys are only reported in the result
-- {missing_keys = {...}, unexpected_keys = {...}}, shape mismatches still
-- raise.  Nothing is copied when it raises.
function Module:load_state_dict(sd, opts)
  local fname = "Module.load_state_dict"
  if type(sd) ~= "table" or is_module(sd) then
    fail(fname, "Expected state_dict to be dict-like, got " .. typename(sd) .. ".")
  end
  local strict = true
  if type(opts) == "boolean" then strict = opts
  elseif type(opts) == "table" then
    -- model:load_state_dict(T.load(path)) passes T.load's second result, the
    -- file's metadata (strings only, e.g. {format = "pt"}): not options
    local metadata = next(opts) ~= nil
    for k, v in pairs(opts) do
      if k == "strict" or type(v) ~= "string" then metadata = false end
    end
    if not metadata then
      T._check_opts("nn." .. fname, opts, { "strict" })   -- the one checker
      util.check_flags(fail, fname, opts)
      if opts.strict ~= nil then strict = opts.strict and true or false end
    end
  elseif opts ~= nil then
    fail(fname, "bad argument #2 'strict' (boolean or table expected, got " .. typename(opts) .. ")")
  end
  local missing, errors, expected, copies = {}, {}, {}, {}
  walk_state(self, "", function(name, t)
    expected[name] = true
    local v = rawget(sd, name)
    if v == nil then missing[#missing + 1] = name return end
    if not is_t(v) then
      errors[#errors + 1] = 'While copying the parameter named "' .. name ..
        '", expected torch.Tensor or Tensor-like object from checkpoint but received ' .. typename(v)
      return
    end
    local a, b = t.shape, v.shape
    local same = #a == #b
    if same then for i = 1, #a do if a[i] ~= b[i] then same = false break end end end
    if not same then
      errors[#errors + 1] = "size mismatch for " .. name .. ": copying a param with shape " .. shape_str(b) ..
        " from checkpoint, the shape in current model is " .. shape_str(a) .. "."
      return
    end
    copies[#copies + 1] = { t, v }
  end)
  local unexpected = {}
  for k in next, sd do
    if not expected[k] then unexpected[#unexpected + 1] = type(k) == "string" and k or tostring(k) end
  end
  table.sort(unexpected)
  if strict then
    if #unexpected > 0 then
      local q = {}
      for i, k in ipairs(unexpected) do q[i] = '"' .. k .. '"' end
      table.insert(errors, 1, "Unexpected key(s) in state_dict: " .. table.concat(q, ", ") .. ". ")
    end
    if #missing > 0 then
      local q = {}
      for i, k in ipairs(missing) do q[i] = '"' .. k .. '"' end
      table.insert(errors, 1, "Missing key(s) in state_dict: " .. table.concat(q, ", ") .. ". ")
    end
  end
  if #errors > 0 then
    fail(fname, "Error(s) in loading state_dict for " .. self:_get_name() .. ":\n\t" .. table.concat(errors, "\n\t"))
  end
  T.no_grad(function()
    for _, c in ipairs(copies) do
      local dst, src = c[1], c[2]
      local same = rawequal(dst, src) or (dst:data_ptr() == src:data_ptr() and dst.dtype == src.dtype and
        table.concat(dst:stride(), ",") == table.concat(src:stride(), ","))
      if not same then dst:copy_(src) end
    end
  end)
  return { missing_keys = missing, unexpected_keys = unexpected }
end

function Module:apply(fn)
  if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
    fail("Module.apply", "bad argument #1 'fn' (function expected, got " .. typename(fn) .. ")")
  end
  for _, c in ipairs(self:children()) do c:apply(fn) end
  fn(self)
  return self
end

function Module:_get_name() return self._repr_name or self._classname end
function Module:extra_repr() return "" end
-- PyTorch's Module.__repr__: the extra_repr on one line when there are no
-- children, else one line per extra_repr line and per child, indented by two.
function Module:__repr()
  local extra = self:extra_repr()
  local extra_lines = {}
  if extra and extra ~= "" then
    for line in (extra .. "\n"):gmatch("(.-)\n") do extra_lines[#extra_lines + 1] = line end
  end
  local child_lines = {}
  for _, kv in ipairs(self:named_children()) do
    local s = tostring(kv[2]):gsub("\n", "\n  ")
    child_lines[#child_lines + 1] = "(" .. kv[1] .. "): " .. s
  end
  local main = self:_get_name() .. "("
  if #extra_lines == 1 and #child_lines == 0 then
    main = main .. extra_lines[1]
  elseif #extra_lines + #child_lines > 0 then
    local lines = {}
    for _, l in ipairs(extra_lines) do lines[#lines + 1] = l end
    for _, l in ipairs(child_lines) do lines[#lines + 1] = l end
    main = main .. "\n  " .. table.concat(lines, "\n  ") .. "\n"
  end
  return main .. ")"
end

---------------------------------------------------------------------------
-- helpers for extra_repr: Python's repr of a float and of a tuple
---------------------------------------------------------------------------
-- pyfloat(0.00001) == "1e-05", pyfloat(0.1) == "0.1", pyfloat(2) == "2.0"
local function pyfloat(x)
  if math.type(x) == "integer" then x = x + 0.0 end
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" elseif x == -math.huge then return "-inf" end
  if x == 0 then return (1 / x < 0) and "-0.0" or "0.0" end
  local s
  for p = 1, 17 do
    s = string.format("%." .. (p - 1) .. "e", x)
    if tonumber(s) == x then break end
  end
  local sign, mant, ex = s:match("^(-?)([%d.]+)e([-+]%d+)$")
  ex = tonumber(ex)
  local digits = mant:gsub("%.", "")
  if ex >= -4 and ex < 16 then
    local out
    if ex < 0 then
      out = "0." .. string.rep("0", -ex - 1) .. digits
    elseif #digits <= ex + 1 then
      out = digits .. string.rep("0", ex + 1 - #digits) .. ".0"
    else
      out = digits:sub(1, ex + 1) .. "." .. digits:sub(ex + 2)
    end
    return sign .. out
  end
  local m = digits:sub(1, 1) .. (#digits > 1 and "." .. digits:sub(2) or "")
  return sign .. m .. string.format("e%s%02d", ex < 0 and "-" or "+", math.abs(ex))
end
nn._pyfloat = pyfloat
local function pytuple(t)
  local parts = {}
  for i, v in ipairs(t) do parts[i] = tostring(v) end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end
nn._pytuple = pytuple

-- options tables are checked by the one checker (T._check_opts): an unknown
-- key raises, suggesting the closest; flags by util.check_flags
local MODULE_FLAGS = util.MODULE_FLAGS
local function check_opts(fname, opts, allowed, argn)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    fail(fname, ("bad argument #%d 'opts' (table expected, got %s)"):format(argn or 1, typename(opts)))
  end
  T._check_opts("nn." .. fname, opts, allowed)
  util.check_flags(fail, fname, opts, MODULE_FLAGS)
  local dt = opts.dtype
  if dt ~= nil and util.opt_dtype("nn." .. fname, dt) ~= dt then
    -- a dtype's name: the modules read opts.dtype as a dtype (a copy: the
    -- caller's table is left as it was)
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.dtype = util.opt_dtype("nn." .. fname, dt)
    return o
  end
  return opts
end
nn._check_opts = check_opts
nn._check_size, nn._check_type = check_size, check_type
-- for the containers (nn/containers.lua)
nn._is_module, nn._instance_index, nn._instance_newindex, nn._reg_del = is_module, instance_index, instance_newindex, reg_del
do
  local names = {}
  for k, v in pairs(Module) do
    if type(v) == "function" and k:sub(1, 1) ~= "_" and k ~= "new" and k ~= "extend" then names[#names + 1] = k end
  end
  for _, k in ipairs(names) do checked_names[k] = true end
  util.check_methods(Module, { prefix = "nn.Module.", expected = "ltensor.nn.Module", var = "m", key = "_modules" }, names)
end
-- The table T.nn inside another: the package ltensor.nn is the one module
-- holding it (a traceback names nn's functions through one module).
return { nn = nn }
