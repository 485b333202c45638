-- ltensor.nn.functional.losses: the loss functions (ctc_loss has a file of its own).
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local class_mask = H.class_mask
require "ltensor.nn.functional.activations"
local Softplus = H.Softplus
local math, F, is_t = H.math, H.F, H.is_t
local fail, typename, check_t, check_num = H.fail, H.typename, H.check_t, H.check_num
local check_int = H.check_int
local check_float = H.check_float
local parse, reduction_of, reduce = H.parse, H.reduction_of, H.reduce
local loss_opts = H.loss_opts
local shape_str, same_shape, custom = H.shape_str, H.same_shape, H.custom
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- losses
---------------------------------------------------------------------------
local LOSS = { "size_average", "reduce", "reduction" }

local function loss_pair(fname, input, target, nlabel)
  check_t(fname, 1, "input", input)
  check_t(fname, 2, nlabel or "target", target)
end

function F.mse_loss(input, target, ...)
  loss_pair("mse_loss", input, target)
  local o = parse("mse_loss", 3, LOSS, loss_opts(...))
  local d = input - target
  return reduce(d * d, reduction_of("mse_loss", o.reduction))
end
function F.l1_loss(input, target, ...)
  loss_pair("l1_loss", input, target)
  local o = parse("l1_loss", 3, LOSS, loss_opts(...))
  return reduce(T.abs(input - target), reduction_of("l1_loss", o.reduction))
end

-- huber: 0.5 d^2 for |d| < delta, delta (|d| - delta/2) beyond
function F.huber_loss(input, target, ...)
  loss_pair("huber_loss", input, target)
  local o = parse("huber_loss", 3, { "reduction", "delta" }, loss_opts(...))
  local r = reduction_of("huber_loss", o.reduction)
  local delta = o.delta or 1.0
  check_num("huber_loss", 3, "delta", delta)
  if not (delta > 0) then fail("huber_loss", "huber_loss does not support non-positive values for delta.") end
  local d = input - target
  local ad = T.abs(d)
  return reduce(T.where(T.lt(ad, delta), d * d * 0.5, (ad - 0.5 * delta) * delta), r)
end
-- smooth_l1 with beta = 0 is |x - y|, its gradient PyTorch's kernel's:
-- -g where x - y <= 0 (an exact tie included), g where it is >= 0, and
-- (x - y) g / 0 otherwise (NaN); the target's the same with the roles swapped
local function l1_beta0_grad(d, g)
  return T.where(T.le(d, 0), -g, T.where(T.ge(d, 0), g, d * g / 0))
end
local SmoothL1Beta0 = custom("SmoothL1LossBackward0", function(ctx, a, b)
  local d = a - b
  ctx:save_for_backward(d)
  return T.abs(d)
end, function(ctx, g)
  local d = ctx.saved_tensors[1]
  return l1_beta0_grad(d, g), l1_beta0_grad(-d, g)
end)
function F.smooth_l1_loss(input, target, ...)
  loss_pair("smooth_l1_loss", input, target)
  local o = parse("smooth_l1_loss", 3, { "size_average", "reduce", "reduction", "beta" }, loss_opts(...))
  local r = reduction_of("smooth_l1_loss", o.reduction)
  local beta = o.beta or 1.0
  check_num("smooth_l1_loss", 3, "beta", beta)
  if beta < 0 then fail("smooth_l1_loss", "smooth_l1_loss does not support negative values for beta.") end
  if beta == 0 then return reduce(SmoothL1Beta0(input, target), r) end
  local d = input - target
  local ad = T.abs(d)
  return reduce(T.where(T.lt(ad, beta), d * d * (0.5 / beta), ad - 0.5 * beta), r)
end

