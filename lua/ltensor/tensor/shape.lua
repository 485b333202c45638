-- ltensor.tensor.shape: the structure surface of SPEC §6b: tril_/triu_,
-- diag, trace, dist, aminmax, fmax/fmin, flips, roll, rot90, repeat, tile,
-- repeat_interleave, kron, broadcast_*, block_diag, cross, meshgrid,
-- take_along_dim, index_put, diff.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local autograd = require "ltensor.autograd"
local math, table = compat.math, compat.table
local M = T._methods
local unpack, pack, type, mtype = table.unpack, table.pack, type, math.type
local is_t, fail, torch_dtype_name, is_opts, check_t = C.is_t, C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local opts_at, ck, opts_arg, check_num = C.opts_at, C.ck, C.opts_arg, C.check_num
local check_int = C.check_int
local normdim, split_opts, sizes_of = C.normdim, C.split_opts, C.sizes_of
local named, def, is_float, is_complex = C.named, C.def, C.is_float, C.is_complex
local SIZE_MAX = C.SIZE_MAX
local size_mul, shape_str, prod, common = C.size_mul, C.shape_str, C.prod, C.common
local into = C.into
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
C.broadcast_shapes = broadcast_shapes
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
def("diff", function(t, n, dim, ...)
  check_t("diff", 1, t)
  local opts
  opts, n, dim = C.positional_opts("diff", { "n", "dim", "prepend", "append" }, 2, n, dim, ...)
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
return true
