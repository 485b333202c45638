-- ltensor.onnx.ops_rnn -- the ONNX recurrent operators RNN, GRU and LSTM,
-- unrolled over time with ltensor ops (autograd records every step).
--
-- ONNX's layouts: X [seq, batch, input] (layout=1: [batch, seq, input]),
-- W [dirs, gates*H, input], R [dirs, gates*H, H], B [dirs, 2*gates*H] (the
-- input biases, then the recurrent ones); gate orders LSTM i o f c, GRU
-- z r h.  Outputs Y [seq, dirs, batch, H], Y_h (and LSTM's Y_c) [dirs,
-- batch, H].  sequence_lens: a batch entry stops at its length (its state
-- frozen, Y zero after it; the reverse direction starts at its last valid
-- step).
local T = require "ltensor.core"
local U = require "ltensor.onnx.util"
local unpack = require("ltensor.compat").table.unpack

local O = {}
local rfail = U.rfail

local ACTS = {
  Sigmoid = function(v) return T.sigmoid(v) end,
  Tanh = function(v) return T.tanh(v) end,
  Relu = function(v) return T.relu(v) end,
}

-- attributes common to the three: direction, activations (per direction),
-- clip, hidden_size, layout
local function common(node, ngates, defaults)
  local dir = node:choice("direction", "forward", "forward", "reverse", "bidirectional")
  local nd = dir == "bidirectional" and 2 or 1
  if node.attrs.activation_alpha or node.attrs.activation_beta then
    node:fail("attributes activation_alpha / activation_beta are not supported")
  end
  local names = node:strings("activations", nil)
  local acts = {}
  if names then
    if #names ~= #defaults * nd then
      node:fail(("attribute 'activations' needs %d names, got %d"):format(#defaults * nd, #names))
    end
  end
  for k = 1, nd do
    acts[k] = {}
    for j = 1, #defaults do
      local nm = names and names[(k - 1) * #defaults + j] or defaults[j]
      local f = ACTS[nm]
      if not f then node:fail("activation '" .. tostring(nm) .. "' is not supported") end
      acts[k][j] = f
    end
  end
  local layout = node:int("layout", 0)
  if layout ~= 0 and layout ~= 1 then node:fail("attribute layout=" .. layout .. " is not supported") end
  local clip = node:number("clip", nil)
  local hs = node:int("hidden_size", nil)
  node:min_inputs(3)
  return { dir = dir, nd = nd, acts = acts, layout = layout, clip = clip, hidden = hs, ngates = ngates }
end

local function clipf(cfg, v)
  if cfg.clip then return T.clamp(v, -cfg.clip, cfg.clip) end
  return v
end

-- run one direction: step(xw_t, state) -> new state, h; returns the list of
-- per-step outputs (in time order) and the final state
local function scan(S, reverse, lens, state, step, zero_h)
  local ys = {}
  for n = 1, S do
    local t = reverse and (S - n + 1) or n
    local new, h = step(t, state)
    if lens then
      local m = T.lt(t - 1, lens):reshape({ -1, 1 })
      for k, v in pairs(new) do new[k] = T.where(m, v, state[k]) end
      h = T.where(m, h, zero_h)
    end
    state = new
    ys[t] = h
  end
  return ys, state
end

-- prepare inputs: X as [S, B, I], W/R/B sliced per direction
local function prepare(cfg, x, node)
  local X, W, R, Bias = x[1], x[2], x[3], x[4]
  if cfg.layout == 1 then X = X:transpose(1, 2) end
  if X:dim() ~= 3 then rfail("X must have rank 3") end
  if W:size(1) ~= cfg.nd then rfail(("W has %d directions, direction is '%s'"):format(W:size(1), cfg.dir)) end
  local H = R:size(3)
  if cfg.hidden and cfg.hidden ~= H then rfail(("hidden_size %d does not match R's %d"):format(cfg.hidden, H)) end
  local G = cfg.ngates * H
  if W:size(2) ~= G or R:size(2) ~= G then rfail(("W and R need %d rows (%d gates of %d)"):format(G, cfg.ngates, H)) end
  local lens = x[5]
  if lens then lens = lens:to(T.int64) end
  local S, Bn = X:size(1), X:size(2)
  local zero = T.zeros({ Bn, H }, { dtype = X.dtype })
  local dirs = {}
  for k = 1, cfg.nd do
    local wb, rb
    if Bias then
      wb, rb = Bias[k]:narrow(1, 1, G), Bias[k]:narrow(1, G + 1, G)
    end
    local xw = T.matmul(X, W[k]:t())
    if wb then xw = xw + wb end
    dirs[k] = { xw = xw, R = R[k], rb = rb, reverse = (cfg.dir == "reverse") or k == 2 }
  end
  return { S = S, B = Bn, H = H, lens = lens, zero = zero, dirs = dirs, dtype = X.dtype }, node
end

local function initial(v, k, zero)
  if v then return v[k] end
  return zero
end

-- stack directions into Y [S, nd, B, H] and the final states [nd, B, H]
local function finish(cfg, ysets, finals)
  local per = {}
  for k, ys in ipairs(ysets) do per[k] = T.stack(ys, 1) end   -- [S, B, H]
  local Y = T.stack(per, 2)
  local outs = {}
  for j = 1, #finals[1] do
    local list = {}
    for k = 1, #finals do list[k] = finals[k][j] end
    outs[j] = T.stack(list, 1)
  end
  if cfg.layout == 1 then
    Y = Y:permute({ 3, 1, 2, 4 })   -- [B, S, nd, H]
    for j = 1, #outs do outs[j] = outs[j]:transpose(1, 2) end
  end
  return Y, outs
end

-- the operator's outputs: per_dir(p, k, d) runs direction k and returns
-- scan's results, its outputs per step and its final state (h, and LSTM's c)
local function run(cfg, node, x, per_dir)
  local p = prepare(cfg, x, node)
  local ysets, finals = {}, {}
  for k, d in ipairs(p.dirs) do
    local ys, st = per_dir(p, k, d)
    ysets[k], finals[k] = ys, { st.h, st.c }
  end
  local Y, outs = finish(cfg, ysets, finals)
  return Y, unpack(outs)
end

local function gate(g, i, H) return g:narrow(2, (i - 1) * H + 1, H) end

function O.LSTM(node)
  node:allow("activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
    "input_forget", "layout")
  if node:int("input_forget", 0) ~= 0 then node:fail("attribute input_forget=1 is not supported") end
  local cfg = common(node, 4, { "Sigmoid", "Tanh", "Tanh" })
  return function(x)
    return run(cfg, node, x, function(p, k, d)
      local H = p.H
      local fa, ga, ha = cfg.acts[k][1], cfg.acts[k][2], cfg.acts[k][3]
      local pi, po, pf
      if x[8] then
        local pk = x[8][k]
        pi, po, pf = pk:narrow(1, 1, H), pk:narrow(1, H + 1, H), pk:narrow(1, 2 * H + 1, H)
      end
      local Rt = d.R:t()
      local h0, c0 = initial(x[6], k, p.zero), initial(x[7], k, p.zero)
      return scan(p.S, d.reverse, p.lens, { h = h0, c = c0 }, function(t, s)
        local g = d.xw[t] + T.matmul(s.h, Rt)
        if d.rb then g = g + d.rb end
        local gi, go, gf, gc = gate(g, 1, H), gate(g, 2, H), gate(g, 3, H), gate(g, 4, H)
        if pi then gi = gi + pi * s.c; gf = gf + pf * s.c end
        local i = fa(clipf(cfg, gi))
        local f = fa(clipf(cfg, gf))
        local c = f * s.c + i * ga(clipf(cfg, gc))
        if po then go = go + po * c end
        local o = fa(clipf(cfg, go))
        local h = o * ha(c)
        return { h = h, c = c }, h
      end, p.zero)
    end)
  end
end

function O.GRU(node)
  node:allow("activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
    "layout", "linear_before_reset")
  local lbr = node:int("linear_before_reset", 0) ~= 0
  local cfg = common(node, 3, { "Sigmoid", "Tanh" })
  return function(x)
    return run(cfg, node, x, function(p, k, d)
      local H = p.H
      local fa, ga = cfg.acts[k][1], cfg.acts[k][2]
      local Rzr = d.R:narrow(1, 1, 2 * H):t()
      local Rh = d.R:narrow(1, 2 * H + 1, H):t()
      local rbzr = d.rb and d.rb:narrow(1, 1, 2 * H)
      local rbh = d.rb and d.rb:narrow(1, 2 * H + 1, H)
      return scan(p.S, d.reverse, p.lens, { h = initial(x[6], k, p.zero) }, function(t, s)
        local xg = d.xw[t]
        local hzr = T.matmul(s.h, Rzr)
        if rbzr then hzr = hzr + rbzr end
        local z = fa(clipf(cfg, gate(xg, 1, H) + gate(hzr, 1, H)))
        local r = fa(clipf(cfg, gate(xg, 2, H) + gate(hzr, 2, H)))
        local hh
        if lbr then
          hh = T.matmul(s.h, Rh)
          if rbh then hh = hh + rbh end
          hh = r * hh
        else
          hh = T.matmul(r * s.h, Rh)
          if rbh then hh = hh + rbh end
        end
        local n = ga(clipf(cfg, gate(xg, 3, H) + hh))
        local h = (1 - z) * n + z * s.h
        return { h = h }, h
      end, p.zero)
    end)
  end
end

function O.RNN(node)
  node:allow("activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout")
  local cfg = common(node, 1, { "Tanh" })
  return function(x)
    return run(cfg, node, x, function(p, k, d)
      local fa = cfg.acts[k][1]
      local Rt = d.R:t()
      return scan(p.S, d.reverse, p.lens, { h = initial(x[6], k, p.zero) }, function(t, s)
        local g = d.xw[t] + T.matmul(s.h, Rt)
        if d.rb then g = g + d.rb end
        local h = fa(clipf(cfg, g))
        return { h = h }, h
      end, p.zero)
    end)
  end
end

return O
