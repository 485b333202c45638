-- Option tables of the convolution, pooling, interpolation, fold and
-- embedding_bag functions and modules (lua/ltensor/nn/conv.lua, nn/functional/): a key the
-- function does not take raises "ltensor.<function>: unknown option 'k'",
-- with "did you mean" for a near miss, instead of being ignored.
local T = require "ltensor"
local F = T.nn.functional

local function fails(fname, text, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected ltensor." .. fname .. " to raise")
  err = tostring(err)
  local prefix = "ltensor." .. fname .. ":"
  assert.equal(prefix, err:sub(1, #prefix), "error was: " .. err)
  assert.truthy(err:find(text, 1, true), ("%q not in: %s"):format(text, err))
end

describe("nn_conv option tables", function()
  local x4 = T.randn(1, 2, 6, 6)
  local x3 = T.randn(1, 2, 6)
  local w2, w1 = T.randn(3, 2, 3, 3), T.randn(3, 2, 3)

  it("functional convolutions name a typo'd key and suggest the right one", function()
    fails("nn.functional.conv2d", "unknown option 'paddng' (did you mean 'padding'?)", F.conv2d, x4, w2, { paddng = 1 })
    fails("nn.functional.conv1d", "unknown option 'strid' (did you mean 'stride'?)", F.conv1d, x3, w1, { strid = 1 })
    fails("nn.functional.conv_transpose2d", "unknown option 'output_pading' (did you mean 'output_padding'?)",
      F.conv_transpose2d, T.randn(1, 3, 4, 4), w2, { output_pading = 1 })
    fails("nn.functional.conv_transpose1d", "unknown option 'group' (did you mean 'groups'?)",
      F.conv_transpose1d, T.randn(1, 3, 4), w1, { group = 1 })
  end)

  it("pools, interpolate, fold and embedding_bag check their keys", function()
    fails("nn.functional.max_pool2d", "unknown option 'ceil_mod' (did you mean 'ceil_mode'?)", F.max_pool2d, x4, 2,
      { ceil_mod = true })
    fails("nn.functional.max_pool1d", "unknown option 'dilaton' (did you mean 'dilation'?)", F.max_pool1d, x3, 2,
      { dilaton = 1 })
    fails("nn.functional.max_pool2d_with_indices", "unknown option 'paddin' (did you mean 'padding'?)",
      F.max_pool2d_with_indices, x4, 2, { paddin = 0 })
    fails("nn.functional.avg_pool2d", "unknown option 'count_include_pads' (did you mean 'count_include_pad'?)",
      F.avg_pool2d, x4, 2, { count_include_pads = false })
    fails("nn.functional.avg_pool1d", "unknown option 'divisor'", F.avg_pool1d, x3, 2, { divisor = 2 })
    fails("nn.functional.adaptive_max_pool2d", "unknown option 'return_indice' (did you mean 'return_indices'?)",
      F.adaptive_max_pool2d, x4, 2, { return_indice = true })
    fails("nn.functional.interpolate", "unknown option 'scale_factr' (did you mean 'scale_factor'?)", F.interpolate,
      x4, { scale_factr = 2 })
    fails("nn.functional.interpolate", "unknown option 'align_corner' (did you mean 'align_corners'?)", F.interpolate,
      x4, { scale_factor = 2, mode = "bilinear", align_corner = true })
    fails("nn.functional.unfold", "unknown option 'dilations' (did you mean 'dilation'?)", F.unfold, x4, 2,
      { dilations = 1 })
    fails("nn.functional.fold", "unknown option 'strides' (did you mean 'stride'?)", F.fold, T.randn(1, 8, 9), 4, 2,
      { strides = 1 })
    fails("nn.functional.embedding_bag", "unknown option 'ofsets' (did you mean 'offsets'?)", F.embedding_bag,
      T.tensor({ 1, 2 }, { dtype = T.int64 }), T.randn(4, 3), { ofsets = T.tensor({ 1 }, { dtype = T.int64 }) })
  end)

  it("a key far from every option lists the options", function()
    fails("nn.functional.conv2d", "unknown option 'zzzzzzzz' (options: bias, stride, padding, dilation, groups)",
      F.conv2d, x4, w2, { zzzzzzzz = 1 })
  end)

  it("modules check their constructor options", function()
    fails("nn.Conv2d", "unknown option 'kernel' (options: stride, padding, dilation, groups, bias, padding_mode, dtype)", T.nn.Conv2d, 2, 3, 3, { kernel = 3 })
    fails("nn.Conv1d", "unknown option 'padding_mod' (did you mean 'padding_mode'?)", T.nn.Conv1d, 2, 3, 3,
      { padding_mod = "zeros" })
    fails("nn.ConvTranspose2d", "unknown option 'dtpye' (did you mean 'dtype'?)", T.nn.ConvTranspose2d, 2, 3, 3,
      { dtpye = T.float64 })
    fails("nn.MaxPool2d", "unknown option 'stirde' (did you mean 'stride'?)", T.nn.MaxPool2d, 2, { stirde = 2 })
    fails("nn.AvgPool1d", "unknown option 'ceil'", T.nn.AvgPool1d, 2, { ceil = true })
    fails("nn.Upsample", "unknown option 'mod' (did you mean 'mode'?)", T.nn.Upsample, { scale_factor = 2, mod = "nearest" })
    fails("nn.Unfold", "unknown option 'paddings' (did you mean 'padding'?)", T.nn.Unfold, 2, { paddings = 1 })
    fails("nn.Fold", "unknown option 'dilatio' (did you mean 'dilation'?)", T.nn.Fold, 4, 2, { dilatio = 1 })
    fails("nn.EmbeddingBag", "unknown option 'mdoe' (did you mean 'mode'?)", T.nn.EmbeddingBag, 4, 3, { mdoe = "sum" })
  end)

  it("every option a function documents is still accepted", function()
    assert.same({ 1, 3, 6, 6 }, F.conv2d(x4, w2, { bias = T.zeros(3), stride = 1, padding = 1, dilation = 1, groups = 1 }).shape)
    assert.same({ 1, 2, 3, 3 }, F.max_pool2d(x4, 2, { stride = 2, padding = 0, dilation = 1, ceil_mode = false,
      return_indices = false }).shape)
    assert.same({ 1, 2, 3, 3 }, F.avg_pool2d(x4, 2, { stride = 2, padding = 0, ceil_mode = false,
      count_include_pad = true, divisor_override = 4 }).shape)
    assert.same({ 1, 2, 12, 12 }, F.interpolate(x4, { scale_factor = 2, mode = "bilinear", align_corners = false,
      recompute_scale_factor = true }).shape)
    local c = T.nn.Conv2d(2, 3, 3, { stride = 1, padding = 1, dilation = 1, groups = 1, bias = true,
      padding_mode = "zeros", dtype = T.float64 })
    assert.equal("float64", c.weight.dtype.name)
    assert.same({ 1, 2, 3, 3 }, T.nn.MaxPool2d(2, { stride = 2, padding = 0, dilation = 1, return_indices = false,
      ceil_mode = false })(x4).shape)
  end)
end)

describe("the geometry arguments of the conv and pool modules", function()
  -- a module's constructor raised in nn.functional's name with its own
  -- class name ("ltensor.nn.functional.Conv2d: ..."); the pools did not
  -- check stride/padding/dilation, and their repr raised on a bad one
  local function err_of(f, ...)
    local ok, e = pcall(f, ...)
    assert.is_false(ok, "expected an error")
    return e
  end
  local nn = T.nn

  it("are refused in the module's name", function()
    for _, c in ipairs({ "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d" }) do
      local n = c:find("1d") and 1 or 2
      local want = ("ltensor.nn.%s: bad argument '%%s' (an integer or a list of %d integers expected, got %%s)"):format(c, n)
      assert.equal(want:format("kernel_size", "string"), err_of(nn[c], 1, 1, "x"))
      assert.equal(want:format("kernel_size", "a table of 4"), err_of(nn[c], 1, 1, { 1, 2, 3, 4 }))
      assert.equal(want:format("stride", "a table of 3"), err_of(nn[c], 1, 1, 3, { stride = { 1, 2, 3 } }))
      assert.equal(want:format("dilation", "string"), err_of(nn[c], 1, 1, 3, { dilation = "a" }))
      assert.equal(want:format("padding", "boolean"), err_of(nn[c], 1, 1, 3, { padding = true }))
    end
    for _, c in ipairs({ "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d" }) do
      local n = c:find("1d") and 1 or 2
      local want = ("ltensor.nn.%s: bad argument '%%s' (an integer or a list of %d integers expected, got %%s)"):format(c, n)
      assert.equal(want:format("kernel_size", "string"), err_of(nn[c], "x"))
      assert.equal(want:format("stride", "string"), err_of(nn[c], 2, { stride = "x" }))
      assert.equal(want:format("padding", "a table of 3"), err_of(nn[c], 2, { padding = { 1, 2, 3 } }))
    end
    assert.equal("ltensor.nn.MaxPool2d: bad argument 'dilation' (an integer or a list of 2 integers expected, got string)",
      err_of(nn.MaxPool2d, 2, { dilation = "x" }))
    -- nn.functional keeps its own names
    assert.equal("ltensor.nn.functional.conv2d: bad argument 'stride' (an integer or a list of 2 integers expected, got string)",
      err_of(F.conv2d, T.ones(1, 1, 3, 3), T.ones(1, 1, 2, 2), nil, { stride = "x" }))
  end)

  it("good ones still build, print and run (an empty stride: the kernel's)", function()
    assert.equal("AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))", tostring(nn.AvgPool1d(2, { stride = {} })))
    assert.equal("MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)", tostring(nn.MaxPool2d(2, { stride = {} })))
    assert.same({ 1, 1, 2, 2 }, nn.MaxPool2d({ 2, 2 }, { stride = { 2, 2 }, padding = { 0, 0 } })(T.ones(1, 1, 4, 4)).shape)
    assert.same({ 1, 1, 2 }, nn.AvgPool1d(2, { stride = 2, padding = 1 })(T.ones(1, 1, 3)).shape)
  end)
end)
