-- ltensor.print: placeholder until this module lands.
local T = require "ltensor.core"
return T
