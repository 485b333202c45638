-- spec/conv_spec.lua: convolutions, pooling and resampling (T.nn.functional
-- conv*/pool*/interpolate/pixel_shuffle/unfold/fold/embedding_bag and the
-- nn modules).  Expected values come from PyTorch 1.13 through
-- spec/fixtures/conv.lua (tools/gen_conv_fixtures.py); gradients are also
-- checked by finite differences (gradcheck).
local T = require "ltensor"
local host = dofile("spec/host.lua")   -- per-case marks for older Lua hosts (issue 12)
local nn, F = T.nn, T.nn.functional
local fix = dofile("spec/fixtures/conv.lua")

local function build(d)
  if d.kind == "nil" then return nil end
  if d.kind == "value" then return d.value end
  local t = T.tensor(d.data, { dtype = T[d.dtype] })
  return t:reshape(d.shape)
end
local function build_opts(o)
  local r = {}
  for k, v in pairs(o or {}) do
    if type(v) == "table" and v.kind == "tensor" then r[k] = build(v) else r[k] = v end
  end
  return r
end

-- |got - want| <= atol + rtol |want| elementwise, NaN equal to NaN
local function close(got, want, what)
  assert.equal(want.dtype, got.dtype.name, what .. ": dtype")
  assert.same(want.shape, got.shape, what .. ": shape")
  local g = got:reshape(-1):totable()
  local rtol = want.dtype == "float32" and 2e-5 or (want.dtype == "bfloat16" and 8e-3 or 1e-9)
  local maxabs = 1
  for _, v in ipairs(want.data) do if v == v and math.abs(v) > maxabs then maxabs = math.abs(v) end end
  for i, w in ipairs(want.data) do
    local v = g[i]
    if v == w then   -- (infinities too)
    elseif w ~= w then
      assert.is_true(v ~= v, ("%s: element %d is %s, expected NaN"):format(what, i, tostring(v)))
    elseif not (want.dtype:find("float") or want.dtype:find("complex")) then   -- integer and bool results: exact
      assert.equal(w, v, ("%s: element %d"):format(what, i))
    else
      assert.is_true(math.abs(v - w) <= rtol * maxabs + rtol * math.abs(w),
        ("%s: element %d is %.10g, expected %.10g"):format(what, i, v, w))
    end
  end
end

local function call(fn, args, opts)
  local n = #args
  local packed = {}
  for i = 1, n do packed[i] = args[i] end
  packed[n + 1] = opts
  return F[fn](table.unpack(packed, 1, n + 1))
end

describe("nn.functional conv/pool/resample against PyTorch", function()
  for _, c in ipairs(fix.functional) do
    it(c.name, function()
      local args = {}
      for i, a in ipairs(c.args) do args[i] = build(a) end
      if c.fn == "embedding_bag_renorm" then   -- the weight after a max_norm lookup
        F.embedding_bag(args[1], args[2], build_opts(c.opts))
        close(args[2], c.expect[1], "renormalised weight")
        return
      end
      -- `#args` must count trailing nils as PyTorch's positional None
      local n = #c.args
      local opts = build_opts(c.opts)
      if next(opts) == nil then opts = nil end
      if c.error then
        local packed = {}
        for i = 1, n do packed[i] = args[i] end
        packed[n + 1] = opts
        local ok, err = pcall(F[c.fn], table.unpack(packed, 1, n + 1))
        assert.is_false(ok, "expected an error")
        err = tostring(err)
        assert.is_truthy(err:find("ltensor.nn.functional." .. c.fn .. ": ", 1, true), err)
        local want = c.error:gsub(" of type <class 'torch.Tensor'>", ""):gsub("^\"", "")
        assert.is_truthy(err:find(want:sub(1, 70), 1, true), "error was: " .. err .. "\nexpected: " .. c.error)
        return
      end
      if c.grads then
        for i, a in ipairs(args) do
          if getmetatable(a) == T._metatable and a:is_floating_point() then
            a.requires_grad = true
          end
        end
      end
      local packed = {}
      for i = 1, n do packed[i] = args[i] end
      packed[n + 1] = opts
      local res = { F[c.fn](table.unpack(packed, 1, n + 1)) }
      for i, e in ipairs(c.expect) do close(res[i], e, "result " .. i) end
      if c.grads then
        local loss = (res[1] * build(c.W)):sum()
        loss:backward()
        for i, g in ipairs(c.grads) do
          if g.kind == "tensor" then close(args[i].grad, g, "grad " .. i) end
        end
      end
    end)
  end
end)

