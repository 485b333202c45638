-- spec/packed_spec.lua: T.nn.utils.rnn (PackedSequence, pad_sequence,
-- pack_padded_sequence, pad_packed_sequence, pack_sequence) and RNN / LSTM /
-- GRU over packed batches.  Expected values from PyTorch 1.13 through
-- spec/fixtures/packed.lua (tools/gen_packed_fixtures.py).
local T = require "ltensor"
local nn = T.nn
local R = nn.utils.rnn
local fix = dofile("spec/fixtures/packed.lua")

local function build(d) return T.tensor(d.data, { dtype = T[d.dtype] }):reshape(d.shape) end
local function close(got, want, what)
  assert.same(want.shape, got.shape, what .. ": shape")
  local g = got:reshape(-1):totable()
  for i, w in ipairs(want.data) do
    assert.is_true(math.abs(g[i] - w) <= 1e-9 * (1 + math.abs(w)), ("%s: element %d is %.12g, expected %.12g"):format(what, i, g[i], w))
  end
end
local function seqs_of(c)
  local s = {}
  for i, d in ipairs(c.seqs) do s[i] = build(d) end
  return s
end

describe("packing against PyTorch", function()
  for _, c in ipairs(fix) do
    if c.kind == "pad_sequence" then
      it(c.name, function()
        close(R.pad_sequence(seqs_of(c), { batch_first = c.batch_first, padding_value = c.padding_value }), c.expect, "padded")
      end)
    elseif c.kind == "pack" then
      it(c.name, function()
        local p = R.pack_sequence(seqs_of(c), { enforce_sorted = false })
        assert.is_true(R.is_packed(p))
        close(p.data, c.data, "data")
        assert.same(c.batch_sizes, p.batch_sizes:totable())
        assert.same(c.sorted_indices, p.sorted_indices:totable())
        assert.same(c.unsorted_indices, p.unsorted_indices:totable())
        local padded, lengths = R.pad_packed_sequence(p, { batch_first = true, total_length = 6 })
        close(padded, c.padded, "padded")
        assert.same(c.lengths, lengths:totable())
      end)
    end
  end
end)

describe("recurrent layers over packed batches against PyTorch", function()
  for _, c in ipairs(fix) do
    if c.kind == "rnn" then
      it(c.name, function()
        local opts = {}
        for k, v in pairs(c.opts) do opts[k] = v end
        opts.dtype = T.float64
        local m = nn[c.cls](3, 4, opts)
        T.no_grad(function() for k, p in pairs(c.params) do m[k]:copy_(build(p)) end end)
        local x = build(c.x):requires_grad_()
        local packed = R.pack_padded_sequence(x, c.lengths, { batch_first = c.batch_first, enforce_sorted = false })
        local out, h
        if c.cls == "LSTM" then out, h = m(packed, { build(c.h0), build(c.c0) })
        elseif c.h0 then out, h = m(packed, build(c.h0))
        else out, h = m(packed) end
        assert.is_true(R.is_packed(out))
        assert.same(c.batch_sizes, out.batch_sizes:totable())
        close(out.data, c.out, "output")
        local hn = c.cls == "LSTM" and h[1] or h
        close(hn, c.hn, "h_n")
        local loss = (out.data * build(c.W)):sum() + (hn * build(c.V)):sum()
        if c.cn then
          close(h[2], c.cn, "c_n")
          loss = loss + (h[2] * build(c.U)):sum()
        end
        loss:backward()
        for k, g in pairs(c.grads) do close(m[k].grad, g, "grad of " .. k) end
        close(x.grad, c.gx, "grad of the input")
      end)
    end
  end
end)

