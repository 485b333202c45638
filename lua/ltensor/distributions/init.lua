-- ltensor.distributions: probability distributions with PyTorch's
-- torch.distributions interface (1.13), for T.distributions.
--
--   local D = T.distributions
--   local d = D.Normal(loc, scale)          -- numbers or tensors (broadcast)
--   d:sample({n} [, {generator = g}])       -- sample_shape .. batch_shape .. event_shape
--   d:rsample({n} [, opts])                 -- reparameterised: differentiable
--   d:log_prob(x), d:entropy(), d.mean, d.variance, d.stddev,
--   d.batch_shape, d.event_shape, d:expand(shape), d.has_rsample
--
-- Parameters are validated at construction (PyTorch's validate_args=True
-- default; {validate_args = false} as the last argument turns it off), and
-- so are values given to log_prob.  Categorical samples and values are
-- 1-based category indices, like every index in ltensor.
--
-- Reparameterisation: Normal, Uniform, Exponential and MultivariateNormal
-- by location-scale transforms of standard draws; Gamma and Beta through
-- T._standard_gamma, whose gradient in the concentration is the implicit
-- reparameterisation one (Figurnov et al. 2018: dx/dalpha =
-- -(dF/dalpha)/f(x), computed in C), so rsample is differentiable in
-- concentration and rate (Gamma) and in both concentrations (Beta), as in
-- PyTorch.  Bernoulli and Categorical have no rsample (PyTorch raises too).
--
-- Sampling draws in C (src/binding/l_samplers.c); everything else is made of tensor
-- ops, so autograd comes for free.  This module also defines T.lgamma,
-- T.digamma and T.polygamma (n = 1) with their gradients, unless the core
-- already has them.
local B = require "ltensor.distributions.base"
require "ltensor.distributions.special"
require "ltensor.distributions.continuous"
require "ltensor.distributions.discrete"
require "ltensor.distributions.multivariate"
require "ltensor.distributions.kl"
-- every class's public methods raise in the name of the method called
B.name_methods(B.Distribution, "Distribution")
for _, C in pairs(B.D) do
  if type(C) == "table" and type(rawget(C, "_name")) == "string" then B.name_methods(C, C._name) end
end
return B.D
