-- T.onnx.load: ONNX models as nn.Modules, checked against PyTorch 1.13's
-- outputs (fixtures: spec/fixtures/gen_onnx_fixtures.py), autograd through
-- an imported model, and malformed files.
local T = require "ltensor"

local DIR = "spec/fixtures/onnx/"
local cases = dofile(DIR .. "cases.lua")
local E = T.load(DIR .. "expected.safetensors")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function load_err(src, opts)
  local ok, err = pcall(T.onnx.load, src, opts)
  assert.is_false(ok)
  assert.equal("string", type(err))
  return err
end

local function run_case(c, m)
  for _, r in ipairs(c.runs) do
    local ins = {}
    for i, k in ipairs(r.inputs) do ins[i] = E[k] end
    local outs = { m(table.unpack(ins, 1, #r.inputs)) }
    assert.equal(#r.outputs, #outs)
    for i, k in ipairs(r.outputs) do
      local want = E[k]
      assert.equal(want.dtype, outs[i].dtype)
      T.testing.assert_close(outs[i]:detach(), want, { rtol = c.tol, atol = c.tol, equal_nan = true })
    end
  end
end

describe("T.onnx.load matches PyTorch", function()
  for _, c in ipairs(cases) do
    local what = c.name:match("^op_") and "single operator " .. c.name:sub(4) or
      ("exported model " .. c.name .. " at " .. #c.runs .. " batch sizes")
    it(what, function()
      run_case(c, T.onnx.load(DIR .. c.file))
    end)
  end

  it("loads from the bytes of a model as from its path", function()
    local c
    for _, x in ipairs(cases) do if x.name == "mlp" then c = x end end
    run_case(c, T.onnx.load(read(DIR .. c.file)))
  end)

  it("reads initializers from an external data file beside the model", function()
    local m = T.onnx.load(DIR .. "external.onnx")
    T.testing.assert_close(m(T.tensor({ 1.0, 1.0 }, { dtype = T.float32 })):detach(),
      T.tensor({ 2.5, -1.0 }, { dtype = T.float32 }))
    -- from bytes, the directory is an option
    local err = load_err(read(DIR .. "external.onnx"))
    assert.matches("needs the model's directory", err, 1, true)
    m = T.onnx.load(read(DIR .. "external.onnx"), { base_dir = "spec/fixtures/onnx" })
    assert.equal(-1.0, m(T.zeros(2)):detach()[2]:item() + 1.0)
  end)

  it("reads typed data fields: int64 beyond 2^53 exactly, float16 bit patterns, float_data", function()
    local k, h, f = T.onnx.load(DIR .. "typed_fields.onnx")()
    assert.equal(T.int64, k.dtype)
    assert.equal(-1, k:get(1))
    if math.type(4611686018427387905) == "integer" then   -- exact integers: Lua 5.3+
      assert.equal(4611686018427387905, k:get(2))
      assert.equal(math.mininteger, k:get(3))
    end
    assert.equal(T.float16, h.dtype)
    assert.same({ 1.5, -0.25 }, h:detach():totable())
    assert.same({ 0.5, -3.25 }, f:detach():totable())
  end)
end)

describe("the imported module", function()
  it("declares its inputs and outputs, symbolic dims included", function()
    local m = T.onnx.load(DIR .. "cnn.onnx")
    assert.same({ "x" }, m.input_names)
    assert.same({ "y" }, m.output_names)
    assert.equal("x", m.inputs[1].name)
    assert.equal(T.float32, m.inputs[1].dtype)
    assert.same({ "batch", 3, 12, 12 }, m.inputs[1].shape)
    assert.same({ "batch", 5 }, m.outputs[1].shape)
    assert.equal(13, m.opset)
  end)

  it("takes inputs by name and returns several outputs in graph order", function()
    local m = T.onnx.load(DIR .. "lstm.onnx")
    assert.same({ "y", "h", "c" }, m.output_names)
    local c
    for _, x in ipairs(cases) do if x.name == "lstm" then c = x end end
    local r = c.runs[1]
    local y, h, cc = m { x = E[r.inputs[1]] }
    T.testing.assert_close(y:detach(), E[r.outputs[1]], { rtol = 1e-5, atol = 1e-5 })
    T.testing.assert_close(h:detach(), E[r.outputs[2]], { rtol = 1e-5, atol = 1e-5 })
    T.testing.assert_close(cc:detach(), E[r.outputs[3]], { rtol = 1e-5, atol = 1e-5 })
  end)

  it("has parameters, buffers (BatchNorm statistics) and a state_dict keyed by initializer names", function()
    local m = T.onnx.load(DIR .. "cnn.onnx")
    local sd = m:state_dict()
    local n = 0
    for k, v in pairs(sd) do
      n = n + 1
      assert.equal("string", type(k))
      assert.is_false(v.requires_grad)
    end
    assert.is_true(n >= 8)
    assert.is_truthy(sd["fc.weight"])
    assert.is_truthy(sd["bn.running_mean"])
    local buffers = {}
    for _, nb in ipairs(m:named_buffers()) do buffers[nb[1]] = true end
    assert.is_true(buffers["bn.running_mean"] and buffers["bn.running_var"])
    for _, np in ipairs(m:named_parameters()) do assert.is_nil(np[1]:match("running")) end
    assert.same({ 5, 32 }, sd["fc.weight"].shape)
    for _, p in ipairs(m:parameters()) do assert.is_true(p.requires_grad) end
    -- a load_state_dict round trip changes the outputs accordingly
    local x = T.randn(2, 3, 12, 12)
    local before = m(x):detach()
    local sd2 = {}
    for k, v in pairs(sd) do sd2[k] = v:clone() end
    sd2["fc.bias"] = sd2["fc.bias"] + 1
    m:load_state_dict(sd2)
    T.testing.assert_close(m(x):detach(), before + 1, { rtol = 1e-5, atol = 1e-5 })
  end)

  it("runs in float64 after m:to(T.float64)", function()
    local m = T.onnx.load(DIR .. "mlp.onnx")
    local x = T.randn(3, 6)
    local y32 = m(x):detach()
    m:to(T.float64)
    local y64 = m(x:double())
    assert.equal(T.float64, y64.dtype)
    T.testing.assert_close(y64:detach():float(), y32, { rtol = 1e-4, atol = 1e-5 })
  end)

  it("lets autograd run through it: a gradient step lowers the loss", function()
    for _, name in ipairs({ "cnn", "transformer", "gru" }) do
      T.manual_seed(1)
      local m = T.onnx.load(DIR .. name .. ".onnx")
      local x = name == "cnn" and T.randn(4, 3, 12, 12) or (name == "gru" and T.randn(2, 3, 4) or T.randn(2, 5, 16))
      local function loss() local y = m(x); return (y * y):mean() end
      local opt = T.optim.SGD(m:parameters(), { lr = 0.05 })
      local l0 = loss()
      opt:zero_grad()
      l0:backward()
      local some = false
      for _, p in ipairs(m:parameters()) do if p.grad ~= nil and p.grad:abs():sum():item() > 0 then some = true end end
      assert.is_true(some, name)
      opt:step()
      local l1 = loss():item()
      assert.is_true(l1 < l0:item(), name .. ": " .. l1 .. " >= " .. l0:item())
    end
  end)

  it("refuses inputs of the wrong count, shape or type", function()
    local m = T.onnx.load(DIR .. "cnn.onnx")
    local ok, err = pcall(m, T.randn(2, 3, 12, 12), T.randn(1))
    assert.is_false(ok)
    assert.equal("ltensor.onnx.forward: the model takes 1 input (x), got 2", err)
    ok, err = pcall(m, T.randn(2, 3, 10, 12))
    assert.equal("ltensor.onnx.forward: input 'x' should have shape {batch, 3, 12, 12}, got {2, 3, 10, 12}", err)
    ok, err = pcall(m, { y = T.randn(2, 3, 12, 12) })
    assert.equal("ltensor.onnx.forward: missing input 'x'", err)
    ok, err = pcall(m, 3)
    assert.equal("ltensor.onnx.forward: input 'x' must be a tensor, got number", err)
  end)

  it("names the node of a run-time error", function()
    local m = T.onnx.load(DIR .. "op_reshape_input_shape.onnx")
    local ok, err = pcall(m, T.randn(2, 3, 4, 5), T.tensor({ 7, -1 }))
    assert.is_false(ok)
    assert.equal("ltensor.onnx.forward: node 'reshape_input_shape' (op Reshape, opset 13): " ..
      "cannot reshape a tensor of shape {2, 3, 4, 5} into {7, -1}", err)
  end)
end)

describe("malformed files give an ltensor.onnx.load error", function()
  local good = read(DIR .. "bad_good.onnx")
  local kinds = {
    { "an empty string", "", "ltensor.onnx.load: empty file: not an ONNX model" },
    { "a missing file", "spec/fixtures/onnx/none.onnx", "ltensor.onnx.load: cannot open 'spec/fixtures/onnx/none.onnx'" },
    { "a PNG (wrong magic)", "\137PNG\r\n\26\n\0\0\0\13IHDR", "ltensor.onnx.load:" },
    { "a zip (not protobuf)", "PK\3\4\20\0\0\0\0\0", "ltensor.onnx.load:" },
    { "text", "\0hello, world", "ltensor.onnx.load:" },
    { "a truncated key varint", "\8\255", "ltensor.onnx.load: truncated varint (ModelProto.ir_version) at byte 1" },
    { "a varint of 11 bytes", "\8" .. ("\255"):rep(11), "ltensor.onnx.load: bad varint (ModelProto.ir_version) at byte 1: more than 10 bytes" },
    { "a length beyond the end", "\8\7\58\200\1\0", "ltensor.onnx.load: truncated ModelProto.graph: 200 bytes needed at byte 5, 1 left" },
    { "a length over 2^32", "\8\7\58\255\255\255\255\255\1", "ltensor.onnx.load: length of ModelProto.graph at byte 3 is beyond the end of the data" },
    { "a group wire type", "\8\7\59\0", "ltensor.onnx.load: ModelProto.graph has wire type 3, expected 2 (byte 2)" },
    { "an invalid wire type in an unknown field", "\8\7\255\1\0", "ltensor.onnx.load: ModelProto field 31: unsupported or invalid wire type 7" },
    { "field number 0", "\8\7\0", "ltensor.onnx.load: bad field key 0 in ModelProto at byte 2" },
    { "no graph", "\8\7", "ltensor.onnx.load: not an ONNX model (no graph in the ModelProto)" },
    { "truncated after 10 bytes", good:sub(1, 10), "ltensor.onnx.load: truncated ModelProto.graph" },
    { "truncated at half", good:sub(1, math.floor(#good / 2)), "ltensor.onnx.load: truncated ModelProto.graph" },
    { "truncated by one byte", good:sub(1, #good - 1), "ltensor.onnx.load: truncated ModelProto.opset_import" },
  }
  for _, k in ipairs(kinds) do
    it(k[1], function()
      local err = load_err(k[2])
      assert.equal(k[3], err:sub(1, #k[3]))
    end)
  end

  local files = {
    { "dtype", "ltensor.onnx.load: initializer 'w': data_type 99 is not a valid ONNX tensor type" },
    { "raw_size", "ltensor.onnx.load: initializer 'w': raw_data has 5 bytes, but dims {2} of FLOAT need 8" },
    { "dangling", "ltensor.onnx.load: node 'add' (op Add, opset 13): input 'nothing' is not produced by any node, graph input or initializer" },
    { "cycle", "ltensor.onnx.load: node 'first' (op Add, opset 13): the graph has a cycle through this node" },
    { "unknown_op", "ltensor.onnx.load: node 'fancy' (op FancyOp, opset 13): operator 'FancyOp' is not supported" },
    { "bad_attr", "ltensor.onnx.load: node 'pool' (op MaxPool, opset 13): attribute storage_order=1 is not supported" },
    { "domain", "ltensor.onnx.load: node 'r' (op com.example.Relu, opset 0): operator domain 'com.example' is not supported" },
    { "neg_dim", "ltensor.onnx.load: initializer 'w': dimension 1 is -2, not a size" },
    { "ext_escape", "ltensor.onnx.load: initializer 'w': external data location '../escape.bin' leaves the model's directory" },
  }
  for _, k in ipairs(files) do
    it("bad_" .. k[1] .. ".onnx", function()
      assert.equal(k[2], load_err(DIR .. "bad_" .. k[1] .. ".onnx"))
    end)
  end

  it("every truncation and many byte flips of a model: a clean error or a model, never a Lua error", function()
    local s = read(DIR .. "cnn.onnx"):sub(1, 3000)
    local function check(bytes)
      local ok, err = pcall(T.onnx.load, bytes)
      if not ok then assert.equal("ltensor.onnx.load: ", err:sub(1, 19)) end
    end
    local g = read(DIR .. "op_gather_axis1.onnx")
    for cut = 0, #g - 1 do check("\8" .. g:sub(2, cut)) end
    local seed = 12345
    local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n end
    for _ = 1, 300 do
      local p = rnd(#g) + 1
      local mutated = g:sub(1, p - 1) .. string.char(rnd(256)) .. g:sub(p + 1)
      check(mutated:byte(1) == 8 and mutated or "\8" .. mutated:sub(2))
    end
    for cut = 1, #s, 97 do check(s:sub(1, cut)) end
  end)

  it("checks its arguments and options", function()
    assert.equal("ltensor.onnx.load: bad argument #1 'path_or_bytes' (string expected, got number)", load_err(42))
    local err = load_err(DIR .. "mlp.onnx", { requires_grd = false })
    assert.matches("unknown option 'requires_grd'", err, 1, true)
  end)

  it("keeps parameters frozen with requires_grad = false", function()
    local m = T.onnx.load(DIR .. "mlp.onnx", { requires_grad = false })
    for _, p in ipairs(m:parameters()) do assert.is_false(p.requires_grad) end
  end)
end)
