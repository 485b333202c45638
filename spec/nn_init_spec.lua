-- T.nn.init and T.nn.utils against PyTorch 1.13 (spec/fixtures/nnmod.lua):
-- gains, fans, deterministic initialisers exactly, random ones by their
-- bounds and statistics; gradient clipping values.
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local nn = T.nn
local init = nn.init
local H = dofile("spec/helpers.lua")
local FX = dofile("spec/fixtures/nnmod.lua")

local function tens(f)
  return T.tensor(f.data, { dtype = T[f.dtype] }):reshape(f.shape)
end
local function close(a, b, tol)
  assert(math.abs(a - b) <= (tol or 1e-12) * (1 + math.abs(b)), ("got %.17g want %.17g"):format(a, b))
end
local function std_of(t) return T.std(t):item() end

describe("nn.init", function()
  it("calculate_gain as PyTorch", function()
    local g = FX.init.gains
    close(init.calculate_gain("linear"), g.linear)
    close(init.calculate_gain("conv2d"), g.conv2d)
    close(init.calculate_gain("sigmoid"), g.sigmoid)
    close(init.calculate_gain("tanh"), g.tanh)
    close(init.calculate_gain("relu"), g.relu)
    close(init.calculate_gain("leaky_relu"), g.leaky_relu)
    close(init.calculate_gain("leaky_relu", 0.2), g["leaky_relu_0.2"])
    close(init.calculate_gain("selu"), g.selu)
    H.raises("ltensor.nn.init.calculate_gain: Unsupported nonlinearity gelu", function() init.calculate_gain("gelu") end)
    H.raises("negative_slope x not a valid number", function() init.calculate_gain("leaky_relu", "x") end)
  end)

  it("_calculate_fan_in_and_fan_out as PyTorch", function()
    for _, f in pairs(FX.init.fans) do
      local fi, fo = init._calculate_fan_in_and_fan_out(T.empty(f[1]))
      assert.equal(f[2], fi)
      assert.equal(f[3], fo)
    end
    H.raises("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
      function() init._calculate_fan_in_and_fan_out(T.empty({ 3 })) end)
  end)

  it("eye_, dirac_, constant_, zeros_, ones_ give PyTorch's values", function()
    assert.is_true(T.equal(init.eye_(T.empty({ 3, 5 }, { dtype = T.float64 })), tens(FX.init.eye)))
    assert.is_true(T.equal(init.dirac_(T.empty({ 4, 2, 3, 3 }, { dtype = T.float64 })), tens(FX.init.dirac)))
    assert.is_true(T.equal(init.dirac_(T.empty({ 4, 2, 3 }, { dtype = T.float64 }), 2), tens(FX.init.dirac_groups2)))
    assert.is_true(T.equal(init.constant_(T.empty({ 2, 2 }), 0.5), T.full({ 2, 2 }, 0.5)))
    assert.is_true(T.equal(init.zeros_(T.ones({ 3 })), T.zeros({ 3 })))
    assert.is_true(T.equal(init.ones_(T.zeros({ 3 })), T.ones({ 3 })))
    H.raises("Only tensors with 2 dimensions are supported", function() init.eye_(T.empty({ 3 })) end)
    H.raises("Only tensors with 3, 4, or 5 dimensions are supported", function() init.dirac_(T.empty({ 3, 3 })) end)
  end)

  it("fills parameters in place without recording autograd", function()
    local w = nn.Parameter(T.empty({ 4, 5 }))
    local r = init.xavier_uniform_(w)
    assert.is_true(rawequal(w, r))
    assert.is_true(w.is_leaf and w.requires_grad)
    assert.is_nil(w.grad_fn)
  end)

  it("uniform_ and normal_ draw in range and with the right moments", function()
    T.manual_seed(0)
    local u = init.uniform_(T.empty({ 20000 }), -2, 3)
    assert(T.amin(u):item() >= -2 and T.amax(u):item() < 3)
    close(T.mean(u):item(), 0.5, 0.05)
    local n = init.normal_(T.empty({ 20000 }, { dtype = T.float64 }), 1, 2)
    close(T.mean(n):item(), 1, 0.05)
    close(std_of(n), 2, 0.03)
  end)

  it("xavier and kaiming bounds and standard deviations follow the fans", function()
    T.manual_seed(1)
    local w = T.empty({ 200, 100, 3 }, { dtype = T.float64 })   -- fan_in 300, fan_out 600
    init.xavier_uniform_(w, 2)
    local a = 2 * math.sqrt(6 / 900)
    assert(T.amax(T.abs(w)):item() <= a)
    close(std_of(w), a / math.sqrt(3), 0.02)
    init.xavier_normal_(w)
    close(std_of(w), math.sqrt(2 / 900), 0.02)
    init.kaiming_uniform_(w, math.sqrt(5))
    local bound = math.sqrt(3) * math.sqrt(2 / 6) / math.sqrt(300)    -- 1/sqrt(fan_in)
    assert(T.amax(T.abs(w)):item() <= bound)
    close(bound, 1 / math.sqrt(300), 1e-12)
    init.kaiming_normal_(w, 0, "fan_out", "relu")
    close(std_of(w), math.sqrt(2) / math.sqrt(600), 0.02)
    init.kaiming_normal_(w, { mode = "fan_in", nonlinearity = "relu" })
    close(std_of(w), math.sqrt(2) / math.sqrt(300), 0.02)
    H.raises("ltensor.nn.init.kaiming_uniform_: Mode fan_avg not supported, please use one of fan_in, fan_out",
      function() init.kaiming_uniform_(w, 0, "fan_avg") end)
    H.raises("Fan in and fan out can not be computed", function() init.xavier_uniform_(T.empty({ 5 })) end)
    -- an empty tensor is left alone
    assert.equal(0, init.kaiming_uniform_(T.empty({ 0, 3 })):numel())
  end)

  it("orthogonal_ gives (semi-)orthogonal matrices times gain", function()
    T.manual_seed(2)
    for _, s in ipairs({ { 5, 8 }, { 8, 5 }, { 6, 6 }, { 4, 2, 3 } }) do
      local w = init.orthogonal_(T.empty(s, { dtype = T.float64 }), 2)
      local m = w:reshape({ s[1], math.floor(w:numel() / s[1]) })
      local g = m:size(1) <= m:size(2) and T.matmul(m, m:t()) or T.matmul(m:t(), m)
      local n = g:size(1)
      assert(T.amax(T.abs(g - T.eye(n, { dtype = T.float64 }) * 4)):item() < 1e-10)
    end
    H.raises("Only tensors with 2 or more dimensions are supported", function() init.orthogonal_(T.empty({ 3 })) end)
  end)

  it("trunc_normal_ stays within [a, b]", function()
    T.manual_seed(3)
    local w = init.trunc_normal_(T.empty({ 10000 }, { dtype = T.float64 }), 0.5, 1, -0.5, 1.0)
    assert(T.amin(w):item() >= -0.5 and T.amax(w):item() <= 1.0)
    local d = init.trunc_normal_(T.empty({ 10000 }))
    assert(T.amax(T.abs(d)):item() <= 2)
    close(T.mean(d):item(), 0, 0.05)
    H.raises("a must be smaller than b", function() init.trunc_normal_(T.empty({ 2 }), 0, 1, 1, -1) end)
  end)

  it("checks arguments and options", function()
    H.raises("ltensor.nn.init.uniform_: bad argument #1 'tensor' (Tensor expected, got number)", function() init.uniform_(3) end)
    H.raises("unknown option 'generater'", function() init.normal_(T.empty({ 2 }), 0, 1, { generater = 1 }) end)
  end)

  it("passes a generator through when the sampling functions take one", function()
    if not T.Generator then return end
    local g1, g2 = T.Generator(), T.Generator()
    g1:manual_seed(7) g2:manual_seed(7)
    local a = init.xavier_uniform_(T.empty({ 3, 4 }), { generator = g1 })
    local b = init.xavier_uniform_(T.empty({ 3, 4 }), { generator = g2 })
    assert.is_true(T.equal(a, b))
  end)
end)

