-- ltensor.nn_conv: convolutions, pooling and resampling for T.nn.functional
-- and T.nn (Conv1d/2d, ConvTranspose1d/2d, Max/Avg/Adaptive pools, Upsample,
-- PixelShuffle/PixelUnshuffle, EmbeddingBag, Unfold/Fold).
--
-- The arithmetic is in C (src/lt_conv.c through the raw T._conv_* / T._*pool*
-- / T._interp functions of src/l_conv.c), always on NCHW float tensors: this
-- file checks the user's arguments with PyTorch's messages, works out output
-- sizes, turns 1-D and unbatched inputs into that layout (views, so autograd
-- follows) and registers the backward rules of the raw functions.
--
-- Call forms follow PyTorch's positional arguments; an options table may
-- follow any prefix of them: F.conv2d(x, w, b, {stride = 2, padding = "same"}).
-- Indices are 1-based: max_pool's return_indices are 1-based flat positions
-- within each input plane, embedding_bag's indices (and offsets, the 1-based
-- position where each bag starts in a 1-D input) too.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table, rawlen = compat.math, compat.table, compat.rawlen
local F = require "ltensor.functional"
local nn = require "ltensor.nn"
local autograd = T.autograd

local TMT = T._metatable
local getmetatable, type, select, mtype = getmetatable, type, select, math.type
local floor, sqrt = math.floor, math.sqrt
local concat, unpack = table.concat, table.unpack

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.functional.")
local typename = util.mtname
local function check_t(fname, n, name, x, optional)
  if x == nil and optional then return end
  if not is_t(x) then fail(fname, ("bad argument #%d '%s' (Tensor expected, got %s)"):format(n, name, typename(x))) end
end
local function tname(t) return util.torch_name(t.dtype) end
local function is_float(t) local n = t.dtype.name return n == "float32" or n == "float64" end
local function size_str(s) return "[" .. concat(s, ", ") .. "]" end
local function tuple_str(v)
  if type(v) ~= "table" then return tostring(v) end
  if #v == 1 then return "(" .. tostring(v[1]) .. ",)" end
  return "(" .. concat(v, ", ") .. ")"
end

-- An options table (string keys only), as opposed to a positional {1, 2}.
local function is_opts(v)
  return type(v) == "table" and getmetatable(v) == nil and rawlen(v) == 0
