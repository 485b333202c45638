-- ltensor.repl: the Lua half of the interactive prompt (cli/ltensor.c reads
-- lines with libedit and calls these): tab completion of globals, fields
-- and methods, useful printing of every value, and help.
--
-- Completion never evaluates code: the text before the cursor is split into
-- a dotted path of names (`T.nn.Lin`, `x:su`), the path is walked with raw
-- lookups plus metatable __index tables, and the keys that start with the
-- last part are offered.  A tensor's methods come from T._methods, its
-- attributes from the list below.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local help = require "ltensor.help"

local repl = {}

local TENSOR_FIELDS = { "dtype", "shape", "grad", "grad_fn", "requires_grad", "is_leaf",
                        "T", "H", "mT", "ndim", "device" }

local is_tensor = require("ltensor.util").is_tensor

-- Keys reachable from v with `.` (fields) or `:` (methods only).
local function keys_of(v, methods_only, out)
  if is_tensor(v) then
    for k, f in pairs(T._methods) do
      if type(k) == "string" and type(f) == "function" then out[k] = true end
    end
    if not methods_only then for _, k in ipairs(TENSOR_FIELDS) do out[k] = true end end
    return out
  end
  local seen = {}
  local depth = 0
  while v ~= nil and depth < 10 and not seen[v] do
    seen[v] = true
    if type(v) == "table" then
      for k, x in next, v do
        if type(k) == "string" and k:match("^[%a_][%w_]*$")
           and (not methods_only or type(x) == "function" or (type(x) == "table" and (getmetatable(x) or {}).__call)) then
          out[k] = true
        end
      end
      -- modules keep parameters and submodules in registries behind __index
      for _, reg in ipairs({ "_params", "_buffers", "_modules" }) do
        local r = rawget(v, reg)
        if type(r) == "table" and type(r.keys) == "table" and not methods_only then
          for _, k in ipairs(r.keys) do if type(k) == "string" and k:match("^[%a_][%w_]*$") then out[k] = true end end
        end
      end
      local class = rawget(v, "_class")
      if class then keys_of(class, methods_only, out) end
    end
    local mt = getmetatable(v)
    local idx = type(mt) == "table" and rawget(mt, "__index") or nil
    if type(idx) ~= "table" then break end
    v = idx
    depth = depth + 1
  end
  return out
end

-- Walk a dotted path ("T.nn") from the globals without calling anything
-- but __index tables (a function __index is a tensor's, handled above).
local function resolve(path, env)
  local v = env
  for name in path:gmatch("[^%.]+") do
    if type(v) == "table" then
      local x = rawget(v, name)
      if x == nil then
        local mt = getmetatable(v)
        local idx = type(mt) == "table" and rawget(mt, "__index")
        if type(idx) == "table" then x = idx[name] end
        if x == nil and rawget(v, "_class") then
          local ok, y = pcall(function() return v[name] end)
          if ok then x = y end
        end
      end
      v = x
    elseif is_tensor(v) then
      local ok, x = pcall(function() return v[name] end)
      v = ok and x or nil
    else
      return nil
    end
    if v == nil then return nil end
  end
  return v
end

local LUA_KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
                       "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
                       "true", "until", "while" }

