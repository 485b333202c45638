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
