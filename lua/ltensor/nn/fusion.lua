-- ltensor.nn.fusion: folding eval-mode BatchNorm into the convolution or
-- linear layer before it (torch.nn.utils.fusion, and the eager part of
-- torch.ao.quantization.fuse_modules), for inference:
--
--   local fused = T.nn.utils.fuse_conv_bn_eval(conv, bn)     -- a new Conv2d
--   T.nn.utils.fuse_modules(model, {{"conv1", "bn1", "relu"}, {"layer1.0.conv1", "layer1.0.bn1"}})
--   model:eval():fuse()   -- every Conv directly followed by a BatchNorm in a Sequential
--
-- The folded layer computes w' = w * g / sqrt(rv + eps) (per output
-- channel), b' = (b - rm) * g / sqrt(rv + eps) + beta, PyTorch's formulas.
local T = require "ltensor.core"
local nn = require "ltensor.nn"
require "ltensor.nn.utils"
local compat = require "ltensor.compat"
local util = require "ltensor.util"
local table = compat.table

local utils = nn.utils
local M = {}

local fail = util.failer("ltensor.nn.utils.")
local is_t = util.is_tensor
local function cls(m) return nn.is_module(m) and m._classname or nil end
local CONV = { Conv1d = true, Conv2d = true, Conv3d = true }
local CONVT = { ConvTranspose1d = true, ConvTranspose2d = true, ConvTranspose3d = true }
local BN = { BatchNorm1d = true, BatchNorm2d = true, BatchNorm3d = true }

local function check_bn(fname, bn)
  if not BN[cls(bn) or ""] then
    fail(fname, "bad argument #2 'bn' (BatchNorm module expected, got " .. tostring(cls(bn) or type(bn)) .. ")")
  end
  if bn.running_mean == nil or bn.running_var == nil then
    fail(fname, "the batch norm keeps no running statistics (track_running_stats = false): nothing to fold")
  end
end

-- the tensors of the *_weights functions: 1, 3, 4 required, 2, 6, 7
-- optional (tensors or nil), 5 a number (a numeric loop: ipairs would stop
-- at the first nil and check nothing after it)
local WEIGHT_ARGS = { "weight", "bias", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b" }
local function check_weights(fname, ...)
  local args = { ... }
  for i = 1, 7 do
    local v, name = args[i], WEIGHT_ARGS[i]
    if i == 5 then
      if type(v) ~= "number" then fail(fname, "bad argument #5 'bn_eps' (number expected, got " .. type(v) .. ")") end
    elseif not is_t(v) and (v ~= nil or i == 1 or i == 3 or i == 4) then
      fail(fname, "bad argument #" .. i .. " '" .. name .. "' (Tensor expected, got " .. type(v) .. ")")
    end
  end
end

-- fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b [, transpose]) -> w, b (Parameters)
function M.fuse_conv_bn_weights(conv_w, conv_b, rm, rv, eps, bn_w, bn_b, transpose)
  check_weights("fuse_conv_bn_weights", conv_w, conv_b, rm, rv, eps, bn_w, bn_b)
  return T.no_grad(function()
    if conv_b == nil then conv_b = T.zeros_like(rm) end
    if bn_w == nil then bn_w = T.ones_like(rm) end
    if bn_b == nil then bn_b = T.zeros_like(rm) end
    local rsq = T.rsqrt(rv + eps)
    local shape = { -1, 1 }
    if transpose then shape = { 1, -1 } end
    for _ = 3, conv_w:dim() do shape[#shape + 1] = 1 end
    local w = conv_w * (bn_w * rsq):reshape(shape)
    local b = (conv_b - rm) * rsq * bn_w + bn_b
    return nn.Parameter(w:detach()), nn.Parameter(b:detach())
  end)
end

-- fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b) -> w, b (Parameters)
function M.fuse_linear_bn_weights(lw, lb, rm, rv, eps, bn_w, bn_b)
  check_weights("fuse_linear_bn_weights", lw, lb, rm, rv, eps, bn_w, bn_b)
  return T.no_grad(function()
    if bn_w == nil then bn_w = T.ones_like(rm) end
    if bn_b == nil then bn_b = T.zeros_like(rm) end
    if lb == nil then lb = T.zeros_like(rm) end
    local scale = bn_w * T.rsqrt(rv + eps)
    return nn.Parameter((lw * scale:unsqueeze(-1)):detach()), nn.Parameter(((lb - rm) * scale + bn_b):detach())
  end)
end

local function set_wb(m, w, b)
  m:register_parameter("weight", w)
  m:register_parameter("bias", b)
  return m
end

-- fuse_conv_bn_eval(conv, bn [, transpose]) -> a copy of conv with bn folded in
function M.fuse_conv_bn_eval(conv, bn, transpose)
  local fname = "fuse_conv_bn_eval"
  local c = cls(conv)
  if not (CONV[c or ""] or CONVT[c or ""]) then
    fail(fname, "bad argument #1 'conv' (convolution module expected, got " .. tostring(c or type(conv)) .. ")")
  end
  check_bn(fname, bn)
  if conv.training or bn.training then fail(fname, "Fusion only for eval!") end
  if transpose == nil then transpose = CONVT[c] or false end
  local fused = conv:clone()
  return set_wb(fused, M.fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
    bn.weight, bn.bias, transpose))
