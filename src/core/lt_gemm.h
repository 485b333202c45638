/*
 * lt_gemm.h -- built-in matrix multiply for builds without a BLAS library
 * (`make BLAS=none`), Lua-free.
 *
 * C (M x N) = A (M x K) * B (K x N) for float32, float64, complex64 and
 * complex128, with any element strides on every operand (transposed,
 * narrowed or expanded views).  Real types use a GotoBLAS-style blocked
 * algorithm: panels of A and B packed into cache-sized, contiguous blocks and
 * a register-tiled micro-kernel written with GCC vector extensions (cloned
 * for AVX2+FMA on x86-64).  Complex products are four real products on the
 * real and imaginary planes.  A single row or column goes through gemv.
 *
 * Never raises, never prints.  C must not overlap A or B.
 */
#ifndef LT_GEMM_H
#define LT_GEMM_H

#include "lt_dtype.h"

/* 0 when C was computed; -1 when dt is not one of the four dtypes or the
   packing buffers could not be allocated (C untouched: use a plain loop). */
int lt_gemm(ltensor_dtype dt, int64_t M, int64_t N, int64_t K,
            const void *A, int64_t ars, int64_t acs,
            const void *B, int64_t brs, int64_t bcs,
            void *C, int64_t crs, int64_t ccs);

/* The real kernels with scaling: C = alpha * A B + beta * C (C not read when
   beta == 0).  Exposed for the portable LAPACK and the benchmark. */
int lt_gemm_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t ars, int64_t acs,
                const float *B, int64_t brs, int64_t bcs, float beta, float *C, int64_t crs, int64_t ccs);
int lt_gemm_f64(int64_t M, int64_t N, int64_t K, double alpha, const double *A, int64_t ars, int64_t acs,
                const double *B, int64_t brs, int64_t bcs, double beta, double *C, int64_t crs, int64_t ccs);

#endif