describe("nn modules against PyTorch", function()
  for _, c in ipairs(fix.modules) do
    it(c.name, function()
      local opts = build_opts(c.opts)
      -- (only the modules with parameters take a dtype, as in PyTorch)
      if next(c.params) then opts.dtype = T.float64 end
      local ctor = {}
      for i, v in ipairs(c.ctor) do ctor[i] = v end
      ctor[#ctor + 1] = opts
      local m = nn[c.cls](table.unpack(ctor))
      local names = {}
      for _, np in ipairs(m:named_parameters()) do names[#names + 1] = np[1] end
      table.sort(names)
      local want_names = {}
      for k in pairs(c.params) do want_names[#want_names + 1] = k end
      table.sort(want_names)
      assert.same(want_names, names)
      T.no_grad(function()
        for k, p in pairs(c.params) do
          local own = m[k]
          assert.same(p.shape, own.shape, "shape of " .. k)
          own:copy_(build(p))
        end
      end)
      local y = m(build(c.input))
      close(y, c.expect, "output")
      if tostring(m) ~= c.repr and c.repr:find("%d%.0[,)]") then   -- e.g. scale_factor=2.0
        host.needs_integers("the repr prints a float argument written 2.0 as PyTorch does (2.0)")
      end
      assert.equal(c.repr, tostring(m))
      if c.grads then
        (y * build(c.W)):sum():backward()
        for k, g in pairs(c.grads) do close(m[k].grad, g, "grad of " .. k) end
      end
    end)
  end
end)

describe("conv gradients by finite differences", function()
  local function rnd(...) return T.randn({ ... }, { dtype = T.float64 }) end
  local gc = T.autograd.gradcheck
  it("conv2d with groups, stride, dilation and bias", function()
    assert.is_true(gc(function(x, w, b) return F.conv2d(x, w, b, { stride = { 2, 1 }, padding = 1, dilation = { 1, 2 }, groups = 2 }) end,
      { rnd(2, 4, 5, 6), rnd(4, 2, 3, 2), rnd(4) }))
  end)
  it("conv_transpose2d with output_padding", function()
    assert.is_true(gc(function(x, w, b) return F.conv_transpose2d(x, w, b, { stride = 2, padding = 1, output_padding = 1, groups = 2 }) end,
      { rnd(1, 4, 3, 3), rnd(4, 3, 2, 3), rnd(6) }))
  end)
  it("conv1d 'same' with an even kernel", function()
    assert.is_true(gc(function(x, w) return F.conv1d(x, w, nil, { padding = "same" }) end, { rnd(2, 3, 7), rnd(2, 3, 4) }))
  end)
  it("pools and interpolation", function()
    assert.is_true(gc(function(x) return F.max_pool2d(x, 3, { stride = 2, padding = 1 }) end, { rnd(2, 2, 6, 7) }))
    assert.is_true(gc(function(x) return F.avg_pool2d(x, 3, { stride = 2, padding = 1, count_include_pad = false }) end, { rnd(2, 2, 6, 7) }))
    assert.is_true(gc(function(x) return F.adaptive_avg_pool2d(x, { 4, 3 }) end, { rnd(1, 2, 7, 5) }))
    assert.is_true(gc(function(x) return F.adaptive_max_pool2d(x, { 2, 3 }) end, { rnd(1, 2, 5, 7) }))
    assert.is_true(gc(function(x) return F.interpolate(x, { scale_factor = 1.5, mode = "bilinear" }) end, { rnd(1, 2, 4, 3) }))
    assert.is_true(gc(function(x) return F.interpolate(x, { size = 7, mode = "linear", align_corners = true }) end, { rnd(1, 2, 4) }))
  end)
  it("unfold, fold, pixel_shuffle, embedding_bag", function()
    assert.is_true(gc(function(x) return F.unfold(x, 2, { padding = 1 }) end, { rnd(1, 2, 3, 4) }))
    assert.is_true(gc(function(x) return F.fold(x, { 3, 4 }, 2, { padding = 1 }) end, { rnd(1, 8, 20) }))
    assert.is_true(gc(function(x) return F.pixel_shuffle(x, 2) end, { rnd(1, 8, 2, 3) }))
    local idx = T.tensor({ { 1, 3 }, { 4, 4 } })
    assert.is_true(gc(function(w) return F.embedding_bag(idx, w, { mode = "mean" }) end, { rnd(5, 3) }))
  end)
end)

describe("conv layouts and edge cases", function()
  it("a transposed (non-contiguous) input gives the contiguous result", function()
    local x = T.randn(2, 3, 6, 5)
    local w = T.randn(4, 3, 3, 3)
    local xt = x:transpose(3, 4):contiguous():transpose(3, 4)
    assert.is_false(xt:is_contiguous())
    local a, b = F.conv2d(x, w, nil, { padding = 1 }), F.conv2d(xt, w, nil, { padding = 1 })
    assert.is_true(T.allclose(a, b))
    local p1, i1 = F.max_pool2d(x, 2, { return_indices = true })
    local p2, i2 = F.max_pool2d(xt, 2, { return_indices = true })
    assert.is_true(T.equal(p1, p2))
    assert.is_true(T.equal(i1, i2))
  end)
  it("unbatched input equals the batched result without the batch dim", function()
    local x, w, b = T.randn(3, 6, 6), T.randn(2, 3, 3, 3), T.randn(2)
    assert.is_true(T.allclose(F.conv2d(x, w, b), F.conv2d(x:unsqueeze(1), w, b):squeeze(1)))
    assert.same({ 3, 3, 3 }, F.max_pool2d(x, 2).shape)
    assert.same({ 3, 2 }, F.adaptive_avg_pool1d(T.randn(3, 7), 2).shape)
  end)
  it("an empty batch gives an empty result", function()
    local y = F.conv2d(T.randn(0, 2, 5, 5), T.randn(3, 2, 3, 3))
    assert.same({ 0, 3, 3, 3 }, y.shape)
    assert.same({ 0, 2, 2, 2 }, F.max_pool2d(T.randn(0, 2, 5, 5), 2).shape)
  end)
  it("zero output channels", function()
    assert.same({ 1, 0, 3, 3 }, F.conv2d(T.randn(1, 2, 5, 5), T.randn(0, 2, 3, 3)).shape)
  end)
  it("max_pool indices are 1-based flat positions in the plane", function()
    local x = T.tensor({ { { 1, 5 }, { 7, 2 } } }, { dtype = T.float32 })
    local v, i = F.max_pool2d(x, 2, { return_indices = true })
    assert.same({ { { 7 } } }, v:totable())
    assert.same({ { { 3 } } }, i:totable())
    assert.equal(T.int64, i.dtype)
  end)
  it("gradients flow only to what requires them", function()
    local x = T.randn(1, 2, 4, 4)
    local w = T.randn(3, 2, 3, 3):requires_grad_()
    F.conv2d(x, w):sum():backward()
    assert.is_nil(x.grad)
    assert.same({ 3, 2, 3, 3 }, w.grad.shape)
  end)
  it("integer convolution is exact", function()
    local x = T.tensor({ { { { 1, 2 }, { 3, 4 } } } })
    local w = T.tensor({ { { { 1, 1 }, { 1, 1 } } } })
    local y = F.conv2d(x, w)
    assert.equal(T.int64, y.dtype)
    assert.same({ { { { 10 } } } }, y:totable())
  end)
  it("errors name the function", function()
    local ok, err = pcall(F.conv2d, "x", T.randn(1, 1, 1, 1))
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("ltensor.nn.functional.conv2d: bad argument #1 'input' (Tensor expected, got string)", 1, true))
    ok, err = pcall(F.max_pool2d, T.randn(1, 1, 4, 4), 0)
    assert.is_truthy(tostring(err):find("ltensor.nn.functional.max_pool2d: kernel_size must be greater than zero", 1, true))
    ok, err = pcall(F.interpolate, T.randn(1, 1, 4, 4), { size = 2, mode = "trilinear" })
    assert.is_truthy(tostring(err):find("ltensor.nn.functional.interpolate:", 1, true))
    ok, err = pcall(F.embedding_bag, T.tensor({ { 1, 7 } }), T.randn(4, 2))
    assert.is_truthy(tostring(err):find("out of bounds", 1, true))
  end)
end)

describe("conv modules", function()
  it("have PyTorch's parameter names, shapes and default init bounds", function()
    T.manual_seed(0)
    local m = nn.Conv2d(4, 8, 3, { groups = 2 })
    assert.same({ 8, 2, 3, 3 }, m.weight.shape)
    assert.same({ 8 }, m.bias.shape)
    local bound = 1 / math.sqrt(2 * 9)
    assert.is_true(m.weight:abs():max():item() <= bound)
    assert.is_true(m.bias:abs():max():item() <= bound)
    assert.is_true(m.weight:abs():max():item() > bound * 0.8)
    local t = nn.ConvTranspose2d(4, 6, { 2, 3 }, { groups = 2, bias = false })
    assert.same({ 4, 3, 2, 3 }, t.weight.shape)
    assert.is_nil(t.bias)
    assert.is_true(t.weight:abs():max():item() <= 1 / math.sqrt(3 * 6))
    assert.same({ "weight", "bias" }, (function()
      local n = {}
      for _, np in ipairs(nn.Conv1d(2, 3, 4):named_parameters()) do n[#n + 1] = np[1] end
      return n
    end)())
  end)
  it("print like PyTorch", function()
    host.needs_integers("the repr/message prints a float argument written 2.0 as PyTorch does (2.0)")
    assert.equal("Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))", tostring(nn.Conv2d(1, 16, 3, { padding = 1 })))
    assert.equal("Conv1d(2, 4, kernel_size=(3,), stride=(2,), bias=False)", tostring(nn.Conv1d(2, 4, 3, { stride = 2, bias = false })))
    assert.equal("MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)", tostring(nn.MaxPool2d(2)))
    assert.equal("AvgPool2d(kernel_size=3, stride=1, padding=1)", tostring(nn.AvgPool2d(3, 1, 1)))
    assert.equal("AdaptiveAvgPool2d(output_size=(1, 1))", tostring(nn.AdaptiveAvgPool2d({ 1, 1 })))
    assert.equal("Upsample(scale_factor=2.0, mode=nearest)", tostring(nn.Upsample({ scale_factor = 2 })))
    assert.equal("PixelShuffle(upscale_factor=3)", tostring(nn.PixelShuffle(3)))
  end)
  it("ConvTranspose2d honours output_size", function()
    local m = nn.ConvTranspose2d(2, 3, 3, { stride = 2, padding = 1 })
    local x = T.randn(1, 2, 4, 4)
    assert.same({ 1, 3, 7, 7 }, m(x).shape)
    assert.same({ 1, 3, 8, 8 }, m(x, { 8, 8 }).shape)
    local ok, err = pcall(m, x, { 10, 10 })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("ltensor.nn.ConvTranspose2d:", 1, true))
  end)
  it("reject bad constructor arguments", function()
    assert.has_error(function() nn.Conv2d(3, 4, 3, { groups = 2 }) end, "ltensor.nn.Conv2d: in_channels must be divisible by groups")
    assert.has_error(function() nn.Conv2d(4, 4, 3, { padding_mode = "foo" }) end)
    assert.has_error(function() nn.Conv2d(4, 4, 3, { padding = "same", stride = 2 }) end,
      "ltensor.nn.Conv2d: padding='same' is not supported for strided convolutions")
  end)
  it("EmbeddingBag with offsets (1-based starts)", function()
    local m = nn.EmbeddingBag(5, 2, { mode = "sum" })
    local out = m(T.tensor({ 1, 2, 3, 4 }), T.tensor({ 1, 3 }))
    assert.same({ 2, 2 }, out.shape)
    assert.is_true(T.allclose(out[1], m.weight[1] + m.weight[2]))
    assert.is_true(T.allclose(out[2], m.weight[3] + m.weight[4]))
  end)
  it("train a tiny CNN a few steps (loss goes down)", function()
    T.manual_seed(1)
    local model = nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2))
    local head = nn.Linear(16, 2)
    local x, y = T.randn(8, 1, 4, 4), T.randint(1, 3, { 8 })
    local params = model:parameters()
    for _, p in ipairs(head:parameters()) do params[#params + 1] = p end
    local opt = T.optim.Adam(params, { lr = 0.05 })
    local first, last
    for i = 1, 30 do
      opt:zero_grad()
      local loss = F.cross_entropy(head(model(x):reshape(8, -1)), y)
      loss:backward()
      opt:step()
      if i == 1 then first = loss:item() end
      last = loss:item()
    end
    assert.is_true(last < first * 0.5)
  end)
end)

describe("second-order gradients through conv and interpolate", function()
  local function rnd(...) return T.randn({ ... }, { dtype = T.float64 }) end
  -- s = <dL/dx, V1> + <dL/dw, V2> built with create_graph; its gradient
  -- against central differences of the first-order gradients
  local function second_order_err(f, x, w, b)
    x.requires_grad, w.requires_grad = true, true
    local y = f(x, w, b)
    local W = rnd(table.unpack(y.shape))
    local g = T.autograd.grad({ (y * W):sum() }, { x, w }, nil, { create_graph = true })
    local V1, V2 = rnd(table.unpack(x.shape)), rnd(table.unpack(w.shape))
    local h = T.autograd.grad({ (g[1] * V1):sum() + (g[2] * V2):sum() }, { x, w })
    local xd, wd = x:detach():clone(), w:detach():clone()
    local function sval()
      local xx, ww = xd:clone():requires_grad_(), wd:clone():requires_grad_()
      local a = T.autograd.grad({ (f(xx, ww, b) * W):sum() }, { xx, ww })
      return ((a[1] * V1):sum() + (a[2] * V2):sum()):item()
    end
    local err = 0
    for k, t in ipairs({ xd, wd }) do
      local flat, hf = t:view(-1), h[k]:reshape(-1)
      for i = 1, math.min(flat:numel(), 20) do
        local v = flat[i]:item()
        flat[i] = v + 1e-6
        local sp = sval()
        flat[i] = v - 1e-6
        local sm = sval()
        flat[i] = v
        err = math.max(err, math.abs((sp - sm) / 2e-6 - hf[i]:item()))
      end
    end
    return err
  end
  it("conv2d with groups, stride and dilation (input and weight)", function()
    assert.is_true(second_order_err(function(x, w, b)
      return F.conv2d(x, w, b, { stride = 2, padding = 1, groups = 2, dilation = { 1, 2 } })
    end, rnd(2, 4, 6, 7), rnd(4, 2, 3, 2), rnd(4)) < 1e-6)
  end)
  it("conv_transpose2d and conv1d 'same'", function()
    assert.is_true(second_order_err(function(x, w) return F.conv_transpose2d(x, w, nil, { stride = 2, padding = 1, output_padding = 1 }) end,
      rnd(1, 3, 3, 4), rnd(3, 2, 3, 3)) < 1e-6)
    assert.is_true(second_order_err(function(x, w, b) return F.conv1d(x, w, b, { padding = "same" }) end,
      rnd(2, 3, 7), rnd(2, 3, 4), rnd(2)) < 1e-6)
  end)
  it("interpolate: the gradient of the backward is the forward", function()
    for _, mode in ipairs({ "bicubic", "bilinear", "nearest" }) do
      local x = rnd(1, 2, 3, 4):requires_grad_()
      local W = rnd(1, 2, 5, 7):requires_grad_()
      local gx = T.autograd.grad({ (F.interpolate(x, { size = { 5, 7 }, mode = mode }) * W):sum() }, { x }, nil,
        { create_graph = true })[1]
      local V = rnd(1, 2, 3, 4)
      ;(gx * V):sum():backward()
      assert.is_true((W.grad - F.interpolate(V, { size = { 5, 7 }, mode = mode })):abs():max():item() < 1e-12, mode)
    end
  end)
end)

describe("bicubic, area and embedding_bag edges", function()
  it("bicubic reads non-contiguous input and checks its gradient", function()
    local x = T.randn(2, 5, 4, 3, { dtype = T.float64 }):permute(1, 2, 4, 3)
    local y = F.interpolate(x, { size = { 6, 5 }, mode = "bicubic", align_corners = true })
    local yc = F.interpolate(x:contiguous(), { size = { 6, 5 }, mode = "bicubic", align_corners = true })
    assert.is_true(T.equal(y, yc))
    assert.is_true(T.autograd.gradcheck(function(a) return F.interpolate(a, { scale_factor = 1.5, mode = "bicubic" }) end,
      { T.randn(1, 2, 3, 3, { dtype = T.float64 }) }))
  end)
  it("Upsample takes the new modes", function()
    host.needs_integers("the repr/message prints a float argument written 2.0 as PyTorch does (2.0)")
    local m = nn.Upsample({ scale_factor = 2, mode = "area" })
    assert.same({ 1, 1, 6, 6 }, m(T.randn(1, 1, 3, 3)).shape)
    assert.equal("Upsample(scale_factor=2.0, mode=bicubic)", tostring(nn.Upsample({ scale_factor = 2, mode = "bicubic" })))
    -- recompute_scale_factor: the coordinates come from the sizes, not the factor
    local x = T.randn(1, 1, 4, 4, { dtype = T.float64 })
    local r = nn.Upsample({ scale_factor = 1.7, mode = "bilinear", recompute_scale_factor = true })(x)
    assert.is_true(T.equal(r, F.interpolate(x, { size = { 6, 6 }, mode = "bilinear" })))
  end)
  it("EmbeddingBag: padding row starts at zero and gets no gradient", function()
    local m = nn.EmbeddingBag(5, 2, { mode = "sum", padding_idx = -1 })
    assert.equal(5, m.padding_idx)
    assert.same({ 0, 0 }, m.weight[5]:totable())
    T.no_grad(function() m.weight:fill_(1) end)
    local y = m(T.tensor({ { 1, 5, 5 }, { 5, 5, 5 } }))
    assert.same({ { 1, 1 }, { 0, 0 } }, y:totable())
    y:sum():backward()
    assert.same({ 0, 0 }, m.weight.grad[5]:totable())
    assert.same({ 1, 1 }, m.weight.grad[1]:totable())
    assert.equal("EmbeddingBag(5, 2, mode=sum, padding_idx=5)", tostring(m))
  end)
  it("EmbeddingBag and embedding_bag argument errors", function()
    local ok, err = pcall(nn.EmbeddingBag, 5, 2, { padding_idx = 6 })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("ltensor.nn.EmbeddingBag: padding_idx must be within num_embeddings", 1, true))
    ok, err = pcall(nn.EmbeddingBag, 5, 2, { padding_idx = 0 })
    assert.is_truthy(tostring(err):find("padding_idx must be within num_embeddings", 1, true))
    ok, err = pcall(nn.EmbeddingBag, 5, 2, { padding_idx = 1.5 })
    assert.is_truthy(tostring(err):find("padding_idx must be an integer, got number", 1, true))
    ok, err = pcall(nn.EmbeddingBag, 5, 2, { max_norm = "1" })
    assert.is_truthy(tostring(err):find("max_norm must be a number, got string", 1, true))
    ok, err = pcall(nn.EmbeddingBag, 5, 2, { _weight = T.randn(4, 2) })
    assert.is_truthy(tostring(err):find("Shape of weight does not match num_embeddings and embedding_dim", 1, true))
    local w = T.randn(5, 2)
    ok, err = pcall(F.embedding_bag, T.tensor({ { 1, 2 } }), w, { padding_idx = 1.5 })
    assert.is_truthy(tostring(err):find("ltensor.nn.functional.embedding_bag: padding_idx must be an integer", 1, true))
    ok, err = pcall(F.embedding_bag, T.tensor({ { 1, 2 } }), w, { max_norm = true })
    assert.is_truthy(tostring(err):find("max_norm must be a number, got boolean", 1, true))
    ok, err = pcall(F.embedding_bag, T.tensor({ { 1, 2 } }), w, { max_norm = 1, norm_type = "2" })
    assert.is_truthy(tostring(err):find("norm_type must be a number, got string", 1, true))
  end)
  it("embedding_bag with padding on an empty input and an empty bag", function()
    local w = T.randn(4, 3)
    assert.same({ 2, 3 }, F.embedding_bag(T.zeros(2, 0, { dtype = T.int64 }), w, { padding_idx = 1 }).shape)
    local y = F.embedding_bag(T.tensor({ 2, 1 }), w, { offsets = T.tensor({ 1, 1, 2 }), mode = "max", padding_idx = 1 })
    assert.same({ 0, 0, 0 }, y[1]:totable())
    assert.is_true(T.equal(y[2], w[2]))
    assert.same({ 0, 0, 0 }, y[3]:totable())
  end)
end)
