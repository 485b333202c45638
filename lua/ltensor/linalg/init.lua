-- ltensor.linalg: T.linalg, PyTorch 1.13's torch.linalg over the LAPACK inside
-- OpenBLAS (the batched kernels T._lapack_* of src/binding/l_lapack.c).
--
-- This module does what PyTorch does around its kernels: argument checks and
-- error messages (every one starts with "ltensor.linalg.<fn>:"), the vector
-- case of B, broadcasting of batch dims (by expanding, so that the gradient of
-- a broadcast operand is summed back by expand's own backward), options
-- tables, and the gradients.  An op built from differentiable ops (norms,
-- cross, vecdot, multi_dot, matrix_power, matrix_rank) gets autograd for
-- free; an op that calls LAPACK is an autograd.Function whose backward is
-- PyTorch's formula (torch/csrc/autograd/FunctionsManual.cpp), written with
-- differentiable ops.  Results that cannot have a gradient (info, pivots,
-- rank) are returned beside the Function's outputs, never through it.
local L = require "ltensor.linalg.common"
require "ltensor.linalg.solve"
require "ltensor.linalg.decompositions"
require "ltensor.linalg.norms"
require "ltensor.linalg.matrix_functions"
return L.linalg
