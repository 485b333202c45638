-- ltensor.tensor.common: the argument helpers the torch.* surface
-- (lua/ltensor/tensor/*.lua) shares: options tables, extra-argument slips,
-- dims, sizes, dtype classes, and `def`, which installs a function as T.name
-- and as a method.
--
-- Most ops of ltensor.tensor are composed from differentiable tensor ops
-- (narrow, cat, index_select, gather, expand, reshape, mm/bmm, where), so
-- autograd covers them without rules of their own; every element loop runs in
-- C (those ops, or the kernels of src/binding/l_struct.c and l_search.c,
-- which take contiguous float64/int64 rows prepared here).  Dims and
-- positions are 1-based.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen

local M = T._methods
local select, type, mtype = select, type, math.type
local getmetatable = getmetatable

local S = {}   -- the helpers, exported at the end

local is_t = util.is_tensor
local fail = util.failer("ltensor.")
local torch_dtype_name = util.torch_name
local is_opts = util.is_nonempty_opts
local function check_t(fname, n, x)
  if not is_t(x) then
    fail(fname, ("bad argument #%d (tensor expected, got %s%s)"):format(n, type(x),
      n == 1 and util.tensor_method_hint(fname) or ""))
  end
end
-- A non-nil argument where the function takes none is a slip that PyTorch
-- refuses ("takes N positional arguments"), never dropped (issue 11):
-- "ltensor.<fname>: bad argument #argno (unexpected extra argument (got T))"
local function extra_arg(fname, argno, v)
  fail(fname, ("bad argument #%d (unexpected extra argument (got %s))"):format(argno, is_t(v) and "ltensor.Tensor" or type(v)))
end
-- f(t, ..., opts): PyTorch's keyword arguments as a table at argument #pos,
-- or at #pos + 1 after a nil; any other non-nil argument from #pos on is a
-- slip (issue 11).  Returns the options ({} when none).
local function opts_at(fname, pos, ...)
  local opts
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil then
      if opts == nil and i <= 2 and type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0 then
        opts = v
      elseif opts == nil and i <= 2 and type(v) == "table" and not is_t(v) then
        fail(fname, ("bad argument #%d (an options table expected, got a list)"):format(pos + i - 1))
      else
        extra_arg(fname, pos + i - 1, v)
      end
    end
  end
  return opts or {}
end
-- The library's one options check (src/binding/l_args.c): an unknown key raises
-- "ltensor.<fname>: unknown option 'dimm' (did you mean 'dim'?)"
local function ck(fname, o, known)
  if o ~= nil then T._check_opts(fname, o, known) end
  return o
end
-- an options table or nil; anything else is a bad argument; with known,
-- its keys are checked
local function opts_arg(fname, v, known)
  if v == nil then return nil end
  if type(v) ~= "table" or getmetatable(v) ~= nil then
    fail(fname, ("bad argument (options table expected, got %s)"):format(type(v)))
  end
  if known then ck(fname, v, known) end
  return v
end
local function check_num(fname, what, v)
  if type(v) ~= "number" then fail(fname, ("%s must be a number (got %s)"):format(what, type(v))) end
  return v
end
local function check_int(fname, what, v)
  if mtype(v) ~= "integer" then fail(fname, ("%s must be an integer (got %s)"):format(what, type(v))) end
  return v
end

-- 1-based dim (negative from the end) -> positive 1-based, PyTorch's range check
local function ndim_of(nd) return nd == 0 and 1 or nd end
local function normdim(fname, d, nd)
  check_int(fname, "dim", d)
  local n = ndim_of(nd)
  if d < -n or d > n or d == 0 then
    fail(fname, ("dimension out of range (expected to be in range of [%d, %d], but got %d)"):format(-n, n, d)
      .. (d == 0 and " (dims are 1-based: 1 is the first, -1 the last)" or ""))
  end
  if d < 0 then d = d + n + 1 end
  return d
end

-- split trailing options: returns opts (or nil) and the count of positional args
local function split_opts(...)
  local n = select("#", ...)
  for k = n, 1, -1 do
    local v = select(k, ...)
    if is_opts(v) then return v, k - 1 end
    if v ~= nil then break end
  end
  return nil, n
end

-- n optional positionals, then an options table that may also stand in
-- any of their places (the first that is a non-empty table; its place then
-- reads nil): the options, checked against known, and the n positionals
local function positional_opts(fname, known, n, ...)
  local p = { ... }
  local opts
  for i = 1, n do
    if is_opts(p[i]) then
      opts, p[i] = p[i], nil
      break
    end
  end
  if not opts then opts = opts_arg(fname, p[n + 1]) end
  ck(fname, opts, known)
  return opts, table.unpack(p, 1, n)
end

-- the tensors given as varargs, each checked (check_t, then each(t)): the
-- list and its length
local function tensor_args(fname, each, ...)
  local n = select("#", ...)
  local list = {}
  for i = 1, n do
    local t = select(i, ...)
    check_t(fname, i, t)
    each(t)
    list[i] = t
  end
  return list, n
end

-- a list of sizes given as varargs or as one table
-- sizes as a list or as numbers, after the tensor (argument #1): with a
-- list, anything more is a slip (issue 11)
local function sizes_of(fname, ...)
  local first = ...
  local list
  if type(first) == "table" and not is_t(first) then
    list = first
    for i = 2, select("#", ...) do
      local v = select(i, ...)
      if v ~= nil then extra_arg(fname, i + 1, v) end
    end
  else
    list = { ... }
  end
  for i = 1, #list do check_int(fname, "size", list[i]) end
  return list
end

-- An op composed of other ops reports errors under its own name: while it
-- runs, T._public_name is its name, in which the ops it calls raise (the C
-- side's ltl_error and util.failer read it): tensordot's mm complains as
-- "ltensor.tensordot: ...".  The outermost composed op names the errors; the
-- name is restored however the call ends.
local run_named = util.run_named
-- Arguments past f's parameters (extra_arg).  The count comes from
-- debug.getinfo's nparams (Lua 5.2+; 5.1/LuaJIT skip the check); vararg
-- functions check their own.
local function check_extra(fname, np, ...)
  for i = np + 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil then extra_arg(fname, i, v) end
  end
end
local function named(fname, f)
  local info = debug.getinfo(f, "u")
  local np = info and not info.isvararg and info.nparams
  if np then
    return function(...)
      if select("#", ...) > np then check_extra(fname, np, ...) end
      return run_named(fname, f, ...)
    end
  end
  return function(...) return run_named(fname, f, ...) end
end

local function def(name, f, method)
  f = named(name, f)
  T[name] = f
  if method ~= false then M[name] = f end
end

local function is_float(t) return t:is_floating_point() end
local function is_complex(t) return t:is_complex() end
local function is_integral(t) return not t:is_floating_point() and not t:is_complex() end

local function num_str(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  return tostring(x)
end
-- a * b for sizes, refusing results past 2^62 (Lua integers wrap silently)
local SIZE_MAX = 4611686018427387904   -- 2^62
local function size_mul(fname, a, b)
  if a ~= 0 and b > math.floor(SIZE_MAX / a) then fail(fname, "tensor too large (sizes overflow)") end
  return a * b
end
local function shape_str(s)
  local parts = {}
  for i = 1, #s do parts[i] = compat.int_str(s[i]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end
local function prod(list, a, b)
  local p = 1
  for i = a or 1, b or #list do p = p * list[i] end
  return p
end

-- the operands converted to their promoted dtype
local function common(fname, list)
  local dt = list[1].dtype
  for i = 2, #list do dt = T.promote_types(dt, list[i].dtype) end
  local out = {}
  for i, t in ipairs(list) do out[i] = t.dtype == dt and t or t:to(dt) end
  return out, dt
end

-- the keys the C kernels take: float64 for floating input, int64 otherwise
local function keys_of(t)
  if t:is_complex() then return nil end
  if t:is_floating_point() then return t:to(T.float64):contiguous() end
  return t:to(T.int64):contiguous()
end

-- t with dim d moved last, as contiguous [rows, n] keys; and a function that
-- brings a [rows, n'] result back to t's layout with n' along d
local function rows_along(t, d)
  local nd = t:dim()
  local moved = nd == 0 and t:reshape({ 1 }) or t:movedim(d, -1)
  local ms = moved.shape
  local n = ms[#ms]
  local rows = prod(ms, 1, #ms - 1)
  local k = keys_of(moved)
  local keys = k and k:reshape({ rows, n })
  local function back(r, n2)
    local s = { table.unpack(ms) }
    s[#s] = n2 or n
    r = r:reshape(s)
    if nd == 0 then return r:reshape({}) end
    return r:movedim(-1, d)
  end
  return keys, back, rows, n
end
-- composites' helpers ---------------------------------------------------------
-- a tensor or a Lua number (a weak scalar) at argument #n
local function check_operand(fname, n, x)
  if not is_t(x) and type(x) ~= "number" then
    fail(fname, ("bad argument #%d (tensor or number expected, got %s)"):format(n, type(x)))
  end
end
-- a Lua number as a 0-dim tensor of the dtype it takes next to `other`
local function as_tensor(x, other)
  if is_t(x) then return x end
  return T.tensor(x, { dtype = T.result_type(other, x) })
end
-- a method that works in place: the out-of-place result written into t,
-- which must keep its shape (PyTorch's in-place broadcasting rule)
local function into(fname, t, r)
  local ts, rs = t.shape, r.shape
  local same = #ts == #rs
  for i = 1, #ts do same = same and ts[i] == rs[i] end
  if not same then
    fail(fname, ("output with shape %s doesn't match the broadcast shape %s"):format(shape_str(ts), shape_str(rs)))
  end
  return t:copy_(r)
end

-- f(t, a, b [, opts]): two optional positional arguments that PyTorch also
-- takes by keyword (names); the options table may follow any prefix of them
local function two_optional(fname, names, a, b, ...)
  local o
  if is_opts(a) then o, a, b = a, nil, nil
  elseif is_opts(b) then o, b = b, nil
  else o = opts_at(fname, 4, ...) end
  ck(fname, o, names)
  if a == nil then a = o[names[1]] end
  if b == nil then b = o[names[2]] end
  return a, b
end


S.SIZE_MAX = SIZE_MAX
S.is_t = is_t
S.fail = fail
S.torch_dtype_name = torch_dtype_name
S.is_opts = is_opts
S.check_t = check_t
S.extra_arg = extra_arg
S.opts_at = opts_at
S.ck = ck
S.opts_arg = opts_arg
S.check_num = check_num
S.check_int = check_int
S.ndim_of = ndim_of
S.normdim = normdim
S.split_opts = split_opts
S.tensor_args = tensor_args
S.positional_opts = positional_opts
S.sizes_of = sizes_of
S.check_extra = check_extra
S.named = named
S.def = def
S.is_float = is_float
S.is_complex = is_complex
S.is_integral = is_integral
S.num_str = num_str
S.size_mul = size_mul
S.shape_str = shape_str
S.prod = prod
S.common = common
S.keys_of = keys_of
S.rows_along = rows_along
S.check_operand = check_operand
S.as_tensor = as_tensor
S.into = into
S.two_optional = two_optional
return S
