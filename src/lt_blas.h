/*
 * lt_blas.h -- strided matrix multiply (Lua-free): OpenBLAS for
 * float32/float64/complex64/complex128, a plain C loop for every other dtype.
 *
 * Strides are in elements.  Functions here never raise and never print:
 * every BLAS argument is validated first, because OpenBLAS reports bad
 * arguments on stdout and then returns without computing anything.
 */
#ifndef LT_BLAS_H
#define LT_BLAS_H

#include "lt_dtype.h"

/* 1 if dt is computed by BLAS (when the operand layouts allow it). */
int lt_blas_dtype(ltensor_dtype dt);

/* 1 if a rows x cols matrix with strides (rs, cs) can be handed to BLAS
   without a copy: row-major (unit column stride) or column-major (unit row
   stride, passed with the transpose flag), with a valid leading dimension. */
int lt_blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

/* C (M x N) = A (M x K) * B (K x N), all of dtype dt, C written (never read;
   K == 0 gives zeros).  C must not overlap A or B.  Uses BLAS gemm/gemv when
   dt and every layout allow it, otherwise an exact loop (integers wrap,
   bool is "any a&b", half types accumulate in float32). */
void lt_mm(ltensor_dtype dt, int64_t M, int64_t N, int64_t K,
           const char *A, int64_t ars, int64_t acs,
           const char *B, int64_t brs, int64_t bcs,
           char *C, int64_t crs, int64_t ccs);

#endif
