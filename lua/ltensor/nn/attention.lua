-- ltensor.nn.attention: MultiheadAttention, TransformerEncoderLayer and
-- TransformerEncoder (T.nn.*), with PyTorch 1.13's parameter names
-- (in_proj_weight, in_proj_bias, out_proj.*, self_attn.*, linear1, norm1, ...),
-- initialisation and arithmetic (multi_head_attention_forward).
--
--   local mha = nn.MultiheadAttention(16, 4, {batch_first = true})
--   local out, weights = mha(q, k, v [, {key_padding_mask =, attn_mask =,
--                                        need_weights = true, average_attn_weights = true}])
--
-- Masks as PyTorch: a bool mask is true where attention is NOT allowed; a
-- float mask is added to the scores.  attn_mask (L, S) or (N*num_heads, L, S);
-- key_padding_mask (N, S) ((S) unbatched).
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn
local init = require "ltensor.nn.weight_init"
local F = require "ltensor.nn.functional"

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.")
local typename = util.mtname
local check_opts = nn._check_opts
local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end
local same_shape = require("ltensor.nn.functional.common").same_shape

---------------------------------------------------------------------------
-- MultiheadAttention
---------------------------------------------------------------------------
local MHA = nn.Module:extend("MultiheadAttention")
nn.MultiheadAttention = MHA

function MHA:init(embed_dim, num_heads, opts)
  local cname = "MultiheadAttention"
  opts = check_opts(cname, opts, { "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim",
    "batch_first", "dtype" }, 3)
  if math.type(embed_dim) ~= "integer" or embed_dim <= 0 then
    fail(cname, "embed_dim and num_heads must be greater than 0, got embed_dim=" .. tostring(embed_dim) ..
      " and num_heads=" .. tostring(num_heads) .. " instead")
  end
  if math.type(num_heads) ~= "integer" or num_heads <= 0 then
    fail(cname, "embed_dim and num_heads must be greater than 0, got embed_dim=" .. tostring(embed_dim) ..
      " and num_heads=" .. tostring(num_heads) .. " instead")
  end
  local head_dim = math.floor(embed_dim / num_heads)
  if head_dim * num_heads ~= embed_dim then fail(cname, "embed_dim must be divisible by num_heads") end
  local kdim, vdim = opts.kdim or embed_dim, opts.vdim or embed_dim
  for _, d in ipairs({ { "kdim", kdim }, { "vdim", vdim } }) do
    if math.type(d[2]) ~= "integer" or d[2] <= 0 then
      fail(cname, "bad option '" .. d[1] .. "' (positive integer expected, got " .. tostring(d[2]) .. ")")
    end
  end
  local dropout = opts.dropout or 0.0
  if type(dropout) ~= "number" or not (dropout >= 0 and dropout <= 1) then
    fail(cname, "dropout probability has to be between 0 and 1, but got " .. tostring(dropout))
  end
  local bias = opts.bias
  if bias == nil then bias = true end
  self.embed_dim, self.kdim, self.vdim, self.num_heads, self.head_dim = embed_dim, kdim, vdim, num_heads, head_dim
  self.dropout, self.batch_first = dropout, opts.batch_first and true or false
  self._qkv_same_embed_dim = kdim == embed_dim and vdim == embed_dim
  self.add_zero_attn = opts.add_zero_attn and true or false
  local o = opts.dtype and { dtype = opts.dtype } or nil
  do   -- in_proj (q, k, v), its bias, bias_k/bias_v, out_proj
    local E = embed_dim + 0.0
    local numel = E * (E + kdim + vdim) + (bias and 3 * E or 0) + (opts.add_bias_kv and 2 * E or 0) + E * E +
      (bias and E or 0)
    util.check_param_budget(fail, cname, opts.dtype, numel, 8,
      ("embed_dim=%d, kdim=%d, vdim=%d"):format(embed_dim, kdim, vdim))
  end
  if self._qkv_same_embed_dim then
    self.in_proj_weight = nn.Parameter(T.empty({ 3 * embed_dim, embed_dim }, o))
  else
    self.q_proj_weight = nn.Parameter(T.empty({ embed_dim, embed_dim }, o))
    self.k_proj_weight = nn.Parameter(T.empty({ embed_dim, kdim }, o))
    self.v_proj_weight = nn.Parameter(T.empty({ embed_dim, vdim }, o))
  end
  if bias then self.in_proj_bias = nn.Parameter(T.empty({ 3 * embed_dim }, o)) end
  if opts.add_bias_kv then
    self.bias_k = nn.Parameter(T.empty({ 1, 1, embed_dim }, o))
    self.bias_v = nn.Parameter(T.empty({ 1, 1, embed_dim }, o))
  end
  local out_proj = nn.Linear(embed_dim, embed_dim, { bias = bias, dtype = opts.dtype })
  rawset(out_proj, "_repr_name", "NonDynamicallyQuantizableLinear")
  self.out_proj = out_proj
  -- PyTorch's _reset_parameters
  if self._qkv_same_embed_dim then
    init.xavier_uniform_(self.in_proj_weight)
  else
    init.xavier_uniform_(self.q_proj_weight)
    init.xavier_uniform_(self.k_proj_weight)
    init.xavier_uniform_(self.v_proj_weight)
  end
  if bias then
    init.constant_(self.in_proj_bias, 0)
    init.constant_(out_proj.bias, 0)
  end
  if opts.add_bias_kv then
    init.xavier_normal_(self.bias_k)
    init.xavier_normal_(self.bias_v)
  end
