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

#include <signal.h>
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

/* C (M x N, row-major with leading dimension ldc) += A (M x K) * B (K x N)
   for float32 and float64, A and B with any strides (a transposed operand is
   passed to BLAS as a flag, never copied).  Returns 0 when done (K == 0:
   C unchanged), -1 when dt is not float32/float64 (C untouched).  The fused
   linear layer's forward: C holds the bias rows, one gemm adds the product. */
int lt_mm_acc(ltensor_dtype dt, int64_t M, int64_t N, int64_t K,
              const char *A, int64_t ars, int64_t acs,
              const char *B, int64_t brs, int64_t bcs,
              char *C, int64_t ldc);

/* lt_mm and lt_mm_acc on the calling thread only: a product OpenBLAS would
   split over its threads runs in the built-in gemm instead.  For the parts
   of a loop already spread over the state's pool, and for a state whose
   T.set_num_threads is 1 (OpenBLAS's own thread count is process-wide). */
void lt_mm_1t(ltensor_dtype dt, int64_t M, int64_t N, int64_t K,
              const char *A, int64_t ars, int64_t acs,
              const char *B, int64_t brs, int64_t bcs,
              char *C, int64_t crs, int64_t ccs);
int lt_mm_acc_1t(ltensor_dtype dt, int64_t M, int64_t N, int64_t K,
                 const char *A, int64_t ars, int64_t acs,
                 const char *B, int64_t brs, int64_t bcs,
                 char *C, int64_t ldc);

/* The outputs each call of a float matrix-vector product covers when it
   runs on one thread: OpenBLAS's gemv in bands under its threading size
   (lt_blas.c), outs outputs of other-long dot products; 0 when the product
   is one call.  lt_mv_split cuts its parts on these bands, so that every
   output is computed by the same call at any thread count. */
int64_t lt_blas_gemv_band(ltensor_dtype dt, int64_t outs, int64_t other);

/* lt_mm (serial 0) or lt_mm_1t (serial 1) that can be stopped: *stop is
   read between panels of a large product (a few hundred ms of work each;
   one OpenBLAS call cannot be interrupted).  Returns 1 when *stop was set
   (C then partly written: discard it), 0 when C is complete.  stop may be
   NULL (never stops; the product runs whole). */
int lt_mm_stoppable(const volatile sig_atomic_t *stop, int serial, ltensor_dtype dt, int64_t M, int64_t N,
                    int64_t K, const char *A, int64_t ars, int64_t acs, const char *B, int64_t brs,
                    int64_t bcs, char *C, int64_t crs, int64_t ccs);

/* Products with M*N*K at or above this go to OpenBLAS's threads; smaller
   ones that OpenBLAS would still split over its threads (it does from
   65536*4) run single-threaded in the built-in blocked gemm (lt_gemm.c):
   the hand-off to OpenBLAS's threads costs tens of microseconds, more than
   such a product takes, and far more on a busy machine. */
#define LT_BLAS_MT_MIN ((int64_t)1 << 23)
#define LT_BLAS_ST_MAX ((int64_t)65536 * 4)

#endif
