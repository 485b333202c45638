-- ltensor.util: the helpers every Lua module of the library shares, so that
-- each exists once: how an error is raised and worded, how a value's type is
-- named in it, how a tensor is recognised, how an options table is checked,
-- and PyTorch's dtype names (read from the C dtype list, not restated).
--
-- Errors: every error the library raises reads "ltensor.<function>: <what is
-- wrong>", without a "file:line:" prefix (the C side's ltl_error words them
-- the same way): the message names the function the user called, and the
-- traceback says where.  `util.failer(prefix)` makes a module's `fail`.
local T = require "ltensor.core"

local compat = require "ltensor.compat"
local rawlen, compat_math = compat.rawlen, compat.math
local unpack = compat.table.unpack

local util = {}
local TMT = T._metatable

function util.is_tensor(x) return getmetatable(x) == TMT end

-- The type of a value as errors name it: "Tensor", a class's __name
-- ("ltensor.nn.Linear", "ltensor.dtype" ...), or Lua's type name.
function util.typename(x)
  local mt = getmetatable(x)
  if mt == TMT then return "Tensor" end
  return type(mt) == "table" and type(mt.__name) == "string" and mt.__name or type(x)
end

-- The type as its metatable's __name gives it, a tensor included
-- ("ltensor.Tensor"): the nn modules' messages say "got ltensor.Tensor".
function util.mtname(x)
  local mt = getmetatable(x)
  return type(mt) == "table" and type(mt.__name) == "string" and mt.__name or type(x)
end