end

-- a bool mask -> a float mask of dtype dt with -inf where true
local function float_mask(m, dt)
  if m.dtype == T.bool then
    return T.masked_fill(T.zeros(m.shape, { dtype = dt }), m, -math.huge)
  end
  return m
end

-- the fused kernel (T._sdpa, src/core/lt_attention.c): one call per
-- attention instead of the composed ops below, when no gradient, dropout,
-- zero-attention column or mixed-dtype mask is involved.  q, k, v are the
-- projected (L, N, E) inputs; returns nil when it does not apply.
local function wants_grad(...)
  if not T.is_grad_enabled() then return false end
  for i = 1, select("#", ...) do
    local t = select(i, ...)
    if t and t.requires_grad then return true end
  end
  return false
end
local function fused_attention(self, q, k, v, attn_mask, kpm, batched, need_weights, average)
  local dt = q.dtype
  if self.add_zero_attn or (self.training and self.dropout > 0) or (dt ~= T.float32 and dt ~= T.float64)
      or (attn_mask and attn_mask.dtype ~= T.bool and attn_mask.dtype ~= dt)
      or (kpm and kpm.dtype ~= T.bool and kpm.dtype ~= dt)
      or wants_grad(q, k, v, self.out_proj.weight, self.out_proj.bias, attn_mask, kpm) then
    return nil
  end
  local N, S = q.shape[2], k.shape[1]
  if kpm ~= nil and (kpm.shape[1] ~= N or kpm.shape[2] ~= S) then
    fail("MultiheadAttention", "expecting key_padding_mask shape of " .. shape_str({ N, S }) .. ", but got " ..
      shape_str(kpm.shape))
  end
  local out, w = T._sdpa(q, k, v, self.num_heads, attn_mask and float_mask(attn_mask, dt), kpm and float_mask(kpm, dt),
    1 / math.sqrt(self.head_dim), need_weights, batched and self.batch_first)
  out = F.linear(out, self.out_proj.weight, self.out_proj.bias)
  if need_weights and average then w = T.mean(w, 2) end
  if not batched then
    out = out:squeeze(2)
    if need_weights then w = w:squeeze(1) end
  end
  return out, w
end