-- Completions of `word` (the text before the cursor after the last
-- separator, e.g. "x:su", "T.nn.Lin", "pri"), as whole replacement words.
function repl.complete(word, env)
  env = env or _G
  local base, sep, part = word:match("^(.-)([%.:])([%w_]*)$")
  local names = {}
  if base == nil or base == "" then
    part = word
    if not part:match("^[%a_]?[%w_]*$") then return {} end
    keys_of(env, false, names)
    for _, k in ipairs(LUA_KEYWORDS) do names[k] = true end
    base, sep = "", ""
  else
    if not base:match("^[%a_][%w_%.]*$") then return {} end
    local v = resolve(base, env)
    if v == nil then return {} end
    keys_of(v, sep == ":", names)
  end
  local out = {}
  for k in pairs(names) do
    if k:sub(1, #part) == part and not (k:sub(1, 1) == "_" and part:sub(1, 1) ~= "_") then
      out[#out + 1] = base .. sep .. k
    end
  end
  table.sort(out)
  return out
end

---------------------------------------------------------------------------
-- printing values
---------------------------------------------------------------------------
local MAX_ITEMS, MAX_DEPTH = 20, 3

local function is_ident(k) return type(k) == "string" and k:match("^[%a_][%w_]*$") ~= nil end

local format_value
local function format_table(t, depth, seen)
  local mt = getmetatable(t)
  if type(mt) == "table" and rawget(mt, "__tostring") then return tostring(t) end
  if seen[t] then return "{...}" end
  if depth >= MAX_DEPTH then return "{...}" end
  seen[t] = true
  -- rawlen: an object's __len (a DataLoader's batch count, a dataset's
  -- size) counts items its table does not hold
  local parts, n = {}, rawlen(t)
  local shown = 0
  for i = 1, n do
    shown = shown + 1
    if shown > MAX_ITEMS then parts[#parts + 1] = "..." break end
    parts[#parts + 1] = format_value(t[i], depth + 1, seen)
  end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  for _, k in ipairs(keys) do
    shown = shown + 1
    if shown > MAX_ITEMS then parts[#parts + 1] = "..." break end
    local ks = is_ident(k) and k or ("[" .. format_value(k, depth + 1, seen) .. "]")
    parts[#parts + 1] = ks .. " = " .. format_value(t[k], depth + 1, seen)
  end
  seen[t] = nil
  local s = "{" .. table.concat(parts, ", ") .. "}"
  if #s > 100 and depth == 0 then
    s = "{\n  " .. table.concat(parts, ",\n  ") .. "\n}"
  end
  -- an instance of a named class says what it is: T.utils.data.DataLoader {...}
  local cname = type(mt) == "table" and rawget(mt, "__name")
  if type(cname) == "string" then s = cname:gsub("^ltensor%.", "T.") .. " " .. s end
  return s
end

function format_value(v, depth, seen)
  local ty = type(v)
  if ty == "string" then
    if depth > 0 then return ("%q"):format(v) end
    return v
  elseif ty == "table" then
    local mt = getmetatable(v)
    if not (type(mt) == "table" and rawget(mt, "__tostring")) then
      local name = help.name_of(v)
      if name then
        return (rawget(v, "_classname") and "class " or "module ") .. name .. (depth == 0 and "  (help(" .. name .. ") documents it)" or "")
      end
    end
    return format_table(v, depth, seen)
  elseif ty == "function" then
    local name = help.name_of(v)
    if name then
      local sig = help.signature(name)
      return "function: " .. (sig or name)
    end
    return tostring(v)
  end
  return tostring(v)
end

-- The text the prompt prints for its results (tab-separated, as lua5.4).
function repl.format(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = format_value((select(i, ...)), 0, {}) end
  return table.concat(parts, "\t")
end

-- A hint for an error at the prompt, or nil: calling a name that does not
-- exist ("attempt to call a nil value (method 'sume')") suggests the nearest
-- tensor method, T function or global, through the one checker's
-- suggestion (T._check_opts).
function repl.hint(msg)
  if type(msg) ~= "string" then return nil end
  if msg:find("attempt to index a nil value (local 'self')", 1, true) then
    return "a method called with '.'? write obj:method(...)"
  end
  local kind, name = msg:match("attempt to call a nil value %((%a+) '([%w_]+)'%)")
  if not name then kind, name = msg:match("attempt to index a nil value %((%a+) '([%w_]+)'%)") end
  if not name then return nil end
  local names = {}
  if kind == "method" then
    keys_of(T.ones(1), true, names)
  elseif kind == "global" then
    keys_of(_G, false, names)
  else
    for _, m in ipairs({ T, T.nn or {}, T.nn and T.nn.functional or {}, T.linalg or {}, T.optim or {} }) do
      keys_of(m, false, names)
    end
    keys_of(T.ones(1), false, names)
  end
  names[name] = nil
  local ok, err = pcall(T._check_opts, "?", { [name] = true }, names)
  local best = not ok and tostring(err):match("did you mean '([^']+)'%?")
  -- two edits are many in a short name ('foo' is not 'bool'): short names
  -- must at least start alike
  if best and (#name >= 6 or best:sub(1, 1):lower() == name:sub(1, 1):lower()) then
    return ("did you mean '%s'?"):format(best)
  end
  return nil
end

repl.help = help.help
return repl
