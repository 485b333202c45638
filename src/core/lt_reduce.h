/*
 * lt_reduce.h -- reduction kernels (Lua-free).  Scans and softmax:
 * lt_scan.h; sort: lt_sort.h.
 *
 * Reductions take an input view and a bit mask of the dims to reduce (bit d
 * = 0-based dim d) and write into `out`, a contiguous tensor whose elements
 * are the kept dims in row-major order (its shape may carry keepdim's size-1
 * dims: the layout is the same).  The caller picks the output dtype and has
 * already checked every error condition; these functions never fail.
 *
 * Accumulation: integral sums/products in uint64 (wrapping like PyTorch's
 * int64), floating ones in double (float32 sums of unit-stride runs in
 * float32 lanes over blocks of 512, block sums in double: 2^24+ ones still
 * sum exactly), complex ones in double complex.
 *
 * pool: the state's thread pool (lt_parallel.h; NULL: one thread).  Work is
 * split by the one grain policy (LT_GRAIN units per thread; an element of
 * the generic paths is one unit, of the vectorised sum/max passes an
 * eighth); results may differ in the last float bits between thread counts
 * (sums add per-part partials, combined in order).
 */
#ifndef LT_REDUCE_H
#define LT_REDUCE_H

#include "lt_tensor.h"
#include "lt_parallel.h"

/* sum (mean != 0: divided by the reduced count; 0 elements give nan) */
void lt_reduce_sum(lt_tensor *out, const lt_tensor *in, uint32_t mask, int mean, lt_pool *pool);
void lt_reduce_prod(lt_tensor *out, const lt_tensor *in, uint32_t mask, lt_pool *pool);
/* max/min with NaN propagation; vals and/or idx may be NULL.  idx (int64)
   receives the 1-based position of the first extreme element in the
   row-major order of the reduced dims. Real dtypes only. */
void lt_reduce_minmax(lt_tensor *vals, lt_tensor *idx, const lt_tensor *in, uint32_t mask, int is_max, lt_pool *pool);
/* all/any: out is bool or uint8 (1/0) */
void lt_reduce_allany(lt_tensor *out, const lt_tensor *in, uint32_t mask, int is_all, lt_pool *pool);
/* var (take_sqrt: std); divisor max(0, N - correction); complex -> |x - mean|^2 */
void lt_reduce_var(lt_tensor *out, const lt_tensor *in, uint32_t mask, double correction, int take_sqrt, lt_pool *pool);
/* vector p-norm over the reduced elements (p may be +-inf or 0) */
void lt_reduce_norm(lt_tensor *out, const lt_tensor *in, uint32_t mask, double p, lt_pool *pool);
/* log(sum(exp(x))) computed with the max subtracted; real dtypes only */
void lt_reduce_logsumexp(lt_tensor *out, const lt_tensor *in, uint32_t mask, lt_pool *pool);

#endif
