/* lt_gemm.c -- built-in blocked gemm/gemv for the BLAS=none build.  See
   lt_gemm.h; the per-type algorithm is lt_gemm_kernel.h. */
#include <stdlib.h>
#include <string.h>
#include "lt_gemm.h"
#include "lt_cpu.h"

/* The micro-kernel is compiled twice on x86-64: once for the baseline
   (SSE2) and once for AVX2 + FMA, chosen per call from the CPU's features,
   so one binary runs everywhere and uses the wide units where they exist.
   (Not target_clones("arch=haswell"): that dispatches on the CPU model, and
   a newer server CPU is not a "haswell".) */
#if defined(__GNUC__) && defined(__x86_64__)
#define LT_GEMM_X86 1
static int lt_gemm_has_avx2(void) {
  lt_cpu_init();   /* idempotent; needed before constructors have run */
  return lt_cpu_has_avx2_fma();
}
#endif

/* Register tiles: 6 x 16 floats / 6 x 8 doubles are 12 accumulators of 256
   bits, leaving registers for the B row and the A broadcast (16 ymm). */
typedef float v8sf __attribute__((vector_size(32)));
typedef double v4df __attribute__((vector_size(32)));

#define T float
#define V v8sf
#define VL 8
#define MR 6
#define NR 16
#define MC 144
#define KC 256
#define NC 3072
#define SFX f32
#include "lt_gemm_kernel.h"   /* (undefines its parameters) */

#define T double
#define V v4df
#define VL 4
#define MR 6
#define NR 8
#define MC 96
#define KC 256
#define NC 2048
#define SFX f64
#include "lt_gemm_kernel.h"   /* (undefines its parameters) */

/* Complex C = A B on the real and imaginary planes (each a strided real
   matrix with doubled strides): Cr = Ar Br - Ai Bi, Ci = Ar Bi + Ai Br. */
#define CPLX(R, SFX)                                                                                 \
  static int cgemm_##SFX(int64_t M, int64_t N, int64_t K, const R *A, int64_t ars, int64_t acs,      \
                         const R *B, int64_t brs, int64_t bcs, R *C, int64_t crs, int64_t ccs) {     \
    ars *= 2; acs *= 2; brs *= 2; bcs *= 2; crs *= 2; ccs *= 2;                                      \
    if (lt_gemm_##SFX(M, N, K, 1, A, ars, acs, B, brs, bcs, 0, C, crs, ccs)) return -1;               \
    if (lt_gemm_##SFX(M, N, K, -1, A + 1, ars, acs, B + 1, brs, bcs, 1, C, crs, ccs)) return -1;     \
    if (lt_gemm_##SFX(M, N, K, 1, A, ars, acs, B + 1, brs, bcs, 0, C + 1, crs, ccs)) return -1;      \
    return lt_gemm_##SFX(M, N, K, 1, A + 1, ars, acs, B, brs, bcs, 1, C + 1, crs, ccs);              \
  }
CPLX(float, f32)
CPLX(double, f64)

int lt_gemm(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t ars, int64_t acs,
            const void *B, int64_t brs, int64_t bcs, void *C, int64_t crs, int64_t ccs) {
  switch (dt) {
    case LTENSOR_FLOAT32: return lt_gemm_f32(M, N, K, 1, A, ars, acs, B, brs, bcs, 0, C, crs, ccs);
    case LTENSOR_FLOAT64: return lt_gemm_f64(M, N, K, 1, A, ars, acs, B, brs, bcs, 0, C, crs, ccs);
    case LTENSOR_COMPLEX64: return cgemm_f32(M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs);
    case LTENSOR_COMPLEX128: return cgemm_f64(M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs);
    default: return -1;
  }
}
