-- ltensor.nn.basic: the first nn's layers: Linear, activations, Dropout,
-- Embedding, LayerNorm and the loss modules (nn/layers.lua adds the wider set).
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
local autograd = require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn
local F = require "ltensor.nn.functional"
local Module = nn.Module
local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.")
local typename = util.mtname
local pyfloat, pytuple, check_opts = nn._pyfloat, nn._pytuple, nn._check_opts
local check_size, check_type = nn._check_size, nn._check_type
---------------------------------------------------------------------------
-- layers
---------------------------------------------------------------------------
local function uniform(shape, bound)
  return T.no_grad(function() return T.rand(shape) * (2 * bound) - bound end)
end

local Linear = Module:extend("Linear")
nn.Linear = Linear
-- weight {out, in} and bias {out} ~ U(-1/sqrt(in), 1/sqrt(in)): PyTorch's
-- kaiming_uniform_(a=sqrt(5)) works out to exactly this bound.
function Linear:init(in_features, out_features, bias, opts)
  if type(bias) == "table" then bias, opts = nil, bias end
  opts = check_opts("Linear", opts, { "bias", "dtype" }, 3)
  if bias == nil then bias = opts.bias end
  if bias == nil then bias = true end
  if type(bias) ~= "boolean" then fail("Linear", "bad argument #3 'bias' (boolean expected, got " .. typename(bias) .. ")") end
  check_size("Linear", 1, "in_features", in_features)
  check_size("Linear", 2, "out_features", out_features)
  util.check_param_budget(fail, "Linear", opts.dtype, (out_features + 0.0) * in_features + (bias and out_features or 0),
    bias and 2 or 1, ("in_features=%d, out_features=%d"):format(in_features, out_features))
  self.in_features, self.out_features = in_features, out_features
  local bound = in_features > 0 and 1 / math.sqrt(in_features) or 0
  local dtype = opts.dtype
  local w = uniform({ out_features, in_features }, bound)
  if dtype then w = w:to(dtype) end
  self.weight = nn.Parameter(w)
  if bias then
    local b = uniform({ out_features }, bound)
    if dtype then b = b:to(dtype) end
    self.bias = nn.Parameter(b)
  end
end
function Linear:forward(x) return F.linear(x, self.weight, self.bias) end
function Linear:extra_repr()
  return string.format("in_features=%d, out_features=%d, bias=%s", self.in_features, self.out_features,
    self.bias ~= nil and "True" or "False")
end
---------------------------------------------------------------------------
-- activations and simple layers
---------------------------------------------------------------------------
local function activation(name, fn)
  local C = Module:extend(name)
  C.init = function() end
  C.forward = function(_, x) return fn(x) end
  nn[name] = C
  return C
end
-- ReLU(inplace = false) and SiLU: PyTorch's one parameter, positionally or
-- in an options table, a flag
local function inplace_arg(name, a, n)
  if n > 1 then fail(name, ("takes at most 1 positional argument (%d given)"):format(n)) end
  if util.is_opts(a) then return check_opts(name, a, { "inplace" }).inplace or false end
  util.check_flag(fail, name, "inplace", a, 1)
  return a or false
end
local function inplace_activation(name, fn)
  local C = Module:extend(name)
  function C:init(...) self.inplace = inplace_arg(name, ..., select("#", ...)) end
  function C:forward(x) return fn(x, self.inplace and { inplace = true } or nil) end
  function C:extra_repr() return self.inplace and "inplace=True" or "" end
  nn[name] = C
  return C
end
inplace_activation("ReLU", F.relu)
activation("Tanh", F.tanh)
activation("Sigmoid", F.sigmoid)
inplace_activation("SiLU", F.silu)
activation("Identity", function(x) return x end)

local GELU = Module:extend("GELU")
nn.GELU = GELU
function GELU:init(approximate)
  if type(approximate) == "table" then approximate = check_opts("GELU", approximate, { "approximate" }).approximate end
  approximate = approximate or "none"
  if approximate ~= "none" and approximate ~= "tanh" then
    fail("GELU", "bad argument #1 'approximate' (\"none\" or \"tanh\" expected)")
  end
  self.approximate = approximate
