-- ltensor.optim: PyTorch 1.13's optimizers.
--
--   local opt = T.optim.Adam(model:parameters(), {lr = 1e-3})
--   opt:zero_grad(); loss:backward(); opt:step()
--
-- SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam follow
-- PyTorch 1.13's _single_tensor_<name> update formulas; each parameter is
-- updated in one fused pass over its elements by a C kernel
-- (T._optim_update, src/binding/l_optim.c) that also updates the state buffers, so a
-- step costs one C call per parameter and allocates nothing. LBFGS is written
-- with tensor ops over the flattened parameters (it is dominated by dot
-- products and a closure call per evaluation).
--
-- params: a list of tensors, or a list of parameter groups
--   {{params = {w1, b1}, lr = 0.1}, {params = {w2}}}
-- whose keys override the options table (the defaults). The options table
-- is checked: an unknown key raises "unknown option 'learning_rate' (did you
-- mean 'lr'?)".  `lr` is required by SGD, as in PyTorch.
--
-- state_dict layout (PyTorch's, with 1-based positions as everywhere in Lua):
--   { state = { [i] = {step = n, exp_avg = tensor, ...}, ... },
--     param_groups = { {lr = ..., betas = {...}, ..., params = {1, 2, ...}}, ... } }
-- where i is the parameter's position counting through the groups in order.
-- Unlike PyTorch, state_dict() returns copies (a snapshot that later steps
-- do not change) and load_state_dict copies again, so a saved dictionary can
-- be loaded any number of times; a run resumed from it is bit-identical to an
-- uninterrupted one.
local B = require "ltensor.optim.base"
local optim = B.optim
require "ltensor.optim.first_order"
require "ltensor.optim.lbfgs"
optim.lr_scheduler = require "ltensor.optim.lr_scheduler"
return optim
