-- ltensor.tensor.search: searching and counting: searchsorted, bucketize,
-- unique, unique_consecutive, bincount, histc, histogram.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local unpack, pack, select, type = table.unpack, table.pack, select, type
local is_t, fail, is_opts, check_t = C.is_t, C.fail, C.is_opts, C.check_t
local opts_at, ck, opts_arg, check_num = C.opts_at, C.ck, C.opts_arg, C.check_num
local check_int = C.check_int
local normdim = C.normdim
local def, is_float, is_complex, is_integral = C.def, C.is_float, C.is_complex, C.is_integral
local num_str, shape_str, prod, common = C.num_str, C.shape_str, C.prod, C.common
local keys_of = C.keys_of
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
    return C.unique_dim(fname, t, normdim(fname, opts.dim, t:dim()), ret_inv, ret_cnt, consecutive)
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
function C.unique_dim(fname, t, d, ret_inv, ret_cnt, consecutive)
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
  opts, weights, minlength = C.positional_opts("bincount", { "weights", "minlength" }, 2, weights, minlength, ...)
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
  opts, bins, lo, hi = C.positional_opts("histc", { "bins", "min", "max" }, 3, bins, lo, hi, ...)
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
return true
