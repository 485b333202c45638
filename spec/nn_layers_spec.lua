-- nn_layers: activation, dropout, normalisation, reshaping and loss modules
-- against PyTorch 1.13 (spec/fixtures/functional.lua "modules": outputs over
-- several training steps and the final state_dict), their parameter and
-- buffer names, train/eval behaviour and constructor errors.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local nn, F = T.nn, T.nn.functional
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/functional.lua")

local function build(v)
  if type(v) ~= "table" then return v end
  if v.kind == "nil" then return nil end
  if v.kind == "tensor" then return T.tensor(v.data, { dtype = T[v.dtype] }):reshape(v.shape) end
  local out = {}
  for k, x in pairs(v) do out[k] = build(x) end
  return out
end

local function close(got, want, tol, what)
  local g = got:reshape({ got:numel() }):totable()
  local w = want.kind and want.data or want
  if want.kind then
    assert.same(want.shape, got.shape, what .. ": shape")
    assert.equal(want.dtype, got.dtype.name, what .. ": dtype")
  end
  assert.equal(#w, #g, what)
  for i = 1, #w do
    assert(math.abs(g[i] - w[i]) <= tol * (1 + math.abs(w[i])),
      string.format("%s: element %d: got %.12g want %.12g", what, i, g[i], w[i]))
  end
end

describe("nn layers against PyTorch 1.13", function()
  for _, m in ipairs(FX.modules) do
    it(m.name .. ": outputs over the steps and the state_dict", function()
      local args = build(m.args)
      -- float64 fixtures: parameters and buffers made in float64
      local prev = T.get_default_dtype()
      T.set_default_dtype(T.float64)
      local ok, mod = pcall(nn[m.ctor], table.unpack(args, 1, #m.args))
      T.set_default_dtype(prev)
      assert(ok, mod)
      mod:train(m.train)
      for s, ins in ipairs(m.inputs) do
        local xs = build(ins)
        local y = mod(table.unpack(xs, 1, #ins))
        close(y, m.outs[s], 1e-9, m.name .. " step " .. s)
      end
      local sd = mod:state_dict()
      local keys = {}
      for k in pairs(sd) do keys[#keys + 1] = k end
      table.sort(keys)
      local want = {}
      for i, k in ipairs(m.keys) do want[i] = k end
      table.sort(want)
      assert.same(want, keys)
      for k, v in pairs(m.state) do close(sd[k], v, 1e-9, m.name .. " " .. k) end
    end)
  end
end)

describe("nn layers", function()
  it("activation modules call their functional forms", function()
    local x = T.randn({ 3, 4 })
    local pairs_ = {
      { nn.LeakyReLU(0.2), F.leaky_relu(x, 0.2) },
      { nn.ELU({ alpha = 0.5 }), F.elu(x, 0.5) },
      { nn.SELU(), F.selu(x) }, { nn.CELU(2.0), F.celu(x, 2.0) },
      { nn.Softplus(2, 5), F.softplus(x, 2, 5) }, { nn.Softsign(), F.softsign(x) },
      { nn.Hardtanh(-0.5, 0.5), F.hardtanh(x, -0.5, 0.5) }, { nn.ReLU6(), F.relu6(x) },
      { nn.Hardsigmoid(), F.hardsigmoid(x) }, { nn.Hardswish(), F.hardswish(x) },
      { nn.Mish(), F.mish(x) }, { nn.GLU(), F.glu(x) }, { nn.LogSigmoid(), F.logsigmoid(x) },
      { nn.Softmin(2), F.softmin(x, 2) }, { nn.Softmax(1), F.softmax(x, 1) },
      { nn.LogSoftmax(2), F.log_softmax(x, 2) }, { nn.Tanhshrink(), F.tanhshrink(x) },
      { nn.Threshold(0.1, 20), F.threshold(x, 0.1, 20) }, { nn.GELU("tanh"), F.gelu(x, "tanh") },
      { nn.SiLU(), F.silu(x) }, { nn.Identity(), x }, { nn.Hardshrink(), F.hardshrink(x) },
      { nn.Softshrink(0.2), F.softshrink(x, 0.2) },
    }
    for i, p in ipairs(pairs_) do
      assert.is_true(T.allclose(p[1](x), p[2]), "module " .. i .. " " .. tostring(p[1]))
    end
  end)
  it("PReLU has a learnable weight of num_parameters, init 0.25", function()
    local p = nn.PReLU(3, { init = 0.1 })
    assert.same({ 3 }, p.weight.shape)
    assert.is_true(p.weight.requires_grad)
    assert.same({ "weight" }, { p:named_parameters()[1][1] })
    p(T.randn({ 2, 3 })):sum():backward()
    assert.same({ 3 }, p.weight.grad.shape)
    assert.equal(0.25, nn.PReLU().weight:item())
  end)
  it("BatchNorm: train uses batch statistics and updates buffers; eval uses them", function()
    host.needs_integers("writes floats as whole-valued literals (1.0, 2.), weak ints there")
    T.manual_seed(2)
    local bn = nn.BatchNorm1d(2)
    local names = {}
    for _, np in ipairs(bn:named_parameters()) do names[#names + 1] = np[1] end
    for _, nb in ipairs(bn:named_buffers()) do names[#names + 1] = nb[1] end
    assert.same({ "weight", "bias", "running_mean", "running_var", "num_batches_tracked" }, names)
    assert.equal(T.int64, bn.num_batches_tracked.dtype)
    local x = T.tensor({ { 1.0, 10.0 }, { 3.0, 30.0 } })
    local y = bn(x)
    assert.is_true(T.allclose(y, T.tensor({ { -1.0, -1.0 }, { 1.0, 1.0 } }), 1e-3, 1e-3))
    assert.is_true(T.allclose(bn.running_mean, T.tensor({ 0.2, 2.0 })))
    assert.is_true(T.allclose(bn.running_var, T.tensor({ 0.9 + 0.1 * 2, 0.9 + 0.1 * 200 })))
    assert.equal(1, bn.num_batches_tracked:item())
    bn:eval()
    local ye = bn(x)
    assert.is_true(T.allclose(ye, (x - bn.running_mean) / T.sqrt(bn.running_var + 1e-5)))
    assert.equal(1, bn.num_batches_tracked:item())
    bn:reset_running_stats()
    assert.equal(0, bn.num_batches_tracked:item())
    -- no running stats: batch statistics in eval too
    local nt = nn.BatchNorm1d(2, { track_running_stats = false })
    nt:eval()
    assert.is_true(T.allclose(nt(x), y, 1e-6, 1e-6))
    assert.is_nil(nt.running_mean)
    assert.equal("BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)", tostring(bn))
    assert.equal("BatchNorm2d(3, eps=1e-05, momentum=None, affine=True, track_running_stats=True)",
      tostring(nn.BatchNorm2d(3, { momentum = false })))
  end)
  it("BatchNorm gradients flow to weight and bias through the fused kernel", function()
    local bn = nn.BatchNorm2d(3)
    local x = T.randn({ 4, 3, 2, 2 })
    x.requires_grad = true
    bn(x):pow(2):sum():backward()
    assert.same({ 3 }, bn.weight.grad.shape)
    assert.same({ 3 }, bn.bias.grad.shape)
    assert.same({ 4, 3, 2, 2 }, x.grad.shape)
  end)
  it("GroupNorm, LayerNorm, RMSNorm, InstanceNorm parameters", function()
    local g = nn.GroupNorm(2, 4)
    assert.same({ 4 }, g.weight.shape)
    assert.equal("GroupNorm(2, 4, eps=1e-05, affine=True)", tostring(g))
    local r = nn.RMSNorm({ 2, 3 })
    assert.same({ 2, 3 }, r.weight.shape)
    assert.is_nil(r.bias)
    local x = T.randn({ 5, 2, 3 })
    assert.is_true(T.allclose(r(x), F.rms_norm(x, { 2, 3 }, r.weight)))
    local inn = nn.InstanceNorm2d(3)
    assert.equal(0, #inn:parameters())
    assert.equal(0, #inn:named_buffers())
    assert.same({ 3, 4, 4 }, inn(T.randn({ 3, 4, 4 })).shape)   -- unbatched
    local ln = nn.LayerNorm(3)
    assert.same({ 3 }, ln.weight.shape)
  end)
  it("Flatten and Unflatten (1-based dims)", function()
    local x = T.randn({ 2, 3, 4 })
    assert.same({ 2, 12 }, nn.Flatten()(x).shape)
    assert.same({ 6, 4 }, nn.Flatten(1, 2)(x).shape)
    assert.same({ 2, 3, 2, 2 }, nn.Unflatten(3, { 2, 2 })(x).shape)
    assert.same({ 2, 3, 2, 2 }, nn.Unflatten(-1, { 2, -1 })(x).shape)
    H.raises("ltensor.nn.Unflatten: unflatten: Provided sizes {3, 3} don't multiply up to the size of dim 3 (4)",
      nn.Unflatten(3, { 3, 3 }), x)
  end)
  it("Dropout2d and AlphaDropout follow train/eval", function()
    local d = nn.Dropout2d(0.5)
    local x = T.ones({ 2, 8, 3, 3 })
    d:eval()
    assert.is_true(T.equal(d(x), x))
    d:train()
    local y = d(x)
    assert.is_true(T.equal(T.amin(y:reshape({ 16, 9 }), 2), T.amax(y:reshape({ 16, 9 }), 2)))
    local a = nn.AlphaDropout(0.2)
    a:eval()
    assert.is_true(T.equal(a(x), x))
    assert.equal("Dropout2d(p=0.5, inplace=False)", tostring(d))
  end)
  it("loss modules keep weight buffers in the state_dict and read them at each call", function()
    local w = T.tensor({ 1.0, 2.0, 3.0 })
    local ce = nn.CrossEntropyLoss({ weight = w, reduction = "sum" })
    assert.same({ "weight" }, { ce:named_buffers()[1][1] })
    local x, t = T.randn({ 4, 3 }), T.tensor({ 1, 2, 3, 1 })
    assert.is_true(T.allclose(ce(x, t), F.cross_entropy(x, t, { weight = w, reduction = "sum" })))
    ce:load_state_dict({ weight = T.ones(3) })
    assert.is_true(T.allclose(ce(x, t), F.cross_entropy(x, t, { reduction = "sum" })))
    ce.reduction = "mean"
    assert.is_true(T.allclose(ce(x, t), F.cross_entropy(x, t)))
    assert.equal("CrossEntropyLoss()", tostring(ce))
    assert.equal("Softplus(beta=1, threshold=20)", tostring(nn.Softplus()))
    local bce = nn.BCEWithLogitsLoss({ pos_weight = T.ones(3) * 2 })
    assert.is_not_nil(bce:state_dict().pos_weight)
    assert.equal(0, #nn.MSELoss():named_buffers())
    -- every loss module exists and reduces like its function
    local a, b = T.randn({ 4, 3 }), T.randn({ 4, 3 })
    assert.is_true(T.allclose(nn.HuberLoss({ delta = 0.5 })(a, b), F.huber_loss(a, b, { delta = 0.5 })))
    assert.is_true(T.allclose(nn.SmoothL1Loss({ beta = 0.5 })(a, b), F.smooth_l1_loss(a, b, { beta = 0.5 })))
    assert.is_true(T.allclose(nn.L1Loss("sum")(a, b), F.l1_loss(a, b, "sum")))
    local lp, p = F.log_softmax(a, 2), F.softmax(b, 2)
    assert.is_true(T.allclose(nn.KLDivLoss({ reduction = "batchmean" })(lp, p), F.kl_div(lp, p, { reduction = "batchmean" })))
    local y = T.tensor({ 1.0, -1.0, 1.0, -1.0 })
    assert.is_true(T.allclose(nn.CosineEmbeddingLoss(0.1)(a, b, y), F.cosine_embedding_loss(a, b, y, { margin = 0.1 })))
    assert.is_true(T.allclose(nn.MarginRankingLoss(0.1)(a[1], b[1], T.ones(3)), F.margin_ranking_loss(a[1], b[1], T.ones(3), { margin = 0.1 })))
    assert.is_true(T.allclose(nn.SoftMarginLoss()(a, y:unsqueeze(2):expand({ 4, 3 })), F.soft_margin_loss(a, y:unsqueeze(2):expand({ 4, 3 }))))
    local v = T.rand({ 4, 3 }) + 0.1
    assert.is_true(T.allclose(nn.GaussianNLLLoss()(a, b, v), F.gaussian_nll_loss(a, b, v)))
    assert.is_true(T.allclose(nn.PoissonNLLLoss()(a, v), F.poisson_nll_loss(a, v)))
    local pr = T.rand({ 4, 3 })
    assert.is_true(T.allclose(nn.BCELoss()(pr, pr), F.binary_cross_entropy(pr, pr)))
    assert.is_true(T.allclose(nn.NLLLoss()(lp, T.tensor({ 1, 2, 3, 1 })), F.nll_loss(lp, T.tensor({ 1, 2, 3, 1 }))))
    assert.is_true(T.allclose(nn.HingeEmbeddingLoss()(a, y:unsqueeze(2):expand({ 4, 3 })), F.hinge_embedding_loss(a, y:unsqueeze(2):expand({ 4, 3 }))))
    assert.is_not_nil(nn.MultiLabelSoftMarginLoss)
    local clp = F.log_softmax(T.randn({ 5, 2, 4 }), 3)
    local ct = T.tensor({ { 2, 3 }, { 4, 4 } })
    assert.is_true(T.allclose(nn.CTCLoss({ reduction = "sum" })(clp, ct, { 5, 5 }, { 2, 2 }),
      F.ctc_loss(clp, ct, { 5, 5 }, { 2, 2 }, { reduction = "sum" })))
  end)
  it("constructor errors name the class", function()
    H.raises("ltensor.nn.LeakyReLU: unknown option 'negtive_slope' (did you mean 'negative_slope'?)", nn.LeakyReLU,
      { negtive_slope = 0.1 })
    H.raises("ltensor.nn.GroupNorm: num_channels must be divisible by num_groups", nn.GroupNorm, 3, 4)
    H.raises("ltensor.nn.BatchNorm2d: expected 4D input (got 2D input)", nn.BatchNorm2d(3), T.randn({ 2, 3 }))
    H.raises("ltensor.nn.BatchNorm1d: expected 2D or 3D input (got 4D input)", nn.BatchNorm1d(3), T.randn({ 2, 3, 1, 1 }))
    H.raises("ltensor.nn.BatchNorm1d: bad argument #1 'num_features' (non-negative integer expected, got -1)",
      nn.BatchNorm1d, -1)
    H.raises("ltensor.nn.CrossEntropyLoss: avg is not a valid value for reduction", nn.CrossEntropyLoss,
      { reduction = "avg" })
    H.raises("ltensor.nn.Dropout2d: dropout probability has to be between 0 and 1, but got 2", nn.Dropout2d, 2)
    H.raises("ltensor.nn.functional.batch_norm: running_mean should contain 3 elements not 4",
      nn.BatchNorm1d(4), T.randn({ 2, 3 }))
  end)
end)
