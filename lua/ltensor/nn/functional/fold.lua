-- ltensor.nn.functional.fold: pixel_shuffle/unshuffle, unfold, fold.
local T = require "ltensor.core"
local U = require "ltensor.nn.functional.conv_util"
local float_only, UNFOLD_ARGS = U.float_only, U.UNFOLD_ARGS
local F = require("ltensor.nn.functional.common").F
local math = U.math
local mtype, unpack = U.mtype, U.unpack
local fail, typename, check_t = U.fail, U.typename, U.check_t
local args_of = U.args_of
local ntuple = U.ntuple
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- pixel shuffle, unfold/fold (views and convolutions: autograd for free)
---------------------------------------------------------------------------
-- pixel_shuffle's and pixel_unshuffle's shared checks: x a tensor of 3 or
-- more dims, r a positive integer factor; the shape, its rank and the
-- product of the leading (batch) dims
local function shuffle_args(fname, x, r, what)
  check_t(fname, 1, "input", x)
  if mtype(r) ~= "integer" then fail(fname, ("bad argument #2 '%s' (integer expected, got %s)"):format(what, typename(r))) end
  if r <= 0 then fail(fname, what .. " must be greater than 0, but got " .. r) end
  local s = x.shape
  local nd = #s
  if nd < 3 then
    fail(fname, ("%s expects input to have at least 3 dimensions, but got input with %d dimension(s)"):format(fname, nd))
  end
  local lead = 1
  for i = 1, nd - 3 do lead = lead * s[i] end
  return s, nd, lead
