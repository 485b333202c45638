-- optim: SGD / Adam / AdamW follow PyTorch 1.13's update formulas (checked
-- against a scalar re-derivation), run in place under no_grad.
local T = require "ltensor"

local function param(v) return T.tensor({ v }, { dtype = T.float64, requires_grad = true }) end
-- loss = 0.5 * p^2, so grad = p
local function run(opt, p, steps)
  for _ = 1, steps do
    opt:zero_grad()
    ;(p * p * 0.5):sum():backward()
    opt:step()
  end
  return p:item()
end
local function near(want, got) assert(math.abs(want - got) < 1e-12, string.format("want %.15g got %.15g", want, got)) end

-- scalar Adam, PyTorch 1.13 (torch/optim/_functional.py / adam.py)
local function adam_ref(p, steps, lr, b1, b2, eps, wd, decoupled)
  local m, v = 0, 0
  for t = 1, steps do
    local g = p
    if wd ~= 0 then if decoupled then p = p * (1 - lr * wd) else g = g + wd * p end end
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    local bc1, bc2 = 1 - b1 ^ t, 1 - b2 ^ t
    p = p - (lr / bc1) * m / (math.sqrt(v) / math.sqrt(bc2) + eps)
  end
  return p
end

describe("optim.SGD", function()
  it("plain, momentum, nesterov, dampening and weight decay", function()
    local p = param(1)
    near(0.9 * 0.9, run(T.optim.SGD({ p }, { lr = 0.1 }), p, 2))
    p = param(1)
    near(0.72, run(T.optim.SGD({ p }, { lr = 0.1, momentum = 0.9 }), p, 2))
    p = param(1)
    near(0.81, run(T.optim.SGD({ p }, { lr = 0.1, momentum = 0.9, nesterov = true }), p, 1))
    p = param(1)
    -- step 1: buf = g = 1 -> p = 0.9; step 2: buf = 0.9 + 0.5 * 0.9 = 1.35 -> p = 0.765
    near(0.765, run(T.optim.SGD({ p }, { lr = 0.1, momentum = 0.9, dampening = 0.5 }), p, 2))
    p = param(1)
    near(1 - 0.1 * 1.5, run(T.optim.SGD({ p }, { lr = 0.1, weight_decay = 0.5 }), p, 1))
  end)

  it("validates its arguments", function()
    assert.has_error(function() T.optim.SGD({ param(1) }, { lr = -1 }) end)
    assert.has_error(function() T.optim.SGD({}, { lr = 0.1 }) end)
    assert.has_error(function() T.optim.SGD({ param(1) }, { lr = 0.1, nesterov = true }) end)
    assert.has_error(function() T.optim.SGD({ param(1) * 2 }, { lr = 0.1 }) end)
  end)

  it("skips parameters without grad and supports parameter groups", function()
    local a, b = param(1), param(1)
    local opt = T.optim.SGD({ { params = { a } }, { params = { b }, lr = 0.5 } }, { lr = 0.1 })
    ;(a * b):sum():backward()
    opt:step()
    near(0.9, a:item())
    near(0.5, b:item())
    local c = param(2)
    T.optim.SGD({ c }, { lr = 0.1 }):step()
    near(2, c:item())
  end)
end)

describe("optim.Adam / AdamW", function()
  it("matches PyTorch's update with bias correction", function()
    local p = param(1)
    near(adam_ref(1, 5, 0.1, 0.9, 0.999, 1e-8, 0, false), run(T.optim.Adam({ p }, { lr = 0.1 }), p, 5))
    p = param(-2)
    near(adam_ref(-2, 4, 0.05, 0.8, 0.99, 1e-6, 0.1, false),
      run(T.optim.Adam({ p }, { lr = 0.05, betas = { 0.8, 0.99 }, eps = 1e-6, weight_decay = 0.1 }), p, 4))
    p = param(3)
    near(adam_ref(3, 4, 0.1, 0.9, 0.999, 1e-8, 1e-2, true), run(T.optim.AdamW({ p }, { lr = 0.1 }), p, 4))
  end)

  it("zero_grad zeroes in place, or drops the grads with set_to_none", function()
    local p = param(1)
    local opt = T.optim.Adam({ p }, { lr = 0.1 })
    ;(p * 3):sum():backward()
    opt:zero_grad()
    assert.are.same({ 0.0 }, p.grad:totable())
    opt:zero_grad(true)
    assert.is_nil(p.grad)
  end)

  it("updates run without recording a graph", function()
    local p = param(1)
    local opt = T.optim.Adam({ p }, { lr = 0.1 })
    ;(p * p):sum():backward()
    opt:step()
    assert.is_true(p.is_leaf)
    assert.is_true(p.requires_grad)
  end)
end)

describe("an optimizer step of a large parameter", function()
  it("is split over the threads and gives the same bits as one thread", function()
    local function run(nt)
      local before = T.get_num_threads()
      T.set_num_threads(nt)
      T.manual_seed(1)
      local p = T.randn(1000003, { requires_grad = true })   -- odd: ranges end mid-vector
      local adam = T.optim.Adam({ p }, { lr = 0.01 })
      local sgd = T.optim.SGD({ p }, { lr = 0.01, momentum = 0.9, nesterov = true })
      for _ = 1, 3 do
        p.grad = T.randn(1000003)
        adam:step()
        sgd:step()
      end
      T.set_num_threads(before)
      return p:detach()
    end
    assert.is_true(T.equal(run(1), run(2)))
  end)
end)
