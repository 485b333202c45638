-- The fused attention path (T._sdpa, src/core/lt_attention.c) that
-- MultiheadAttention takes when no gradient is wanted, against PyTorch 1.13
-- (spec/fixtures/attention_fused.lua from spec/fixtures/gen_attention_fused.py),
-- and the composed path it falls back to when autograd needs one.
local T = require "ltensor"
local nn = T.nn
local FX = dofile("spec/fixtures/attention_fused.lua")

local function tens(f)
  if f == nil then return nil end
  return T.tensor(f.v, { dtype = T[f.dtype] }):reshape(f.shape)
end
local function state(s)
  local out = {}
  for _, kv in ipairs(s) do out[kv[1]] = tens(kv[2]) end
  return out
end
-- max |got - want| (NaN where and only where want has NaN)
local function close(got, want_f, tol, what)
  local want = tens(want_f)
  assert.same(want.shape, got.shape, what)
  local gn, wn = T.isnan(got), T.isnan(want)
  assert.is_true(T.equal(gn, wn), (what or "") .. ": NaN positions differ")
  local d = T.amax(T.abs(T.where(wn, 0, got:double() - want:double()))):item()
  assert(d <= tol, (what or "") .. ": max difference " .. d)
end
local function tol_of(c) return c.q.dtype == "float32" and 2e-5 or 1e-10 end

-- counts T._sdpa's calls around f
local function count_fused(f)
  local real, n = T._sdpa, 0
  T._sdpa = function(...) n = n + 1 return real(...) end
  local ok, a, b = pcall(f)
  T._sdpa = real
  assert(ok, a)
  return n, a, b
end

local function build(c)
  local dt = T[c.q.dtype]
  local m
  if c.kind == "mha" then
    m = nn.MultiheadAttention(c.E, c.H, { batch_first = c.batch_first, dtype = dt })
  else
    m = nn.TransformerEncoderLayer(c.E, c.H, { dim_feedforward = c.F, batch_first = true, dtype = dt,
      norm_first = c.norm_first })
  end
  m:load_state_dict(state(c.state))
  m:eval()
  return m
end

local function run(c, m)
  local q = tens(c.q)
  if c.kind == "layer" then return m(q, { src_mask = tens(c.attn_mask), src_key_padding_mask = tens(c.kpm) }) end
  local k, v = q, q
  if not c.self_attn then k, v = tens(c.k), tens(c.v) end
  return m(q, k, v, { attn_mask = tens(c.attn_mask), key_padding_mask = tens(c.kpm), need_weights = c.need_weights,
    average_attn_weights = c.average })
end

describe("fused attention (no grad)", function()
  for _, c in ipairs(FX) do
    it(c.name .. " matches PyTorch", function()
      local m = build(c)
      local n, out, w = count_fused(function() return T.no_grad(function() return run(c, m) end) end)
      assert.equal(1, n)
      close(out, c.out, tol_of(c), "output")
      if c.kind == "mha" and c.need_weights then close(w, c.weights, tol_of(c), "weights") end
      if c.kind == "mha" and not c.need_weights then assert.is_nil(w) end
    end)
  end

  it("is taken when nothing requires grad, even with grad mode on", function()
    local c = FX[1]
    local m = build(c)
    m:requires_grad_(false)
    local n, out = count_fused(function() return run(c, m) end)
    assert.equal(1, n)
    close(out, c.out, tol_of(c), "output")
  end)

  it("matches the composed path on a 128 x 256, 8-head float32 self-attention", function()
    T.manual_seed(3)
    local m = nn.MultiheadAttention(256, 8, { batch_first = true })
    m:eval()
    local x = T.randn({ 1, 128, 256 })
    local real = T._sdpa
    local fused, fw = T.no_grad(function() return m(x, x, x) end)
    T._sdpa = nil
    local comp, cw = T.no_grad(function() return m(x, x, x) end)
    T._sdpa = real
    assert(T.amax(T.abs(fused - comp)):item() <= 1e-5 * T.amax(T.abs(comp)):item())
    assert(T.amax(T.abs(fw - cw)):item() <= 1e-6)
  end)

  it("a sequence of no keys gives the output projection's bias", function()
    local m = nn.MultiheadAttention(4, 2, { dtype = T.float64 })
    m:eval()
    T.no_grad(function() m.out_proj.bias:copy_(T.tensor({ 1, 2, 3, 4 })) end)
    local q, kv = T.randn({ 3, 1, 4 }, { dtype = T.float64 }), T.randn({ 0, 1, 4 }, { dtype = T.float64 })
    local n, out = count_fused(function() return T.no_grad(function() return m(q, kv, kv, { need_weights = false }) end) end)
    assert.equal(1, n)
    assert.is_true(T.equal(out, T.tensor({ 1, 2, 3, 4 }, { dtype = T.float64 }):expand({ 3, 1, 4 })))
  end)
end)

describe("fused attention falls back to the composed path", function()
  it("when a parameter requires grad (and the gradient flows)", function()
    local c = FX[1]
    local m = build(c)
    local n, out = count_fused(function() return run(c, m) end)
    assert.equal(0, n)
    close(out, c.out, tol_of(c), "output")
    out:sum():backward()
    assert.is_not_nil(m.in_proj_weight.grad)
  end)

  it("in training mode with dropout", function()
    local m = nn.MultiheadAttention(8, 2, { dropout = 0.5 })
    local x = T.randn({ 3, 2, 8 })
    local n = count_fused(function() return T.no_grad(function() return m(x, x, x) end) end)
    assert.equal(0, n)
    m:eval()
    n = count_fused(function() return T.no_grad(function() return m(x, x, x) end) end)
    assert.equal(1, n)
  end)

  it("with add_zero_attn", function()
    local m = nn.MultiheadAttention(8, 2, { add_zero_attn = true })
    m:eval()
    local x = T.randn({ 3, 2, 8 })
    assert.equal(0, (count_fused(function() return T.no_grad(function() return m(x, x, x) end) end)))
  end)
end)

describe("T._sdpa", function()
  it("checks its arguments", function()
    local q = T.randn({ 3, 2, 8 })
    assert.has_error(function() T._sdpa(q, q:double(), q, 2, nil, nil, 1, false, false) end,
      "ltensor._sdpa: argument #2: dtype mismatch")
    assert.has_error(function() T._sdpa(q, q, q, 3, nil, nil, 1, false, false) end,
      "ltensor._sdpa: embedding dims not divisible by the heads")
    assert.has_error(function() T._sdpa(q, q, q, 2, T.zeros({ 2, 3, 3 }), nil, 1, false, false) end,
      "ltensor._sdpa: attn_mask: expected (1 or N*H, L, S)")
    assert.has_error(function() T._sdpa(q, q, q, 2, nil, T.zeros({ 2, 2 }), 1, false, false) end,
      "ltensor._sdpa: key_padding_mask: expected (N, S)")
    assert.has_error(function() T._sdpa(q:int(), q:int(), q:int(), 2, nil, nil, 1, false, false) end,
      "ltensor._sdpa: argument #1: expected a float32 or float64 tensor")
  end)
end)
