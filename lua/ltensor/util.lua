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
  C.check_t = expect("Tensor", util.is_tensor)
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

-- PyTorch's name of a dtype as its messages print it ("Float", "Long",
-- "ComplexDouble" ...): lt_torch_name of the C dtype list.
function util.torch_name(dt) return dt._torch_name end

return util
