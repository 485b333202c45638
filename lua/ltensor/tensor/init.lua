-- ltensor.tensor: the torch.* numeric surface written in Lua, one file per
-- area (the C core has the rest).  Returns the shared argument helpers
-- (ltensor.tensor.common).
local C = require "ltensor.tensor.common"
require "ltensor.tensor.construct"
require "ltensor.tensor.shape"
require "ltensor.tensor.stats"
require "ltensor.tensor.fused"
require "ltensor.tensor.products"
require "ltensor.tensor.search"
require "ltensor.tensor.pointwise"
require "ltensor.tensor.split"
return C
