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
-- mm: the C rule takes every call (src/binding/l_grad_rules.c)
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
rules.matmul = function(raw, a, b)
  local out = raw(a, b)
  local da, db = a:dim(), b:dim()
  local name = (da == 1 and db == 1) and "DotBackward0" or (da == 2 and db == 1) and "MvBackward0"
    or (da == 2 and db == 2) and "MmBackward0" or (da == 1 and db == 2) and "SqueezeBackward1" or "BmmBackward0"
  return { name = name, inputs = { a, b }, saved = { a, b, n = 2 },
    backward = function(n, g)
      local x, y = n.saved[1], n.saved[2]
      local dx, dy = x:dim(), y:dim()
      local ga, gb
      if dx == 1 and dy == 1 then
        return need(n, 1) and g * y or nil, need(n, 2) and g * x or nil
      elseif dx == 1 then       -- (k) @ (..., k, m) -> (..., m)
        local g2 = g:unsqueeze(-2)
        if need(n, 1) then ga = T.matmul(g2, mT(y)):squeeze(-2) end
        if need(n, 2) then gb = T.matmul(x:unsqueeze(2), g2) end
      elseif dy == 1 then       -- (..., n, k) @ (k) -> (..., n)
        local g2 = g:unsqueeze(-1)
        if need(n, 1) then ga = T.matmul(g2, y:unsqueeze(1)) end
        if need(n, 2) then gb = T.matmul(mT(x), g2):squeeze(-1) end
      else
        if need(n, 1) then ga = T.matmul(g, mT(y)) end
        if need(n, 2) then gb = T.matmul(mT(x), g) end
      end
      return ga, gb
    end }, out
end

-- the fused linear layer (src/binding/l_grad_linear.c; the engine records it with a C
-- rule: this one serves the op list and documents the formulas)
rules._linear = function(raw, x, w, b)
  local out = raw(x, w, b)
  return { name = b ~= nil and "AddmmBackward0" or "MmBackward0", inputs = { x, w, b }, ninputs = b ~= nil and 3 or 2,
    saved = { x, w, n = 2 },
    backward = function(n, g)
      local sx, sw = n.saved[1], n.saved[2]
      local gb
      if n.ninputs == 3 and need(n, 3) then gb = g:sum(1) end
      return need(n, 1) and T.mm(g, sw) or nil, need(n, 2) and T.mm(g:t(), sx) or nil, gb
    end }, out
end
return true
