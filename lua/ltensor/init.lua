-- ltensor: tensors with PyTorch semantics for Lua 5.4.
-- The C core (ltensor.core) returns the module table; each Lua module below
-- adds its part to that same table.
local T = require "ltensor.core"

-- The module names of earlier layouts (one file each, before the packages
-- tensor/, autograd/, nn/, linalg/, distributions/, optim/, utils/), each an
-- alias of the module that now holds the code and returns the same value,
-- so that `require` lines written for them keep working.
local OLD_NAMES = {
  ["ltensor.structural"] = "ltensor.tensor",
  ["ltensor.composites"] = "ltensor.tensor",
  ["ltensor.functional"] = "ltensor.nn.functional",
  ["ltensor.nn_conv"] = "ltensor.nn.functional",      -- (it returned T.nn.functional)
  ["ltensor.nn_layers"] = "ltensor.nn",
  ["ltensor.nn_rnn"] = "ltensor.nn",
  ["ltensor.nn_attention"] = "ltensor.nn",
  ["ltensor.nn_init"] = "ltensor.nn.weight_init",
  ["ltensor.nn_utils"] = "ltensor.nn.utils",
  ["ltensor.lr_scheduler"] = "ltensor.optim.lr_scheduler",
  ["ltensor.data"] = "ltensor.utils.data",
  ["ltensor.progress"] = "ltensor.utils.progress",
}
for old, new in pairs(OLD_NAMES) do
  if package.preload[old] == nil then
    package.preload[old] = function() return require(new) end
  end
end

require "ltensor.print"      -- tostring(t), T.set_printoptions
require "ltensor.tensor.size" -- T.Size: what t:size() and t.shape return
require "ltensor.tensor.forms" -- PyTorch spellings: T.finfo/iinfo, T.as_tensor, t:tolist(), t:new_zeros ...
require "ltensor.io"         -- T.save/T.load (safetensors), T.save_npy/T.load_npy
require "ltensor.autograd"   -- backward, T.no_grad, T.autograd.*
require "ltensor.tensor"     -- the torch.* surface written in Lua (tensor/*.lua)
require "ltensor.linalg"     -- T.linalg (LAPACK through OpenBLAS)
T.nn = require "ltensor.nn"     -- T.nn, T.nn.functional, T.nn.init, T.nn.utils (nn/)
T.optim = require "ltensor.optim"   -- T.optim.*, T.optim.lr_scheduler
require "ltensor.utils"      -- T.utils.data, T.read_csv / T.write_csv, T.utils.progress
require "ltensor.help"       -- T.help: the reference documentation
require "ltensor.testing"    -- T.testing.assert_close
require "ltensor.plot"       -- T.plot: SVG line, scatter, hist, heatmap
require "ltensor.image"      -- T.save_image / T.load_image (PNG, PPM/PGM)
require "ltensor.distributions"   -- T.distributions, T.Generator helpers, T.lgamma/T.digamma
require "ltensor.nn.fusion"  -- T.nn.utils.fuse_conv_bn_eval, fuse_modules, Module:fuse (BatchNorm folding)
T.onnx = require "ltensor.onnx"    -- T.onnx.load: ONNX models as nn.Modules
require "ltensor.freed_guard"   -- a freed tensor argument named by the public function (installed at the first free)
return T
