-- F.local_response_norm and nn.LocalResponseNorm against PyTorch 1.13
-- (spec/fixtures/local_response_norm.lua from
-- spec/fixtures/gen_local_response_norm.py): values and input gradients for
-- 3-D to 5-D inputs, windows narrower and wider than the channels, an inf or
-- a NaN that must stay inside the windows holding it; and the cost of a
-- huge window (the fuzzer's size = 65536: the backward took minutes, one
-- slice per window offset, each spreading its gradient over the whole
-- padded tensor).
local T = require "ltensor"
local F = T.nn.functional
local FX = dofile("spec/fixtures/local_response_norm.lua")

local function tens(f) return T.tensor(f.v, { dtype = T[f.dtype] }):reshape(f.shape) end

-- equal NaN positions, equal infinities, the rest within a relative tol
local function close(got, want, tol, what)
  assert.same(want.shape, got.shape, what)
  local g, w = got:detach():double():reshape({ -1 }):totable(), want:double():reshape({ -1 }):totable()
  for i = 1, #w do
    local a, b = g[i], w[i]
    if b ~= b then
      assert(a ~= a, ("%s[%d]: got %s, PyTorch NaN"):format(what, i, a))
    elseif b == math.huge or b == -math.huge then
      assert.equal(b, a, what .. "[" .. i .. "]")
    else
      assert(math.abs(a - b) <= tol * math.max(1, math.abs(b)), ("%s[%d]: got %.17g, PyTorch %.17g"):format(what, i, a, b))
    end
  end
end

describe("F.local_response_norm matches PyTorch 1.13", function()
  for _, c in ipairs(FX) do
    it(c.name, function()
      local tol = c.x.dtype == "float32" and 1e-5 or 1e-12
      local x = tens(c.x):requires_grad_(true)
      local y = F.local_response_norm(x, c.size, c.alpha, c.beta, c.k)
      close(y, tens(c.y), tol, "y")
      y:backward(tens(c.g))
      close(x.grad, tens(c.dx), tol, "dx")
      -- the module is the function
      local m = T.nn.LocalResponseNorm(c.size, c.alpha, c.beta, c.k)
      close(m(tens(c.x)), tens(c.y), tol, "module y")
    end)
  end
end)

describe("F.local_response_norm with a huge window", function()
  it("costs about as much backward as forward (size 65536)", function()
    local clock = T._clock
    local x = T.randn(1, 3, 4, 4, { requires_grad = true })
    local t0 = clock()
    local y = F.local_response_norm(x, 65536)
    local tf = clock() - t0
    t0 = clock()
    y:sum():backward()
    local tb = clock() - t0
    -- (it took over 5 minutes; now milliseconds either way)
    assert(tf < 2 and tb < 2, ("forward %.3f s, backward %.3f s"):format(tf, tb))
    -- every window holds all 3 channels: the sum of squares over them
    local s = (x:detach() ^ 2):sum(2, true)
    local want = x:detach() / (s * (1e-4 / 65536) + 1) ^ 0.75
    assert(T.allclose(y:detach(), want, 1e-6, 1e-7))
  end)

  it("many channels under a wide window stay linear in the channels", function()
    local x = T.randn(1, 3000, 2, { requires_grad = true })
    local t0 = T._clock()
    local y = F.local_response_norm(x, 2999, 0.5)
    y:sum():backward()
    assert(T._clock() - t0 < 2)
    -- channel 1's window: channels 1..1500 (size/2 = 1499 before, 1499 after)
    local sq = x:detach() ^ 2
    local d = (sq:narrow(2, 1, 1500):sum(2) * (0.5 / 2999) + 1) ^ 0.75
    assert(T.allclose(y:detach():select(2, 1), x:detach():select(2, 1) / d, 1e-5, 1e-6))
  end)
end)
