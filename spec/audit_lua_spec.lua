-- Findings of an audit (issue 22) on the Lua side, each checked against
-- PyTorch 1.13: calls that never returned, errors that named the wrong
-- function or argument (or a Lua runtime error), and results that differed.
local T = require "ltensor"

local function isnan(v) return v ~= v end
local function all_nan(t)
  for _, v in ipairs(t:flatten():totable()) do if not isnan(v) then return false end end
  return true
end
-- the message of a refused call, which must carry no "file:line:" prefix
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

describe("linalg.matrix_exp of a matrix with a huge or non-finite norm", function()
  it("returns (nan) for a float64 norm above DBL_MAX / 2 instead of looping", function()
    local r = T.linalg.matrix_exp(T.tensor({ { 1e308, 0 }, { 0, 1 } }, { dtype = T.float64 }))
    assert.is_true(all_nan(r))   -- torch.linalg.matrix_exp: all nan
    -- exp of all-equal entries is +inf everywhere; PyTorch's own scaling
    -- overflows into nan from ~1e20 on (inf up to 1e10): no finite value either way
    r = T.linalg.matrix_exp(T.tensor({ { 1e300, 1e300 }, { 1e300, 1e300 } }, { dtype = T.float64 }))
    for _, v in ipairs(r:flatten():totable()) do assert.is_true(v ~= v or v == math.huge) end
  end)
  it("gives nan, not the identity, for a float32 norm above 2^127", function()
    for _, v in ipairs({ 2e38, 3e38, 1e38 }) do
      local r = T.linalg.matrix_exp(T.tensor({ { v, 0 }, { 0, 1 } }, { dtype = T.float32 }))
      assert.is_true(all_nan(r), tostring(v))
    end
  end)
  it("propagates inf and nan inputs as nan", function()
    for _, dt in ipairs({ T.float32, T.float64 }) do
      assert.is_true(all_nan(T.linalg.matrix_exp(T.tensor({ { 1 / 0, 0 }, { 0, 1 } }, { dtype = dt }))))
      assert.is_true(all_nan(T.linalg.matrix_exp(T.tensor({ { 0 / 0, 0 }, { 0, 1 } }, { dtype = dt }))))
    end
  end)
  it("still matches PyTorch where the result overflows only partly", function()
    local r = T.linalg.matrix_exp(T.tensor({ { 1000, 0 }, { 0, 1 } }, { dtype = T.float64 })):totable()
    assert.are.equal(math.huge, r[1][1])
    assert.are.equal(0, r[1][2])
    assert.is_true(math.abs(r[2][2] - 2.718281828458697) < 1e-12)
    r = T.linalg.matrix_exp(T.tensor({ { 100, 0 }, { 0, 1 } }, { dtype = T.float64 })):totable()
    assert.is_true(math.abs(r[1][1] / 2.6881171418161316e+43 - 1) < 1e-12)
  end)
end)

