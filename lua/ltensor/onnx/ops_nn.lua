-- ltensor.onnx.ops_nn -- convolution, pooling and normalisation operators
-- over T.nn.functional.  ONNX pads are [x1_begin, x2_begin, ..., x1_end,
-- x2_end]; where PyTorch's symmetric padding cannot express them (uneven
-- begin/end, or more than half a pooling window) the input is padded
-- explicitly first (zeros for convolutions, -inf for max pooling).
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math = compat.math
local F = require "ltensor.nn.functional"
local U = require "ltensor.onnx.util"

local O = {}
local rfail = U.rfail

-- the pads of `nsp` spatial dims for input sizes `ins`: begins, ends
local function pads_for(auto_pad, pads, ins, k, s, d)
  local nsp = #ins
  local b, e = {}, {}
  pads = pads or {}
  if auto_pad == "VALID" then
    for i = 1, nsp do b[i], e[i] = 0, 0 end
  elseif auto_pad == "SAME_UPPER" or auto_pad == "SAME_LOWER" then
    for i = 1, nsp do
      local out = math.ceil(ins[i] / s[i])
      local total = math.max((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - ins[i], 0)
      local small = math.floor(total / 2)
      if auto_pad == "SAME_UPPER" then b[i], e[i] = small, total - small
      else b[i], e[i] = total - small, small end
    end
  else
    for i = 1, nsp do b[i], e[i] = pads[i] or 0, pads[i + nsp] or 0 end
  end
  return b, e
end

-- pad the spatial dims explicitly: F.pad lists pads from the last dim
local function pad_spatial(x, b, e, value)
  local fp = {}
  for i = #b, 1, -1 do fp[#fp + 1] = b[i]; fp[#fp + 1] = e[i] end
  return F.pad(x, fp, "constant", value)
end

local function spatial_sizes(x, nsp)
  local s, ins = x.shape, {}
  for i = 1, nsp do ins[i] = s[2 + i] end
  return ins
end

local function rep(v, n)
  local out = {}
  for i = 1, n do out[i] = v end
  return out
end

-- the geometry attributes against the op's spatial rank (known once the
-- weights or the kernel are): one stride and dilation per spatial dim, both
-- positive, and two pads per spatial dim
local function check_geometry(nsp, s, d, pads)
  local function each(list, name, n, min)
    if not list then return end
    if #list ~= n then rfail(("attribute '%s' has %d values for %d spatial dims"):format(name, #list, nsp)) end
    for _, v in ipairs(list) do
      if v < min then rfail(("attribute '%s' holds %d (at least %d expected)"):format(name, v, min)) end
    end
  end
  each(s, "strides", nsp, 1)
  each(d, "dilations", nsp, 1)
  each(pads, "pads", 2 * nsp, 0)
end

