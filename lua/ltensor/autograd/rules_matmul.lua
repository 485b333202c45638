-- ltensor.autograd.rules_matmul: the backward rules of the matrix products
-- (mm, bmm, dot, mv, outer, matmul) and of the fused linear layer.
local T = require "ltensor.core"
local compat = require "ltensor.compat"   -- the 5.4 library on Lua 5.1-5.3/LuaJIT (issue 12)
local H = require "ltensor.autograd.helpers"
local math, table = compat.math, compat.table
local need = H.need
local rules = H.rules
-- matrix products ---------------------------------------------------------------
local function mT(x) return x:transpose(-1, -2) end
-- mm: the C rule takes every call (src/binding/l_grad_shape.c)
-- a product of two tensors a, b, both saved: ga(g, a, b) and gb(g, a, b)
-- give their gradients (each only where needed)
local function product_rule(name, ga, gb)
  return function(raw, a, b)
    local out = raw(a, b)
    return { name = name, inputs = { a, b }, saved = { a, b, n = 2 },
      backward = function(n, g)
        local x, y = n.saved[1], n.saved[2]
        return need(n, 1) and ga(g, x, y) or nil, need(n, 2) and gb(g, x, y) or nil
      end }, out
  end
end
rules.bmm = product_rule("BmmBackward0", function(g, _, y) return T.bmm(g, mT(y)) end,
  function(g, x) return T.bmm(mT(x), g) end)
rules.dot = product_rule("DotBackward0", function(g, _, y) return y * g end, function(g, x) return x * g end)
rules.mv = product_rule("MvBackward0", function(g, _, y) return g:unsqueeze(2) * y:unsqueeze(1) end,
  function(g, x) return T.mv(x:t(), g) end)
rules.outer = product_rule("MulBackward0", function(g, _, y) return T.mv(g, y) end,
  function(g, x) return T.mv(g:t(), x) end)
rules.ger = rules.outer
-- matmul (every form) and the fused linear layer T._linear (l_grad_linear.c)
-- have C rules (src/binding/l_grad_shape.c)
return true
