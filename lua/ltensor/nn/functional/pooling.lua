-- ltensor.nn.functional.pooling: max/avg/adaptive/lp pools (raw kernels in
-- src/binding/l_conv.c, their rules in autograd/rules_nn.lua).
local T = require "ltensor.core"
local U = require "ltensor.nn.functional.conv_util"
local pool_out, float_only = U.pool_out, U.float_only
local F = require("ltensor.nn.functional.common").F
local math, table, type = U.math, U.table, U.type
local mtype, concat = U.mtype, U.concat
local is_t, fail, typename, check_t = U.is_t, U.fail, U.typename, U.check_t
local is_float = U.is_float
local size_str = U.size_str
local args_of = U.args_of
local ntuple = U.ntuple
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- pooling
---------------------------------------------------------------------------



-- an input of nd spatial dims (1 or 2), with or without its batch dim, as
-- the 4-D (N, C, H, W) the C kernels take; and whether it was batched
local function as_4d(x, nd, xd)
  local batched = xd == nd + 2
  local x4 = batched and x or x:unsqueeze(1)
  if nd == 1 then x4 = x4:unsqueeze(3) end
  return x4, batched
end
-- x as (N, C, H, W) for an nd-D pool (nd = 1: H = 1); returns x4, batched
local function pool_input(fname, nd, x)
  check_t(fname, 1, "input", x)
  local xd = x:dim()
  if xd ~= nd + 1 and xd ~= nd + 2 then
    if nd == 2 then fail(fname, "non-empty 3D or 4D (batch mode) tensor expected for input") end
    fail(fname, ("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: %s"):format(
      size_str(x.shape)))
  end
  return as_4d(x, nd, xd)
end
local function pool_result(t, nd, batched)
  if nd == 1 then t = t:squeeze(3) end
  if not batched then t = t:squeeze(1) end
  return t
end

