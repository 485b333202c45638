-- Crashes found by the structure-aware fuzzer (tools/fuzz_api.lua with
-- tools/fuzz_gen.lua, issue 22) under ASan+UBSan, each now a clean result
-- or a named error.  The fuzz log line of each is quoted.
local T = require "ltensor"
local H = require "spec.helpers"

describe("fuzz findings", function()
  it("linspace with 0 steps and an integral dtype (heap overflow)", function()
    -- "#34873 T.linspace arg:#1 num=-2147483648; arg:#3 num=0; arg:#4 [dtype]dtype=int32"
    for _, d in ipairs({ T.int32, T.int8, T.uint8, T.int64, T.int16 }) do
      local t = T.linspace(-2147483648, 0, 0, { dtype = d })
      assert.same({ 0 }, t.shape)
      assert.equal(d, t.dtype)
    end
    assert.same({ 0 }, T.logspace(0, 1, 0, { dtype = T.int32 }).shape)
    assert.same({ 1, 2, 3 }, T.linspace(1, 3, 3, { dtype = T.int32 }):totable())
  end)

  it("_ag_attach with ninputs and no inputs table (segfault)", function()
    -- "#139013 T._ag_attach arg:#1 -[inputs]; grad-inputs"
    H.raises("ltensor.autograd.Function: spec.inputs must be a table of 2 inputs (got nil)",
      T._ag_attach, { ninputs = 2 }, T.ones(2))
    H.raises("ltensor.autograd.Function: spec.inputs must be a table of 1 inputs (got number)",
      T._ag_attach, { ninputs = 1, inputs = 5 }, T.ones(2))
    -- a Function built the documented way still works
    local Sq = T.autograd.Function {
      forward = function(ctx, x) ctx:save_for_backward(x) return x * x end,
      backward = function(ctx, g) return g * 2 * ctx.saved_tensors[1] end }
    local x = T.tensor({ 1.5, 2.5 }, { requires_grad = true })
    Sq(x):sum():backward()
    assert.same({ 3, 5 }, x.grad:totable())
  end)
end)
