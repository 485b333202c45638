/*
 * lt_norm.h -- fused normalisation and loss kernels (Lua-free).
 *
 * Batch, layer and group norm each take two passes over the data: one for
 * the statistics (shifted sums accumulated in double: one pass, and no
 * cancellation when the mean is large next to the spread), one to write the
 * output; their backward likewise (the two sums the gradient needs, then the
 * gradient).  Cross entropy fuses log_softmax with nll over rows.
 *
 * Every tensor argument is contiguous and, apart from class targets
 * (int64), of one floating dtype `dt` (float32 or float64: the binding
 * casts anything else).  Work is split over up to `nt` threads; the kernels
 * never fail and never touch Lua.
 *
 * Layouts
 *  - rows: x is (R, D); each row is one group.  Affine parameters are
 *    per column (layer norm: G == 0) or per channel (group norm: a row r
 *    covers channels (r % G) * Cg ... + Cg - 1, each S consecutive columns).
 *  - channels: x is (N, C, S); channel c's group is x[:, c, :] (batch norm).
 * mean/rstd hold one value per group in dtype dt; rstd = 1/sqrt(var + eps)
 * with the biased variance.  w/b may be NULL.
 */
#ifndef LT_NORM_H
#define LT_NORM_H

#include <stdint.h>
#include "lt_tensor.h"
#include "lt_parallel.h"

void lt_norm_rows_fwd(ltensor_dtype dt, const void *x, void *y, void *mean, void *rstd,
                      int64_t R, int64_t D, double eps, const void *w, const void *b,
                      int64_t G, int64_t Cg, int64_t S, lt_pool *pool);
/* dx (may be NULL) and, summed over rows, dw/db (each may be NULL: layer
   norm's have D entries, group norm's G*Cg). */
void lt_norm_rows_bwd(ltensor_dtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                      const void *w, int64_t R, int64_t D, int64_t G, int64_t Cg, int64_t S,
                      void *dx, void *dw, void *db, lt_pool *pool);

/* var_out (may be NULL) receives each channel's biased variance. */
void lt_norm_chan_fwd(ltensor_dtype dt, const void *x, void *y, void *mean, void *rstd, void *var_out,
                      int64_t N, int64_t C, int64_t S, double eps, const void *w, const void *b, lt_pool *pool);
void lt_norm_chan_bwd(ltensor_dtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                      const void *w, int64_t N, int64_t C, int64_t S, void *dx, void *dw, void *db, lt_pool *pool);

/* Inference batch norm from running statistics: scale[c] = w[c] / sqrt(rv[c]
   + eps), y = (x - rm[c]) * scale[c] + b[c], in one pass. */
void lt_norm_chan_eval(ltensor_dtype dt, const void *x, void *y, void *scale, int64_t N, int64_t C, int64_t S,
                       double eps, const void *w, const void *b, const void *rm, const void *rv, lt_pool *pool);

/* Cross entropy over rows of x (R, K): loss[r] = -w[t] (x[r,t] - lse[r])
   (with_lse: lse = logsumexp of the row; else lse = 0, i.e. nll_loss on
   log-probabilities), 0 for a row whose target is `ignore` (has_ignore).
   Targets are 1-based; the caller checked their range.  wsum[0] receives
   the sum of the counted rows' weights. */
void lt_xent_fwd(ltensor_dtype dt, const void *x, const int64_t *target, const void *w,
                 int64_t R, int64_t K, int with_lse, int has_ignore, int64_t ignore,
                 void *loss, void *lse, double *wsum, lt_pool *pool);
/* dx[r, j] = g[r] w[t] (softmax(x)[r, j] - [j == t]) (nll: -g[r] w[t] at t only) */
void lt_xent_bwd(ltensor_dtype dt, const void *g, const void *x, const int64_t *target, const void *w,
                 const void *lse, int64_t R, int64_t K, int with_lse, int has_ignore, int64_t ignore,
                 void *dx, lt_pool *pool);

#endif
