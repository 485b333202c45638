-- ltensor.nn.functional.embedding_bag.
local T = require "ltensor.core"
local U = require "ltensor.nn.functional.conv_util"
local F = require("ltensor.nn.functional.common").F
local math, type = U.math, U.type
local mtype = U.mtype
local is_t, fail, typename, check_t, tname = U.is_t, U.fail, U.typename, U.check_t, U.tname
local size_str = U.size_str
local args_of = U.args_of
local autograd = require "ltensor.autograd"
---------------------------------------------------------------------------
-- embedding_bag
---------------------------------------------------------------------------
local EBAG_ARGS = { "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
  "include_last_offset", "padding_idx", first = 3 }
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
return true
