-- ltensor.nn.functional.ctc_loss: connectionist temporal classification.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local math, table, F, is_t = H.math, H.table, H.F, H.is_t
local fail, typename, arg_fail, check_t = H.fail, H.typename, H.arg_fail, H.check_t
local check_int = H.check_int
local check_float = H.check_float
local parse, reduction_of, reduce = H.parse, H.reduction_of, H.reduce
local custom = H.custom
local autograd = require "ltensor.autograd"
-- ctc_loss(log_probs, targets, input_lengths, target_lengths [, {blank=1,
-- reduction="mean", zero_infinity=false}]): connectionist temporal
-- classification, as PyTorch 1.13's (alpha-beta recursions over time, in
-- log space, vectorised over the batch and the extended label positions).
-- log_probs (T, N, C) or (T, C); targets (N, S) padded or the concatenated
-- 1-D targets; lengths as tensors or Lua lists.  Classes and blank are
-- 1-based.  The gradient is PyTorch's: exp(lp) - exp(lcab + nll - lp).
local NEG_INF = -math.huge
local function lse3(a, b, c)
  local m = T.maximum(T.maximum(a, b), c)
  local ms = T.where(T.eq(m, NEG_INF), 0, m)
  return ms + T.log(T.exp(a - ms) + T.exp(b - ms) + T.exp(c - ms))
end
local function shift_right(x, k, fill)   -- x[..., s - k], fill for s <= k
  local L = x:size(-1)
  if k >= L then return T.full_like(x, fill) end
  local pad = T.full_like(x:narrow(-1, 1, k), fill)
  return T.cat({ pad, x:narrow(-1, 1, L - k) }, -1)
end
local function shift_left(x, k, fill)    -- x[..., s + k]
  local L = x:size(-1)
  if k >= L then return T.full_like(x, fill) end
  local pad = T.full_like(x:narrow(-1, 1, k), fill)
  return T.cat({ x:narrow(-1, k + 1, L - k), pad }, -1)
end

