-- ltensor.nn.conv: the modules over nn/functional's spatial functions:
-- Conv1d/2d, ConvTranspose1d/2d, Max/Avg/Adaptive pools, Upsample,
-- PixelShuffle/PixelUnshuffle, EmbeddingBag, Unfold/Fold.
local T = require "ltensor.core"
local U = require "ltensor.nn.functional.conv_util"
local pool_out, UNFOLD_ARGS = U.pool_out, U.UNFOLD_ARGS
local F = require("ltensor.nn.functional.common").F
local math, table, TMT, getmetatable, type = U.math, U.table, U.TMT, U.getmetatable, U.type
local mtype, sqrt, concat, unpack = U.mtype, U.sqrt, U.concat, U.unpack
local is_t, typename = U.is_t, U.typename
local size_str, tuple_str = U.size_str, U.tuple_str
local args_of = U.args_of
local ntuple = U.ntuple
local autograd = require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn
local util = require "ltensor.util"
---------------------------------------------------------------------------
-- modules
---------------------------------------------------------------------------
local Module = nn.Module
local function mfail(cls, msg) error("ltensor.nn." .. cls .. ": " .. msg, 0) end
local function init_uniform(shape, bound, dtype)
  return T.no_grad(function()
    local t = T.rand(shape, dtype and { dtype = dtype } or nil)
    return t * (2 * bound) - bound
  end)
end
local function pos_int(cls, name, v)
  if mtype(v) ~= "integer" or v <= 0 then
    mfail(cls, ("bad argument '%s' (positive integer expected, got %s)"):format(name, mtype(v) and tostring(v) or typename(v)))
  end
end
local function is_default(v, d)
  if type(v) ~= "table" then return v == d end
  for i = 1, #v do if v[i] ~= d then return false end end
  return true
end

-- padding_mode ~= "zeros": pad with index_select (differentiable) before a
-- convolution with no padding.  pads[i] = {before, after} of spatial dim i.
local function pad_index(n, before, after, mode)
  local idx = {}
  for j = 1, n + before + after do
    local i = j - before - 1                      -- 0-based source position
    if mode == "reflect" then
      if n == 1 then i = 0 else
        local period = 2 * (n - 1)
        i = i % period
        if i >= n then i = period - i end
      end
    elseif mode == "replicate" then
      i = i < 0 and 0 or (i >= n and n - 1 or i)
    else                                          -- circular
      i = i % n
    end
    idx[j] = i + 1
  end
  return T.tensor(idx, { dtype = T.int64 })
end
local function pad_mode(cls, x, pads, mode)
  local nd = #pads
  for i = 1, nd do
    local dim = x:dim() - nd + i
    local n = x:size(dim)
    local b, a = pads[i][1], pads[i][2]
    if b > 0 or a > 0 then
      if mode == "reflect" and (b >= n or a >= n) then
        mfail(cls, ("Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%d, %d) at dimension %d of input %s"):format(
          b, a, dim, size_str(x.shape)))
      end
      if mode == "circular" and (b > n or a > n) then
        mfail(cls, "Padding value causes wrapping around more than once.")
      end
      x = x:index_select(dim, pad_index(n, b, a, mode))
    end
  end
  return x
end