local function pool_geometry(fname, nd, x4, kernel, stride, padding, dilation, ceil_mode, allow_empty)
  local k = ntuple(fname, "kernel_size", kernel, nd)
  local s = (stride == nil or (type(stride) == "table" and #stride == 0)) and k or ntuple(fname, "stride", stride, nd)
  local p = ntuple(fname, "padding", padding or 0, nd)
  local d = ntuple(fname, "dilation", dilation or 1, nd)
  for i = 1, nd do
    if k[i] <= 0 then fail(fname, "kernel_size must be greater than zero, but got " .. size_str(k)) end
    if s[i] <= 0 then fail(fname, "stride should not be zero") end
    if d[i] <= 0 then fail(fname, "dilation should be greater than zero, but got " .. size_str(d)) end
    if p[i] < 0 then fail(fname, "pad must be non-negative, but got pad: " .. p[i]) end
    if p[i] > math.floor(k[i] / 2) then
      fail(fname, ("pad should be at most half of kernel size, but got pad=%d and kernel_size=%d"):format(p[i], k[i]))
    end
  end
  local shp = x4.shape
  local ins = nd == 1 and { shp[4] } or { shp[3], shp[4] }
  local outs, bad = {}, false
  for i = 1, nd do
    outs[i] = pool_out(ins[i], k[i], s[i], p[i], d[i], ceil_mode)
    if outs[i] < 1 then bad = true end
  end
  if bad and allow_empty then
    -- PyTorch 1.13's max_pool1d without indices (no gradient needed):
    -- an empty result where the (dilated) window is longer than the input
    if outs[1] < 0 then fail(fname, "max_pool1d() Invalid computed output size: " .. outs[1]) end
    bad = false
  end
  if bad then
    local a, b = { shp[2] }, { shp[2] }
    for i = 1, nd do a[#a + 1], b[#b + 1] = ins[i], outs[i] end
    fail(fname, ("Given input size: (%s). Calculated output size: (%s). Output size is too small"):format(
      concat(a, "x"), concat(b, "x")))
  end
  if nd == 1 then
    return { 1, k[1] }, { 1, s[1] }, { 0, p[1] }, { 1, d[1] }, { 1, outs[1] }
  end
  return k, s, p, d, outs
end

local MAXPOOL_ARGS = { "stride", "padding", "dilation", "ceil_mode", "return_indices", first = 3 }
local function max_pool(fname, nd, x, kernel, ...)
  local a = args_of("nn.functional." .. fname, MAXPOOL_ARGS, ...)
  local x4, batched = pool_input(fname, nd, x)
  float_only(fname, nd == 1 and "max_pool1d" or "max_pool2d", x)
  -- (PyTorch takes its with-indices path, which refuses, when the gradient is needed)
  local allow_empty = nd == 1 and not a.return_indices and not (x.requires_grad and T.is_grad_enabled())
  local k, s, p, d, o = pool_geometry(fname, nd, x4, kernel, a.stride, a.padding, a.dilation, a.ceil_mode, allow_empty)
  if o[2] == 0 then
    local shp = x4.shape
    return pool_result(T.empty({ shp[1], shp[2], 1, 0 }, { dtype = x.dtype }), nd, batched)
  end
  local out, idx = T._max_pool2d(x4, k[1], k[2], s[1], s[2], p[1], p[2], d[1], d[2], o[1], o[2],
    a.return_indices and true or false)
  out = pool_result(out, nd, batched)
  if a.return_indices then return out, pool_result(idx, nd, batched) end
  return out
end
function F.max_pool1d(x, kernel_size, ...) return max_pool("max_pool1d", 1, x, kernel_size, ...) end
function F.max_pool2d(x, kernel_size, ...) return max_pool("max_pool2d", 2, x, kernel_size, ...) end
function F.max_pool1d_with_indices(x, k, ...)
  local a = args_of("nn.functional.max_pool1d_with_indices", MAXPOOL_ARGS, ...)
  a.return_indices = true
  return max_pool("max_pool1d", 1, x, k, a)
end
function F.max_pool2d_with_indices(x, k, ...)
  local a = args_of("nn.functional.max_pool2d_with_indices", MAXPOOL_ARGS, ...)
  a.return_indices = true
  return max_pool("max_pool2d", 2, x, k, a)
end

local AVGPOOL_ARGS = { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override", first = 3 }
local avg_pool
function avg_pool(fname, nd, x, kernel, ...)
  local a = args_of("nn.functional." .. fname, AVGPOOL_ARGS, ...)
  local x4, batched = pool_input(fname, nd, x)
  local name = x.dtype.name
  if not is_float(x) and (name:match("^u?int") or name == "int8") then
    -- integers (as PyTorch 1.13): the average truncated toward zero
    return T.trunc(avg_pool(fname, nd, x:double(), kernel, ...)):to(x.dtype)
  end
  float_only(fname, nd == 1 and "avg_pool1d" or "avg_pool2d", x)
  local k, s, p, _, o = pool_geometry(fname, nd, x4, kernel, a.stride, a.padding, 1, a.ceil_mode)
  local cip = a.count_include_pad
  if cip == nil then cip = true end
  local div = a.divisor_override
  if div ~= nil then
    if mtype(div) ~= "integer" then fail(fname, "bad argument 'divisor_override' (integer expected, got " .. typename(div) .. ")") end
    if div == 0 then fail(fname, "divisor must be not zero") end
  end
  local out = T._avg_pool2d(x4, k[1], k[2], s[1], s[2], p[1], p[2], o[1], o[2], cip and true or false, div)
  return pool_result(out, nd, batched)
end
function F.avg_pool1d(x, kernel_size, ...) return avg_pool("avg_pool1d", 1, x, kernel_size, ...) end
function F.avg_pool2d(x, kernel_size, ...) return avg_pool("avg_pool2d", 2, x, kernel_size, ...) end

local function adaptive_size(fname, nd, x4, size)
  local shp = x4.shape
  local ins = nd == 1 and { shp[4] } or { shp[3], shp[4] }
  local o = {}
  if mtype(size) == "integer" then
    for i = 1, nd do o[i] = size end
  elseif type(size) == "table" and not is_t(size) then
    for i = 1, nd do
      local v = size[i]
      if v == nil and #size == 1 and nd > 1 then v = size[1] end
      if v == false then v = ins[i] end   -- false stands for PyTorch's None: keep that size
      if mtype(v) ~= "integer" then fail(fname, "bad argument 'output_size' (integers expected)") end
      o[i] = v
    end
  else
    fail(fname, "bad argument 'output_size' (integer or table expected, got " .. typename(size) .. ")")
  end
  for i = 1, nd do
    if o[i] < 0 then fail(fname, "output_size must be non-negative, got " .. size_str(o)) end
  end
  for i = 1, nd do
    if ins[i] == 0 and o[i] > 0 then
      fail(fname, ("%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes %s with dimension %d being empty"):format(
        fname, size_str(shp), i + 2))
    end
  end
  if nd == 1 then return 1, o[1] end
  return o[1], o[2]
end
local function adaptive_input(fname, nd, x)
  check_t(fname, 1, "input", x)
  local xd = x:dim()
  if xd ~= nd + 1 and xd ~= nd + 2 then
    fail(fname, ("%s(): Expected %dD or %dD tensor, but got %s"):format(fname, nd + 1, nd + 2, size_str(x.shape)))
  end
  return as_4d(x, nd, xd)
end
local function adaptive_avg(fname, nd, x, size)
  local x4, batched = adaptive_input(fname, nd, x)
  float_only(fname, "adaptive_avg_pool2d", x)
  local Ho, Wo = adaptive_size(fname, nd, x4, size)
  return pool_result(T._adaptive_avg_pool2d(x4, Ho, Wo), nd, batched)
end
local ADAPTIVE_MAX_ARGS = { "return_indices", first = 3 }
local function adaptive_max(fname, nd, x, size, ...)
  local a = args_of("nn.functional." .. fname, ADAPTIVE_MAX_ARGS, ...)
  local x4, batched = adaptive_input(fname, nd, x)
  float_only(fname, "adaptive_max_pool2d", x)
  local Ho, Wo = adaptive_size(fname, nd, x4, size)
  local out, idx = T._adaptive_max_pool2d(x4, Ho, Wo)
  out = pool_result(out, nd, batched)
  if a.return_indices then return out, pool_result(idx, nd, batched) end
  return out
end
function F.adaptive_avg_pool1d(x, size) return adaptive_avg("adaptive_avg_pool1d", 1, x, size) end
function F.adaptive_avg_pool2d(x, size) return adaptive_avg("adaptive_avg_pool2d", 2, x, size) end
function F.adaptive_max_pool1d(x, size, ...) return adaptive_max("adaptive_max_pool1d", 1, x, size, ...) end
function F.adaptive_max_pool2d(x, size, ...) return adaptive_max("adaptive_max_pool2d", 2, x, size, ...) end
return true