-- util.failer("ltensor.nn.") -> fail(fname, msg, ...): raises
-- "ltensor.nn.<fname>: <msg>", msg formatted with the extra arguments when
-- there are any (so a message with a literal % needs none).
-- While a composed function runs (tensor/common.lua's named), errors are
-- raised in its name, the one the user called (T._public_name, which the
-- C side's ltl_error reads too).
local public_name = T._public_name
function util.failer(prefix)
  return function(fname, msg, ...)
    if select("#", ...) > 0 then msg = msg:format(...) end
    local pub = public_name()
    if pub then error("ltensor." .. pub .. ": " .. msg, 0) end
    error(prefix .. fname .. ": " .. msg, 0)
  end
end

util.fail = util.failer("ltensor.")

-- A module's per-argument checks, raised through its fail and worded
-- "bad argument #<n> '<name>' (number expected, got <type>)" (the type as
-- util.mtname names it); optional lets nil pass.  The nn modules and
-- T.nn.functional share them: util.arg_checks(fail) -> { arg_fail,
-- check_t, check_num, check_int, check_bool }.
function util.arg_checks(fail)
  local C = {}
  local function arg_fail(fname, n, name, msg)
    fail(fname, ("bad argument #%d '%s' (%s)"):format(n, name, msg))
  end
  local function expect(what, ok)
    return function(fname, n, name, x, optional)
      if x == nil and optional then return end
      if not ok(x) then arg_fail(fname, n, name, what .. " expected, got " .. util.mtname(x)) end
    end
  end
  C.arg_fail = arg_fail
  local is_freed = T._is_freed
  C.check_t = function(fname, n, name, x, optional)
    if x == nil and optional then return end
    if getmetatable(x) ~= TMT then arg_fail(fname, n, name, "Tensor expected, got " .. util.mtname(x)) end
    -- here, in the function's own name, rather than in the first op that
    -- reads it ("ltensor.index" for x.shape)
    if is_freed(x) then arg_fail(fname, n, name, "tensor was freed") end
  end
  C.check_num = expect("number", function(x) return type(x) == "number" end)
  C.check_int = expect("integer", function(x) return compat_math.type(x) == "integer" end)
  C.check_bool = function(fname, n, name, x)
    if x ~= nil and type(x) ~= "boolean" then arg_fail(fname, n, name, "boolean expected, got " .. util.mtname(x)) end
  end
  return C
end

-- An options table: a plain table (no metatable) without a list part, as
-- opposed to a positional list {1, 2}; util.is_nonempty_opts also wants a
-- key (an empty {} there is a positional list of none).
function util.is_opts(v)
  return type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0
end
function util.is_nonempty_opts(v)
  return type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0 and next(v) ~= nil
end

-- The library's one options check (src/binding/l_args.c): nil passes; a
-- non-table is a bad argument; an unknown key raises "ltensor.<fname>:
-- unknown option 'dimm' (did you mean 'dim'?)".  Returns opts or {}.
function util.check_opts(fname, opts, known)
  if opts == nil then return {} end
  T._check_opts(fname, opts, known)
  return opts
end

-- PyTorch's bool parameters: the names that are flags wherever an option
-- or keyword argument of that name exists (nn's modules add `bias`, which
-- is a tensor in nn.functional).  A flag is nil or a boolean:
-- {bias = "no"} or {inplace = 1} is a slip, not true.
util.FLAGS = {}
for _, k in ipairs { "inplace", "training", "keepdim", "log_target", "swap", "full", "is_causal", "zero_infinity",
  "log_input", "use_input_stats", "align_corners", "ceil_mode", "return_indices", "count_include_pad",
  "antialias", "include_last_offset", "scale_grad_by_freq", "sparse", "freeze", "batch_first", "bidirectional",
  "add_bias_kv", "add_zero_attn", "norm_first", "enable_nested_tensor", "elementwise_affine", "need_weights",
  "average_attn_weights", "affine", "track_running_stats", "enforce_sorted", "error_if_nonfinite",
  "keep_vars", "strict", "recompute_scale_factor", "retain_graph", "create_graph", "allow_unused",
  "raise_exception" } do
  util.FLAGS[k] = true
end
util.MODULE_FLAGS = { bias = true }
for k in pairs(util.FLAGS) do util.MODULE_FLAGS[k] = true end

-- The library's one flag check: fail(fname, msg) unless v is nil or a
-- boolean, worded "bad option 'bias' (boolean expected, got string)", or
-- "bad argument #3 'bias' (...)" when argn says it came positionally.
function util.check_flag(fail, fname, name, v, argn)
  if v == nil or type(v) == "boolean" then return end
  if argn then
    fail(fname, ("bad argument #%d '%s' (boolean expected, got %s)"):format(argn, name, util.mtname(v)))
  end
  fail(fname, ("bad option '%s' (boolean expected, got %s)"):format(name, util.mtname(v)))
end
-- Every flag (a key of the set `flags`, util.FLAGS by default) among the
-- keys of o; argn[k] the position of a flag given positionally.
function util.check_flags(fail, fname, o, flags, argn)
  flags = flags or util.FLAGS
  for k, v in next, o do
    if flags[k] then util.check_flag(fail, fname, k, v, argn and argn[k]) end
  end
end

-- A method called with '.' instead of ':' (m.parameters() for
-- m:parameters(), opt.step(), d.log_prob(x)) gets no self, or its first
-- argument as self.  The hint every class gives then, worded as the C side's
-- x.sum() hint (src/binding/l_tensor.c):
--   "ltensor.nn.Module.parameters: bad self (ltensor.nn.Module expected, got
--    nil); a method is called with ':', as m:parameters(...)"
function util.dot_hint(var, mname)
  return ("a method is called with ':', as %s:%s(...)"):format(var, mname)
end
-- "; a method is called with ':', as x:<fname>(...)" when a tensor
-- method of that name exists (x.narrow(1, 1, 2) passes 1 as the tensor),
-- else "": for the Lua side's "bad argument #1 (tensor expected, got ...)"
-- (the C side's ltl_check says the same)
function util.tensor_method_hint(fname)
  fname = public_name() or fname
  fname = fname:match("^linalg%.(.*)") or fname   -- x:det() is linalg.det
  if type(T._methods[fname]) ~= "function" then return "" end
  return "; " .. util.dot_hint("x", fname)
end
function util.bad_self(fname, expected, var, mname, self)
  util.fail(fname, "bad self (%s expected, got %s); %s", expected, util.mtname(self), util.dot_hint(var, mname))
end

-- util.self_checked(f, c) -> f behind the self check: c = {prefix =
-- "nn.Module.", expected = "ltensor.nn.Module", var = "m", key = "_modules"};
-- self must be a table holding c.key (a field every instance has and no
-- argument a method takes does).  The check costs a type test and a rawget
-- per call (measured on Module __call and Optimizer:step: below noise).
-- A function already checked is returned as it is.
local checked = setmetatable({}, { __mode = "k" })
-- checked function -> the function it checks: a caller that has self for
-- sure (Module's __call) calls that one and pays nothing for the check
util.unchecked = setmetatable({}, { __mode = "k" })
function util.self_checked(f, c, mname)
  if checked[f] then return f end
  local key, fname, expected, var = c.key, c.prefix .. mname, c.expected, c.var
  local function bad(self) util.bad_self(fname, expected, var, mname, self) end
  -- a vararg function costs a copy of its arguments per call (Lua 5.4): a
  -- method of fixed arity (debug.getinfo's nparams, Lua 5.2+) gets a wrapper
  -- of the same arity, which drops nothing f would not drop
  local info = debug.getinfo(f, "u")
  local np = info and not info.isvararg and info.nparams
  local g
  if np == 1 then
    g = function(self) if type(self) ~= "table" or rawget(self, key) == nil then bad(self) end return f(self) end
  elseif np == 2 then
    g = function(self, a)
      if type(self) ~= "table" or rawget(self, key) == nil then bad(self) end
      return f(self, a)
    end
  elseif np == 3 then
    g = function(self, a, b)
      if type(self) ~= "table" or rawget(self, key) == nil then bad(self) end
      return f(self, a, b)
    end
  else
    g = function(self, ...)
      if type(self) ~= "table" or rawget(self, key) == nil then bad(self) end
      return f(self, ...)
    end
  end
  checked[g] = true
  util.unchecked[g] = f
  return g
end
-- A class table's __newindex that checks the methods named in the set
-- names as they are defined (function C:step() ... end), with the
-- configuration cfg(C) gives: subclasses' overrides get the check too.
function util.method_definer(names, cfg)
  return function(class, k, v)
    if type(v) == "function" and names[k] then v = util.self_checked(v, cfg(class), k) end
    rawset(class, k, v)
  end
end
-- every function of class named in names (a list), checked in place
function util.check_methods(class, c, names)
  for _, k in ipairs(names) do
    local f = rawget(class, k)
    if type(f) == "function" then rawset(class, k, util.self_checked(f, c, k)) end
  end
end

-- PyTorch's name of a dtype as its messages print it ("Float", "Long",
-- "ComplexDouble" ...): lt_torch_name of the C dtype list.
function util.torch_name(dt) return dt._torch_name end

-- util.check_param_budget(fail, cname, dtype, numel, ntensors, args): a
-- module constructor's check, before it allocates anything, that the
-- parameters it is about to build can exist: numel elements in ntensors
-- tensors (numbers: the caller multiplies the sizes as floats, so nothing
-- wraps around), refused when more than a tensor can hold (the element
-- bound of src/core/lt_tensor.c) or than the memory they would need (the
-- state's T.set_memory_limit, else the machine's memory; each tensor
-- costs about 1 KB besides its data).  args names the sizes that made the
-- count ("num_layers=4294967296, hidden_size=4").  Without it
-- nn.RNN(4, 4, {num_layers = 2^32}) built layers for hours.
local MAX_NUMEL = 2 ^ 63 / 64
local TENSOR_OVERHEAD = 1024
local function bytes_str(b)
  local units, i = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" }, 1
  while b >= 1024 and i < #units do b, i = b / 1024, i + 1 end
  return i == 1 and ("%d bytes"):format(b) or ("%.1f %s"):format(b, units[i])
end
local function count_str(n)
  if n < 2 ^ 53 then return ("%d"):format(n) end
  return ("%.3g"):format(n)
end
-- out= of a function written in Lua: util.check_out(fname, out) before the
-- work (nil passes; a freed tensor, or not a tensor, is refused by name),
-- util.into_out(fname, out, ...) after: the result (or each of a tuple's,
-- out then a list of as many tensors) is copied into out, which is
-- returned; the shapes must match and the dtypes too (PyTorch's out=).
function util.check_out(fname, out, n)
  if out == nil then return end
  local list = n and n > 1
  local items = list and out or { out }
  if list and (type(out) ~= "table" or getmetatable(out) ~= nil or rawlen(out) ~= n) then
    util.fail(fname, "bad option 'out' (a list of %d tensors expected, got %s)", n, util.mtname(out))
  end
  for i = 1, #items do
    local o = items[i]
    local what = list and ("bad option 'out' (element %d: "):format(i) or "bad option 'out' ("
    if getmetatable(o) ~= TMT then util.fail(fname, "%sTensor expected, got %s)", what, util.mtname(o)) end
    if T._is_freed(o) then util.fail(fname, "%stensor was freed)", what) end
  end
end
function util.into_out(fname, out, ...)
  if out == nil then return ... end
  local n = select("#", ...)
  util.check_out(fname, out, n)   -- again: freed since?
  local items, results = n > 1 and out or { out }, { ... }
  for i = 1, n do
    local o, r = items[i], results[i]
    if o.dtype ~= r.dtype then
      util.fail(fname, "Expected out tensor to have dtype %s, but got %s instead", r.dtype.name, o.dtype.name)
    end
    local os_, rs = o.shape, r.shape
    local same = #os_ == #rs
    for d = 1, #rs do same = same and os_[d] == rs[d] end
    if not same then
      util.fail(fname, "output with shape [%s] doesn't match the result shape [%s]", table.concat(os_, ", "),
        table.concat(rs, ", "))
    end
    o:copy_(r)
  end
  if n > 1 then return unpack(out, 1, n) end
  return out
end

-- A module's dtype option, as the factories take it (T.zeros(2, {dtype =
-- "float64"})): nil, a dtype, or a dtype's name ("float64", "double",
-- "ltensor.float64") -> nil or the dtype; else "ltensor.<fname>: bad option
-- 'dtype' (...)".  (A name handed on to t:to(name) read as a device.)
local DTYPE_MT = getmetatable(T.float32)
function util.opt_dtype(fname, v)
  if v == nil or getmetatable(v) == DTYPE_MT then return v end
  if type(v) == "string" then
    local d = rawget(T, (v:gsub("^ltensor%.", "")))
    if getmetatable(d) == DTYPE_MT then return d end
    util.fail(fname, "bad option 'dtype' (unknown dtype name '%s')", v)
  end
  util.fail(fname, "bad option 'dtype' (ltensor dtype expected, got %s)", util.mtname(v))
