-- ltensor.autograd.rules_shape: the backward rules of views and shape ops,
-- indexing and scatter/gather, sort/topk, cat/stack, copies and casts,
-- unfold, the index_* family, the triangular/diagonal/flip/roll kernels
-- (src/binding/l_struct.c) and the in-place rules (copy_, fill_, zero_,
-- indexed assignment).
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local H = require "ltensor.autograd.helpers"
local math, table = compat.math, compat.table
local pack, unpack, select, type, mtype = table.pack, table.unpack, select, type, math.type
local is_t, argcheck, check_t = H.is_t, H.argcheck, H.check_t
local need, sum_to, zero_where, keep_where, normdim = H.need, H.sum_to, H.zero_where, H.keep_where, H.normdim
local is_opts = H.is_opts
local numel_of = H.numel_of
local arange_along = H.arange_along
local rules, inplace_rules = H.rules, H.inplace_rules
-- views and shape ops -----------------------------------------------------------
local function reshape_back(name)
  return function(raw, x, ...)
    local out = raw(x, ...)
    local nm = name
    if nm == "reshape" then nm = T._same_storage(out, x) and "ViewBackward0" or "UnsafeViewBackward0" end
    return { name = nm, inputs = { x }, shape = x.shape, view_of = x,
      backward = function(n, g) return g:reshape(n.shape) end }, out
  end
end
-- view, reshape, flatten, squeeze, unsqueeze, expand, transpose/swapaxes/
-- swapdims and t have C rules that take every call (src/binding/l_grad_rules.c)
rules.unflatten = reshape_back("UnflattenBackward0")
rules.view_as = reshape_back("ViewBackward0")
rules.reshape_as = reshape_back("reshape")
local function expand_rule(raw, x, ...)
  return { name = "ExpandBackward0", inputs = { x }, view_of = x, backward = function(_, g) return g end }, raw(x, ...)
end
rules.expand_as = expand_rule
rules.broadcast_to = expand_rule
rules.permute = function(raw, x, ...)
  local out = raw(x, ...)
  local p = type((...)) == "table" and (...) or { ... }
  local nd = x:dim()
  local inv = {}
  for i = 1, #p do inv[normdim(p[i], nd)] = i end
  return { name = "PermuteBackward0", inputs = { x }, inv = inv, view_of = x,
    backward = function(n, g) return g:permute(n.inv) end }, out
end

