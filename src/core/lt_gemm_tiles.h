/*
 * lt_gemm_tiles.h -- float products cut into tiles that OpenBLAS runs on
 * the calling thread (Lua-free core).
 *
 * OpenBLAS 0.3.21 runs a gemm on its own threads once M*N*K passes
 * 65536 * 4, and offers no per-call thread count (openblas_set_num_threads
 * is process-wide).  A product cut into tiles under that size always runs
 * on the calling thread, so threads come from one place, the state's pool
 * (callers split the work), at any T.set_num_threads.  Tiles of 64x64x64
 * run at OpenBLAS's one-thread speed or better on the conv shapes
 * (126-164 GFLOP/s on the resnet18 products, against 115-158 for one whole
 * call: each tile's packed operands stay in L1/L2).  BLAS=none: the
 * built-in gemm never threads, and gets the product whole.
 */
#ifndef LT_GEMM_TILES_H
#define LT_GEMM_TILES_H

#include <stdint.h>

/* Tiles hold at most this many multiply-adds (OpenBLAS's one-thread size). */
#define LT_GEMM_SERIAL_MNK 262144

/* C (M x N, row-major, ldc) = op(A) (M x K) @ op(B) (K x N) + beta C, with
   op(A) row-major A (lda) or, when ta, A^T of a row-major K x M (lda); the
   same for B.  beta == 0: C is not read.  The K tiles depend on K and the
   transposes alone, so any cut of the rows or columns the caller makes for
   threads sums every value in the same order. */
void lt_gemm_tiles_f32(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
void lt_gemm_tiles_f64(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                       const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

#endif
