-- ltensor.autograd.helpers: what the backward rules share -- the rule
-- tables the engine reads (autograd.rules by grad name, inplace_rules) and
-- the small helpers the formulas use (they run with grad mode =
-- create_graph).  The rule files (autograd/rules_*.lua) add to the tables;
-- ltensor.autograd hands them to the engine (T._ag_init).
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
local select, type = select, type

local H = {}
local is_t = util.is_tensor
local fail = util.failer("ltensor.")
-- argument checks in Lua's vocabulary, naming the function
local function argcheck(cond, fname, n, what, v)
  if not cond then fail(fname, ("bad argument #%d (%s expected, got %s)"):format(n, what, type(v))) end
end
local function check_t(fname, n, t)
  if not is_t(t) and n == 1 then   -- x.backward() for x:backward()
    fail(fname, ("bad argument #1 (tensor expected, got %s%s)"):format(type(t), util.tensor_method_hint(fname)))
  end
  argcheck(is_t(t), fname, n, "tensor", t)
end
H.is_t, H.fail, H.argcheck, H.check_t = is_t, fail, argcheck, check_t

-- the dtypes the fused C kernels of src/binding/l_nnfused.c take (others
-- use the composite forms): read by autograd/rules_nn.lua's rules and by
-- nn/functional/fused.lua's entry points
H.FUSED = { float32 = true, float64 = true }

local function numel_of(s) local n = 1 for i = 1, #s do n = n * s[i] end return n end
H.numel_of = numel_of

-- the rule tables: rules[grad_name](raw, args...) -> spec, outputs...;
-- inplace_rules: in-place ops with a rule of their own (others reuse the
-- out-of-place rule)
H.rules, H.inplace_rules = {}, {}

local math_type = math.type
-- does input i of the node want a gradient?  (the engine sets n.need, a bit
-- mask or, past 62 inputs, a list of booleans, only when some input does not)
local function need(n, i)
  local m = n.need
  if m == nil then return true end
  if math_type(m) == "integer" then return compat.bit(m, i) end
  return m[i] == true
end

-- sum_to: sum g over leading extra dims and over dims where `shape` has size 1
-- (keepdim), then drop the leading dims: the backward of broadcasting.  The
-- arithmetic is the C engine's (one copy); this checks the arguments.
local function sum_to(g, shape)
  check_t("autograd.sum_to", 1, g)
  argcheck(type(shape) == "table", "autograd.sum_to", 2, "table", shape)
  for i = 1, #shape do
    if math.type(shape[i]) ~= "integer" then fail("autograd.sum_to", "bad argument #2 (shape entry " .. i .. " is not an integer)") end
  end
  return T._sum_to(g, shape)   -- the engine's own sum_to (src/binding/l_autograd.c)
end

local function zero_where(cond, x)   -- x with zeros where cond
  return T.where(cond, T.zeros_like(x), x)
end
local function keep_where(cond, x)   -- x where cond, zeros elsewhere
  return T.where(cond, x, T.zeros_like(x))
end

local function normdim(d, nd, extra)
  -- the C functions take a numeric string where an integer goes (Lua's
  -- coercion, as luaL_checkinteger): so do the rules that re-read the dims
  if type(d) == "string" then d = math.tointeger(tonumber(d)) or d end
  nd = nd + (extra or 0)
  if d < 0 then d = d + nd + 1 end
  if nd == 0 then d = 1 end
  return d
end

local is_opts = util.is_nonempty_opts

-- Reduction arguments as in l_reduce.c: (dim or {dims}) (keepdim) (opts).
-- Returns a sorted list of 1-based dims (nil: all dims), keepdim, opts.
local function rparse(nd, ...)
  local n = select("#", ...)
  local a = { ... }
  local opts, last = nil, n
  for k = 1, n do if is_opts(a[k]) then opts, last = a[k], k - 1 break end end
  local dim, keepdim = nil, false
  if last >= 1 then dim = a[1] end
  if last >= 2 then keepdim = a[2] and true or false end
  if opts then
    if opts.dim ~= nil then dim = opts.dim end
    if opts.keepdim ~= nil then keepdim = opts.keepdim and true or false end
  end
  if dim == nil then return nil, keepdim, opts end
  local list = type(dim) == "table" and dim or { dim }
  if #list == 0 then return nil, keepdim, opts end
  local dims = {}
  for i = 1, #list do dims[i] = normdim(list[i], nd) end
  table.sort(dims)
  if nd == 0 then return nil, keepdim, opts end
  return dims, keepdim, opts
end

-- g of a reduction's output, reshaped to broadcast against its input.
local function unreduce(g, dims, keepdim, in_nd)
  if dims and not keepdim and in_nd > 0 then
    for _, d in ipairs(dims) do g = g:unsqueeze(d) end
  end
  return g
end
local function expand_to(g, shape)
  if #shape == 0 then return g:reshape(shape) end
  return g:expand(shape)
end


-- 1..n as a tensor of nd dims, along dim (for one-hot index comparisons)
local function arange_along(n, dim, nd, dtype)
  local r = T.arange(1, n + 1)
  local shape = {}
  for i = 1, nd do shape[i] = 1 end
  shape[dim] = n
  r = r:reshape(shape)
  if dtype then r = r:to(dtype) end
  return r
end
H.arange_along = arange_along

H.need, H.sum_to, H.zero_where, H.keep_where, H.normdim = need, sum_to, zero_where, keep_where, normdim
H.is_opts, H.rparse, H.unreduce, H.expand_to = is_opts, rparse, unreduce, expand_to
return H
