/*
 * lt_scan.h -- scans and softmax along one dim (Lua-free).
 *
 * out is a contiguous tensor of in's shape; dim is 0-based.  The caller
 * picks the output dtype and has already checked every error condition;
 * these functions never fail.  Scans accumulate as the reductions of
 * lt_reduce.h do (integers in uint64, wrapping; floats in double; complex
 * in double complex).
 *
 * pool: the state's thread pool (lt_parallel.h; NULL: one thread), split by
 * the one grain policy (LT_GRAIN units per thread; an element of softmax
 * and of the generic paths is one unit, of the vectorised cumsum an
 * eighth).
 */
#ifndef LT_SCAN_H
#define LT_SCAN_H

#include "lt_tensor.h"
#include "lt_parallel.h"

/* inclusive scans along one 0-based dim; out has in's shape (contiguous) */
void lt_scan(lt_tensor *out, const lt_tensor *in, int dim, int is_prod, lt_pool *pool);
/* softmax / log_softmax along one 0-based dim; out has in's shape; real dtypes */
void lt_softmax(lt_tensor *out, const lt_tensor *in, int dim, int is_log, lt_pool *pool);

#endif
