-- ltensor.nn.functional.common: the table T.nn.functional (H.F) and the
-- argument helpers its files share (lua/ltensor/nn/functional/*.lua).
local T = require "ltensor.core"
local autograd = require "ltensor.autograd"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local F = {}

local TMT = T._metatable
local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.functional.")
F._fail = fail

-- Argument checks: a bad argument raises an error naming the function and
-- the argument instead of a Lua runtime error deep inside the computation.
local typename = util.mtname
local checks = util.arg_checks(fail)
local arg_fail, check_t, check_num = checks.arg_fail, checks.check_t, checks.check_num
local check_int, check_bool = checks.check_int, checks.check_bool

local function check_float(fname, x, what)
  if not x.dtype.is_floating_point then
    fail(fname, ('"%s" not implemented for \'%s\''):format(what or fname, util.torch_name(x.dtype)))
  end
end
F._check_float = check_float

-- machine epsilon per floating dtype (torch.finfo(dtype).eps)
local EPS = { float32 = 1.1920928955078125e-07, float64 = 2.220446049250313e-16,
  float16 = 0.0009765625, bfloat16 = 0.0078125 }

---------------------------------------------------------------------------
-- options tables
---------------------------------------------------------------------------
-- k is not in allowed (a set): the one checker words it, with its suggestion
local function unknown_option(fname, k, allowed)
  local names = {}
  for name in pairs(allowed) do if name ~= "|" then names[#names + 1] = name end end
  table.sort(names)
  T._check_opts("nn.functional." .. fname, { [k] = true }, names)
  fail(fname, ("unknown option '%s'"):format(tostring(k)))   -- ('|', or no names at all)
end
local is_opts = util.is_opts

-- parse(fname, first, names, ...): the arguments after the required ones.
-- names lists PyTorch's optional positional parameters in order; more keys
-- may be allowed in the options table by listing them after a "|" entry.
-- Returns a table name -> value (options override nothing: a key given both
-- positionally and in the options table raises).
-- options that must be booleans wherever they appear
-- hyper-parameters that are always numbers (a table or string there is a
-- mistake that would otherwise surface as an arithmetic error inside)
local NUM_OPTS = { alpha = true, beta = true, k = true, eps = true, negative_slope = true,
                   lambd = true, min_val = true, max_val = true, margin = true, delta = true, label_smoothing = true }
local FLAGS = util.FLAGS   -- the flags: util.check_flags
local parse_cache = setmetatable({}, { __mode = "k" })
local function parse(fname, first, names, ...)
  if select("#", ...) == 0 then return {} end   -- the common call: nothing to check
  local allowed = parse_cache[names]
  local npos = #names
  if not allowed then
    allowed = {}
    for i, k in ipairs(names) do
      if k == "|" then npos = i - 1 else allowed[k] = true end
    end
    allowed["|"] = npos
    parse_cache[names] = allowed
  end
  npos = allowed["|"]
  local o, argn = {}, nil
  local n = select("#", ...)
  for i = 1, n do
    local v = select(i, ...)
    if i == n and is_opts(v) then
      for k, val in next, v do
        if not allowed[k] or k == "|" then unknown_option(fname, k, allowed) end
        if o[k] ~= nil then fail(fname, ("got multiple values for argument '%s'"):format(k)) end
        o[k] = val
      end
    else
      if i > npos then
        if v ~= nil then
          fail(fname, ("takes at most %d positional arguments (%d given)"):format(first - 1 + npos, first - 1 + n))
        end
      else
        o[names[i]] = v
        argn = argn or {}
        argn[names[i]] = first - 1 + i
      end
    end
  end
  util.check_flags(fail, fname, o, FLAGS, argn)
  for k in pairs(NUM_OPTS) do
    local v = o[k]
    if v ~= nil and type(v) ~= "number" then
      fail(fname, ("bad argument '%s' (number expected, got %s)"):format(k, typename(v)))
    end
  end
  return o
end
-- parse, fail and check_float are shared with nn/layers.lua (and open to any
-- module that installs functions into this table)
F._parse = parse

local function reduction_of(fname, r)
  if r == nil then return "mean" end
  if r ~= "mean" and r ~= "sum" and r ~= "none" then
    fail(fname, (type(r) == "string" and r or typename(r)) .. " is not a valid value for reduction")
  end
  return r
end
local function reduce(loss, r)
  if r == "mean" then return T.mean(loss) elseif r == "sum" then return T.sum(loss) end
  return loss
end

-- the old loss form f(input, target, "sum") is kept: a string is the reduction
local function loss_opts(o) if type(o) == "string" then return { reduction = o } end return o end

local function shape_str(s) return "[" .. table.concat(s, ", ") .. "]" end
local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- a tensor from a value for which PyTorch takes a Python scalar or a tensor
local function inplace_result(x, y, inplace)
  if inplace then x:copy_(y) return x end
  return y
end

-- a function with its own backward.  fwd(ctx, ...) runs with grad off;
-- bwd(ctx, g) returns a gradient per argument (nil for non-tensors).
local function custom(name, fwd, bwd)
  return autograd.Function { name = name, forward = fwd, backward = bwd }
end

-- a bool mask (target's shape with C inserted at class_dim) selecting each target's class
local function class_mask(target, C, class_dim, nd)
  local shape = {}
  for i = 1, nd do shape[i] = 1 end
  shape[class_dim] = C
  return T.eq(target:unsqueeze(class_dim), T.arange(1, C + 1):reshape(shape))
end
local SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
local H = {}
H.math = math
H.table = table
H.rawlen = rawlen
H.F = F
H.TMT = TMT
H.is_t = is_t
H.fail = fail
H.typename = typename
H.arg_fail = arg_fail
H.check_t = check_t
H.check_num = check_num
H.check_int = check_int
H.check_bool = check_bool
H.check_float = check_float
H.EPS = EPS
H.unknown_option = unknown_option
H.is_opts = is_opts
H.NUM_OPTS = NUM_OPTS
H.FLAGS = FLAGS
H.parse_cache = parse_cache
H.parse = parse
H.reduction_of = reduction_of
H.reduce = reduce
H.loss_opts = loss_opts
H.shape_str = shape_str
H.same_shape = same_shape
H.inplace_result = inplace_result
H.custom = custom
H.class_mask = class_mask
H.SELU_ALPHA = SELU_ALPHA
H.SELU_SCALE = SELU_SCALE
return H
