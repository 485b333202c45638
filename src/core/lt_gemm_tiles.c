/* lt_gemm_tiles.c -- see lt_gemm_tiles.h. */
#include <string.h>
#include "lt_gemm_tiles.h"
#ifdef LT_BLAS_NONE
#include "lt_gemm.h"          /* make BLAS=none: the built-in gemm */
#define GEMM_WHOLE 1
#else
#include <cblas.h>
#ifndef OPENBLAS_CONST
typedef int blasint;          /* a non-OpenBLAS cblas.h: LP64 ints */
#endif
#define GEMM_WHOLE 0
#endif
#define GEMM_TILE 64
#define TN_TILE 32       /* rows and columns of a transposed-B tile (see below) */
#define TN_TILE_K 256

/* ---- one product on the calling thread ----------------------------------- */
#ifdef LT_BLAS_NONE
/* row-major op(A) (M x K) with leading dimension lda: strides (lda, 1), or
   (1, lda) when transposed */
static inline void gemm_float(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  lt_gemm_f32(M, N, K, 1.0f, A, ta ? 1 : lda, ta ? lda : 1, B, tb ? 1 : ldb, tb ? ldb : 1, beta, C, ldc, 1);
}
static inline void gemm_double(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                               const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  lt_gemm_f64(M, N, K, 1.0, A, ta ? 1 : lda, ta ? lda : 1, B, tb ? 1 : ldb, tb ? ldb : 1, beta, C, ldc, 1);
}
#else
static inline void gemm_float(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)M,
              (blasint)N, (blasint)K, 1.0f, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}
static inline void gemm_double(int ta, int tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                               const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)M,
              (blasint)N, (blasint)K, 1.0, A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
}
#endif

/* C (M x N, ldc) = op(A) (M x K) @ op(B) + beta C, in tiles of at most
   LT_GEMM_SERIAL_MNK multiply-adds (GEMM_TILE rows and K values, or all of K
   up to twice that; N takes the rest of the budget); the K tiles after the
   first add (beta = 1). */
#define DEFINE_GEMM_TILES(T, S)                                                                                \
  void lt_gemm_tiles_##S(int ta, int tb, int64_t M, int64_t N, int64_t K, const T *A, int64_t lda,     \
                             const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {                         \
    if (M <= 0 || N <= 0) return;                                                                          \
    if (GEMM_WHOLE || K <= 0 || (double)M * (double)N * (double)K <= (double)LT_GEMM_SERIAL_MNK) { \
      if (K > 0) gemm_##T(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);                                  \
      else if (beta == 0) for (int64_t i = 0; i < M; i++) memset(C + i * ldc, 0, sizeof(T) * (size_t)N);  \
      return;                                                                                              \
    }                                                                                                      \
    if ((double)M * (double)N * (double)K <= 4.0 * LT_GEMM_SERIAL_MNK) {                                    \
      /* a small product (a few-channel CNN): bands of rows with K whole, the fewest calls */             \
      int64_t parts = (int64_t)((double)M * (double)N * (double)K / LT_GEMM_SERIAL_MNK) + 1, rb;             \
      rb = (M + parts - 1) / parts;                                                                        \
      for (int64_t m0 = 0; m0 < M; m0 += rb)                                                               \
        gemm_##T(ta, tb, M - m0 < rb ? M - m0 : rb, N, K, ta ? A + m0 : A + m0 * lda, lda, B, ldb, beta,  \
                 C + m0 * ldc, ldc);                                                                       \
      return;                                                                                              \
    }                                                                                                      \
    /* the K tiles depend on K, ta and tb alone, so that the row blocks and channel slices the binding    \
       cuts for threads (products over 4 x LT_GEMM_SERIAL_MNK) sum every value in the same order */       \
    int64_t kb = K <= 2 * GEMM_TILE ? K : GEMM_TILE, mb = M < GEMM_TILE ? M : GEMM_TILE;                   \
    if (tb && !ta) {                                                                                       \
      /* B transposed (x @ W^T: every Linear): OpenBLAS runs it as "tn", whose                             \
         small-matrix kernel it permits only for m*n <= 1200, so 64x64 tiles                               \
         packed both operands per call (packing was 31% of a transformer's                                 \
         time at one thread); 32x32 tiles with K up to 512 stay unpacked */                                \
      kb = K <= 2 * TN_TILE_K ? K : TN_TILE_K;                                                             \
      mb = M < TN_TILE ? M : TN_TILE;                                                                      \
    }                                                                                                      \
    int64_t nb = LT_GEMM_SERIAL_MNK / (mb * kb);                                                              \
    if (tb && !ta && nb > TN_TILE) nb = TN_TILE;                                                           \
    if (nb > 16) nb -= nb % 16;   /* whole vector columns: 64x48x72 tiles ran 1.4x faster than 64x56x72 */ \
    if (nb > N) nb = N;                                                                                    \
    if (nb < 1) nb = 1;                                                                                    \
    for (int64_t m0 = 0; m0 < M; m0 += mb) {                                                               \
      int64_t m = M - m0 < mb ? M - m0 : mb;                                                               \
      for (int64_t n0 = 0; n0 < N; n0 += nb) {                                                             \
        int64_t n = N - n0 < nb ? N - n0 : nb;                                                             \
        for (int64_t k0 = 0; k0 < K; k0 += kb) {                                                           \
          int64_t k = K - k0 < kb ? K - k0 : kb;                                                           \
          const T *a = ta ? A + k0 * lda + m0 : A + m0 * lda + k0;                                         \
          const T *b = tb ? B + n0 * ldb + k0 : B + k0 * ldb + n0;                                         \
          gemm_##T(ta, tb, m, n, k, a, lda, b, ldb, k0 == 0 ? beta : (T)1, C + m0 * ldc + n0, ldc);       \
        }                                                                                                  \
      }                                                                                                    \
    }                                                                                                      \
  }
DEFINE_GEMM_TILES(float, f32)
DEFINE_GEMM_TILES(double, f64)
#undef DEFINE_GEMM_TILES
