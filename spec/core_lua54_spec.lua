-- Core: to-be-closed tensors (Lua 5.4).
-- Lua 5.4 only (issue 12): these cases use `local x <close>`, which older
-- hosts cannot parse; t:free() is tested in the main file.

local T = require "ltensor"

local ALL = { "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
  "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128" }


describe("storage", function()
  it("releases at once with <close> and free()", function()
    local t = T.ones(3)
    t:free()
    assert.has_error(function() return t:get(1) end)
    do
      local c <close> = T.ones(3)
      assert.equal(1.0, c:get(1))
    end
  end)
end)

describe("tracebacks", function()
  it("name the library's functions through ltensor, not through the modules that extend it", function()
    -- Lua 5.4 names a C function in a traceback by the first loaded module
    -- that holds it: the submodules that install functions into T must not
    -- be T themselves ('ltensor.io.set_num_threads' confused readers)
    for _, m in ipairs({ "ltensor.io", "ltensor.print", "ltensor.image", "ltensor.autograd" }) do
      assert.is_not.equal(T, package.loaded[m])
    end
    assert.equal(T.save, package.loaded["ltensor.io"].save)
    assert.equal(T.autograd, package.loaded["ltensor.autograd"])
    for _ = 1, 5 do
      local _, tb = xpcall(function() T.set_num_threads(nil) end, debug.traceback)
      assert.truthy(tb:find("function 'ltensor.set_num_threads'", 1, true) or
        tb:find("function 'ltensor.core.set_num_threads'", 1, true), tb)
    end
  end)
end)