-- geometry attributes shared by Conv and the pools
local function geometry(node, kernel)
  local auto_pad = node:choice("auto_pad", "NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")
  local pads = node:ints("pads", nil)
  local strides = node:ints("strides", nil)
  local dil = node:ints("dilations", nil)
  if kernel and #kernel ~= 1 and #kernel ~= 2 then
    node:fail(("%d-D kernels are not supported (1-D and 2-D are)"):format(#kernel))
  end
  for _, v in ipairs(pads or {}) do if v < 0 then node:fail("negative pads are not supported") end end
  return auto_pad, pads, strides, dil
end

function O.Conv(node)
  node:allow("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
  node:min_inputs(2)
  local kshape = node:ints("kernel_shape", nil)
  local auto_pad, pads, strides, dil = geometry(node, kshape)
  local group = node:int("group", 1)
  return function(x)
    local a, w, bias = x[1], x[2], x[3]
    local nsp = w:dim() - 2
    if nsp ~= 1 and nsp ~= 2 then rfail(("%d-D convolutions are not supported (1-D and 2-D are)"):format(nsp)) end
    if a:dim() ~= nsp + 2 then rfail(("input of rank %d for a %d-D convolution"):format(a:dim(), nsp)) end
    local k = {}
    for i = 1, nsp do k[i] = w:size(2 + i) end
    check_geometry(nsp, strides, dil, pads)
    local s, d = strides or rep(1, nsp), dil or rep(1, nsp)
    local b, e = pads_for(auto_pad, pads, spatial_sizes(a, nsp), k, s, d)
    local sym = true
    for i = 1, nsp do if b[i] ~= e[i] then sym = false end end
    local p = b
    if not sym then a = pad_spatial(a, b, e, 0); p = rep(0, nsp) end
    local opts = { stride = s, padding = p, dilation = d, groups = group }
    if nsp == 1 then return F.conv1d(a, w, bias, opts) end
    return F.conv2d(a, w, bias, opts)
  end
end

function O.ConvTranspose(node)
  node:allow("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "output_padding", "output_shape")
  node:min_inputs(2)
  if node.attrs.output_shape then node:fail("attribute 'output_shape' is not supported") end
  local kshape = node:ints("kernel_shape", nil)
  local auto_pad, pads, strides, dil = geometry(node, kshape)
  if auto_pad ~= "NOTSET" and auto_pad ~= "VALID" then node:fail("attribute auto_pad='" .. auto_pad .. "' is not supported") end
  local group = node:int("group", 1)
  local outpad = node:ints("output_padding", nil)
  return function(x)
    local a, w, bias = x[1], x[2], x[3]
    local nsp = w:dim() - 2
    if nsp ~= 1 and nsp ~= 2 then rfail(("%d-D convolutions are not supported (1-D and 2-D are)"):format(nsp)) end
    check_geometry(nsp, strides, dil, pads)
    if outpad and #outpad ~= nsp then
      rfail(("attribute 'output_padding' has %d values for %d spatial dims"):format(#outpad, nsp))
    end
    local p = rep(0, nsp)
    if pads and auto_pad == "NOTSET" then
      for i = 1, nsp do
        if pads[i] ~= pads[i + nsp] then rfail("asymmetric pads are not supported for ConvTranspose") end
        p[i] = pads[i]
      end
    end
    local opts = { stride = strides or rep(1, nsp), padding = p, output_padding = outpad or rep(0, nsp),
      groups = group, dilation = dil or rep(1, nsp) }
    if nsp == 1 then return F.conv_transpose1d(a, w, bias, opts) end
    return F.conv_transpose2d(a, w, bias, opts)
  end
end

local function pool(kind)
  return function(node)
    if kind == "max" then
      node:allow("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides")
      node:max_outputs(1, "Indices")
      if node:int("storage_order", 0) ~= 0 then node:fail("attribute storage_order=1 is not supported") end
    else
      node:allow("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides", "dilations")
      local dl = node:ints("dilations", nil)
      for _, v in ipairs(dl or {}) do if v ~= 1 then node:fail("attribute dilations other than 1 is not supported") end end
    end
    local k = node:ints("kernel_shape", nil)
    if not k then node:fail("attribute 'kernel_shape' is missing") end
    local auto_pad, pads, strides, dil = geometry(node, k)
    local nsp = #k
    local ok, err = pcall(check_geometry, nsp, strides, dil, pads)
    if not ok then node:fail((err:gsub("^ltensor%.onnx%.forward: ", ""))) end
    local ceil = node:int("ceil_mode", 0) ~= 0
    local cip = node:int("count_include_pad", 0) ~= 0
    local s, d = strides or rep(1, nsp), dil or rep(1, nsp)
    return function(x)
      local a = x[1]
      if a:dim() ~= nsp + 2 then rfail(("input of rank %d for a %d-D pool"):format(a:dim(), nsp)) end
      local b, e = pads_for(auto_pad, pads, spatial_sizes(a, nsp), k, s, d)
      local simple = true
      for i = 1, nsp do
        if b[i] ~= e[i] or b[i] > math.floor(k[i] / 2) then simple = false end
      end
      local p = b
      if not simple then
        if kind == "avg" and not cip then rfail("uneven pads with count_include_pad=0 are not supported") end
        a = pad_spatial(a, b, e, kind == "max" and -math.huge or 0)
        p = rep(0, nsp)
      end
      if kind == "max" then
        local opts = { stride = s, padding = p, dilation = d, ceil_mode = ceil }
        if nsp == 1 then return F.max_pool1d(a, k, opts) end
        return F.max_pool2d(a, k, opts)
      end
      local opts = { stride = s, padding = p, ceil_mode = ceil, count_include_pad = cip }
      if nsp == 1 then return F.avg_pool1d(a, k, opts) end
      return F.avg_pool2d(a, k, opts)
    end
  end
end
O.MaxPool = pool("max")
O.AveragePool = pool("avg")

local function spatial_dims(a)
  local dims = {}
  for i = 3, a:dim() do dims[#dims + 1] = i end
  return dims
end
-- a pooling over all spatial dims (kept): reduce(a, dims, keepdim)
local function global_pool(reduce)
  return function(node)
    node:allow()
    return function(x)
      local a = x[1]
      if a:dim() < 3 then return a end
      return reduce(a, spatial_dims(a), true)
    end
  end
end
O.GlobalAveragePool = global_pool(function(a, dims, keep) return T.mean(a, dims, keep) end)
O.GlobalMaxPool = global_pool(function(a, dims, keep) return T.amax(a, dims, keep) end)

function O.BatchNormalization(node)
  node:allow("epsilon", "momentum", "training_mode", "spatial")
  node:min_inputs(5)
  if node:int("training_mode", 0) ~= 0 then node:fail("attribute training_mode=1 is not supported") end
  if node:int("spatial", 1) ~= 1 then node:fail("attribute spatial=0 is not supported") end
  node:max_outputs(1, "running statistics")
  local eps = node:number("epsilon", 1e-5)
  return function(x)
    local a = x[1]
    if a:dim() < 2 then rfail("BatchNormalization needs an input of rank 2 or more") end
    return F.batch_norm(a, x[4], x[5], x[2], x[3], false, 0.0, eps)
  end
end

-- normalise over the dims from `d` on, then scale and shift (broadcast)
local function normalize_from(a, d, eps)
  local dims = {}
  for i = d, a:dim() do dims[#dims + 1] = i end
  local mean = T.mean(a, dims, true)
  local c = a - mean
  local var = T.mean(c * c, dims, true)
  return c / T.sqrt(var + eps)
end

function O.LayerNormalization(node)
  node:allow("axis", "epsilon", "stash_type")
  node:min_inputs(2)
  node:max_outputs(1, "Mean / InvStdDev")
  local axis, eps = node:int("axis", -1), node:number("epsilon", 1e-5)
  return function(x)
    local a, scale, bias = x[1], x[2], x[3]
    local r = a:dim()
    local d = U.dim(axis, r)
    local norm = {}
    for i = d, r do norm[#norm + 1] = a:size(i) end
    local exact = scale:dim() == #norm and (bias == nil or bias:dim() == #norm)
    for i = 1, #norm do
      if exact and (scale:size(i) ~= norm[i] or (bias and bias:size(i) ~= norm[i])) then exact = false end
    end
    if exact and a.dtype.is_floating_point then
      return F.layer_norm(a, norm, scale, bias, eps)
    end
    local y = normalize_from(a, d, eps) * scale
    if bias then y = y + bias end
    return y
  end
end

function O.InstanceNormalization(node)
  node:allow("epsilon")
  node:min_inputs(3)
  local eps = node:number("epsilon", 1e-5)
  return function(x)
    local a = x[1]
    local r = a:dim()
    if r < 3 then rfail("InstanceNormalization needs an input of rank 3 or more") end
    local shp = { 1, a:size(2) }
    for i = 3, r do shp[i] = 1 end
    return normalize_from(a, 3, eps) * x[2]:reshape(shp) + x[3]:reshape(shp)
  end
end

function O.LpNormalization(node)
  node:allow("axis", "p")
  local axis, p = node:int("axis", -1), node:int("p", 2)
  if p ~= 1 and p ~= 2 then node:fail("attribute p=" .. p .. " is not supported") end
  return function(x)
    local a = x[1]
    local d = U.dim(axis, a:dim())
    if p == 1 then return a / T.sum(T.abs(a), d, true) end
    return a / T.sqrt(T.sum(a * a, d, true))
  end
end

return O
