-- ltensor.nn.rnn: RNN, LSTM, GRU and their cells (T.nn.RNN, ...), with
-- PyTorch's parameter names, shapes, gate order and initialisation.
--
--   local lstm = nn.LSTM(32, 64, {num_layers = 2, batch_first = true})
--   local out, hc = lstm(x [, {h0, c0}])      -- hc = {h_n, c_n}
--   local out, h = gru(x [, h0])
--
-- Options: num_layers, nonlinearity ("tanh" | "relu", RNN), bias,
-- batch_first, dropout (between layers, in training), bidirectional,
-- proj_size (LSTM: h = W_hr (o * tanh(c)), weight_hr_l<k>), dtype.
-- Layout: x is (T, B, in) (batch_first: (B, T, in); unbatched: (T, in)),
-- out (T, B, D*H), h_n (num_layers*D, B, H) with D = 2 when bidirectional.
-- Gates as PyTorch: LSTM rows of W_ih/W_hh are (i, f, g, o), GRU (r, z, n),
-- n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).
--
-- Speed: per layer and direction, the input projection of every timestep is
-- one gemm ((T*B, in) x W_ih^T), then each step is one gemm for all the
-- gates of W_hh plus the pointwise gate math.  For float32/float64 the whole
-- layer runs as one autograd node (T._rnn_forward / T._rnn_backward from
-- src/binding/l_rnn.c: the step loop and the gate math in C, the weight gradients
-- as whole-sequence gemms); other dtypes use the same equations written
-- with differentiable tensor ops, and so does a backward with create_graph
-- (double backward) of the fused node.
local T = require "ltensor.core"
local util = require "ltensor.util"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local math, table = compat.math, compat.table
require "ltensor.autograd"
local nn = require("ltensor.nn.module").nn
local F = require "ltensor.nn.functional"
local autograd = T.autograd

local is_t = util.is_tensor
local fail = util.failer("ltensor.nn.")
local typename = util.mtname
local check_opts = nn._check_opts
local pyfloat = nn._pyfloat

-- The argument checks the forwards share (sequence, packed and cell):
-- input a tensor of lo or lo + 1 dims; hx a tensor, or for an LSTM the
-- pair named `pair` ("{h0, c0}" or "{h, c}"); the parameters' dtype.
local function check_input(cname, input, lo)
  if not is_t(input) then fail(cname, "bad argument #1 'input' (Tensor expected, got " .. typename(input) .. ")") end
  local nd = input:dim()
  if nd ~= lo and nd ~= lo + 1 then
    fail(cname, ("Expected input to be %d-D or %d-D but received %d-D tensor"):format(lo, lo + 1, nd))
  end
  return nd
end
local function hx_arg(cname, hx, is_lstm, pair)
  if is_lstm then
    if type(hx) ~= "table" or is_t(hx) or not is_t(hx[1]) or not is_t(hx[2]) then
      fail(cname, "bad argument #2 'hx' (" .. pair .. " expected, got " .. typename(hx) .. ")")
    end
    return hx[1], hx[2]
  end
  if not is_t(hx) then fail(cname, "bad argument #2 'hx' (Tensor expected, got " .. typename(hx) .. ")") end
  return hx
end
-- the constructors' input_size (>= 0) and hidden_size (> 0)
local function check_sizes(cname, input_size, hidden_size)
  if math.type(input_size) ~= "integer" or input_size < 0 then
    fail(cname, "bad argument #1 'input_size' (non-negative integer expected, got " .. tostring(input_size) .. ")")
  end
  if math.type(hidden_size) ~= "integer" then
    fail(cname, "bad argument #2 'hidden_size' (integer expected, got " .. typename(hidden_size) .. ")")
  end
  if hidden_size <= 0 then fail(cname, "hidden_size must be greater than zero") end
end
local function check_param_dtype(cname, w, dt)
  if w.dtype ~= dt then
    fail(cname, "input dtype " .. dt.name .. " does not match the parameters' dtype " ..
      w.dtype.name .. " (convert the module with :to(dtype))")
  end
end

local GATES = { RNN_TANH = 1, RNN_RELU = 1, LSTM = 4, GRU = 3 }
local MODE_ID = { RNN_TANH = 0, RNN_RELU = 1, LSTM = 2, GRU = 3 }

local function shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end