end
function GELU:forward(x) return F.gelu(x, self.approximate) end
function GELU:extra_repr() return "approximate='" .. self.approximate .. "'" end

-- Softmax and LogSoftmax: (dim), an integer or nil (the legacy implicit dim)
local function softmax_class(name, fn)
  local C = Module:extend(name)
  nn[name] = C
  function C:init(dim)
    if dim ~= nil and math.type(dim) ~= "integer" then fail(name, "bad argument #1 'dim' (integer expected, got " .. typename(dim) .. ")") end
    self.dim = dim
  end
  function C:forward(x) return fn(x, self.dim) end
  function C:extra_repr() return "dim=" .. (self.dim and tostring(self.dim) or "None") end
end
softmax_class("Softmax", function(x, dim) return F.softmax(x, dim) end)
softmax_class("LogSoftmax", function(x, dim) return F.log_softmax(x, dim) end)

local Dropout = Module:extend("Dropout")
nn.Dropout = Dropout
-- Dropout(p = 0.5, inplace = false), positionally or in an options table
function Dropout:init(p, inplace, ...)
  if select("#", ...) > 0 then fail("Dropout", ("takes at most 2 positional arguments (%d given)"):format(2 + select("#", ...))) end
  local opts = {}
  if util.is_opts(inplace) then opts, inplace = check_opts("Dropout", inplace, { "inplace" }, 2), nil
  elseif type(p) == "table" and inplace == nil then opts, p = check_opts("Dropout", p, { "p", "inplace" }), nil end
  util.check_flag(fail, "Dropout", "inplace", inplace, 2)
  p = p or opts.p or 0.5
  check_type("Dropout", 1, "p", p, "number")
  if not (p >= 0 and p <= 1) then fail("Dropout", "dropout probability has to be between 0 and 1, but got " .. p) end
  self.p = p
  self.inplace = inplace or opts.inplace or false
end
function Dropout:forward(x) return F.dropout(x, self.p, self.training, self.inplace) end
function Dropout:extra_repr() return "p=" .. pyfloat(self.p) .. ", inplace=" .. (self.inplace and "True" or "False") end

