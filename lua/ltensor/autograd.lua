-- ltensor.autograd: placeholder until this module lands.
local T = require "ltensor.core"
return T
