-- ltensor.nn.functional.attention: scaled_dot_product_attention.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local math, F = H.math, H.F
local fail, check_t, check_num = H.fail, H.check_t, H.check_num
local check_float = H.check_float
local parse = H.parse
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- attention
---------------------------------------------------------------------------
-- scaled_dot_product_attention(q, k, v [, attn_mask] [, {attn_mask=, dropout_p=,
-- is_causal=, scale=}]): softmax(q k^T scale + mask) v over batched leading
-- dims (PyTorch 2.x).  A bool mask: true attends; a float mask is added;
-- is_causal masks above the top-left-aligned diagonal.
function F.scaled_dot_product_attention(q, k, v, ...)
  local fname = "scaled_dot_product_attention"
  check_t(fname, 1, "query", q)
  check_t(fname, 2, "key", k)
  check_t(fname, 3, "value", v)
  local o = parse(fname, 4, { "attn_mask", "dropout_p", "is_causal", "scale" }, ...)
  local mask, dp, causal, scale = o.attn_mask, o.dropout_p or 0.0, o.is_causal, o.scale
  check_t(fname, 4, "attn_mask", mask, true)
  check_num(fname, 5, "dropout_p", dp)
  check_num(fname, 7, "scale", scale, true)
  if q:dim() < 2 or k:dim() < 2 or v:dim() < 2 then
    fail(fname, ("Expected query, key and value to have at least 2 dimensions, but got query.dim: %d, key.dim: %d and value.dim: %d instead."):format(q:dim(), k:dim(), v:dim()))
  end
  check_float(fname, q, "scaled_dot_product_attention")
  if q.dtype ~= k.dtype or q.dtype ~= v.dtype then
    fail(fname, ("Expected query, key, and value to have the same dtype, but got query.dtype: %s key.dtype: %s and value.dtype: %s instead."):format(
      q.dtype.name, k.dtype.name, v.dtype.name))
  end
  local E = q:size(-1)
  if k:size(-1) ~= E then
    fail(fname, ("Expected query and key to have the same last dimension (embedding size), but got %d and %d"):format(E, k:size(-1)))
  end
  if k:size(-2) ~= v:size(-2) then
    fail(fname, ("Expected key and value to have the same sequence length, but got %d and %d"):format(k:size(-2), v:size(-2)))
  end
  if causal and mask ~= nil then
    fail(fname, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
  end
  local L, S = q:size(-2), k:size(-2)
  if scale == nil then scale = E > 0 and 1 / math.sqrt(E) or 1 end
  local att = T.matmul(q, k:transpose(-2, -1)) * scale
  if causal then
    local keep = T.no_grad(function()
      local i = T.arange(1, L + 1):reshape({ L, 1 })
      local j = T.arange(1, S + 1):reshape({ 1, S })
      return T.ge(i, j)
    end)
    att = T.masked_fill(att, T.logical_not(keep), -math.huge)
  elseif mask ~= nil then
    if mask.dtype == T.bool then
      att = T.masked_fill(att, T.logical_not(mask), -math.huge)
    else
      att = att + mask
    end
  end
  att = T.softmax(att, -1)
  if dp > 0 then att = F.dropout(att, dp, true) end
  return T.matmul(att, v)
end
return true
