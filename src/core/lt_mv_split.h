/*
 * lt_mv_split.h -- a product with a single output row or column (a layer
 * at batch 1: Linear, an RNN step, mv) spread over the state's pool
 * (Lua-free core).
 *
 * Such a product reads every weight once for two flops each, so its speed
 * is the rate at which one core streams the weights from cache or memory.
 * Two cores stream about 1.5-2x as fast; OpenBLAS could split its gemv too,
 * but with its own threads, which wake late and spin against the state's
 * pool (one place for threads, as in lt_conv.c).  So the output is cut into
 * one band per pool thread, each computed by the built-in gemv on its own
 * thread.  Every output element is still one whole dot product on one
 * thread, so the result does not depend on the number of threads.
 */
#ifndef LT_MV_SPLIT_H
#define LT_MV_SPLIT_H

#include "lt_dtype.h"
#include "lt_parallel.h"

/* Multiply-adds below which the hand-off to the pool (a few microseconds)
   costs more than the second core saves: 2^17 is 512 KB of float32 weights,
   ~15-20 us of streaming on one core here. */
#define LT_MV_SPLIT_MIN ((int64_t)1 << 17)

/* C (M x N) = A (M x K) B (K x N) (+ C when accumulate) for M == 1 or
   N == 1, float32 or float64, split over the pool's threads.  Returns 1 when
   it computed C, 0 when the product is not of that kind or too small, or the
   pool has one thread (the caller computes it as before). */
int lt_mv_split(lt_pool *pool, ltensor_dtype dt, int accumulate, int64_t M, int64_t N, int64_t K, const char *A,
                int64_t ars, int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t crs,
                int64_t ccs);

#endif
