/*
 * lt_sort.h -- stable sort along one dim, and the first k of it (topk)
 * (Lua-free).  The caller has checked every error condition and allocated
 * the outputs and the scratch; these functions never fail.
 */
#ifndef LT_SORT_H
#define LT_SORT_H

#include "lt_tensor.h"
#include "lt_parallel.h"

/* Stable sort of each row along a 0-based dim; the first k of the order go
   to vals (in's dtype) and idx (int64, 1-based), contiguous, with dim size
   k (either may be NULL, not both).  Rows are split over the pool in
   `parts` ranges (lt_sort_parts), each with its own scratch: keys holds
   parts * shape[dim] 8-byte keys, perm and tmp parts * shape[dim] int64
   each (the caller allocates them).  Real dtypes only; NaN sorts as the
   largest value. */
int lt_sort_parts(const lt_tensor *in, int dim, lt_pool *pool);
void lt_sort(lt_tensor *vals, lt_tensor *idx, const lt_tensor *in, int dim, int descending, int64_t k,
             void *keys, int64_t *perm, int64_t *tmp, int parts, lt_pool *pool);

#endif