local CTC = custom("CtcLossBackward0", function(ctx, lp, lab, allow2, valid, ilen, slen, zero_inf)
  -- lp (T, N, C); lab (N, L') extended labels; allow2 (N, L') the s-2 skip;
  -- valid (N, L') positions inside 2 S_n + 1; ilen, slen (N) int64
  local Tn, N = lp:size(1), lp:size(2)
  local Lp = lab:size(2)
  local lpe = T.gather(lp, 3, lab:unsqueeze(1):expand({ Tn, N, Lp }))   -- (T, N, L')
  local first = T.lt(T.arange(1, Lp + 1):reshape({ 1, Lp }), 3)
  local alpha = T.where(T.logical_and(first, valid), lpe[1], NEG_INF)
  local alphas = { alpha }
  for t = 2, Tn do
    local new = lse3(alpha, shift_right(alpha, 1, NEG_INF), T.where(allow2, shift_right(alpha, 2, NEG_INF), NEG_INF)) + lpe[t]
    new = T.where(valid, new, NEG_INF)
    alpha = T.where(T.lt(ilen, t):unsqueeze(2), alpha, new)   -- frozen past the input's end
    alphas[t] = alpha
  end
  -- the last two positions 2 S_n + 1 and 2 S_n (1-based)
  local last = (slen * 2 + 1):unsqueeze(2)
  local a1 = T.gather(alpha, 2, last):squeeze(2)
  local a2 = T.where(T.gt(slen, 0), T.gather(alpha, 2, T.clamp_min(last - 1, 1)):squeeze(2), NEG_INF)
  local loss = -lse3(a1, a2, T.full_like(a1, NEG_INF))
  if T.any(T.eq(ilen, 0)):item() then
    loss = T.where(T.eq(ilen, 0), T.where(T.eq(slen, 0), 0, math.huge), loss)
  end
  local inf = T.isinf(loss)
  if zero_inf then loss = T.where(inf, 0, loss) end
  ctx:save_for_backward(lp)
  ctx.lpe, ctx.alphas, ctx.lab, ctx.allow2, ctx.valid, ctx.ilen, ctx.slen = lpe, alphas, lab, allow2, valid, ilen, slen
  ctx.nll, ctx.inf, ctx.zero_inf = loss, inf, zero_inf
  return loss
end, function(ctx, g)
  local lp = ctx.saved_tensors[1]
  local lpe, alphas, lab, allow2, valid, ilen, slen = ctx.lpe, ctx.alphas, ctx.lab, ctx.allow2, ctx.valid, ctx.ilen, ctx.slen
  return T.no_grad(function()
    local Tn, N, C = lp:size(1), lp:size(2), lp:size(3)
    local Lp = lab:size(2)
    local pos = T.arange(1, Lp + 1):reshape({ 1, Lp })
    local last = (slen * 2 + 1):unsqueeze(2)
    local ends = T.logical_and(T.logical_or(T.eq(pos, last), T.eq(pos, last - 1)), valid)
    local allow2_next = shift_left(allow2, 2, false)   -- may s jump to s + 2?
    local beta
    local ab = {}
    for t = Tn, 1, -1 do
      local init = T.where(ends, lpe[t], NEG_INF)
      local rec
      if beta then
        rec = lse3(beta, shift_left(beta, 1, NEG_INF), T.where(allow2_next, shift_left(beta, 2, NEG_INF), NEG_INF)) + lpe[t]
        rec = T.where(valid, rec, NEG_INF)
      else
        rec = T.full_like(init, NEG_INF)
      end
      local at_end = T.eq(ilen, t):unsqueeze(2)
      local inside = T.gt(ilen, t):unsqueeze(2)
      beta = T.where(at_end, init, T.where(inside, rec, NEG_INF))
      ab[t] = alphas[t] + beta
    end
    local abs = T.stack(ab, 1)                                           -- (T, N, L')
    local m = T.amax(abs, 3, true)
    local ms = T.where(T.eq(m, NEG_INF), 0, m)
    local e = T.exp(abs - ms)
    local sums = T.scatter_add(T.zeros({ Tn, N, C }, { dtype = lp.dtype }), 3, lab:unsqueeze(1):expand({ Tn, N, Lp }), e)
    local lcab = T.log(sums) + ms
    local nll = ctx.nll:reshape({ 1, N, 1 })
    local grad = T.exp(lp) - T.exp(lcab + nll - lp)
    local tpos = T.arange(1, Tn + 1):reshape({ Tn, 1, 1 })
    local live = T.le(tpos, ilen:reshape({ 1, N, 1 }))
    if ctx.zero_inf then live = T.logical_and(live, T.logical_not(ctx.inf):reshape({ 1, N, 1 })) end
    grad = T.where(live, grad, 0) * g:reshape({ 1, N, 1 })
    return grad
  end)
end)

local function lengths_of(fname, name, v, N, n)
  if is_t(v) then
    if v.dtype.is_floating_point or v.dtype == T.bool then arg_fail(fname, n, name, "expected an integer tensor") end
    v = v:to(T.int64):reshape({ -1 })
  elseif type(v) == "table" then
    v = T.tensor(#v > 0 and v or {}, { dtype = T.int64 }):reshape({ -1 })
  elseif math.type(v) == "integer" then
    v = T.tensor({ v }, { dtype = T.int64 })
  else
    arg_fail(fname, n, name, "tensor or table of integers expected, got " .. typename(v))
  end
  if v:numel() ~= N then fail(fname, name .. " must be of size batch_size") end
  return v
end

function F.ctc_loss(log_probs, targets, input_lengths, target_lengths, ...)
  local fname = "ctc_loss"
  check_t(fname, 1, "log_probs", log_probs)
  check_t(fname, 2, "targets", targets)
  local o = parse(fname, 5, { "blank", "reduction", "zero_infinity" }, ...)
  local r = reduction_of(fname, o.reduction)
  local blank = o.blank or 1
  check_int(fname, 5, "blank", blank)
  check_float(fname, log_probs, "ctc_loss_cpu")
  local unbatched = log_probs:dim() == 2
  if unbatched then
    log_probs = log_probs:unsqueeze(2)
    targets = targets:unsqueeze(1)
  end
  if log_probs:dim() ~= 3 then fail(fname, "log_probs must be 2-D (T, C) or 3-D (T, N, C)") end
  local Tn, N, C = log_probs:size(1), log_probs:size(2), log_probs:size(3)
  if blank < 1 or blank > C then fail(fname, "blank must be in label range") end
  local ilen = lengths_of(fname, "input_lengths", input_lengths, N, 3)
  local slen = lengths_of(fname, "target_lengths", target_lengths, N, 4)
  if targets.dtype.is_floating_point or targets.dtype == T.bool then
    arg_fail(fname, 2, "targets", "expected an integer tensor of class indices")
  end
  local il, sl = ilen:totable(), slen:totable()
  local smax = 0
  for n = 1, N do
    if il[n] < 0 or il[n] > Tn then
      fail(fname, ("Expected input_lengths to have value at most %d, but got value %d"):format(Tn, il[n]))
    end
    if sl[n] < 0 then fail(fname, "target_lengths must be non-negative") end
    smax = math.max(smax, sl[n])
  end
  -- the padded (N, smax) targets
  local tg
  if targets:dim() == 1 and not unbatched then
    local total = 0
    for n = 1, N do total = total + sl[n] end
    if targets:numel() < total then
      fail(fname, ("Expected tensor to have size at least %d at dimension 1, but got size %d for argument #2 'targets'"):format(total, targets:numel()))
    end
    local rows, off = {}, 0
    local flat = targets:to(T.int64)
    for n = 1, N do
      local row = T.full({ smax }, blank, { dtype = T.int64 })
      if sl[n] > 0 then row:narrow(1, 1, sl[n]):copy_(flat:narrow(1, off + 1, sl[n])) end
      off = off + sl[n]
      rows[n] = row
    end
    tg = N > 0 and T.stack(rows, 1) or T.zeros({ 0, smax }, { dtype = T.int64 })
  else
    if targets:dim() ~= 2 or targets:size(1) ~= N then fail(fname, "targets must be (N, S) or 1-D") end
    if targets:size(2) < smax then
      fail(fname, ("Expected tensor to have size at least %d at dimension 2, but got size %d for argument #2 'targets'"):format(smax, targets:size(2)))
    end
    tg = targets:to(T.int64):narrow(2, 1, smax)
  end
  local Lp = 2 * smax + 1
  local pos = T.arange(1, Lp + 1):reshape({ 1, Lp })
  local odd = T.eq(T.remainder(pos, 2), 0)                 -- 1-based even positions hold labels
  local lab
  if smax > 0 then
    local idx = T.clamp(T.div(pos, 2, { rounding_mode = "floor" }), 1, smax):expand({ N, Lp })
    lab = T.where(odd, T.gather(tg, 2, idx), blank)
  else
    lab = T.full({ N, Lp }, blank, { dtype = T.int64 })
  end
  if smax > 0 then
    local used = T.logical_and(odd, T.le(pos, (slen * 2):unsqueeze(2)))
    local bad = T.logical_and(used, T.logical_or(T.lt(lab, 1), T.gt(lab, C)))
    if T.any(bad):item() then fail(fname, "target index out of range") end
  end
  local allow2 = T.logical_and(T.logical_and(T.ne(lab, blank), T.gt(pos, 2)), T.ne(lab, shift_right(lab, 2, blank)))
  local valid = T.le(pos, (slen * 2 + 1):unsqueeze(2))
  local loss = CTC(log_probs, lab, allow2, valid, ilen, slen, o.zero_infinity and true or false)
  if unbatched then loss = loss:squeeze(1) end
  if r == "mean" then
    return T.mean(loss / T.clamp_min(slen, 1):to(loss.dtype):reshape(loss.shape))
  end
  return reduce(loss, r)
end
return true
