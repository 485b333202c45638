-- ltensor.nn (T.nn): the module system (nn/module.lua) and every layer,
-- one file per family, as PyTorch's torch.nn: containers, basic layers,
-- the wider layer set, convolutions and pools, recurrent layers, attention
-- and transformers; T.nn.functional, T.nn.init (nn/weight_init.lua) and
-- T.nn.utils.
local nn = require("ltensor.nn.module").nn
nn.functional = require "ltensor.nn.functional"
require "ltensor.nn.containers"
require "ltensor.nn.basic"
require "ltensor.nn.layers"
require "ltensor.nn.conv"
require "ltensor.nn.rnn"
require "ltensor.nn.attention"
require "ltensor.nn.weight_init"
require "ltensor.nn.utils"
return nn