describe("nn.utils", function()
  local C = FX.clip
  local function params()
    local ps = {}
    for i, g in ipairs(C.grads) do
      local p = nn.Parameter(T.zeros(g.shape, { dtype = T.float64 }))
      p.grad = tens(g)
      ps[i] = p
    end
    return ps
  end

  it("clip_grad_norm_ returns PyTorch's total norm and scales as PyTorch", function()
    for _, c in ipairs(C.cases) do
      local ps = params()
      local nt = c.norm_type == math.huge and "inf" or c.norm_type
      local total = nn.utils.clip_grad_norm_(ps, c.max_norm, nt)
      close(total:item(), c.total, 1e-12)
      for i, p in ipairs(ps) do
        assert(T.amax(T.abs(p.grad - tens(c.after[i]))):item() < 1e-12)
      end
    end
  end)

  it("clip_grad_norm_ with math.huge, a module, no gradients and non-finite norms", function()
    host.needs_integers("the repr/message prints a float argument written 2.0 as PyTorch does (2.0)")
    local ps = params()
    local total = nn.utils.clip_grad_norm_(ps, 2.0, math.huge)
    close(total:item(), C.cases[3].total, 1e-12)
    local m = nn.Linear(2, 2)
    assert.equal(0, nn.utils.clip_grad_norm_(m, 1.0):item())
    local p = nn.Parameter(T.zeros({ 2 }))
    p.grad = T.tensor({ 1.0, math.huge })
    H.raises("The total norm of order 2.0 for gradients from `parameters` is non-finite", function()
      nn.utils.clip_grad_norm_({ p }, 1.0, { error_if_nonfinite = true }) end)
    nn.utils.clip_grad_norm_({ p }, 1.0)
    assert.is_true(T.isnan(p.grad[1]):item() or p.grad[1]:item() == 0)
  end)

  it("clip_grad_value_ clamps as PyTorch", function()
    local ps = params()
    nn.utils.clip_grad_value_(ps, 0.7)
    for i, p in ipairs(ps) do assert.is_true(T.equal(p.grad, tens(C.value_after[i]))) end
  end)

  it("parameters_to_vector / vector_to_parameters round trip", function()
    local m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    local v = nn.utils.parameters_to_vector(m:parameters())
    assert.same({ 11 }, v.shape)
    local v2 = T.arange(1, 12):to(T.float32)
    nn.utils.vector_to_parameters(v2, m)
    assert.is_true(T.equal(m[1].weight, T.arange(1, 7):to(T.float32):reshape({ 2, 3 })))
    assert.is_true(T.equal(m[2].bias, T.tensor({ 11.0 })))
    assert.is_true(m[1].weight.is_leaf)
    H.raises("expected torch.Tensor, but got: number", function() nn.utils.vector_to_parameters(3, m) end)
    H.raises("vector has 3 elements but the parameters have 11", function()
      nn.utils.vector_to_parameters(T.zeros({ 3 }), m) end)
  end)
end)
