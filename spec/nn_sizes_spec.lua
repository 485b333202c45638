-- nn constructors given absurd sizes fail at once, in their own name and
-- naming the sizes, instead of building layers for hours or failing in
-- T.rand / T.empty / T.ones (issue 22: nn.RNN(4, 4, {num_layers = 2^32})
-- never returned).  util.check_param_budget counts the parameters first (in
-- floats: nothing wraps around) and refuses more than a tensor can hold or
-- than the memory they need (the state's memory limit, else the machine's).
local T = require "ltensor"
local nn = T.nn

local function int(x) return math.tointeger(x) end
local function err_of(f, ...)
  local t0 = T._clock()
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  assert(T._clock() - t0 < 1, "took " .. (T._clock() - t0) .. " s")
  return e
end
local MACHINE = "more than this machine's memory %(" -- (its size varies)

describe("nn constructors with absurd sizes", function()
  it("RNN, LSTM and GRU with 2^32 layers", function()
    assert.matches("^ltensor%.nn%.RNN: input_size=4, hidden_size=4, num_layers=4294967296 make 171798691840 parameters in "
      .. "17179869184 tensors %(16%.6 TiB%), " .. MACHINE, err_of(nn.RNN, 4, 4, { num_layers = int(2 ^ 32) }))
    assert.matches("^ltensor%.nn%.LSTM: input_size=4, hidden_size=4, num_layers=4294967296 make 687194767360 parameters",
      err_of(nn.LSTM, 4, 4, int(2 ^ 32)))
    assert.matches("^ltensor%.nn%.GRU: input_size=4, hidden_size=4, num_layers=268435456 make 90194313120 parameters",
      err_of(nn.GRU, 4, 4, { num_layers = int(2 ^ 28), bidirectional = true }))
    assert.equal("ltensor.nn.GRU: input_size=4, hidden_size=2147483648, num_layers=1 make 1.38e+19 parameters, more than "
      .. "a tensor can hold (2^57 elements)", err_of(nn.GRU, 4, int(2 ^ 31)))
    assert.matches("^ltensor%.nn%.LSTMCell: input_size=1099511627776, hidden_size=4 make 17592186044512 parameters in 4 "
      .. "tensors %(64%.0 TiB%), " .. MACHINE, err_of(nn.LSTMCell, int(2 ^ 40), 4))
    assert.equal("ltensor.nn.RNNCell: input_size=4, hidden_size=1099511627776 make 1.21e+24 parameters, more than a "
      .. "tensor can hold (2^57 elements)", err_of(nn.RNNCell, 4, int(2 ^ 40)))
  end)

  it("Linear, Conv, Embedding and the norms", function()
    assert.equal("ltensor.nn.Linear: in_features=1099511627776, out_features=1099511627776 make 1.21e+24 parameters, "
      .. "more than a tensor can hold (2^57 elements)", err_of(nn.Linear, int(2 ^ 40), int(2 ^ 40)))
    assert.matches("^ltensor%.nn%.Linear: in_features=1048576, out_features=1048576 make 1099512676352 parameters in 2 "
      .. "tensors %(4%.0 TiB%), " .. MACHINE, err_of(nn.Linear, int(2 ^ 20), int(2 ^ 20)))
    assert.equal("ltensor.nn.Conv2d: in_channels=4, out_channels=4, kernel_size={1099511627776, 1099511627776} make "
      .. "1.93e+25 parameters, more than a tensor can hold (2^57 elements)", err_of(nn.Conv2d, 4, 4, int(2 ^ 40)))
    assert.matches("^ltensor%.nn%.Conv1d: in_channels=4, out_channels=4, kernel_size={8589934592} make 137438953476 "
      .. "parameters in 2 tensors", err_of(nn.Conv1d, 4, 4, int(2 ^ 33)))
    assert.matches("^ltensor%.nn%.ConvTranspose2d: in_channels=1048576, out_channels=1048576, kernel_size={4, 4} make "
      .. "17592187092992 parameters", err_of(nn.ConvTranspose2d, int(2 ^ 20), int(2 ^ 20), 4))
    assert.equal("ltensor.nn.Embedding: num_embeddings=1099511627776, embedding_dim=1099511627776 make 1.21e+24 "
      .. "parameters, more than a tensor can hold (2^57 elements)", err_of(nn.Embedding, int(2 ^ 40), int(2 ^ 40)))
    assert.matches("^ltensor%.nn%.EmbeddingBag: num_embeddings=1099511627776, embedding_dim=4 make 4398046511104 "
      .. "parameters in 1 tensor %(16%.0 TiB%)", err_of(nn.EmbeddingBag, int(2 ^ 40), 4))
    assert.matches("^ltensor%.nn%.BatchNorm1d: num_features=1099511627776 make 4398046511104 parameters in 4 tensors",
      err_of(nn.BatchNorm1d, int(2 ^ 40)))
    assert.matches("^ltensor%.nn%.LayerNorm: normalized_shape={1048576, 1048576} make 2199023255552 parameters",
      err_of(nn.LayerNorm, { int(2 ^ 20), int(2 ^ 20) }))
    assert.matches("^ltensor%.nn%.GroupNorm: num_channels=1099511627776 make 2199023255552 parameters",
      err_of(nn.GroupNorm, 1, int(2 ^ 40)))
    assert.matches("^ltensor%.nn%.PReLU: num_parameters=1099511627776 make 1099511627776 parameters in 1 tensor ",
      err_of(nn.PReLU, int(2 ^ 40)))
  end)

  it("attention and the transformer layers", function()
    assert.equal("ltensor.nn.MultiheadAttention: embed_dim=1099511627776, kdim=1099511627776, vdim=1099511627776 make "
      .. "4.84e+24 parameters, more than a tensor can hold (2^57 elements)", err_of(nn.MultiheadAttention, int(2 ^ 40), 1))
    assert.matches("^ltensor%.nn%.TransformerEncoderLayer: d_model=16, dim_feedforward=1099511627776 make "
      .. "36283883717776 parameters", err_of(nn.TransformerEncoderLayer, 16, 1, { dim_feedforward = int(2 ^ 40) }))
    local layer = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
    assert.matches("^ltensor%.nn%.TransformerEncoder: num_layers=4294967296 make %d+ parameters in %d+ tensors",
      err_of(nn.TransformerEncoder, layer, int(2 ^ 32)))
  end)

  it("a memory limit is the budget when one is set", function()
    local prev = T.set_memory_limit(2 ^ 20)
    local ok, e = pcall(nn.Linear, 1000, 1000)
    T.set_memory_limit(prev)
    assert.is_false(ok)
    assert.equal("ltensor.nn.Linear: in_features=1000, out_features=1000 make 1001000 parameters in 2 tensors (3.8 MiB), "
      .. "more than the memory limit set by T.set_memory_limit (1.0 MiB)", e)
    -- float64 parameters count 8 bytes each
    prev = T.set_memory_limit(2 ^ 20)
    local ok64, e64 = pcall(nn.Linear, 1000, 1000, { dtype = T.float64 })
    T.set_memory_limit(prev)
    assert.is_false(ok64)
    assert.matches("%(7%.6 MiB%)", e64)
  end)

  it("sizes that fit still build", function()
    assert.equal(4 * 8, #nn.RNN(4, 4, 8):parameters())
    assert.equal(2, #nn.Linear(3, 2):parameters())
    assert.equal(0, nn.Linear(0, 0).weight:numel())
    assert.equal(0, #nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 }), 0):parameters())
  end)

  it("many layers build in time linear in their number", function()
    -- registering a parameter scanned the module's list of names: 16384
    -- layers (65536 parameters) took 37 s
    local t0 = T._clock()
    local m = nn.RNN(2, 2, 8192)
    assert.equal(4 * 8192, #m:parameters())
    assert(T._clock() - t0 < 3, "took " .. (T._clock() - t0) .. " s")
    -- the names stay in registration order, once each
    local names = {}
    for _, kv in ipairs(m:named_parameters()) do names[#names + 1] = kv[1] end
    assert.same({ "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l1" }, { table.unpack(names, 1, 5) })
    assert.equal("bias_hh_l8191", names[#names])
  end)
end)
