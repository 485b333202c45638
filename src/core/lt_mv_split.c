/* lt_mv_split.c -- see lt_mv_split.h. */
#include "lt_mv_split.h"
#include "lt_blas.h"
#include "lt_gemm.h"

typedef struct {
  ltensor_dtype dt;
  int accumulate, by_rows;   /* by_rows: N == 1, the bands are rows of A and C */
  int64_t M, N, K;
  const char *A, *B;
  int64_t ars, acs, brs, bcs, crs, ccs;
  char *C;
  int64_t band;   /* outputs per unit of work: lt_blas_gemv_band's, or 1 (the built-in gemv) */
} mv_job;

static void mv_band(void *ctx, int64_t lo, int64_t hi, int part) {
  (void)part;
  const mv_job *j = (const mv_job *)ctx;
  int64_t len = j->by_rows ? j->M : j->N;
  lo *= j->band;
  hi = hi * j->band < len ? hi * j->band : len;
  size_t es = lt_itemsize(j->dt);
  const char *A = j->A, *B = j->B;
  char *C = j->C;
  int64_t M = j->M, N = j->N;
  if (j->by_rows) {
    A += (size_t)(lo * j->ars) * es;
    C += (size_t)(lo * j->crs) * es;
    M = hi - lo;
  } else {
    B += (size_t)(lo * j->bcs) * es;
    C += (size_t)(lo * j->ccs) * es;
    N = hi - lo;
  }
  /* OpenBLAS's one-thread gemv kernel on whole bands of lt_blas_gemv_band,
     the calls the product makes at one thread: the built-in gemv took
     333-347 us a token of the LSTM language model where OpenBLAS's took
     265-288, so the default two threads ran slower than one (BLAS=none:
     no bands, band 1) */
  if (j->band > 1) {
    if (j->accumulate)   /* (one row, contiguous: see lt_mv_split) */
      lt_mm_acc_1t(j->dt, M, N, j->K, A, j->ars, j->acs, B, j->brs, j->bcs, C, N);
    else
      lt_mm_1t(j->dt, M, N, j->K, A, j->ars, j->acs, B, j->brs, j->bcs, C, j->crs, j->ccs);
    return;
  }
  /* one row or column: lt_gemm's gemv, which allocates nothing (cannot fail) */
  if (j->dt == LTENSOR_FLOAT32)
    lt_gemm_f32(M, N, j->K, 1.0f, (const float *)(const void *)A, j->ars, j->acs, (const float *)(const void *)B,
                j->brs, j->bcs, j->accumulate ? 1.0f : 0.0f, (float *)(void *)C, j->crs, j->ccs);
  else
    lt_gemm_f64(M, N, j->K, 1.0, (const double *)(const void *)A, j->ars, j->acs, (const double *)(const void *)B,
                j->brs, j->bcs, j->accumulate ? 1.0 : 0.0, (double *)(void *)C, j->crs, j->ccs);
}

int lt_mv_split(lt_pool *pool, ltensor_dtype dt, int accumulate, int64_t M, int64_t N, int64_t K, const char *A,
                int64_t ars, int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t crs,
                int64_t ccs) {
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) return 0;
  if (M != 1 && N != 1) return 0;
  if (K <= 0 || M <= 0 || N <= 0) return 0;
  int64_t len = N == 1 ? M : N;   /* the output's length (M == N == 1: a dot, never split) */
  if (len < 2 || (double)len * (double)K < (double)LT_MV_SPLIT_MIN) return 0;
  int nt = lt_pool_threads(pool);
  if (nt < 2) return 0;
  if ((double)nt > (double)len * (double)K / (double)(LT_MV_SPLIT_MIN / 2)) nt = (int)(len * K / (LT_MV_SPLIT_MIN / 2));
  if (nt > len) nt = (int)len;
  if (nt < 2) return 0;
  /* OpenBLAS's bands when the one-thread product has them (and the output
     row is contiguous, as lt_mm_acc needs); else single outputs, the
     built-in gemv's */
  int64_t band = lt_blas_gemv_band(dt, len, K);
  if (accumulate && (N == 1 || ccs != 1)) band = 0;   /* (lt_mm_acc: gemv for one row only) */
  if (band < 2) band = 1;
  int64_t units = (len + band - 1) / band;
  if (nt > units) nt = (int)units;
  if (nt < 2) return 0;
  mv_job j = { dt, accumulate, N == 1, M, N, K, A, B, ars, acs, brs, bcs, crs, ccs, C, band };
  lt_parallel_run(pool, nt, units, mv_band, &j);
  return 1;
}