-- kl_div(input, target): input holds log-probabilities; the target
-- probabilities (log_target: log-probabilities).  reduction "batchmean"
-- divides the sum by the batch size.
function F.kl_div(input, target, ...)
  loss_pair("kl_div", input, target)
  local o = parse("kl_div", 3, { "size_average", "reduce", "reduction", "log_target" }, loss_opts(...))
  local r = o.reduction or "mean"
  if r ~= "batchmean" then r = reduction_of("kl_div", r) end
  local l
  if o.log_target then
    l = T.exp(target) * (target - input)
  else
    l = T.xlogy(target, target) - target * input
  end
  if r == "batchmean" then
    if input:dim() == 0 then return T.sum(l) end
    return T.sum(l) / input:size(1)
  end
  return reduce(l, r)
end

-- class-index checks shared by nll_loss and cross_entropy
local function nll_checks(fname, input, target, weight)
  if not is_t(target) or target.dtype.is_floating_point or target.dtype == T.bool or target.dtype.is_complex then
    fail(fname, "expected target to be an int64 tensor of class indices")
  end
  local nd = input:dim()
  if nd < 1 then fail(fname, "input tensor should be 1D or more") end
  local class_dim = nd == 1 and 1 or 2
  local C = input:size(class_dim)
  if nd == 1 or nd == 2 then
    if target:dim() > 1 then fail(fname, "0D or 1D target tensor expected, multi-target not supported") end
    if nd == 2 and target:size(1) ~= input:size(1) then
      fail(fname, ("Expected input batch_size (%d) to match target batch_size (%d)."):format(input:size(1), target:size(1)))
    end
    if nd == 1 and target:dim() ~= 0 then
      fail(fname, ("Expected input batch_size (1) to match target batch_size (%d)."):format(target:size(1)))
    end
  else
    if target:dim() ~= nd - 1 then
      fail(fname, ("Expected target dimensions (%d) to match input dimensions (%d), got target dims %d"):format(nd - 1, nd, target:dim()))
    end
    local ok = target:size(1) == input:size(1)
    for i = 3, nd do if target:size(i - 1) ~= input:size(i) then ok = false end end
    if not ok then
      local want = { input:size(1) }
      for i = 3, nd do want[#want + 1] = input:size(i) end
      fail(fname, ("expected target size %s, got %s"):format(shape_str(want), shape_str(target.shape)))
    end
  end
  if weight ~= nil then
    check_t(fname, 3, "weight", weight)
    if weight:numel() ~= C then
      fail(fname, ("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %s"):format(C, shape_str(weight.shape)))
    end
  end
  return nd, class_dim, C
end
local function check_targets(fname, target, C, ignore)
  if target:numel() == 0 then return end
  T.no_grad(function()
    local bad = T.logical_or(T.lt(target, 1), T.gt(target, C))
    if ignore ~= nil then bad = T.logical_and(bad, T.ne(target, ignore)) end
    if T.any(bad):item() then
      -- the first offending target, as PyTorch's loop reports it
      fail(fname, "Target " .. T.masked_select(target, bad)[1]:item() .. " is out of bounds. (class targets are 1-based: 1.." .. C .. ")")
    end
  end)
end

local NLL = { "weight", "size_average", "ignore_index", "reduce", "reduction" }

-- nll_loss(input, target [, weight] [, opts]): input (C), (N, C) or
-- (N, C, d1, ...) log-probabilities; target (), (N) or (N, d1, ...) int64
-- classes in 1..C.  opts: reduction, weight (C), ignore_index (1-based,
-- like the targets; default none).  "mean" divides by the summed weights of
-- the counted targets.
local function nll_composite(input, target, weight, ignore, r, class_dim, C, nd)
  local mask = class_mask(target, C, class_dim, nd)
  if ignore ~= nil then mask = T.logical_and(mask, T.ne(target, ignore):unsqueeze(class_dim)) end
  local picked = T.sum(T.where(mask, input, 0), class_dim)
  local w
  if weight ~= nil then
    local shape = {}
    for i = 1, nd do shape[i] = 1 end
    shape[class_dim] = C
    w = T.sum(T.where(mask, weight:reshape(shape):to(input.dtype), 0), class_dim)
  elseif ignore ~= nil then
    w = T.any(mask, class_dim):to(input.dtype)
  end
  local loss = w and -(picked * w) or -picked
  if r == "none" then return loss end
  if r == "sum" then return T.sum(loss) end
  if w then return T.sum(loss) / T.sum(w) end
  return T.mean(loss)
end
F._nll_composite = nll_composite

-- a freed target, in the loss's name (its checks read it through x.shape)
local function live_target(fname, target)
  if is_t(target) and T._is_freed(target) then check_t(fname, 2, "target", target) end
end

function F.nll_loss(input, target, ...)
  check_t("nll_loss", 1, "input", input)
  live_target("nll_loss", target)
  local o = parse("nll_loss", 3, NLL, loss_opts(...))
  local r = reduction_of("nll_loss", o.reduction)
  check_int("nll_loss", 3, "ignore_index", o.ignore_index, true)
  local nd, class_dim, C = nll_checks("nll_loss", input, target, o.weight)
  -- the fused kernel checks the targets itself, in the same words
  local fused = F._nll_fused and F._nll_fused(input, target, o.weight, o.ignore_index, r, false)
  if fused then return fused end
  check_targets("nll_loss", target, C, o.ignore_index)
  return nll_composite(input, target, o.weight, o.ignore_index, r, class_dim, C, nd)
end

-- cross_entropy(input, target [, weight] [, opts]): log_softmax over the
-- class dim then nll_loss; a floating target of input's shape holds class
-- probabilities.  opts: reduction, weight, ignore_index, label_smoothing.
function F.cross_entropy(input, target, ...)
  check_t("cross_entropy", 1, "input", input)
  live_target("cross_entropy", target)
  local o = parse("cross_entropy", 3, { "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing" },
    loss_opts(...))
  local r = reduction_of("cross_entropy", o.reduction)
  local ls = o.label_smoothing or 0
  check_num("cross_entropy", 3, "label_smoothing", ls)
  if not (ls >= 0 and ls <= 1) then
    fail("cross_entropy", "label_smoothing must be between 0.0 and 1.0. Got: " .. ls)
  end
  check_t("cross_entropy", 3, "weight", o.weight, true)
  local nd = input:dim()
  if nd < 1 then fail("cross_entropy", "input tensor should be 1D or more") end
  local class_dim = nd == 1 and 1 or 2
  local C = input:size(class_dim)
  local wshape
  if o.weight ~= nil then
    if o.weight:numel() ~= C then
      fail("cross_entropy", ("weight tensor should be defined either for all %d classes or no classes but got weight tensor of shape: %s"):format(C, shape_str(o.weight.shape)))
    end
    wshape = {}
    for i = 1, nd do wshape[i] = 1 end
    wshape[class_dim] = C
  end
  if is_t(target) and target.dtype.is_floating_point then
    -- class probabilities
    if not same_shape(target.shape, input.shape) then
      fail("cross_entropy", ("Expected target size %s, got %s"):format(shape_str(input.shape), shape_str(target.shape)))
    end
    check_float("cross_entropy", input, "log_softmax")
    local logp = T.log_softmax(input, class_dim)
    if ls > 0 then target = target * (1 - ls) + ls / C end
    local lw = logp * target
    if wshape then lw = lw * o.weight:reshape(wshape):to(input.dtype) end
    local loss = -T.sum(lw, class_dim)
    if r == "mean" then
      if input:numel() == 0 then return T.sum(loss) / 0 end
      return T.sum(loss) / (input:numel() / C)
    end
    return reduce(loss, r)
  end
  check_int("cross_entropy", 3, "ignore_index", o.ignore_index, true)
  nll_checks("nll_loss", input, target, o.weight)
  check_float("cross_entropy", input, "log_softmax")
  local ignore = o.ignore_index
  local loss
  local logp
  if F._nll_fused and ls == 0 then
    local fused = F._nll_fused(input, target, o.weight, ignore, r, true)
    if fused then return fused end
  end
  check_targets("nll_loss", target, C, o.ignore_index)
  logp = T.log_softmax(input, class_dim)
  loss = nll_composite(logp, target, o.weight, ignore, r, class_dim, C, nd)
  if ls > 0 then
    -- PyTorch 1.13: (1 - ls) * nll + ls / C * smooth, smooth = -sum_c w_c logp_c
    -- over the counted targets, "mean" divided as nll's mean is
    local lw = logp
    if wshape then lw = lw * o.weight:reshape(wshape):to(input.dtype) end
    local smooth = -T.sum(lw, class_dim)
    local keep
    if ignore ~= nil then
      keep = T.ne(target, ignore)
      smooth = T.where(keep, smooth, 0)
    end
    local sm
    if r == "none" then sm = smooth
    elseif r == "sum" then sm = T.sum(smooth)
    else
      local denom
      if o.weight ~= nil then
        local safe = keep and T.where(keep, target, 1) or target
        local wt = o.weight:to(input.dtype)[safe:reshape({ -1 })]
        if keep then wt = T.where(keep:reshape({ -1 }), wt, 0) end
        denom = T.sum(wt)
      elseif keep then
        denom = T.sum(keep):to(input.dtype)
      else
        denom = target:numel()
      end
      sm = T.sum(smooth) / denom
    end
    loss = loss * (1 - ls) + sm * (ls / C)
  end
  return loss
end

local function check_same_size(fname, input, target)
  if not same_shape(input.shape, target.shape) then
    fail(fname, ("Using a target size (%s) that is different to the input size (%s) is deprecated. Please ensure they have the same size."):format(
      shape_str(target.shape), shape_str(input.shape)))
  end
end

-- binary_cross_entropy: logs clamped at -100 as PyTorch's; its own backward
-- (x - t) / max(x (1 - x), 1e-12) so that 0 and 1 give finite gradients
local BCE = custom("BinaryCrossEntropyBackward0", function(ctx, x, t)
  local lx = T.clamp_min(T.log(x), -100)
  local l1x = T.clamp_min(T.log(-x + 1), -100)
  ctx:save_for_backward(x, t)
  return -(t * lx + (-t + 1) * l1x)
end, function(ctx, g)
  local s = ctx.saved_tensors
  local x, t = s[1], s[2]
  local gx, gt
  if ctx.needs_input_grad[1] then gx = g * (x - t) / T.clamp_min(x * (-x + 1), 1e-12) end
  if ctx.needs_input_grad[2] then
    gt = g * (T.clamp_min(T.log(-x + 1), -100) - T.clamp_min(T.log(x), -100))
  end
  return gx, gt
end)
function F.binary_cross_entropy(input, target, ...)
  loss_pair("binary_cross_entropy", input, target)
  local o = parse("binary_cross_entropy", 3, { "weight", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("binary_cross_entropy", o.reduction)
  check_t("binary_cross_entropy", 3, "weight", o.weight, true)
  check_same_size("binary_cross_entropy", input, target)
  check_float("binary_cross_entropy", input)
  if input:numel() > 0 then
    T.no_grad(function()
      if T.any(T.logical_or(T.lt(input, 0), T.gt(input, 1))):item() then
        fail("binary_cross_entropy", "all elements of input should be between 0 and 1")
      end
    end)
  end
  local l = BCE(input, target)
  if o.weight ~= nil then l = l * o.weight end
  return reduce(l, r)
end

-- with logits: (1 - t) x + lw (log1p(exp(-|x|)) + max(-x, 0)), lw = 1 + (pw - 1) t;
-- its own backward, exact at x = 0 where abs and max have kinks
local BCEL = custom("BinaryCrossEntropyWithLogitsBackward0", function(ctx, x, t, pw)
  local sp = T.log1p(T.exp(-T.abs(x))) + T.clamp_min(-x, 0)   -- softplus(-x)
  local l
  if pw ~= nil then
    local lw = (pw - 1) * t + 1
    l = (-t + 1) * x + lw * sp
  else
    l = (-t + 1) * x + sp
  end
  ctx:save_for_backward(x, t, pw)
  return l
end, function(ctx, g)
  local s = ctx.saved_tensors
  local x, t, pw = s[1], s[2], s[3]
  local gx, gt, gpw
  local sig = T.sigmoid(x)
  if ctx.needs_input_grad[1] then
    if pw ~= nil then
      local lw = (pw - 1) * t + 1
      -- d/dx [(1 - t) x + lw softplus(-x)] = (1 - t) - lw (1 - sigmoid(x))
      gx = g * ((-t + 1) - lw * (-sig + 1))
    else
      gx = g * (sig - t)
    end
  end
  if ctx.needs_input_grad[2] then
    if pw ~= nil then
      local sp = T.log1p(T.exp(-T.abs(x))) + T.clamp_min(-x, 0)
      gt = g * (-x + (pw - 1) * sp)
    else
      gt = g * -x
    end
  end
  if pw ~= nil and ctx.needs_input_grad[3] then
    local sp = T.log1p(T.exp(-T.abs(x))) + T.clamp_min(-x, 0)
    gpw = g * t * sp
  end
  return gx, gt, gpw
end)
function F.binary_cross_entropy_with_logits(input, target, ...)
  loss_pair("binary_cross_entropy_with_logits", input, target)
  local o = parse("binary_cross_entropy_with_logits", 3,
    { "weight", "size_average", "reduce", "reduction", "pos_weight" }, loss_opts(...))
  local r = reduction_of("binary_cross_entropy_with_logits", o.reduction)
  check_t("binary_cross_entropy_with_logits", 3, "weight", o.weight, true)
  check_t("binary_cross_entropy_with_logits", 3, "pos_weight", o.pos_weight, true)
  check_float("binary_cross_entropy_with_logits", input)
  if not same_shape(input.shape, target.shape) then
    fail("binary_cross_entropy_with_logits", ("Target size (%s) must be the same as input size (%s)"):format(
      shape_str(target.shape), shape_str(input.shape)))
  end
  local l = BCEL(input, target, o.pos_weight)
  if o.weight ~= nil then l = l * o.weight end
  return reduce(l, r)
end

function F.soft_margin_loss(input, target, ...)
  loss_pair("soft_margin_loss", input, target)
  local o = parse("soft_margin_loss", 3, LOSS, loss_opts(...))
  local r = reduction_of("soft_margin_loss", o.reduction)
  check_float("soft_margin_loss", input)
  return reduce(Softplus(-target * input, 1, math.huge), r)
end

function F.margin_ranking_loss(x1, x2, target, ...)
  check_t("margin_ranking_loss", 1, "input1", x1)
  check_t("margin_ranking_loss", 2, "input2", x2)
  check_t("margin_ranking_loss", 3, "target", target)
  local o = parse("margin_ranking_loss", 4, { "margin", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("margin_ranking_loss", o.reduction)
  local m = o.margin or 0
  check_num("margin_ranking_loss", 4, "margin", m)
  if x1:dim() ~= x2:dim() or x1:dim() ~= target:dim() then
    fail("margin_ranking_loss", ("margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: %s, input2: %s, target: %s "):format(
      shape_str(x1.shape), shape_str(x2.shape), shape_str(target.shape)))
  end
  return reduce(T.clamp_min(-target * (x1 - x2) + m, 0), r)
end

function F.hinge_embedding_loss(input, target, ...)
  loss_pair("hinge_embedding_loss", input, target)
  local o = parse("hinge_embedding_loss", 3, { "margin", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("hinge_embedding_loss", o.reduction)
  local m = o.margin or 1.0
  local zeros = T.zeros_like(input)
  local margin_clamp = T.clamp_min(-input + m, 0)
  local out_margin = T.where(T.ne(target, 1), margin_clamp, zeros)
  local out_self = T.where(T.ne(target, -1), input, zeros)
  return reduce(out_margin + out_self, r)
end

-- cosine_embedding_loss(x1, x2, y): 1 - cos for y = 1, max(0, cos - margin) for y = -1
function F.cosine_embedding_loss(x1, x2, target, ...)
  local fname = "cosine_embedding_loss"
  check_t(fname, 1, "input1", x1)
  check_t(fname, 2, "input2", x2)
  check_t(fname, 3, "target", target)
  local o = parse(fname, 4, { "margin", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local margin = o.margin or 0
  check_num(fname, 4, "margin", margin)
  local td = target:dim()
  if td == 1 then
    if x1:dim() ~= 2 or x2:dim() ~= 2 then
      fail(fname, ("1D target tensor expects 2D input tensors, but found inputs with sizes %s and %s."):format(shape_str(x1.shape), shape_str(x2.shape)))
    end
  elseif td == 0 then
    if x1:dim() ~= 1 or x2:dim() ~= 1 then
      fail(fname, ("0D target tensor expects 1D input tensors, but found inputs with sizes %s and %s."):format(shape_str(x1.shape), shape_str(x2.shape)))
    end
  else
    fail(fname, "0D or 1D target tensor expected, multi-target not supported")
  end
  local EPS12 = 1e-12
  local dim = td + 1
  local prod = T.sum(x1 * x2, dim)
  local m1 = T.sum(x1 * x1, dim) + EPS12
  local m2 = T.sum(x2 * x2, dim) + EPS12
  local cos = prod / T.sqrt(m1 * m2)
  local pos = T.where(T.eq(target, 1), -cos + 1, 0)
  local neg = T.where(T.eq(target, -1), T.clamp_min(cos - margin, 0), 0)
  return reduce(pos + neg, r)
end

-- pairwise_distance(x1, x2 [, p [, eps [, keepdim]]]): ||x1 - x2 + eps||_p over the last dim
function F.pairwise_distance(x1, x2, ...)
  check_t("pairwise_distance", 1, "x1", x1)
  check_t("pairwise_distance", 2, "x2", x2)
  local o = parse("pairwise_distance", 3, { "p", "eps", "keepdim" }, ...)
  local p, eps = o.p or 2.0, o.eps or 1e-6
  local d = x1 - x2 + eps
  local nd = math.max(x1:dim(), x2:dim())
  if nd == 0 then return T.norm(d:reshape({ 1 }), p, 1, o.keepdim or false) end
  return T.norm(d, p, -1, o.keepdim or false)
end

function F.cosine_similarity(x1, x2, ...)
  check_t("cosine_similarity", 1, "x1", x1)
  check_t("cosine_similarity", 2, "x2", x2)
  local o = parse("cosine_similarity", 3, { "dim", "eps" }, ...)
  local dim, eps = o.dim or 2, o.eps or 1e-8
  if math.type(dim) ~= "integer" then fail("cosine_similarity", "dim must be an integer, got " .. typename(dim)) end
  -- PyTorch 1.13.1: each input divided by its own norm, clamped at eps,
  -- then the dot product: sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps))).
  -- Tiny vectors keep their true cosine (norms above eps are untouched)
  -- and the result stays within [-1, 1].  As there, the clamp changes the
  -- norm's value but not its gradient (a clone clamped in place without
  -- grad): below eps the norm is n - n + eps, the second n detached.
  x1, x2 = T.broadcast_tensors(x1, x2)
  local function unit(x)
    local n = T.linalg.vector_norm(x, 2, dim, true)
    local nd = n:detach()
    return x / T.where(T.lt(nd, eps), n - nd + eps, n)
  end
  return T.sum(unit(x1) * unit(x2), dim)
end

function F.triplet_margin_loss(a, p, n, ...)
  local fname = "triplet_margin_loss"
  check_t(fname, 1, "anchor", a)
  check_t(fname, 2, "positive", p)
  check_t(fname, 3, "negative", n)
  local o = parse(fname, 4, { "margin", "p", "eps", "swap", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local margin, pn, eps = o.margin or 1.0, o.p or 2, o.eps or 1e-6
  check_num(fname, 4, "margin", margin)
  check_num(fname, 5, "p", pn)
  local ad, pd, ndim = a:dim(), p:dim(), n:dim()
  if ad ~= pd or pd ~= ndim then
    fail(fname, ("The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor %dD, positive %dD, and negative %dD inputs"):format(ad, pd, ndim))
  end
  if ad ~= 1 and ad ~= 2 then
    fail(fname, ("The anchor, positive, and negative tensors are expected to be 1D or 2D, but got: anchor %dD, positive %dD, and negative %dD inputs"):format(ad, pd, ndim))
  end
  local dpos = F.pairwise_distance(a, p, pn, eps)
  local dneg = F.pairwise_distance(a, n, pn, eps)
  if o.swap then dneg = T.minimum(dneg, F.pairwise_distance(p, n, pn, eps)) end
  return reduce(T.clamp_min(dpos - dneg + margin, 0), r)
end

function F.poisson_nll_loss(input, target, ...)
  loss_pair("poisson_nll_loss", input, target)
  local o = parse("poisson_nll_loss", 3, { "log_input", "full", "size_average", "eps", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("poisson_nll_loss", o.reduction)
  local log_input = o.log_input
  if log_input == nil then log_input = true end
  local eps = o.eps or 1e-8
  local l
  if log_input then l = T.exp(input) - target * input
  else l = input - target * T.log(input + eps) end
  if o.full then
    -- Stirling's term for target > 1: t log t - t + 0.5 log(2 pi t)
    local big = T.gt(target, 1)
    local ts = T.where(big, target, 1)
    local st = ts * T.log(ts) - ts + T.log(ts * (2 * math.pi)) * 0.5
    l = l + T.where(big, st, 0)
  end
  return reduce(l, r)
end

function F.gaussian_nll_loss(input, target, var, ...)
  local fname = "gaussian_nll_loss"
  check_t(fname, 1, "input", input)
  check_t(fname, 2, "target", target)
  check_t(fname, 3, "var", var)
  local o = parse(fname, 4, { "full", "eps", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local eps = o.eps or 1e-6
  -- var of input's shape, or input's shape with the last dim 1 or dropped
  if not same_shape(var.shape, input.shape) then
    local ish = input.shape
    local vsh = var.shape
    if #vsh == #ish - 1 or (#ish == 0) then
      var = var:unsqueeze(-1)
    elseif not (#vsh == #ish and vsh[#vsh] == 1) then
      fail(fname, "var is of incorrect size")
    end
    vsh = var.shape
    for i = 1, #ish - 1 do
      if vsh[i] ~= ish[i] then fail(fname, "var is of incorrect size") end
    end
  end
  if T.no_grad(function() return T.any(T.lt(var, 0)):item() end) then fail(fname, "var has negative entry/entries") end
  -- clamp without cutting the gradient, as PyTorch's in-place clamp under no_grad
  local vc = var + T.no_grad(function() return T.clamp_min(var, eps) - var end)
  local d = input - target
  local l = (T.log(vc) + d * d / vc) * 0.5
  if o.full then l = l + 0.5 * math.log(2 * math.pi) end
  return reduce(l, r)
end

-- multi_margin_loss(input (N, C) or (C), target (N) or () 1-based classes
-- [, {p=1, margin=1, weight=}]): sum over i ~= y of max(0, margin - x_y + x_i)^p w_y / C
function F.multi_margin_loss(input, target, ...)
  local fname = "multi_margin_loss"
  loss_pair(fname, input, target)
  local o = parse(fname, 3, { "p", "margin", "weight", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  local p, margin = o.p or 1, o.margin or 1
  if p ~= 1 and p ~= 2 then fail(fname, "only p == 1 and p == 2 supported") end
  check_num(fname, 4, "margin", margin)
  check_t(fname, 5, "weight", o.weight, true)
  check_float(fname, input, "multi_margin_loss_cpu")
  local unbatched = input:dim() <= 1
  local x = unbatched and input:reshape({ 1, -1 }) or input
  if x:dim() ~= 2 then fail(fname, "inconsistent input size, expected 1D or 2D input, got " .. input:dim() .. "D") end
  local N, C = x:size(1), x:size(2)
  local t = target:reshape({ -1 })
  if t:numel() ~= N then
    fail(fname, ("inconsistent target size, expected %d but got %s"):format(N, shape_str(target.shape)))
  end
  if target.dtype.is_floating_point or target.dtype == T.bool then fail(fname, "expected an int64 target of class indices") end
  check_targets(fname, t, C, nil)
  if o.weight ~= nil and o.weight:numel() ~= C then fail(fname, "inconsistent weight size, expected " .. C .. " but got " .. shape_str(o.weight.shape)) end
  local ti = t:to(T.int64):unsqueeze(2)
  local z = T.clamp_min(x - T.gather(x, 2, ti) + margin, 0)
  if p == 2 then z = z * z end
  if o.weight ~= nil then z = z * o.weight:to(x.dtype)[t:to(T.int64)]:unsqueeze(2) end
  local hot = T.eq(ti, T.arange(1, C + 1):reshape({ 1, C }))
  local l = T.sum(T.where(hot, 0, z), 2) / C
  if unbatched then l = l:reshape(target.shape) end
  return reduce(l, r)
end

-- multilabel_margin_loss(input (N, C) or (C), target of input's shape): each
-- row of target lists 1-based classes, ended by the first entry < 1 (PyTorch's
-- -1 padding, shifted); sum over listed j and unlisted i of max(0, 1 - (x_j - x_i)) / C
function F.multilabel_margin_loss(input, target, ...)
  local fname = "multilabel_margin_loss"
  loss_pair(fname, input, target)
  local o = parse(fname, 3, LOSS, loss_opts(...))
  local r = reduction_of(fname, o.reduction)
  check_float(fname, input, "multilabel_margin_loss_forward_out_frame")
  if not same_shape(input.shape, target.shape) then
    fail(fname, ("inconsistent target size: %s for input of size: %s"):format(shape_str(target.shape), shape_str(input.shape)))
  end
  if target.dtype.is_floating_point or target.dtype == T.bool then fail(fname, "expected an int64 target of class indices") end
  local unbatched = input:dim() <= 1
  local x = unbatched and input:reshape({ 1, -1 }) or input
  local t = (unbatched and target:reshape({ 1, -1 }) or target):to(T.int64)
  local C = x:size(2)
  local valid = T.no_grad(function() return T.cumprod(T.ge(t, 1):to(T.int64), 2):to(T.bool) end)
  if T.any(T.logical_and(valid, T.gt(t, C))):item() then fail(fname, "target index out of range") end
  local tc = T.clamp(t, 1, math.max(C, 1))
  local cls = T.arange(1, C + 1):reshape({ 1, 1, C })
  local is_target = T.any(T.logical_and(T.eq(tc:unsqueeze(3), cls), valid:unsqueeze(3)), 2)   -- (N, C)
  local xj = T.gather(x, 2, tc):unsqueeze(3)                                                    -- (N, C_j, 1)
  local z = T.clamp_min(x:unsqueeze(2) - xj + 1, 0)                                             -- (N, C_j, C_i)
  local keep = T.logical_and(valid:unsqueeze(3), T.logical_not(is_target):unsqueeze(2))
  local l = T.sum(T.where(keep, z, 0), { 2, 3 }) / C
  if unbatched then l = l:reshape({}) end
  return reduce(l, r)
end

function F.multilabel_soft_margin_loss(input, target, ...)
  loss_pair("multilabel_soft_margin_loss", input, target)
  local o = parse("multilabel_soft_margin_loss", 3, { "weight", "size_average", "reduce", "reduction" }, loss_opts(...))
  local r = reduction_of("multilabel_soft_margin_loss", o.reduction)
  local l = -(target * F.logsigmoid(input) + (-target + 1) * F.logsigmoid(-input))
  if o.weight ~= nil then l = l * o.weight end
  local C = input:size(-1)
  l = T.sum(l, -1) / C
  return reduce(l, r)
end
return true
