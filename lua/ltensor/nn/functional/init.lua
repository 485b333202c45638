-- ltensor.nn.functional (T.nn.functional): activations, dropout, losses,
-- normalisation and attention, with PyTorch 1.13's semantics.
--
-- Most functions are compositions of differentiable tensor ops, so autograd
-- differentiates them for free.  Where the composition would give a wrong
-- gradient at a kink (softplus at 0 through abs/relu, BCE at 0 or 1) or
-- would be slow, the function has its own backward (autograd.Function) or a
-- fused C kernel from src/binding/l_nnfused.c with a rule in
-- autograd/rules_nn.lua (batch/layer/group norm, log_softmax + nll, relu's backward).
--
-- Calling convention (conformance README, "Call conventions"): tensors and
-- PyTorch's positional arguments are positional, nil standing for a skipped
-- optional tensor; keyword arguments go in a trailing options table, which
-- may follow any prefix of the positional ones.  Dims and class indices are
-- 1-based.  The functions live in nn/functional/*.lua, one file per area.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local class_mask = H.class_mask
local table, F = H.table, H.F
local fail, arg_fail, check_t = H.fail, H.arg_fail, H.check_t
local check_int = H.check_int
local parse = H.parse
local shape_str, same_shape, inplace_result, custom = H.shape_str, H.same_shape, H.inplace_result, H.custom
local autograd = require "ltensor.autograd"
require "ltensor.autograd.rules_nn"   -- the fused kernels' and raw conv/pool functions' rules
---------------------------------------------------------------------------
-- linear, embedding, one_hot (kept from the first nn)
---------------------------------------------------------------------------
function F.linear(x, w, b)
  check_t("linear", 1, "input", x)
  check_t("linear", 2, "weight", w)
  check_t("linear", 3, "bias", b, true)
  -- one gemm with the bias, recorded as one node (T._linear); other forms
  -- (dtypes, shapes, 1-D input) go through matmul + add
  local dt = x.dtype
  if (dt == T.float32 or dt == T.float64) and w.dtype == dt and w:dim() == 2 and x:dim() >= 2
    and (b == nil or (b.dtype == dt and b:dim() == 1 and b:size(1) == w:size(1))) and x:size(-1) == w:size(2) then
    if x:dim() == 2 then return T._linear(x, w, b) end
    if x:is_contiguous() and x:numel() > 0 then
      local shape = x.shape
      shape[#shape] = w:size(1)
      return T._linear(x:reshape({ -1, x:size(-1) }), w, b):reshape(shape)
    end
  end
  local out = T.matmul(x, w:t())
  if b ~= nil then out = out + b end
  return out
end

function F.bilinear(x1, x2, w, b)
  check_t("bilinear", 1, "input1", x1)
  check_t("bilinear", 2, "input2", x2)
  check_t("bilinear", 3, "weight", w)
  check_t("bilinear", 4, "bias", b, true)
  -- y_k = x1 W_k x2^T + b_k
  local lead = {}
  for i = 1, x1:dim() - 1 do lead[i] = x1:size(i) end
  local a = x1:reshape({ -1, x1:size(-1) })
  local c = x2:reshape({ -1, x2:size(-1) })
  local t = T.matmul(a:unsqueeze(2):unsqueeze(2), w:unsqueeze(1))   -- (N,O,1,I2)
  local y = T.sum(t:squeeze(3) * c:unsqueeze(2), 3)
  if b ~= nil then y = y + b end
  lead[#lead + 1] = w:size(1)
  return y:reshape(lead)
end

function F.embedding(idx, weight, ...)
  check_t("embedding", 1, "input", idx)
  check_t("embedding", 2, "weight", weight)
  local o = parse("embedding", 3, { "padding_idx" }, ...)
  check_int("embedding", 3, "padding_idx", o.padding_idx, true)
  if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == T.bool then
    arg_fail("embedding", 1, "input", "expected an integer tensor of indices, got " .. idx.dtype.name)
  end
  local out = weight[idx]
  if o.padding_idx ~= nil and o.padding_idx < 0 then o.padding_idx = weight:size(1) + o.padding_idx + 1 end
  if o.padding_idx ~= nil and out.requires_grad then
    -- the padding row gets no gradient: route its lookups through a detached copy
    local pad = T.eq(idx, o.padding_idx):unsqueeze(-1)
    out = T.where(pad, out:detach(), out)
  end
  return out
end


function F.one_hot(t, num_classes)
  check_t("one_hot", 1, "input", t)
  if num_classes == -1 then num_classes = nil end
  check_int("one_hot", 2, "num_classes", num_classes, true)
  if t.dtype ~= T.int64 then fail("one_hot", "one_hot is only applicable to index tensor of type int64") end
  if num_classes == nil then
    if t:numel() == 0 then fail("one_hot", "Can not infer total number of classes from empty tensor.") end
    num_classes = T.amax(t):item()
  end
  if t:numel() > 0 then
    local lo, hi = T.amin(t):item(), T.amax(t):item()
    if lo < 1 then fail("one_hot", "Class values must be positive (1-based).") end
    if hi > num_classes then fail("one_hot", "Class values must not exceed num_classes.") end
  end
  return class_mask(t, num_classes, t:dim() + 1, t:dim() + 1):to(T.int64)
end

require "ltensor.nn.functional.activations"
require "ltensor.nn.functional.dropout"
require "ltensor.nn.functional.losses"
require "ltensor.nn.functional.ctc_loss"
require "ltensor.nn.functional.normalization"
require "ltensor.nn.functional.attention"
require "ltensor.nn.functional.fused"
require "ltensor.nn.functional.pad"
require "ltensor.nn.functional.conv"
require "ltensor.nn.functional.pooling"
require "ltensor.nn.functional.interpolate"
require "ltensor.nn.functional.fold"
require "ltensor.nn.functional.embedding_bag"
return F