local function conv_module(cls, nd, transposed)
  local C = Module:extend(cls)
  nn[cls] = C
  local ARGS = transposed and { "stride", "padding", "output_padding", "groups", "bias", "dilation", "padding_mode" }
    or { "stride", "padding", "dilation", "groups", "bias", "padding_mode" }
  ARGS.extra, ARGS.first = { "dtype" }, 4
  function C:init(in_channels, out_channels, kernel_size, ...)
    local a = args_of("nn." .. cls, ARGS, ...)
    a.dtype = util.opt_dtype("nn." .. cls, a.dtype)
    pos_int(cls, "in_channels", in_channels)
    pos_int(cls, "out_channels", out_channels)
    local groups = a.groups or 1
    pos_int(cls, "groups", groups)
    if in_channels % groups ~= 0 then mfail(cls, "in_channels must be divisible by groups") end
    if out_channels % groups ~= 0 then mfail(cls, "out_channels must be divisible by groups") end
    local k = ntuple("nn." .. cls, "kernel_size", kernel_size, nd)
    local padding = a.padding or 0
    local padding_mode = a.padding_mode or "zeros"
    local valid = { zeros = true, reflect = true, replicate = true, circular = true }
    if not valid[padding_mode] then
      mfail(cls, "padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode='" ..
        tostring(padding_mode) .. "'")
    end
    self.stride = ntuple("nn." .. cls, "stride", a.stride or 1, nd)
    self.dilation = ntuple("nn." .. cls, "dilation", a.dilation or 1, nd)
    if type(padding) == "string" then
      if transposed then mfail(cls, "padding='" .. padding .. "' is not supported for transposed convolutions") end
      if padding ~= "same" and padding ~= "valid" then
        mfail(cls, "Invalid padding string '" .. padding .. "', should be one of {'valid', 'same'}")
      end
      if padding == "same" and not is_default(self.stride, 1) then
        mfail(cls, "padding='same' is not supported for strided convolutions")
      end
      self.padding = padding
    else
      self.padding = ntuple("nn." .. cls, "padding", padding, nd)
    end
    if transposed then
      self.output_padding = ntuple("nn." .. cls, "output_padding", a.output_padding or 0, nd)
      if padding_mode ~= "zeros" then mfail(cls, 'Only "zeros" padding mode is supported for ' .. cls) end
    end
    self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
    self.groups, self.padding_mode = groups, padding_mode
    local wshape = transposed and { in_channels, math.floor(out_channels / groups) } or { out_channels, math.floor(in_channels / groups) }
    local fan_in = wshape[2]
    for i = 1, nd do wshape[#wshape + 1] = k[i] fan_in = fan_in * k[i] end
    local bias = a.bias
    if bias == nil then bias = true end
    local numel = 1.0
    for _, v in ipairs(wshape) do numel = numel * v end
    util.check_param_budget(util.fail, "nn." .. cls, a.dtype, numel + (bias and out_channels or 0), bias and 2 or 1,
      ("in_channels=%d, out_channels=%d, kernel_size={%s}"):format(in_channels, out_channels, concat(k, ", ")))
    local bound = fan_in > 0 and 1 / sqrt(fan_in) or 0
    self.weight = nn.Parameter(init_uniform(wshape, bound, a.dtype))
    if bias then self.bias = nn.Parameter(init_uniform({ out_channels }, bound, a.dtype)) end
    -- the padding the non-"zeros" modes apply themselves
    if padding_mode ~= "zeros" then
      local pads = {}
      for i = 1, nd do
        if self.padding == "same" then
          local total = self.dilation[i] * (k[i] - 1)
          pads[i] = { math.floor(total / 2), total - math.floor(total / 2) }
        elseif self.padding == "valid" then pads[i] = { 0, 0 }
        else pads[i] = { self.padding[i], self.padding[i] } end
      end
      self._pads = pads
    end
  end
  local fn = transposed and (nd == 1 and F.conv_transpose1d or F.conv_transpose2d) or (nd == 1 and F.conv1d or F.conv2d)
  if transposed then
    function C:forward(x, output_size)
      local op = self.output_padding
      if output_size ~= nil then
        -- PyTorch's _output_padding: pick the output_padding that gives output_size
        if not is_t(x) then mfail(cls, "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
        if x:dim() ~= nd + 1 and x:dim() ~= nd + 2 then   -- the functional form words it
          return fn(x, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)
        end
        if type(output_size) ~= "table" or is_t(output_size) then
          mfail(cls, "bad argument #2 'output_size' (table of integers expected, got " .. typename(output_size) .. ")")
        end
        local sp = output_size
        local non_spatial = x:dim() == nd + 1 and 1 or 2
        if #sp ~= nd and #sp ~= nd + non_spatial then
          mfail(cls, ("ConvTranspose%dD: for %dD input, output_size must have %d or %d elements (got %d)"):format(
            nd, x:dim(), nd, nd + non_spatial, #sp))
        end
        if #sp > nd then sp = { unpack(sp, #sp - nd + 1) } end
        for i = 1, nd do
          if mtype(sp[i]) ~= "integer" then
            mfail(cls, ("bad argument #2 'output_size' (entry %d is %s, not an integer)"):format(i,
              mtype(sp[i]) and tostring(sp[i]) or typename(sp[i])))
          end
        end
        op = {}
        for i = 1, nd do
          local inn = x:size(x:dim() - nd + i)
          local min = (inn - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
          op[i] = sp[i] - min
          if op[i] < 0 or op[i] >= math.max(self.stride[i], self.dilation[i]) then
            mfail(cls, ("requested an output size of %s, but valid sizes range from %d to %d (for an input of %s)"):format(
              size_str(sp), min, min + math.max(self.stride[i], self.dilation[i]) - 1, size_str({ unpack(x.shape, x:dim() - nd + 1) })))
          end
        end
      end
      return fn(x, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)
    end
  else
    -- 4-D float input of the right channels: straight to the kernel (the
    -- per-frame case, where argument handling would dominate); anything
    -- else goes through the functional form and its checks and messages
    local fast = nd == 2
    function C:forward(x)
      -- (the parameters read from their registry: the module's __index
      -- costs ~50 ns a lookup, and this path is the per-frame one)
      local pm = rawget(self, "_params").map
      local w, b = pm.weight or self.weight, pm.bias or self.bias
      local xdt = fast and getmetatable(x) == TMT and x.dtype
      if xdt and rawget(self, "_pads") == nil and x:dim() == 4 and xdt == w.dtype
          and (xdt == T.float32 or xdt == T.float64) and x:size(2) == self.in_channels
          and w:dim() == 4 and (b == nil or b.dtype == xdt) then
        local f = rawget(self, "_geom")
        if f == nil or f.w ~= w then
          local st, dl = self.stride, self.dilation
          local kh, kw = w:size(3), w:size(4)
          local pl, pr = {}, {}
          for i = 1, 2 do
            local k = i == 1 and kh or kw
            if self.padding == "same" then
              local total = dl[i] * (k - 1)
              pl[i], pr[i] = math.floor(total / 2), total - math.floor(total / 2)
            elseif self.padding == "valid" then pl[i], pr[i] = 0, 0
            else pl[i], pr[i] = self.padding[i], self.padding[i] end
          end
          f = { w = w, st[1], st[2], pl[1], pl[2], dl[1], dl[2],
            pl[1] + pr[1] - dl[1] * (kh - 1) - 1, pl[2] + pr[2] - dl[2] * (kw - 1) - 1 }
          rawset(self, "_geom", f)
        end
        local Ho = math.floor((x:size(3) + f[7]) / f[1]) + 1
        local Wo = math.floor((x:size(4) + f[8]) / f[2]) + 1
        local groups = self.groups
        if Ho >= 1 and Wo >= 1 and w:size(2) * groups == self.in_channels then
          return T._conv_small(x, w, b, f[1], f[2], f[3], f[4], f[5], f[6], groups, Ho, Wo)
        end
      end
      if self._pads then
        if not is_t(x) then mfail(cls, "bad argument #1 'input' (Tensor expected, got " .. typename(x) .. ")") end
        x = pad_mode(cls, x, self._pads, self.padding_mode)
        return fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
      end
      return fn(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
    end
  end
  function C:extra_repr()
    local s = ("%d, %d, kernel_size=%s, stride=%s"):format(self.in_channels, self.out_channels, tuple_str(self.kernel_size),
      tuple_str(self.stride))
    if type(self.padding) == "string" then s = s .. ", padding=" .. self.padding
    elseif not is_default(self.padding, 0) then s = s .. ", padding=" .. tuple_str(self.padding) end
    if not is_default(self.dilation, 1) then s = s .. ", dilation=" .. tuple_str(self.dilation) end
    if self.output_padding and not is_default(self.output_padding, 0) then
      s = s .. ", output_padding=" .. tuple_str(self.output_padding)
    end
    if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
    if self.bias == nil then s = s .. ", bias=False" end
    if self.padding_mode ~= "zeros" then s = s .. ", padding_mode=" .. self.padding_mode end
    return s
  end
  return C
end
conv_module("Conv1d", 1, false)
conv_module("Conv2d", 2, false)
conv_module("ConvTranspose1d", 1, true)
conv_module("ConvTranspose2d", 2, true)

local function pyval(v)
  if type(v) == "boolean" then return v and "True" or "False" end
  if v == nil then return "None" end
  if type(v) == "table" then return tuple_str(v) end
  return tostring(v)
end

local function pool_module(cls, nd, kind)
  local C = Module:extend(cls)
  nn[cls] = C
  local ARGS = kind == "max" and { "stride", "padding", "dilation", "return_indices", "ceil_mode" }
    or { "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override" }
  ARGS.first = 2
  function C:init(kernel_size, ...)
    local a = args_of("nn." .. cls, ARGS, ...)
    ntuple("nn." .. cls, "kernel_size", kernel_size, nd)
    -- the geometry is checked here, in the module's name (the repr reads it)
    if type(a.stride) == "table" and #a.stride == 0 and next(a.stride) == nil then a.stride = nil end
    if a.stride ~= nil then ntuple("nn." .. cls, "stride", a.stride, nd) end
    if a.padding ~= nil then ntuple("nn." .. cls, "padding", a.padding, nd) end
    if kind == "max" and a.dilation ~= nil then ntuple("nn." .. cls, "dilation", a.dilation, nd) end
    self.kernel_size = kernel_size
    self.stride = a.stride or kernel_size
    self.padding = a.padding or 0
    self.ceil_mode = a.ceil_mode and true or false
    if kind == "max" then
      self.dilation = a.dilation or 1
      self.return_indices = a.return_indices and true or false
    else
      self.count_include_pad = a.count_include_pad
      if self.count_include_pad == nil then self.count_include_pad = true end
      if nd == 2 then self.divisor_override = a.divisor_override end
    end
  end
  local fn = kind == "max" and (nd == 1 and F.max_pool1d or F.max_pool2d) or (nd == 1 and F.avg_pool1d or F.avg_pool2d)
  if kind == "max" then
    function C:forward(x)
      -- 2-D pools of 4-D float input skip the functional form once their
      -- geometry has been checked there (the first call)
      local f = rawget(self, "_geom")
      local xdt = f and getmetatable(x) == TMT and x.dtype
      if xdt and (xdt == T.float32 or xdt == T.float64) and x:dim() == 4 then
        local ceil, ri = rawget(self, "ceil_mode"), rawget(self, "return_indices")
        if ceil == nil then ceil = self.ceil_mode end
        if ri == nil then ri = self.return_indices end
        local Ho = pool_out(x:size(3), f[1], f[3], f[5], f[7], ceil)
        local Wo = pool_out(x:size(4), f[2], f[4], f[6], f[8], ceil)
        if Ho >= 1 and Wo >= 1 then
          return T._max_pool2d(x, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], Ho, Wo, ri and true or false)
        end
      end
      local out, idx = fn(x, self.kernel_size, { stride = self.stride, padding = self.padding, dilation = self.dilation,
        ceil_mode = self.ceil_mode, return_indices = self.return_indices })
      if nd == 2 and f == nil then
        local k = ntuple("nn." .. cls, "kernel_size", self.kernel_size, 2)
        local st = ntuple("nn." .. cls, "stride", self.stride, 2)
        local p = ntuple("nn." .. cls, "padding", self.padding, 2)
        local d = ntuple("nn." .. cls, "dilation", self.dilation, 2)
        rawset(self, "_geom", { k[1], k[2], st[1], st[2], p[1], p[2], d[1], d[2] })
      end
      return out, idx
    end
    function C:extra_repr()
      return ("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s"):format(pyval(self.kernel_size),
        pyval(self.stride), pyval(self.padding), pyval(self.dilation), pyval(self.ceil_mode))
    end
  else
    function C:forward(x)
      return fn(x, self.kernel_size, { stride = self.stride, padding = self.padding, ceil_mode = self.ceil_mode,
        count_include_pad = self.count_include_pad, divisor_override = self.divisor_override })
    end
    function C:extra_repr()
      local s = ("kernel_size=%s, stride=%s, padding=%s"):format(pyval(self.kernel_size), pyval(self.stride), pyval(self.padding))
      if nd == 1 then s = ("kernel_size=%s, stride=%s, padding=%s"):format(tuple_str(ntuple("nn." .. cls, "k", self.kernel_size, 1)),
        tuple_str(ntuple("nn." .. cls, "s", self.stride, 1)), tuple_str(ntuple("nn." .. cls, "p", self.padding, 1))) end
      return s
    end
  end
end
pool_module("MaxPool1d", 1, "max")
pool_module("MaxPool2d", 2, "max")
pool_module("AvgPool1d", 1, "avg")
pool_module("AvgPool2d", 2, "avg")

local function adaptive_module(cls, fn, has_indices)
  local C = Module:extend(cls)
  nn[cls] = C
  local ARGS = has_indices and { "return_indices", first = 2 } or { first = 2 }
  function C:init(output_size, ...)
    local a = args_of("nn." .. cls, ARGS, ...)
    if output_size == nil then mfail(cls, "bad argument #1 'output_size' (integer or table expected, got nil)") end
    self.output_size = output_size
    if has_indices then self.return_indices = a.return_indices and true or false end
  end
  function C:forward(x)
    if has_indices then return fn(x, self.output_size, { return_indices = self.return_indices }) end
    return fn(x, self.output_size)
  end
  function C:extra_repr() return "output_size=" .. pyval(self.output_size) end
end
adaptive_module("AdaptiveAvgPool1d", F.adaptive_avg_pool1d)
adaptive_module("AdaptiveAvgPool2d", F.adaptive_avg_pool2d)
adaptive_module("AdaptiveMaxPool1d", F.adaptive_max_pool1d, true)
adaptive_module("AdaptiveMaxPool2d", F.adaptive_max_pool2d, true)

local Upsample = Module:extend("Upsample")
nn.Upsample = Upsample
local UPSAMPLE_ARGS = { "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", first = 1 }
function Upsample:init(...)
  local a = args_of("nn.Upsample", UPSAMPLE_ARGS, ...)
  self.size, self.scale_factor = a.size, a.scale_factor
  self.mode = a.mode or "nearest"
  self.align_corners = a.align_corners
  self.recompute_scale_factor = a.recompute_scale_factor
end
function Upsample:forward(x)
  return F.interpolate(x, { size = self.size, scale_factor = self.scale_factor, mode = self.mode,
    align_corners = self.align_corners, recompute_scale_factor = self.recompute_scale_factor })
end
function Upsample:extra_repr()
  local s
  if self.scale_factor ~= nil then
    local sf = self.scale_factor
    if mtype(sf) == "integer" then sf = sf + 0.0 end
    s = "scale_factor=" .. pyval(sf)
  else s = "size=" .. pyval(self.size) end
  return s .. ", mode=" .. self.mode
end
local UpsamplingNearest2d = Module:extend("UpsamplingNearest2d")
nn.UpsamplingNearest2d = UpsamplingNearest2d
function UpsamplingNearest2d:init(size, scale_factor)
  Upsample.init(self, { size = size, scale_factor = scale_factor, mode = "nearest" })
end
UpsamplingNearest2d.forward, UpsamplingNearest2d.extra_repr = Upsample.forward, Upsample.extra_repr
local UpsamplingBilinear2d = Module:extend("UpsamplingBilinear2d")
nn.UpsamplingBilinear2d = UpsamplingBilinear2d
function UpsamplingBilinear2d:init(size, scale_factor)
  Upsample.init(self, { size = size, scale_factor = scale_factor, mode = "bilinear", align_corners = true })
end
UpsamplingBilinear2d.forward, UpsamplingBilinear2d.extra_repr = Upsample.forward, Upsample.extra_repr

local PixelShuffle = Module:extend("PixelShuffle")
nn.PixelShuffle = PixelShuffle
function PixelShuffle:init(r) pos_int("PixelShuffle", "upscale_factor", r) self.upscale_factor = r end
function PixelShuffle:forward(x) return F.pixel_shuffle(x, self.upscale_factor) end
function PixelShuffle:extra_repr() return "upscale_factor=" .. self.upscale_factor end
local PixelUnshuffle = Module:extend("PixelUnshuffle")
nn.PixelUnshuffle = PixelUnshuffle
function PixelUnshuffle:init(r) pos_int("PixelUnshuffle", "downscale_factor", r) self.downscale_factor = r end
function PixelUnshuffle:forward(x) return F.pixel_unshuffle(x, self.downscale_factor) end
function PixelUnshuffle:extra_repr() return "downscale_factor=" .. self.downscale_factor end

local Unfold = Module:extend("Unfold")
nn.Unfold = Unfold
function Unfold:init(kernel_size, ...)
  local a = args_of("nn.Unfold", UNFOLD_ARGS, ...)
  self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, a.dilation or 1, a.padding or 0, a.stride or 1
end
function Unfold:forward(x)
  return F.unfold(x, self.kernel_size, { dilation = self.dilation, padding = self.padding, stride = self.stride })
end
function Unfold:extra_repr()
  return ("kernel_size=%s, dilation=%s, padding=%s, stride=%s"):format(pyval(self.kernel_size), pyval(self.dilation),
    pyval(self.padding), pyval(self.stride))
end
local Fold = Module:extend("Fold")
nn.Fold = Fold
function Fold:init(output_size, kernel_size, ...)
  local a = args_of("nn.Fold", UNFOLD_ARGS, ...)
  self.output_size, self.kernel_size = output_size, kernel_size
  self.dilation, self.padding, self.stride = a.dilation or 1, a.padding or 0, a.stride or 1
end
function Fold:forward(x)
  return F.fold(x, self.output_size, self.kernel_size, { dilation = self.dilation, padding = self.padding, stride = self.stride })
end
function Fold:extra_repr()
  return ("output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s"):format(pyval(self.output_size),
    pyval(self.kernel_size), pyval(self.dilation), pyval(self.padding), pyval(self.stride))
end

local EmbeddingBag = Module:extend("EmbeddingBag")
nn.EmbeddingBag = EmbeddingBag
function EmbeddingBag:init(num_embeddings, embedding_dim, ...)
  local a = args_of("nn.EmbeddingBag", { "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse", "_weight", "include_last_offset",
    "padding_idx", "dtype", first = 3 }, ...)
  a.dtype = util.opt_dtype("nn.EmbeddingBag", a.dtype)
  pos_int("EmbeddingBag", "num_embeddings", num_embeddings)
  pos_int("EmbeddingBag", "embedding_dim", embedding_dim)
  local mode = a.mode or "mean"
  if mode ~= "sum" and mode ~= "mean" and mode ~= "max" then mfail("EmbeddingBag", "mode has to be one of sum, mean or max") end
  if a.max_norm ~= nil and type(a.max_norm) ~= "number" then
    mfail("EmbeddingBag", "max_norm must be a number, got " .. typename(a.max_norm))
  end
  if a.norm_type ~= nil and type(a.norm_type) ~= "number" then
    mfail("EmbeddingBag", "norm_type must be a number, got " .. typename(a.norm_type))
  end
  if a.scale_grad_by_freq or a.sparse then mfail("EmbeddingBag", "scale_grad_by_freq and sparse gradients are not supported") end
  local pad = a.padding_idx
  if pad ~= nil then
    -- 1-based: 1..num, or -num..-1 from the end
    if mtype(pad) ~= "integer" then mfail("EmbeddingBag", "padding_idx must be an integer, got " .. typename(pad)) end
    if pad == 0 or pad > num_embeddings or pad < -num_embeddings then
      mfail("EmbeddingBag", "padding_idx must be within num_embeddings (1-based: 1.." .. num_embeddings .. " or negative)")
    end
    if pad < 0 then pad = num_embeddings + 1 + pad end
  end
  self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
  self.max_norm, self.norm_type, self.padding_idx = a.max_norm, a.norm_type or 2, pad
  self.include_last_offset = a.include_last_offset and true or false
  local w = a._weight
  if w ~= nil then
    if not is_t(w) or w:dim() ~= 2 or w:size(1) ~= num_embeddings or w:size(2) ~= embedding_dim then
      mfail("EmbeddingBag", "Shape of weight does not match num_embeddings and embedding_dim")
    end
  else
    util.check_param_budget(util.fail, "nn.EmbeddingBag", a.dtype, (num_embeddings + 0.0) * embedding_dim, 1,
      ("num_embeddings=%d, embedding_dim=%d"):format(num_embeddings, embedding_dim))
    w = T.randn({ num_embeddings, embedding_dim }, a.dtype and { dtype = a.dtype } or nil)
    if pad then w[pad]:fill_(0) end
  end
  self.weight = nn.Parameter(w)
end
function EmbeddingBag:forward(input, offsets, per_sample_weights)
  return F.embedding_bag(input, self.weight, { offsets = offsets, mode = self.mode, per_sample_weights = per_sample_weights,
    include_last_offset = self.include_last_offset, max_norm = self.max_norm, norm_type = self.norm_type,
    padding_idx = self.padding_idx })
end
function EmbeddingBag:extra_repr()
  local s = ("%d, %d"):format(self.num_embeddings, self.embedding_dim)
  if self.max_norm ~= nil then s = s .. ", max_norm=" .. pyval(self.max_norm) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. pyval(self.norm_type) end
  s = s .. ", mode=" .. self.mode
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  return s
end
return true
