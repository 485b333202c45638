-- Messages that name what went wrong in everyday mistakes (issue 21):
-- loading a file of an unknown format, a layer given the wrong dtype.
local T = require "ltensor"

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("T.load of a file that is no checkpoint", function()
  local path
  before_each(function() path = os.tmpname() end)
  after_each(function() os.remove(path) end)
  local function write(bytes) local f = assert(io.open(path, "wb")) f:write(bytes) f:close() end

  it("names the formats it reads and shows how the file starts", function()
    write("hello world, this is not a model at all")
    assert.equal(("ltensor.load: '%s' is not a safetensors, .npy or PyTorch file: it starts with \"hello world, thi\""):format(path),
                 err_of(T.load, path))
  end)
  it("escapes binary bytes and recognises a PNG", function()
    write("\137PNG\r\n\26\n" .. string.rep("\0", 20))
    local e = err_of(T.load, path)
    assert.truthy(e:find('starts with "\\x89PNG\\x0d\\x0a\\x1a\\x0a\\x00', 1, true), e)
    assert.truthy(e:find("(a PNG image: T.load_image reads it)", 1, true), e)
  end)
  it("never reports a header length for a file that is not safetensors", function()
    write(string.rep("\255", 64))
    local e = err_of(T.load, path)
    assert.falsy(e:find("header length", 1, true))
    assert.truthy(e:find("not a safetensors, .npy or PyTorch file", 1, true))
  end)
  it("keeps the safetensors messages for a damaged safetensors file", function()
    write(string.pack("<I8", 1000) .. "{}" .. string.rep("\0", 8))
    assert.truthy(err_of(T.load, path):find("header length 1000 is larger than the file", 1, true))
  end)
end)

describe("a linear layer given an input of another dtype", function()
  it("names the layer and the fix for an int64 input", function()
    local m = T.nn.Linear(3, 2)
    local want = "ltensor.nn.functional.linear: input is int64 but the weight is float32: "
      .. "convert the input (x:float() or x:to(T.float32))"
    assert.equal(want, err_of(m, T.tensor({ 1, 2, 3 })))
    assert.equal(want, err_of(m, T.tensor({ { 1, 2, 3 } })))
    assert.equal(want, err_of(m, T.ones(4, 2, 3, { dtype = T.int64 })))
  end)
  it("says so for float64 into a float32 layer, also without autograd", function()
    local m = T.nn.Linear(3, 2)
    local want = "ltensor.nn.functional.linear: input is float64 but the weight is float32: "
      .. "convert the input (x:float() or x:to(T.float32))"
    assert.equal(want, err_of(m, T.ones(2, 3, { dtype = T.float64 })))
    T.no_grad(function() assert.equal(want, err_of(m, T.ones(2, 3, { dtype = T.float64 }))) end)
    assert.equal(want, err_of(T.nn.functional.linear, T.ones(2, 3, { dtype = T.float64 }), T.ones(2, 3)))
  end)
  it("names double for a float64 layer", function()
    local m = T.nn.Linear(3, 2):double()
    assert.truthy(err_of(m, T.ones(2, 3)):find("input is float32 but the weight is float64: convert the input (x:double()", 1, true))
  end)
  it("leaves matmul's own message as PyTorch's", function()
    assert.equal("ltensor.matmul: expected scalar type Long but found Float",
                 err_of(T.matmul, T.ones(2, 2, { dtype = T.int64 }), T.ones(2, 2)))
  end)
end)