-- zeros of `shape` with g placed at [start, start+len) along dim, built with
-- cat so that it stays differentiable under create_graph
local function pad_along(g, shape, dim, start, len)
  local parts = {}
  local function zeros(k)
    local s = { table.unpack(shape) }
    s[dim] = k
    return T.zeros(s, { dtype = g.dtype })
  end
  if start > 1 then parts[#parts + 1] = zeros(start - 1) end
  parts[#parts + 1] = g
  local rest = shape[dim] - (start - 1) - len
  if rest > 0 then parts[#parts + 1] = zeros(rest) end
  if #parts == 1 then return g end
  return T.cat(parts, dim)
end

rules.narrow = function(raw, x, dim, start, len)
  local out = raw(x, dim, start, len)
  local shape = x.shape
  local d = normdim(dim, #shape)
  if start < 0 then start = start + shape[d] + 1 end
  return { name = "SliceBackward0", inputs = { x }, shape = shape, dim = d, start = start, len = len, view_of = x,
    backward = function(n, g) return pad_along(g, n.shape, n.dim, n.start, n.len) end }, out
end
rules.select = function(raw, x, dim, i)
  local out = raw(x, dim, i)
  local shape = x.shape
  local d = normdim(dim, #shape)
  if i < 0 then i = i + shape[d] + 1 end
  return { name = "SelectBackward0", inputs = { x }, shape = shape, dim = d, i = i, view_of = x,
    backward = function(n, g) return pad_along(g:unsqueeze(n.dim), n.shape, n.dim, n.i, 1) end }, out
end

-- zeros(shape) with the k slices of src (k along dim) added at positions idx
-- (1-based, may repeat): index_add.  A one-hot matmul when the core has no
-- index_add, so duplicates accumulate as they must.
local function index_add_into(shape, dim, idx, src)
  argcheck(type(shape) == "table", "autograd.index_add_into", 1, "table", shape)
  for i = 1, #shape do
    argcheck(math.type(shape[i]) == "integer", "autograd.index_add_into", 1, "list of sizes", shape[i])
  end
  argcheck(math.type(dim) == "integer" and shape[dim] ~= nil, "autograd.index_add_into", 2, "dim of shape", dim)
  check_t("autograd.index_add_into", 3, idx)
  check_t("autograd.index_add_into", 4, src)
  local n = shape[dim]
  idx = idx:reshape({ idx:numel() }) % (n + 1)   -- negative indices count from the end
  if T.index_add then
    return T.index_add(T.zeros(shape, { dtype = src.dtype }), dim, idx, src)
  end
  if T.scatter_add and #shape > 0 then
    local bshape = {}
    for i = 1, #shape do bshape[i] = 1 end
    bshape[dim] = idx:numel()
    local full = idx:reshape(bshape):expand(src.shape)
    return T.scatter_add(T.zeros(shape, { dtype = src.dtype }), dim, full, src)
  end
  local k = idx:numel()
  local hot = T.eq(idx:reshape({ k, 1 }), T.arange(1, n + 1):reshape({ 1, n })):to(src.dtype)
  local nd = #shape
  local s = src
  if dim ~= nd then s = s:transpose(dim, nd) end
  local r = T.matmul(s, hot)
  if dim ~= nd then r = r:transpose(dim, nd) end
  return r
end
H.index_add_into = index_add_into   -- T.autograd.index_add_into

local function key_kind(key)
  if math.type(key) == "integer" then return "int" end
  if is_t(key) then return key.dtype == T.bool and "mask" or "tensor" end
  if type(key) == "table" then
    local all_int, adv = true, false
    for i = 1, #key do
      local k = key[i]
      if is_t(k) then adv = true all_int = false
      elseif math.type(k) ~= "integer" then all_int = false end
    end
    if adv then return "advanced" end
    return all_int and "ints" or "basic"
  end
  return "other"
end

rules.index = function(raw, x, key)
  local out = raw(x, key)
  local kind = key_kind(key)
  local shape = x.shape
  if kind == "int" then
    local i = key < 0 and key + shape[1] + 1 or key
    return { name = "SelectBackward0", inputs = { x }, shape = shape, dim = 1, i = i, view_of = x,
      backward = function(n, g) return pad_along(g:unsqueeze(1), n.shape, 1, n.i, 1) end }, out
  elseif kind == "tensor" then
    return { name = "IndexBackward0", inputs = { x }, saved = { key, n = 1 }, shape = shape,
      backward = function(n, g)
        local idx = n.saved[1]
        local k = idx:numel()
        local rest = { k }
        for i = 2, #n.shape do rest[i] = n.shape[i] end
        return index_add_into(n.shape, 1, idx, g:reshape(rest))
      end }, out
  elseif kind == "ints" or kind == "basic" or kind == "mask" then
    -- no repeated positions: write g into zeros through the same key
    return { name = kind == "mask" and "IndexBackward0" or (kind == "ints" and "SelectBackward0" or "SliceBackward0"),
      inputs = { x }, saved = { key, n = 1 }, shape = shape, dtype = x.dtype, view_of = kind ~= "mask" and x or nil,
      backward = function(n, g)
        local z = T.zeros(n.shape, { dtype = g.dtype })
        z[n.saved[1]] = g
        return z
      end }, out
  end
  -- advanced keys mixed with basic ones: index the positions instead
  return { name = "IndexBackward0", inputs = { x }, saved = { key, n = 1 }, shape = shape,
    backward = function(n, g)
      local total = numel_of(n.shape)
      local pos = T.no_grad(function() return T.arange(1, total + 1):reshape(n.shape)[n.saved[1]] end)
      return index_add_into({ total }, 1, pos, g:reshape({ g:numel() })):reshape(n.shape)
    end }, out
end
rules.index_select = function(raw, x, dim, idx)
  local out = raw(x, dim, idx)
  local shape = x.shape
  return { name = "IndexSelectBackward0", inputs = { x }, saved = { idx, n = 1 }, shape = shape, dim = normdim(dim, #shape),
    backward = function(n, g) return index_add_into(n.shape, n.dim, n.saved[1], g) end }, out
end
rules.masked_fill = function(raw, x, mask, v)
  local out = raw(x, mask, v)
  return { name = is_t(v) and "MaskedFillBackward1" or "MaskedFillBackward0", inputs = { x, mask, v }, saved = { mask, n = 1 },
    backward = function(n, g)
      local m = n.saved[1]
      local gv
      if need(n, 3) then gv = T.sum(keep_where(m, g)) end
      return zero_where(m, g), nil, gv
    end }, out
end
rules.gather = function(raw, x, dim, idx)
  local out = raw(x, dim, idx)
  local shape = x.shape
  return { name = "GatherBackward0", inputs = { x }, saved = { idx, n = 1 }, shape = shape, dim = normdim(dim, #shape),
    backward = function(n, g)
      local id = n.saved[1]
      local d, nd = n.dim, #n.shape
      if T.scatter_add then return T.scatter_add(T.zeros(n.shape, { dtype = g.dtype }), d, id, g) end
      -- one-hot over the gathered dim: (.., k, n, ..) summed over k
      local hot = T.eq(id:unsqueeze(d + 1), arange_along(n.shape[d], d + 1, nd + 1))
      local r = T.sum(keep_where(hot, g:unsqueeze(d + 1):expand(hot.shape)), d)
      return sum_to(r, n.shape)
    end }, out
end

rules.where_method = function(raw, x, c, y)
  local out = raw(x, c, y)
  return { name = "WhereBackward0", inputs = { x, c, y }, saved = { c, n = 1 },
    backward = function(n, g)
      local cond = n.saved[1]
      return need(n, 1) and keep_where(cond, g) or nil, nil, need(n, 3) and zero_where(cond, g) or nil
    end }, out
end
rules.movedim = function(raw, x, src, dst)
  local out = raw(x, src, dst)
  return { name = "PermuteBackward0", inputs = { x }, src = src, dst = dst, view_of = x,
    backward = function(n, g) return g:movedim(n.dst, n.src) end }, out
end
rules.masked_select = function(raw, x, mask)
  local out = raw(x, mask)
  return { name = "MaskedSelectBackward0", inputs = { x }, saved = { mask, n = 1 }, shape = x.shape,
    backward = function(n, g)
      local m = n.saved[1]
      local full = T.zeros(n.shape, { dtype = g.dtype })
      local z = (full + T.zeros_like(m, { dtype = g.dtype }))   -- the broadcast shape of x and mask
      z[m:expand(z.shape)] = g
      return z
    end }, out
end
-- values and 1-based indices along dim (sort, topk): scatter g back
local function sorted_rule(name, dim_of)
  return function(raw, x, ...)
    local r = pack(raw(x, ...))
    local nd = x:dim()
    return { name = name, inputs = { x }, saved = { r[2], n = 1 }, shape = x.shape, dim = normdim(dim_of(...) or -1, nd),
      nondiff = { [2] = true },
      backward = function(n, g)
        if #n.shape == 0 then return g end
        return T.scatter_add(T.zeros(n.shape, { dtype = g.dtype }), n.dim, n.saved[1], g)
      end }, unpack(r, 1, r.n)
  end
end
rules.sort = sorted_rule("SortBackward0", function(d)
  if math.type(d) == "integer" then return d end
  if is_opts(d) then return d.dim end
end)
rules.topk = sorted_rule("TopkBackward0", function(_, d, opts)
  if math.type(d) == "integer" then return d end
  if is_opts(d) then return d.dim end
  if is_opts(opts) then return opts.dim end
end)
rules.scatter_add = function(raw, x, dim, idx, src)
  local out = raw(x, dim, idx, src)
  return { name = "ScatterAddBackward0", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim,
    backward = function(n, g)
      return g, nil, nil, need(n, 4) and T.gather(g, n.dim, n.saved[1]) or nil
    end }, out
end
rules.scatter = function(raw, x, dim, idx, src, ...)
  local out = raw(x, dim, idx, src, ...)
  return { name = is_t(src) and "ScatterBackward0" or "ScatterBackward1", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim,
    backward = function(n, g)
      local id = n.saved[1]
      local gx
      if need(n, 1) then gx = T.scatter(g, n.dim, id, 0) end
      return gx, nil, nil, need(n, 4) and T.gather(g, n.dim, id) or nil
    end }, out
end

rules.cat = function(raw, list, dim, ...)
  local out = raw(list, dim, ...)
  local inputs, sizes = {}, {}
  local d = dim or 1
  local nd
  for i = 1, #list do
    local x = list[i]
    inputs[i] = x
    if is_t(x) and not nd and not (x:dim() == 1 and x:numel() == 0) then nd = x:dim() end
  end
  d = normdim(d, nd or 1)
  for i = 1, #list do
    local x = list[i]
    sizes[i] = (is_t(x) and x:dim() > 0 and not (x:dim() == 1 and x:numel() == 0 and nd ~= 1)) and x:size(d) or 0
  end
  return { name = "CatBackward0", inputs = inputs, ninputs = #list, sizes = sizes, dim = d,
    backward = function(n, g)
      local r, off = {}, 1
      for i = 1, n.ninputs do
        local s = n.sizes[i]
        if need(n, i) then r[i] = g:narrow(n.dim, off, s) end
        off = off + s
      end
      return unpack(r, 1, n.ninputs)
    end }, out
end
rules.concat = rules.cat
rules.stack = function(raw, list, dim, ...)
  local out = raw(list, dim, ...)
  local inputs = {}
  for i = 1, #list do inputs[i] = list[i] end
  return { name = "StackBackward0", inputs = inputs, ninputs = #list, dim = normdim(dim or 1, out:dim() - 1, 1),
    backward = function(n, g)
      local r = {}
      for i = 1, n.ninputs do
        if need(n, i) then r[i] = g:select(n.dim, i) end
      end
      return unpack(r, 1, n.ninputs)
    end }, out
end

-- copies and casts ----------------------------------------------------------------
local function identity_rule(name)
  return function(raw, x, ...)
    local out = raw(x, ...)
    if rawequal(out, x) then return nil, out end
    return { name = name, inputs = { x }, backward = function(_, g) return g end }, out
  end
end
rules.clone = identity_rule("CloneBackward0")
rules.contiguous = identity_rule("CloneBackward0")
for _, name in ipairs { "to", "float", "double", "half", "bfloat16", "cfloat", "cdouble", "type_as" } do
  rules[name] = identity_rule("ToCopyBackward0")
end
rules.positive = identity_rule("AliasBackward0")

-- unfold: every window's gradient added back at its positions along dim
rules.unfold = function(raw, x, dim, size, step)
  local out = raw(x, dim, size, step)
  local shape = x.shape
  return { name = "UnfoldBackward0", inputs = { x }, shape = shape, dim = normdim(dim, math.max(#shape, 1)), size = size,
    step = step, view_of = x,
    backward = function(n, g)
      if #n.shape == 0 then return g:reshape({}) end
      local d, k = n.dim, g.shape[n.dim]
      local src = g:movedim(-1, d + 1)               -- (..., windows, size, ...)
      local sshape = src.shape
      local merged = {}
      for i = 1, #sshape do
        if i == d then merged[#merged + 1] = sshape[d] * sshape[d + 1]
        elseif i ~= d + 1 then merged[#merged + 1] = sshape[i] end
      end
      local pos = T.no_grad(function()
        return (T.arange(0, k):reshape({ k, 1 }) * n.step + T.arange(1, n.size + 1):reshape({ 1, n.size })):reshape({ k * n.size })
      end)
      return index_add_into(n.shape, d, pos, src:reshape(merged))
    end }, out
end

-- index_add / index_copy / index_fill (their in-place forms use these too)
local function alpha_of(a)
  if type(a) == "number" then return a end
  if is_opts(a) and a.alpha ~= nil then return a.alpha end
  return 1
end
rules.index_add = function(raw, x, dim, idx, src, a, ...)
  local out = raw(x, dim, idx, src, a, ...)
  local alpha = alpha_of(a)
  return { name = "IndexAddBackward0", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim, alpha = alpha,
    backward = function(n, g)
      local gs
      if need(n, 4) then
        gs = g:dim() == 0 and g or g:index_select(n.dim, n.saved[1])
        if n.alpha ~= 1 then gs = gs * n.alpha end
      end
      return g, nil, nil, gs
    end }, out
end
rules.index_copy = function(raw, x, dim, idx, src, ...)
  local out = raw(x, dim, idx, src, ...)
  return { name = "IndexCopyBackward0", inputs = { x, dim, idx, src }, saved = { idx, n = 1 }, dim = dim,
    backward = function(n, g)
      local id = n.saved[1]
      local gx, gs
      if need(n, 1) then gx = g:dim() == 0 and T.zeros_like(g) or g:index_fill(n.dim, id, 0) end
      if need(n, 4) then gs = g:dim() == 0 and g or g:index_select(n.dim, id) end
      return gx, nil, nil, gs
    end }, out
end
rules.index_fill = function(raw, x, dim, idx, v, ...)
  local out = raw(x, dim, idx, v, ...)
  return { name = "IndexFillBackward" .. (is_t(v) and "1" or "0"), inputs = { x, dim, idx, v }, saved = { idx, n = 1 },
    dim = dim,
    backward = function(n, g)
      local id = n.saved[1]
      local gx, gv
      if need(n, 1) then gx = g:dim() == 0 and T.zeros_like(g) or g:index_fill(n.dim, id, 0) end
      if need(n, 4) then gv = T.sum(g:dim() == 0 and g or g:index_select(n.dim, id)) end
      return gx, nil, nil, gv
    end }, out
end

-- tril / triu are C kernels (l_struct.c); their backward keeps the same triangle
local function tri_rule(name, fn)
  return function(raw, x, k)
    return { name = name, inputs = { x }, k = k,
      backward = function(n, g) return fn(g, n.k) end }, raw(x, k)
  end
end
rules.tril = tri_rule("TrilBackward0", function(g, k) return T.tril(g, k) end)
rules.triu = tri_rule("TriuBackward0", function(g, k) return T.triu(g, k) end)
-- raw first: it checks the shifts and dims (negating an unchecked shift
-- raised "attempt to unm a 'string'"); the shift back is taken modulo the
-- dim's size, since -shift wraps around at the smallest integer
rules._roll_dims = function(raw, x, shifts, dims)
  local out = raw(x, shifts, dims)
  local neg = {}
  for i = 1, #shifts do
    local n = x:size(dims[i])
    neg[i] = n > 0 and -(shifts[i] % n) or 0
  end
  return { name = "RollBackward0", inputs = { x }, neg = neg, dims = dims,
    backward = function(n, g) return T._roll_dims(g, n.neg, n.dims) end }, out
end

-- diagonal's and diag_embed's (offset, dim1, dim2), positional or as options,
-- from the given defaults (the C function has checked them)
local function diag_args(offset, d1, d2, ...)
  local a = pack(...)
  for i = 1, a.n do
    local v = a[i]
    if is_opts(v) then
      offset, d1, d2 = v.offset or offset, v.dim1 or d1, v.dim2 or d2
    elseif mtype(v) == "integer" then
      if i == 1 then offset = v elseif i == 2 then d1 = v elseif i == 3 then d2 = v end
    end
  end
  return offset, d1, d2
end
rules.diagonal = function(raw, x, ...)
  local out = raw(x, ...)
  local offset, d1, d2 = diag_args(0, 1, 2, ...)
  local nd = x:dim()
  if d1 < 0 then d1 = d1 + nd + 1 end
  if d2 < 0 then d2 = d2 + nd + 1 end
  return { name = "DiagonalBackward0", inputs = { x }, shape = x.shape, offset = offset, d1 = d1, d2 = d2, view_of = x,
    backward = function(n, g) return T._diagonal_scatter(g, n.shape, n.offset, n.d1, n.d2) end }, out
end
-- diagonal's backward, itself differentiable (double backward: the diagonal again)
rules._diagonal_scatter = function(raw, g, shape, offset, d1, d2)
  return { name = "DiagonalBackwardBackward0", inputs = { g }, offset = offset, d1 = d1, d2 = d2,
    backward = function(n, gg) return T.diagonal(gg, n.offset, n.d1, n.d2) end }, raw(g, shape, offset, d1, d2)
end
rules.diag_embed = function(raw, x, ...)
  local out = raw(x, ...)
  local offset, d1, d2 = diag_args(0, -2, -1, ...)
  return { name = "DiagEmbedBackward0", inputs = { x }, offset = offset, d1 = d1, d2 = d2,
    backward = function(n, g) return T.diagonal(g, n.offset, n.d1, n.d2) end }, out
end
rules.flip = function(raw, x, ...)
  local out = raw(x, ...)
  local a = pack(...)
  return { name = "FlipBackward0", inputs = { x }, dims = a,
    backward = function(n, g) return T.flip(g, unpack(n.dims, 1, n.dims.n)) end }, out
end

-- in-place ops with a rule of their own (others reuse the out-of-place rule)
inplace_rules.copy_ = function(raw, dst, src, ...)
  local out = raw(dst, src, ...)
  return { name = "CopyBackwards", inputs = { dst, src },
    backward = function(n, g) return need(n, 1) and T.zeros_like(g) or nil, g end }, out
end
inplace_rules.fill_ = function(raw, dst, v)
  local out = raw(dst, v)
  return { name = "FillBackward" .. (is_t(v) and "1" or "0"), inputs = { dst, v },
    backward = function(n, g) return need(n, 1) and T.zeros_like(g) or nil, need(n, 2) and T.sum(g) or nil end }, out
end
inplace_rules.zero_ = function(raw, dst)
  local out = raw(dst)
  return { name = "ZeroBackward0", inputs = { dst }, backward = function(_, g) return T.zeros_like(g) end }, out
end
inplace_rules.setindex = function(raw, dst, key, v)
  raw(dst, key, v)
  local kind = key_kind(key)
  return { name = (kind == "tensor" or kind == "mask" or kind == "advanced") and "IndexPutBackward0" or "CopySlices",
    inputs = { dst, true, v }, saved = { key, n = 1 },
    backward = function(n, g)
      local k = n.saved[1]
      local gd, gv
      if need(n, 1) then gd = g:clone() gd[k] = 0 end
      if need(n, 3) then gv = g[k] end
      return gd, nil, gv
    end }, dst
end
return true
