-- ltensor.freed_guard -- a freed tensor (t:free()) passed to a public
-- function written in Lua is refused in that function's name.  Without
-- this the first C function the body handed it to raised, in its own name:
-- "ltensor.index: bad argument #1 (tensor was freed)" for T.lgamma(x) (x.shape
-- is read through __index), "ltensor.is_floating_point: ..." for
-- T.linalg.det(x), names the user never called.  (Naming the caller from
-- the C side cannot work: the library's tail calls drop its frame.)
--
-- Loaded by ltensor/init.lua and installed by the state's first free()
-- (src/binding/l_free.c: before it no argument can be freed, and a program
-- that never frees pays nothing per call), when every module is loaded: each
-- public Lua function reachable from T (the modules, T.nn's classes, the
-- Tensor methods) is replaced, wherever it is stored, by one wrapper that
-- checks its arguments and the elements of a list of tensors (a tensor in an
-- options table is left to the function's own checks).  nn.functional
-- checks its arguments itself, with their names.
local T = require "ltensor.core"
local util = require "ltensor.util"

local TMT, is_freed = T._metatable, T._is_freed
local getmetatable, select, type, rawget, fail = getmetatable, select, type, rawget, util.fail
local rawlen = require("ltensor.compat").rawlen

local METHOD = {}   -- name -> true: a module's forward, self always the module

local function refuse(name, i, k, level)
  local what = k == true and "tensor was freed"
    or type(k) == "string" and ("option '%s': tensor was freed"):format(k)
    or ("tensor at position %d was freed"):format(k)
  -- called as x:f(...) (or module(x)): self is not counted, as in Lua's
  -- own messages
  local info = debug.getinfo(level or 2, "n")   -- how the guard was called
  if METHOD[name] or (info and info.namewhat == "method") then
    if i == 1 then fail(name, "bad self (" .. what .. ")") end
    i = i - 1
  end
  fail(name, ("bad argument #%d (%s)"):format(i, what))
end

-- The freed tensor v is or holds: true for a freed tensor; for a list of
-- tensors (its first element one: not a list of numbers or nested data),
-- the position of a freed element; for an options table (no list part; its
-- first 32 keys), the key of a freed value; else nil.
local next = next
local function freed(v)
  local mt = getmetatable(v)
  if mt == TMT then return is_freed(v) or nil end
  if mt ~= nil or type(v) ~= "table" then return nil end
  local first = rawget(v, 1)
  if first == nil then
    local k, e, n = next(v)
    n = 0
    while k ~= nil and n < 32 do
      if getmetatable(e) == TMT and is_freed(e) and type(k) == "string" then return k end
      k, e = next(v, k)
      n = n + 1
    end
    return nil
  end
  if getmetatable(first) ~= TMT then return nil end
  for k = 1, rawlen(v) do
    local e = rawget(v, k)
    if getmetatable(e) == TMT and is_freed(e) then return k end
  end
end

local function check_rest(name, n, ...)
  for i = 5, n do
    local k = freed((select(i, ...)))
    if k then refuse(name, i, k, 3) end
  end
end

-- A vararg wrapper costs a copy of the arguments per call (Lua 5.4): a
-- function of fixed arity up to 3 (debug.getinfo's nparams, Lua 5.2+) gets
-- a wrapper of the same arity, which drops nothing f would not drop; others
-- check their first four arguments as locals.
local function guard(name, f)
  local info = debug.getinfo(f, "u")
  local np = info and not info.isvararg and info.nparams
  if np == 1 then
    return function(a)
      local k = freed(a)
      if k then refuse(name, 1, k) end
      return f(a)
    end
  elseif np == 2 then
    return function(a, b)
      local k = freed(a) or freed(b)
      if k then refuse(name, freed(a) and 1 or 2, k) end
      return f(a, b)
    end
  elseif np == 3 then
    return function(a, b, c)
      local k = freed(a) or freed(b) or freed(c)
      if k then refuse(name, freed(a) and 1 or freed(b) and 2 or 3, k) end
      return f(a, b, c)
    end
  end
  return function(...)
    local a, b, c, d = ...
    local k = freed(a)
    if k then refuse(name, 1, k) end
    if b ~= nil then k = freed(b) if k then refuse(name, 2, k) end end
    if c ~= nil then k = freed(c) if k then refuse(name, 3, k) end end
    if d ~= nil then
      k = freed(d)
      if k then refuse(name, 4, k) end
      local n = select("#", ...)
      if n > 4 then check_rest(name, n, ...) end
    end
    return f(...)
  end
end

local function is_lua(f)
  local info = debug.getinfo(f, "S")
  return info and info.what == "Lua"
end

local SKIP = { ["nn.functional."] = true }
-- functions whose own checks name a freed tensor more precisely ("element 1
-- of tensors was freed", "value tensor was freed")
local OWN = { backward = true, ["autograd.backward"] = true, ["autograd.grad"] = true, grad = true,
  index_put = true, index_put_ = true }

local installed = false
return function()
  if installed then return end
  installed = true
  local names, seen, slots = {}, {}, {}
  local function walk(tab, prefix, depth)
    if seen[tab] or depth > 4 or SKIP[prefix] then return end
    seen[tab] = true
    local keys = {}
    for k in pairs(tab) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" then keys[#keys + 1] = k end
    end
    table.sort(keys)   -- an alias's name: the first in order, every run
    local subs = {}
    for _, k in ipairs(keys) do
      local v = rawget(tab, k)
      if type(v) == "function" and is_lua(v) then
        -- a module's forward: the error is the module's ("nn.Conv2d")
        if names[v] == nil then
          names[v] = k == "forward" and prefix:sub(1, -2) or prefix .. k
          if k == "forward" then METHOD[names[v]] = true end
        end
        slots[#slots + 1] = { tab, k, v }
      elseif type(v) == "table" then
        subs[#subs + 1] = k
      end
    end
    for _, k in ipairs(subs) do walk(rawget(tab, k), prefix .. k .. ".", depth + 1) end
  end
  walk(T, "", 0)
  walk(T._methods, "", 0)
  local wrapped, unchecked = {}, util.unchecked
  for _, s in ipairs(slots) do
    local f = s[3]
    if OWN[names[f]] then wrapped[f] = f end
    if not wrapped[f] then
      local w = guard(names[f], f)
      -- a method behind a self check (util.self_checked): a module's __call
      -- skips that check; it takes the guarded unchecked body
      if unchecked[f] then unchecked[w] = guard(names[f], unchecked[f]) end
      wrapped[f] = w
    end
    rawset(s[1], s[2], wrapped[f])
  end
  -- the library's modules give the same functions as T's fields: a module
  -- that is a function (ltensor.utils.progress), and the fields of one that
  -- is a table (require("ltensor.io").save == T.save)
  for k, v in pairs(package.loaded) do
    if type(v) == "function" and wrapped[v] then package.loaded[k] = wrapped[v] end
    if type(k) == "string" and k:find("^ltensor%.") and type(v) == "table" and not seen[v] then
      for name, f in pairs(v) do
        if type(f) == "function" and wrapped[f] then rawset(v, name, wrapped[f]) end
      end
    end
  end
end
