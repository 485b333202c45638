-- ltensor.nn.functional.dropout: dropout, its feature and alpha forms.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local SELU_ALPHA, SELU_SCALE = H.SELU_ALPHA, H.SELU_SCALE
local math, F = H.math, H.F
local fail, check_t, check_num = H.fail, H.check_t, H.check_num
local parse = H.parse
local inplace_result = H.inplace_result
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- dropout
---------------------------------------------------------------------------
local function check_p(fname, p)
  check_num(fname, 2, "p", p)
  if not (p >= 0 and p <= 1) then fail(fname, "dropout probability has to be between 0 and 1, but got " .. p) end
end
local DROPOUT = { "p", "training", "inplace" }
-- the kept positions (1, or `scale` when given): one sampling pass and one
-- in-place scale, as PyTorch's bernoulli_(1 - p).div_(1 - p) (it was rand,
-- ge, a cast to the dtype and a multiply: four passes and three
-- temporaries, ~5% of a TransformerEncoder training step)
local function bernoulli_keep(shape, p, dtype, scale)
  return T.no_grad(function()
    local keep = T.empty(shape, { dtype = dtype }):bernoulli_(1 - p)
    if scale then keep:mul_(scale) end
    return keep
  end)
end
function F.dropout(x, ...)
  local o = parse("dropout", 2, DROPOUT, ...)
  local p, training = o.p or 0.5, o.training
  if training == nil then training = true end
  check_t("dropout", 1, "input", x)
  check_p("dropout", p)
  if not training or p == 0 then return x end
  local y
  if p == 1 then y = x * 0
  else y = x * bernoulli_keep(x.shape, p, x.dtype, 1 / (1 - p)) end
  return inplace_result(x, y, o.inplace)
end
-- whole channels dropped: the mask is (N, C, 1, ...) (or (C, 1, ...) for an
-- unbatched input of one dim fewer than batched_dim)
local function feature_dropout(fname, x, o, batched_dim)
  local p, training = o.p or 0.5, o.training
  if training == nil then training = true end
  check_t(fname, 1, "input", x)
  check_p(fname, p)
  if not training or p == 0 then return x end
  local nd = x:dim()
  if nd < 2 then fail(fname, "Feature dropout requires at least 2 dimensions in the input") end
  local shape = {}
  -- batched_dim nil: always (N, C, ...), as 1.13's dropout2d (a 3-D input is (N, C, L))
  local batched = batched_dim == nil or nd == batched_dim
  for i = 1, nd do shape[i] = 1 end
  if batched then shape[1], shape[2] = x:size(1), x:size(2) else shape[1] = x:size(1) end
  local y
  if p == 1 then y = x * 0
  else y = x * bernoulli_keep(shape, p, x.dtype, 1 / (1 - p)) end
  return inplace_result(x, y, o.inplace)
end
function F.dropout1d(x, ...)
  local o = parse("dropout1d", 2, DROPOUT, ...)
  check_t("dropout1d", 1, "input", x)
  if x:dim() ~= 2 and x:dim() ~= 3 then
    fail("dropout1d", "dropout1d: Expected 2D or 3D input, but received a " .. x:dim() .. "D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
  end
  return feature_dropout("dropout1d", x, o, 3)
end
function F.dropout2d(x, ...)
  local o = parse("dropout2d", 2, DROPOUT, ...)
  check_t("dropout2d", 1, "input", x)
  return feature_dropout("dropout2d", x, o, nil)
end
function F.dropout3d(x, ...)
  local o = parse("dropout3d", 2, DROPOUT, ...)
  check_t("dropout3d", 1, "input", x)
  return feature_dropout("dropout3d", x, o, 5)
end
-- alpha dropout keeps SELU's self-normalising mean and variance
local function alpha_dropout(fname, x, o, feature)
  local p, training = o.p or 0.5, o.training
  if training == nil then training = false end
  check_t(fname, 1, "input", x)
  check_p(fname, p)
  if not training or p == 0 then return x end
  if p == 1 then return inplace_result(x, x * 0, o.inplace) end
  -- PyTorch's constants: keep with prob 1 - p, x * a * keep + b,
  -- b = (keep - 1) alpha a + alpha a p, alpha = SELU's scale * alpha
  local alpha = SELU_ALPHA * SELU_SCALE
  local a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
  local shape = x.shape
  if feature then
    shape = {}
    for i = 1, x:dim() do shape[i] = i <= 2 and x:size(i) or 1 end
  end
  local keep = bernoulli_keep(shape, p, x.dtype)
  local b = (keep - 1) * (alpha * a) + alpha * a * p
  return inplace_result(x, x * (keep * a) + b, o.inplace)
end
function F.alpha_dropout(x, ...)
  return alpha_dropout("alpha_dropout", x, parse("alpha_dropout", 2, DROPOUT, ...), false)
end
function F.feature_alpha_dropout(x, ...)
  return alpha_dropout("feature_alpha_dropout", x, parse("feature_alpha_dropout", 2, DROPOUT, ...), true)
end
return true
