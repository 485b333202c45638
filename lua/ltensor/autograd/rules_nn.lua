-- ltensor.autograd.rules_nn: the backward rules of the nn kernels written
-- in C: the fused normalisation / cross-entropy kernels
-- (src/binding/l_nnfused.c) and the raw convolution, pooling and
-- interpolation functions (src/binding/l_conv.c).
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local H = require "ltensor.autograd.helpers"
local math = compat.math
local rules, need = H.rules, H.need
---------------------------------------------------------------------------
-- fused C kernels (src/binding/l_nnfused.c) and their backward rules
---------------------------------------------------------------------------
-- The kernels take contiguous float32/float64 tensors; other dtypes keep the
-- composite forms above.  Each rule's backward runs the fused C backward,
-- except under create_graph (grad mode on while backward runs), where it
-- uses the same formula written in differentiable ops, the statistics
-- recomputed from x so that second derivatives are right.
local FUSED = H.FUSED

-- the differentiable backward of y = (x - mean) rstd w + b, x viewed as xv
-- with statistics over `dims`; w viewed as wv (nil: no weight), its
-- gradient summed over `wdims`
local function norm_backward_composite(xv, gv, dims, wv, wdims, eps)
  local mu = T.mean(xv, dims, true)
  local xc = xv - mu
  local rs = T.rsqrt(T.mean(xc * xc, dims, true) + eps)
  local xh = xc * rs
  local gw = wv and gv * wv or gv
  local dx = rs * (gw - T.mean(gw, dims, true) - xh * T.mean(gw * xh, dims, true))
  return dx, T.sum(gv * xh, wdims), T.sum(gv, wdims)
end

-- rows (layer and group norm): y, mean, rstd = _norm_rows(x, w, b, R, D, eps, G, Cg, S)
local function rows_bw(n, g)
  local s = n.saved
  local x, w, mean, rstd = s[1], s[2], s[3], s[4]
  local nx, nw, nb = need(n, 1), w ~= nil and need(n, 2), n.has_b and need(n, 3)
  if T.is_grad_enabled() then
    local xv, gv, dims, wv, wdims
    if n.G > 0 then
      local N = math.floor(n.R / n.G)
      local sh = { N, n.G, n.Cg, n.S }
      xv, gv, dims, wdims = x:reshape(sh), g:reshape(sh), { 3, 4 }, { 1, 4 }
      wv = w and w:reshape({ 1, n.G, n.Cg, 1 })
    else
      xv, gv, dims, wdims = x:reshape({ n.R, n.D }), g:reshape({ n.R, n.D }), { 2 }, { 1 }
      wv = w and w:reshape({ 1, n.D })
    end
    local dx, dw, db = norm_backward_composite(xv, gv, dims, wv, wdims, n.eps)
    return nx and dx:reshape(x.shape) or nil, nw and dw:reshape(w.shape) or nil,
      nb and db:reshape(n.b_shape) or nil
  end
  local dx, dw, db = T._norm_rows_backward(g:contiguous(), x, mean, rstd, w, n.R, n.D, n.G, n.Cg, n.S, nx, nw, nb)
  return dx, dw and dw:reshape(w.shape), db and db:reshape(n.b_shape)
end
rules._norm_rows = function(raw, x, w, b, R, D, eps, G, Cg, S)
  local y, mean, rstd = raw(x, w, b, R, D, eps, G, Cg, S)
  return { name = G > 0 and "NativeGroupNormBackward0" or "NativeLayerNormBackward0", inputs = { x, w, b }, ninputs = 3,
    saved = { x, w, mean, rstd, n = 4 }, R = R, D = D, G = G, Cg = Cg, S = S, eps = eps,
    has_b = b ~= nil, b_shape = b and b.shape, nondiff = { [2] = true, [3] = true }, backward = rows_bw }, y, mean, rstd
end

-- channels (batch norm, training): y, mean, rstd, var = _norm_chan(x, w, b, eps)
local function chan_bw(n, g)
  local s = n.saved
  local x, w, mean, rstd = s[1], s[2], s[3], s[4]
  local nx, nw, nb = need(n, 1), w ~= nil and need(n, 2), n.has_b and need(n, 3)
  if T.is_grad_enabled() then
    local N, C = x:size(1), x:size(2)
    local sh = { N, C, math.floor(x:numel() / math.max(N * C, 1)) }
    local dx, dw, db = norm_backward_composite(x:reshape(sh), g:reshape(sh), { 1, 3 }, w and w:reshape({ 1, C, 1 }),
      { 1, 3 }, n.eps)
    return nx and dx:reshape(x.shape) or nil, nw and dw:reshape(w.shape) or nil, nb and db:reshape(n.b_shape) or nil
  end
  local dx, dw, db = T._norm_chan_backward(g:contiguous(), x, mean, rstd, w, nx, nw, nb)
  return dx, dw and dw:reshape(w.shape), db and db:reshape(n.b_shape)
