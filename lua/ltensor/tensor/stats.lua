-- ltensor.tensor.stats: statistics: cummax/cummin/logcumsumexp,
-- count_nonzero, kthvalue, median, mode, quantile, nansum/nanmean, cov,
-- corrcoef, trapezoid & co., renorm, std_mean/var_mean.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local M = T._methods
local select, type = select, type
local is_t, fail, torch_dtype_name, is_opts, check_t = C.is_t, C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local opts_at, ck, opts_arg, check_num = C.opts_at, C.ck, C.opts_arg, C.check_num
local check_int = C.check_int
local normdim = C.normdim
local named, def, is_float, is_complex, is_integral = C.named, C.def, C.is_float, C.is_complex, C.is_integral
local rows_along = C.rows_along
local autograd = require "ltensor.autograd"
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

---------------------------------------------------------------------------
-- Integration
---------------------------------------------------------------------------
-- (y [, x] [, {dx=, dim=-1}]): x a tensor of sample points, or a spacing dx
local function trap_args(fname, y, x, ...)
  check_t(fname, 1, y)
  local o
  if is_opts(x) or (type(x) == "table" and not is_t(x) and next(x) == nil) then o, x = x, nil
  else o = opts_at(fname, 3, ...) end
  ck(fname, o, { "dx", "dim" })
  if x ~= nil then check_t(fname, 2, x) end
  if x ~= nil and o.dx ~= nil then fail(fname, "x and dx cannot both be given") end
  local dim = o.dim == nil and -1 or o.dim
  if y:dim() == 0 then
    fail(fname, ("Dimension specified as %s but tensor has no dimensions"):format(tostring(dim)))
  end
  dim = normdim(fname, dim, y:dim())
  local dx = o.dx
  if dx ~= nil and type(dx) ~= "number" then
    fail(fname, "Currently, we only support dx as a real number.")
  end
  local base = fname == "trapz" and "trapezoid" or fname
  if x == nil and y.dtype == T.bool then
    fail(fname, ("%s: received a bool input for `y`, but bool is not supported"):format(base))
  end
  if x ~= nil and (y.dtype == T.bool or x.dtype == T.bool) then
    fail(fname, ("%s: received a bool input for `x` or `y`, but bool is not supported"):format(base))
  end
  if x ~= nil then
    if x:dim() == 1 then
      if x:size(1) ~= y:size(dim) then fail(fname, ("%s: There must be one `x` value for each sample point"):format(base)) end
      local s = {}
      for i = 1, y:dim() do s[i] = 1 end
      s[dim] = x:size(1)
      x = x:reshape(s)
    elseif x:dim() < y:dim() then
      local s = {}
      for i = 1, y:dim() - x:dim() do s[i] = 1 end
      for i = 1, x:dim() do s[#s + 1] = x:size(i) end
      x = x:reshape(s)
    end
  end
  return y, x, dx == nil and 1 or dx, dim
end
local function trapezoid(fname)
  return function(...)
    local y, x, dx, dim = trap_args(fname, ...)
    local n = y:size(dim)
    if n == 0 then
      local s = y.shape
      table.remove(s, dim)
      return T.zeros(s, { dtype = y.dtype })
    end
    if x == nil then
      return (T.sum(y, dim) - (y:select(dim, 1) + y:select(dim, -1)) * 0.5) * dx
    end
    local d = x:narrow(dim, 2, x:size(dim) - 1) - x:narrow(dim, 1, x:size(dim) - 1)
    return T.sum(d * (y:narrow(dim, 2, n - 1) + y:narrow(dim, 1, n - 1)), dim) / 2.0
  end
end
T.trapezoid = named("trapezoid", trapezoid("trapezoid"))
T.trapz = named("trapz", trapezoid("trapz"))
function T.cumulative_trapezoid(...)
  local y, x, dx, dim = trap_args("cumulative_trapezoid", ...)
  local n = y:size(dim)
  local m = n > 0 and n - 1 or 0
  local left, right = y:narrow(dim, 1, m), y:narrow(dim, n > 0 and 2 or 1, m)
  if x == nil then
    -- dx / 2 is a float for PyTorch; a whole one is an integer on Lua 5.1/LuaJIT
    if is_integral(y) then left, right = left:to(T.get_default_dtype()), right:to(T.get_default_dtype()) end
    return T.cumsum((dx / 2) * (left + right), dim)
  end
  local k = x:size(dim)
  local d = x:narrow(dim, 2, k - 1) - x:narrow(dim, 1, k - 1)
  return T.cumsum((left + right) * d, dim) / 2.0
end
T.cumulative_trapezoid = named("cumulative_trapezoid", T.cumulative_trapezoid)

---------------------------------------------------------------------------
-- Norms and statistics
---------------------------------------------------------------------------
-- each slice along dim whose p-norm exceeds maxnorm scaled down to it
-- (PyTorch's factor maxnorm / (norm + 1e-7))
local function renorm(fname, t, p, dim, maxnorm)
  check_t(fname, 1, t)
  check_num(fname, "p", p)
  check_int(fname, "dim", dim)
  check_num(fname, "maxnorm", maxnorm)
  if not is_float(t) and not is_complex(t) then
    fail(fname, ("linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s"):format(torch_dtype_name(t.dtype)))
  end
  if not (p > 0) then fail(fname, "renorm: non-positive-norm not supported") end
  if not (maxnorm >= 0) then fail(fname, ("renorm: expected maxnorm to be >= 0 but got %s"):format(tostring(maxnorm))) end
  if t:dim() <= 1 then fail(fname, ("renorm: input needs at least 2 dimensions, got %d dimensions"):format(t:dim())) end
  dim = normdim(fname, dim, t:dim())
  local others = {}
  for i = 1, t:dim() do if i ~= dim then others[#others + 1] = i end end
  local norm = T.linalg.vector_norm(t, p, others, true)
  local factor = T.where(T.gt(norm, maxnorm), maxnorm / (norm + 1e-7), T.ones_like(norm))
  return t * factor
end
def("renorm", function(t, p, dim, maxnorm) return renorm("renorm", t, p, dim, maxnorm) end)
M.renorm_ = named("renorm_", function(t, p, dim, maxnorm)
  local r = renorm("renorm_", t, p, dim, maxnorm)
  return t:copy_(r)
end)

-- std_mean / var_mean: T.std / T.var and the mean over the same dims
local function dims_keep(...)
  local dims, keepdim
  local a2, a3, a4 = select(2, ...)
  if type(a2) == "number" or (type(a2) == "table" and not is_t(a2) and not is_opts(a2) and #a2 > 0) then dims = a2 end
  -- a numeric string is a dim to the C reductions (Lua's coercion): the mean's too
  if type(a2) == "string" and tonumber(a2) then dims = math.tointeger(tonumber(a2)) or a2 end
  if type(a3) == "boolean" then keepdim = a3 end
  for _, o in ipairs({ a2, a3, a4 }) do
    if is_opts(o) then
      if o.dim ~= nil then dims = o.dim end
      if o.keepdim ~= nil then keepdim = o.keepdim end
    end
  end
  return dims, keepdim
end
local function stat_mean(fname, stat)
  return function(...)
    check_t(fname, 1, (...))
    local s = stat(...)
    local dims, keepdim = dims_keep(...)
    return s, T.mean((...), dims, keepdim or false)
  end
end
T.std_mean = named("std_mean", stat_mean("std_mean", T.std))
T.var_mean = named("var_mean", stat_mean("var_mean", T.var))
return true