---------------------------------------------------------------------------
-- Embedding(num_embeddings, embedding_dim [, {padding_idx, max_norm,
-- norm_type = 2, dtype, _weight}]): padding_idx is 1-based (negative from
-- the end); its row starts at zero and gets no gradient.  max_norm renormalises,
-- in place, the rows an input looks up whose norm exceeds it (as PyTorch).
---------------------------------------------------------------------------
local EmbeddingFn = autograd.Function {
  name = "Embedding",
  forward = function(ctx, weight, idx, padding_idx)
    local flat = idx:reshape({ idx:numel() })
    ctx.flat, ctx.padding_idx, ctx.wshape, ctx.wdtype = flat, padding_idx, weight.shape, weight.dtype
    local shape = idx.shape
    shape[#shape + 1] = weight.shape[2]
    return weight:index_select(1, flat):reshape(shape)
  end,
  backward = function(ctx, g)
    local D = ctx.wshape[2]
    local g2 = g:reshape({ ctx.flat:numel(), D })
    if ctx.padding_idx then
      g2 = g2 * T.ne(ctx.flat, ctx.padding_idx):unsqueeze(2):to(g2.dtype)
    end
    local gw = T.zeros(ctx.wshape, { dtype = ctx.wdtype })
    gw:index_add_(1, ctx.flat, g2)
    return gw
  end,
}

local function embedding_renorm(weight, idx, max_norm, norm_type)
  T.no_grad(function()
    local flat = idx:reshape({ idx:numel() })
    if flat:numel() == 0 then return end
    local rows = weight:index_select(1, flat)
    local norms = T.norm(rows, norm_type, 2, true)
    local scale = T.where(T.gt(norms, max_norm), max_norm / (norms + 1e-7), T.ones_like(norms))
    weight:index_copy_(1, flat, rows * scale)
  end)
end

-- F.embedding with PyTorch's full signature (the functional form of the
-- layer; T.nn.functional.embedding keeps its two-argument form)
function nn._embedding(idx, weight, padding_idx, max_norm, norm_type)
  if not is_t(idx) then fail("functional.embedding", "bad argument #1 'input' (Tensor expected, got " .. typename(idx) .. ")") end
  if not is_t(weight) then fail("functional.embedding", "bad argument #2 'weight' (Tensor expected, got " .. typename(weight) .. ")") end
  if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == T.bool then
    fail("functional.embedding", "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got " .. idx.dtype.name .. " instead")
  end
  if weight:dim() ~= 2 then fail("functional.embedding", "'weight' must be 2-D") end
  local n = weight.shape[1]
  if idx:numel() > 0 then
    local lo, hi = T.amin(idx):item(), T.amax(idx):item()   -- (integers: nothing to record)
    if lo < 1 or hi > n then
      fail("functional.embedding", "index out of range in self (index " .. (lo < 1 and lo or hi) ..
        " for " .. n .. " embeddings; indices are 1-based)")
    end
  end
  if max_norm then embedding_renorm(weight, idx, max_norm, norm_type or 2) end
  if not (weight.requires_grad and T.is_grad_enabled()) then
    -- nothing to record (inference; a token at a time): EmbeddingFn's forward without its node
    local shape = idx.shape
    shape[#shape + 1] = weight.shape[2]
    return weight:index_select(1, idx:to(T.int64):reshape({ idx:numel() })):reshape(shape)
  end
  return EmbeddingFn(weight, idx:to(T.int64), padding_idx)
end

local Embedding = Module:extend("Embedding")
nn.Embedding = Embedding
function Embedding:init(num_embeddings, embedding_dim, opts)
  check_size("Embedding", 1, "num_embeddings", num_embeddings)
  check_size("Embedding", 2, "embedding_dim", embedding_dim)
  opts = check_opts("Embedding", opts, { "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq",
    "sparse", "dtype", "_weight", "_freeze" }, 3)
  if opts.scale_grad_by_freq or opts.sparse then
    fail("Embedding", "scale_grad_by_freq and sparse gradients are not supported")
  end
  self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
  local pad = opts.padding_idx
  if pad ~= nil then
    if math.type(pad) ~= "integer" then fail("Embedding", "padding_idx must be an integer, got " .. typename(pad)) end
    if pad > 0 then
      if pad > num_embeddings then fail("Embedding", "Padding_idx must be within num_embeddings") end
    elseif pad < 0 then
      if pad < -num_embeddings then fail("Embedding", "Padding_idx must be within num_embeddings") end
      pad = num_embeddings + 1 + pad
    else
      fail("Embedding", "Padding_idx must be within num_embeddings (1-based: 1.." .. num_embeddings .. " or negative)")
    end
  end
  self.padding_idx = pad
  if opts.max_norm ~= nil then check_type("Embedding", 3, "opts.max_norm", opts.max_norm, "number") end
  if opts.norm_type ~= nil then check_type("Embedding", 3, "opts.norm_type", opts.norm_type, "number") end
  self.max_norm, self.norm_type = opts.max_norm, opts.norm_type or 2
  local w
  if opts._weight ~= nil then
    if not is_t(opts._weight) then fail("Embedding", "_weight must be a tensor") end
    local s = opts._weight.shape
    if #s ~= 2 or s[1] ~= num_embeddings or s[2] ~= embedding_dim then
      fail("Embedding", "Shape of weight does not match num_embeddings and embedding_dim")
    end
    w = opts._weight:detach()
  else
    util.check_param_budget(fail, "Embedding", opts.dtype, (num_embeddings + 0.0) * embedding_dim, 1,
      ("num_embeddings=%d, embedding_dim=%d"):format(num_embeddings, embedding_dim))
    w = T.randn({ num_embeddings, embedding_dim })
    if opts.dtype then w = w:to(opts.dtype) end
    if pad then T.no_grad(function() w[pad]:fill_(0) end) end
  end
  self.weight = nn.Parameter(w, not opts._freeze)
end
-- Embedding.from_pretrained(weight [, {freeze = true, padding_idx, max_norm, norm_type}])
function Embedding.from_pretrained(w, opts)
  if not is_t(w) or w:dim() ~= 2 then fail("Embedding.from_pretrained", "Embeddings parameter is expected to be 2-dimensional") end
  opts = check_opts("Embedding.from_pretrained", opts, { "freeze", "padding_idx", "max_norm", "norm_type" }, 2)
  local freeze = opts.freeze
  if freeze == nil then freeze = true end
  return Embedding(w.shape[1], w.shape[2], { _weight = w, _freeze = freeze, padding_idx = opts.padding_idx,
    max_norm = opts.max_norm, norm_type = opts.norm_type })
end
function Embedding:forward(idx)
  return nn._embedding(idx, self.weight, self.padding_idx, self.max_norm, self.norm_type)
end
function Embedding:extra_repr()
  local s = self.num_embeddings .. ", " .. self.embedding_dim
  if self.padding_idx then s = s .. ", padding_idx=" .. self.padding_idx end
  if self.max_norm then s = s .. ", max_norm=" .. pyfloat(self.max_norm) end
  if self.norm_type ~= 2 then s = s .. ", norm_type=" .. pyfloat(self.norm_type) end
  return s
end

local LayerNorm = Module:extend("LayerNorm")
nn.LayerNorm = LayerNorm
function LayerNorm:init(normalized_shape, eps, elementwise_affine)
  local dtype
  if type(eps) == "table" then
    local o = check_opts("LayerNorm", eps, { "eps", "elementwise_affine", "dtype" }, 2)
    eps, elementwise_affine, dtype = o.eps, o.elementwise_affine, o.dtype
  end
  if type(normalized_shape) == "number" then normalized_shape = { normalized_shape } end
  check_type("LayerNorm", 1, "normalized_shape", normalized_shape, "table")
  for i, v in ipairs(normalized_shape) do check_size("LayerNorm", 1, "normalized_shape[" .. i .. "]", v) end
  check_type("LayerNorm", 2, "eps", eps, "number", true)
  util.check_flag(fail, "LayerNorm", "elementwise_affine", elementwise_affine, 3)
  self.normalized_shape = normalized_shape
  self.eps = eps or 1e-5
  if elementwise_affine == nil then elementwise_affine = true end
  self.elementwise_affine = elementwise_affine and true or false
  if elementwise_affine then
    local n, dims = 1.0, {}
    for i, v in ipairs(normalized_shape) do n, dims[i] = n * v, tostring(v) end
    util.check_param_budget(fail, "LayerNorm", dtype, 2 * n, 2, "normalized_shape={" .. table.concat(dims, ", ") .. "}")
    local o = dtype and { dtype = dtype } or nil
    self.weight = nn.Parameter(T.ones(normalized_shape, o))
    self.bias = nn.Parameter(T.zeros(normalized_shape, o))
  end
end
function LayerNorm:forward(x)
  return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
end
function LayerNorm:extra_repr()
  return pytuple(self.normalized_shape) .. ", eps=" .. pyfloat(self.eps) .. ", elementwise_affine=" ..
    (self.elementwise_affine and "True" or "False")
end

-- losses as modules
local function loss_module(name, fn)
  local C = Module:extend(name)
  function C:init(opts)
    if opts ~= nil and type(opts) ~= "table" and type(opts) ~= "string" then
      fail(name, "bad argument #1 'opts' (table expected, got " .. typename(opts) .. ")")
    end
    self.opts = opts or {}
  end
  function C:forward(a, b) return fn(a, b, self.opts) end
  nn[name] = C
end
loss_module("MSELoss", F.mse_loss)
loss_module("CrossEntropyLoss", F.cross_entropy)
loss_module("NLLLoss", F.nll_loss)
loss_module("L1Loss", F.l1_loss)
return true
