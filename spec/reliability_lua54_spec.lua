-- Reliability: a tensor freed by <close> while autograd needs it (Lua 5.4).
-- Lua 5.4 only (issue 12): these cases use `local x <close>`, which older
-- hosts cannot parse; t:free() is tested in the main file.

local T = require "ltensor"

local raises = dofile("spec/helpers.lua").raises

describe("a tensor freed while autograd still needs it", function()
  it("raises a clear error from backward (was a segfault) when freed by <close>", function()
    local a = T.randn(300, { requires_grad = true })
    local y
    do
      local b <close> = T.randn(300)
      y = a * b
    end
    raises("ltensor.backward: a tensor saved by MulBackward0 for the gradient computation was freed",
      function() y:sum():backward() end)
  end)
end)