describe("packing edges and errors", function()
  it("round trip of a sorted padded batch, time-major, with gradients", function()
    local x = T.randn(4, 3, 2, { dtype = T.float64 })
    local p = R.pack_padded_sequence(x, T.tensor({ 4, 2, 1 }))
    assert.is_nil(p.sorted_indices)
    assert.same({ 3, 2, 1, 1 }, p.batch_sizes:totable())
    local back, lens = R.pad_packed_sequence(p)
    assert.same({ 4, 2, 1 }, lens:totable())
    assert.is_true(T.equal(back[1], x[1]))
    assert.same({ 0, 0 }, back[4][2]:totable())
    assert.is_true(T.autograd.gradcheck(function(a)
      return (R.pad_packed_sequence(R.pack_padded_sequence(a, { 3, 3, 1 }, { enforce_sorted = false }))) end,
      { T.randn(3, 3, 2, { dtype = T.float64 }) }))
  end)
  it("an RNN over a packed batch matches each sequence run alone", function()
    T.manual_seed(3)
    local gru = nn.GRU(2, 3, { bidirectional = true })
    local seqs = { T.randn(2, 2), T.randn(5, 2), T.randn(3, 2) }
    local out, hn = gru(R.pack_sequence(seqs, { enforce_sorted = false }))
    local padded = R.pad_packed_sequence(out)
    for i, s in ipairs(seqs) do
      local o1, h1 = gru(s:unsqueeze(2))
      assert.is_true((padded:narrow(1, 1, s:size(1)):select(2, i) - o1:squeeze(2)):abs():max():item() < 1e-5)
      assert.is_true((hn:select(2, i) - h1:squeeze(2)):abs():max():item() < 1e-5)
    end
  end)
  it("LSTM with proj_size, two layers, both directions: packed equals one sequence at a time", function()
    T.manual_seed(3)
    local m = nn.LSTM(2, 4, { proj_size = 3, bidirectional = true, num_layers = 2 })
    local seqs = { T.randn(2, 2), T.randn(5, 2), T.randn(3, 2) }
    local out, hc = m(R.pack_sequence(seqs, { enforce_sorted = false }))
    local padded = R.pad_packed_sequence(out)
    for i, s in ipairs(seqs) do
      local o1, h1 = m(s:unsqueeze(2))
      assert.is_true((padded:narrow(1, 1, s:size(1)):select(2, i) - o1:squeeze(2)):abs():max():item() < 1e-5)
      assert.is_true((hc[1]:select(2, i) - h1[1]:squeeze(2)):abs():max():item() < 1e-5)
      assert.is_true((hc[2]:select(2, i) - h1[2]:squeeze(2)):abs():max():item() < 1e-5)
    end
  end)
  it("an empty batch and a non-contiguous input", function()
    local p = R.pack_padded_sequence(T.randn(3, 0, 2), {})
    assert.same({ 0, 2 }, p.data.shape)
    local out, h = nn.GRU(2, 3)(p)
    assert.same({ 0, 3 }, out.data.shape)
    assert.same({ 1, 0, 3 }, h.shape)
    local padded, lens = R.pad_packed_sequence(out)
    assert.same({ 0, 0, 3 }, padded.shape)
    assert.equal(0, lens:numel())
    local x = T.randn(2, 4, 3):transpose(1, 2)
    local back = R.pad_packed_sequence(R.pack_padded_sequence(x, { 4, 2 }))
    assert.is_true(T.equal(back:narrow(1, 1, 2), x:narrow(1, 1, 2)))
    assert.is_true(T.equal(back:select(2, 1), x:select(2, 1)))
  end)
  it("raises PyTorch's messages", function()
    local x = T.randn(3, 2, 2)
    local ok, err = pcall(R.pack_padded_sequence, x, { 2, 3 })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("ltensor.nn.utils.rnn.pack_padded_sequence: `lengths` array must be sorted in decreasing order", 1, true))
    ok, err = pcall(R.pack_padded_sequence, x, { 3, 0 })
    assert.is_truthy(tostring(err):find("Length of all samples has to be greater than 0", 1, true))
    ok, err = pcall(R.pack_padded_sequence, x, { 3 })
    assert.is_truthy(tostring(err):find("Expected `len(lengths)` to be equal to batch_size, but got 1 (batch_size=2)", 1, true))
    ok, err = pcall(R.pack_padded_sequence, x, { 4, 1 })
    assert.is_truthy(tostring(err):find("exceeds the input's time steps", 1, true))
    ok, err = pcall(R.pack_padded_sequence, x, { 2.5, 1 })
    assert.is_truthy(tostring(err):find("entry 1 is not an integer", 1, true))
    ok, err = pcall(R.pack_padded_sequence, "x", { 1 })
    assert.is_truthy(tostring(err):find("bad argument #1 'input' (Tensor expected, got string)", 1, true))
    local p = R.pack_padded_sequence(x, { 3, 1 })
    ok, err = pcall(R.pad_packed_sequence, p, { total_length = 2 })
    assert.is_truthy(tostring(err):find("Expected total_length to be at least the length of the longest sequence in input, but got total_length=2 and max sequence length being 3", 1, true))
    ok, err = pcall(R.pad_packed_sequence, x)
    assert.is_truthy(tostring(err):find("PackedSequence expected", 1, true))
    ok, err = pcall(R.pad_sequence, {})
    assert.is_truthy(tostring(err):find("ltensor.nn.utils.rnn.pad_sequence: received an empty list of sequences", 1, true))
    ok, err = pcall(R.pad_sequence, { T.randn(2, 3), T.randn(2, 4) })
    assert.is_truthy(tostring(err):find("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", 1, true))
    ok, err = pcall(R.pack_sequence, { T.randn(1, 2), T.randn(2, 2) })
    assert.is_truthy(tostring(err):find("ltensor.nn.utils.rnn.pack_sequence: `lengths` array must be sorted", 1, true))
    local lstm = nn.LSTM(2, 3)
    ok, err = pcall(lstm, p, { T.zeros(1, 3, 3), T.zeros(1, 2, 3) })
    assert.is_truthy(tostring(err):find("ltensor.nn.LSTM: Expected hidden[0] size {1, 2, 3}, got {1, 3, 3}", 1, true))
    ok, err = pcall(nn.LSTM(5, 3), p)
    assert.is_truthy(tostring(err):find("input.size(-1) must be equal to input_size. Expected 5, got 2", 1, true))
  end)
  it("PackedSequence built by hand, tostring and to(dtype)", function()
    local p = R.PackedSequence(T.randn(3, 2), { 2, 1 }, T.tensor({ 2, 1 }))
    assert.same({ 2, 1 }, p.unsorted_indices:totable())
    assert.equal("PackedSequence(data=3x2, batch_sizes=2, 1)", tostring(p))
    assert.equal(T.float64, p:to(T.float64).data.dtype)
    local padded, lens = R.pad_packed_sequence(p)
    assert.same({ 1, 2 }, lens:totable())
    assert.same({ 2, 2, 2 }, padded.shape)
  end)
