-- ltensor.nn.functional.interpolate: interpolate / upsample (raw kernel
-- T._interp, its rule in autograd/rules_nn.lua).
local T = require "ltensor.core"
local U = require "ltensor.nn.functional.conv_util"
local F = require("ltensor.nn.functional.common").F
local math, table, type = U.math, U.table, U.type
local mtype, floor, concat, unpack = U.mtype, U.floor, U.concat, U.unpack
local is_t, fail, typename, check_t, tname = U.is_t, U.fail, U.typename, U.check_t, U.tname
local is_float = U.is_float
local size_str = U.size_str
local args_of = U.args_of
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- interpolate
---------------------------------------------------------------------------

-- mode -> kernel number of T._interp (area is an adaptive average pool)
local INTERP_MODE = { nearest = 0, linear = 1, bilinear = 1, trilinear = 1, bicubic = 2, ["nearest-exact"] = 3, area = -1 }
-- the spatial dims each interpolating mode takes (the nearest modes and area take 1 to 3)
local INTERP_ND = { linear = 1, bilinear = 2, bicubic = 2, trilinear = 3 }
-- PyTorch's dtypes per mode (float32/float64 always): bfloat16 and uint8 are
-- computed in float32 and rounded back (exact for the nearest modes)
local INTERP_BF16 = { nearest = true, linear = true, bilinear = true, bicubic = true, trilinear = true, area = true }
local INTERP_U8 = { nearest = true, ["nearest-exact"] = true }
local INTERP_KERNEL = { nearest = "compute_indices_weights_nearest", ["nearest-exact"] = "compute_indices_weights_nearest",
  linear = "compute_indices_weights_linear", bilinear = "compute_indices_weights_linear",
  trilinear = "compute_indices_weights_linear", bicubic = "compute_indices_weights_cubic" }
local AXES = { { "W" }, { "H", "W" }, { "D", "H", "W" } }

-- 3-D resampling as two passes of the 2-D kernel: (H, W) of every depth
-- slice, then D with the flattened (H, W) plane as a copied axis; separable,
-- so the weights are PyTorch's products, and autograd goes through both.
local function interp3d(x, out, m, align, scales)
  local N, C, D, H, W = unpack(x.shape)
  local y = T._interp(x:reshape(N, C * D, H, W), out[2], out[3], m, align, scales[2], scales[3])
  y = T._interp(y:reshape(N * C, 1, D, out[2] * out[3]), out[1], out[2] * out[3], m, align, scales[1], -1, 2)
  return y:reshape(N, C, out[1], out[2], out[3])
end
-- area on 5-D input: adaptive average pools, (H, W) then D (separable too)
local function area3d(fname, x, out)
  local N, C, D, H, W = unpack(x.shape)
  for i = 2, 5 do
    if x.shape[i] == 0 then
      fail(fname, ("adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input " ..
        "has sizes %s with dimension %d being empty"):format(size_str(x.shape), i - 1))
    end
  end
  if N == 0 or out[1] * out[2] * out[3] == 0 then return T.zeros({ N, C, out[1], out[2], out[3] }, { dtype = x.dtype }) end
  local y = T._adaptive_avg_pool2d(x:reshape(N, C * D, H, W), out[2], out[3])
  y = T._adaptive_avg_pool2d(y:reshape(N * C, 1, D, out[2] * out[3]), out[1], out[2] * out[3])
  return y:reshape(N, C, out[1], out[2], out[3])
end

local INTERP_ARGS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias", first = 2 }
local INTERP_ALL = "Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: nearest | linear | " ..
  "bilinear | bicubic | trilinear | area | nearest-exact (got %s)"