-- multi_head_attention_forward, PyTorch 1.13's arithmetic
function MHA:forward(query, key, value, opts)
  local cname = "MultiheadAttention"
  local qkv = { query, key, value }
  for i = 1, 3 do   -- not ipairs, which stops at the first missing one
    local t = qkv[i]
    if not is_t(t) then
      fail(cname, ("bad argument #%d '%s' (Tensor expected, got %s)"):format(i, ({ "query", "key", "value" })[i], typename(t)))
    end
  end
  opts = check_opts(cname, opts, { "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights" }, 4)
  local kpm, attn_mask = opts.key_padding_mask, opts.attn_mask
  local need_weights = opts.need_weights
  if need_weights == nil then need_weights = true end
  local average = opts.average_attn_weights
  if average == nil then average = true end
  if kpm ~= nil and not is_t(kpm) then fail(cname, "key_padding_mask must be a tensor, got " .. typename(kpm)) end
  if attn_mask ~= nil and not is_t(attn_mask) then fail(cname, "attn_mask must be a tensor, got " .. typename(attn_mask)) end
  for _, m in pairs({ kpm or false, attn_mask or false }) do
    if m and m.dtype ~= T.bool and not m.dtype.is_floating_point then
      fail(cname, "only bool and floating types of masks are supported")
    end
  end
  local E, H, hd = self.embed_dim, self.num_heads, self.head_dim

  -- batching: (L, N, E) inside; unbatched (L, E) gets N = 1
  local qd = query:dim()
  local batched
  if qd == 3 then
    batched = true
    if key:dim() ~= 3 or value:dim() ~= 3 then
      fail(cname, ("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found %d-D and %d-D tensors respectively"):format(key:dim(), value:dim()))
    end
    if kpm ~= nil and kpm:dim() ~= 2 then
      fail(cname, ("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found %d-D tensor instead"):format(kpm:dim()))
    end
    if attn_mask ~= nil and attn_mask:dim() ~= 2 and attn_mask:dim() ~= 3 then
      fail(cname, ("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found %d-D tensor instead"):format(attn_mask:dim()))
    end
  elseif qd == 2 then
    batched = false
    if key:dim() ~= 2 or value:dim() ~= 2 then
      fail(cname, ("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found %d-D and %d-D tensors respectively"):format(key:dim(), value:dim()))
    end
    if kpm ~= nil and kpm:dim() ~= 1 then
      fail(cname, ("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found %d-D tensor instead"):format(kpm:dim()))
    end
    if attn_mask ~= nil then
      if attn_mask:dim() ~= 2 and attn_mask:dim() ~= 3 then
        fail(cname, ("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found %d-D tensor instead"):format(attn_mask:dim()))
      end
      if attn_mask:dim() == 3 and attn_mask.shape[1] ~= H then
        fail(cname, ("Expected `attn_mask` shape to be {%d, %d, %d} but got %s"):format(H, query.shape[1], key.shape[1], shape_str(attn_mask.shape)))
      end
    end
  else
    fail(cname, ("query should be unbatched 2D or batched 3D tensor but received %d-D query tensor"):format(qd))
  end
  local q, k, v = query, key, value
  if batched and self.batch_first then
    q, k, v = q:transpose(1, 2), k:transpose(1, 2), v:transpose(1, 2)
  end
  if not batched then
    q, k, v = q:unsqueeze(2), k:unsqueeze(2), v:unsqueeze(2)
    if kpm ~= nil then kpm = kpm:unsqueeze(1) end
  end
  local L, N, Eq = q.shape[1], q.shape[2], q.shape[3]
  local S = k.shape[1]
  if Eq ~= E then fail(cname, ("was expecting embedding dimension of %d, but got %d"):format(E, Eq)) end
  if self._qkv_same_embed_dim then
    if not same_shape(k.shape, v.shape) then
      fail(cname, "key shape " .. shape_str(k.shape) .. " does not match value shape " .. shape_str(v.shape))
    end
  else
    if k.shape[1] ~= v.shape[1] or k.shape[2] ~= v.shape[2] then
      fail(cname, ("key's sequence and batch dims {%d, %d} do not match value's {%d, %d}"):format(k.shape[1], k.shape[2], v.shape[1], v.shape[2]))
    end
  end
  if k.shape[2] ~= N then
    fail(cname, ("key and query batch sizes differ: %d and %d"):format(k.shape[2], N))
  end
  if k.shape[3] ~= self.kdim then
    fail(cname, ("was expecting key dimension of %d, but got %d"):format(self.kdim, k.shape[3]))
  end
  if v.shape[3] ~= self.vdim then
    fail(cname, ("was expecting value dimension of %d, but got %d"):format(self.vdim, v.shape[3]))
  end

  -- input projections
  local b = self.in_proj_bias
  local bq, bk, bv
  if b ~= nil then bq, bk, bv = b:narrow(1, 1, E), b:narrow(1, E + 1, E), b:narrow(1, 2 * E + 1, E) end
  if self._qkv_same_embed_dim then
    local w = self.in_proj_weight
    if rawequal(query, key) and rawequal(key, value) then
      local qkv = F.linear(q, w, b)
      q, k, v = qkv:narrow(3, 1, E), qkv:narrow(3, E + 1, E), qkv:narrow(3, 2 * E + 1, E)
    else
      q = F.linear(q, w:narrow(1, 1, E), bq)
      k = F.linear(k, w:narrow(1, E + 1, E), bk)
      v = F.linear(v, w:narrow(1, 2 * E + 1, E), bv)
    end
  else
    q = F.linear(q, self.q_proj_weight, bq)
    k = F.linear(k, self.k_proj_weight, bk)
    v = F.linear(v, self.v_proj_weight, bv)
  end

  -- attn_mask checks and shape (1 or N*H, L, S)
  if attn_mask ~= nil then
    if attn_mask:dim() == 2 then
      if attn_mask.shape[1] ~= L or attn_mask.shape[2] ~= S then
        fail(cname, "The shape of the 2D attn_mask is " .. shape_str(attn_mask.shape) .. ", but should be " ..
          shape_str({ L, S }) .. ".")
      end
      attn_mask = attn_mask:unsqueeze(1)
    else
      local want = { N * H, L, S }
      if not same_shape(attn_mask.shape, want) then
        fail(cname, "The shape of the 3D attn_mask is " .. shape_str(attn_mask.shape) .. ", but should be " ..
          shape_str(want) .. ".")
      end
    end
  end

  -- bias_k / bias_v: one more key and value
  if self.bias_k ~= nil then
    k = T.cat({ k, self.bias_k:expand({ 1, N, E }) }, 1)
    v = T.cat({ v, self.bias_v:expand({ 1, N, E }) }, 1)
    if attn_mask ~= nil then
      attn_mask = T.cat({ attn_mask, T.zeros({ attn_mask.shape[1], L, 1 }, { dtype = attn_mask.dtype }) }, 3)
    end
    if kpm ~= nil then kpm = T.cat({ kpm, T.zeros({ N, 1 }, { dtype = kpm.dtype }) }, 2) end
  end

  if T._sdpa then
    local out, weights = fused_attention(self, q, k, v, attn_mask, kpm, batched, need_weights, average)
    if out then return out, weights end
  end

  -- heads: (L, N, E) -> (N*H, L, hd)
  q = q:reshape({ L, N * H, hd }):transpose(1, 2)
  k = k:reshape({ k.shape[1], N * H, hd }):transpose(1, 2)
  v = v:reshape({ v.shape[1], N * H, hd }):transpose(1, 2)

  if self.add_zero_attn then
    k = T.cat({ k, T.zeros({ N * H, 1, hd }, { dtype = k.dtype }) }, 2)
    v = T.cat({ v, T.zeros({ N * H, 1, hd }, { dtype = v.dtype }) }, 2)
    if attn_mask ~= nil then
      attn_mask = T.cat({ attn_mask, T.zeros({ attn_mask.shape[1], L, 1 }, { dtype = attn_mask.dtype }) }, 3)
    end
    if kpm ~= nil then kpm = T.cat({ kpm, T.zeros({ N, 1 }, { dtype = kpm.dtype }) }, 2) end
  end
  local Sk = k.shape[2]

  -- merge the masks (as floats, PyTorch 1.13's order: attn_mask + key_padding_mask)
  if kpm ~= nil then
    if kpm.shape[1] ~= N or kpm.shape[2] ~= Sk then
      fail(cname, "expecting key_padding_mask shape of " .. shape_str({ N, Sk }) .. ", but got " .. shape_str(kpm.shape))
    end
  end
  if attn_mask ~= nil then attn_mask = float_mask(attn_mask, q.dtype) end
  if kpm ~= nil then
    kpm = float_mask(kpm, q.dtype):reshape({ N, 1, 1, Sk }):expand({ N, H, 1, Sk }):reshape({ N * H, 1, Sk })
    if attn_mask == nil then attn_mask = kpm else attn_mask = attn_mask + kpm end
  end

  local p = self.training and self.dropout or 0.0
  local scores = T.matmul(q * (1 / math.sqrt(hd)), k:transpose(2, 3))
  if attn_mask ~= nil then scores = scores + attn_mask end
  local w = T.softmax(scores, 3)
  if p > 0 then w = F.dropout(w, p, true) end
  local out = T.matmul(w, v)                                  -- (N*H, L, hd)
  out = out:transpose(1, 2):reshape({ L * N, E })
  out = F.linear(out, self.out_proj.weight, self.out_proj.bias):reshape({ L, N, E })
  local weights
  if need_weights then
    weights = w:reshape({ N, H, L, Sk })
    if average then weights = T.mean(weights, 2) end
    if not batched then weights = weights:squeeze(1) end
  end
  if not batched then out = out:squeeze(2)
  elseif self.batch_first then out = out:transpose(1, 2) end
  return out, weights
end

---------------------------------------------------------------------------
-- TransformerEncoderLayer(d_model, nhead [, {dim_feedforward = 2048,
-- dropout = 0.1, activation = "relu" | "gelu" | function, layer_norm_eps =
-- 1e-5, batch_first = false, norm_first = false, dtype}])
---------------------------------------------------------------------------
local TEL = nn.Module:extend("TransformerEncoderLayer")
nn.TransformerEncoderLayer = TEL

function TEL:init(d_model, nhead, opts)
  local cname = "TransformerEncoderLayer"
  if math.type(opts) == "integer" then opts = { dim_feedforward = opts } end
  opts = check_opts(cname, opts, { "dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first",
    "norm_first", "dtype" }, 3)
  if math.type(d_model) ~= "integer" or d_model <= 0 then
    fail(cname, "bad argument #1 'd_model' (positive integer expected, got " .. tostring(d_model) .. ")")
  end
  local dff = opts.dim_feedforward or 2048
  if math.type(dff) ~= "integer" or dff < 0 then
    fail(cname, "bad option 'dim_feedforward' (non-negative integer expected, got " .. tostring(dff) .. ")")
  end
  local dropout = opts.dropout
  if dropout == nil then dropout = 0.1 end
  local eps = opts.layer_norm_eps or 1e-5
  local act = opts.activation or "relu"
  if type(act) == "string" then
    if act ~= "relu" and act ~= "gelu" then fail(cname, "activation should be relu/gelu, not " .. act) end
  elseif type(act) ~= "function" and not (getmetatable(act) or {}).__call then
    fail(cname, "activation should be relu/gelu or a function, not " .. typename(act))
  end
  local dt = opts.dtype
  do   -- attention (4 d^2 + 4 d), two Linear (2 d dff + dff + d), two LayerNorm (4 d)
    local d = d_model + 0.0
    util.check_param_budget(fail, cname, dt, 4 * d * d + 4 * d + 2 * d * dff + dff + d + 4 * d, 12,
      ("d_model=%d, dim_feedforward=%d"):format(d_model, dff))
  end
  self.self_attn = MHA(d_model, nhead, { dropout = dropout, batch_first = opts.batch_first, dtype = dt })
  self.linear1 = nn.Linear(d_model, dff, { dtype = dt })
  self.dropout = nn.Dropout(dropout)
  self.linear2 = nn.Linear(dff, d_model, { dtype = dt })
  self.norm_first = opts.norm_first and true or false
  self.norm1 = nn.LayerNorm(d_model, { eps = eps, dtype = dt })
  self.norm2 = nn.LayerNorm(d_model, { eps = eps, dtype = dt })
  self.dropout1 = nn.Dropout(dropout)
  self.dropout2 = nn.Dropout(dropout)
  if act == "relu" then self.activation = F.relu
  elseif act == "gelu" then self.activation = function(x) return F.gelu(x) end
  else self.activation = act end
  self.activation_name = type(act) == "string" and act or nil
end

-- layer(src [, src_mask] [, src_key_padding_mask]) or layer(src, {src_mask =, src_key_padding_mask =})
local function mask_args(cname, a2, a3, names)
  if type(a2) == "table" and not is_t(a2) then
    local o = check_opts(cname, a2, names, 2)
    return o[names[1]], o[names[2]]
  end
  return a2, a3
end

function TEL:_sa_block(x, attn_mask, kpm)
  local out = self.self_attn(x, x, x, { attn_mask = attn_mask, key_padding_mask = kpm, need_weights = false })
  return self.dropout1(out)
end
function TEL:_ff_block(x)
  x = self.linear2(self.dropout(self.activation(self.linear1(x))))
  return self.dropout2(x)
end
function TEL:forward(src, a2, a3)
  local mask, kpm = mask_args("TransformerEncoderLayer", a2, a3, { "src_mask", "src_key_padding_mask" })
  if not is_t(src) then fail("TransformerEncoderLayer", "bad argument #1 'src' (Tensor expected, got " .. typename(src) .. ")") end
  local x = src
  if self.norm_first then
    x = x + self:_sa_block(self.norm1(x), mask, kpm)
    x = x + self:_ff_block(self.norm2(x))
  else
    x = self.norm1(x + self:_sa_block(x, mask, kpm))
    x = self.norm2(x + self:_ff_block(x))
  end
  return x
end

---------------------------------------------------------------------------
-- TransformerEncoder(encoder_layer, num_layers [, norm]): num_layers deep
-- copies of the layer (same initial weights, as PyTorch's deepcopy) in
-- `layers`, then `norm` if given.
---------------------------------------------------------------------------
-- num_layers copies of layer's parameters and buffers must fit before any
-- is made (TransformerEncoder(layer, 2^32) cloned layers for hours)
local function check_copies(cname, layer, num_layers)
  local numel, n = 0.0, 0
  for _, t in ipairs(layer:parameters()) do numel, n = numel + t:numel(), n + 1 end
  for _, t in ipairs(layer:buffers()) do numel, n = numel + t:numel(), n + 1 end
  local first = layer:parameters()[1]
  util.check_param_budget(fail, cname, first and first.dtype, numel * num_layers, (n + 0.0) * num_layers,
    ("num_layers=%d"):format(num_layers))
end

local TE = nn.Module:extend("TransformerEncoder")
nn.TransformerEncoder = TE
function TE:init(layer, num_layers, norm)
  local cname = "TransformerEncoder"
  if type(norm) == "table" and not nn.is_module(norm) then
    norm = check_opts(cname, norm, { "norm", "enable_nested_tensor" }, 3).norm
  end
  if not nn.is_module(layer) then
    fail(cname, "bad argument #1 'encoder_layer' (Module expected, got " .. typename(layer) .. ")")
  end
  if math.type(num_layers) ~= "integer" or num_layers < 0 then
    fail(cname, "bad argument #2 'num_layers' (non-negative integer expected, got " .. tostring(num_layers) .. ")")
  end
  if norm ~= nil and not nn.is_module(norm) then
    fail(cname, "bad argument #3 'norm' (Module expected, got " .. typename(norm) .. ")")
  end
  check_copies(cname, layer, num_layers)
  local list = {}
  for i = 1, num_layers do list[i] = layer:clone() end
  self.layers = nn.ModuleList(list)
  self.num_layers = num_layers
  if norm ~= nil then self.norm = norm end
end
-- enc(src [, mask] [, src_key_padding_mask]) or enc(src, {mask =, src_key_padding_mask =})
function TE:forward(src, a2, a3)
  local mask, kpm = mask_args("TransformerEncoder", a2, a3, { "mask", "src_key_padding_mask" })
  local x = src
  for _, l in ipairs(self.layers:children()) do
    x = l(x, { src_mask = mask, src_key_padding_mask = kpm })
  end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

-- T.nn.Transformer.generate_square_subsequent_mask(sz): float mask with
-- -inf above the diagonal
nn.Transformer = nn.Transformer or {}
function nn.Transformer.generate_square_subsequent_mask(sz, opts)
  if math.type(sz) ~= "integer" or sz < 0 then
    fail("Transformer.generate_square_subsequent_mask", "bad argument #1 'sz' (non-negative integer expected)")
  end
  util.check_opts("nn.Transformer.generate_square_subsequent_mask", opts, { "dtype" })
  local dt = opts and opts.dtype or T.get_default_dtype()
  local upper = T.gt(T.arange(1, sz + 1):reshape({ 1, sz }), T.arange(1, sz + 1):reshape({ sz, 1 }))
  return T.masked_fill(T.zeros({ sz, sz }, { dtype = dt }), upper, -math.huge)
end

return true
