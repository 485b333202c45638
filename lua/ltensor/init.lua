-- ltensor: tensors with PyTorch semantics for Lua 5.4.
-- The C core (ltensor.core) returns the module table; each Lua module below
-- adds its part to that same table.
local T = require "ltensor.core"
require "ltensor.print"      -- tostring(t), T.set_printoptions
require "ltensor.size"       -- T.Size: what t:size() and t.shape return
require "ltensor.tensor_forms" -- PyTorch spellings: T.finfo/iinfo, T.as_tensor, t:tolist(), t:new_zeros ...
require "ltensor.io"         -- T.save/T.load (safetensors), T.save_npy/T.load_npy
require "ltensor.autograd"   -- backward, T.no_grad, T.autograd.*
require "ltensor.structural" -- SPEC §6b structure, search/counting, statistics; nn.functional.pad
require "ltensor.linalg"     -- T.linalg (LAPACK through OpenBLAS)
require "ltensor.composites" -- addcmul ... i0: PyTorch functions composed from existing ops
T.nn = require "ltensor.nn"
require "ltensor.nn_conv"    -- conv/pool/interpolate in T.nn.functional, Conv2d & co. in T.nn
require "ltensor.nn_layers"  -- activation, normalisation and loss modules of the wider nn
T.optim = require "ltensor.optim"                -- T.optim.*, T.optim.lr_scheduler
T.utils = T.utils or {}
T.utils.data = require "ltensor.data"           -- T.utils.data.*, T.read_csv / T.write_csv
require "ltensor.progress"                      -- T.utils.progress
require "ltensor.help"       -- T.help: the reference documentation
require "ltensor.testing"    -- T.testing.assert_close
require "ltensor.plot"       -- T.plot: SVG line, scatter, hist, heatmap
require "ltensor.image"      -- T.save_image / T.load_image (PNG, PPM/PGM)
require "ltensor.distributions"   -- T.distributions, T.Generator helpers, T.lgamma/T.digamma
require "ltensor.nn_init"    -- T.nn.init
require "ltensor.nn_utils"   -- T.nn.utils
require "ltensor.nn_rnn"     -- T.nn.RNN/LSTM/GRU and cells
require "ltensor.nn_attention" -- T.nn.MultiheadAttention, TransformerEncoder(Layer)
require "ltensor.nn.fusion"  -- T.nn.utils.fuse_conv_bn_eval, fuse_modules, Module:fuse (BatchNorm folding)
T.onnx = require "ltensor.onnx"    -- T.onnx.load: ONNX models as nn.Modules
return T