function F.interpolate(x, ...)
  local fname = "interpolate"
  local a = args_of("nn.functional." .. fname, INTERP_ARGS, ...)
  check_t(fname, 1, "input", x)
  local mode = a.mode or "nearest"
  if type(mode) ~= "string" then fail(fname, "bad argument 'mode' (string expected, got " .. typename(mode) .. ")") end
  local align = a.align_corners
  if mode == "nearest" or mode == "area" or mode == "nearest-exact" then
    if align ~= nil then
      fail(fname, "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear")
    end
  end
  align = align and true or false
  local nd = x:dim() - 2
  local shp = x.shape
  local spatial = { unpack(shp, 3) }
  local size, sf = a.size, a.scale_factor
  if size ~= nil and sf ~= nil then fail(fname, "only one of size or scale_factor should be defined") end
  local out, scales = {}, {}
  if size ~= nil then
    if type(size) == "table" and not is_t(size) then
      if #size ~= math.max(nd, 0) then
        local sz = {}
        for i = 1, #size do sz[i] = tostring(size[i]) end
        fail(fname, ("Input and output must have the same number of spatial dimensions, but got input with spatial " ..
          "dimensions of %s and output size of %s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and " ..
          "output size in (o1, o2, ...,oK) format."):format(size_str(spatial), size_str(sz)))
      end
      for i = 1, nd do out[i] = size[i] end
    else
      for i = 1, nd do out[i] = size end
    end
    for i = 1, nd do
      if mtype(out[i]) ~= "integer" then fail(fname, "bad argument 'size' (integers expected, got " .. typename(out[i]) .. ")") end
      scales[i] = -1
    end
  elseif sf ~= nil then
    local f = {}
    if type(sf) == "table" and not is_t(sf) then
      if #sf ~= math.max(nd, 0) then
        local sz = {}
        for i = 1, #sf do sz[i] = tostring(sf[i]) end
        fail(fname, ("Input and scale_factor must have the same number of spatial dimensions, but got input with " ..
          "spatial dimensions of %s and scale_factor of shape %s. Please provide input tensor in (N, C, d1, d2, " ..
          "...,dK) format and scale_factor in (s1, s2, ...,sK) format."):format(size_str(spatial), size_str(sz)))
      end
      for i = 1, nd do f[i] = sf[i] end
    else
      for i = 1, nd do f[i] = sf end
    end
    for i = 1, nd do
      if type(f[i]) ~= "number" then
        fail(fname, "bad argument 'scale_factor' (a number or a list of numbers expected, got " .. typename(f[i]) .. ")")
      end
    end
    -- area always works from the output size (PyTorch recomputes its scale)
    local recompute = a.recompute_scale_factor or mode == "area"
    for i = 1, nd do
      out[i] = floor(shp[2 + i] * f[i])
      scales[i] = recompute and -1 or f[i]
    end
  else
    fail(fname, "either size or scale_factor should be defined")
  end
  if a.recompute_scale_factor and size ~= nil then
    fail(fname, "recompute_scale_factor is not meaningful with an explicit size.")
  end
  if a.antialias and not ((mode == "bilinear" or mode == "bicubic") and nd == 2) then
    fail(fname, "Anti-alias option is only supported for bilinear and bicubic modes")
  end
  if a.antialias then fail(fname, "antialias is not supported by ltensor") end
  local m = INTERP_MODE[mode]
  local want = INTERP_ND[mode]
  if m == nil or nd < 1 or nd > 3 or (want and want ~= nd) then
    if want and nd >= 1 and nd <= 3 and mode ~= "bicubic" then
      fail(fname, ("Got %dD input, but %s mode needs %dD input"):format(x:dim(), mode, want + 2))
    end
    fail(fname, INTERP_ALL:format(x:dim(), mode))
  end
  local dt = x.dtype.name
  if mode == "area" then
    -- (an output of ones is PyTorch's mean(), which takes any float dtype)
    local ones = true
    for i = 1, nd do if out[i] ~= 1 then ones = false end end
    if dt == "bfloat16" and (nd < 3 or ones) then
      return F.interpolate(x:to(T.float32), { size = out, mode = "area" }):to(x.dtype)
    end
    if not is_float(x) and ones then
      fail(fname, "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: " ..
        tname(x))
    end
    if not is_float(x) then
      fail(fname, ('"%s" not implemented for \'%s\''):format(nd == 3 and "adaptive_avg_pool3d_cpu" or "adaptive_avg_pool2d",
        tname(x)))
    end
    if nd == 1 then return F.adaptive_avg_pool1d(x, out[1]) end
    if nd == 2 then return F.adaptive_avg_pool2d(x, out) end
    return area3d(fname, x, out)
  end
  local ins, outs = {}, {}
  for i = 1, nd do
    ins[i] = AXES[nd][i] .. ": " .. spatial[i]
    outs[i] = AXES[nd][i] .. ": " .. out[i]
  end
  for i = 1, nd do
    if spatial[i] <= 0 or out[i] <= 0 then
      fail(fname, ("Input and output sizes should be greater than 0, but got input (%s)%s output (%s)"):format(
        concat(ins, ", "), nd == 1 and " and" or "", concat(outs, ", ")))
    end
  end
  if x:numel() == 0 and shp[2] == 0 then
    fail(fname, ("Non-empty %dD data tensor expected but got a tensor with sizes %s"):format(x:dim(), size_str(shp)))
  end
  if not is_float(x) then
    if (dt == "bfloat16" and INTERP_BF16[mode]) or (dt == "uint8" and INTERP_U8[mode]) then
      local o = { mode = mode, align_corners = a.align_corners }
      if size ~= nil then o.size = out else o.scale_factor, o.recompute_scale_factor = sf, a.recompute_scale_factor end
      return F.interpolate(x:to(T.float32), o):to(x.dtype)
    end
    -- PyTorch names its channels-last kernel when the input is laid out so
    -- (one channel, a 1x1 image, or channel strides of 1)
    local kernel = INTERP_KERNEL[mode]
    local plane = 1
    for i = 1, nd do plane = plane * spatial[i] end
    if nd >= 2 and mode ~= "bicubic" and (shp[2] == 1 or plane == 1 or x:stride(2) == 1) then
      local k = (mode == "nearest" or mode == "nearest-exact") and "nearest" or (nd == 2 and "bilinear" or "trilinear")
      kernel = ("upsample_%s%dd_channels_last"):format(k, nd)
    end
    fail(fname, ('"%s" not implemented for \'%s\''):format(kernel, tname(x)))
  end
  if nd == 1 then
    return T._interp(x:unsqueeze(3), 1, out[1], m, align, -1, scales[1], 1):squeeze(3)
  end
  if nd == 2 then return T._interp(x, out[1], out[2], m, align, scales[1], scales[2]) end
  return interp3d(x, out, m, align, scales)
end
function F.upsample(x, ...) return F.interpolate(x, ...) end
return true