end
-- Positional arguments named by `names`, then an optional options table
-- whose keys must be among `names` (or names.extra: keyword-only ones such
-- as a module's dtype); an unknown key raises "ltensor.<fname>: unknown
-- option 'x' (did you mean 'y'?)" as everywhere else in the library.
local function known_of(names)
  local k = names.known
  if not k then
    k = {}
    for i = 1, #names do k[i] = names[i] end
    for _, e in ipairs(names.extra or {}) do k[#k + 1] = e end
    names.known = k
  end
  return k
end
-- the flags, booleans as PyTorch's ({ceil_mode = 1} is a slip, not true)
local BOOL_ARGS = { ceil_mode = true, return_indices = true, count_include_pad = true }
local function args_of(fname, names, ...)
  local a, n = {}, select("#", ...)
  for i = 1, n do
    local v = select(i, ...)
    if is_opts(v) and not is_t(v) then
      T._check_opts(fname, v, known_of(names))
      for k, x in next, v do a[k] = x end
      break
    end
    if names[i] == nil then break end
    a[names[i]] = v
  end
  for k in next, BOOL_ARGS do
    if a[k] ~= nil and type(a[k]) ~= "boolean" then
      error(("ltensor.%s: bad option '%s' (boolean expected, got %s)"):format(fname, k, typename(a[k])), 0)
    end
  end
  return a
end

-- n integers from a number or a list of 1 or n numbers
local function ntuple(fname, name, v, n, msg_kind)
  local out = {}
  if mtype(v) == "integer" then
    for i = 1, n do out[i] = v end
    return out
  end
  if type(v) == "table" and not is_t(v) then
    if #v == 1 and mtype(v[1]) == "integer" then for i = 1, n do out[i] = v[1] end return out end
    if #v == n then
      for i = 1, n do
        if mtype(v[i]) ~= "integer" then break end
        out[i] = v[i]
      end
      if #out == n then return out end
    end
    if msg_kind == "conv" then
      local shown = {}
      for i = 1, #v do shown[i] = tostring(v[i]) end
      fail(fname, ("expected %s to be a single integer value or a list of %d values to match the convolution " ..
        "dimensions, but got %s=[%s]"):format(name, n, name, concat(shown, ", ")))
    end
  end
  fail(fname, ("bad argument '%s' (an integer or a list of %d integers expected, got %s)"):format(name, n,
    type(v) == "table" and "a table of " .. #v or typename(v)))
end

-- The autograd engine's need(): does input i want a gradient?
local function need(n, i)
  local m = n.need
  if m == nil then return true end
  if mtype(m) == "integer" then return compat.bit(m, i) end
  return m[i] == true
end

local rules = autograd.rules

---------------------------------------------------------------------------
-- convolution
---------------------------------------------------------------------------
-- _conv_small (small = conv(big)) and _conv_big (big = conv_transpose(small))
-- are each other's input gradient; the weight gradient is _conv_wgrad(big,
-- small) for both.  inputs (x, w, bias); x is big for _conv_small, small for
-- _conv_big.
local function conv_pair_rule(dual, x_is_big)
  local function backward(n, g)
    local x, w = n.saved[1], n.saved[2]
    local p = n.p
    local gx, gw, gb
    if need(n, 1) then gx = T[dual](g, w, nil, p[1], p[2], p[3], p[4], p[5], p[6], p[7], x:size(3), x:size(4)) end
    if need(n, 2) then
      local big, small = x, g
      if not x_is_big then big, small = g, x end
      gw = T._conv_wgrad(big, small, w:size(3), w:size(4), p[1], p[2], p[3], p[4], p[5], p[6], p[7])
    end
    if n.has_bias and need(n, 3) then gb = T.sum(g, { 1, 3, 4 }) end
    return gx, gw, gb
  end
  return function(raw, x, w, b, sh, sw, ph, pw, dh, dw, G, H, W)
    local out = raw(x, w, b, sh, sw, ph, pw, dh, dw, G, H, W)
    return { name = "ConvolutionBackward0", inputs = { x, w, b }, saved = { x, w, n = 2 },
      p = { sh, sw, ph, pw, dh, dw, G }, has_bias = b ~= nil, backward = backward }, out
  end
end
rules._conv_small = conv_pair_rule("_conv_big", true)
rules._conv_big = conv_pair_rule("_conv_small", false)

-- dtype checks shared by the convolutions: returns "float" or "int"
-- gw = conv_wgrad(big, small) is bilinear: its gradients are the forward
-- convolutions with ggw as the weight (double backward of conv weights)
rules._conv_wgrad = function(raw, big, small, kh, kw, sh, sw, ph, pw, dh, dw, G)
  local out = raw(big, small, kh, kw, sh, sw, ph, pw, dh, dw, G)
  return { name = "ConvolutionBackwardBackward0", inputs = { big, small }, saved = { big, small, n = 2 },
    p = { sh, sw, ph, pw, dh, dw, G }, backward = function(n, gg)
      local b, sm, p = n.saved[1], n.saved[2], n.p
      local gb, gs
      if need(n, 1) then gb = T._conv_big(sm, gg, nil, p[1], p[2], p[3], p[4], p[5], p[6], p[7], b:size(3), b:size(4)) end
      if need(n, 2) then gs = T._conv_small(b, gg, nil, p[1], p[2], p[3], p[4], p[5], p[6], p[7], sm:size(3), sm:size(4)) end
      return gb, gs
    end }, out
end

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

local CONV_ARGS = { "bias", "stride", "padding", "dilation", "groups" }
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

local CONVT_ARGS = { "bias", "stride", "padding", "output_padding", "groups", "dilation" }
function F.conv_transpose1d(x, w, ...)
  local a = args_of("nn.functional.conv_transpose1d", CONVT_ARGS, ...)
  return conv_transpose_nd("conv_transpose1d", 1, x, w, a.bias, a.stride, a.padding, a.output_padding, a.groups, a.dilation)
end
function F.conv_transpose2d(x, w, ...)
  local a = args_of("nn.functional.conv_transpose2d", CONVT_ARGS, ...)
  return conv_transpose_nd("conv_transpose2d", 2, x, w, a.bias, a.stride, a.padding, a.output_padding, a.groups, a.dilation)
end

---------------------------------------------------------------------------
-- pooling
---------------------------------------------------------------------------
local function max_pool_bw(n, g)
  local s = n.in_shape
  return T._max_pool_bwd(g, n.saved[1], s[3], s[4], n.tiled)
end
rules._max_pool2d = function(raw, x, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, want_idx)
  -- 2x2 windows of stride 2 tile the input: the backward writes it in one pass
  -- (a ceil_mode window past the edge is not a tile)
  local tiled = kh == 2 and kw == 2 and sh == 2 and sw == 2 and ph == 0 and pw == 0 and dh == 1 and dw == 1 and
    2 * Ho <= x:size(3) and 2 * Wo <= x:size(4)
  if tiled and want_idx == false then
    -- the caller drops the indices: keep one byte per output (the winning
    -- tap), not an int64 index, and hand back the values alone
    local out, codes = raw(x, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, "codes")
    return { name = "MaxPool2DWithIndicesBackward0", inputs = { x }, saved = { codes, n = 1 }, in_shape = x.shape,
      tiled = true, backward = max_pool_bw }, out
  end
  local out, idx = raw(x, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, true)
  return { name = "MaxPool2DWithIndicesBackward0", inputs = { x }, saved = { idx, n = 1 }, in_shape = x.shape,
    tiled = tiled, nondiff = { [2] = true }, backward = max_pool_bw }, out, idx
end
rules._adaptive_max_pool2d = function(raw, x, ...)
  local out, idx = raw(x, ...)
  return { name = "AdaptiveMaxPool2DBackward0", inputs = { x }, saved = { idx, n = 1 }, in_shape = x.shape,
    nondiff = { [2] = true }, backward = max_pool_bw }, out, idx
end
rules._avg_pool2d = function(raw, x, kh, kw, sh, sw, ph, pw, Ho, Wo, cip, div)
  local out = raw(x, kh, kw, sh, sw, ph, pw, Ho, Wo, cip, div)
  return { name = "AvgPool2DBackward0", inputs = { x }, in_shape = x.shape, p = { kh, kw, sh, sw, ph, pw }, cip = cip,
    div = div, backward = function(n, g)
      local s, p = n.in_shape, n.p
      return T._avg_pool2d_bwd(g, s[3], s[4], p[1], p[2], p[3], p[4], p[5], p[6], n.cip, n.div)
    end }, out
end
rules._adaptive_avg_pool2d = function(raw, x, Ho, Wo)
  local out = raw(x, Ho, Wo)
  return { name = "AdaptiveAvgPool2DBackward0", inputs = { x }, in_shape = x.shape, backward = function(n, g)
    return T._adaptive_avg_pool2d_bwd(g, n.in_shape[3], n.in_shape[4])
  end }, out
end

local function pool_out(inn, k, s, p, d, ceil)
  local o = math.floor((inn + 2 * p - d * (k - 1) - 1 + (ceil and s - 1 or 0)) / s) + 1
  if ceil and (o - 1) * s >= inn + p then o = o - 1 end
  return o
end

local function float_only(fname, kname, x)
  if not is_float(x) then fail(fname, ('"%s" not implemented for \'%s\''):format(kname, tname(x))) end
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
  local batched = xd == nd + 2
  local x4 = batched and x or x:unsqueeze(1)
  if nd == 1 then x4 = x4:unsqueeze(3) end
  return x4, batched
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

local MAXPOOL_ARGS = { "stride", "padding", "dilation", "ceil_mode", "return_indices" }
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

local AVGPOOL_ARGS = { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }
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
  local batched = xd == nd + 2
  local x4 = batched and x or x:unsqueeze(1)
  if nd == 1 then x4 = x4:unsqueeze(3) end
  return x4, batched
end
local function adaptive_avg(fname, nd, x, size)
  local x4, batched = adaptive_input(fname, nd, x)
  float_only(fname, "adaptive_avg_pool2d", x)
  local Ho, Wo = adaptive_size(fname, nd, x4, size)
  return pool_result(T._adaptive_avg_pool2d(x4, Ho, Wo), nd, batched)
end
local function adaptive_max(fname, nd, x, size, ...)
  local a = args_of("nn.functional." .. fname, { "return_indices" }, ...)
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

---------------------------------------------------------------------------
-- interpolate
---------------------------------------------------------------------------
local INTERP_NAMES = { [0] = "UpsampleNearest2DBackward0", "UpsampleBilinear2DBackward0", "UpsampleBicubic2DBackward0",
  "UpsampleNearestExact2DBackward0" }
rules._interp = function(raw, x, Ho, Wo, mode, align, sh, sw, copy)
  local out = raw(x, Ho, Wo, mode, align, sh, sw, copy)
  return { name = INTERP_NAMES[mode] or "UpsampleBackward0", inputs = { x },
    in_shape = x.shape, p = { mode, align, sh, sw, copy }, backward = function(n, g)
      local s, p = n.in_shape, n.p
      return T._interp_bwd(g, s[3], s[4], p[1], p[2], p[3], p[4], p[5])
    end }, out
end

-- the backward is linear in its gradient: its own gradient is the forward
-- (double backward through interpolate)
rules._interp_bwd = function(raw, g, Hi, Wi, mode, align, sh, sw, copy)
  local out = raw(g, Hi, Wi, mode, align, sh, sw, copy)
  return { name = "UpsampleBackwardBackward0", inputs = { g }, out_hw = { g:size(3), g:size(4) },
    p = { mode, align, sh, sw, copy }, backward = function(n, gg)
      local p = n.p
      return T._interp(gg, n.out_hw[1], n.out_hw[2], p[1], p[2], p[3], p[4], p[5])
    end }, out
end

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

local INTERP_ARGS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias" }
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

---------------------------------------------------------------------------
-- pixel shuffle, unfold/fold (views and convolutions: autograd for free)
---------------------------------------------------------------------------
local function check_factor(fname, r, what)
  if mtype(r) ~= "integer" then fail(fname, ("bad argument #2 '%s' (integer expected, got %s)"):format(what, typename(r))) end
  if r <= 0 then fail(fname, what .. " must be greater than 0, but got " .. r) end
end
function F.pixel_shuffle(x, r)
  local fname = "pixel_shuffle"
  check_t(fname, 1, "input", x)
  check_factor(fname, r, "upscale_factor")
  local s = x.shape
  local nd = #s
  if nd < 3 then
    fail(fname, ("pixel_shuffle expects input to have at least 3 dimensions, but got input with %d dimension(s)"):format(nd))
  end
  local c, h, w = s[nd - 2], s[nd - 1], s[nd]
  -- a factor whose square does not fit an integer divides no channel count
  local big = r > 3037000499
  if big or c % (r * r) ~= 0 then
    fail(fname, ("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, " ..
      "but input.size(-3)=%d is not divisible by %s"):format(c, big and ("%d^2"):format(r) or ("%d"):format(r * r)))
  end
  local lead = 1
  for i = 1, nd - 3 do lead = lead * s[i] end
  local oc = math.floor(c / (r * r))
  local y = x:reshape(lead, oc, r, r, h, w):permute(1, 2, 5, 3, 6, 4)
  local shape = { unpack(s, 1, nd - 3) }
  shape[#shape + 1], shape[#shape + 2], shape[#shape + 3] = oc, h * r, w * r
  return y:reshape(shape)
end
function F.pixel_unshuffle(x, r)
  local fname = "pixel_unshuffle"
  check_t(fname, 1, "input", x)
  check_factor(fname, r, "downscale_factor")
  local s = x.shape
  local nd = #s
  if nd < 3 then
    fail(fname, ("pixel_unshuffle expects input to have at least 3 dimensions, but got input with %d dimension(s)"):format(nd))
  end
  local c, h, w = s[nd - 2], s[nd - 1], s[nd]
  if h % r ~= 0 then
    fail(fname, ("pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%d is not divisible by %d"):format(h, r))
  end
  if w % r ~= 0 then
    fail(fname, ("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%d is not divisible by %d"):format(w, r))
  end
  local lead = 1
  for i = 1, nd - 3 do lead = lead * s[i] end
  local y = x:reshape(lead, c, math.floor(h / r), r, math.floor(w / r), r):permute(1, 2, 4, 6, 3, 5)
  local shape = { unpack(s, 1, nd - 3) }
  shape[#shape + 1], shape[#shape + 2], shape[#shape + 3] = c * r * r, math.floor(h / r), math.floor(w / r)
  return y:reshape(shape)
end

-- the (kh*kw, 1, kh, kw) one-hot weight that makes a convolution an im2col
local function eye_kernel(kh, kw, dtype)
  return T.eye(kh * kw, { dtype = dtype }):reshape(kh * kw, 1, kh, kw)
end
local UNFOLD_ARGS = { "dilation", "padding", "stride" }
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

---------------------------------------------------------------------------
-- embedding_bag
---------------------------------------------------------------------------
local EBAG_ARGS = { "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
  "include_last_offset", "padding_idx" }
-- padding_idx, 1-based (negative counts from the end, -1 the last row), as
-- a positive row number or nil
local function ebag_padding_idx(fname, p, num)
  if p == nil then return nil end
  if mtype(p) ~= "integer" then fail(fname, "padding_idx must be an integer, got " .. typename(p)) end
  if p == 0 or p > num or p < -num then
    fail(fname, ("padding_idx must be within the number of embeddings, -%d through %d (1-based, not 0), but got %d"):format(
      num, num, p))
  end
  return p < 0 and num + 1 + p or p
end
-- max_norm: the looked-up rows whose norm exceeds it are scaled, in place
-- and outside autograd, to max_norm / (norm + 1e-7) (embedding_renorm_)
local function ebag_renorm(weight, flat, max_norm, norm_type)
  if flat:numel() == 0 then return end
  T.no_grad(function()
    local u = T.unique(flat)
    local rows = weight:index_select(1, u)
    local norms = T.norm(rows, norm_type, 2, true)
    local scale = T.where(T.gt(norms, max_norm), max_norm / (norms + 1e-7), T.ones_like(norms))
    weight:index_copy_(1, u, rows * scale)
  end)
end
-- sum / mean / max of rows over dim d, skipping the entries whose keep is false
local function ebag_reduce(rows, keep, mode, d)
  if keep == nil then
    if mode == "sum" then return rows:sum(d) end
    if mode == "mean" then return rows:mean(d) end
    return (rows:max(d))
  end
  local k = keep:to(rows.dtype)
  if mode == "sum" then return (rows * k):sum(d) end
  local cnt = k:sum(d)
  if mode == "mean" then return (rows * k):sum(d) / T.clamp(cnt, 1) end
  local m = (T.where(keep, rows, -math.huge):max(d))
  return T.where(T.gt(cnt, 0), m, 0)
end
function F.embedding_bag(input, weight, ...)
  local fname = "embedding_bag"
  local a = args_of("nn.functional.embedding_bag", EBAG_ARGS, ...)
  check_t(fname, 1, "input", input)
  check_t(fname, 2, "weight", weight)
  local mode = a.mode or "mean"
  if mode ~= "sum" and mode ~= "mean" and mode ~= "max" then fail(fname, "mode has to be one of sum, mean or max") end
  if weight:dim() ~= 2 then fail(fname, "weight has to be a 2D Tensor, but got Tensor of dimension " .. weight:dim()) end
  local iname = input.dtype.name
  if iname ~= "int64" and iname ~= "int32" then
    fail(fname, ("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got %s instead"):format(
      "torch." .. tname(input) .. "Tensor"))
  end
  local offsets, psw = a.offsets, a.per_sample_weights
  if psw ~= nil and mode ~= "sum" then
    fail(fname, ("embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for " ..
      "mode='sum' (got mode='%s'). Please open a feature request on GitHub."):format(mode))
  end
  local num, D = weight:size(1), weight:size(2)
  local flat
  if input:dim() == 2 then
    if offsets ~= nil then
      fail(fname, "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length " ..
        "sequences. However, found offsets of type Tensor")
    end
    flat = input:reshape(-1)
  elseif input:dim() == 1 then
    if not is_t(offsets) or offsets:dim() ~= 1 then
      fail(fname, "offsets has to be a 1D Tensor but got " .. (offsets == nil and "None" or typename(offsets)))
    end
    flat = input
  else
    fail(fname, "input has to be 1D or 2D Tensor, but got Tensor of dimension " .. input:dim())
  end
  if psw ~= nil then
    check_t(fname, 7, "per_sample_weights", psw)
    if psw:numel() ~= input:numel() then
      fail(fname, "embedding_bag: If per_sample_weights (" .. size_str(psw.shape) ..
        ") is not None, then it must have the same shape as the input (" .. size_str(input.shape) .. ")")
    end
  end
  if flat:numel() > 0 then
    local lo, hi = flat:min():item(), flat:max():item()
    if lo < 1 or hi > num then
      fail(fname, ("index %d is out of bounds for the embedding of %d rows (indices are 1-based)"):format(lo < 1 and lo or hi, num))
    end
  end
  local pad = ebag_padding_idx(fname, a.padding_idx, num)
  if a.max_norm ~= nil then
    if type(a.max_norm) ~= "number" then fail(fname, "max_norm must be a number, got " .. typename(a.max_norm)) end
    local nt = a.norm_type == nil and 2 or a.norm_type
    if type(nt) ~= "number" then fail(fname, "norm_type must be a number, got " .. typename(nt)) end
    ebag_renorm(weight, flat, a.max_norm, nt)
  end
  local rows = weight:index_select(1, flat)
  if psw ~= nil then rows = rows * psw:reshape(-1):unsqueeze(2):to(rows.dtype) end
  -- entries equal to padding_idx leave their bag: they add nothing to a sum
  -- or a max and are not counted by a mean (an all-padding bag is zeros)
  local keep = pad and T.ne(flat, pad):unsqueeze(2) or nil
  if input:dim() == 2 then
    local B, L = input:size(1), input:size(2)
    rows = rows:reshape(B, L, D)
    if L == 0 then return T.zeros({ B, D }, { dtype = weight.dtype }) end
    return ebag_reduce(rows, keep and keep:reshape(B, L, 1), mode, 2)
  end
  -- 1-D input with offsets: bag b holds positions offsets[b] .. offsets[b+1]-1 (1-based)
  local offs = offsets:to(T.int64)
  local nb = offs:numel()
  if a.include_last_offset then nb = nb - 1 end
  local n = flat:numel()
  local ot = offs:totable()
  if nb > 0 and ot[1] ~= 1 then fail(fname, "offsets[1] has to be 1, i.e., the first sequence in the mini-batch has to start from position 1") end
  local out_rows = {}
  for b = 1, nb do
    local s = ot[b]
    local e = (b < #ot) and ot[b + 1] - 1 or n
    if a.include_last_offset and b == nb then e = ot[b + 1] - 1 end
    if e > n then e = n end
    if s < 1 or s > e + 1 then fail(fname, "offsets must be non-decreasing and within the input") end
    local len = e - s + 1
    local r
    if len == 0 then r = T.zeros({ D }, { dtype = weight.dtype })
    else r = ebag_reduce(rows:narrow(1, s, len), keep and keep:narrow(1, s, len), mode, 1) end
    out_rows[b] = r
  end
  if nb == 0 then return T.zeros({ 0, D }, { dtype = weight.dtype }) end
  return T.stack(out_rows, 1)
end

---------------------------------------------------------------------------
-- modules
---------------------------------------------------------------------------
local Module = nn.Module
local function mfail(cls, msg) error("ltensor.nn." .. cls .. ": " .. msg, 0) end
local function init_uniform(shape, bound, dtype)
  return T.no_grad(function()
    local t = T.rand(shape, dtype and { dtype = dtype } or nil)
    return t * (2 * bound) - bound
  end)
end
local function pos_int(cls, name, v)
  if mtype(v) ~= "integer" or v <= 0 then
    mfail(cls, ("bad argument '%s' (positive integer expected, got %s)"):format(name, mtype(v) and tostring(v) or typename(v)))
  end
end
local function is_default(v, d)
  if type(v) ~= "table" then return v == d end
  for i = 1, #v do if v[i] ~= d then return false end end
  return true
end

-- padding_mode ~= "zeros": pad with index_select (differentiable) before a
-- convolution with no padding.  pads[i] = {before, after} of spatial dim i.
local function pad_index(n, before, after, mode)
  local idx = {}
  for j = 1, n + before + after do
    local i = j - before - 1                      -- 0-based source position
    if mode == "reflect" then
      if n == 1 then i = 0 else
        local period = 2 * (n - 1)
        i = i % period
        if i >= n then i = period - i end
      end
    elseif mode == "replicate" then
      i = i < 0 and 0 or (i >= n and n - 1 or i)
    else                                          -- circular
      i = i % n
    end
    idx[j] = i + 1
  end
  return T.tensor(idx, { dtype = T.int64 })
end
local function pad_mode(cls, x, pads, mode)
  local nd = #pads
  for i = 1, nd do
    local dim = x:dim() - nd + i
    local n = x:size(dim)
    local b, a = pads[i][1], pads[i][2]
    if b > 0 or a > 0 then
      if mode == "reflect" and (b >= n or a >= n) then
        mfail(cls, ("Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%d, %d) at dimension %d of input %s"):format(
          b, a, dim, size_str(x.shape)))
      end
      if mode == "circular" and (b > n or a > n) then
        mfail(cls, "Padding value causes wrapping around more than once.")
      end
      x = x:index_select(dim, pad_index(n, b, a, mode))
    end
  end
  return x
end

local function conv_module(cls, nd, transposed)
  local C = Module:extend(cls)
  nn[cls] = C
  local ARGS = transposed and { "stride", "padding", "output_padding", "groups", "bias", "dilation", "padding_mode" }
    or { "stride", "padding", "dilation", "groups", "bias", "padding_mode" }
  ARGS.extra = { "dtype" }
  function C:init(in_channels, out_channels, kernel_size, ...)
    local a = args_of("nn." .. cls, ARGS, ...)
    pos_int(cls, "in_channels", in_channels)
    pos_int(cls, "out_channels", out_channels)
    local groups = a.groups or 1
    pos_int(cls, "groups", groups)
    if in_channels % groups ~= 0 then mfail(cls, "in_channels must be divisible by groups") end
    if out_channels % groups ~= 0 then mfail(cls, "out_channels must be divisible by groups") end
    local k = ntuple(cls, "kernel_size", kernel_size, nd)
    local padding = a.padding or 0
    local padding_mode = a.padding_mode or "zeros"
    local valid = { zeros = true, reflect = true, replicate = true, circular = true }
    if not valid[padding_mode] then
      mfail(cls, "padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode='" ..
        tostring(padding_mode) .. "'")
    end
    self.stride = ntuple(cls, "stride", a.stride or 1, nd)
    self.dilation = ntuple(cls, "dilation", a.dilation or 1, nd)
    if type(padding) == "string" then
      if transposed then mfail(cls, "padding='" .. padding .. "' is not supported for transposed convolutions") end
      if padding ~= "same" and padding ~= "valid" then
        mfail(cls, "Invalid padding string '" .. padding .. "', should be one of {'valid', 'same'}")
      end
      if padding == "same" and not is_default(self.stride, 1) then
        mfail(cls, "padding='same' is not supported for strided convolutions")
      end
      self.padding = padding
    else
      self.padding = ntuple(cls, "padding", padding, nd)
    end
    if transposed then
      self.output_padding = ntuple(cls, "output_padding", a.output_padding or 0, nd)
      if padding_mode ~= "zeros" then mfail(cls, 'Only "zeros" padding mode is supported for ' .. cls) end
    end
    self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
    self.groups, self.padding_mode = groups, padding_mode
    local wshape = transposed and { in_channels, math.floor(out_channels / groups) } or { out_channels, math.floor(in_channels / groups) }
    local fan_in = wshape[2]
    for i = 1, nd do wshape[#wshape + 1] = k[i] fan_in = fan_in * k[i] end
    local bound = fan_in > 0 and 1 / sqrt(fan_in) or 0
    self.weight = nn.Parameter(init_uniform(wshape, bound, a.dtype))
    local bias = a.bias
    if bias == nil then bias = true end
    if bias then self.bias = nn.Parameter(init_uniform({ out_channels }, bound, a.dtype)) end
    -- the padding the non-"zeros" modes apply themselves
    if padding_mode ~= "zeros" then
      local pads = {}
      for i = 1, nd do
        if self.padding == "same" then
          local total = self.dilation[i] * (k[i] - 1)
          pads[i] = { math.floor(total / 2), total - math.floor(total / 2) }
        elseif self.padding == "valid" then pads[i] = { 0, 0 }
        else pads[i] = { self.padding[i], self.padding[i] } end
      end
      self._pads = pads
    end
  end
  local fn = transposed and (nd == 1 and F.conv_transpose1d or F.conv_transpose2d) or (nd == 1 and F.conv1d or F.conv2d)
  if transposed then
    function C:forward(x, output_size)
      local op = self.output_padding
      if output_size ~= nil then
        -- PyTorch's _output_padding: pick the output_padding that gives output_size
        local sp = output_size
        if #sp > nd then sp = { unpack(sp, #sp - nd + 1) } end
        op = {}
        for i = 1, nd do
          local inn = x:size(x:dim() - nd + i)
          local min = (inn - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
          op[i] = sp[i] - min
          if op[i] < 0 or op[i] >= math.max(self.stride[i], self.dilation[i]) then
            mfail(cls, ("requested an output size of %s, but valid sizes range from %d to %d (for an input of %s)"):format(
              size_str(sp), min, min + math.max(self.stride[i], self.dilation[i]) - 1, size_str({ unpack(x.shape, x:dim() - nd + 1) })))
          end
        end
      end
      return fn(x, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)
    end
  else
    -- 4-D float input of the right channels: straight to the kernel (the
    -- per-frame case, where argument handling would dominate); anything
    -- else goes through the functional form and its checks and messages
    local fast = nd == 2
    function C:forward(x)
      -- (the parameters read from their registry: the module's __index
      -- costs ~50 ns a lookup, and this path is the per-frame one)
      local pm = rawget(self, "_params").map
      local w, b = pm.weight or self.weight, pm.bias or self.bias
      local xdt = fast and getmetatable(x) == TMT and x.dtype
      if xdt and rawget(self, "_pads") == nil and x:dim() == 4 and xdt == w.dtype
          and (xdt == T.float32 or xdt == T.float64) and x:size(2) == self.in_channels
          and w:dim() == 4 and (b == nil or b.dtype == xdt) then
        local f = rawget(self, "_geom")
        if f == nil or f.w ~= w then
          local st, dl = self.stride, self.dilation
          local kh, kw = w:size(3), w:size(4)
          local pl, pr = {}, {}
          for i = 1, 2 do
            local k = i == 1 and kh or kw
            if self.padding == "same" then
              local total = dl[i] * (k - 1)
              pl[i], pr[i] = math.floor(total / 2), total - math.floor(total / 2)
            elseif self.padding == "valid" then pl[i], pr[i] = 0, 0
            else pl[i], pr[i] = self.padding[i], self.padding[i] end
          end
          f = { w = w, st[1], st[2], pl[1], pl[2], dl[1], dl[2],
            pl[1] + pr[1] - dl[1] * (kh - 1) - 1, pl[2] + pr[2] - dl[2] * (kw - 1) - 1 }
          rawset(self, "_geom", f)
        end
        local Ho = math.floor((x:size(3) + f[7]) / f[1]) + 1
        local Wo = math.floor((x:size(4) + f[8]) / f[2]) + 1
        local groups = self.groups
        if Ho >= 1 and Wo >= 1 and w:size(2) * groups == self.in_channels then
          return T._conv_small(x, w, b, f[1], f[2], f[3], f[4], f[5], f[6], groups, Ho, Wo)
        end
      end
      if self._pads then
        if not is_t(x) then mfail(cls, "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
        x = pad_mode(cls, x, self._pads, self.padding_mode)
        return fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
      end
      return fn(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
    end
  end
  function C:extra_repr()
    local s = ("%d, %d, kernel_size=%s, stride=%s"):format(self.in_channels, self.out_channels, tuple_str(self.kernel_size),
      tuple_str(self.stride))
    if type(self.padding) == "string" then s = s .. ", padding=" .. self.padding
    elseif not is_default(self.padding, 0) then s = s .. ", padding=" .. tuple_str(self.padding) end
    if not is_default(self.dilation, 1) then s = s .. ", dilation=" .. tuple_str(self.dilation) end
    if self.output_padding and not is_default(self.output_padding, 0) then
      s = s .. ", output_padding=" .. tuple_str(self.output_padding)
    end
    if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
    if self.bias == nil then s = s .. ", bias=False" end
    if self.padding_mode ~= "zeros" then s = s .. ", padding_mode=" .. self.padding_mode end
    return s
  end
  return C
end
conv_module("Conv1d", 1, false)
conv_module("Conv2d", 2, false)
conv_module("ConvTranspose1d", 1, true)
conv_module("ConvTranspose2d", 2, true)

local function pyval(v)
  if type(v) == "boolean" then return v and "True" or "False" end
  if v == nil then return "None" end
  if type(v) == "table" then return tuple_str(v) end
  return tostring(v)
end

local function pool_module(cls, nd, kind)
  local C = Module:extend(cls)
  nn[cls] = C
  local ARGS = kind == "max" and { "stride", "padding", "dilation", "return_indices", "ceil_mode" }
    or { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }
  function C:init(kernel_size, ...)
    local a = args_of("nn." .. cls, ARGS, ...)
    ntuple(cls, "kernel_size", kernel_size, nd)
    self.kernel_size = kernel_size
    self.stride = a.stride or kernel_size
    self.padding = a.padding or 0
    self.ceil_mode = a.ceil_mode and true or false
    if kind == "max" then
      self.dilation = a.dilation or 1
      self.return_indices = a.return_indices and true or false
    else
      self.count_include_pad = a.count_include_pad
      if self.count_include_pad == nil then self.count_include_pad = true end
      if nd == 2 then self.divisor_override = a.divisor_override end
    end
  end
  local fn = kind == "max" and (nd == 1 and F.max_pool1d or F.max_pool2d) or (nd == 1 and F.avg_pool1d or F.avg_pool2d)
  if kind == "max" then
    function C:forward(x)
      -- 2-D pools of 4-D float input skip the functional form once their
      -- geometry has been checked there (the first call)
      local f = rawget(self, "_geom")
      local xdt = f and getmetatable(x) == TMT and x.dtype
      if xdt and (xdt == T.float32 or xdt == T.float64) and x:dim() == 4 then
        local ceil, ri = rawget(self, "ceil_mode"), rawget(self, "return_indices")
        if ceil == nil then ceil = self.ceil_mode end
        if ri == nil then ri = self.return_indices end
        local Ho = pool_out(x:size(3), f[1], f[3], f[5], f[7], ceil)
        local Wo = pool_out(x:size(4), f[2], f[4], f[6], f[8], ceil)
        if Ho >= 1 and Wo >= 1 then
          return T._max_pool2d(x, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], Ho, Wo, ri and true or false)
        end
      end
      local out, idx = fn(x, self.kernel_size, { stride = self.stride, padding = self.padding, dilation = self.dilation,
        ceil_mode = self.ceil_mode, return_indices = self.return_indices })
      if nd == 2 and f == nil then
        local k = ntuple(cls, "kernel_size", self.kernel_size, 2)
        local st = ntuple(cls, "stride", self.stride, 2)
        local p = ntuple(cls, "padding", self.padding, 2)
        local d = ntuple(cls, "dilation", self.dilation, 2)
        rawset(self, "_geom", { k[1], k[2], st[1], st[2], p[1], p[2], d[1], d[2] })
      end
      return out, idx
    end
    function C:extra_repr()
      return ("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s"):format(pyval(self.kernel_size),
        pyval(self.stride), pyval(self.padding), pyval(self.dilation), pyval(self.ceil_mode))
    end
  else
    function C:forward(x)
      return fn(x, self.kernel_size, { stride = self.stride, padding = self.padding, ceil_mode = self.ceil_mode,
        count_include_pad = self.count_include_pad, divisor_override = self.divisor_override })
    end
    function C:extra_repr()
      local s = ("kernel_size=%s, stride=%s, padding=%s"):format(pyval(self.kernel_size), pyval(self.stride), pyval(self.padding))
      if nd == 1 then s = ("kernel_size=%s, stride=%s, padding=%s"):format(tuple_str(ntuple(cls, "k", self.kernel_size, 1)),
        tuple_str(ntuple(cls, "s", self.stride, 1)), tuple_str(ntuple(cls, "p", self.padding, 1))) end
      return s
    end
  end
end
pool_module("MaxPool1d", 1, "max")
pool_module("MaxPool2d", 2, "max")
pool_module("AvgPool1d", 1, "avg")
pool_module("AvgPool2d", 2, "avg")

local function adaptive_module(cls, fn, has_indices)
  local C = Module:extend(cls)
  nn[cls] = C
  function C:init(output_size, return_indices)
    if type(return_indices) == "table" then return_indices = return_indices.return_indices end
    if output_size == nil then mfail(cls, "bad argument #1 'output_size' (integer or table expected, got nil)") end
    self.output_size = output_size
    if has_indices then self.return_indices = return_indices and true or false end
  end
  function C:forward(x)
    if has_indices then return fn(x, self.output_size, { return_indices = self.return_indices }) end
    return fn(x, self.output_size)
  end
  function C:extra_repr() return "output_size=" .. pyval(self.output_size) end
end
adaptive_module("AdaptiveAvgPool1d", F.adaptive_avg_pool1d)
adaptive_module("AdaptiveAvgPool2d", F.adaptive_avg_pool2d)
adaptive_module("AdaptiveMaxPool1d", F.adaptive_max_pool1d, true)
adaptive_module("AdaptiveMaxPool2d", F.adaptive_max_pool2d, true)

local Upsample = Module:extend("Upsample")
nn.Upsample = Upsample
function Upsample:init(...)
  local a = args_of("nn.Upsample", { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor" }, ...)
  self.size, self.scale_factor = a.size, a.scale_factor
  self.mode = a.mode or "nearest"
  self.align_corners = a.align_corners
  self.recompute_scale_factor = a.recompute_scale_factor
end
function Upsample:forward(x)
  return F.interpolate(x, { size = self.size, scale_factor = self.scale_factor, mode = self.mode,
    align_corners = self.align_corners, recompute_scale_factor = self.recompute_scale_factor })
end
function Upsample:extra_repr()
  local s
  if self.scale_factor ~= nil then
    local sf = self.scale_factor
    if mtype(sf) == "integer" then sf = sf + 0.0 end
    s = "scale_factor=" .. pyval(sf)
  else s = "size=" .. pyval(self.size) end
  return s .. ", mode=" .. self.mode
end
local UpsamplingNearest2d = Module:extend("UpsamplingNearest2d")
nn.UpsamplingNearest2d = UpsamplingNearest2d
function UpsamplingNearest2d:init(size, scale_factor)
  Upsample.init(self, { size = size, scale_factor = scale_factor, mode = "nearest" })
end
UpsamplingNearest2d.forward, UpsamplingNearest2d.extra_repr = Upsample.forward, Upsample.extra_repr
local UpsamplingBilinear2d = Module:extend("UpsamplingBilinear2d")
nn.UpsamplingBilinear2d = UpsamplingBilinear2d
function UpsamplingBilinear2d:init(size, scale_factor)
  Upsample.init(self, { size = size, scale_factor = scale_factor, mode = "bilinear", align_corners = true })
end
UpsamplingBilinear2d.forward, UpsamplingBilinear2d.extra_repr = Upsample.forward, Upsample.extra_repr

local PixelShuffle = Module:extend("PixelShuffle")
nn.PixelShuffle = PixelShuffle
function PixelShuffle:init(r) pos_int("PixelShuffle", "upscale_factor", r) self.upscale_factor = r end
function PixelShuffle:forward(x) return F.pixel_shuffle(x, self.upscale_factor) end
function PixelShuffle:extra_repr() return "upscale_factor=" .. self.upscale_factor end
local PixelUnshuffle = Module:extend("PixelUnshuffle")
nn.PixelUnshuffle = PixelUnshuffle
function PixelUnshuffle:init(r) pos_int("PixelUnshuffle", "downscale_factor", r) self.downscale_factor = r end
function PixelUnshuffle:forward(x) return F.pixel_unshuffle(x, self.downscale_factor) end
function PixelUnshuffle:extra_repr() return "downscale_factor=" .. self.downscale_factor end

local Unfold = Module:extend("Unfold")
nn.Unfold = Unfold
function Unfold:init(kernel_size, ...)
  local a = args_of("nn.Unfold", UNFOLD_ARGS, ...)
  self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, a.dilation or 1, a.padding or 0, a.stride or 1
end
function Unfold:forward(x)
  return F.unfold(x, self.kernel_size, { dilation = self.dilation, padding = self.padding, stride = self.stride })
end
function Unfold:extra_repr()
  return ("kernel_size=%s, dilation=%s, padding=%s, stride=%s"):format(pyval(self.kernel_size), pyval(self.dilation),
    pyval(self.padding), pyval(self.stride))
end
local Fold = Module:extend("Fold")
nn.Fold = Fold
function Fold:init(output_size, kernel_size, ...)
  local a = args_of("nn.Fold", UNFOLD_ARGS, ...)
  self.output_size, self.kernel_size = output_size, kernel_size
  self.dilation, self.padding, self.stride = a.dilation or 1, a.padding or 0, a.stride or 1
end
function Fold:forward(x)
  return F.fold(x, self.output_size, self.kernel_size, { dilation = self.dilation, padding = self.padding, stride = self.stride })
end
function Fold:extra_repr()
  return ("output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s"):format(pyval(self.output_size),
    pyval(self.kernel_size), pyval(self.dilation), pyval(self.padding), pyval(self.stride))
end

local EmbeddingBag = Module:extend("EmbeddingBag")
nn.EmbeddingBag = EmbeddingBag
function EmbeddingBag:init(num_embeddings, embedding_dim, ...)
  local a = args_of("nn.EmbeddingBag", { "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse", "_weight", "include_last_offset",
    "padding_idx", "dtype" }, ...)
  pos_int("EmbeddingBag", "num_embeddings", num_embeddings)
  pos_int("EmbeddingBag", "embedding_dim", embedding_dim)
  local mode = a.mode or "mean"
  if mode ~= "sum" and mode ~= "mean" and mode ~= "max" then mfail("EmbeddingBag", "mode has to be one of sum, mean or max") end
  if a.max_norm ~= nil and type(a.max_norm) ~= "number" then
    mfail("EmbeddingBag", "max_norm must be a number, got " .. typename(a.max_norm))
  end
  if a.norm_type ~= nil and type(a.norm_type) ~= "number" then
    mfail("EmbeddingBag", "norm_type must be a number, got " .. typename(a.norm_type))
  end
  if a.scale_grad_by_freq or a.sparse then mfail("EmbeddingBag", "scale_grad_by_freq and sparse gradients are not supported") end
  local pad = a.padding_idx
  if pad ~= nil then
    -- 1-based: 1..num, or -num..-1 from the end
    if mtype(pad) ~= "integer" then mfail("EmbeddingBag", "padding_idx must be an integer, got " .. typename(pad)) end
    if pad == 0 or pad > num_embeddings or pad < -num_embeddings then
      mfail("EmbeddingBag", "padding_idx must be within num_embeddings (1-based: 1.." .. num_embeddings .. " or negative)")
    end
    if pad < 0 then pad = num_embeddings + 1 + pad end
  end
  self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
  self.max_norm, self.norm_type, self.padding_idx = a.max_norm, a.norm_type or 2, pad
  self.include_last_offset = a.include_last_offset and true or false
  local w = a._weight
  if w ~= nil then
    if not is_t(w) or w:dim() ~= 2 or w:size(1) ~= num_embeddings or w:size(2) ~= embedding_dim then
      mfail("EmbeddingBag", "Shape of weight does not match num_embeddings and embedding_dim")
    end
  else
    w = T.randn({ num_embeddings, embedding_dim }, a.dtype and { dtype = a.dtype } or nil)
    if pad then w[pad]:fill_(0) end
  end
  self.weight = nn.Parameter(w)
end
function EmbeddingBag:forward(input, offsets, per_sample_weights)
  return F.embedding_bag(input, self.weight, { offsets = offsets, mode = self.mode, per_sample_weights = per_sample_weights,
    include_last_offset = self.include_last_offset, max_norm = self.max_norm, norm_type = self.norm_type,
    padding_idx = self.padding_idx })
end
function EmbeddingBag:extra_repr()
  local s = ("%d, %d"):format(self.num_embeddings, self.embedding_dim)
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. pyval(self.max_norm) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. pyval(self.norm_type) end
  s = s .. ", mode=" .. self.mode
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  return s
end


return F
