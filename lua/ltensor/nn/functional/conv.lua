-- ltensor.nn.functional.conv: conv1d/2d and conv_transpose1d/2d.  The
-- arithmetic is in C (src/core/lt_conv.c through the raw T._conv_*
-- functions of src/binding/l_conv.c), always on NCHW float tensors: this
-- file checks the user's arguments with PyTorch's messages, works out output
-- sizes and turns 1-D and unbatched inputs into that layout (views, so
-- autograd follows); the raw functions' rules are in autograd/rules_nn.lua.
local T = require "ltensor.core"
local U = require "ltensor.nn.functional.conv_util"
local F = require("ltensor.nn.functional.common").F
local math, type = U.math, U.type
local mtype, concat, unpack = U.mtype, U.concat, U.unpack
local fail, typename, check_t, tname = U.fail, U.typename, U.check_t, U.tname
local is_float = U.is_float
local size_str = U.size_str
local args_of = U.args_of
local ntuple = U.ntuple
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- convolution
---------------------------------------------------------------------------

-- dtype checks shared by the convolutions: returns "float" or "int"

local function conv_dtypes(fname, x, w, b)
  if x.dtype ~= w.dtype then
    fail(fname, ("expected scalar type %s but found %s"):format(tname(x), tname(w)))
  end
  if b ~= nil and b.dtype ~= x.dtype then
    fail(fname, ("expected scalar type %s but found %s"):format(tname(x), tname(b)))
  end
  if is_float(x) then return "float" end
  local k = x.dtype.name
  if k:match("^u?int") then return "int" end
  local kernel = fname:match("transpose") and "slow_conv_transpose2d_cpu" or "slow_conv2d_cpu"
  fail(fname, ('"%s" not implemented for \'%s\''):format(kernel, tname(x)))
end

-- Common checks and the NCHW arrangement.  Returns x4, w4, batched flag.
local function conv_prepare(fname, nd, x, w, b, transposed)
  check_t(fname, 1, "input", x)
  check_t(fname, 2, "weight", w)
  check_t(fname, 3, "bias", b, true)
  local xd = x:dim()
  if xd ~= nd + 1 and xd ~= nd + 2 then
    fail(fname, ("Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s"):format(
      nd + 1, nd + 2, fname, size_str(x.shape)))
  end
  if w:dim() ~= nd + 2 then
    fail(fname, ("expected weight to be %d-dimensional, but got weight of size %s"):format(nd + 2, size_str(w.shape)))
  end
  local batched = xd == nd + 2
  if not batched then x = x:unsqueeze(1) end
  if nd == 1 then x, w = x:unsqueeze(3), w:unsqueeze(3) end
  -- an empty kernel has no window to place (the gemm band split divided by
  -- zero on it); PyTorch's message, 1-D kernels shown as 1 x k as in its
  if w.shape[3] <= 0 or w.shape[4] <= 0 then
    fail(fname, ("kernel size should be greater than zero, but got kernel_height: %d kernel_width: %d"):format(
      w.shape[3], w.shape[4]))
  end
  return x, w, batched
end

local function check_groups(fname, groups, w, wshape)
  if mtype(groups) ~= "integer" then fail(fname, "bad argument 'groups' (integer expected, got " .. typename(groups) .. ")") end
  if groups <= 0 then fail(fname, "non-positive groups is not supported") end
  if w:size(1) % groups ~= 0 then
    fail(fname, ("Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of size [%s] instead"):format(
      groups, groups, size_str(wshape)))
  end
end

