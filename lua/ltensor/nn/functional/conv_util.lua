-- ltensor.nn.functional.conv_util: the argument helpers of the spatial
-- functions (conv, pooling, interpolate, fold, embedding_bag) and of their
-- modules (nn/conv.lua): positional-or-keyword arguments, n-tuples, PyTorch's
-- dtype and size wording.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local TMT = T._metatable
local getmetatable, type, select, mtype = getmetatable, type, select, math.type
local floor, sqrt = math.floor, math.sqrt
local concat, unpack = table.concat, table.unpack

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.functional.")
local typename = util.mtname
local check_t = require("ltensor.nn.functional.common").check_t   -- nn.functional's one check
local function tname(t) return util.torch_name(t.dtype) end
local function is_float(t) local n = t.dtype.name return n == "float32" or n == "float64" end
local function size_str(s) return "[" .. concat(s, ", ") .. "]" end
local function tuple_str(v)
  if type(v) ~= "table" then return tostring(v) end
  if #v == 1 then return "(" .. tostring(v[1]) .. ",)" end
  return "(" .. concat(v, ", ") .. ")"
end

local is_opts = util.is_opts   -- string keys only, as opposed to a positional {1, 2}
-- Positional arguments named by `names`, then an optional options table
-- whose keys must be among `names` (or names.extra: keyword-only ones such
-- as a module's dtype); an unknown key raises "ltensor.<fname>: unknown
-- option 'x' (did you mean 'y'?)" as everywhere else in the library.
local function known_of(names)
  local k = names.known
  if not k then
    k = {}
    for i = 1, #names do k[i] = names[i] end
    for _, e in ipairs(names.extra or {}) do k[#k + 1] = e end
    names.known = k
  end
  return k
end
-- The flags are booleans, as PyTorch's ({ceil_mode = 1} is a slip, not
-- true): util.check_flags, with `bias` a flag in a module's constructor
-- (fname "nn.Conv2d") and a tensor in a function's arguments.  names.first
-- is the position of names[1] among the caller's arguments, for the
-- message of a flag given positionally.
local FLAGS, MODULE_FLAGS = util.FLAGS, util.MODULE_FLAGS
local function args_of(fname, names, ...)
  local a, n = {}, select("#", ...)
  local argn
  for i = 1, n do
    local v = select(i, ...)
    if is_opts(v) and not is_t(v) then
      T._check_opts(fname, v, known_of(names))
      for k, x in next, v do a[k] = x end
      break
    end
    if names[i] == nil then break end
    a[names[i]] = v
    if names.first then argn = argn or {} argn[names[i]] = names.first + i - 1 end
  end
  util.check_flags(util.fail, fname, a, fname:find("^nn%.functional%.") and FLAGS or MODULE_FLAGS, argn)
  return a
end

-- a module's constructor passes its own name ("nn.Conv2d"): the error is
-- "ltensor.nn.Conv2d: ...", not nn.functional's
local function tfail(fname, msg)
  if fname:find("^nn%.") then util.fail(fname, msg) end
  fail(fname, msg)
end
-- n integers from a number or a list of 1 or n numbers
local function ntuple(fname, name, v, n, msg_kind)
  local out = {}
  if mtype(v) == "integer" then
    for i = 1, n do out[i] = v end
    return out
  end
  if type(v) == "table" and not is_t(v) then
    if #v == 1 and mtype(v[1]) == "integer" then for i = 1, n do out[i] = v[1] end return out end
    if #v == n then
      for i = 1, n do
        if mtype(v[i]) ~= "integer" then break end
        out[i] = v[i]
      end
      if #out == n then return out end
    end
    if msg_kind == "conv" then
      local shown = {}
      for i = 1, #v do shown[i] = tostring(v[i]) end
      tfail(fname, ("expected %s to be a single integer value or a list of %d values to match the convolution " ..
        "dimensions, but got %s=[%s]"):format(name, n, name, concat(shown, ", ")))
    end
  end
  tfail(fname, ("bad argument '%s' (an integer or a list of %d integers expected, got %s)"):format(name, n,
    type(v) == "table" and "a table of " .. #v or typename(v)))
end

-- The autograd engine's need(): does input i want a gradient?

local function pool_out(inn, k, s, p, d, ceil)
  local o = math.floor((inn + 2 * p - d * (k - 1) - 1 + (ceil and s - 1 or 0)) / s) + 1
  if ceil and (o - 1) * s >= inn + p then o = o - 1 end
  return o
end
local function float_only(fname, kname, x)
  if not is_float(x) then fail(fname, ('"%s" not implemented for \'%s\''):format(kname, tname(x))) end
end
local UNFOLD_ARGS = { "dilation", "padding", "stride" }
local U = {}
U.math = math
U.table = table
U.rawlen = rawlen
U.TMT = TMT
U.getmetatable = getmetatable
U.type = type
U.select = select
U.mtype = mtype
U.floor = floor
U.sqrt = sqrt
U.concat = concat
U.unpack = unpack
U.is_t = is_t
U.fail = fail
U.typename = typename
U.check_t = check_t
U.tname = tname
U.is_float = is_float
U.size_str = size_str
U.tuple_str = tuple_str
U.is_opts = is_opts
U.known_of = known_of
U.args_of = args_of
U.ntuple = ntuple
U.pool_out = pool_out
U.float_only = float_only
U.UNFOLD_ARGS = UNFOLD_ARGS
return U
