-- ltensor.structural: the structural, search/counting and statistics surface
-- of SPEC §6b (tril/triu ... einsum, pad; searchsorted ... corrcoef).
--
-- Most ops are composed here from differentiable tensor ops (narrow, cat,
-- index_select, gather, expand, reshape, mm/bmm, where), so autograd covers
-- them without rules of their own; every element loop runs in C (those ops,
-- or the kernels of src/l_struct.c and src/l_search.c, which take contiguous
-- float64/int64 rows prepared here).  Dims and positions are 1-based.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local autograd = T.autograd

local M = T._methods
local TMT = T._metatable
local unpack, pack, select, type, mtype = table.unpack, table.pack, select, type, math.type
local getmetatable = getmetatable

local S = {}

local is_t = util.is_tensor
local fail = util.failer("ltensor.")
local torch_dtype_name = util.torch_name
local function is_opts(v)
  return type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0 and next(v) ~= nil
end
local function check_t(fname, n, x)
  if not is_t(x) then fail(fname, ("bad argument #%d (tensor expected, got %s)"):format(n, type(x))) end
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
-- The library's one options check (src/l_args.c): an unknown key raises
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

-- An op composed of other ops reports errors under its own name: an
-- "ltensor.mm: ..." raised inside tensordot becomes "ltensor.tensordot: ...".
-- Lua runtime errors (bugs) pass unchanged.
local function renamed(fname, ok, ...)
  if ok then return ... end
  local e = ...
  if type(e) == "string" then
    local prefix = "ltensor." .. fname .. ":"
    e = e:match("^[^\n:]*:%d+: (ltensor%..*)$") or e   -- a C error's "file:line: " position
    if e:sub(1, #prefix) ~= prefix then
      local rest = e:match("^ltensor%.[%w_%.]+: (.*)$")
      if rest then e = prefix .. " " .. rest end
    end
  end
  error(e, 0)
end
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
      return renamed(fname, pcall(f, ...))
    end
  end
  return function(...) return renamed(fname, pcall(f, ...)) end
end
S.named = named

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

---------------------------------------------------------------------------
-- Construction
---------------------------------------------------------------------------
function T.polar(abs, angle)
  check_t("polar", 1, abs)
  check_t("polar", 2, angle)
  if abs.dtype ~= angle.dtype or not is_float(abs) then
    fail("polar", ("Expected both inputs to be Float or Double tensors but got %s and %s"):format(
      tostring(abs.dtype), tostring(angle.dtype)))
  end
  return T.complex(abs * T.cos(angle), abs * T.sin(angle))
end
T.polar = named("polar", T.polar)   -- (abs, angle): a third argument is a slip

---------------------------------------------------------------------------
-- Structure
---------------------------------------------------------------------------
-- in-place forms: the kernel's result copied back (copy_ records autograd)
local function tri_inplace(name)
  return function(t, ...)
    check_t(name .. "_", 1, t)
    return t:copy_(T[name](t, ...))
  end
end
M.tril_ = named("tril_", tri_inplace("tril"))
M.triu_ = named("triu_", tri_inplace("triu"))
def("diag", function(t, k)
  check_t("diag", 1, t)
  if is_opts(k) then k = ck("diag", k, { "diagonal" }).diagonal end
  k = k or 0
  check_int("diag", "diagonal", k)
  local nd = t:dim()
  if nd == 1 then return T.diag_embed(t, k, 1, 2) end
  if nd == 2 then return T.diagonal(t, k):clone() end
  fail("diag", ("matrix or a vector expected (got a %dD tensor)"):format(nd))
end)

def("trace", function(t)
  check_t("trace", 1, t)
  if t:dim() ~= 2 then fail("trace", ("expected a matrix, but got tensor with dim %d"):format(t:dim())) end
  -- PyTorch's CPU kernel has no bool or reduced-precision float version
  if t.dtype == T.bool or t.dtype == T.float16 or t.dtype == T.bfloat16 then
    fail("trace", ('"trace" not implemented for \'%s\''):format(torch_dtype_name(t.dtype)))
  end
  return T.sum(T.diagonal(t))
end)

-- dist(a, b [, p=2]): the p-norm of a - b (broadcast), as torch.dist
def("dist", function(a, b, p)
  check_t("dist", 1, a)
  check_t("dist", 2, b)
  if p == nil then p = 2 end
  check_num("dist", "p", p)
  if not (a:is_floating_point() or a:is_complex()) or not (b:is_floating_point() or b:is_complex()) then
    fail("dist", ("norm(): input dtype should be either floating point or complex. Got %s instead."):format(
      torch_dtype_name((a:is_floating_point() or a:is_complex()) and b.dtype or a.dtype)))
  end
  return T.norm(a - b, p)
end)

-- aminmax(t [, {dim=, keepdim=false}]) -> min, max (amin and amax in one
-- call, as torch.aminmax's (min, max) pair)
def("aminmax", function(t, ...)
  check_t("aminmax", 1, t)
  local o = ck("aminmax", opts_at("aminmax", 2, ...), { "dim", "keepdim" })
  local keepdim = o.keepdim and true or false
  local dims = o.dim
  if dims == nil then
    if t:numel() == 0 then
      fail("aminmax", "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")
    end
    if not keepdim then return T.amin(t), T.amax(t) end
    dims = {}
    for i = 1, t:dim() do dims[i] = i end
  end
  return T.amin(t, dims, keepdim), T.amax(t, dims, keepdim)
end)

-- fmax/fmin: maximum/minimum that ignore NaN (NaN only where both are);
-- the gradient goes to the side returned (a on ties), as PyTorch's
local function fminmax(name, keep)
  local F = autograd.Function {
    name = name == "fmax" and "FmaxBackward0" or "FminBackward0",
    forward = function(ctx, a, b)
      local took_a = T.logical_or(keep(a, b), T.isnan(b))
      ctx:save_for_backward(took_a)
      return T.where(took_a, a, b)
    end,
    backward = function(ctx, g)
      local took_a = ctx.saved_tensors[1]
      local z = T.zeros_like(g)
      return T.where(took_a, g, z), T.where(took_a, z, g)
    end,
  }
  return function(a, b)
    if not T.is_tensor(a) and not T.is_tensor(b) then fail(name, "bad argument #1 (tensor expected, got " .. type(a) .. ")") end
    if not T.is_tensor(a) then a = T.full({}, a, { dtype = b.dtype }) end
    if not T.is_tensor(b) then b = T.full({}, b, { dtype = a.dtype }) end
    if a:is_complex() or b:is_complex() then fail(name, name .. " not implemented for complex tensors") end
    local ab = common(name, { a, b })
    if ab[1].dtype == T.bool then fail(name, ('"%s_cpu" not implemented for \'Bool\''):format(name == "fmax" and "fmax" or "fmin")) end
    return F(ab[1], ab[2])
  end
end
def("fmax", fminmax("fmax", T.ge))
def("fmin", fminmax("fmin", T.le))

def("fliplr", function(t)
  check_t("fliplr", 1, t)
  if t:dim() < 2 then fail("fliplr", "Input must be >= 2-d.") end
  return T.flip(t, { 2 })
end)
def("flipud", function(t)
  check_t("flipud", 1, t)
  if t:dim() < 1 then fail("flipud", "Input must be >= 1-d.") end
  return T.flip(t, { 1 })
end)

def("roll", function(t, shifts, dims)
  check_t("roll", 1, t)
  if is_opts(dims) then dims = ck("roll", dims, { "dims" }).dims end
  local sh = type(shifts) == "table" and shifts or { shifts }
  for i = 1, #sh do check_int("roll", "shifts", sh[i]) end
  if dims == nil or (type(dims) == "table" and #dims == 0) then
    if #sh ~= 1 then fail("roll", ("shifts and dimensions must align. shifts: %d, dims:0"):format(#sh)) end
    return T._roll_dims(t:reshape({ t:numel() }), { sh[1] }, { 1 }):view(t.shape)
  end
  local ds = type(dims) == "table" and dims or { dims }
  if #sh ~= #ds then
    fail("roll", ("shifts and dimensions must align. shifts: %d, dims:%d"):format(#sh, #ds))
  end
  local nd = {}
  for i = 1, #ds do nd[i] = normdim("roll", ds[i], t:dim()) end
  return T._roll_dims(t, { table.unpack(sh, 1, #sh) }, nd)
end)

def("rot90", function(t, k, dims)
  check_t("rot90", 1, t)
  if is_opts(k) then dims, k = ck("rot90", k, { "k", "dims" }).dims, k.k end
  if is_opts(dims) then dims = ck("rot90", dims, { "dims" }).dims end
  k = k or 1
  check_int("rot90", "k", k)
  dims = dims or { 1, 2 }
  if type(dims) ~= "table" then fail("rot90", ("dims must be a table of two dims (got %s)"):format(type(dims))) end
  if #dims ~= 2 then fail("rot90", ("expected total rotation dims == 2, but got dims = %d"):format(#dims)) end
  local nd = t:dim()
  if nd < 2 then fail("rot90", ("expected total dims >= 2, but got total dims = %d"):format(nd)) end
  local d1, d2 = normdim("rot90", dims[1], nd), normdim("rot90", dims[2], nd)
  if d1 == d2 then
    fail("rot90", ("expected rotation dims to be different, but got dim0 = %d and dim1 = %d"):format(dims[1], dims[2]))
  end
  k = k % 4
  if k == 1 then return T.flip(t, { d2 }):transpose(d1, d2) end
  if k == 2 then return T.flip(t, { d1, d2 }) end
  if k == 3 then return T.flip(t, { d1 }):transpose(d1, d2) end
  return t:clone()
end)

-- PyTorch's Tensor.repeat: view as [1, s1, 1, s2, ...], expand to
-- [r1, s1, r2, s2, ...] and reshape (one strided copy).
local function repeat_tensor(t, ...)
  check_t("repeat", 1, t)
  local reps = sizes_of("repeat", ...)
  local nd = t:dim()
  if #reps < nd then
    fail("repeat", "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
  end
  -- as PyTorch 1.13: the result's sizes are size * repeat (a negative one
  -- is an error, so a negative repeat of a size-0 dim is allowed); when one
  -- of them is 0 the result is an empty tensor of that shape, bounded as any
  -- new tensor is (lt_check_shape), so [2^63-1, 0] is fine
  local lead = #reps - nd
  local src, big, final = {}, {}, {}
  local sh = t.shape
  local zero = false
  for i = 1, #reps do
    local s = i > lead and sh[i - lead] or 1
    src[#src + 1] = 1; src[#src + 1] = s
    big[#big + 1] = reps[i]; big[#big + 1] = s
    final[i] = s * reps[i]
    if final[i] == 0 then zero = true end
  end
  for i = 1, #reps do
    if final[i] < 0 then fail("repeat", ("Trying to create tensor with negative dimension %s: %s"):format(compat.int_str(final[i]), shape_str(final))) end
  end
  if #reps == 0 then return t:clone() end
  if zero then
    local out = T.empty(final, { dtype = t.dtype })   -- the shape bound, in this function's name
    if not t.requires_grad then return out end
    -- no element to copy: an empty slice of t reshaped, so that gradients flow
    return t:reshape({ t:numel() }):narrow(1, 1, 0):reshape(final):clone()
  end
  local total = 1
  for i = 1, #reps do
    size_mul("repeat", reps[i], big[2 * i])
    total = size_mul("repeat", total, final[i])
  end
  return t:reshape(src):expand(big):reshape(final)
end
repeat_tensor = named("repeat", repeat_tensor)
T.repeat_tensor = repeat_tensor
M.repeat_tensor = repeat_tensor
T["repeat"] = repeat_tensor
M["repeat"] = repeat_tensor

def("tile", function(t, ...)
  check_t("tile", 1, t)
  local reps = sizes_of("tile", ...)
  local nd = t:dim()
  local full = {}
  for i = 1, nd - #reps do full[i] = 1 end
  for i = 1, #reps do full[#full + 1] = reps[i] end
  return repeat_tensor(t, full)
end)

def("repeat_interleave", function(t, repeats, dim, ...)
  check_t("repeat_interleave", 1, t)
  local opts = is_opts(dim) and dim or (is_opts(repeats) and repeats or (...))
  if is_opts(dim) then dim = nil end
  if is_opts(repeats) then repeats = nil end
  if is_opts(opts) then ck("repeat_interleave", opts, { "dim", "output_size" }) end
  if is_opts(opts) and dim == nil then dim = opts.dim end
  if repeats == nil then
    -- repeat_interleave(repeats): the 1-based positions repeated
    local r = t
    if r:dim() > 1 then fail("repeat_interleave", "repeats must be 0-dim or 1-dim tensor") end
    return T.repeat_interleave(T.arange(1, r:numel() + 1), r:reshape({ r:numel() }), 1)
  end
  local x, d = t, nil
  if dim == nil then x = t:reshape({ t:numel() }); d = 1 else d = normdim("repeat_interleave", dim, t:dim()) end
  if x:dim() == 0 then x = x:reshape({ 1 }) end
  local n = x:size(d)
  if is_t(repeats) and repeats:numel() == 1 and repeats:dim() <= 1 then repeats = repeats:item() end
  if not is_t(repeats) then
    check_int("repeat_interleave", "repeats", repeats)
    if repeats < 0 then fail("repeat_interleave", "repeats can not be negative") end
    local sh = x.shape
    local e = { table.unpack(sh) }
    table.insert(e, d + 1, repeats)
    local final = { table.unpack(sh) }
    final[d] = size_mul("repeat_interleave", sh[d], repeats)
    size_mul("repeat_interleave", x:numel(), repeats)
    return x:unsqueeze(d + 1):expand(e):reshape(final)
  end
  if is_float(repeats) or is_complex(repeats) or repeats.dtype == T.bool then
    fail("repeat_interleave", "repeats has to be Long or Int tensor")
  end
  if repeats:dim() ~= 1 then fail("repeat_interleave", "repeats must be 0-dim or 1-dim tensor") end
  if repeats:numel() ~= n then fail("repeat_interleave", "repeats must have the same size as input along dim") end
  local r = repeats:to(T.int64)
  if n > 0 and T.any(T.lt(r, 0)):item() then fail("repeat_interleave", "repeats can not be negative") end
  if n > 0 and T.sum(r:double()):item() > SIZE_MAX then fail("repeat_interleave", "tensor too large (sizes overflow)") end
  local cum = T.cumsum(r, 1)
  local total = n > 0 and cum[n]:item() or 0
  local idx = T._searchsorted_rows(cum:reshape({ 1, n }), T.arange(total):reshape({ 1, total }), true):reshape({ total })
  return x:index_select(d, idx)
end)

def("kron", function(a, b)
  check_t("kron", 1, a)
  check_t("kron", 2, b)
  local na, nb = a:dim(), b:dim()
  local nd = math.max(na, nb)
  local sa, sb, fa, fb, final = a.shape, b.shape, {}, {}, {}
  for i = 1, nd do
    local x = i > nd - na and sa[i - (nd - na)] or 1
    local y = i > nd - nb and sb[i - (nd - nb)] or 1
    fa[#fa + 1] = x; fa[#fa + 1] = 1
    fb[#fb + 1] = 1; fb[#fb + 1] = y
    final[i] = x * y
  end
  if nd == 0 then return a * b end
  return (a:reshape(fa) * b:reshape(fb)):reshape(final)
end)

local function broadcast_shapes(fname, shapes)
  local nd = 0
  for _, s in ipairs(shapes) do nd = math.max(nd, #s) end
  local out = {}
  for i = 1, nd do out[i] = 1 end
  for _, s in ipairs(shapes) do
    local off = nd - #s
    for i = 1, #s do
      local a, b = out[off + i], s[i]
      if a == 1 then out[off + i] = b
      elseif b ~= 1 and a ~= b then
        fail(fname, ("The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d"):format(a, b, off + i))
      end
    end
  end
  return out
end
S.broadcast_shapes = broadcast_shapes
function T.broadcast_shapes(...)
  local shapes = table.pack(...)
  for i = 1, shapes.n do
    local s = shapes[i]
    if mtype(s) == "integer" then shapes[i] = { s }
    elseif type(s) == "table" and not is_t(s) then
      for j = 1, #s do check_int("broadcast_shapes", "size", s[j]) end
    else
      fail("broadcast_shapes", ("bad argument #%d (a size or a table of sizes expected, got %s)"):format(i, type(s)))
    end
  end
  shapes.n = nil
  return broadcast_shapes("broadcast_shapes", shapes)
end

local function tensor_list(fname, ...)
  local first = ...
  local list = (type(first) == "table" and not is_t(first) and not is_opts(first)) and first or pack(...)
  local out = {}
  for i = 1, (list.n or #list) do
    local v = list[i]
    if v ~= nil and not is_opts(v) then
      check_t(fname, i, v)
      out[#out + 1] = v
    end
  end
  return out
end

def("block_diag", function(...)
  local ts = tensor_list("block_diag", ...)
  if #ts == 0 then return T.empty(1, 0) end
  local dt = ts[1].dtype
  for i = 2, #ts do dt = T.promote_types(dt, ts[i].dtype) end
  local mats, cols = {}, 0
  for i, t in ipairs(ts) do
    local nd = t:dim()
    if nd > 2 then
      fail("block_diag", ("Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions"):format(i - 1, nd))
    end
    if nd == 0 then t = t:reshape({ 1, 1 }) elseif nd == 1 then t = t:reshape({ 1, t:numel() }) end
    mats[i] = t:to(dt)
    cols = cols + t:size(2)
  end
  local rows, before = {}, 0
  for i, m in ipairs(mats) do
    local r, c = m:size(1), m:size(2)
    local parts = {}
    if before > 0 then parts[#parts + 1] = T.zeros(r, before, { dtype = dt }) end
    parts[#parts + 1] = m
    local after = cols - before - c
    if after > 0 then parts[#parts + 1] = T.zeros(r, after, { dtype = dt }) end
    rows[i] = #parts == 1 and m or T.cat(parts, 2)
    before = before + c
  end
  return T.cat(rows, 1)
end, false)

def("cross", function(a, b, dim, ...)
  check_t("cross", 1, a)
  check_t("cross", 2, b)
  if is_opts(dim) then dim = ck("cross", dim, { "dim" }).dim end
  if a:dim() ~= b:dim() then
    fail("cross", ("inconsistent tensors dimensions input: %d other: %d"):format(a:dim(), b:dim()))
  end
  local nd = a:dim()
  local d
  if dim == nil then
    for i = 1, nd do if a:size(i) == 3 and b:size(i) == 3 then d = i break end end
    if not d then fail("cross", "no dimension of size 3 in input") end
  else
    d = normdim("cross", dim, nd)
  end
  if nd == 0 or a:size(d) ~= 3 or b:size(d) ~= 3 then
    fail("cross", ("inputs dimension %d must have length 3. Got %d and %d"):format(d, nd > 0 and a:size(d) or 0, nd > 0 and b:size(d) or 0))
  end
  local x, y = T.broadcast_tensors(a, b)
  local ab = common("cross", { x, y })
  x, y = ab[1], ab[2]
  local function c(t, i) return t:narrow(d, i, 1) end
  local r1 = c(x, 2) * c(y, 3) - c(x, 3) * c(y, 2)
  local r2 = c(x, 3) * c(y, 1) - c(x, 1) * c(y, 3)
  local r3 = c(x, 1) * c(y, 2) - c(x, 2) * c(y, 1)
  return T.cat({ r1, r2, r3 }, d)
end)

def("broadcast_tensors", function(...)
  local ts = tensor_list("broadcast_tensors", ...)
  local shapes = {}
  for i, t in ipairs(ts) do shapes[i] = t.shape end
  local s = broadcast_shapes("broadcast_tensors", shapes)
  local out = {}
  for i, t in ipairs(ts) do
    out[i] = (#s == 0) and t:reshape({}) or t:expand(s)
  end
  return unpack(out, 1, #ts)
end)

def("broadcast_to", function(t, ...)
  check_t("broadcast_to", 1, t)
  local size = sizes_of("broadcast_to", ...)
  local sh = t.shape
  if #size < #sh then
    fail("broadcast_to", ("the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)"):format(#size, #sh))
  end
  for i = 1, #size do
    local j = i - (#size - #sh)
    local want = size[i]
    if j >= 1 then
      if want == -1 then want = sh[j] end
      if sh[j] ~= 1 and sh[j] ~= want then
        fail("broadcast_to", ("The expanded size of the tensor (%d) must match the existing size (%d) at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s"):format(
          want, sh[j], i, shape_str(size), shape_str(sh)))
      end
    elseif want < 0 then
      fail("broadcast_to", ("The expanded size of the tensor (%d) isn't allowed in a leading, non-existing dimension %d"):format(want, i))
    end
  end
  if #size == 0 then return t:reshape({}) end
  return t:expand(size)
end)

def("meshgrid", function(...)
  local opts = ck("meshgrid", (split_opts(...)), { "indexing" })
  local ts = tensor_list("meshgrid", ...)
  local indexing = opts and opts.indexing or "ij"
  if indexing ~= "ij" and indexing ~= "xy" then
    fail("meshgrid", ('indexing must be one of "xy" or "ij", but received: %s'):format(tostring(indexing)))
  end
  local n = #ts
  if n == 0 then fail("meshgrid", "Expected at least one tensor") end
  for i = 1, n do
    if ts[i]:dim() > 1 then
      fail("meshgrid", ("Expected 0D or 1D tensor in the tensor list but got: %dD"):format(ts[i]:dim()))
    end
    if ts[i].dtype ~= ts[1].dtype then fail("meshgrid", "expects all tensors to have the same dtype") end
  end
  local swap = indexing == "xy" and n >= 2
  local order = {}
  for i = 1, n do order[i] = ts[i] end
  if swap then order[1], order[2] = order[2], order[1] end
  local size = {}
  for i = 1, n do size[i] = order[i]:numel() end
  local out = {}
  for i = 1, n do
    local v = {}
    for j = 1, n do v[j] = 1 end
    v[i] = size[i]
    out[i] = order[i]:reshape(v):expand(size)
  end
  if swap then out[1], out[2] = out[2], out[1] end
  return unpack(out, 1, n)
end, false)

def("take_along_dim", function(t, idx, dim)
  check_t("take_along_dim", 1, t)
  check_t("take_along_dim", 2, idx)
  if is_opts(dim) then dim = ck("take_along_dim", dim, { "dim" }).dim end
  if idx.dtype ~= T.int64 then
    fail("take_along_dim", ("dtype of indices should be Long but got %s"):format(tostring(idx.dtype)))
  end
  if dim == nil then
    return t:reshape({ t:numel() }):gather(1, idx:reshape({ idx:numel() }))
  end
  local nd = t:dim()
  local d = normdim("take_along_dim", dim, nd)
  if nd ~= idx:dim() then
    fail("take_along_dim", ("input and indices should have the same number of dimensions, but got %d dimensions for input, and %d dimensions for indices"):format(nd, idx:dim()))
  end
  if nd == 0 then return t:reshape({ 1 }):gather(1, idx:reshape({ 1 })):reshape({}) end
  local ts, is = t.shape, idx.shape
  local a, b = { table.unpack(ts) }, { table.unpack(is) }
  a[d], b[d] = 1, 1
  local s = broadcast_shapes("take_along_dim", { a, b })
  local st, si = { table.unpack(s) }, { table.unpack(s) }
  st[d], si[d] = ts[d], is[d]
  return t:expand(st):gather(d, idx:expand(si))
end)

-- index_put_(t, {idx...}, values [, accumulate]): indices 1-based
def("index_put_", function(t, indices, values, accumulate)
  check_t("index_put_", 1, t)
  if type(indices) ~= "table" or is_t(indices) then fail("index_put_", "indices must be a table of tensors") end
  if is_opts(accumulate) then accumulate = ck("index_put_", accumulate, { "accumulate" }).accumulate end
  if not is_t(values) then values = T.tensor(values, { dtype = t.dtype }) end
  if not accumulate then
    local key = #indices == 1 and indices[1] or indices
    t[key] = values
    return t
  end
  -- accumulate: linear positions of the broadcast index tensors, then index_add
  local n = #indices
  if n > t:dim() then fail("index_put_", ("too many indices for tensor of dimension %d (got %d)"):format(t:dim(), n)) end
  local idx = {}
  for i = 1, n do
    local ix = indices[i]
    check_t("index_put_", 2, ix)
    if ix.dtype == T.bool or ix.dtype == T.uint8 then fail("index_put_", "boolean indices are not supported with accumulate=true") end
    local sz = t:size(i)
    ix = ix:to(T.int64)
    ix = T.where(T.lt(ix, 0), ix + (sz + 1), ix)
    if ix:numel() > 0 and (T.any(T.lt(ix, 1)):item() or T.any(T.gt(ix, sz)):item()) then
      fail("index_put_", ("index out of range for dimension %d with size %d"):format(i, sz))
    end
    idx[i] = ix
  end
  local shapes = {}
  for i = 1, n do shapes[i] = idx[i].shape end
  local bs = broadcast_shapes("index_put_", shapes)
  local rest = {}
  local sh = t.shape
  for i = n + 1, #sh do rest[#rest + 1] = sh[i] end
  local inner = prod(rest)
  local lin = T.zeros(bs, { dtype = T.int64 })   -- 0-based row of [prod(indexed dims), inner]
  local stride = 1
  for i = n, 1, -1 do
    lin = lin + (idx[i] - 1) * stride
    stride = stride * sh[i]
  end
  local vshape = { table.unpack(bs) }
  for _, r in ipairs(rest) do vshape[#vshape + 1] = r end
  local v = values:to(t.dtype):expand(vshape):reshape({ prod(bs), inner })
  local flat_idx = lin:reshape({ lin:numel() }) + 1
  if T.is_grad_enabled() and (t.requires_grad or values.requires_grad) then
    -- recorded for autograd: the sums built out of place, then one add_ into t
    local k = flat_idx:numel()
    local delta = T.zeros({ prod(sh, 1, n), inner }, { dtype = t.dtype })
      :scatter_add(1, flat_idx:reshape({ k, 1 }):expand(k, inner), v)
    t:add_(delta:view(sh))
    return t
  end
  local rows = t:reshape({ prod(sh, 1, n), inner })
  local target = rows
  if not t:is_contiguous() then target = rows:clone() end
  target:index_add_(1, flat_idx, v)
  if not rawequal(target, rows) then t:copy_(target:view(sh)) end
  return t
end)
def("index_put", function(t, indices, values, accumulate)
  check_t("index_put", 1, t)
  if is_opts(accumulate) then ck("index_put", accumulate, { "accumulate" }) end
  return T.index_put_(t:clone(), indices, values, accumulate)
end)

local function tri_indices(fname, lower)
  return function(rows, cols, offset, opts)
    if is_opts(offset) then opts, offset = offset, nil end
    offset = offset or 0
    check_int(fname, "row", rows)
    check_int(fname, "col", cols)
    check_int(fname, "offset", offset)
    if rows < 0 then fail(fname, ("row must be non-negative, got%d"):format(rows)) end
    if cols < 0 then fail(fname, ("col must be non-negative, got%d"):format(cols)) end
    opts = opts_arg(fname, opts, { "dtype" })
    local dt = opts and opts.dtype or T.int64
    local m = T.ones(rows, cols, { dtype = T.bool })
    m = lower and T.tril(m, offset) or T.triu(m, offset)
    local nz = T.nonzero(m)
    return nz:t():contiguous():to(dt)
  end
end
T.tril_indices = named("tril_indices", tri_indices("tril_indices", true))
T.triu_indices = named("triu_indices", tri_indices("triu_indices", false))

def("diff", function(t, n, dim, ...)
  check_t("diff", 1, t)
  local opts
  if is_opts(n) then opts, n = n, nil
  elseif is_opts(dim) then opts, dim = dim, nil
  else opts = opts_arg("diff", (...)) end
  ck("diff", opts, { "n", "dim", "prepend", "append" })
  if opts then
    if n == nil then n = opts.n end
    if dim == nil then dim = opts.dim end
  end
  n = n or 1
  dim = dim or -1
  check_int("diff", "n", n)
  if t:dim() == 0 then fail("diff", "diff expects input to be at least one-dimensional") end
  if n < 0 then fail("diff", ("order must be non-negative but got %d"):format(n)) end
  local d = normdim("diff", dim, t:dim())
  local function side(x, what)
    if x == nil then return nil end
    if not is_t(x) then x = T.tensor(x, { dtype = t.dtype }) end
    if x:dim() == 0 then
      local s = t.shape
      s[d] = 1
      x = x:expand(s)
    end
    if x:dim() ~= t:dim() then
      fail("diff", ("diff expects prepend or append to be the same dimension as input"))
    end
    return x
  end
  local pre, app = side(opts and opts.prepend, "prepend"), side(opts and opts.append, "append")
  local x = t
  if pre or app then
    local parts = {}
    if pre then parts[#parts + 1] = pre end
    parts[#parts + 1] = t
    if app then parts[#parts + 1] = app end
    local dt = t.dtype
    for _, p in ipairs(parts) do dt = T.promote_types(dt, p.dtype) end
    for i, p in ipairs(parts) do parts[i] = p:to(dt) end
    x = T.cat(parts, d)
  end
  for _ = 1, n do
    local len = x:size(d)
    if len == 0 then break end
    local hi, lo = x:narrow(d, 2, len - 1), x:narrow(d, 1, len - 1)
    if x.dtype == T.bool then x = T.logical_xor(hi, lo) else x = hi - lo end
  end
  if n == 0 then return x:clone() end
  return x
end)

local function cumext(fname, is_max)
  return function(t, dim, opts)
    check_t(fname, 1, t)
    if is_opts(dim) then dim = ck(fname, dim, { "dim" }).dim end
    if dim == nil then fail(fname, "missing argument dim") end
    local d = normdim(fname, dim, t:dim())
    if is_complex(t) then fail(fname, ("%s is not implemented for complex tensors"):format(fname)) end
    if t:numel() == 0 then return t:clone(), T.empty(t.shape, { dtype = T.int64 }) end
    local keys, back = rows_along(t, d)
    local idx = back(T._cumext_rows(keys, is_max))
    local vals
    if t:dim() == 0 then vals = t:clone() else vals = t:gather(d, idx) end
    return vals, idx
  end
end
def("cummax", cumext("cummax", true))
def("cummin", cumext("cummin", false))

-- d/dx_j = sum_{i >= j} g_i exp(x_j - y_i), summed in log space over the
-- positive and the negative parts of g separately (as PyTorch's
-- logcumsumexp_backward), so widely spread inputs neither overflow nor NaN
local LogCumSumExp
local function rev_lcse(v, d) return T.flip(LogCumSumExp(T.flip(v, { d }), d), { d }) end
LogCumSumExp = autograd.Function {
  name = "Logcumsumexp",
  forward = function(ctx, t, d)
    local keys, back = rows_along(t, d)
    local out = back(T._logcumsumexp_rows(keys)):to(t.dtype)
    ctx:save_for_backward(t, out)
    ctx.d = d
    return out
  end,
  backward = function(ctx, g)
    local x, y = table.unpack(ctx.saved_tensors)
    local d = ctx.d
    if x:dim() == 0 then return g end
    local zero = T.zeros({}, { dtype = g.dtype })
    local gp = T.log(T.where(T.gt(g, 0), g, zero)) - y
    local gn = T.log(T.where(T.lt(g, 0), -g, zero)) - y
    return T.exp(rev_lcse(gp, d) + x) - T.exp(rev_lcse(gn, d) + x)
  end,
}
def("logcumsumexp", function(t, dim)
  check_t("logcumsumexp", 1, t)
  if is_opts(dim) then dim = ck("logcumsumexp", dim, { "dim" }).dim end
  if dim == nil then fail("logcumsumexp", "missing argument dim") end
  local d = normdim("logcumsumexp", dim, t:dim())
  if not is_float(t) then
    fail("logcumsumexp", ('"logcumsumexp_out_cpu" not implemented for \'%s\''):format(tostring(t.dtype)))
  end
  if t:numel() == 0 then return t:clone() end
  return LogCumSumExp(t, d)
end)
---------------------------------------------------------------------------
-- BLAS-style fused ops: beta * input + alpha * (product)
---------------------------------------------------------------------------
local function fused(fname, product, check)
  return function(input, a, b, opts, ...)
    check_t(fname, 1, input)
    check_t(fname, 2, a)
    check_t(fname, 3, b)
    if not is_opts(opts) then
      -- positional beta, alpha are not PyTorch's keyword-only form; accept options only
      opts = is_opts((...)) and (...) or {}
    end
    ck(fname, opts, { "beta", "alpha" })
    local beta, alpha = opts.beta, opts.alpha
    if beta == nil then beta = 1 end
    if alpha == nil then alpha = 1 end
    if check then check(a, b) end
    local p = product(a, b)
    if alpha ~= 1 then p = p * alpha end
    local ps = p.shape
    local ok, msg = pcall(function() return input:expand(ps) end)
    if not ok or #input.shape > #ps then
      fail(fname, ("The expanded size of the tensor must match: input of shape %s cannot be broadcast to %s"):format(
        shape_str(input.shape), shape_str(ps)))
    end
    if beta == 0 then
      -- PyTorch ignores input (NaN and inf in it do not propagate)
      local dt = T.promote_types(p.dtype, input.dtype)
      return p:to(dt) + T.zeros_like(input, { dtype = dt }) * 0
    end
    if beta ~= 1 then input = input * beta end
    local r = input + p
    if #r.shape ~= #ps then r = r:expand(ps) end
    return r
  end
end
local function need_dim(fname, t, n, what)
  if t:dim() ~= n then fail(fname, ("%s must be a %dD tensor (got %dD)"):format(what, n, t:dim())) end
end
def("addmm", fused("addmm", function(a, b) return T.mm(a, b) end, function(a, b)
  need_dim("addmm", a, 2, "mat1"); need_dim("addmm", b, 2, "mat2")
  if a:size(2) ~= b:size(1) then
    fail("addmm", ("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)"):format(a:size(1), a:size(2), b:size(1), b:size(2)))
  end
end))
def("addmv", fused("addmv", function(a, b) return T.mv(a, b) end, function(a, b)
  need_dim("addmv", a, 2, "mat"); need_dim("addmv", b, 1, "vec")
  if a:size(2) ~= b:size(1) then
    fail("addmv", ("size mismatch, got input (%d), mat (%dx%d), vec (%d)"):format(a:size(1), a:size(1), a:size(2), b:size(1)))
  end
end))
def("addr", fused("addr", function(a, b) return T.outer(a, b) end, function(a, b)
  need_dim("addr", a, 1, "vec1"); need_dim("addr", b, 1, "vec2")
end))
def("baddbmm", fused("baddbmm", function(a, b) return T.bmm(a, b) end, function(a, b)
  need_dim("baddbmm", a, 3, "batch1"); need_dim("baddbmm", b, 3, "batch2")
  if a:size(1) ~= b:size(1) or a:size(3) ~= b:size(2) then
    fail("baddbmm", ("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d]."):format(
      a:size(1), a:size(3), b:size(1), b:size(2)))
  end
end))
def("addbmm", fused("addbmm", function(a, b) return T.sum(T.bmm(a, b), 1) end, function(a, b)
  need_dim("addbmm", a, 3, "batch1"); need_dim("addbmm", b, 3, "batch2")
  if a:size(1) ~= b:size(1) or a:size(3) ~= b:size(2) then
    fail("addbmm", ("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d]."):format(
      a:size(1), a:size(3), b:size(1), b:size(2)))
  end
end))

---------------------------------------------------------------------------
-- tensordot and einsum: permute + reshape + mm/bmm
---------------------------------------------------------------------------

def("tensordot", function(a, b, dims, ...)
  check_t("tensordot", 1, a)
  check_t("tensordot", 2, b)
  if is_opts(dims) then dims = ck("tensordot", dims, { "dims" }).dims end
  if dims == nil then dims = 2 end
  local na, nb = a:dim(), b:dim()
  local da, db = {}, {}
  if mtype(dims) == "integer" then
    if dims < 0 then fail("tensordot", ("tensordot expects dims >= 0, but got dims=%d"):format(dims)) end
    if dims > na or dims > nb then
      fail("tensordot", ("tensordot expects dims < ndim_a or ndim_b, but got dims=%d"):format(dims))
    end
    for i = 1, dims do da[i] = na - dims + i; db[i] = i end
  elseif type(dims) == "table" then
    local x, y = dims[1], dims[2]
    if mtype(x) == "integer" then x = { x } end
    if mtype(y) == "integer" then y = { y } end
    if type(x) ~= "table" or type(y) ~= "table" then fail("tensordot", "dims must be an integer or a pair of dim lists") end
    if #x ~= #y then fail("tensordot", "both dimension lists should have same length") end
    for i = 1, #x do da[i] = normdim("tensordot", x[i], na); db[i] = normdim("tensordot", y[i], nb) end
  else
    fail("tensordot", "dims must be an integer or a pair of dim lists")
  end
  local sa, sb = a.shape, b.shape
  local ca, cb = {}, {}
  local k = 1
  for i = 1, #da do
    if ca[da[i]] or cb[db[i]] then fail("tensordot", "dims can not repeat") end
    -- a zero-dim operand has no dim to contract (normdim accepts 1 for it)
    if sa[da[i]] == nil or sb[db[i]] == nil then
      fail("tensordot", ("cannot contract dim %d of a %d-dim tensor with dim %d of a %d-dim tensor"):format(
        da[i], #sa, db[i], #sb))
    end
    ca[da[i]], cb[db[i]] = true, true
    if sa[da[i]] ~= sb[db[i]] then
      fail("tensordot", ("contracted dimensions need to match, but first has size %d in dim %d and second has size %d in dim %d"):format(
        sa[da[i]], da[i], sb[db[i]], db[i]))
    end
    k = k * sa[da[i]]
  end
  local pa, pb, outshape = {}, {}, {}
  local fa, fb = 1, 1
  for i = 1, na do if not ca[i] then pa[#pa + 1] = i; outshape[#outshape + 1] = sa[i]; fa = fa * sa[i] end end
  for i = 1, #da do pa[#pa + 1] = da[i] end
  for i = 1, #db do pb[#pb + 1] = db[i] end
  for i = 1, nb do if not cb[i] then pb[#pb + 1] = i; outshape[#outshape + 1] = sb[i]; fb = fb * sb[i] end end
  local ab = common("tensordot", { a, b })
  local A = (na > 0 and ab[1]:permute(pa) or ab[1]):reshape({ fa, k })
  local B = (nb > 0 and ab[2]:permute(pb) or ab[2]):reshape({ k, fb })
  return T.mm(A, B):reshape(outshape)
end)

-- einsum -------------------------------------------------------------------
local function einsum_parse(eq, nops)
  eq = eq:gsub("%s", "")
  local lhs, rhs = eq:match("^(.-)%->(.*)$")
  if not lhs then lhs = eq end
  local terms = {}
  for term in (lhs .. ","):gmatch("(.-),") do terms[#terms + 1] = term end
  if #terms < nops then fail("einsum", "more operands were provided than specified in the equation") end
  if #terms > nops then fail("einsum", "fewer operands were provided than were specified in the equation") end
  -- offset: where the term starts in the equation (error indices are PyTorch's: 0-based in the whole string)
  local function labels(term, what, offset)
    local list, ell = {}, false
    local i = 1
    while i <= #term do
      local c = term:sub(i, i)
      if c == "." then
        if term:sub(i, i + 2) ~= "..." then fail("einsum", ("invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]"):format(offset + i - 1)) end
        if ell then fail("einsum", ("found more than one ellipsis (\"...\") in %s"):format(what)) end
        ell = true
        list[#list + 1] = "..."
        i = i + 3
      elseif c:match("%a") then
        list[#list + 1] = c
        i = i + 1
      else
        fail("einsum", ("invalid subscript given at index %d in the equation string, subscripts must be in [a-zA-Z]"):format(offset + i - 1))
      end
    end
    return list, ell
  end
  local ins, at = {}, 0
  for k, term in ipairs(terms) do
    ins[k] = { labels(term, "operand " .. (k - 1), at) }
    at = at + #term + 1
  end
  local out
  if rhs then out = { labels(rhs, "the output", #lhs + 2) } end
  return ins, out
end

-- the contraction of two aligned operands (same rank; each dim size 1 or
-- the shared size) over the aligned dims in `sum`, through one bmm
local function sumproduct_pair(l, r, sum)
  -- as PyTorch's: with nothing to contract the pair is a broadcast product
  -- (types promote); a contraction is one bmm, which takes one dtype and
  -- no bool or (on the CPU) half operands
  if next(sum) == nil then return l * r end
  if l.dtype ~= r.dtype then
    fail("einsum", ("expected scalar type %s but found %s"):format(torch_dtype_name(l.dtype), torch_dtype_name(r.dtype)))
  end
  if l.dtype == T.bool or l.dtype == T.float16 then
    fail("einsum", ('"bmm" not implemented for \'%s\''):format(torch_dtype_name(l.dtype)))
  end
  local R = l:dim()
  local ls, rs = l.shape, r.shape
  local lro, lo, ro, sd = {}, {}, {}, {}
  local bsz, lsz, rsz, ksz = 1, 1, 1, 1
  for j = 1, R do
    if sum[j] then
      -- a summed dim present on one side only is summed there first
      if ls[j] ~= rs[j] then
        if ls[j] == 1 then r = r:sum(j, true); rs = r.shape
        elseif rs[j] == 1 then l = l:sum(j, true); ls = l.shape end
      end
      sd[#sd + 1] = j
      ksz = ksz * ls[j]
    elseif ls[j] ~= 1 and rs[j] ~= 1 then
      lro[#lro + 1] = j; bsz = bsz * ls[j]
    elseif rs[j] ~= 1 then
      ro[#ro + 1] = j; rsz = rsz * rs[j]
    else
      lo[#lo + 1] = j; lsz = lsz * ls[j]
    end
  end
  local pl, pr, order, shape = {}, {}, {}, {}
  for _, j in ipairs(lro) do pl[#pl + 1] = j; pr[#pr + 1] = j; order[#order + 1] = j; shape[#shape + 1] = ls[j] end
  for _, j in ipairs(lo) do pl[#pl + 1] = j; order[#order + 1] = j; shape[#shape + 1] = ls[j] end
  for _, j in ipairs(sd) do pl[#pl + 1] = j; pr[#pr + 1] = j end
  for _, j in ipairs(ro) do pr[#pr + 1] = j; order[#order + 1] = j; shape[#shape + 1] = rs[j] end
  -- dims absent from the product (l's ro dims and r's lo dims are size 1 there)
  for _, j in ipairs(ro) do pl[#pl + 1] = j end
  for _, j in ipairs(lo) do pr[#pr + 1] = j end
  for _, j in ipairs(sd) do order[#order + 1] = j; shape[#shape + 1] = 1 end
  local L3 = l:permute(pl):reshape({ bsz, lsz, ksz })
  local R3 = r:permute(pr):reshape({ bsz, ksz, rsz })
  local out = T.bmm(L3, R3):reshape(shape)
  local inv, identity = {}, true
  for i, j in ipairs(order) do inv[j] = i; if i ~= j then identity = false end end
  if identity then return out end
  return out:permute(inv)
end

-- The plan of an equation for operands of given ranks (cached: a loop that
-- calls einsum with the same equation pays for the parsing once).
local function einsum_plan(eq, ranks)
  local n = #ranks
  local ins, outspec = einsum_parse(eq, n)
  local ell = 0
  local opl, diag = {}, {}
  for k = 1, n do
    local nd = ranks[k]
    local labs, has_ell = ins[k][1], ins[k][2]
    local nlab = #labs - (has_ell and 1 or 0)
    if has_ell then
      if nd < nlab then
        fail("einsum", ("the number of subscripts in the equation (%d) is more than the number of dimensions (%d) for operand %d"):format(nlab, nd, k - 1))
      end
    elseif nd ~= nlab then
      fail("einsum", ("the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d and no ellipsis was given"):format(nlab, nd, k - 1))
    end
    local e = nd - nlab
    if e > ell then ell = e end
    -- "..." expands to one entry per ellipsis dim: {"...", i} (i counted from the right)
    local dims = {}
    for _, l in ipairs(labs) do
      if l == "..." then for i = e, 1, -1 do dims[#dims + 1] = { "...", i } end
      else dims[#dims + 1] = l end
    end
    -- a label repeated within an operand: take that diagonal (it moves last)
    local steps = {}
    local again = true
    while again do
      again = false
      for p = 1, #dims do
        for q = p + 1, #dims do
          if type(dims[p]) == "string" and dims[p] == dims[q] then
            local l = dims[p]
            steps[#steps + 1] = { p, q, l }
            table.remove(dims, q); table.remove(dims, p)
            dims[#dims + 1] = l
            again = true
            break
          end
        end
        if again then break end
      end
    end
    diag[k] = steps
    opl[k] = dims
  end
  -- occurrences in the equation: the implicit output keeps labels seen once
  local count, seen_order = {}, {}
  for k = 1, n do
    for _, l in ipairs(ins[k][1]) do
      if l ~= "..." then
        if not count[l] then count[l] = 0; seen_order[#seen_order + 1] = l end
        count[l] = count[l] + 1
      end
    end
  end
  local out = {}
  if outspec then
    local seen = {}
    for _, l in ipairs(outspec[1]) do
      if l == "..." then
        for i = ell, 1, -1 do out[#out + 1] = { "...", i } end
      else
        if seen[l] then fail("einsum", ("output subscript %s appears more than once in the output"):format(l)) end
        if not count[l] then fail("einsum", ("output subscript %s does not appear in the equation for any input operand"):format(l)) end
        seen[l] = true
        out[#out + 1] = l
      end
    end
  else
    for i = ell, 1, -1 do out[#out + 1] = { "...", i } end
    local once = {}
    for _, l in ipairs(seen_order) do if count[l] == 1 then once[#once + 1] = l end end
    table.sort(once)
    for _, l in ipairs(once) do out[#out + 1] = l end
  end
  -- the aligned order: output dims first, then every other label / ellipsis dim
  local key = function(d) return type(d) == "table" and ("..." .. d[2]) or d end
  local pos, aligned = {}, {}
  for _, d in ipairs(out) do aligned[#aligned + 1] = d; pos[key(d)] = #aligned end
  local nout = #aligned
  for i = ell, 1, -1 do
    local kk = "..." .. i
    if not pos[kk] then aligned[#aligned + 1] = { "...", i }; pos[kk] = #aligned end
  end
  for _, l in ipairs(seen_order) do
    if not pos[l] then aligned[#aligned + 1] = l; pos[l] = #aligned end
  end
  local R = #aligned
  local last, users = {}, {}
  for k = 1, n do
    for _, d in ipairs(opl[k]) do
      local j = pos[key(d)]
      last[j] = k
      users[j] = (users[j] or 0) + 1
    end
  end
  -- per operand: permutation into aligned order, missing dims, dims summed at once
  local ops = {}
  for k = 1, n do
    local present, perm, missing, presum = {}, {}, {}, {}
    for i, d in ipairs(opl[k]) do present[pos[key(d)]] = i end
    local identity = true
    for j = 1, R do
      if present[j] then
        perm[#perm + 1] = present[j]
        if present[j] ~= #perm then identity = false end
      end
    end
    for j = 1, R do if not present[j] then missing[#missing + 1] = j end end
    for j = nout + 1, R do if present[j] and users[j] == 1 then presum[#presum + 1] = j end end
    ops[k] = { diag = diag[k], perm = (#perm > 0 and not identity) and perm or nil, missing = missing, presum = presum }
  end
  local pair_sum = {}
  for k = 2, n do
    local sum = {}
    for j = nout + 1, R do if (last[j] or 0) <= k then sum[j] = true end end
    pair_sum[k] = sum
  end
  local rest = {}
  for j = nout + 1, R do rest[#rest + 1] = j end
  return { n = n, R = R, nout = nout, aligned = aligned, ops = ops, pair_sum = pair_sum, rest = rest, ell = ell }
end

local plan_cache, plan_count = {}, 0
local function einsum(eq, ...)
  if type(eq) ~= "string" then fail("einsum", "bad argument #1 (equation string expected)") end
  local ops = { ... }
  if type(ops[1]) == "table" and not is_t(ops[1]) and select("#", ...) == 1 then ops = ops[1] end
  local n = #ops
  if n == 0 then fail("einsum", "must provide at least one operand") end
  local ranks = {}
  for i = 1, n do check_t("einsum", i + 1, ops[i]); ranks[i] = ops[i]:dim() end
  local ck = eq .. "|" .. table.concat(ranks, ",")
  local plan = plan_cache[ck]
  if not plan then
    plan = einsum_plan(eq, ranks)
    if plan_count >= 256 then plan_cache, plan_count = {}, 0 end
    plan_cache[ck] = plan
    plan_count = plan_count + 1
  end
  ops = { table.unpack(ops, 1, n) }   -- the caller's list stays as it was
  local R = plan.R
  local sizes = {}
  for k = 1, n do
    local t = ops[k]
    local op = plan.ops[k]
    for _, st in ipairs(op.diag) do
      local p, q = st[1], st[2]
      if t:size(p) ~= t:size(q) then
        fail("einsum", ("subscript %s is repeated for operand %d but the sizes don't match, %d != %d"):format(st[3], k - 1, t:size(p), t:size(q)))
      end
      t = T.diagonal(t, 0, p, q)
    end
    if op.perm then t = t:permute(op.perm) end
    for _, j in ipairs(op.missing) do t = t:unsqueeze(j) end
    local sh = t.shape
    for j = 1, R do
      local s = sh[j]
      if s ~= 1 then
        local have = sizes[j]
        if have and have ~= s then
          local d = plan.aligned[j]
          if type(d) == "table" then
            fail("einsum", ("dimension %d covered by ellipsis in operand %d has size %d which does not broadcast with previously seen ellipsis with size %d for the respective dimension")
              :format(plan.ell - d[2], k - 1, s, have))
          end
          fail("einsum", ("subscript %s has size %d for operand %d which does not broadcast with previously seen size %d"):format(d, s, k - 1, have))
        end
        sizes[j] = s
      end
    end
    local sum
    for _, j in ipairs(op.presum) do
      if sh[j] ~= 1 then sum = sum or {}; sum[#sum + 1] = j end
    end
    if sum then t = T.sum(t, sum, true) end
    ops[k] = t
  end
  local res = ops[1]
  for k = 2, n do res = sumproduct_pair(res, ops[k], plan.pair_sum[k]) end
  -- whatever remains beyond the output dims is summed away (or is size 1)
  local nout, rest = plan.nout, plan.rest
  if #rest > 0 then
    local sh = res.shape
    local all1 = true
    for _, j in ipairs(rest) do if sh[j] ~= 1 then all1 = false break end end
    if all1 then
      local keep = {}
      for j = 1, nout do keep[j] = sh[j] end
      res = res:reshape(keep)
    else
      res = T.sum(res, rest)
    end
  end
  if nout == 0 and res:dim() ~= 0 then res = res:reshape({}) end
  return res
end
T.einsum = named("einsum", einsum)

---------------------------------------------------------------------------
-- cdist
---------------------------------------------------------------------------
def("cdist", function(x1, x2, p, opts)
  check_t("cdist", 1, x1)
  check_t("cdist", 2, x2)
  if is_opts(p) then opts, p = p, nil end
  opts = opts_arg("cdist", opts, { "p", "compute_mode" })
  if p == nil and opts then p = opts.p end
  p = p or 2
  check_num("cdist", "p", p)
  if x1:dim() < 2 then fail("cdist", ("cdist only supports at least 2D tensors, X1 got: %dD"):format(x1:dim())) end
  if x2:dim() < 2 then fail("cdist", ("cdist only supports at least 2D tensors, X2 got: %dD"):format(x2:dim())) end
  if x1:size(-1) ~= x2:size(-1) then
    fail("cdist", ("X1 and X2 must have the same number of columns. X1: %d X2: %d"):format(x1:size(-1), x2:size(-1)))
  end
  if not is_float(x1) or not is_float(x2) then
    fail("cdist", ("cdist only supports floating-point dtypes, X1 got: %s"):format(tostring(is_float(x1) and x2.dtype or x1.dtype)))
  end
  if p < 0 then fail("cdist", "cdist only supports non-negative p values") end
  local ab = common("cdist", { x1, x2 })
  local mode = opts and opts.compute_mode or "use_mm_for_euclid_dist_if_necessary"
  if mode ~= "use_mm_for_euclid_dist_if_necessary" and mode ~= "use_mm_for_euclid_dist"
     and mode ~= "donot_use_mm_for_euclid_dist" then
    fail("cdist", ("%s is not a valid value for compute_mode"):format(tostring(mode)))
  end
  local r1, r2 = x1:size(-2), x2:size(-2)
  if p == 2 and (mode == "use_mm_for_euclid_dist" or
                 (mode == "use_mm_for_euclid_dist_if_necessary" and (r1 > 25 or r2 > 25))) then
    -- PyTorch's _euclidean_dist: |a|^2 + |b|^2 - 2 a.b through one matmul,
    -- without the (.., P, R, M) difference tensor
    local a, b = ab[1], ab[2]
    local an, bn = T.sum(a * a, -1, true), T.sum(b * b, -1, true)
    local a_ = T.cat({ a * -2, an, T.ones_like(an) }, -1)
    local b_ = T.cat({ b, T.ones_like(bn), bn }, -1)
    return T.sqrt(T.clamp_min(T.matmul(a_, b_:transpose(-2, -1)), 0))
  end
  local function dist(a)
    local d = a:unsqueeze(-2) - ab[2]:unsqueeze(-3)
    if p == 0 then return T.sum(T.ne(d, 0):to(d.dtype), -1) end
    if p == math.huge then return T.amax(T.abs(d), -1) end
    if p == 1 then return T.sum(T.abs(d), -1) end
    -- the p-norm reduction: its gradient is 0 where a distance is 0 (the
    -- points coincide), as PyTorch's cdist backward; sqrt(sum(d * d))
    -- would give 0 * inf = NaN there
    return T.norm(d, p, -1)
  end
  -- the (.., rows, R, M) differences are built for blocks of rows of x1 so
  -- that the temporary stays bounded (about 2^22 elements per batch entry)
  local m = x1:size(-1)
  local per_row = math.max(1, r2 * m)
  local block = math.max(1, math.floor(4194304 / per_row))
  if r1 <= block then return dist(ab[1]) end
  local parts = {}
  for s0 = 1, r1, block do parts[#parts + 1] = dist(ab[1]:narrow(-2, s0, math.min(block, r1 - s0 + 1))) end
  return T.cat(parts, -2)
end)

---------------------------------------------------------------------------
-- nn.functional.pad
---------------------------------------------------------------------------
local function pad(t, pads, mode, value, ...)
  local fname = "nn.functional.pad"
  check_t(fname, 1, t)
  if is_opts(mode) then mode, value = ck(fname, mode, { "mode", "value" }).mode, mode.value end
  if is_opts(value) then value = ck(fname, value, { "value" }).value end
  mode = mode or "constant"
  if type(pads) ~= "table" then fail(fname, "pad must be a table of integers") end
  local np = #pads
  if np % 2 ~= 0 then fail(fname, "Padding length must be divisible by 2") end
  local nd = t:dim()
  if np / 2 > nd then fail(fname, "Padding length too large") end
  for i = 1, np do check_int(fname, "padding", pads[i]) end
  if mode == "constant" then
    value = value or 0
    local x = t
    for i = 1, np / 2 do
      local d = nd - i + 1
      local l, r = pads[2 * i - 1], pads[2 * i]
      local n = x:size(d)
      if n + l + r < 0 then
        fail(fname, ("The input size %d, plus negative padding %d and %d resulted in a negative output size, which is invalid. Check dimension %d of your input."):format(n, l, r, d))
      end
      if l < 0 then x = x:narrow(d, 1 - l, n + l); n = n + l; l = 0 end
      if r < 0 then x = x:narrow(d, 1, n + r); n = n + r; r = 0 end
      if l > 0 or r > 0 then
        local parts = {}
        local function filler(k)
          local s = x.shape
          s[d] = k
          return T.full(s, value, { dtype = x.dtype })
        end
        if l > 0 then parts[#parts + 1] = filler(l) end
        parts[#parts + 1] = x
        if r > 0 then parts[#parts + 1] = filler(r) end
        x = T.cat(parts, d)
      end
    end
    if rawequal(x, t) then x = t:clone() end
    return x
  end
  if mode ~= "reflect" and mode ~= "replicate" and mode ~= "circular" then
    fail(fname, ("invalid padding mode: %s (expected constant, reflect, replicate or circular)"):format(tostring(mode)))
  end
  if value ~= nil and value ~= 0 then
    fail(fname, ("Padding mode \"%s\" doesn't take in value argument"):format(mode))
  end
  local k = math.floor(np / 2)
  if k > 3 or nd < k + 1 or nd > k + 2 or (mode == "circular" and nd ~= k + 2) then
    fail(fname, ("invalid padding: %dD padding with mode %s expects a %dD or %dD input (got %dD)"):format(k, mode, k + 1, k + 2, nd))
  end
  local x = t
  for i = 1, k do
    local d = nd - i + 1
    local l, r = pads[2 * i - 1], pads[2 * i]
    local n = x:size(d)
    if mode == "reflect" and (l >= n or r >= n) then
      fail(fname, ("invalid padding: Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%d, %d) at dimension %d of input %s"):format(l, r, d, shape_str(t.shape)))
    end
    if mode == "circular" and (l > n or r > n) then
      fail(fname, "invalid padding: Padding value causes wrapping around more than once.")
    end
    if mode == "replicate" and n == 0 and (l > 0 or r > 0) then
      fail(fname, "invalid padding: cannot replicate an empty dimension")
    end
    if n + l + r < 0 then fail(fname, "invalid padding: negative output size") end
    if mode == "circular" and (l < 0 or r < 0) then
      -- PyTorch crops first and wraps around what is left: pad (2, -1) of
      -- {0, 1, 2} is {0, 1, 0, 1}, not a window of the uncropped wrap
      local a, b = math.max(-l, 0), math.max(-r, 0)
      x = x:narrow(d, a + 1, n - a - b)
      n, l, r = n - a - b, math.max(l, 0), math.max(r, 0)
      if l > n or r > n then fail(fname, "invalid padding: Padding value causes wrapping around more than once.") end
    end
    local idx = T.arange(-l, n + r)
    if mode == "reflect" then
      idx = (n - 1) - T.abs((n - 1) - T.abs(idx))
    elseif mode == "replicate" then
      idx = T.clamp(idx, 0, n - 1)
    else
      idx = T.remainder(idx, n)
    end
    x = x:index_select(d, idx + 1)
  end
  return x
end
pad = named("nn.functional.pad", pad)
S.pad = pad
local ok_f, F = pcall(require, "ltensor.functional")
if ok_f and type(F) == "table" then F.pad = pad end

---------------------------------------------------------------------------
-- Search and counting
---------------------------------------------------------------------------
local function search_keys(fname, seq, vals)
  -- common compare type: float64 if either is floating, else int64
  if is_complex(seq) or is_complex(vals) then fail(fname, "complex tensors are not supported") end
  if is_float(seq) or is_float(vals) then return seq:to(T.float64), vals:to(T.float64) end
  return seq:to(T.int64), vals:to(T.int64)
end

def("searchsorted", function(seq, vals, ...)
  check_t("searchsorted", 1, seq)
  local opts = opts_at("searchsorted", 3, ...)
  ck("searchsorted", opts, { "right", "side", "sorter", "out_int32" })
  local right = opts.right and true or false
  if opts.side ~= nil then
    if opts.side ~= "left" and opts.side ~= "right" then
      fail("searchsorted", ("side can only be 'left' or 'right' but got %s"):format(tostring(opts.side)))
    end
    if opts.right and opts.side == "left" then
      fail("searchsorted", "side and right can't be set to opposites, got side of left while right was True")
    end
    right = opts.side == "right"
  end
  local scalar = not is_t(vals)
  if scalar then
    if type(vals) ~= "number" then fail("searchsorted", "bad argument #2 (tensor or number expected)") end
    if seq:dim() ~= 1 then
      fail("searchsorted", ("input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(%d) and input value's dim(0) numel(1)"):format(seq:dim()))
    end
    vals = T.tensor(vals, { dtype = math.type(vals) == "float" and T.float64 or seq.dtype })
  end
  if seq:dim() == 0 then fail("searchsorted", "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor [] and input value tensor " .. shape_str(vals.shape)) end
  local ss, vs = seq.shape, vals.shape
  if seq:dim() > 1 then
    local okm = #ss == #vs
    if okm then for i = 1, #ss - 1 do if ss[i] ~= vs[i] then okm = false end end end
    if not okm then
      fail("searchsorted", ("boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor %s and input value tensor %s"):format(shape_str(ss), shape_str(vs)))
    end
  end
  local sorter = opts.sorter
  if sorter ~= nil then
    check_t("searchsorted", 3, sorter)
    if sorter.dtype ~= T.int64 then fail("searchsorted", "sorter must be a tensor of long dtype") end
    local sh = sorter.shape
    local same = #sh == #ss
    if same then for i = 1, #ss do if sh[i] ~= ss[i] then same = false end end end
    if not same then fail("searchsorted", "boundary and sorter must have the same size") end
    local n = ss[#ss]
    if sorter:numel() > 0 and (T.any(T.lt(sorter, 1)):item() or T.any(T.gt(sorter, n)):item()) then
      fail("searchsorted", "sorter index out of range")
    end
  end
  local n = ss[#ss]
  local srows = seq:dim() == 1 and 1 or prod(ss, 1, #ss - 1)
  local vrows = seq:dim() == 1 and 1 or srows
  local m = math.floor(vals:numel() / math.max(vrows, 1))
  if vrows == 0 then m = 0 end
  local sk, vk = search_keys("searchsorted", seq, vals)
  local sorted_rows = sk:contiguous():reshape({ srows, n })
  local vrow = vk:contiguous():reshape({ vrows, m })
  local so = sorter and (sorter - 1):contiguous():reshape({ srows, n }) or nil
  local r = T._searchsorted_rows(sorted_rows, vrow, right, so):reshape(vs)
  if opts.out_int32 then r = r:to(T.int32) end
  return r
end)

def("bucketize", function(x, boundaries, opts, ...)
  check_t("bucketize", 2, boundaries)
  if not is_opts(opts) then opts = is_opts((...)) and (...) or {} end
  ck("bucketize", opts, { "right", "out_int32" })
  if boundaries:dim() ~= 1 then
    fail("bucketize", ("boundaries tensor must be 1 dimension, but got dim(%d)"):format(boundaries:dim()))
  end
  return T.searchsorted(boundaries, x, { right = opts.right, out_int32 = opts.out_int32 })
end)

-- unique ------------------------------------------------------------------
-- over sorted values: where each run of equal values starts (bool), and the
-- 1-based run number of every position (NaN != NaN: each NaN is its own run)
local function runs_of(sorted_vals)
  local n = sorted_vals:numel()
  local starts
  if n == 0 then starts = T.empty(0, { dtype = T.bool })
  else
    local neq
    if n > 1 then
      neq = T.ne(sorted_vals:narrow(1, 2, n - 1), sorted_vals:narrow(1, 1, n - 1))
      starts = T.cat({ T.ones(1, { dtype = T.bool }), neq }, 1)
    else
      starts = T.ones(1, { dtype = T.bool })
    end
  end
  local group = T.cumsum(starts:to(T.int64), 1)   -- 1-based group of each sorted position
  return starts, group
end

local function unique_impl(fname, t, opts, consecutive)
  opts = opts_arg(fname, opts) or {}
  local ret_inv, ret_cnt = opts.return_inverse, opts.return_counts
  if opts.dim ~= nil then
    return S.unique_dim(fname, t, normdim(fname, opts.dim, t:dim()), ret_inv, ret_cnt, consecutive)
  end
  if is_complex(t) then fail(fname, "unique is not implemented for complex tensors") end
  local flat = t:reshape({ t:numel() })
  local sv, order
  if consecutive then sv = flat
  else sv, order = T.sort(flat, 1, false, { stable = true }) end
  local starts, group = runs_of(sv)
  local vals = sv:masked_select(starts)
  local res = { vals }
  if ret_inv then
    local inv
    if consecutive then inv = group
    else
      inv = T.empty(flat:numel(), { dtype = T.int64 })
      if flat:numel() > 0 then inv = inv:scatter(1, order, group) end
    end
    res[#res + 1] = inv:reshape(t.shape)
  end
  if ret_cnt then
    local k = vals:numel()
    local cnt = T.zeros(k, { dtype = T.int64 })
    if flat:numel() > 0 then cnt = cnt:scatter_add(1, group, T.ones(flat:numel(), { dtype = T.int64 })) end
    res[#res + 1] = cnt
  end
  return unpack(res)
end

-- unique along a dim: slices compared lexicographically (a stable argsort
-- per column, from the last column to the first)
function S.unique_dim(fname, t, d, ret_inv, ret_cnt, consecutive)
  if is_complex(t) then fail(fname, "unique is not implemented for complex tensors") end
  local n = t:size(d)
  local moved = t:movedim(d, 1)
  local rest = moved.shape
  table.remove(rest, 1)
  local width = prod(rest)
  if n == 0 or width == 0 then
    -- PyTorch's checks for zero-size dims (unique_dim_cpu_template)
    local zeros = 0
    for _, s in ipairs(t.shape) do if s == 0 then zeros = zeros + 1 end end
    if n > 0 then
      fail(fname, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    end
    if zeros > 1 then fail(fname, "Number of zero sized dimensions is more than one, so unique cannot be applied ") end
    local res = { t:clone() }
    if ret_inv then res[#res + 1] = T.empty(n, { dtype = T.int64 }) end
    if ret_cnt then res[#res + 1] = T.empty(0, { dtype = T.int64 }) end
    return unpack(res)
  end
  local rows = moved:reshape({ n, width })
  local keys = keys_of(rows)
  local perm = T.arange(1, n + 1)
  if not consecutive then
    for c = width, 1, -1 do
      local col = keys:select(2, c):index_select(1, perm)
      local _, p = T.sort(col, 1, false, { stable = true })
      perm = perm:index_select(1, p)
    end
  end
  local sk = keys:index_select(1, perm)
  local starts
  if n > 1 then
    local neq = T.any(T.ne(sk:narrow(1, 2, n - 1), sk:narrow(1, 1, n - 1)), 2)
    starts = T.cat({ T.ones(1, { dtype = T.bool }), neq }, 1)
  else
    starts = T.ones(1, { dtype = T.bool })
  end
  local group = T.cumsum(starts:to(T.int64), 1)
  local firsts = perm:masked_select(starts)
  local vals = moved:index_select(1, firsts):movedim(1, d)
  local res = { vals }
  if ret_inv then
    res[#res + 1] = T.empty(n, { dtype = T.int64 }):scatter(1, perm, group)
  end
  if ret_cnt then
    res[#res + 1] = T.zeros(firsts:numel(), { dtype = T.int64 }):scatter_add(1, group, T.ones(n, { dtype = T.int64 }))
  end
  return unpack(res)
end

local function unique_opts(fname, a, b, ...)
  -- unique(t [, sorted [, return_inverse [, return_counts [, dim]]]] [, opts])
  local known = { "sorted", "return_inverse", "return_counts", "dim" }
  if fname ~= "unique" then known = { "return_inverse", "return_counts", "dim" } end
  if is_opts(a) then return ck(fname, a, known) end
  local opts = {}
  local args = pack(a, b, ...)
  local last = args.n
  for i = 1, args.n do if is_opts(args[i]) then
    ck(fname, args[i], known)
    for k, v in pairs(args[i]) do opts[k] = v end
    last = i - 1
    break
  end end
  local names = fname == "unique" and { "sorted", "return_inverse", "return_counts", "dim" } or { "return_inverse", "return_counts", "dim" }
  if last > #names then fail(fname, ("too many arguments (%d positional flags, at most %d)"):format(last, #names)) end
  for i = 1, last do if opts[names[i]] == nil then opts[names[i]] = args[i] end end
  if opts.dim ~= nil then check_int(fname, "dim", opts.dim) end
  return opts
end
def("unique", function(t, ...)
  check_t("unique", 1, t)
  return unique_impl("unique", t, unique_opts("unique", ...), false)
end)
def("unique_consecutive", function(t, ...)
  check_t("unique_consecutive", 1, t)
  return unique_impl("unique_consecutive", t, unique_opts("unique_consecutive", ...), true)
end)

def("bincount", function(t, weights, minlength, ...)
  check_t("bincount", 1, t)
  local opts
  if is_opts(weights) then opts, weights = weights, nil
  elseif is_opts(minlength) then opts, minlength = minlength, nil
  else opts = opts_arg("bincount", (...)) end
  ck("bincount", opts, { "weights", "minlength" })
  if opts then
    if weights == nil then weights = opts.weights end
    if minlength == nil then minlength = opts.minlength end
  end
  minlength = minlength or 0
  check_int("bincount", "minlength", minlength)
  if minlength < 0 then fail("bincount", "minlength should be >= 0") end
  if t:dim() ~= 1 or not is_integral(t) or t.dtype == T.bool then
    fail("bincount", "bincount only supports 1-d non-negative integral inputs.")
  end
  if weights ~= nil then
    check_t("bincount", 2, weights)
    if weights:dim() ~= 1 or weights:numel() ~= t:numel() then
      fail("bincount", "weights should be 1-d and have the same length as input")
    end
  end
  if t:numel() == 0 then return T.zeros(minlength, { dtype = T.int64 }) end
  local w = weights and weights:to(T.float64):contiguous() or nil
  local r = T._bincount(t:to(T.int64):contiguous(), w, minlength)
  if weights and weights.dtype == T.float32 then r = r:to(T.float32) end
  return r
end)

def("histc", function(t, bins, lo, hi, ...)
  check_t("histc", 1, t)
  local opts
  if is_opts(bins) then opts, bins = bins, nil
  elseif is_opts(lo) then opts, lo = lo, nil
  elseif is_opts(hi) then opts, hi = hi, nil
  else opts = opts_arg("histc", (...)) end
  ck("histc", opts, { "bins", "min", "max" })
  if opts then
    bins = bins or opts.bins
    if lo == nil then lo = opts.min end
    if hi == nil then hi = opts.max end
  end
  bins, lo, hi = bins or 100, lo or 0, hi or 0
  check_int("histc", "bins", bins)
  check_num("histc", "min", lo)
  check_num("histc", "max", hi)
  if not is_float(t) then
    fail("histc", ('"histogram_cpu" not implemented for \'%s\''):format(tostring(t.dtype)))
  end
  if bins <= 0 then fail("histc", "bins must be > 0") end
  local flat = t:reshape({ t:numel() }):to(T.float64):contiguous()
  if lo == hi and flat:numel() > 0 then
    lo, hi = T.min(flat):item(), T.max(flat):item()
  end
  if lo == hi then lo, hi = lo - 1, hi + 1 end
  if lo > hi then fail("histc", "max must be larger than min") end
  if lo ~= lo or hi ~= hi or lo == math.huge or hi == math.huge or lo == -math.huge or hi == -math.huge then
    fail("histc", ("range of [%s, %s] is not finite"):format(num_str(lo), num_str(hi)))
  end
  return T._histc(flat, bins, lo, hi, t.dtype == T.float32):to(t.dtype)
end)

def("histogram", function(t, bins, opts, ...)
  check_t("histogram", 1, t)
  if is_opts(bins) then opts, bins = bins, nil end
  if not is_opts(opts) then opts = is_opts((...)) and (...) or {} end
  ck("histogram", opts, { "bins", "range", "weight", "density" })
  bins = bins or opts.bins or 100
  if not is_float(t) then
    fail("histogram", ('"histogram_cpu" not implemented for \'%s\''):format(tostring(t.dtype)))
  end
  local flat = t:reshape({ t:numel() }):to(T.float64):contiguous()
  local weight = opts.weight
  if weight ~= nil then
    check_t("histogram", 3, weight)
    local ws, ts = weight.shape, t.shape
    local same = #ws == #ts
    if same then for i = 1, #ts do if ws[i] ~= ts[i] then same = false end end end
    if not same then fail("histogram", "if weight tensor is provided, it should have the same shape as the input tensor") end
    weight = weight:reshape({ weight:numel() }):to(T.float64):contiguous()
  end
  local edges, linear
  if is_t(bins) then
    if bins:dim() ~= 1 then fail("histogram", "bins tensor should have one dimension") end
    if bins:numel() < 1 then fail("histogram", "bins tensor should have at least 1 element") end
    edges = bins:to(T.float64):contiguous()
    linear = false
  else
    check_int("histogram", "bins", bins)
    if bins <= 0 then fail("histogram", "bins must be > 0") end
    local lo, hi
    if opts.range then
      if type(opts.range) ~= "table" then fail("histogram", "range must be a table {min, max}") end
      lo, hi = check_num("histogram", "range min", opts.range[1]), check_num("histogram", "range max", opts.range[2])
      if lo > hi then fail("histogram", "min should not exceed max") end
    elseif flat:numel() > 0 then
      lo, hi = T.min(flat):item(), T.max(flat):item()
    else
      lo, hi = 0, 0
    end
    if lo ~= lo or hi ~= hi or lo == -math.huge or hi == math.huge then
      fail("histogram", ("range of [%s, %s] is not finite"):format(num_str(lo), num_str(hi)))
    end
    if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
    edges = T.linspace(lo, hi, bins + 1, { dtype = t.dtype }):to(T.float64):contiguous()
    linear = true
  end
  local hist
  if edges:numel() < 2 then hist = T.zeros(0, { dtype = T.float64 })
  else hist = T._histogram_edges(flat, edges, weight, linear) end
  if opts.density then
    local widths = edges:narrow(1, 2, edges:numel() - 1) - edges:narrow(1, 1, edges:numel() - 1)
    hist = hist / (T.sum(hist) * widths)
  end
  return hist:to(t.dtype), edges:to(t.dtype)
end)

local function dims_arg(fname, t, dim)
  if dim == nil then return nil end
  local list = type(dim) == "table" and dim or { dim }
  local out, seen = {}, {}
  for i = 1, #list do
    local d = normdim(fname, list[i], t:dim())
    if seen[d] then fail(fname, ("dim %d appears multiple times in the list of dims"):format(d)) end
    seen[d] = true
    out[#out + 1] = d
  end
  return out
end

def("count_nonzero", function(t, dim)
  check_t("count_nonzero", 1, t)
  if is_opts(dim) then dim = ck("count_nonzero", dim, { "dim" }).dim end
  local dims = dims_arg("count_nonzero", t, dim)
  local nz = T.ne(t, 0):to(T.int64)
  if dims == nil then return T.sum(nz) end
  if #dims == 0 then return T.sum(nz) end
  if t:dim() == 0 then return nz:reshape({}) end
  return T.sum(nz, dims)
end)

-- (t, [dim [, keepdim]] [, opts]) with dim/keepdim also in opts
local function dim_keep(fname, dim, keepdim, opts, def_dim)
  if is_opts(dim) then opts, dim = dim, nil
  elseif is_opts(keepdim) then opts, keepdim = keepdim, nil end
  opts = opts_arg(fname, opts, { "dim", "keepdim" })
  if opts then
    if dim == nil then dim = opts.dim end
    if keepdim == nil then keepdim = opts.keepdim end
  end
  if dim == nil then dim = def_dim end
  if keepdim ~= nil and type(keepdim) ~= "boolean" then
    fail(fname, ("keepdim must be a boolean (got %s)"):format(type(keepdim)))
  end
  return dim, keepdim and true or false
end

-- select the k-th (1-based) element of each slice of sorted order along d;
-- values through gather so autograd flows to the chosen elements
-- the k-th smallest (1-based k: one integer, or an int64 tensor with one k
-- per slice, shaped like t with dim d of size 1) of each slice along d, by
-- quickselect in C; values through gather so autograd reaches the chosen
-- elements
local function select_kth(t, d, kth, keepdim)
  local keys, back, rows = rows_along(t, d)
  if is_t(kth) then kth = kth:movedim(d, -1):contiguous():reshape({ rows }) end
  local idx = back(T._kth_rows(keys, kth):reshape({ rows, 1 }), 1)
  local vals = t:gather(d, idx)
  if not keepdim then vals, idx = vals:squeeze(d), idx:squeeze(d) end
  return vals, idx
end

def("kthvalue", function(t, k, dim, keepdim, opts)
  check_t("kthvalue", 1, t)
  check_int("kthvalue", "k", k)
  dim, keepdim = dim_keep("kthvalue", dim, keepdim, opts, -1)
  local d = normdim("kthvalue", dim, t:dim())
  if is_complex(t) then fail("kthvalue", "kthvalue is not implemented for complex tensors") end
  if t:dim() == 0 then
    if k ~= 1 then fail("kthvalue", ("kthvalue(): selected number k out of range for dimension %d"):format(d)) end
    return t:clone(), T.tensor(1)
  end
  local n = t:size(d)
  if k < 1 or k > n then fail("kthvalue", ("kthvalue(): selected number k out of range for dimension %d"):format(d)) end
  return select_kth(t, d, k, keepdim)
end)

-- median/nanmedian along a dim: the lower median (index (n - 1) // 2 of the
-- sorted slice); median returns NaN (its first occurrence) when a slice has one
-- The 1-based position PyTorch's nanmedian reports for a slice of n NaNs:
-- its CPU kernel runs std::nth_element(k = 0) over the indices with a
-- comparator under which NaNs are all equivalent, and libstdc++'s
-- introselect then permutes them deterministically: each round swaps the
-- first element with the middle one, reverses the pairs of the rest around
-- the cut, and keeps the lower part while it is longer than 3.  The rounds
-- are replayed backwards on the one position that ends first (checked
-- against torch 1.13 for n = 1..3000).
local function allnan_index(n)
  local steps, last = {}, n
  while last > 3 do
    local cut = 1 + math.floor((last - 1) / 2)
    steps[#steps + 1] = { last, math.floor(last / 2), cut }
    last = cut
  end
  local p = 0
  for i = #steps, 1, -1 do
    local l, mid, cut = steps[i][1], steps[i][2], steps[i][3]
    if (p >= 1 and p <= cut - 1) or (p >= l - cut + 1 and p <= l - 1) then p = l - p end
    if p == 0 then p = mid elseif p == mid then p = 0 end
  end
  return p + 1
end

local function median_impl(fname, t, dim, keepdim, opts, ignore_nan)
  check_t(fname, 1, t)
  if is_complex(t) then fail(fname, ("%s is not implemented for complex tensors"):format(fname)) end
  local have_dim = dim ~= nil and not is_opts(dim)
  if is_opts(dim) and dim.dim ~= nil then have_dim = true end
  if not have_dim then
    local flat = t:reshape({ t:numel() })
    if flat:numel() == 0 then
      if ignore_nan or not is_float(t) then return T.full({}, 0 / 0, { dtype = is_float(t) and t.dtype or T.float32 }):to(t.dtype) end
      return T.full({}, 0 / 0, { dtype = t.dtype })
    end
    local v = median_impl(fname, flat, 1, false, nil, ignore_nan)
    return v
  end
  dim, keepdim = dim_keep(fname, dim, keepdim, opts)
  local d = normdim(fname, dim, t:dim())
  if t:dim() == 0 then return t:clone(), T.tensor(1) end
  local n = t:size(d)
  if n == 0 then fail(fname, ("median() cannot compute median for a dimension of size 0 (dim %d)"):format(d)) end
  local kth
  if is_float(t) then
    local nn = T.sum(T.logical_not(T.isnan(t)):to(T.int64), d, true)    -- non-NaN count per slice
    if ignore_nan then
      kth = T.clamp(T.floor_divide(nn - 1, 2), 0, n - 1) + 1
    else
      -- a NaN anywhere: its position in sorted order is nn + 1 (NaN sorts last)
      kth = T.where(T.lt(nn, n), nn + 1, T.full({}, math.floor((n - 1) / 2) + 1, { dtype = T.int64 }))
    end
  else
    kth = math.floor((n - 1) / 2) + 1
  end
  local vals, idx = select_kth(t, d, kth, keepdim)
  if ignore_nan and is_float(t) then
    -- an all-NaN slice: PyTorch's index is where std::nth_element (k = 0,
    -- every element equivalent) leaves the first position
    local allnan = T.eq(T.sum(T.logical_not(T.isnan(t)):to(T.int64), d, true), 0)
    if not keepdim then allnan = allnan:squeeze(d) end
    if T.any(allnan):item() then
      idx = T.where(allnan, T.full({}, allnan_index(n), { dtype = T.int64 }), idx)
    end
  end
  return vals, idx
end
def("median", function(t, dim, keepdim, opts) return median_impl("median", t, dim, keepdim, opts, false) end)
def("nanmedian", function(t, dim, keepdim, opts) return median_impl("nanmedian", t, dim, keepdim, opts, true) end)

def("mode", function(t, dim, keepdim, opts)
  check_t("mode", 1, t)
  dim, keepdim = dim_keep("mode", dim, keepdim, opts, -1)
  if is_complex(t) then fail("mode", "mode is not implemented for complex tensors") end
  local d = normdim("mode", dim, t:dim())
  if t:dim() == 0 then return t:clone(), T.tensor(1) end
  if t:size(d) == 0 then fail("mode", ("mode(): Expected reduction dim %d to have non-zero size."):format(d)) end
  local keys, back = rows_along(t, d)
  local idx = back(T._mode_rows(keys):reshape({ keys:size(1), 1 }), 1)
  local vals = t:gather(d, idx)
  if not keepdim then vals, idx = vals:squeeze(d), idx:squeeze(d) end
  return vals, idx
end)

-- quantile ------------------------------------------------------------------
local function quantile_impl(fname, t, q, dim, keepdim, opts, ignore_nan)
  check_t(fname, 1, t)
  if is_opts(dim) then opts, dim = dim, nil end
  if is_opts(keepdim) then opts, keepdim = keepdim, nil end
  opts = opts_arg(fname, opts, { "dim", "keepdim", "interpolation" }) or {}
  if dim == nil then dim = opts.dim end
  if keepdim == nil then keepdim = opts.keepdim end
  keepdim = keepdim and true or false
  local interp = opts.interpolation or "linear"
  local modes = { linear = true, lower = true, higher = true, midpoint = true, nearest = true }
  if not modes[interp] then
    fail(fname, ("interpolation must be one of linear, lower, higher, midpoint or nearest. Got %s"):format(tostring(interp)))
  end
  if t.dtype ~= T.float32 and t.dtype ~= T.float64 then
    fail(fname, "quantile() input tensor must be either float or double dtype")
  end
  local qt, scalar_q
  if is_t(q) then
    if q:dim() > 1 then fail(fname, ("quantile() q must be a scalar or 1D tensor")) end
    if q.dtype ~= t.dtype then fail(fname, "quantile() q tensor must be same dtype as the input tensor") end
    qt = q:reshape({ q:numel() })
    scalar_q = q:dim() == 0
  else
    if type(q) ~= "number" then fail(fname, "q must be a number or a tensor") end
    if q < 0 or q > 1 then fail(fname, "quantile() q must be in the range [0, 1] but got " .. tostring(q)) end
    qt = T.tensor({ q }, { dtype = t.dtype })
    scalar_q = true
  end
  if qt:numel() > 0 and (T.any(T.lt(qt, 0)):item() or T.any(T.gt(qt, 1)):item()) then
    fail(fname, "quantile() q values must be in the range [0, 1]")
  end
  local x, d
  local nd = t:dim()
  if dim == nil then
    x = t:reshape({ t:numel() }); d = 1
  else
    d = normdim(fname, dim, nd)
    x = nd == 0 and t:reshape({ 1 }) or t
  end
  if t:numel() == 0 then fail(fname, "quantile() input tensor must be non-empty") end
  local n = x:size(d)
  local sorted = T.sort(x, d)                             -- NaN last
  sorted = sorted:movedim(d, -1)                           -- (..., n)
  local lead = sorted.shape
  table.remove(lead)
  local nq = qt:numel()
  local valid = T.sum(T.logical_not(T.isnan(sorted)):to(T.int64), -1, true)   -- (..., 1)
  local cnt = ignore_nan and valid or T.full(valid.shape, n, { dtype = T.int64 })
  -- the ranks in the input's dtype, as PyTorch: q * (n - 1) rounded to float32
  -- decides which side of a half-way position "nearest" takes (round: half to even)
  local qd = qt:to(t.dtype)
  local qshape = {}
  for _ = 1, #lead do qshape[#qshape + 1] = 1 end
  qshape[#qshape + 1] = nq
  local rank = qd:reshape(qshape) * (cnt - 1):to(t.dtype)                 -- (..., nq)
  if interp == "lower" then rank = T.floor(rank)
  elseif interp == "higher" then rank = T.ceil(rank)
  elseif interp == "nearest" then rank = T.round(rank) end
  local lo = T.clamp(T.floor(rank), 0, n - 1):to(T.int64)
  local hi = T.clamp(T.ceil(rank), 0, n - 1):to(T.int64)
  local bshape = { table.unpack(lead) }
  bshape[#bshape + 1] = nq
  lo, hi = lo:expand(bshape), hi:expand(bshape)
  local vlo = sorted:gather(-1, lo + 1)
  local vhi = sorted:gather(-1, hi + 1)
  local res
  if interp == "midpoint" then
    res = vlo + (vhi - vlo) * 0.5
  elseif interp == "linear" then
    local w = (rank - T.floor(rank)):to(t.dtype)
    res = T.lerp(vlo, vhi, w:expand(bshape))
  else
    res = vlo
  end
  -- a slice with a NaN gives NaN (quantile), an all-NaN slice too (nanquantile)
  local nanrow = ignore_nan and T.eq(valid, 0) or T.lt(valid, n)
  res = T.where(nanrow:expand(bshape), T.full({}, 0 / 0, { dtype = res.dtype }), res)
  -- (..., nq) -> (nq, ...) with keepdim / scalar q handling
  res = res:movedim(-1, 1)
  if keepdim then
    if dim == nil then
      local s = { nq }
      for _ = 1, nd do s[#s + 1] = 1 end
      res = res:reshape(s)
    elseif nd > 0 then
      res = res:unsqueeze(d + 1)
    end
  end
  if scalar_q then res = res:squeeze(1) end
  return res
end
def("quantile", function(t, q, dim, keepdim, opts) return quantile_impl("quantile", t, q, dim, keepdim, opts, false) end)
def("nanquantile", function(t, q, dim, keepdim, opts) return quantile_impl("nanquantile", t, q, dim, keepdim, opts, true) end)

def("nansum", function(t, ...)
  check_t("nansum", 1, t)
  if is_complex(t) then fail("nansum", "nansum does not support complex inputs") end
  local x = t
  if is_float(t) then x = T.where(T.isnan(t), T.zeros({}, { dtype = t.dtype }), t) end
  return T.sum(x, ...)
end)
def("nanmean", function(t, ...)
  check_t("nanmean", 1, t)
  if not is_float(t) then
    fail("nanmean", ("nanmean(): expected input to have floating point dtype but got %s"):format(tostring(t.dtype)))
  end
  local notnan = T.logical_not(T.isnan(t))
  local x = T.where(notnan, t, T.zeros({}, { dtype = t.dtype }))
  return T.sum(x, ...) / T.sum(notnan:to(t.dtype), ...)
end)

def("cov", function(t, ...)
  check_t("cov", 1, t)
  local opts = opts_at("cov", 2, ...)
  ck("cov", opts, { "correction", "fweights", "aweights" })
  local correction = opts.correction
  if correction == nil then correction = 1 end
  check_num("cov", "correction", correction)
  if t:dim() > 2 then fail("cov", ("cov(): expected input to have two or fewer dimensions but got an input with %d dimensions"):format(t:dim())) end
  local x = t:dim() < 2 and t:reshape({ 1, t:numel() }) or t
  local nobs = x:size(2)
  local fw, aw = opts.fweights, opts.aweights
  local w
  if fw ~= nil then
    check_t("cov", 2, fw)
    if fw:dim() > 1 then fail("cov", ("cov(): expected fweights to have one or fewer dimensions but got fweights with %d dimensions"):format(fw:dim())) end
    if not is_integral(fw) or fw.dtype == T.bool then fail("cov", ("cov(): expected fweights to have integral dtype but got fweights with %s dtype"):format(tostring(fw.dtype))) end
    if fw:numel() ~= nobs then fail("cov", ("cov(): expected fweights to have the same numel as there are observations in the input but got %d != %d"):format(fw:numel(), nobs)) end
    if fw:numel() > 0 and T.any(T.lt(fw, 0)):item() then fail("cov", "cov(): fweights cannot be negative") end
    w = fw
  end
  if aw ~= nil then
    check_t("cov", 2, aw)
    if aw:dim() > 1 then fail("cov", ("cov(): expected aweights to have one or fewer dimensions but got aweights with %d dimensions"):format(aw:dim())) end
    if not is_float(aw) then fail("cov", ("cov(): expected aweights to have floating point dtype but got aweights with %s dtype"):format(tostring(aw.dtype))) end
    if aw:numel() ~= nobs then fail("cov", ("cov(): expected aweights to have the same numel as there are observations in the input but got %d != %d"):format(aw:numel(), nobs)) end
    if aw:numel() > 0 and T.any(T.lt(aw, 0)):item() then fail("cov", "cov(): aweights cannot be negative") end
    w = w and w * aw or aw
  end
  local fdt = (is_float(x) or is_complex(x)) and x.dtype or T.get_default_dtype()
  if w and is_float(w) then fdt = T.promote_types(fdt, w.dtype) end
  x = x:to(fdt)
  -- weights and the normalisation stay real for a complex input
  local rdt = fdt
  if is_complex(x) then rdt = T.real(T.zeros(0, { dtype = fdt })).dtype end
  local wsum, avg
  if w == nil then
    avg = T.mean(x, 2)
    wsum = T.full({}, nobs, { dtype = rdt })
  else
    w = w:to(rdt)
    wsum = T.sum(w)
    avg = T.sum(x * w, 2) / wsum
  end
  local norm_factor
  if w == nil then
    norm_factor = wsum - correction
  elseif correction == 0 then
    norm_factor = wsum
  elseif aw == nil then
    norm_factor = wsum - correction
  else
    norm_factor = wsum - correction * T.sum(w * aw:to(rdt)) / wsum
  end
  norm_factor = T.where(T.le(norm_factor, 0), T.zeros_like(norm_factor), norm_factor)
  local xc = x - avg:unsqueeze(2)
  local xw = w and xc * w or xc
  local c = T.mm(xw, T.conj(xc):t()) / norm_factor
  if c:numel() == 1 then return c:reshape({}) end
  return c
end)

def("corrcoef", function(t)
  check_t("corrcoef", 1, t)
  if t:dim() > 2 then fail("corrcoef", ("corrcoef(): expected input to have two or fewer dimensions but got an input with %d dimensions"):format(t:dim())) end
  local c = T.cov(t)
  if c:dim() == 0 then return c / c end
  local dg = T.diagonal(c)
  local sd = T.sqrt(dg)
  c = c / sd:unsqueeze(2)
  c = c / sd:unsqueeze(1)
  if is_complex(c) then return T.complex(T.clamp(T.real(c), -1, 1), T.clamp(T.imag(c), -1, 1)) end
  return T.clamp(c, -1, 1)
end)

-- the argument helpers, for lua/ltensor/composites.lua
S.fail, S.check_t, S.is_t, S.opts_at, S.ck, S.normdim, S.def = fail, check_t, is_t, opts_at, ck, normdim, def
S.check_int, S.check_num, S.torch_dtype_name, S.shape_str, S.is_opts = check_int, check_num, torch_dtype_name, shape_str, is_opts

return S
