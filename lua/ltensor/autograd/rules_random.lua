-- ltensor.autograd.rules_random: the backward rules of the samplers
-- (src/binding/l_samplers.c): zero gradients for T.normal, T.bernoulli,
-- T.poisson and the in-place samplers, and T._standard_gamma's implicit
-- reparameterisation gradient.
local T = require "ltensor.core"
local H = require "ltensor.autograd.helpers"
local rules = H.rules
-- T.normal, T.bernoulli and T.poisson record a node whose gradients are
-- zero, as PyTorch's NormalBackward / BernoulliBackward / PoissonBackward
-- (sampling is not reparameterised there: use rsample for gradients)
local function zero_grad_rule(name, ninputs)
  local function bw(_, g)
    local z = T.zeros_like(g)
    if ninputs == 1 then return z end
    return z, z
  end
  return function(raw, ...)
    local out = raw(...)
    local inputs = {}
    for i = 1, ninputs do inputs[i] = (select(i, ...)) end
    return { name = name, inputs = inputs, backward = bw }, out
  end
end
rules.normal = rules.normal or zero_grad_rule("NormalBackward3", 2)
rules.bernoulli = rules.bernoulli or zero_grad_rule("BernoulliBackward0", 1)
rules.poisson = rules.poisson or zero_grad_rule("PoissonBackward0", 1)
-- the in-place samplers (t:uniform_() & co.) reach the rule of their name
-- without the "_": the engine refuses a leaf that requires grad, and a
-- non-leaf's earlier history gets a zero gradient (normal_ and bernoulli_
-- use the rules above, whose first input is the target)
for name, node in pairs { uniform = "UniformBackward0", exponential = "ExponentialBackward0",
  geometric = "GeometricBackward0", log_normal = "LogNormalBackward0", cauchy = "CauchyBackward0",
  random = "RandomBackward0" } do
  rules[name] = rules[name] or zero_grad_rule(node, 1)
end

-- T._standard_gamma: Gamma(alpha, 1) samples whose gradient in alpha is the
-- implicit one (PyTorch's StandardGammaBackward0)
rules._standard_gamma = rules._standard_gamma or function(raw, alpha, ...)
  local x = raw(alpha, ...)
  return { name = "StandardGammaBackward0", inputs = { alpha }, saved = { alpha, x, n = 2 },
    backward = function(n, g) return g * T._standard_gamma_grad(n.saved[1], n.saved[2]) end }, x
end
return true