end)

describe("unpad_sequence and unpack_sequence", function()
  it("invert pad_sequence and pack_sequence", function()
    local seqs = { T.randn(3, 2), T.randn(1, 2), T.randn(4, 2) }
    for _, bf in ipairs({ false, true }) do
      local back = R.unpad_sequence(R.pad_sequence(seqs, { batch_first = bf }), { 3, 1, 4 }, { batch_first = bf })
      for i, s in ipairs(seqs) do assert.is_true(T.equal(back[i], s)) end
    end
    local back = R.unpack_sequence(R.pack_sequence(seqs, { enforce_sorted = false }))
    assert.equal(3, #back)
    for i, s in ipairs(seqs) do assert.is_true(T.equal(back[i], s)) end
  end)
  it("raise on bad arguments", function()
    local ok, err = pcall(R.unpad_sequence, T.randn(3, 2, 1), { 3 })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("ltensor.nn.utils.rnn.unpad_sequence: expected 2 lengths (one per sequence), got 1", 1, true))
    ok, err = pcall(R.unpad_sequence, T.randn(3, 2, 1), { 4, 1 })
    assert.is_truthy(tostring(err):find("length 4 of sequence 1 is outside 0..3", 1, true))
    ok, err = pcall(R.unpack_sequence, T.randn(2))
    assert.is_truthy(tostring(err):find("ltensor.nn.utils.rnn.unpack_sequence: bad argument #1 'packed_sequences' (PackedSequence expected", 1, true))
  end)
end)