---------------------------------------------------------------------------
-- one layer, one direction, with differentiable ops (reference path)
---------------------------------------------------------------------------
-- w_hr: LSTM's projection (proj_size > 0): h = (o * tanh(c)) W_hr^T
local function layer_ops(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, w_hr)
  local Tn, B, I = x.shape[1], x.shape[2], x.shape[3]
  local GH = w_ih.shape[1]
  local H = math.floor(GH / GATES[mode])
  local xp = T.matmul(x:reshape({ Tn * B, I }), w_ih:t())
  if b_ih then xp = xp + b_ih end
  if mode ~= "GRU" and b_hh then xp = xp + b_hh end
  xp = xp:reshape({ Tn, B, GH })
  local whT = w_hh:t()
  local outs = {}
  local h, c = h0, c0
  for s = 1, Tn do
    local t = reverse and (Tn + 1 - s) or s
    local xt = xp:select(1, t)
    if mode == "LSTM" then
      local g = xt + T.matmul(h, whT)
      local i = T.sigmoid(g:narrow(2, 1, H))
      local f = T.sigmoid(g:narrow(2, H + 1, H))
      local gg = T.tanh(g:narrow(2, 2 * H + 1, H))
      local o = T.sigmoid(g:narrow(2, 3 * H + 1, H))
      c = f * c + i * gg
      h = o * T.tanh(c)
      if w_hr then h = T.matmul(h, w_hr:t()) end
    elseif mode == "GRU" then
      local hh = T.matmul(h, whT)
      if b_hh then hh = hh + b_hh end
      local r = T.sigmoid(xt:narrow(2, 1, H) + hh:narrow(2, 1, H))
      local z = T.sigmoid(xt:narrow(2, H + 1, H) + hh:narrow(2, H + 1, H))
      local n = T.tanh(xt:narrow(2, 2 * H + 1, H) + r * hh:narrow(2, 2 * H + 1, H))
      h = n + z * (h - n)
    else
      local a = xt + T.matmul(h, whT)
      h = mode == "RNN_TANH" and T.tanh(a) or T.relu(a)
    end
    outs[t] = h
  end
  local y
  if Tn == 0 then y = T.zeros({ 0, B, h0.shape[2] }, { dtype = x.dtype }) else y = T.stack(outs, 1) end
  return y, h, c
end

