-- MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against
-- PyTorch 1.13 (spec/fixtures/nnmod.lua from tools/gen_nnmod_fixtures.py):
-- outputs, attention weights and gradients for PyTorch's weights.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local nn = T.nn
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/nnmod.lua")

local function tens(f)
  if f == nil then return nil end
  local t = T.tensor(f.data, { dtype = T[f.dtype] })
  return t:reshape(f.shape)
end
local function close(got, want, tol, what)
  tol = tol or 1e-9
  assert.same(want.shape, got.shape, what)
  local w = tens(want)
  local d = T.amax(T.abs(got:detach() - w)):item()
  assert(d <= tol, (what or "") .. ": max difference " .. d)
end
local function params(p)
  local out = {}
  for k, v in pairs(p) do out[k] = tens(v) end
  return out
end
local function lua_opts(o)
  local r = { dtype = T.float64 }
  for k, v in pairs(o) do r[k] = v end
  return r
end
local function call_opts(c)
  local r = {}
  for k, v in pairs(c) do r[k] = type(v) == "table" and tens(v) or v end
  return r
end

describe("nn.MultiheadAttention", function()
  for _, c in ipairs(FX.mha) do
    it(c.name .. " matches PyTorch", function()
      local m = nn.MultiheadAttention(c.E, c.H, lua_opts(c.opts))
      local names = {}
      for i, np in ipairs(m:named_parameters()) do names[i] = np[1] end
      assert.same(c.param_names, names)
      m:load_state_dict(params(c.params))
      local q = tens(c.q):requires_grad_()
      local k, v = q, q
      if not c.self_attn then
        k = tens(c.k):requires_grad_()
        v = tens(c.v):requires_grad_()
      end
      local out, w = m(q, k, v, call_opts(c.call))
      close(out, c.out, 1e-9, "output")
      if c.weights then close(w, c.weights, 1e-9, "weights") else assert.is_nil(w) end
      T.sum(out * tens(c.g_out)):backward()
      close(q.grad, c.dq, 1e-9, "dq")
      if not c.self_attn then
        close(k.grad, c.dk, 1e-9, "dk")
        close(v.grad, c.dv, 1e-9, "dv")
      end
      for _, np in ipairs(m:named_parameters()) do close(np[2].grad, c.grads[np[1]], 1e-9, np[1]) end
    end)
  end

  it("passes gradcheck in float64 (masks, bias_kv, zero_attn)", function()
    T.manual_seed(7)
    local m = nn.MultiheadAttention(4, 2, { dtype = T.float64, add_bias_kv = true, add_zero_attn = true,
      kdim = 3, vdim = 2 })
    local q = T.randn({ 2, 1, 4 }, { dtype = T.float64 }):requires_grad_()
    local k = T.randn({ 3, 1, 3 }, { dtype = T.float64 }):requires_grad_()
    local v = T.randn({ 3, 1, 2 }, { dtype = T.float64 }):requires_grad_()
    local kpm = T.tensor({ { false, true, false } })
    local am = T.randn({ 2, 3 }, { dtype = T.float64 })
    local inputs = { q, k, v }
    for _, p in ipairs(m:parameters()) do inputs[#inputs + 1] = p end
    assert.is_true(T.autograd.gradcheck(function(a, b, c)
      return m(a, b, c, { key_padding_mask = kpm, attn_mask = am })
    end, inputs))
  end)

  it("initialises as PyTorch: xavier in_proj, zero biases", function()
    T.manual_seed(0)
    local m = nn.MultiheadAttention(8, 2)
    local bound = math.sqrt(6 / (8 + 24))
    assert(T.amax(T.abs(m.in_proj_weight)):item() <= bound)
    assert.equal(0, T.amax(T.abs(m.in_proj_bias)):item())
    assert.equal(0, T.amax(T.abs(m.out_proj.bias)):item())
    assert.equal("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n)",
      tostring(m))
  end)

  it("runs in float32 and masks every key of a row to NaN as PyTorch", function()
    local m = nn.MultiheadAttention(4, 2)
    local x = T.randn({ 3, 1, 4 })
    local kpm = T.tensor({ { true, true, true } })
    local out, w = m(x, x, x, { key_padding_mask = kpm })
    H.check(out, T.float32, { 3, 1, 4 })
    assert.is_true(T.all(T.isnan(w)):item())
  end)

  it("raises PyTorch's errors", function()
    local m = nn.MultiheadAttention(8, 2)
    local x = T.randn({ 4, 3, 8 })
    H.raises("embed_dim must be divisible by num_heads", function() nn.MultiheadAttention(8, 3) end)
    H.raises("was expecting embedding dimension of 8, but got 6", function()
      local y = T.randn({ 4, 3, 6 }) m(y, y, y) end)
    H.raises("The shape of the 2D attn_mask is {3, 4}, but should be {4, 4}.", function()
      m(x, x, x, { attn_mask = T.zeros({ 3, 4 }) }) end)
    H.raises("The shape of the 3D attn_mask is {2, 4, 4}, but should be {6, 4, 4}.", function()
      m(x, x, x, { attn_mask = T.zeros({ 2, 4, 4 }) }) end)
    H.raises("expecting key_padding_mask shape of {3, 4}, but got {3, 5}", function()
      m(x, x, x, { key_padding_mask = T.zeros({ 3, 5 }, { dtype = T.bool }) }) end)
    H.raises("key shape {5, 3, 8} does not match value shape {4, 3, 8}", function()
      m(x, T.randn({ 5, 3, 8 }), x) end)
    H.raises("query should be unbatched 2D or batched 3D tensor but received 4-D query tensor", function()
      local y = T.randn({ 1, 4, 3, 8 }) m(y, y, y) end)
    H.raises("only bool and floating types of masks are supported", function()
      m(x, x, x, { attn_mask = T.zeros({ 4, 4 }, { dtype = T.int64 }) }) end)
    H.raises("unknown option 'need_weight' (did you mean 'need_weights'?)", function()
      m(x, x, x, { need_weight = false }) end)
  end)
end)

describe("nn.TransformerEncoderLayer / TransformerEncoder", function()
  for _, c in ipairs(FX.transformer) do
    it(c.name .. " matches PyTorch", function()
      local layer = nn.TransformerEncoderLayer(c.d_model, c.nhead, lua_opts(c.opts))
      local m = layer
      if c.num_layers then
        m = nn.TransformerEncoder(layer, c.num_layers, c.final_norm and nn.LayerNorm(c.d_model, { dtype = T.float64 }) or nil)
      end
      assert.equal(c.repr, tostring(m))
      local keys = {}
      for k in pairs(m:state_dict()) do keys[#keys + 1] = k end
      if host.has_pairs_mm then
        assert.same(c.keys, keys)
      else   -- no __pairs (5.1, LuaJIT): the order is not observable there, the names still are
        local want = { (table.unpack or unpack)(c.keys) }
        table.sort(want) table.sort(keys)
        assert.same(want, keys)
      end
      m:load_state_dict(params(c.params))
      local x = tens(c.x):requires_grad_()
      local out = m(x, call_opts(c.call))
      close(out, c.out, 1e-9, "output")
      T.sum(out * tens(c.g_out)):backward()
      close(x.grad, c.dx, 1e-9, "dx")
      for _, np in ipairs(m:named_parameters()) do close(np[2].grad, c.grads[np[1]], 1e-9, np[1]) end
    end)
  end

  it("TransformerEncoderLayer passes gradcheck in float64 (norm_first, gelu)", function()
    T.manual_seed(8)
    local l = nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 6, dropout = 0.0, dtype = T.float64,
      norm_first = true, activation = "gelu", batch_first = true })
    local x = T.randn({ 1, 3, 4 }, { dtype = T.float64 }):requires_grad_()
    local inputs = { x }
    for _, p in ipairs(l:parameters()) do inputs[#inputs + 1] = p end
    assert.is_true(T.autograd.gradcheck(function(a) return l(a) end, inputs))
  end)

  it("TransformerEncoder's layers are deep copies with equal initial weights", function()
    local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 8 }), 3)
    assert.equal(3, host.len(enc.layers))   -- (# calls __len from Lua 5.2 on)
    local a, b = enc.layers[1].linear1.weight, enc.layers[3].linear1.weight
    assert.is_true(T.equal(a, b))
    assert.is_false(rawequal(a, b))
    assert.equal(3 * 12 + 0, #enc:parameters() + 0)
  end)

  it("dropout is active in training and off in eval", function()
    T.manual_seed(1)
    local l = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16, dropout = 0.5 })
    local x = T.randn({ 4, 2, 8 })
    l:eval()
    assert.is_true(T.equal(l(x), l(x)))
    l:train()
    assert.is_false(T.equal(l(x), l(x)))
  end)

  it("generate_square_subsequent_mask matches PyTorch", function()
    local m = nn.Transformer.generate_square_subsequent_mask(5, { dtype = T.float64 })
    assert.same(FX.causal_mask_5.data, m:reshape({ 25 }):totable())
  end)

  it("raises on a bad activation", function()
    H.raises("activation should be relu/gelu, not tanh", function()
      nn.TransformerEncoderLayer(4, 2, { activation = "tanh" }) end)
  end)
  it("Transformer.generate_square_subsequent_mask checks its options", function()
    local gen = T.nn.Transformer.generate_square_subsequent_mask
    assert.has_error(function() gen(2, 0) end,
      "ltensor.nn.Transformer.generate_square_subsequent_mask: options must be a table (got number)")
    assert.has_error(function() gen(2, { dtyp = T.float64 }) end,
      "ltensor.nn.Transformer.generate_square_subsequent_mask: unknown option 'dtyp' (did you mean 'dtype'?)")
    assert.equal(T.float64, gen(3, { dtype = T.float64 }).dtype)
  end)
end)
