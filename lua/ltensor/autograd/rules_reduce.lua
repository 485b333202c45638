-- ltensor.autograd.rules_reduce: the backward rules of reductions (sum,
-- mean, prod, max/min, std/var, norm, logsumexp), scans (cumsum, cumprod)
-- and softmax.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local H = require "ltensor.autograd.helpers"
local math, table = compat.math, compat.table
local pack, unpack, select, type = table.pack, table.unpack, select, type
local is_t = H.is_t
local zero_where, keep_where, normdim = H.zero_where, H.keep_where, H.normdim
local is_opts = H.is_opts
local rparse, unreduce, expand_to = H.rparse, H.unreduce, H.expand_to
local arange_along = H.arange_along
local rules = H.rules
-- reductions ----------------------------------------------------------------
-- sum and mean: C rules that take every call (src/binding/l_grad_shape.c)
-- prod's gradient as PyTorch's prod_backward: when the input holds no zero,
-- g * y / x; otherwise, for every slice, the product of the elements before
-- and after each one (exclusive cumulative products from both ends), which
-- is exact at zeros (and gives a NaN element the product of the others).
-- The whole-tensor product with more than one zero and no graph to record
-- has zero gradient everywhere, as there.
local function exclusive_cumprod(v, d)
  local n = v:size(d)
  local ones = T.ones_like(v:narrow(d, 1, 1))
  return T.cat({ ones, v:narrow(d, 1, n - 1) }, d):cumprod(d)
end
local function prod_safe_zeros(g, v, d)
  if v:numel() == 0 then return g:expand(v.shape) end
  local left = exclusive_cumprod(v, d)
  local right = exclusive_cumprod(v:flip({ d }), d):flip({ d })
  return g * (left * right)