end

function util.check_param_budget(fail, cname, dtype, numel, ntensors, args)
  -- (a dtype's name is read as T.<name>; a bad one is the constructor's own error later)
  if type(dtype) == "string" then dtype = T[dtype] end
  local ok, itemsize = pcall(function() return dtype.itemsize end)
  if not ok or type(itemsize) ~= "number" then dtype = T.get_default_dtype() end
  if numel > MAX_NUMEL then
    fail(cname, "%s make %s parameters, more than a tensor can hold (2^57 elements)", args, count_str(numel))
  end
  local need = numel * dtype.itemsize + ntensors * TENSOR_OVERHEAD
  local limit, what = T.memory_stats().limit, "the memory limit set by T.set_memory_limit"
  if not limit or limit == 0 then limit, what = T._physical_memory(), "this machine's memory" end
  if limit and need > limit then
    fail(cname, "%s make %s parameters in %s tensor%s (%s), more than %s (%s)", args, count_str(numel),
      count_str(ntensors), ntensors == 1 and "" or "s", bytes_str(need), what, bytes_str(limit))
  end
end

-- util.run_named(fname, f, ...): f(...) with errors raised in fname's name.
-- While it runs, T._public_name is fname (unless an outer call set one: the
-- outermost names the errors), which the C side's ltl_error and
-- util.failer read; the name is restored however the call ends.  Composed
-- tensor ops (tensordot over mm) and the distributions' methods use it.
local public_name, set_public_name = T._public_name, T._set_public_name
local function finish(prev, ok, ...)
  set_public_name(prev)
  if ok then return ... end
  error((...), 0)
end
function util.run_named(fname, f, ...)
  local prev = public_name()
  if prev == nil then set_public_name(fname) end
  return finish(prev, pcall(f, ...))
end

return util