local function conv_nd(fname, nd, x, w, b, stride, padding, dilation, groups)
  local x4, w4, batched = conv_prepare(fname, nd, x, w, b)
  local wshape, xshape = w.shape, x4.shape
  local kind = conv_dtypes(fname, x, w, b)
  stride = ntuple(fname, "stride", stride or 1, nd, "conv")
  dilation = ntuple(fname, "dilation", dilation or 1, nd, "conv")
  groups = groups or 1
  for i = 1, nd do if stride[i] <= 0 then fail(fname, "non-positive stride is not supported") end end
  for i = 1, nd do
    if dilation[i] <= 0 then fail(fname, "dilation should be greater than zero, but got " .. size_str(dilation)) end
  end
  check_groups(fname, groups, w, wshape)
  -- padding: numbers, or "same" / "valid"; pad_l is the leading pad of each dim
  local pad_l, pad_r = {}, {}
  padding = padding or 0
  if type(padding) == "string" then
    if padding == "valid" then
      for i = 1, nd do pad_l[i], pad_r[i] = 0, 0 end
    elseif padding == "same" then
      for i = 1, nd do
        if stride[i] ~= 1 then fail(fname, "padding='same' is not supported for strided convolutions") end
      end
      for i = 1, nd do
        local total = dilation[i] * (wshape[i + 2] - 1)
        pad_l[i] = math.floor(total / 2)
        pad_r[i] = total - pad_l[i]
      end
    else
      fail(fname, "Invalid padding string: '" .. padding .. "'")
    end
  else
    local p = ntuple(fname, "padding", padding, nd, "conv")
    for i = 1, nd do
      if p[i] < 0 then fail(fname, "negative padding is not supported") end
      pad_l[i], pad_r[i] = p[i], p[i]
    end
  end
  -- channels (the message shows the input as batched, like PyTorch's)
  local cin = xshape[2]
  local shown_x = batched and x.shape or { 1, unpack(x.shape) }
  if cin ~= wshape[2] * groups then
    fail(fname, ("Given groups=%d, weight of size %s, expected input%s to have %d channels, but got %d channels instead"):format(
      groups, size_str(wshape), size_str(shown_x), wshape[2] * groups, cin))
  end
  if b ~= nil and (b:dim() ~= 1 or b:size(1) ~= wshape[1]) then
    fail(fname, ("Given weight of size %s, expected bias to be 1-dimensional with %d elements, but got bias of size %s instead"):format(
      size_str(wshape), wshape[1], size_str(b.shape)))
  end
  -- output size; the padded input must hold the dilated kernel
  local out_sp, padded, ksz = {}, {}, {}
  local bad = false
  for i = 1, nd do
    local inn = x.shape[#x.shape - nd + i]
    padded[i] = inn + pad_l[i] + pad_r[i]
    ksz[i] = dilation[i] * (wshape[i + 2] - 1) + 1
    if padded[i] < ksz[i] then bad = true end
    out_sp[i] = math.floor((padded[i] - ksz[i]) / stride[i]) + 1
  end
  if bad then
    fail(fname, ("Calculated padded input size per channel: (%s). Kernel size: (%s). Kernel size can't be greater than actual input size"):format(
      concat(padded, " x "), concat(ksz, " x ")))
  end
  if kind == "int" then   -- integers: exact through float64 below 2^53
    local r = conv_nd(fname, nd, x:double(), w:double(), b and b:double(), stride, padding, dilation, groups)
    return T.round(r):to(x.dtype)
  end
  local out
  if nd == 1 then
    out = T._conv_small(x4, w4, b, 1, stride[1], 0, pad_l[1], 1, dilation[1], groups, 1, out_sp[1])
    out = out:squeeze(3)
  else
    out = T._conv_small(x4, w4, b, stride[1], stride[2], pad_l[1], pad_l[2], dilation[1], dilation[2], groups,
      out_sp[1], out_sp[2])
  end
  if not batched then out = out:squeeze(1) end
  return out
end

local CONV_ARGS = { "bias", "stride", "padding", "dilation", "groups", first = 3 }
function F.conv1d(x, w, ...)
  local a = args_of("nn.functional.conv1d", CONV_ARGS, ...)
  return conv_nd("conv1d", 1, x, w, a.bias, a.stride, a.padding, a.dilation, a.groups)
end
function F.conv2d(x, w, ...)
  local a = args_of("nn.functional.conv2d", CONV_ARGS, ...)
  return conv_nd("conv2d", 2, x, w, a.bias, a.stride, a.padding, a.dilation, a.groups)
end

local function conv_transpose_nd(fname, nd, x, w, b, stride, padding, output_padding, groups, dilation)
  local x4, w4, batched = conv_prepare(fname, nd, x, w, b, true)
  local wshape, xshape = w.shape, x4.shape
  local kind = conv_dtypes(fname, x, w, b)
  if type(padding) == "string" then
    fail(fname, ("%s(): argument 'padding' must be tuple of ints, not str"):format(fname))
  end
  stride = ntuple(fname, "stride", stride or 1, nd, "conv")
  padding = ntuple(fname, "padding", padding or 0, nd, "conv")
  output_padding = ntuple(fname, "output_padding", output_padding or 0, nd, "conv")
  dilation = ntuple(fname, "dilation", dilation or 1, nd, "conv")
  groups = groups or 1
  for i = 1, nd do if stride[i] <= 0 then fail(fname, "non-positive stride is not supported") end end
  for i = 1, nd do if padding[i] < 0 then fail(fname, "negative padding is not supported") end end
  for i = 1, nd do if output_padding[i] < 0 then fail(fname, "negative output_padding is not supported") end end
  for i = 1, nd do
    if dilation[i] <= 0 then fail(fname, "dilation should be greater than zero, but got " .. size_str(dilation)) end
  end
  check_groups(fname, groups, w, wshape)
  local shown_x = batched and x.shape or { 1, unpack(x.shape) }
  if xshape[2] ~= wshape[1] then
    fail(fname, ("Given transposed=1, weight of size %s, expected input%s to have %d channels, but got %d channels instead"):format(
      size_str(wshape), size_str(shown_x), wshape[1], xshape[2]))
  end
  if b ~= nil and (b:dim() ~= 1 or b:size(1) ~= wshape[2] * groups) then
    fail(fname, ("Given transposed=1, weight of size %s, expected bias to be 1-dimensional with %d elements, but got bias of size %s instead"):format(
      size_str(wshape), wshape[2] * groups, size_str(b.shape)))
  end
  for i = 1, nd do
    if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i] then
      if nd == 2 then
        fail(fname, ("output padding must be smaller than either stride or dilation, but got output_padding_height: %d " ..
          "output_padding_width: %d stride_height: %d stride_width: %d dilation_height: %d dilation_width: %d"):format(
          output_padding[1], output_padding[2], stride[1], stride[2], dilation[1], dilation[2]))
      end
      fail(fname, ("output padding must be smaller than either stride or dilation, but got output_padding: %d " ..
        "stride: %d dilation: %d"):format(output_padding[1], stride[1], dilation[1]))
    end
  end
  local out_sp, in_sp, bad = {}, {}, false
  for i = 1, nd do
    local inn = x.shape[#x.shape - nd + i]
    in_sp[i] = inn
    out_sp[i] = (inn - 1) * stride[i] - 2 * padding[i] + dilation[i] * (wshape[i + 2] - 1) + output_padding[i] + 1
    if out_sp[i] <= 0 then bad = true end
  end
  if bad then
    fail(fname, ("Given input size per channel: (%s). Calculated output size per channel: (%s). Output size is too small"):format(
      concat(in_sp, " x "), concat(out_sp, " x ")))
  end
  if kind == "int" then
    local r = conv_transpose_nd(fname, nd, x:double(), w:double(), b and b:double(), stride, padding, output_padding,
      groups, dilation)
    return T.round(r):to(x.dtype)
  end
  local out
  if nd == 1 then
    out = T._conv_big(x4, w4, b, 1, stride[1], 0, padding[1], 1, dilation[1], groups, 1, out_sp[1]):squeeze(3)
  else
    out = T._conv_big(x4, w4, b, stride[1], stride[2], padding[1], padding[2], dilation[1], dilation[2], groups,
      out_sp[1], out_sp[2])
  end
  if not batched then out = out:squeeze(1) end
  return out
end

local CONVT_ARGS = { "bias", "stride", "padding", "output_padding", "groups", "dilation", first = 3 }
function F.conv_transpose1d(x, w, ...)
  local a = args_of("nn.functional.conv_transpose1d", CONVT_ARGS, ...)
  return conv_transpose_nd("conv_transpose1d", 1, x, w, a.bias, a.stride, a.padding, a.output_padding, a.groups, a.dilation)
end
function F.conv_transpose2d(x, w, ...)
  local a = args_of("nn.functional.conv_transpose2d", CONVT_ARGS, ...)
  return conv_transpose_nd("conv_transpose2d", 2, x, w, a.bias, a.stride, a.padding, a.output_padding, a.groups, a.dilation)
end
return true