describe("split and chunk into more pieces than a table holds", function()
  local big = T.zeros(0, math.floor(2 ^ 53))
  it("split refuses, as unbind does", function()
    assert.are.equal("ltensor.split: too many pieces (9007199254740992) to return in a table",
      err_of(T.split, big, 1, -1))
    assert.are.equal("ltensor.unbind: too many slices (9007199254740992) to return in a table",
      err_of(T.unbind, big, -1))
  end)
  it("chunk refuses", function()
    assert.are.equal("ltensor.chunk: too many pieces (9007199254740992) to return in a table",
      err_of(T.chunk, big, math.floor(2 ^ 53), -1))
    assert.are.equal(3, #T.chunk(big, 3, -1))
  end)
end)

describe("errors outside the contract become ltensor.<fn>: errors", function()
  it("pow takes a boolean exponent as PyTorch (1 or 0), gradient included", function()
    local x = T.tensor({ 1.0, 2.0 }, { dtype = T.float32, requires_grad = true })
    x:pow(true):sum():backward()
    assert.are.same({ 1, 1 }, x.grad:totable())
    x = T.tensor({ 1.0, 2.0 }, { dtype = T.float32, requires_grad = true })
    x:pow(false):sum():backward()
    assert.are.same({ 0, 0 }, x.grad:totable())
  end)
  it("pow(0, e) differentiates in e as PyTorch: 0 where e >= 0, -inf below", function()
    -- torch.pow(0., x).sum().backward() for x = [1, 2, 0, -1]: [0, 0, 0, -inf]
    local e = T.tensor({ 1.0, 2.0, 0.0, -1.0 }, { dtype = T.float32, requires_grad = true })
    T.pow(0, e):sum():backward()
    assert.are.same({ 0, 0, 0, -math.huge }, e.grad:totable())
    e = T.tensor({ 1.0, 2.0, 0.0, -1.0 }, { dtype = T.float32, requires_grad = true })
    T.pow(false, e):sum():backward()
    assert.are.same({ 0, 0, 0, -math.huge }, e.grad:totable())
  end)
  it("MultiheadAttention called with no input names the argument", function()
    local m = T.nn.MultiheadAttention(3, 1)
    assert.are.equal("ltensor.nn.MultiheadAttention: bad argument #1 'query' (Tensor expected, got nil)", err_of(m))
    assert.are.equal("ltensor.nn.MultiheadAttention: bad argument #3 'value' (Tensor expected, got nil)",
      err_of(m, T.zeros(2, 3), T.zeros(2, 3)))
  end)
  it("a distribution's sample refuses a bad sample shape", function()
    local d = T.distributions.Categorical({ probs = T.ones(3) })
    assert.are.equal("ltensor.distributions.Categorical.sample: sample_shape must be a table of non-negative integers (entry 1 is table)",
      err_of(d.sample, d, { { 2 } }))
    assert.are.equal("ltensor.distributions.Categorical.sample: sample_shape must be a table of non-negative integers (entry 2 is -1)",
      err_of(d.sample, d, { 2, -1 }))
    assert.are.same({ 2, 3 }, d:sample({ 2, 3 }).shape)
    local n = T.distributions.Normal(0, 1)
    assert.are.equal("ltensor.distributions.Normal.sample: sample_shape must be a table of non-negative integers (entry 1 is 1.5)",
      err_of(n.sample, n, { 1.5 }))
  end)
  it("topk names itself and the argument", function()
    local x = T.ones(3, 3)
    assert.are.equal("ltensor.topk: bad argument #4 (largest: boolean expected, got number)", err_of(T.topk, x, 2, 1, 3))
    assert.are.equal("ltensor.topk: bad argument #5 (sorted: boolean expected, got number)", err_of(T.topk, x, 2, 1, true, 3))
    assert.are.equal("ltensor.topk: bad argument #3 (dim (integer) or options table expected, got string)",
      err_of(T.topk, x, 2, "a"))
    assert.are.equal("ltensor.sort: bad argument #3 (descending: boolean expected, got number)", err_of(T.sort, x, 1, 3))
  end)
  it("errors raised by internal entry points carry the public name and no library position", function()
    local csv = os.tmpname()
    local f = assert(io.open(csv, "w")) f:write("a,b\n1,2\n3,x\n") f:close()
    assert.are.equal("ltensor.read_csv: line 3, column 2: 'x' is not a number", err_of(T.read_csv, csv))
    f = assert(io.open(csv, "w")) f:write(string.rep("1,2\n", 2000)) f:close()
    local prev = T.set_memory_limit(nil)
    -- garbage of earlier specs would be collected by the limit's retry and
    -- make room: collect it first (a __gc object lives one extra cycle)
    collectgarbage() collectgarbage()
    T.set_memory_limit(T.memory_stats().live + 1000)
    local ok, e = pcall(T.read_csv, csv)
    T.set_memory_limit(prev)
    assert.is_false(ok, "expected an error")
    assert.matches("^ltensor%.read_csv: not enough memory", e)
    local png = os.tmpname()
    f = assert(io.open(png, "wb")) f:write("\137PNG\r\n\26\n" .. string.rep("x", 22)) f:close()
    assert.matches("^ltensor%.load_image: truncated file", err_of(T.load_image, png))
    os.remove(csv) os.remove(png)
    local m = T.nn.Linear(2, 2)
    assert.are.equal("ltensor.nn.Module.load_state_dict: unknown option 'foo' (options: strict)",
      err_of(m.load_state_dict, m, m:state_dict(), { foo = 1 }))
  end)
  it("out of memory in svd, conv2d and an LSTM names the public function", function()
    local x, xx, w = T.randn(64, 64), T.randn(1, 1, 50, 50), T.randn(1, 1, 3, 3)
    local lstm, inp = T.nn.LSTM(3, 40), T.randn(50, 1, 3)
    local prev = T.set_memory_limit(nil)
    collectgarbage() collectgarbage()
    T.set_memory_limit(T.memory_stats().live + 1000)
    local ok1, e1 = pcall(T.linalg.svd, x)
    local ok2, e2 = pcall(T.nn.functional.conv2d, xx, w)
    local ok3, e3 = pcall(lstm, inp)
    T.set_memory_limit(prev)   -- restored before any assertion can fail
    assert.is_false(ok1 or ok2 or ok3, "expected three errors")
    e1, e2, e3 = tostring(e1), tostring(e2), tostring(e3)
    assert.matches("^ltensor%.linalg%.svd: not enough memory", e1)
    assert.matches("^ltensor%.conv2d: not enough memory", e2)
    assert.matches("^ltensor%.lstm: not enough memory", e3)
  end)
  it("an LSTMCell's hidden state with a batch dimension the input lacks is a batch size error", function()
    local c = T.nn.LSTMCell(3, 2)
    assert.are.equal("ltensor.nn.LSTMCell: Input batch size 1 (unbatched 1-D input) doesn't match hidden0 batch size 2 (2-D)",
      err_of(c, T.zeros(3), { T.zeros(2, 2), T.zeros(2, 2) }))
    assert.are.equal("ltensor.nn.LSTMCell: hidden0 must be 2-D as the input is batched (2-D), but got a 3-D tensor",
      err_of(c, T.zeros(4, 3), { T.zeros(4, 2, 2), T.zeros(4, 2) }))
    assert.are.equal("ltensor.nn.LSTMCell: Input batch size 4 doesn't match hidden1 batch size 3",
      err_of(c, T.zeros(4, 3), { T.zeros(4, 2), T.zeros(3, 2) }))
  end)
end)

describe("masked_scatter (PyTorch 1.13's values)", function()
  local m = T.tensor({ { true, false, true }, { false, true, true } })
  it("places source's leading elements where the mask is true, broadcasting", function()
    assert.are.same({ { 1, 0, 2 }, { 0, 3, 4 } }, T.zeros(2, 3):masked_scatter(m, T.arange(1, 7):float()):totable())
    assert.are.same({ { 1, 0, 2 }, { 0, 3, 4 } }, T.masked_scatter(T.zeros(3), m, T.arange(1, 7):float()):totable())
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } },
      T.zeros(2, 3):masked_scatter(T.tensor(true), T.arange(1, 7):float()):totable())
    assert.are.same({ 0, 0 }, T.zeros(2):masked_scatter(T.zeros(2):bool(), T.zeros(0)):totable())
    assert.are.same({ 0 }, T.zeros(0):masked_scatter(T.zeros(0):bool(), T.zeros(0)).shape)
    -- non-contiguous self
    assert.are.same({ { 1, 0, 2 }, { 0, 3, 4 } }, T.zeros(3, 2):t():masked_scatter(m, T.arange(1, 7):float()):totable())
  end)
  it("works in place", function()
    local z = T.zeros(2, 3)
    assert.are.equal(z, z:masked_scatter_(m, T.arange(1, 7):float()))
    assert.are.same({ { 1, 0, 2 }, { 0, 3, 4 } }, z:totable())
    assert.are.equal("ltensor.masked_scatter_: mask of shape [2, 3] cannot be broadcast to the shape [3] of the tensor",
      err_of(function() return T.zeros(3):masked_scatter_(m, T.ones(6)) end))
  end)
  it("differentiates in self and source", function()
    local x = T.zeros(2, 3, { requires_grad = true })
    local s = T.arange(1, 8):float():requires_grad_()
    local y = x:masked_scatter(m, s);
    (y * T.arange(0, 6):float():reshape(2, 3)):sum():backward()
    assert.are.same({ { 0, 1, 0 }, { 3, 0, 0 } }, x.grad:totable())
    assert.are.same({ 0, 2, 4, 5, 0, 0, 0 }, s.grad:totable())
  end)
  it("refuses what PyTorch refuses", function()
    local x, s = T.zeros(2, 3), T.arange(1, 7):float()
    assert.are.equal("ltensor.masked_scatter: masked_scatter: expected self and source to have same dtypes but got Float and Double",
      err_of(T.masked_scatter, x, m, s:double()))
    assert.are.equal("ltensor.masked_scatter: Number of elements of source < number of ones in mask",
      err_of(T.masked_scatter, x, m, T.ones(2)))
    assert.are.equal("ltensor.masked_scatter: masked_scatter only supports boolean masks, but got mask with dtype int32",
      err_of(T.masked_scatter, x, m:int(), s))
  end)