end
rules.prod = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local dims, keepdim = rparse(#shape, ...)
  return { name = dims and "ProdBackward1" or "ProdBackward0", inputs = { x }, saved = { x, out, n = 2 },
    dims = dims, keepdim = keepdim, shape = shape,
    backward = function(n, g)
      local v, y = n.saved[1], n.saved[2]
      if #n.shape == 0 then return g end
      g, y = unreduce(g, n.dims, n.keepdim, #n.shape), unreduce(y, n.dims, n.keepdim, #n.shape)
      local zeros = T.sum(T.eq(v, 0)):item()
      if zeros == 0 then return g * (y / v) end
      if not n.dims then
        if zeros > 1 and not T.is_grad_enabled() then return T.zeros_like(v) end
        return prod_safe_zeros(g:reshape({ 1 }), v:reshape({ -1 }), 1):reshape(n.shape)
      end
      return prod_safe_zeros(g, v, n.dims[1])
    end }, out
end

-- max/min: with a dim, (values, indices) and the gradient goes to the index;
-- without one, ties share the gradient evenly (PyTorch's MaxBackward1).
-- Without an index the gradient is shared: max()/min() share it evenly
-- among the elements equal to the result, or among the NaNs when the result
-- is NaN (PyTorch's evenly_distribute_backward); amax/amin divide by the
-- count of elements equal to the result, so a NaN result (no element
-- equals it) gives NaN gradients, as PyTorch's scale_grad_by_count.
local function reduce_minmax(name_dim, name_all, evenly)
  return function(raw, x, ...)
    local r = pack(raw(x, ...))
    local shape = x.shape
    if select("#", ...) >= 1 and is_t((...)) then return nil, unpack(r, 1, r.n) end -- maximum path
    local dims, keepdim = rparse(#shape, ...)
    if r.n >= 2 and dims then
      return { name = name_dim, inputs = { x }, saved = { r[2], n = 1 }, dim = dims[1], keepdim = keepdim, shape = shape, nondiff = { [2] = true },
        backward = function(n, g)
          local idx = n.saved[1]
          local nd = #n.shape
          if nd == 0 then return g end
          if not n.keepdim then g, idx = g:unsqueeze(n.dim), idx:unsqueeze(n.dim) end
          local hot = T.eq(idx, arange_along(n.shape[n.dim], n.dim, nd))
          return keep_where(hot, g:expand(n.shape))
        end }, unpack(r, 1, r.n)
    end
    return { name = name_all, inputs = { x }, saved = { x, r[1], n = 2 }, dims = dims, keepdim = keepdim, shape = shape,
      evenly = evenly and not dims,
      backward = function(n, g)
        local v, y = n.saved[1], n.saved[2]
        local nd = #n.shape
        g, y = unreduce(g, n.dims, n.keepdim, nd), unreduce(y, n.dims, n.keepdim, nd)
        if n.evenly then
          local mask = (y:item() ~= y:item()) and T.isnan(v) or T.eq(v, y)
          return keep_where(mask, expand_to(g / T.sum(mask), n.shape))
        end
        local mask = T.eq(v, y)
        local cnt = n.dims and T.sum(mask, n.dims, true) or T.sum(mask)
        return expand_to(g / cnt, n.shape) * mask:to(v.dtype)
      end }, unpack(r, 1, r.n)
  end
end
rules.max = reduce_minmax("MaxBackward0", "MaxBackward1", true)
rules.min = reduce_minmax("MinBackward0", "MinBackward1", true)
rules.amax = reduce_minmax("AmaxBackward0", "AmaxBackward0", false)
rules.amin = reduce_minmax("AminBackward0", "AminBackward0", false)

local function stdvar(name, is_std)
  return function(raw, x, ...)
    local out = raw(x, ...)
    local shape = x.shape
    local args = pack(...)
    local correction = 1
    local first = 1
    if type(args[1]) == "boolean" then correction = args[1] and 1 or 0 first = 2 end
    local dims, keepdim, opts = rparse(#shape, unpack(args, first, args.n))
    if opts then
      if opts.unbiased ~= nil then correction = opts.unbiased and 1 or 0 end
      if opts.correction ~= nil then correction = opts.correction end
    end
    local N = x:numel() / math.max(out:numel(), 1)
    return { name = name, inputs = { x }, saved = { x, out, n = 2 }, dims = dims, keepdim = keepdim, shape = shape,
      denom = N - correction,
      backward = function(n, g)
        local v, y = n.saved[1], n.saved[2]
        local nd = #n.shape
        g = unreduce(g, n.dims, n.keepdim, nd)
        local mu = n.dims and T.mean(v, n.dims, true) or T.mean(v)
        local r = g * (v - mu) / n.denom
        -- std: 0 where the std is 0 (PyTorch masks g / (2 std) there)
        if is_std then
          local sd = unreduce(y, n.dims, n.keepdim, nd)
          return zero_where(T.eq(sd, 0):expand(n.shape), r / sd)
        end
        return r * 2
      end }, out
  end
end
rules.var = stdvar("VarBackward0", false)
rules.std = stdvar("StdBackward0", true)

rules.norm = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local args = pack(...)
  local p, first = 2, 1
  if type(args[1]) == "number" or type(args[1]) == "string" then p, first = args[1], 2
  elseif args[1] == nil and args.n >= 2 then first = 2 end
  local dims, keepdim, opts = rparse(#shape, unpack(args, first, args.n))
  if opts and opts.p ~= nil then p = opts.p end
  if p == "fro" then p = 2 elseif p == "inf" then p = math.huge elseif p == "-inf" then p = -math.huge end
  return { name = dims and "NormBackward1" or "NormBackward0", inputs = { x }, saved = { x, out, n = 2 }, p = p, dims = dims, keepdim = keepdim, shape = shape,
    backward = function(n, g)
      local v, y = n.saved[1], n.saved[2]
      local nd, pp = #n.shape, n.p
      g, y = unreduce(g, n.dims, n.keepdim, nd), unreduce(y, n.dims, n.keepdim, nd)
      if pp == 0 then return T.zeros_like(v) end
      if pp == 1 then return g * T.sign(v) end
      if pp == math.huge or pp == -math.huge then
        local mask = T.eq(T.abs(v), y)
        local cnt = n.dims and T.sum(mask, n.dims, true) or T.sum(mask)
        return keep_where(mask, g * T.sign(v) / cnt)
      end
      -- PyTorch's norm_backward, written with |v| / y (at most 1) so that
      -- tiny entries do not underflow into 0/0: p >= 2: v |v|^(p-2) / y^(p-1)
      -- = (v/y) (|v|/y)^(p-2); p < 2: sgn(v) (|v|/y)^(p-1), 0 at v = 0 when p < 1
      local r
      if pp == 2 then r = v / y
      elseif pp > 2 then r = (v / y) * T.pow(T.abs(v) / y, pp - 2)
      else
        r = T.sign(v) * T.pow(T.abs(v) / y, pp - 1)
        if pp < 1 then r = zero_where(T.eq(v, 0), r) end
      end
      return zero_where(T.eq(y, 0), g * r)
    end }, out
end

rules.logsumexp = function(raw, x, ...)
  local out = raw(x, ...)
  local shape = x.shape
  local dims, keepdim = rparse(#shape, ...)
  return { name = "LogsumexpBackward0", inputs = { x }, saved = { x, out, n = 2 }, dims = dims, keepdim = keepdim, shape = shape,
    backward = function(n, g)
      local nd = #n.shape
      return unreduce(g, n.dims, n.keepdim, nd) * T.exp(n.saved[1] - unreduce(n.saved[2], n.dims, n.keepdim, nd))
    end }, out
end

local function one_dim(x, d)
  if is_opts(d) then d = d.dim end
  return normdim(d, x:dim())
end
-- the reversed cumulative sum (w_k + w_k+1 + ... + w_n along d), summed in
-- that order as PyTorch's reversed_cumsum: total - cumsum + w would turn
-- an inf on one side into NaN on the other
local function revcumsum(w, d) return w:flip({ d }):cumsum(d):flip({ d }) end
rules.cumsum = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "CumsumBackward0", inputs = { x }, dim = one_dim(x, d), nd = x:dim(),
    backward = function(n, g)
      if n.nd == 0 then return g end
      return revcumsum(g, n.dim)
    end }, out
end
-- cumprod's gradient as PyTorch's cumprod_backward.  Without zeros in the
-- input: the reversed cumulative sum of g * y, divided by x.  With zeros,
-- dividing by x would give NaN, so: before a slice's first zero the same
-- formula over that part; at the first zero, the sum over the run up to the
-- second zero of g_j times the product of the x between them, times the
-- product of everything before it; after it, 0.  Under create_graph the
-- gradient is built from products that leave each element out (O(n^2)), so
-- that it can be differentiated again.
local function cumprod_bw_zeros(x, y, g, d)
  local n = x:size(d)
  local is_zero = T.eq(x, 0)
  local cnt = T.cumsum(is_zero, d)
  local before = T.eq(cnt, 0)
  local part_before = T.where(before, revcumsum(T.where(before, y * g, 0), d) / x, 0)
  local run = T.eq(cnt, 1)
  local first_zero = T.logical_and(run, is_zero)
  local between = T.logical_and(run, T.logical_not(is_zero))
  local s = (T.where(between, x, 1):cumprod(d) * T.where(run, g, 0)):sum(d, true)
  local ones = T.ones_like(y:narrow(d, 1, 1))
  local prev = T.cat({ ones, y:narrow(d, 1, n - 1) }, d)
  return part_before + T.where(first_zero, s * prev, 0)
end
local function cumprod_bw_graph(x, g, d)
  local n = x:size(d)
  local ones = T.ones_like(x:narrow(d, 1, 1))
  local cols = {}
  for k = 1, n do
    local omitted
    if k == 1 then
      omitted = T.cat({ ones, x:narrow(d, 2, n - 1):cumprod(d) }, d)
    elseif k == n then
      omitted = T.prod(x:narrow(d, 1, k - 1), d, true)
    else
      local upto = T.prod(x:narrow(d, 1, k - 1), d, true)
      local after = x:narrow(d, k + 1, n - k):cumprod(d)
      omitted = T.cat({ upto, upto * after }, d)
    end
    cols[k] = (g:narrow(d, k, n - k + 1) * omitted):sum(d, true)
  end
  return T.cat(cols, d)
end
rules.cumprod = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "CumprodBackward0", inputs = { x }, saved = { x, out, n = 2 }, dim = one_dim(x, d), nd = x:dim(),
    backward = function(n, g)
      if n.nd == 0 then return g end
      local v, y = n.saved[1], n.saved[2]
      if v:numel() <= 1 or v:size(n.dim) == 1 then return g end
      if not T.any(T.eq(v, 0)):item() then return revcumsum(g * y, n.dim) / v end
      if T.is_grad_enabled() then return cumprod_bw_graph(v, g, n.dim) end
      return cumprod_bw_zeros(v, y, g, n.dim)
    end }, out
end
rules.softmax = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "SoftmaxBackward0", inputs = { x }, saved = { out, n = 1 }, dim = one_dim(x, d),
    backward = function(n, g)
      local y = n.saved[1]
      return y * (g - T.sum(g * y, n.dim, true))
    end }, out
end
rules.log_softmax = function(raw, x, d, ...)
  local out = raw(x, d, ...)
  return { name = "LogSoftmaxBackward0", inputs = { x }, saved = { out, n = 1 }, dim = one_dim(x, d),
    backward = function(n, g)
      return g - T.exp(n.saved[1]) * T.sum(g, n.dim, true)
    end }, out
end
return true
