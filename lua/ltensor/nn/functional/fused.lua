-- ltensor.nn.functional.fused: the entry points of the fused C kernels
-- (src/binding/l_nnfused.c): F._ln_fused, _gn_fused, _bn_fused,
-- _bn_eval_fused, _nll_fused; each returns nil where the composite form must
-- be used (dtypes other than float32/float64).  Their backward rules are in
-- autograd/rules_nn.lua.
local T = require "ltensor.core"
local H = require "ltensor.nn.functional.common"
local math, F = H.math, H.F
local autograd = require "ltensor.autograd"
local FUSED = require("ltensor.autograd.helpers").FUSED
local function cdt(v, dtype)
  if v == nil then return nil end
  if v.dtype ~= dtype then v = v:to(dtype) end
  return v:contiguous()
end

function F._ln_fused(x, k, w, b, eps)
  if not FUSED[x.dtype.name] then return nil end
  local D = 1
  for i = x:dim() - k + 1, x:dim() do D = D * x:size(i) end
  local y = T._norm_rows(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), math.floor(x:numel() / D), D, eps, 0, 0, 0)
  return y
end

function F._gn_fused(x, G, w, b, eps)
  if not FUSED[x.dtype.name] then return nil end
  local N, C = x:size(1), x:size(2)
  local S = math.floor(x:numel() / (N * C))
  local Cg = math.floor(C / G)
  local y = T._norm_rows(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), N * G, Cg * S, eps, G, Cg, S)
  return y
end

function F._bn_fused(x, rm, rv, w, b, training, momentum, eps)
  if not training or not FUSED[x.dtype.name] then return nil end
  local y, mean, _, var = T._norm_chan(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), eps)
  if rm ~= nil or rv ~= nil then
    local n = math.floor(x:numel() / x:size(2))
    T.no_grad(function()
      if rm ~= nil then rm:mul_(1 - momentum):add_(mean:to(rm.dtype) * momentum) end
      if rv ~= nil then rv:mul_(1 - momentum):add_((var * (n / math.max(n - 1, 1))):to(rv.dtype) * momentum) end
    end)
  end
  return y
end
function F._bn_eval_fused(x, rm, rv, w, b, eps)
  if not FUSED[x.dtype.name] then return nil end
  local y = T._norm_chan_eval(x:contiguous(), cdt(w, x.dtype), cdt(b, x.dtype), cdt(rm, x.dtype), cdt(rv, x.dtype), eps)
  return y
end

local XENT_RED = { none = 0, sum = 1, mean = 2 }
function F._nll_fused(input, target, weight, ignore, r, with_lse)
  if not FUSED[input.dtype.name] then return nil end
  local nd = input:dim()
  local C = input:size(nd == 1 and 1 or 2)
  local x2
  if nd == 1 then x2 = input:reshape({ 1, C })
  elseif nd == 2 then x2 = input
  else x2 = input:movedim(2, -1):reshape({ -1, C }) end
  local t1 = target
  if t1:dim() ~= 1 then t1 = t1:reshape({ -1 }) end
  local red = XENT_RED[r]
  local loss = T._xent(x2:contiguous(), t1:contiguous(), cdt(weight, input.dtype), ignore, with_lse, red)
  if red == 0 then return loss:reshape(target.shape) end
  return loss
end
return true
