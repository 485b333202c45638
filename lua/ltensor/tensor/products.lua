-- ltensor.tensor.products: inner, vdot, ger, chain_matmul, cdist.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local C = require "ltensor.tensor.common"
local math, table = compat.math, compat.table
local M = T._methods
local select = select
local fail, torch_dtype_name, is_opts, check_t = C.fail, C.torch_dtype_name, C.is_opts, C.check_t
local opts_arg, check_num = C.opts_arg, C.check_num
local named, def, is_float, is_complex = C.named, C.def, C.is_float, C.is_complex
local shape_str, common = C.shape_str, C.common
---------------------------------------------------------------------------
-- Products
---------------------------------------------------------------------------
def("inner", function(a, b)
  check_t("inner", 1, a) check_t("inner", 2, b)
  if a:dim() == 0 or b:dim() == 0 then return a * b end
  if a:size(-1) ~= b:size(-1) then
    fail("inner", ("inner() the last dimension must match on both input tensors but got shapes %s and %s"):format(
      shape_str(a.shape), shape_str(b.shape)))
  end
  return T.tensordot(a, b, { { a:dim() }, { b:dim() } })
end)

def("vdot", function(a, b)
  check_t("vdot", 1, a) check_t("vdot", 2, b)
  if a:dim() ~= 1 or b:dim() ~= 1 then
    fail("vdot", ("1D tensors expected, but got %dD and %dD tensors"):format(a:dim(), b:dim()))
  end
  if a.dtype ~= b.dtype then
    fail("vdot", ("dot : expected both vectors to have same dtype, but found %s and %s"):format(
      torch_dtype_name(a.dtype), torch_dtype_name(b.dtype)))
  end
  if a:numel() ~= b:numel() then
    fail("vdot", ("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of elements, but got %d and %d elements respectively"):format(
      a:numel(), b:numel(), a:numel(), b:numel()))
  end
  if is_complex(a) then return T.sum(T.conj(a) * b) end
  return T.dot(a, b)
end)

def("ger", function(a, b) return T.outer(a, b) end)

function T.chain_matmul(...)
  local list, n = C.tensor_args("chain_matmul", function(m)
    if m:dim() ~= 2 then
      fail("chain_matmul", ("Tensor dimension is %d, expected 2 instead."):format(m:dim()))
    end
  end, ...)
  if n == 0 then fail("chain_matmul", "chain_matmul(): Expected one or more matrices") end
  if n == 1 then return list[1]:clone() end
  return T.linalg.multi_dot(list)
end
T.chain_matmul = named("chain_matmul", T.chain_matmul)

---------------------------------------------------------------------------
-- cdist
---------------------------------------------------------------------------
def("cdist", function(x1, x2, p, opts)
  check_t("cdist", 1, x1)
  check_t("cdist", 2, x2)
  if is_opts(p) then opts, p = p, nil end
  opts = opts_arg("cdist", opts, { "p", "compute_mode" })
  if p == nil and opts then p = opts.p end
  p = p or 2
  check_num("cdist", "p", p)
  if x1:dim() < 2 then fail("cdist", ("cdist only supports at least 2D tensors, X1 got: %dD"):format(x1:dim())) end
  if x2:dim() < 2 then fail("cdist", ("cdist only supports at least 2D tensors, X2 got: %dD"):format(x2:dim())) end
  if x1:size(-1) ~= x2:size(-1) then
    fail("cdist", ("X1 and X2 must have the same number of columns. X1: %d X2: %d"):format(x1:size(-1), x2:size(-1)))
  end
  if not is_float(x1) or not is_float(x2) then
    fail("cdist", ("cdist only supports floating-point dtypes, X1 got: %s"):format(tostring(is_float(x1) and x2.dtype or x1.dtype)))
  end
  if p < 0 then fail("cdist", "cdist only supports non-negative p values") end
  local ab = common("cdist", { x1, x2 })
  local mode = opts and opts.compute_mode or "use_mm_for_euclid_dist_if_necessary"
  if mode ~= "use_mm_for_euclid_dist_if_necessary" and mode ~= "use_mm_for_euclid_dist"
     and mode ~= "donot_use_mm_for_euclid_dist" then
    fail("cdist", ("%s is not a valid value for compute_mode"):format(tostring(mode)))
  end
  local r1, r2 = x1:size(-2), x2:size(-2)
  if p == 2 and (mode == "use_mm_for_euclid_dist" or
                 (mode == "use_mm_for_euclid_dist_if_necessary" and (r1 > 25 or r2 > 25))) then
    -- PyTorch's _euclidean_dist: |a|^2 + |b|^2 - 2 a.b through one matmul,
    -- without the (.., P, R, M) difference tensor
    local a, b = ab[1], ab[2]
    local an, bn = T.sum(a * a, -1, true), T.sum(b * b, -1, true)
    local a_ = T.cat({ a * -2, an, T.ones_like(an) }, -1)
    local b_ = T.cat({ b, T.ones_like(bn), bn }, -1)
    return T.sqrt(T.clamp_min(T.matmul(a_, b_:transpose(-2, -1)), 0))
  end
  local function dist(a)
    local d = a:unsqueeze(-2) - ab[2]:unsqueeze(-3)
    if p == 0 then return T.sum(T.ne(d, 0):to(d.dtype), -1) end
    if p == math.huge then return T.amax(T.abs(d), -1) end
    if p == 1 then return T.sum(T.abs(d), -1) end
    -- the p-norm reduction: its gradient is 0 where a distance is 0 (the
    -- points coincide), as PyTorch's cdist backward; sqrt(sum(d * d))
    -- would give 0 * inf = NaN there
    return T.norm(d, p, -1)
  end
  -- the (.., rows, R, M) differences are built for blocks of rows of x1 so
  -- that the temporary stays bounded (about 2^22 elements per batch entry)
  local m = x1:size(-1)
  local per_row = math.max(1, r2 * m)
  local block = math.max(1, math.floor(4194304 / per_row))
  if r1 <= block then return dist(ab[1]) end
  local parts = {}
  for s0 = 1, r1, block do parts[#parts + 1] = dist(ab[1]:narrow(-2, s0, math.min(block, r1 - s0 + 1))) end
  return T.cat(parts, -2)
end)
return true
