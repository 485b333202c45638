-- ltensor.io.checkpoint: nested checkpoints in a safetensors file (SPEC §12).
--
-- T.save(path, {model = model:state_dict(), optimizer = opt:state_dict(),
-- epoch = 10}) keeps safetensors as the container, so every other reader
-- still sees the tensors: they are stored under flattened keys
-- ("model.fc.weight", "optimizer.state.1.exp_avg"), and the shape of the
-- table -- its nesting, key order, and the numbers, strings and booleans --
-- goes into the header's metadata under "ltensor.checkpoint" as JSON:
--
--   node  = ["t", "<flattened key>"]   a tensor
--         | ["i", "<decimal>"]         an integer (a string: exact in 64 bits)
--         | ["f", "<%.17g>"]           a float ("inf", "-inf", "nan" too)
--         | ["s", "<text>"] | ["b", true|false]
--         | ["T", [[key node, value node], ...] [, "ordered"]]   a table,
--           in pairs order; "ordered" marks an ordered table (a state_dict,
--           whose metatable lists its keys) and T.load makes one again
-- T.load rebuilds the same nesting from it.  A flat table of tensors is
-- still written as before (no tree), so state_dicts stay plain safetensors.
local T = require "ltensor.core"
local util = require "ltensor.util"

local M = {}
M.KEY = "ltensor.checkpoint"
local MAX_DEPTH = 64
local fail = util.fail
local sfmt = string.format
local mtype = math.type or function(v) return v == math.floor(v) and v >= -2 ^ 53 and v <= 2 ^ 53 and "integer" or "float" end

-- true when obj needs the tree: a value that is not a tensor
function M.is_nested(obj)
  if type(obj) ~= "table" or util.is_tensor(obj) then return false end
  for _, v in pairs(obj) do
    if not util.is_tensor(v) then return true end
  end
  return false
end

local function float_text(v)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  return sfmt("%.17g", v)
end

local function scalar_node(where, v)
  local tv = type(v)
  if tv == "string" then return { "s", v } end
  if tv == "boolean" then return { "b", v } end
  if tv == "number" then
    if mtype(v) == "integer" then return { "i", sfmt("%d", v) } end
    return { "f", float_text(v) }
  end
  fail("save", "'%s' is a %s: a checkpoint holds tensors, numbers, strings, booleans and tables of them",
    where, util.typename(v))
end

-- obj -> tensors (flattened key -> tensor), tree (the JSON value above)
function M.flatten(obj)
  local tensors, seen_keys, seen_tables = {}, {}, {}
  local function walk(v, path, depth)
    if util.is_tensor(v) then
      if seen_keys[path] then
        fail("save", "two entries flatten to the key '%s' (rename one: keys are joined with '.')", path)
      end
      seen_keys[path] = true
      tensors[path] = v
      return { "t", path }
    end
    if type(v) ~= "table" then return scalar_node(path, v) end
    if depth > MAX_DEPTH then fail("save", "'%s' nests deeper than %d tables", path, MAX_DEPTH) end
    if seen_tables[v] then fail("save", "'%s' is a table that contains itself", path) end
    seen_tables[v] = true
    local pairs_list = {}
    local mt = getmetatable(v)
    local order = type(mt) == "table" and type(mt.__keys) == "table" and mt.__keys
    local function each()
      if not order then return pairs(v) end
      local i = 0   -- __keys, not pairs: 5.1 and LuaJIT ignore __pairs
      return function()
        repeat
          i = i + 1
          local k = order[i]
          if k == nil then return nil end
          if rawget(v, k) ~= nil then return k, rawget(v, k) end
        until false
      end
    end
    for k, child in each() do
      local kt = type(k)
      if kt ~= "string" and kt ~= "number" and kt ~= "boolean" then
        fail("save", "'%s' has a %s key: keys must be strings, numbers or booleans", path, kt)
      end
      local name = tostring(k)
      local child_path = path == "" and name or path .. "." .. name
      pairs_list[#pairs_list + 1] = { scalar_node(child_path, k), walk(child, child_path, depth + 1) }
    end
    seen_tables[v] = nil
    return { "T", pairs_list, order and "ordered" or nil }
  end
  local tree = walk(obj, "", 0)
  return tensors, tree
end

local function number_of(text)
  if text == "nan" then return 0 / 0 end
  if text == "inf" then return math.huge end
  if text == "-inf" then return -math.huge end
  return tonumber(text)
end

-- tree (decoded JSON), tensors (flattened key -> tensor) -> the nested table
function M.unflatten(path, tree, tensors)
  local function bad(what) fail("load", "'%s': the checkpoint tree is damaged (%s)", path, what) end
  local function build(node, depth)
    if type(node) ~= "table" or type(node[1]) ~= "string" then bad("a node is not [kind, value]") end
    local kind, val = node[1], node[2]
    if kind == "t" then
      local t = tensors[val]
      if t == nil then bad(sfmt("no tensor '%s'", tostring(val))) end
      return t
    elseif kind == "i" then
      local n = type(val) == "string" and val:match("^%-?%d+$") and (math.tointeger and math.tointeger(tonumber(val)) or tonumber(val))
      if n == nil then bad("an integer is not written as one") end
      return n
    elseif kind == "f" then
      local n = type(val) == "string" and number_of(val)
      if not n then bad("a float is not written as one") end
      return n + 0.0
    elseif kind == "s" then
      if type(val) ~= "string" then bad("a string is not one") end
      return val
    elseif kind == "b" then
      if type(val) ~= "boolean" then bad("a boolean is not one") end
      return val
    elseif kind == "T" then
      if depth > MAX_DEPTH then bad("nested too deep") end
      if type(val) ~= "table" then bad("a table's entries are not a list") end
      local out, keys = {}, {}
      for _, kv in ipairs(val) do
        if type(kv) ~= "table" then bad("a table entry is not [key, value]") end
        local k = build(kv[1], depth + 1)
        if type(k) == "table" or k ~= k then bad("a key is not a string, number or boolean") end
        if out[k] ~= nil then bad("a table has a key twice") end
        out[k] = build(kv[2], depth + 1)
        keys[#keys + 1] = k
      end
      if node[3] == "ordered" and T.nn and T.nn.ordered_dict then return T.nn.ordered_dict(keys, out) end
      return out
    end
    bad(sfmt("unknown node kind '%s'", kind))
  end
  return build(tree, 0)
end

-- JSON text of the tree: T._json (io.lua) encodes strings, integers,
-- booleans and arrays, which is all the tree is made of
function M.encode(tree) return T._json.encode(tree) end
function M.decode(path, text)
  local ok, tree = pcall(T._json.decode, text)   -- nil, why for bad JSON
  if not ok or tree == nil then fail("load", "'%s': the checkpoint tree is not valid JSON", path) end
  return tree
end

return M