end)

describe("results that differed from PyTorch 1.13", function()
  local fx = dofile("spec/fixtures/audit_lua.lua")
  it("quantile/nanquantile 'nearest' rounds half to even on the input dtype's rank", function()
    assert.are.equal(0, T.quantile(T.tensor({ 0., 1, 2, 3, 4, 5 }, { dtype = T.float32 }), 0.1, { interpolation = "nearest" }):item())
    local bad = {}
    for _, r in ipairs(fx.quantile) do
      local x = T.arange(0, r[2], { dtype = T[r[1]] })
      local xn = T.cat({ x, T.full({ 3 }, 0 / 0, { dtype = T[r[1]] }) })
      local a = T.quantile(x, r[4], { interpolation = r[3] }):item()
      local b = T.nanquantile(xn, r[4], { interpolation = r[3] }):item()
      if a ~= r[5] or b ~= r[6] then bad[#bad + 1] = table.concat({ r[1], r[2], r[3], r[4], a, b }, " ") end
    end
    assert.are.same({}, bad)
  end)
  it("histc bins as PyTorch's kernel, values at and next to every edge", function()
    local bad = {}
    for _, r in ipairs(fx.histc) do
      local h = T.histc(T.tensor(r[5], { dtype = T[r[1]] }), r[2], r[3], r[4]):totable()
      for i = 1, #r[6] do
        if h[i] ~= r[6][i] then bad[#bad + 1] = table.concat({ r[1], r[2], r[3], r[4], i }, " ") break end
      end
    end
    assert.are.same({}, bad)
  end)
  it("F.pad circular with a negative pad crops, then wraps what is left", function()
    local F = T.nn.functional
    local x = T.arange(0, 18):float():reshape(3, 2, 3)
    -- torch.nn.functional.pad(x, (2, -1), mode="circular") and (-1, 2)
    assert.are.same({ { 0, 1, 0, 1 }, { 3, 4, 3, 4 } }, F.pad(x, { 2, -1 }, "circular"):select(1, 1):totable())
    assert.are.same({ { 1, 2, 1, 2 }, { 4, 5, 4, 5 } }, F.pad(x, { -1, 2 }, "circular"):select(1, 1):totable())
    assert.are.same({ { 0, 0 }, { 3, 3 } }, F.pad(x, { 1, -2 }, "circular"):select(1, 1):totable())
    assert.are.same({ { 2, 2 }, { 5, 5 } }, F.pad(x, { -2, 1 }, "circular"):select(1, 1):totable())
    local y = F.pad(T.arange(0, 16):float():reshape(1, 1, 4, 4), { 1, -1, -1, 2 }, "circular")
    assert.are.same({ { 6, 4, 5, 6 }, { 10, 8, 9, 10 }, { 14, 12, 13, 14 }, { 6, 4, 5, 6 }, { 10, 8, 9, 10 } },
      y:squeeze():totable())
    -- PyTorch reads uninitialised memory here: refused
    assert.are.equal("ltensor.nn.functional.pad: invalid padding: Padding value causes wrapping around more than once.",
      err_of(F.pad, x, { 3, -1 }, "circular"))
  end)
  it("max_pool1d with a dilated window longer than the input is empty, as PyTorch's (no indices, no gradient)", function()
    local F = T.nn.functional
    local x = T.arange(0, 4):float():reshape(1, 1, 4)
    assert.are.same({ 1, 1, 0 }, F.max_pool1d(x, 3, { dilation = 2 }).shape)
    assert.are.same({ 1, 0 }, F.max_pool1d(T.zeros(1, 4), 3, { dilation = 2 }).shape)
    assert.are.same({ 1, 1, 0 }, F.max_pool1d(x, 5).shape)
    assert.are.same({ { { 2 } } }, F.max_pool1d(x, 3, { dilation = 2, ceil_mode = true }):totable())
    assert.are.equal("ltensor.nn.functional.max_pool1d: max_pool1d() Invalid computed output size: -7",
      err_of(F.max_pool1d, T.zeros(1, 1, 1), 5, { stride = 1, dilation = 2 }))
    -- with indices or a gradient PyTorch takes the path that refuses; max_pool2d always refuses
    assert.has_error(function() F.max_pool1d(x, 3, { dilation = 2, return_indices = true }) end)
    assert.has_error(function() F.max_pool1d(x:clone():requires_grad_(), 3, { dilation = 2 }) end)
    assert.has_error(function() F.max_pool2d(T.zeros(1, 1, 4, 4), 3, { dilation = 2 }) end)
  end)
  it("boolean options refuse other types", function()
    assert.are.equal("ltensor.nn.Linear: bad option 'bias' (boolean expected, got string)",
      err_of(T.nn.Linear, 3, 4, { bias = "no" }))
    assert.are.equal("ltensor.nn.Linear: bad argument #3 'bias' (boolean expected, got string)",
      err_of(T.nn.Linear, 3, 4, "no"))
    assert.are.equal("ltensor.nn.LSTM: bad option 'batch_first' (boolean expected, got number)",
      err_of(T.nn.LSTM, 3, 4, { batch_first = 1 }))
    assert.are.equal("ltensor.nn.LSTMCell: bad argument #3 'bias' (boolean expected, got number)",
      err_of(T.nn.LSTMCell, 3, 4, 0))
    assert.are.equal("ltensor.nn.functional.max_pool1d: bad option 'ceil_mode' (boolean expected, got number)",
      err_of(T.nn.functional.max_pool1d, T.zeros(1, 1, 4), 2, { ceil_mode = 1 }))
    assert.is_nil(T.nn.Linear(3, 4, { bias = false }).bias)
  end)
  it("every module's and function's flags refuse other types, by the one checker (util.check_flag)", function()
    local nn, F = T.nn, T.nn.functional
    local function refuses(msg, f, ...) assert.are.equal(msg, err_of(f, ...)) end
    refuses("ltensor.nn.Conv2d: bad option 'bias' (boolean expected, got string)", nn.Conv2d, 1, 2, 3, { bias = "no" })
    refuses("ltensor.nn.Conv2d: bad argument #8 'bias' (boolean expected, got string)", nn.Conv2d, 1, 2, 3, 1, 0, 1, 1, "no")
    refuses("ltensor.nn.ConvTranspose1d: bad option 'bias' (boolean expected, got number)", nn.ConvTranspose1d, 1, 2, 3, { bias = 0 })
    refuses("ltensor.nn.BatchNorm2d: bad option 'affine' (boolean expected, got string)", nn.BatchNorm2d, 4, { affine = "no" })
    refuses("ltensor.nn.BatchNorm1d: bad argument #4 'affine' (boolean expected, got string)", nn.BatchNorm1d, 4, 1e-5, 0.1, "no")
    refuses("ltensor.nn.BatchNorm2d: bad option 'track_running_stats' (boolean expected, got number)",
      nn.BatchNorm2d, 4, { track_running_stats = 1 })
    refuses("ltensor.nn.InstanceNorm2d: bad option 'affine' (boolean expected, got string)", nn.InstanceNorm2d, 4, { affine = "no" })
    refuses("ltensor.nn.GroupNorm: bad option 'affine' (boolean expected, got string)", nn.GroupNorm, 2, 4, { affine = "no" })
    refuses("ltensor.nn.LayerNorm: bad argument #3 'elementwise_affine' (boolean expected, got string)", nn.LayerNorm, 4, 1e-5, "no")
    refuses("ltensor.nn.Upsample: bad option 'align_corners' (boolean expected, got string)",
      nn.Upsample, { scale_factor = 2, mode = "bilinear", align_corners = "no" })
    refuses("ltensor.nn.ReLU: bad option 'inplace' (boolean expected, got string)", nn.ReLU, { inplace = "no" })
    refuses("ltensor.nn.ReLU: bad argument #1 'inplace' (boolean expected, got number)", nn.ReLU, 1)
    refuses("ltensor.nn.SiLU: bad option 'inplace' (boolean expected, got number)", nn.SiLU, { inplace = 1 })
    refuses("ltensor.nn.Dropout: bad option 'inplace' (boolean expected, got string)", nn.Dropout, 0.5, { inplace = "no" })
    refuses("ltensor.nn.Dropout: bad argument #2 'inplace' (boolean expected, got number)", nn.Dropout, 0.5, 1)
    refuses("ltensor.nn.LeakyReLU: bad option 'inplace' (boolean expected, got string)", nn.LeakyReLU, 0.1, { inplace = "no" })
    refuses("ltensor.nn.AdaptiveMaxPool2d: bad option 'return_indices' (boolean expected, got string)",
      nn.AdaptiveMaxPool2d, 2, { return_indices = "no" })
    refuses("ltensor.nn.EmbeddingBag: bad option 'include_last_offset' (boolean expected, got number)",
      nn.EmbeddingBag, 4, 2, { include_last_offset = 1 })
    refuses("ltensor.nn.CTCLoss: bad option 'zero_infinity' (boolean expected, got string)", nn.CTCLoss, { zero_infinity = "no" })
    refuses("ltensor.nn.functional.interpolate: bad option 'align_corners' (boolean expected, got string)",
      F.interpolate, T.ones(1, 1, 2, 2), { scale_factor = 2, mode = "bilinear", align_corners = "no" })
    refuses("ltensor.nn.functional.interpolate: bad argument #5 'align_corners' (boolean expected, got string)",
      F.interpolate, T.ones(1, 1, 2, 2), nil, 2, "bilinear", "no")
    refuses("ltensor.nn.functional.relu: bad argument #2 'inplace' (boolean expected, got string)", F.relu, T.ones(2), "no")
    refuses("ltensor.nn.functional.dropout: bad option 'training' (boolean expected, got number)", F.dropout, T.ones(2), { training = 1 })
    refuses("ltensor.nn.functional.max_pool2d: bad argument #6 'ceil_mode' (boolean expected, got string)",
      F.max_pool2d, T.ones(1, 1, 2, 2), 2, nil, 0, 1, "no")
    -- the Module methods and utilities taking a flag
    local m = nn.Linear(2, 2)
    refuses("ltensor.nn.Module.parameters: bad argument #1 'recurse' (boolean expected, got string)", m.parameters, m, "no")
    refuses("ltensor.nn.Module.zero_grad: bad argument #1 'set_to_none' (boolean expected, got number)", m.zero_grad, m, 1)
    refuses("ltensor.nn.Module.state_dict: bad option 'keep_vars' (boolean expected, got string)", m.state_dict, m, { keep_vars = "no" })
    refuses("ltensor.nn.Module.load_state_dict: bad option 'strict' (boolean expected, got string)",
      m.load_state_dict, m, m:state_dict(), { strict = "no" })
    refuses("ltensor.nn.utils.clip_grad_norm_: bad option 'error_if_nonfinite' (boolean expected, got string)",
      nn.utils.clip_grad_norm_, m, 1, { error_if_nonfinite = "no" })
    refuses("ltensor.nn.utils.rnn.pad_sequence: bad option 'batch_first' (boolean expected, got string)",
      nn.utils.rnn.pad_sequence, { T.ones(2) }, { batch_first = "no" })
    refuses("ltensor.nn.utils.rnn.pack_padded_sequence: bad option 'enforce_sorted' (boolean expected, got number)",
      nn.utils.rnn.pack_padded_sequence, T.ones(2, 1), { 2 }, { enforce_sorted = 1 })
    -- booleans pass, and the in-place flags now act as PyTorch's
    assert.is_nil(nn.Conv2d(1, 2, 3, { bias = false }).bias)
    assert.is_false(nn.BatchNorm2d(4, { affine = false, track_running_stats = false }).affine)
    local x = T.tensor({ -1.0, 2.0 })
    local r = nn.ReLU(true)
    assert.are.equal("ReLU(inplace=True)", tostring(r))
    r(x)
    assert.are.same({ 0, 2 }, x:totable())
    assert.are.equal("ReLU()", tostring(nn.ReLU()))
    assert.are.equal("Dropout(p=0.5, inplace=True)", tostring(nn.Dropout(0.5, true)))
    assert.are.equal("Dropout(p=0.25, inplace=False)", tostring(nn.Dropout({ p = 0.25 })))
  end)
end)

describe("distributions' errors name the method called", function()
  local D = T.distributions
  it("rsample, sample, sample_n, log_prob, cdf, expand each in their own name", function()
    local n = D.Normal(0, 1)
    assert.are.equal("ltensor.distributions.Normal.rsample: sample_shape must be a table of non-negative integers (entry 1 is -1)",
      err_of(n.rsample, n, { -1 }))
    assert.are.equal("ltensor.distributions.Normal.sample: sample_shape must be a table of non-negative integers (entry 1 is -1)",
      err_of(n.sample, n, { -1 }))
    assert.are.equal("ltensor.distributions.Normal.sample_n: sample_shape must be a table of non-negative integers (entry 1 is string)",
      err_of(n.sample_n, n, "x"))
    assert.are.equal("ltensor.distributions.Normal.cdf: The value argument to log_prob must be a Tensor", err_of(n.cdf, n, 1))
    -- a distribution whose sample calls rsample: the outer call names the error
    local g = D.Gamma(1, 1)
    assert.are.equal("ltensor.distributions.Gamma.sample: sample_shape must be a table of sizes", err_of(g.sample, g, "x"))
    assert.are.equal("ltensor.distributions.Gamma.rsample: sample_shape must be a table of sizes", err_of(g.rsample, g, "x"))
    local mvn = D.MultivariateNormal(T.zeros(2), { covariance_matrix = T.eye(2) })
    assert.are.equal("ltensor.distributions.MultivariateNormal.rsample: sample_shape must be a table of non-negative integers (entry 1 is 1.5)",
      err_of(mvn.rsample, mvn, { 1.5 }))
    -- the tensor ops inside raise in the method's name too
    assert.matches("^ltensor%.distributions%.Normal%.expand: ", err_of(D.Normal(T.zeros(2), 1).expand, D.Normal(T.zeros(2), 1), { 3 }))
    -- a method called without its instance
    assert.are.equal("ltensor.distributions.Normal.log_prob: bad self (ltensor.distributions.Distribution expected, got " ..
      "ltensor.Tensor); a method is called with ':', as d:log_prob(...)", err_of(n.log_prob, T.zeros(1)))
  end)
  it("expand checks its batch_shape (a raw Lua error before)", function()
    for _, d in ipairs({ D.Normal(0, 1), D.Bernoulli(0.5), D.Categorical({ probs = T.ones(3) }),
                         D.MultivariateNormal(T.zeros(2), { covariance_matrix = T.eye(2) }) }) do
      local name = d._name
      assert.are.equal("ltensor.distributions." .. name .. ".expand: bad argument #1 'batch_shape' (table of sizes expected, got nil)",
        err_of(d.expand, d))
      assert.are.equal("ltensor.distributions." .. name .. ".expand: bad argument #1 'batch_shape' (table of sizes expected, got boolean)",
        err_of(d.expand, d, true))
      assert.are.equal("ltensor.distributions." .. name .. ".expand: batch_shape must be a table of integers (entry 1 is function)",
        err_of(d.expand, d, { print }))
      assert.are.same({ 4 }, d:expand({ 4 }).batch_shape)
    end
    assert.are.same({ 3, 2 }, D.Normal(T.zeros(2), 1):expand({ 3, 2 }).batch_shape)
  end)
  it("Categorical:sample refuses a nested shape", function()
    local c = D.Categorical({ probs = T.ones(3) })
    assert.are.equal("ltensor.distributions.Categorical.sample: sample_shape must be a table of non-negative integers (entry 1 is table)",
      err_of(c.sample, c, { { 2 } }))
    assert.are.same({ 2, 0 }, c:sample({ 2, 0 }).shape)
    assert.are.same({ 5 }, c:sample({ 5 }).shape)
  end)
end)