end
rules._norm_chan = function(raw, x, w, b, eps)
  local y, mean, rstd, var = raw(x, w, b, eps)
  return { name = "NativeBatchNormBackward0", inputs = { x, w, b }, ninputs = 3, saved = { x, w, mean, rstd, n = 4 },
    eps = eps, has_b = b ~= nil, b_shape = b and b.shape, nondiff = { [2] = true, [3] = true, [4] = true },
    backward = chan_bw }, y, mean, rstd, var
end

-- cross entropy / nll over rows: loss, lse, wsum = _xent(x, target, w,
-- ignore, with_lse, red): red 0 gives each row's loss, 1 their sum, 2 their
-- mean over the counted weights (sum / wsum), in the one call and node
local function xent_bw(n, g)
  local s = n.saved
  local x, target, w, lse = s[1], s[2], s[3], s[4]
  if n.red ~= 0 then   -- the reduced loss: each row's share of g
    if n.red == 2 then g = g / s[5] end
    g = g:expand({ x:size(1) })
  end
  if T.is_grad_enabled() then
    local K = x:size(2)
    local hot = T.eq(target:unsqueeze(2), T.arange(1, K + 1):reshape({ 1, K }))
    local coef = g
    if w ~= nil then coef = coef * w[target] end
    if n.ignore ~= nil then coef = T.where(T.eq(target, n.ignore), 0, coef) end
    coef = coef:unsqueeze(2)
    if n.with_lse then return coef * (T.softmax(x, 2) - hot:to(x.dtype)) end
    return T.where(hot, -coef, 0)
  end
  return T._xent_backward(g:contiguous(), x, target, w, lse, n.ignore, n.with_lse)
end
rules._xent = function(raw, x, target, w, ignore, with_lse, red)
  local loss, lse, wsum = raw(x, target, w, ignore, with_lse, red)
  return { name = "NllLossBackward0", inputs = { x }, ninputs = 1,
    saved = { x, target, w, lse, wsum, n = 5 }, ignore = ignore, with_lse = with_lse, red = red or 0,
    nondiff = { [2] = true, [3] = true }, backward = xent_bw }, loss, lse, wsum
end

-- relu: a C rule (src/binding/l_grad_rules.c), its backward one pass in C
-- (T._threshold_backward) except under create_graph

-- eval batch norm: y = x * scale + shift per channel in one pass, scale and
-- shift folded from the running statistics (the per-frame inference case,
-- where every op's overhead counts)
local function bn_eval_bw(n, g)
  local s = n.saved
  local x, w, scale, rm, rv = s[1], s[2], s[3], s[4], s[5]
  local nd = x:dim()
  local C = x:size(2)
  local sh = { 1, C }
  for i = 3, nd do sh[i] = 1 end
  local dims = { 1 }
  for i = 3, nd do dims[#dims + 1] = i end
  local gx, gw, gb
  if need(n, 1) then gx = g * scale:reshape(sh) end
  if w ~= nil and need(n, 2) then
    gw = T.sum(g * (x - rm:reshape(sh)) * T.rsqrt(rv + n.eps):reshape(sh), dims)
  end
  if n.has_b and need(n, 3) then gb = T.sum(g, dims) end
  return gx, gw, gb
end
rules._norm_chan_eval = function(raw, x, w, b, rm, rv, eps)
  local y, scale = raw(x, w, b, rm, rv, eps)
  return { name = "NativeBatchNormBackward0", inputs = { x, w, b }, ninputs = 3, saved = { x, w, scale, rm, rv, n = 5 },
    eps = eps, has_b = b ~= nil, nondiff = { [2] = true }, backward = bn_eval_bw }, y, scale
end

---------------------------------------------------------------------------
-- convolution, pooling, interpolation (src/binding/l_conv.c)
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

local function max_pool_bw(n, g)
  local s = n.in_shape
  return T._max_pool_bwd(g, n.saved[1], s[3], s[4], n.tiled)
end
rules._max_pool2d = function(raw, x, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, want_idx)
  -- 2x2 windows of stride 2 tile the input: the backward writes it in one pass
  -- (a ceil_mode window past the edge is not a tile)
  -- (raw checks the arguments; a bad Ho or Wo is not a tile)
  local tiled = kh == 2 and kw == 2 and sh == 2 and sw == 2 and ph == 0 and pw == 0 and dh == 1 and dw == 1 and
    type(Ho) == "number" and type(Wo) == "number" and x:dim() == 4 and 2 * Ho <= x:size(3) and 2 * Wo <= x:size(4)
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
return true
