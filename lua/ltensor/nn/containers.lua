-- ltensor.nn.containers: Sequential, ModuleList, ModuleDict.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
local autograd = require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn
local F = require "ltensor.nn.functional"
local Module = nn.Module
local fail = util.failer("ltensor.nn.")
local typename = util.mtname
local check_type = nn._check_type
local is_module, instance_index, instance_newindex, reg_del = nn._is_module, nn._instance_index, nn._instance_newindex, nn._reg_del
---------------------------------------------------------------------------
-- containers: Sequential, ModuleList (children "0", "1", ..., Lua index
-- 1, 2, ...; negative indices count from the end) and ModuleDict
---------------------------------------------------------------------------
-- position i (1-based, negative from the end) of n children, or nil
local function norm_pos(i, n)
  if i < 0 then i = n + 1 + i end
  if i >= 1 and i <= n then return i end
end
-- renames the children "0", "1", ... after an insertion or removal
local function renumber(self, list)
  local mods = rawget(self, "_modules")
  mods.keys, mods.map = {}, {}
  for i, m in ipairs(list) do
    mods.keys[i] = tostring(i - 1)
    mods.map[tostring(i - 1)] = m
  end
end
local function list_index(base)
  return function(self, k)
    if math.type(k) == "integer" then
      local kids = self:children()
      local i = norm_pos(k, #kids)
      return i and kids[i] or nil
    end
    return base(self, k)
  end
end
local function list_newindex(base)
  return function(self, k, v)
    if math.type(k) == "integer" then
      local cname = rawget(self, "_class")._classname
      local kids = self:children()
      local i = norm_pos(k, #kids)
      if i == nil then fail(cname, "index " .. k .. " is out of range") end
      if not is_module(v) then fail(cname, "bad value for index " .. k .. " (Module expected, got " .. typename(v) .. ")") end
      kids[i] = v
      renumber(self, kids)
      return
    end
    return base(self, k, v)
  end
end

local Sequential = Module:extend("Sequential")
nn.Sequential = Sequential
Sequential._instance_mt.__index = list_index(instance_index)
Sequential._instance_mt.__newindex = list_newindex(instance_newindex)
-- Sequential(m1, m2, ...) names the children "0", "1", ...;
-- Sequential({{"fc", m1}, {"act", m2}}) names them (PyTorch's OrderedDict form)
function Sequential:init(...)
  local n = select("#", ...)
  local first = ...
  if n == 1 and type(first) == "table" and not is_module(first) then
    for i, kv in ipairs(first) do
      if type(kv) ~= "table" or type(kv[1]) ~= "string" or not is_module(kv[2]) then
        fail("Sequential", "bad argument #1 (entry " .. i .. " is not a {name, module} pair)")
      end
      self:add_module(kv[1], kv[2])
    end
    return
  end
  for i = 1, n do
    local m = (select(i, ...))
    if not is_module(m) then
      fail("Sequential", "bad argument #" .. i .. " (Module expected, got " .. typename(m) .. ")")
    end
    self:add_module(tostring(i - 1), m)
  end
end
function Sequential:forward(x, ...)
  for _, m in ipairs(self:children()) do x = m(x, ...) end
  return x
end
function Sequential:append(m)
  if not is_module(m) then
    fail(self._classname .. ".append", "bad argument #1 'module' (Module expected, got " .. typename(m) .. ")")
  end
  self:add_module(tostring(#self:children()), m)
  return self
end
function Sequential:extend(list)
  check_type(self._classname .. ".extend", 1, "modules", list, "table")
  local src = is_module(list) and list:children() or list
  for _, m in ipairs(src) do self:append(m) end
  return self
end
-- insert(i, m): m becomes element i (1-based, as table.insert)
function Sequential:insert(i, m)
  local kids = self:children()
  if math.type(i) ~= "integer" then
    fail(self._classname .. ".insert", "bad argument #1 'index' (integer expected, got " .. typename(i) .. ")")
  end
  if not is_module(m) then
    fail(self._classname .. ".insert", "bad argument #2 'module' (Module expected, got " .. typename(m) .. ")")
  end
  if i < 0 then i = #kids + 2 + i end
  if i < 1 or i > #kids + 1 then fail(self._classname .. ".insert", "index " .. i .. " is out of range") end
  table.insert(kids, i, m)
  renumber(self, kids)
  return self
end
-- remove(i): removes and returns element i
function Sequential:remove(i)
  local kids = self:children()
  local p = math.type(i) == "integer" and norm_pos(i, #kids)
  if not p then fail(self._classname .. ".remove", "index " .. tostring(i) .. " is out of range") end
  local m = table.remove(kids, p)
  renumber(self, kids)
  return m
end

local ModuleList = Module:extend("ModuleList")
nn.ModuleList = ModuleList
ModuleList._instance_mt.__index = Sequential._instance_mt.__index
ModuleList._instance_mt.__newindex = Sequential._instance_mt.__newindex
function ModuleList:init(list)
  check_type("ModuleList", 1, "modules", list, "table", true)
  if list ~= nil and is_module(list) then list = list:children() end
  for i, m in ipairs(list or {}) do
    if not is_module(m) then fail("ModuleList", "bad argument #1 (entry " .. i .. " is not a Module)") end
    self:add_module(tostring(i - 1), m)
  end
end
ModuleList.append, ModuleList.extend = Sequential.append, Sequential.extend
ModuleList.insert, ModuleList.remove = Sequential.insert, Sequential.remove
function ModuleList:forward()
  fail("ModuleList", "ModuleList is a container and has no forward; call its modules")
end

-- ModuleDict({{"name", m}, ...}) keeps that order; ModuleDict({name = m, ...})
-- sorts the names (a Lua table has no order).  md.name / md["name"] read.
local ModuleDict = Module:extend("ModuleDict")
nn.ModuleDict = ModuleDict
function ModuleDict:init(mods)
  check_type("ModuleDict", 1, "modules", mods, "table", true)
  if mods ~= nil then self:update(mods) end
end
function ModuleDict:update(mods)
  check_type("ModuleDict.update", 1, "modules", mods, "table")
  if #mods > 0 then
    for i, kv in ipairs(mods) do
      if type(kv) ~= "table" or type(kv[1]) ~= "string" or not is_module(kv[2]) then
        fail("ModuleDict", "bad argument #1 (entry " .. i .. " is not a {name, module} pair)")
      end
      self:add_module(kv[1], kv[2])
    end
  else
    local names = {}
    for k, m in pairs(mods) do
      if type(k) ~= "string" then fail("ModuleDict", "bad argument #1 (keys must be strings, got " .. typename(k) .. ")") end
      if not is_module(m) then fail("ModuleDict", "bad argument #1 (value for '" .. k .. "' is not a Module)") end
      names[#names + 1] = k
    end
    table.sort(names)
    for _, k in ipairs(names) do self:add_module(k, mods[k]) end
  end
  return self
end
function ModuleDict:keys()
  local out = {}
  for i, kv in ipairs(self:named_children()) do out[i] = kv[1] end
  return out
end
function ModuleDict:values() return self:children() end
function ModuleDict:items() return self:named_children() end
function ModuleDict:pop(key)
  local m = rawget(self, "_modules").map[key]
  if m == nil then fail("ModuleDict.pop", "no module named '" .. tostring(key) .. "'") end
  reg_del(rawget(self, "_modules"), key)
  return m
end
function ModuleDict:forward()
  fail("ModuleDict", "ModuleDict is a container and has no forward; call its modules")
end

---------------------------------------------------------------------------
return true