end
M.fuse_conv_bn = M.fuse_conv_bn_eval

-- fuse_linear_bn_eval(linear, bn) -> a copy of linear with bn folded in
function M.fuse_linear_bn_eval(linear, bn)
  local fname = "fuse_linear_bn_eval"
  if cls(linear) ~= "Linear" then
    fail(fname, "bad argument #1 'linear' (Linear expected, got " .. tostring(cls(linear) or type(linear)) .. ")")
  end
  check_bn(fname, bn)
  if linear.training or bn.training then fail(fname, "Fusion only for eval!") end
  local fused = linear:clone()
  return set_wb(fused, M.fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
    bn.weight, bn.bias))
end

-- the fused replacement of a list of modules (PyTorch's fuser method
-- table, eager and eval only): its first module's replacement, or nil
local function fuse_list(fname, mods, names)
  local kinds = {}
  for i, m in ipairs(mods) do
    local c = cls(m)
    kinds[i] = (CONV[c] or CONVT[c]) and "conv" or BN[c] and "bn" or c == "ReLU" and "relu" or c == "Linear" and "linear" or c
  end
  local key = table.concat(kinds, ",")
  local relu
  if key == "conv,bn" or key == "conv,bn,relu" then
    local f = M.fuse_conv_bn_eval(mods[1], mods[2])
    if key == "conv,bn" then return f end
    relu = mods[3]
    return nn.Sequential(f, relu)
  elseif key == "linear,bn" then
    return M.fuse_linear_bn_eval(mods[1], mods[2])
  elseif key == "conv,relu" or key == "linear,relu" then
    return nn.Sequential(mods[1], mods[2])
  end
  fail(fname, "cannot fuse modules " .. table.concat(names, ", ") .. " (" .. key .. "): supported are conv+bn, " ..
    "conv+bn+relu, conv+relu, linear+bn and linear+relu")
end

-- parent module and last name of a dotted path
local function locate(fname, root, path)
  local parent, last = root, path
  local dot = path:match("^.*()%.")
  if dot then
    parent = root:get_submodule(path:sub(1, dot - 1))
    last = path:sub(dot + 1)
  end
  local m = rawget(parent, "_modules").map[last]
  if m == nil then fail(fname, "module '" .. path .. "' not found") end
  return parent, last, m
end

-- fuse_modules(model, modules_to_fuse [, {inplace = false}]) -> model (a copy unless inplace):
-- each list of names {conv, bn [, relu]} becomes the fused module in the
-- first name's place and Identity in the others (torch.ao.quantization.fuse_modules)
function M.fuse_modules(model, lists, opts)
  local fname = "fuse_modules"
  if not nn.is_module(model) then fail(fname, "bad argument #1 'model' (Module expected, got " .. type(model) .. ")") end
  if type(lists) ~= "table" then fail(fname, "bad argument #2 'modules_to_fuse' (table expected, got " .. type(lists) .. ")") end
  opts = T._check_opts("nn.utils." .. fname, opts or {}, { "inplace" })
  util.check_flags(fail, fname, opts)
  if type(lists[1]) == "string" then lists = { lists } end
  if not opts.inplace then model = model:clone() end
  for _, names in ipairs(lists) do
    if type(names) ~= "table" or #names < 2 then fail(fname, "each entry of modules_to_fuse must list 2 or 3 module names") end
    local mods, where = {}, {}
    for i, path in ipairs(names) do
      if type(path) ~= "string" then
        fail(fname, ("modules_to_fuse: module names are strings (got %s at position %d)"):format(util.typename(path), i))
      end
      local parent, last, m = locate(fname, model, path)
      mods[i], where[i] = m, { parent, last }
    end
    local fused = fuse_list(fname, mods, names)
    where[1][1]:add_module(where[1][2], fused)
    for i = 2, #names do where[i][1]:add_module(where[i][2], nn.Identity()) end
  end
  return model
end

-- fuse_conv_bn_modules(model): in place, every Conv directly followed by a
-- BatchNorm inside a Sequential (where order is data flow) is folded, the
-- BatchNorm replaced by Identity; model must be in eval mode.  Returns model.
function M.fuse_conv_bn_modules(model)
  local fname = "fuse_conv_bn_modules"
  if not nn.is_module(model) then fail(fname, "bad argument #1 'model' (Module expected, got " .. type(model) .. ")") end
  for _, nm in ipairs(model:named_modules()) do
    local m = nm[2]
    if cls(m) == "Sequential" or (nn.Sequential and getmetatable(m) and m._super == nn.Sequential) then
      local kids = m:named_children()
      for i = 1, #kids - 1 do
        local a, b = kids[i][2], kids[i + 1][2]
        if (CONV[cls(a) or ""] or CONVT[cls(a) or ""]) and BN[cls(b) or ""] and b.running_mean ~= nil then
          m:add_module(kids[i][1], M.fuse_conv_bn_eval(a, b))
          m:add_module(kids[i + 1][1], nn.Identity())
        end
      end
    end
  end
  return model
end

for k, v in pairs(M) do utils[k] = v end
-- model:fuse(): fuse_conv_bn_modules(model)
function nn.Module:fuse() return M.fuse_conv_bn_modules(self) end

return M