end
function F.pixel_shuffle(x, r)
  local fname = "pixel_shuffle"
  local s, nd, lead = shuffle_args(fname, x, r, "upscale_factor")
  local c, h, w = s[nd - 2], s[nd - 1], s[nd]
  -- a factor whose square does not fit an integer divides no channel count
  local big = r > 3037000499
  if big or c % (r * r) ~= 0 then
    fail(fname, ("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, " ..
      "but input.size(-3)=%d is not divisible by %s"):format(c, big and ("%d^2"):format(r) or ("%d"):format(r * r)))
  end
  local oc = math.floor(c / (r * r))
  local y = x:reshape(lead, oc, r, r, h, w):permute(1, 2, 5, 3, 6, 4)
  local shape = { unpack(s, 1, nd - 3) }
  shape[#shape + 1], shape[#shape + 2], shape[#shape + 3] = oc, h * r, w * r
  return y:reshape(shape)
end
function F.pixel_unshuffle(x, r)
  local fname = "pixel_unshuffle"
  local s, nd, lead = shuffle_args(fname, x, r, "downscale_factor")
  local c, h, w = s[nd - 2], s[nd - 1], s[nd]
  if h % r ~= 0 then
    fail(fname, ("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%d is not divisible by %d"):format(h, r))
  end
  if w % r ~= 0 then
    fail(fname, ("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%d is not divisible by %d"):format(w, r))
  end
  local y = x:reshape(lead, c, math.floor(h / r), r, math.floor(w / r), r):permute(1, 2, 4, 6, 3, 5)
  local shape = { unpack(s, 1, nd - 3) }
  shape[#shape + 1], shape[#shape + 2], shape[#shape + 3] = c * r * r, math.floor(h / r), math.floor(w / r)
  return y:reshape(shape)
end

-- the (kh*kw, 1, kh, kw) one-hot weight that makes a convolution an im2col
local function eye_kernel(kh, kw, dtype)
  return T.eye(kh * kw, { dtype = dtype }):reshape(kh * kw, 1, kh, kw)
end
-- PyTorch's im2col/col2im argument checks
local BIG = 2147483648   -- 2^31
local function fold_checks(fname, k, d, p, s)
  if k[1] <= 0 or k[2] <= 0 then
    fail(fname, ("kernel size should be greater than zero, but got kernel_height: %d kernel_width: %d"):format(k[1], k[2]))
  end
  if s[1] <= 0 or s[2] <= 0 then
    fail(fname, ("stride should be greater than zero, but got dH: %d dW: %d"):format(s[1], s[2]))
  end
  if d[1] <= 0 or d[2] <= 0 then
    fail(fname, ("dilation should be greater than zero, but got dilation_height: %d dilation_width: %d"):format(d[1], d[2]))
  end
  if p[1] < 0 or p[2] < 0 then
    fail(fname, ("padding should be non-negative, but got pad_height: %d pad_width: %d"):format(p[1], p[2]))
  end
  for _, v in ipairs { k[1], k[2], d[1], d[2], p[1], p[2], s[1], s[2] } do
    if v >= BIG then fail(fname, "kernel_size, dilation, padding and stride must be below 2^31, got " .. v) end
  end
end
function F.unfold(x, kernel_size, ...)
  local fname = "unfold"
  local a = args_of("nn.functional.unfold", UNFOLD_ARGS, ...)
  check_t(fname, 1, "input", x)
  local xd = x:dim()
  if xd ~= 3 and xd ~= 4 then
    fail(fname, ("Input Error: Only 3D or 4D input Tensors are supported (got %dD)"):format(xd))
  end
  float_only(fname, "im2col", x)
  local batched = xd == 4
  local x4 = batched and x or x:unsqueeze(1)
  local k = ntuple(fname, "kernel_size", kernel_size, 2)
  local d = ntuple(fname, "dilation", a.dilation or 1, 2)
  local p = ntuple(fname, "padding", a.padding or 0, 2)
  local s = ntuple(fname, "stride", a.stride or 1, 2)
  fold_checks(fname, k, d, p, s)
  local N, C, H, W = x4:size(1), x4:size(2), x4:size(3), x4:size(4)
  local oh = math.floor((H + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) / s[1]) + 1
  local ow = math.floor((W + 2 * p[2] - (d[2] * (k[2] - 1) + 1)) / s[2]) + 1
  if oh < 1 or ow < 1 then
    fail(fname, ("Given input with spatial size (%d, %d), kernel_size=(%d, %d), dilation=(%d, %d), padding=(%d, %d), " ..
      "calculated shape of the array of sliding blocks as (%d, %d), but its components must be at least one."):format(
      H, W, k[1], k[2], d[1], d[2], p[1], p[2], oh, ow))
  end
  local cols = T._conv_small(x4:reshape(N * C, 1, H, W), eye_kernel(k[1], k[2], x.dtype), nil, s[1], s[2], p[1], p[2],
    d[1], d[2], 1, oh, ow)
  cols = cols:reshape(N, C * k[1] * k[2], oh * ow)
  if not batched then cols = cols:squeeze(1) end
  return cols
end
function F.fold(x, output_size, kernel_size, ...)
  local fname = "fold"
  local a = args_of("nn.functional.fold", UNFOLD_ARGS, ...)
  check_t(fname, 1, "input", x)
  local xd = x:dim()
  if xd ~= 2 and xd ~= 3 then
    fail(fname, ("Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got %dD)"):format(xd))
  end
  float_only(fname, "col2im", x)
  local batched = xd == 3
  local x3 = batched and x or x:unsqueeze(1)
  local o = ntuple(fname, "output_size", output_size, 2)
  local k = ntuple(fname, "kernel_size", kernel_size, 2)
  local d = ntuple(fname, "dilation", a.dilation or 1, 2)
  local p = ntuple(fname, "padding", a.padding or 0, 2)
  local s = ntuple(fname, "stride", a.stride or 1, 2)
  fold_checks(fname, k, d, p, s)
  if o[1] <= 0 or o[2] <= 0 or o[1] >= BIG or o[2] >= BIG then
    fail(fname, ("output_size must be positive and below 2^31, got (%d, %d)"):format(o[1], o[2]))
  end
  local N, CK, L = x3:size(1), x3:size(2), x3:size(3)
  local kk = k[1] * k[2]
  if CK % kk ~= 0 then
    fail(fname, ("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got " ..
      "input.size(1)=%d and kernel_size=(%d, %d)"):format(CK, k[1], k[2]))
  end
  local oh = math.floor((o[1] + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) / s[1]) + 1
  local ow = math.floor((o[2] + 2 * p[2] - (d[2] * (k[2] - 1) + 1)) / s[2]) + 1
  if oh * ow ~= L then
    fail(fname, ("Given output_size=(%d, %d), kernel_size=(%d, %d), dilation=(%d, %d), padding=(%d, %d), stride=(%d, %d), " ..
      "expected size of input's dimension 2 to match the calculated number of sliding blocks %d * %d = %d, but got input.size(2)=%d."):format(
      o[1], o[2], k[1], k[2], d[1], d[2], p[1], p[2], s[1], s[2], oh, ow, oh * ow, L))
  end
  local C = math.floor(CK / kk)
  local img = T._conv_big(x3:reshape(N * C, kk, oh, ow), eye_kernel(k[1], k[2], x.dtype), nil, s[1], s[2], p[1], p[2],
    d[1], d[2], 1, o[1], o[2])
  img = img:reshape(N, C, o[1], o[2])
  if not batched then img = img:squeeze(1) end
  return img
end
return true