---------------------------------------------------------------------------
-- one layer, one direction, fused (one autograd node; C step loop)
---------------------------------------------------------------------------
-- T._rnn_forward(mode, reverse, xp, w_hh, b_hh_or_nil, h0, c0_or_nil)
--   xp (T, B, G*H) contiguous: input projection plus the biases that add to it
--   returns y (T, B, H), h_n, c_n (LSTM, else nil), ws (workspace saved for
--   backward: the gate activations of every step, and the cells)
-- T._rnn_backward(mode, reverse, xp, w_hh, b_hh, h0, c0, y, ws, dy, dh_n, dc_n)
--   returns dxp (T, B, G*H) (the gradient of the pre-activations that add
--   xp), dh0, dc0, and for GRU dhh (T, B, 3H): the gradient of W_hh h + b_hh
local fused_fn = autograd.Function {
  name = "FusedRNN",
  -- absent tensors are passed as false (a nil would shift the inputs)
  forward = function(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, mode, reverse)
    c0, b_ih, b_hh = c0 or nil, b_ih or nil, b_hh or nil
    local Tn, B, I = x.shape[1], x.shape[2], x.shape[3]
    local GH = w_ih.shape[1]
    local x2 = x:reshape({ Tn * B, I })
    -- the biases that add to the projection, summed first: one pass over xp
    local bias = b_ih
    if mode ~= "GRU" and b_hh then bias = bias and bias + b_hh or b_hh end
    local xp = T._rnn_mm(x2, w_ih:t(), bias and bias:contiguous() or nil)
    xp = xp:reshape({ Tn, B, GH })
    local mid = MODE_ID[mode]
    -- the per-step workspace is kept only when a backward can follow
    local keep = false
    for i = 1, 7 do if ctx.needs_input_grad[i] then keep = true break end end
    local y, hn, cn, ws = T._rnn_forward(mid, reverse, xp, w_hh, mode == "GRU" and b_hh or false, h0, c0, keep)
    ctx.mode, ctx.reverse, ctx.c0, ctx.b_hh = mode, reverse, c0, b_hh
    -- the inputs themselves, for a backward that must be differentiable
    ctx.orig = { x, h0, c0 or false, w_ih, w_hh, b_ih or false, b_hh or false }
    ctx:save_for_backward(x2, h0, w_ih, w_hh, y, ws, xp)
    if cn then return y, hn, cn end
    return y, hn
  end,
  backward = function(ctx, dy, dhn, dcn)
    -- create_graph (double backward): the C loop's gradient is not itself
    -- differentiable, so differentiate the same equations written with
    -- tensor ops, keeping the graph
    if T.is_grad_enabled() then
      local o, need = ctx.orig, ctx.needs_input_grad
      local y, hn, cn = layer_ops(ctx.mode, o[1], o[2], o[3] or nil, o[4], o[5], o[6] or nil, o[7] or nil,
        ctx.reverse)
      local outs, gos = { y, hn }, { dy, dhn }
      if cn then outs[3], gos[3] = cn, dcn or T.zeros_like(cn) end
      local want, pos = {}, {}
      for i = 1, 7 do
        if o[i] and need[i] then want[#want + 1] = o[i] pos[#pos + 1] = i end
      end
      local gs = autograd.grad(outs, want, gos, { create_graph = true, allow_unused = true })
      local r = {}
      for k, i in ipairs(pos) do r[i] = gs[k] end
      return r[1], r[2], r[3], r[4], r[5], r[6], r[7]
    end
    local s = ctx.saved_tensors
    local x2, h0, w_ih, w_hh, y, ws, xp = s[1], s[2], s[3], s[4], s[5], s[6], s[7]
    local c0, b_hh = ctx.c0, ctx.b_hh
    local mode = ctx.mode
    local Tn, B, H = y.shape[1], y.shape[2], y.shape[3]
    local GH = w_ih.shape[1]
    local dxp, dh0, dc0, dhh = T._rnn_backward(MODE_ID[mode], ctx.reverse, xp, w_hh, b_hh, h0,
      c0, y, ws, dy:contiguous(), dhn:contiguous(), dcn and dcn:contiguous() or nil)
    local need = ctx.needs_input_grad
    local dG = dxp:reshape({ Tn * B, GH })
    local dx, dwih, dwhh, dbih, dbhh
    if need[1] then dx = T._rnn_mm(dG, w_ih):reshape({ Tn, B, x2.shape[2] }) end
    if need[4] then dwih = T._rnn_mm(dG:t(), x2) end
    if need[6] then dbih = T.sum(dG, 1) end
    -- the hidden state entering each step: h0 then y shifted by one step
    local hprev
    if need[5] then
      if Tn == 0 then hprev = T.zeros({ 0, B, H }, { dtype = y.dtype })
      elseif ctx.reverse then
        hprev = T.cat({ y:narrow(1, 2, Tn - 1), h0:unsqueeze(1) }, 1)
      else
        hprev = T.cat({ h0:unsqueeze(1), y:narrow(1, 1, Tn - 1) }, 1)
      end
      hprev = hprev:reshape({ Tn * B, H })
    end
    if mode == "GRU" then
      local dHH = dhh:reshape({ Tn * B, GH })
      if need[5] then dwhh = T._rnn_mm(dHH:t(), hprev) end
      if need[7] then dbhh = T.sum(dHH, 1) end
    else
      if need[5] then dwhh = T._rnn_mm(dG:t(), hprev) end
      if need[7] then dbhh = dbih or T.sum(dG, 1) end
    end
    return dx, dh0, dc0, dwih, dwhh, dbih, dbhh
  end,
}

local function fusable(x, w_ih)
  if T._rnn_forward == nil then return false end
  local dt = x.dtype
  if dt ~= T.float32 and dt ~= T.float64 then return false end
  if w_ih.dtype ~= dt then return false end
  return true
end

-- true when an autograd node would be recorded for these tensors
local function wants_grad(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
  if not T.is_grad_enabled() then return false end
  return x.requires_grad or h0.requires_grad or (c0 and c0.requires_grad) or w_ih.requires_grad or
    w_hh.requires_grad or (b_ih and b_ih.requires_grad) or (b_hh and b_hh.requires_grad) or false
end

-- the fused forward with nothing to record (inference, generation one
-- token at a time): the same two C calls as fused_fn's forward, without the
-- autograd node's context, saved tensors and argument copies (a quarter of
-- a 2-layer LSTM step's time at batch 1)
local function fused_infer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
  local Tn, B = x.shape[1], x.shape[2]
  local bias = b_ih
  if mode ~= "GRU" and b_hh then bias = bias and bias + b_hh or b_hh end
  local xp = T._rnn_mm(x:reshape({ Tn * B, x.shape[3] }), w_ih:t(), bias and bias:contiguous() or nil)
  local y, hn, cn = T._rnn_forward(MODE_ID[mode], reverse, xp:reshape({ Tn, B, w_ih.shape[1] }), w_hh,
    mode == "GRU" and b_hh or false, h0, c0, false)
  return y, hn, cn
end

local function run_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, w_hr)
  if w_hr then return layer_ops(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, w_hr) end
  if fusable(x, w_ih) and h0.dtype == x.dtype and w_hh.dtype == x.dtype and
     (b_ih == nil or b_ih.dtype == x.dtype) and (b_hh == nil or b_hh.dtype == x.dtype) and
     (c0 == nil or c0.dtype == x.dtype) then
    if not wants_grad(x, h0, c0, w_ih, w_hh, b_ih, b_hh) then
      return fused_infer(mode, x, h0:contiguous(), c0 and c0:contiguous() or nil, w_ih, w_hh:contiguous(), b_ih,
        b_hh, reverse)
    end
    return fused_fn(x, h0:contiguous(), c0 and c0:contiguous() or false, w_ih, w_hh:contiguous(), b_ih or false,
      b_hh or false, mode, reverse)
  end
  return layer_ops(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
end

---------------------------------------------------------------------------
-- RNNBase
---------------------------------------------------------------------------
local RNNBase = nn.Module:extend("RNNBase")
nn.RNNBase = RNNBase

local OPTS = { "num_layers", "nonlinearity", "bias", "batch_first", "dropout", "bidirectional", "proj_size",
  "dtype" }

-- RNN(input_size, hidden_size [, num_layers] [, opts])
function RNNBase:_setup(cname, mode, input_size, hidden_size, a3, a4)
  local opts
  local num_layers
  if type(a3) == "table" then opts = a3 else num_layers, opts = a3, a4 end
  opts = check_opts(cname, opts, OPTS, num_layers and 4 or 3)
  if num_layers == nil then num_layers = opts.num_layers end
  if num_layers == nil then num_layers = 1 end
  check_sizes(cname, input_size, hidden_size)
  if math.type(num_layers) ~= "integer" then
    fail(cname, "bad argument 'num_layers' (integer expected, got " .. typename(num_layers) .. ")")
  end
  if num_layers <= 0 then fail(cname, "num_layers must be greater than zero") end
  local dropout = opts.dropout or 0
  if type(dropout) ~= "number" or not (dropout >= 0 and dropout <= 1) or type(dropout) == "boolean" then
    fail(cname, "dropout should be a number in range [0, 1] representing the probability of an element being zeroed")
  end
  if mode == "RNN_TANH" then
    local nl = opts.nonlinearity or "tanh"
    if nl == "tanh" then mode = "RNN_TANH" elseif nl == "relu" then mode = "RNN_RELU"
    else fail(cname, "Unknown nonlinearity '" .. tostring(nl) .. "'. Select from 'tanh' or 'relu'.") end
  elseif opts.nonlinearity ~= nil then
    fail(cname, "unknown option 'nonlinearity'")
  end
  local proj = opts.proj_size or 0
  if math.type(proj) ~= "integer" or proj < 0 then
    fail(cname, "proj_size should be a positive integer or zero to disable projections")
  end
  if proj > 0 and mode ~= "LSTM" then fail(cname, "proj_size argument is only supported for LSTM, not RNN or GRU") end
  if proj >= hidden_size then fail(cname, "proj_size has to be smaller than hidden_size") end
  self.proj_size = proj
  local real_hidden = proj > 0 and proj or hidden_size
  local bias = opts.bias
  if bias == nil then bias = true end
  self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
  self.bias, self.batch_first = bias and true or false, opts.batch_first and true or false
  self.dropout, self.bidirectional = dropout, opts.bidirectional and true or false
  local D = self.bidirectional and 2 or 1
  local G = GATES[mode]
  local k = 1 / math.sqrt(hidden_size)
  local dtype = opts.dtype
  do   -- the parameters' count, in floats (no wrap-around), before any is built
    local GH, Hr, Lf, Df = G * (hidden_size + 0.0), real_hidden + 0.0, num_layers + 0.0, D + 0.0
    local per = GH * Hr + (bias and 2 * GH or 0) + proj * (hidden_size + 0.0)
    local numel = Df * (GH * input_size + (Lf - 1) * GH * Hr * Df + Lf * per)
    local args = ("input_size=%d, hidden_size=%d, num_layers=%d"):format(input_size, hidden_size, num_layers)
    util.check_param_budget(fail, cname, dtype, numel, Lf * Df * (2 + (bias and 2 or 0) + (proj > 0 and 1 or 0)), args)
  end
  -- registration order = PyTorch's _flat_weights_names; init U(-k, k) in
  -- that order, as PyTorch's reset_parameters
  local names = {}
  for layer = 0, num_layers - 1 do
    for dir = 0, D - 1 do
      local sfx = "_l" .. layer .. (dir == 1 and "_reverse" or "")
      local lin = layer == 0 and input_size or real_hidden * D
      local shapes = { { "weight_ih" .. sfx, { G * hidden_size, lin } },
        { "weight_hh" .. sfx, { G * hidden_size, real_hidden } } }
      if bias then
        shapes[3] = { "bias_ih" .. sfx, { G * hidden_size } }
        shapes[4] = { "bias_hh" .. sfx, { G * hidden_size } }
      end
      if proj > 0 then shapes[#shapes + 1] = { "weight_hr" .. sfx, { proj, hidden_size } } end
      for _, s in ipairs(shapes) do
        local w = T.empty(s[2], dtype and { dtype = dtype } or nil)
        T.no_grad(function() w:uniform_(-k, k) end)
        self:register_parameter(s[1], nn.Parameter(w))
        names[#names + 1] = s[1]
      end
    end
  end
  self._flat_weights_names = names
end

function RNNBase:extra_repr()
  local s = self.input_size .. ", " .. self.hidden_size
  if (self.proj_size or 0) ~= 0 then s = s .. ", proj_size=" .. self.proj_size end
  if self.num_layers ~= 1 then s = s .. ", num_layers=" .. self.num_layers end
  if not self.bias then s = s .. ", bias=False" end
  if self.batch_first then s = s .. ", batch_first=True" end
  if self.dropout ~= 0 then s = s .. ", dropout=" .. pyfloat(self.dropout) end
  if self.bidirectional then s = s .. ", bidirectional=True" end
  return s
end

-- PyTorch's cuDNN weight compaction: nothing to do here (kept so that
-- ported code runs)
function RNNBase:flatten_parameters() end

-- the weights of one layer and direction: w_ih, w_hh, b_ih, b_hh, w_hr
-- the parameter names of layer/direction, made once (a token-at-a-time
-- generation asks for them every step)
local weight_names = { [0] = {}, [1] = {} }
function RNNBase:_weights(layer, dir)
  local n, p = weight_names[dir][layer], rawget(self, "_params").map
  if not n then
    local sfx = "_l" .. layer .. (dir == 1 and "_reverse" or "")
    n = { "weight_ih" .. sfx, "weight_hh" .. sfx, "bias_ih" .. sfx, "bias_hh" .. sfx, "weight_hr" .. sfx }
    weight_names[dir][layer] = n
  end
  return p[n[1]], p[n[2]], p[n[3]], p[n[4]], p[n[5]]
end

-- one layer and direction over a packed batch (data (N, I), batch sizes
-- bs): the steps are cut into runs of constant batch size, each run one
-- fused call; forward, a run's final states of the sequences that end there
-- are kept; reverse, the runs go from the last and the sequences that
-- start join with their initial states
local function run_layer_packed(mode, data, bs, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, w_hr)
  local runs, t, off = {}, 1, 1
  while t <= #bs do
    local b, n = bs[t], 0
    while t + n <= #bs and bs[t + n] == b do n = n + 1 end
    runs[#runs + 1] = { off = off, n = n, b = b }
    off, t = off + n * b, t + n
  end
  if #runs == 0 then   -- an empty batch
    return T.zeros({ 0, h0:size(2) }, { dtype = data.dtype }), h0, c0
  end
  local outs, ends_h, ends_c = {}, {}, {}
  local I = data:size(2)
  local function x_of(r) return data:narrow(1, r.off, r.n * r.b):reshape({ r.n, r.b, I }) end
  if not reverse then
    local h, c = h0, c0
    for k, r in ipairs(runs) do
      if h:size(1) > r.b then   -- the sequences beyond r.b ended with the previous run
        ends_h[#ends_h + 1] = h:narrow(1, r.b + 1, h:size(1) - r.b)
        if c then ends_c[#ends_c + 1] = c:narrow(1, r.b + 1, c:size(1) - r.b) end
        h = h:narrow(1, 1, r.b)
        if c then c = c:narrow(1, 1, r.b) end
      end
      local y
      y, h, c = run_layer(mode, x_of(r), h, c, w_ih, w_hh, b_ih, b_hh, false, w_hr)
      outs[k] = y:reshape({ r.n * r.b, y:size(3) })
    end
    ends_h[#ends_h + 1] = h
    if c then ends_c[#ends_c + 1] = c end
    -- the pieces run from the longest-lived sequences' end backwards
    local hs, cs = {}, {}
    for i = #ends_h, 1, -1 do hs[#hs + 1] = ends_h[i] end
    for i = #ends_c, 1, -1 do cs[#cs + 1] = ends_c[i] end
    return T.cat(outs, 1), T.cat(hs, 1), c0 and T.cat(cs, 1) or nil
  end
  local h, c
  for k = #runs, 1, -1 do
    local r = runs[k]
    local have = h and h:size(1) or 0
    if have < r.b then   -- sequences r.b - have start here, from their initial states
      local hn = h0:narrow(1, have + 1, r.b - have)
      h = h and T.cat({ h, hn }, 1) or hn
      if c0 then
        local cn = c0:narrow(1, have + 1, r.b - have)
        c = c and T.cat({ c, cn }, 1) or cn
      end
    end
    local y
    y, h, c = run_layer(mode, x_of(r), h, c, w_ih, w_hh, b_ih, b_hh, true, w_hr)
    outs[k] = y:reshape({ r.n * r.b, y:size(3) })
  end
  return T.cat(outs, 1), h, c
end

-- RNN/LSTM/GRU over a PackedSequence: output packed alike; h_n (and c_n)
-- for each sequence at its own last step, in the caller's order
function RNNBase:_forward_packed(input, hx)
  local cname = self._classname
  local is_lstm = self.mode == "LSTM"
  local data, bs = input.data, input.batch_sizes:totable()
  if data:dim() ~= 2 then fail(cname, "packed input data must be 2-D, got " .. data:dim() .. "-D") end
  if not data.dtype.is_floating_point then fail(cname, "expected a floating point input, got " .. data.dtype.name) end
  if data:size(2) ~= self.input_size then
    fail(cname, ("input.size(-1) must be equal to input_size. Expected %d, got %d"):format(self.input_size, data:size(2)))
  end
  check_param_dtype(cname, self.weight_ih_l0, data.dtype)
  local B = #bs > 0 and bs[1] or 0
  local D = self.bidirectional and 2 or 1
  local L, H = self.num_layers, self.hidden_size
  local Hout = (self.proj_size or 0) > 0 and self.proj_size or H
  local h0, c0
  local sorted = input.sorted_indices
  if hx ~= nil then
    h0, c0 = hx_arg(cname, hx, is_lstm, "{h0, c0}")
    local function check_h(t, what, HH)
      local s = t.shape
      if #s ~= 3 or s[1] ~= L * D or s[2] ~= B or s[3] ~= HH then
        fail(cname, "Expected " .. what .. " size " .. shape_str({ L * D, B, HH }) .. ", got " .. shape_str(s))
      end
      if t.dtype ~= data.dtype then
        fail(cname, "expected the hidden state to have dtype " .. data.dtype.name .. ", got " .. t.dtype.name)
      end
    end
    check_h(h0, is_lstm and "hidden[0]" or "hidden", Hout)
    if c0 then check_h(c0, "hidden[1]", H) end
    -- the caller's order -> the packed (sorted) order
    if sorted then
      h0 = h0:index_select(2, sorted)
      if c0 then c0 = c0:index_select(2, sorted) end
    end
  else
    h0 = T.zeros({ L * D, B, Hout }, { dtype = data.dtype })
    if is_lstm then c0 = T.zeros({ L * D, B, H }, { dtype = data.dtype }) end
  end
  local hn, cn = {}, {}
  local layer_in = data:contiguous()
  for layer = 0, L - 1 do
    local dir_out = {}
    for dir = 0, D - 1 do
      local idx = layer * D + dir + 1
      local w_ih, w_hh, b_ih, b_hh, w_hr = self:_weights(layer, dir)
      local y, h, c = run_layer_packed(self.mode, layer_in, bs, h0:select(1, idx), c0 and c0:select(1, idx) or nil,
        w_ih, w_hh, b_ih, b_hh, dir == 1, w_hr)
      dir_out[dir + 1] = y
      hn[idx], cn[idx] = h, c
    end
    layer_in = D == 2 and T.cat(dir_out, 2) or dir_out[1]
    if self.dropout > 0 and self.training and layer < L - 1 then
      layer_in = F.dropout(layer_in, self.dropout, true)
    end
    layer_in = layer_in:contiguous()
  end
  local h_n = T.stack(hn, 1)
  local c_n = is_lstm and T.stack(cn, 1) or nil
  if input.unsorted_indices then
    h_n = h_n:index_select(2, input.unsorted_indices)
    if c_n then c_n = c_n:index_select(2, input.unsorted_indices) end
  end
  local out = input:_with_data(layer_in)
  if is_lstm then return out, { h_n, c_n } end
  return out, h_n
end

function RNNBase:forward(input, hx)
  local cname = self._classname
  if nn.utils.rnn.is_packed(input) then return self:_forward_packed(input, hx) end
  local is_lstm = self.mode == "LSTM"
  local nd = check_input(cname, input, 2)
  if not input.dtype.is_floating_point then
    fail(cname, "expected a floating point input, got " .. input.dtype.name)
  end
  local batched = nd == 3
  local h0, c0
  if hx ~= nil then
    h0, c0 = hx_arg(cname, hx, is_lstm, "{h0, c0}")
    local want = batched and 3 or 2
    local kind = batched and "batched 3-D" or "unbatched 2-D"
    if c0 and (h0:dim() ~= want or c0:dim() ~= want) then
      fail(cname, ("For %s input, hx and cx should also be %d-D but got (%d-D, %d-D) tensors"):format(kind, want, h0:dim(), c0:dim()))
    elseif not c0 and h0:dim() ~= want then
      fail(cname, ("For %s input, hx should also be %d-D but got %d-D tensor"):format(kind, want, h0:dim()))
    end
    if not batched then
      h0 = h0:unsqueeze(2)
      if c0 then c0 = c0:unsqueeze(2) end
    end
  end
  local x = input
  if not batched then x = x:unsqueeze(2)
  elseif self.batch_first then x = x:transpose(1, 2) end
  local Tn, B, I = x.shape[1], x.shape[2], x.shape[3]
  if I ~= self.input_size then
    fail(cname, ("input.size(-1) must be equal to input_size. Expected %d, got %d"):format(self.input_size, I))
  end
  local D = self.bidirectional and 2 or 1
  local L, H = self.num_layers, self.hidden_size
  local Hout = (self.proj_size or 0) > 0 and self.proj_size or H
  local want = { L * D, B, Hout }
  local function check_h(t, what, cell)
    local want = cell and { L * D, B, H } or want
    local s = t.shape
    if s[1] ~= want[1] or s[2] ~= want[2] or s[3] ~= want[3] then
      local ws = batched and shape_str(want) or shape_str({ want[1], want[3] })
      local gs = batched and shape_str(s) or shape_str({ s[1], s[3] })
      fail(cname, "Expected " .. what .. " size " .. ws .. ", got " .. gs)
    end
  end
  if h0 then
    check_h(h0, is_lstm and "hidden[0]" or "hidden")
    if c0 then check_h(c0, "hidden[1]", true) end
  else
    h0 = T.zeros(want, { dtype = x.dtype })
    if is_lstm then c0 = T.zeros({ L * D, B, H }, { dtype = x.dtype }) end
  end
  if h0.dtype ~= x.dtype or (c0 and c0.dtype ~= x.dtype) then
    fail(cname, "expected the hidden state to have dtype " .. x.dtype.name .. ", got " ..
      (h0.dtype ~= x.dtype and h0.dtype.name or c0.dtype.name))
  end
  check_param_dtype(cname, self.weight_ih_l0, x.dtype)
  x = x:contiguous()
  local hn, cn = {}, {}
  local layer_in = x
  for layer = 0, L - 1 do
    local dir_out = {}
    for dir = 0, D - 1 do
      local idx = layer * D + dir + 1
      local w_ih, w_hh, b_ih, b_hh, w_hr = self:_weights(layer, dir)
      local y, h, c = run_layer(self.mode, layer_in, h0:select(1, idx), c0 and c0:select(1, idx) or nil,
        w_ih, w_hh, b_ih, b_hh, dir == 1, w_hr)
      dir_out[dir + 1] = y
      hn[idx] = h
      cn[idx] = c
    end
    layer_in = D == 2 and T.cat(dir_out, 3) or dir_out[1]
    if self.dropout > 0 and self.training and layer < L - 1 then
      layer_in = F.dropout(layer_in, self.dropout, true):contiguous()
    end
  end
  local out = layer_in
  local h_n = T.stack(hn, 1)
  local c_n = is_lstm and T.stack(cn, 1) or nil
  if not batched then
    out = out:squeeze(2)
    h_n = h_n:squeeze(2)
    if c_n then c_n = c_n:squeeze(2) end
  elseif self.batch_first then
    out = out:transpose(1, 2)
  end
  if is_lstm then return out, { h_n, c_n } end
  return out, h_n
end

-- nn.RNN, nn.LSTM, nn.GRU (and below, their cells): a class per mode
local function define_modes(base, suffix)
  for _, m in ipairs({ { "RNN", "RNN_TANH" }, { "LSTM", "LSTM" }, { "GRU", "GRU" } }) do
    local name, mode = m[1] .. suffix, m[2]
    local C = base:extend(name)
    nn[name] = C
    function C:init(input_size, hidden_size, a3, a4) self:_setup(name, mode, input_size, hidden_size, a3, a4) end
  end
end
define_modes(RNNBase, "")

---------------------------------------------------------------------------
-- cells: one step, x (B, in) or (in), h (B, H) or (H)
--   rnn_cell(x [, h]) -> h'      gru_cell(x [, h]) -> h'
--   local h, c = lstm_cell(x [, {h, c}])
---------------------------------------------------------------------------
local RNNCellBase = nn.Module:extend("RNNCellBase")
nn.RNNCellBase = RNNCellBase
function RNNCellBase:_setup(cname, mode, input_size, hidden_size, bias, opts)
  if type(bias) == "table" then bias, opts = nil, bias end
  opts = check_opts(cname, opts, { "bias", "nonlinearity", "dtype" }, 3)
  if bias == nil then bias = opts.bias end
  if bias == nil then bias = true end
  if type(bias) ~= "boolean" then fail(cname, "bad argument #3 'bias' (boolean expected, got " .. typename(bias) .. ")") end
  check_sizes(cname, input_size, hidden_size)
  if mode == "RNN_TANH" then
    local nl = opts.nonlinearity or "tanh"
    if nl == "relu" then mode = "RNN_RELU"
    elseif nl ~= "tanh" then fail(cname, "Unknown nonlinearity: " .. tostring(nl)) end
  elseif opts.nonlinearity ~= nil then
    fail(cname, "unknown option 'nonlinearity'")
  end
  self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, hidden_size, bias and true or false
  local G = GATES[mode]
  local k = 1 / math.sqrt(hidden_size)
  local o = opts.dtype and { dtype = opts.dtype } or nil
  local GH = G * (hidden_size + 0.0)
  util.check_param_budget(fail, cname, opts.dtype, GH * input_size + GH * hidden_size + (bias and 2 * GH or 0),
    bias and 4 or 2, ("input_size=%d, hidden_size=%d"):format(input_size, hidden_size))
  local shapes = { { "weight_ih", { G * hidden_size, input_size } }, { "weight_hh", { G * hidden_size, hidden_size } } }
  if bias then
    shapes[3] = { "bias_ih", { G * hidden_size } }
    shapes[4] = { "bias_hh", { G * hidden_size } }
  end
  for _, s in ipairs(shapes) do
    local w = T.empty(s[2], o)
    T.no_grad(function() w:uniform_(-k, k) end)
    self:register_parameter(s[1], nn.Parameter(w))
  end
end
function RNNCellBase:extra_repr()
  local s = self.input_size .. ", " .. self.hidden_size
  if not self.bias then s = s .. ", bias=False" end
  if self.mode == "RNN_RELU" then s = s .. ", nonlinearity=relu" end
  return s
end
function RNNCellBase:forward(input, hx)
  local cname = self._classname
  local nd = check_input(cname, input, 1)
  local batched = nd == 2
  local x = batched and input or input:unsqueeze(1)
  if x.shape[2] ~= self.input_size then
    fail(cname, ("input has inconsistent input_size: got %d expected %d"):format(x.shape[2], self.input_size))
  end
  local B, H = x.shape[1], self.hidden_size
  local h, c
  local is_lstm = self.mode == "LSTM"
  if hx == nil then
    h = T.zeros({ B, H }, { dtype = x.dtype })
    if is_lstm then c = T.zeros({ B, H }, { dtype = x.dtype }) end
  else
    h, c = hx_arg(cname, hx, is_lstm, "{h, c}")
    if not batched then
      h = h:unsqueeze(1)
      if c then c = c:unsqueeze(1) end
    end
    for _, t in ipairs({ h, c }) do
      local label = is_lstm and (rawequal(t, h) and "0" or "1") or ""
      if t:dim() ~= 2 then   -- (dims counted as the caller gave them)
        local got, want = t:dim() - (batched and 0 or 1), batched and 2 or 1
        if not batched and got == 2 then
          fail(cname, ("Input batch size 1 (unbatched 1-D input) doesn't match hidden%s batch size %d (2-D)"):format(label, t.shape[2]))
        end
        fail(cname, ("hidden%s must be %d-D as the input is %s, but got a %d-D tensor"):format(label, want, batched and "batched (2-D)" or "unbatched (1-D)", got))
      end
      if t.shape[1] ~= B then
        fail(cname, ("Input batch size %d doesn't match hidden%s batch size %d"):format(B, label, t.shape[1]))
      end
      if t.shape[2] ~= H then
        fail(cname, ("hidden%s has inconsistent hidden_size: got %d, expected %d"):format(label, t.shape[2], H))
      end
    end
  end
  local _, hn, cn = run_layer(self.mode, x:unsqueeze(1):contiguous(), h, c, self.weight_ih, self.weight_hh,
    self.bias_ih, self.bias_hh, false)
  if not batched then
    hn = hn:squeeze(1)
    if cn then cn = cn:squeeze(1) end
  end
  if is_lstm then return hn, cn end
  return hn
end

define_modes(RNNCellBase, "Cell")

nn._rnn_layer_ops = layer_ops
return true
