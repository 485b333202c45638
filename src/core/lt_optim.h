/*
 * lt_optim.h -- fused optimizer update kernels (the C half of
 * lua/ltensor/optim.lua, called through src/binding/l_optim.c); Lua-free.
 *
 * One call updates n contiguous elements of a float32/float64 parameter in
 * place from its gradient and its state buffers, in one pass, with PyTorch
 * 1.13's per-element formulas in its operation order (see lt_optim.c).
 */
#ifndef LT_OPTIM_H
#define LT_OPTIM_H

#include <stdint.h>
#include "ltensor_types.h"

enum {
  LT_OPTIM_SGD = 1,       /* b1 momentum_buffer; h: lr, momentum, dampening, wd, nesterov, maximize, first */
  LT_OPTIM_ADAM = 2,      /* b1 exp_avg, b2 exp_avg_sq, b3 max_exp_avg_sq|nil;
                      h: lr, beta1, beta2, eps, wd, maximize, decoupled, step_size, bc2_sqrt */
  LT_OPTIM_RMSPROP = 3,   /* b1 square_avg, b2 momentum_buffer|nil, b3 grad_avg|nil;
                      h: lr, alpha, eps, wd, momentum, maximize */
  LT_OPTIM_ADAGRAD = 4,   /* b1 sum; h: clr, eps, wd, maximize */
  LT_OPTIM_ADADELTA = 5,  /* b1 square_avg, b2 acc_delta; h: lr, rho, eps, wd, maximize */
  LT_OPTIM_ADAMAX = 6,    /* b1 exp_avg, b2 exp_inf; h: clr, beta1, beta2, eps, wd, maximize */
  LT_OPTIM_NADAM = 7,     /* b1 exp_avg, b2 exp_avg_sq; h: beta1, beta2, eps, wd, bc2, c_grad, c_avg */
  LT_OPTIM_RADAM = 8,     /* b1 exp_avg, b2 exp_avg_sq;
                      h: lr, beta1, beta2, eps, wd, bc1, rectify, rect, bc2_sqrt */
  LT_OPTIM_ADAMW = 9,     /* Adam's kernel under AdamW's name (h[6] = decoupled) */
  LT_OPTIM_LAST = 9
};

#define LT_OPTIM_NH 9   /* hyper-parameters h[0..8] */

/* kind: an LT_OPTIM_* kernel; dt: LTENSOR_FLOAT32 or LTENSOR_FLOAT64; p, g
   and the buffers b[0..2] (NULL where the variant has none) contiguous
   arrays of n elements of dt.  Returns 0, or -1 for an unknown kind or
   dtype (nothing written). */
int lt_optim_update(int kind, ltensor_dtype dt, int64_t n, void *p, const void *g, void *const b[3],
                    const double *h);

#endif
