-- ltensor: tensors with PyTorch semantics for Lua 5.4.
local T = require "ltensor.core"
return T
