/* lt_blas.c -- strided matrix multiply: OpenBLAS gemm/gemv when the layout
   allows it, an exact C loop otherwise.  See lt_blas.h. */
#include <limits.h>
#include "lt_blas.h"
#include "lt_gemm.h"   /* the built-in gemm: BLAS=none, and what OpenBLAS cannot read */
#include "lt_gemm_tiles.h"
#ifdef LT_BLAS_NONE
typedef int blasint;
#else
#include <cblas.h>
#ifndef OPENBLAS_CONST
typedef int blasint;   /* a non-OpenBLAS cblas.h (FlexiBLAS, netlib): LP64 ints */
#endif
#endif

/* blasint is 32-bit in Debian's libopenblas (64-bit only in libopenblas64):
   sizes and leading dimensions beyond it go to the C loop. */
#define BLAS_MAX ((int64_t)(sizeof(blasint) >= 8 ? INT64_MAX : INT_MAX))

int lt_blas_dtype(ltensor_dtype dt) {
  return dt == LTENSOR_FLOAT32 || dt == LTENSOR_FLOAT64 || dt == LTENSOR_COMPLEX64 ||
         dt == LTENSOR_COMPLEX128;
}

/* How BLAS can read a rows x cols matrix with strides (rs, cs):
   1 row-major (NoTrans, ld = row stride), 2 column-major (Trans, ld = column
   stride), 0 not at all (stride-0 or neither stride is 1).  A dim of size 1
   may have any stride, so its stride is ignored and ld gets the minimum
   value BLAS accepts (it checks ld >= max(1, inner size)). */
static int layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld) {
  int64_t minrow = cols > 1 ? cols : 1, mincol = rows > 1 ? rows : 1;
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= minrow)) {
    *ld = rows <= 1 ? minrow : rs;
    return *ld <= BLAS_MAX ? 1 : 0;
  }
  if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= mincol)) {
    *ld = cols <= 1 ? mincol : cs;
    return *ld <= BLAS_MAX ? 2 : 0;
  }
  return 0;
}

int lt_blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  int64_t ld;
  return rows <= BLAS_MAX && cols <= BLAS_MAX && layout(rows, cols, rs, cs, &ld) != 0;
}

#ifndef LT_BLAS_NONE
/* ---- BLAS calls (arguments already validated) --------------------------- */
static void gemm(ltensor_dtype dt, int la, int lb, int64_t M, int64_t N, int64_t K, const void *A,
                 int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc) {
  enum CBLAS_TRANSPOSE ta = la == 2 ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE tb = lb == 2 ? CblasTrans : CblasNoTrans;
  blasint m = (blasint)M, n = (blasint)N, k = (blasint)K;
  blasint a = (blasint)lda, b = (blasint)ldb, c = (blasint)ldc;
  switch (dt) {
  case LTENSOR_FLOAT32: cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, A, a, B, b, 0.0f, C, c); break;
  case LTENSOR_FLOAT64: cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, A, a, B, b, 0.0, C, c); break;
  case LTENSOR_COMPLEX64: {
    const lt_cfloat one = 1.0f, zero = 0.0f;
    cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &one, A, a, B, b, &zero, C, c);
    break;
  }
  default: {
    const lt_cdouble one = 1.0, zero = 0.0;
    cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &one, A, a, B, b, &zero, C, c);
  }
  }
}

/* OpenBLAS runs a matrix-vector product on its own threads from m * n =
   2304 * GEMM_MULTITHREAD_THRESHOLD (4) on (interface/gemv.c), far below
   gemm's size, and its workers then poll (sched_yield) for a while after
   every call, beside the state's pool and the caller: a batch-1 CNN's last
   Linear (1568 -> 10) kept a worker spinning through the whole forward pass,
   which ran 1.4x slower than with OPENBLAS_NUM_THREADS=1.  So a float gemv
   of that size or more runs as bands of outputs under it: OpenBLAS's own
   single-thread kernel on each (faster than the built-in gemv: 265-288 us
   against 333-347 us per token of the LSTM language model at one thread),
   never its threads; products large enough to repay two threads are split
   over the state's pool before they get here (lt_mv_split). */
#define GEMV_ST_MAX ((int64_t)2304 * 4)
static void gemv1(ltensor_dtype dt, int trans, int64_t rows, int64_t cols, const void *A, int64_t lda,
                  const void *x, int64_t incx, void *y, int64_t incy, int acc);
/* y = op(A) x with A stored row-major as rows x cols (leading dim lda). */
/* y = op(A) x (+ y when acc: the fused linear layer's bias rows) */
static void gemv(ltensor_dtype dt, int trans, int64_t rows, int64_t cols, const void *A, int64_t lda,
                 const void *x, int64_t incx, void *y, int64_t incy, int acc) {
  int64_t other = trans ? rows : cols;   /* the length of each output's dot product */
  int64_t outs = trans ? cols : rows, band = lt_blas_gemv_band(dt, outs, other);
  if (!band) {
    gemv1(dt, trans, rows, cols, A, lda, x, incx, y, incy, acc);
    return;
  }
  size_t sz = lt_itemsize(dt);
  for (int64_t o = 0; o < outs; o += band) {
    int64_t n = outs - o < band ? outs - o : band;
    const char *a = (const char *)A + (size_t)(trans ? o : o * lda) * sz;
    char *yo = (char *)y + (size_t)(o * incy) * sz;
    if (trans) gemv1(dt, 1, rows, n, a, lda, x, incx, yo, incy, acc);
    else gemv1(dt, 0, n, cols, a, lda, x, incx, yo, incy, acc);
  }
}
static void gemv1(ltensor_dtype dt, int trans, int64_t rows, int64_t cols, const void *A, int64_t lda,
                  const void *x, int64_t incx, void *y, int64_t incy, int acc) {
  enum CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
  blasint r = (blasint)rows, c = (blasint)cols, a = (blasint)lda, ix = (blasint)incx, iy = (blasint)incy;
  switch (dt) {
  case LTENSOR_FLOAT32: cblas_sgemv(CblasRowMajor, t, r, c, 1.0f, A, a, x, ix, acc ? 1.0f : 0.0f, y, iy); break;
  case LTENSOR_FLOAT64: cblas_dgemv(CblasRowMajor, t, r, c, 1.0, A, a, x, ix, acc ? 1.0 : 0.0, y, iy); break;
  case LTENSOR_COMPLEX64: {
    const lt_cfloat one = 1.0f, beta = acc ? 1.0f : 0.0f;
    cblas_cgemv(CblasRowMajor, t, r, c, &one, A, a, x, ix, &beta, y, iy);
    break;
  }
  default: {
    const lt_cdouble one = 1.0, beta = acc ? 1.0 : 0.0;
    cblas_zgemv(CblasRowMajor, t, r, c, &one, A, a, x, ix, &beta, y, iy);
  }
  }
}

/* A usable vector increment: any stride for a length-1 vector, else a
   positive one BLAS can take (0 would be rejected, negative means reversed). */
static int vec_inc(int64_t n, int64_t stride, int64_t *inc) {
  *inc = n <= 1 ? 1 : stride;
  return *inc > 0 && *inc <= BLAS_MAX;
}

/* 1 if BLAS computed C; 0 if some layout needs the C loop. */
static int try_blas(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars,
                    int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t crs,
                    int64_t ccs) {
  if (M > BLAS_MAX || N > BLAS_MAX || K > BLAS_MAX) return 0;
  int64_t lda = 0, ldb = 0, incx, incy;
  int la = layout(M, K, ars, acs, &lda), lb = layout(K, N, brs, bcs, &ldb);
  /* matrix @ vector (mv, dot): gemv on A */
  if (N == 1 && la && vec_inc(K, brs, &incx) && vec_inc(M, crs, &incy)) {
    if (la == 1) gemv(dt, 0, M, K, A, lda, B, incx, C, incy, 0);
    else gemv(dt, 1, K, M, A, lda, B, incx, C, incy, 0);
    return 1;
  }
  /* vector @ matrix: y = B^T x */
  if (M == 1 && lb && vec_inc(K, acs, &incx) && vec_inc(N, ccs, &incy)) {
    if (lb == 1) gemv(dt, 1, K, N, B, ldb, A, incx, C, incy, 0);
    else gemv(dt, 0, N, K, B, ldb, A, incx, C, incy, 0);
    return 1;
  }
  if (!la || !lb) return 0;
  int64_t ldc;
  if (layout(M, N, crs, ccs, &ldc) != 1) return 0;   /* C must be row-major */
  gemm(dt, la, lb, M, N, K, A, lda, B, ldb, C, ldc);
  return 1;
}

/* A float product that must stay on the calling thread (a mid-sized one, or
   any under T.set_num_threads(1)) through OpenBLAS in tiles under its
   threading size (lt_gemm_tiles): the built-in gemm it went to before ran
   a transformer's products at half OpenBLAS's speed (its packing was a
   third of the time).  1 if done; 0 if a layout needs another path. */
static int tiled_blas(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars, int64_t acs,
                      const char *B, int64_t brs, int64_t bcs, char *C, int64_t ldc, int accumulate) {
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) return 0;
  if (M > BLAS_MAX || N > BLAS_MAX || K > BLAS_MAX || ldc > BLAS_MAX || M <= 1 || N <= 1) return 0;
  int64_t lda = 0, ldb = 0;
  int la = layout(M, K, ars, acs, &lda), lb = layout(K, N, brs, bcs, &ldb);
  if (!la || !lb) return 0;
  if (dt == LTENSOR_FLOAT32)
    lt_gemm_tiles_f32(la == 2, lb == 2, M, N, K, (const float *)(const void *)A, lda, (const float *)(const void *)B,
                      ldb, accumulate ? 1.0f : 0.0f, (float *)(void *)C, ldc);
  else
    lt_gemm_tiles_f64(la == 2, lb == 2, M, N, K, (const double *)(const void *)A, lda,
                      (const double *)(const void *)B, ldb, accumulate ? 1.0 : 0.0, (double *)(void *)C, ldc);
  return 1;
}

#endif /* LT_BLAS_NONE */

int64_t lt_blas_gemv_band(ltensor_dtype dt, int64_t outs, int64_t other) {
#ifdef LT_BLAS_NONE
  (void)dt; (void)outs; (void)other;
  return 0;   /* (the built-in gemv: one call) */
#else
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) return 0;
  if (outs * other < GEMV_ST_MAX || other >= GEMV_ST_MAX) return 0;
  return (GEMV_ST_MAX - 1) / other;   /* (whatever OpenBLAS's thread count: the same calls) */
#endif
}

/* ---- the C loop, one instance per dtype ---------------------------------- */
/* LOAD turns an element into the accumulator type; STORE(ct, dst, acc)
   writes the accumulator back.  Integers accumulate in uint64_t so that
   overflow wraps (as PyTorch's does) without undefined behaviour. */
#define LD_ID(v) (v)
#define LD_U64(v) ((uint64_t)(v))
#define LD_HALF(v) lt_half_to_float(v)
#define LD_BF16(v) lt_bf16_to_float(v)
#define LD_CHALF(v) ((lt_cfloat)(lt_half_to_float((v).re) + lt_half_to_float((v).im) * (float _Complex)I))
#define ST_CAST(ct, d, acc) ((d) = (ct)(acc))
#define ST_BOOL(ct, d, acc) ((d) = (ct)((acc) != 0))
#define ST_HALF(ct, d, acc) ((d) = lt_float_to_half(acc))
#define ST_BF16(ct, d, acc) ((d) = lt_float_to_bf16(acc))
#define ST_CHALF(ct, d, acc) ((d).re = lt_float_to_half(crealf(acc)), (d).im = lt_float_to_half(cimagf(acc)))

#define MM_LIST(X)                                          \
  X(BOOL, uint8_t, uint64_t, LD_U64, ST_BOOL)               \
  X(UINT8, uint8_t, uint64_t, LD_U64, ST_CAST)              \
  X(UINT16, uint16_t, uint64_t, LD_U64, ST_CAST)            \
  X(UINT32, uint32_t, uint64_t, LD_U64, ST_CAST)            \
  X(UINT64, uint64_t, uint64_t, LD_U64, ST_CAST)            \
  X(INT8, int8_t, uint64_t, LD_U64, ST_CAST)                \
  X(INT16, int16_t, uint64_t, LD_U64, ST_CAST)              \
  X(INT32, int32_t, uint64_t, LD_U64, ST_CAST)              \
  X(INT64, int64_t, uint64_t, LD_U64, ST_CAST)              \
  X(FLOAT16, lt_half, float, LD_HALF, ST_HALF)              \
  X(BFLOAT16, lt_bf16, float, LD_BF16, ST_BF16)             \
  X(FLOAT32, float, float, LD_ID, ST_CAST)                  \
  X(FLOAT64, double, double, LD_ID, ST_CAST)                \
  X(COMPLEX32, lt_chalf, lt_cfloat, LD_CHALF, ST_CHALF)     \
  X(COMPLEX64, lt_cfloat, lt_cfloat, LD_ID, ST_CAST)        \
  X(COMPLEX128, lt_cdouble, lt_cdouble, LD_ID, ST_CAST)

#define NAIVE(E, ct, acc_t, LOAD, STORE)                                                      \
  static void naive_##E(int64_t M, int64_t N, int64_t K, const char *A, int64_t ars,           \
                        int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C,         \
                        int64_t crs, int64_t ccs) {                                            \
    const ct *a = (const ct *)(const void *)A, *b = (const ct *)(const void *)B;               \
    ct *c = (ct *)(void *)C;                                                                   \
    for (int64_t i = 0; i < M; i++)                                                            \
      for (int64_t j = 0; j < N; j++) {                                                        \
        acc_t acc = 0;                                                                         \
        const ct *ap = a + i * ars, *bp = b + j * bcs;                                         \
        for (int64_t k = 0; k < K; k++) acc += LOAD(ap[k * acs]) * LOAD(bp[k * brs]);          \
        STORE(ct, c[i * crs + j * ccs], acc);                                                  \
      }                                                                                        \
  }
MM_LIST(NAIVE)
#undef NAIVE

/* a real product too large for OpenBLAS's single-threaded path and too
   small to repay its threads (see LT_BLAS_MT_MIN) */
static inline int mid_size(ltensor_dtype dt, int64_t M, int64_t N, int64_t K) {
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) return 0;
  if (M <= 1 || N <= 1) return 0;   /* gemv */
  double mnk = (double)M * (double)N * (double)K;
  return mnk > (double)LT_BLAS_ST_MAX && mnk < (double)LT_BLAS_MT_MIN;
}

/* 1 when a product asked to stay on the calling thread would be split by
   OpenBLAS over its threads: past OpenBLAS's one-thread size, with OpenBLAS
   running more than one thread (another CBLAS may thread: assumed to).
   Such products go to the built-in gemm (one thread) instead. */
#ifndef LT_BLAS_NONE
static int blas_would_thread(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, int gemv_shape) {
  if (!lt_blas_dtype(dt)) return 0;
  if (gemv_shape && (dt == LTENSOR_FLOAT32 || dt == LTENSOR_FLOAT64)) {
    /* a float gemv runs in bands OpenBLAS never threads (gemv above), unless
       each dot product alone is past its threading size: one call */
    int64_t outs = M == 1 ? N : M;
    return (double)outs * (double)K >= (double)GEMV_ST_MAX && lt_blas_gemv_band(dt, outs, K) == 0;
  }
  if ((double)M * (double)N * (double)K <= (double)LT_BLAS_ST_MAX) return 0;
#if defined(OPENBLAS_CONST)
  return openblas_get_num_threads() > 1;
#else
  return 1;
#endif
}
#endif

static int mm_acc(ltensor_dtype dt, int serial, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars,
                  int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t ldc) {
  (void)serial;   /* (BLAS=none: every product is the built-in's, on this thread) */
  if (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64) return -1;
  if (M <= 0 || N <= 0 || K <= 0) return 0;
#ifndef LT_BLAS_NONE
  if (!mid_size(dt, M, N, K) && !(serial && blas_would_thread(dt, M, N, K, M == 1)) && M <= BLAS_MAX && N <= BLAS_MAX &&
      K <= BLAS_MAX && ldc <= BLAS_MAX) {
    int64_t lda = 0, ldb = 0, incx;
    int la = layout(M, K, ars, acs, &lda), lb = layout(K, N, brs, bcs, &ldb);
    /* one row (a linear layer at batch 1): c += B^T a through gemv, which
       reads B once; gemm would pack all of B for a single row */
    if (M == 1 && lb && vec_inc(K, acs, &incx)) {
      if (lb == 1) gemv(dt, 1, K, N, B, ldb, A, incx, C, 1, 1);
      else gemv(dt, 0, N, K, B, ldb, A, incx, C, 1, 1);
      return 0;
    }
    if (la && lb) {
      enum CBLAS_TRANSPOSE ta = la == 2 ? CblasTrans : CblasNoTrans;
      enum CBLAS_TRANSPOSE tb = lb == 2 ? CblasTrans : CblasNoTrans;
      if (dt == LTENSOR_FLOAT32)
        cblas_sgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, 1.0f, (const float *)(const void *)A,
                    (blasint)lda, (const float *)(const void *)B, (blasint)ldb, 1.0f, (float *)(void *)C, (blasint)ldc);
      else
        cblas_dgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, 1.0, (const double *)(const void *)A,
                    (blasint)lda, (const double *)(const void *)B, (blasint)ldb, 1.0, (double *)(void *)C, (blasint)ldc);
      return 0;
    }
  }
  if (tiled_blas(dt, M, N, K, A, ars, acs, B, brs, bcs, C, ldc, 1)) return 0;
#endif
  int r = dt == LTENSOR_FLOAT32
    ? lt_gemm_f32(M, N, K, 1.0f, (const float *)(const void *)A, ars, acs, (const float *)(const void *)B, brs, bcs, 1.0f,
                  (float *)(void *)C, ldc, 1)
    : lt_gemm_f64(M, N, K, 1.0, (const double *)(const void *)A, ars, acs, (const double *)(const void *)B, brs, bcs, 1.0,
                  (double *)(void *)C, ldc, 1);
  if (r == 0) return 0;
  /* packing buffers not available: the plain loop, accumulating */
  size_t sz = lt_itemsize(dt);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) {
        const char *pa = A + (i * ars + k * acs) * (int64_t)sz, *pb = B + (k * brs + j * bcs) * (int64_t)sz;
        acc += dt == LTENSOR_FLOAT32 ? (double)*(const float *)(const void *)pa * *(const float *)(const void *)pb
                                     : *(const double *)(const void *)pa * *(const double *)(const void *)pb;
      }
      char *pc = C + (i * ldc + j) * (int64_t)sz;
      if (dt == LTENSOR_FLOAT32) *(float *)(void *)pc += (float)acc;
      else *(double *)(void *)pc += acc;
    }
  return 0;
}

int lt_mm_acc(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars, int64_t acs,
              const char *B, int64_t brs, int64_t bcs, char *C, int64_t ldc) {
  return mm_acc(dt, 0, M, N, K, A, ars, acs, B, brs, bcs, C, ldc);
}
int lt_mm_acc_1t(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars, int64_t acs,
                 const char *B, int64_t brs, int64_t bcs, char *C, int64_t ldc) {
  return mm_acc(dt, 1, M, N, K, A, ars, acs, B, brs, bcs, C, ldc);
}

typedef void (*naive_fn)(int64_t, int64_t, int64_t, const char *, int64_t, int64_t, const char *,
                         int64_t, int64_t, char *, int64_t, int64_t);

static void mm(ltensor_dtype dt, int serial, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars,
               int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t crs, int64_t ccs) {
  (void)serial;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {   /* empty sum: zeros (all-zero bytes is 0 in every dtype) */
    size_t sz = lt_itemsize(dt);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) memset(C + (i * crs + j * ccs) * (int64_t)sz, 0, sz);
    return;
  }
#ifdef LT_BLAS_NONE
  if (lt_blas_dtype(dt) && lt_gemm(dt, M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs) == 0) return;
#else
  if (mid_size(dt, M, N, K) || (serial && blas_would_thread(dt, M, N, K, M == 1 || N == 1))) {
    int64_t ldc;
    if (layout(M, N, crs, ccs, &ldc) == 1 && tiled_blas(dt, M, N, K, A, ars, acs, B, brs, bcs, C, ldc, 0)) return;
    if (lt_gemm(dt, M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs) == 0) return;
  }
  if (lt_blas_dtype(dt) && try_blas(dt, M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs)) return;
#endif
  naive_fn fn = NULL;
  switch (dt) {
#define CASE(E, ct, acc_t, LOAD, STORE) case LTENSOR_##E: fn = naive_##E; break;
    MM_LIST(CASE)
#undef CASE
  default: return;
  }
  fn(M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs);
}

void lt_mm(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars,
           int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t crs,
           int64_t ccs) {
  mm(dt, 0, M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs);
}
void lt_mm_1t(ltensor_dtype dt, int64_t M, int64_t N, int64_t K, const char *A, int64_t ars,
              int64_t acs, const char *B, int64_t brs, int64_t bcs, char *C, int64_t crs,
              int64_t ccs) {
  mm(dt, 1, M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs);
}

/* ---- interruptible products ----------------------------------------------
   One OpenBLAS call cannot be stopped, so a product that would take long is
   cut into panels of output rows (or columns, when there are more of them),
   each a bounded amount of work, and *stop is read between panels.  The
   cut only starts past PANEL_MNK multiply-adds (0.3-0.6 s in OpenBLAS on
   two busy cores; smaller panels cost a visible 5-10% on a 3000^3 product,
   by measurement): smaller products run whole, exactly as lt_mm; larger
   ones are cut into equal panels (no small last one).  Re-packing the
   other operand per panel costs K*N per M_panel*K*N of arithmetic. */
#define PANEL_MNK ((int64_t)1 << 34)
#define PANEL_MNK_LOOP ((int64_t)1 << 24)   /* the plain C loop: 1-15 ns per multiply-add */
#define PANEL_MIN 64   /* rows per BLAS panel at least: packing stays amortised */

int lt_mm_stoppable(const volatile sig_atomic_t *stop, int serial, ltensor_dtype dt, int64_t M, int64_t N,
                    int64_t K, const char *A, int64_t ars, int64_t acs, const char *B, int64_t brs,
                    int64_t bcs, char *C, int64_t crs, int64_t ccs) {
  int blas = lt_blas_dtype(dt);
  int64_t budget = blas ? PANEL_MNK : PANEL_MNK_LOOP;
  int rows = M >= N;   /* cut the longer side of the output */
  int64_t len = rows ? M : N, other = (rows ? N : M) * (K > 0 ? K : 1);
  int64_t step = other > 0 ? budget / other : len;
  if (step < (blas ? PANEL_MIN : 1)) step = blas ? PANEL_MIN : 1;
  if (!stop || step >= len) {
    mm(dt, serial, M, N, K, A, ars, acs, B, brs, bcs, C, crs, ccs);
    return stop && *stop;
  }
  int64_t panels = (len + step - 1) / step;
  step = (len + panels - 1) / panels;
  size_t sz = lt_itemsize(dt);
  for (int64_t i = 0; i < len; i += step) {
    if (*stop) return 1;
    int64_t n = len - i < step ? len - i : step;
    if (rows)
      mm(dt, serial, n, N, K, A + i * ars * (int64_t)sz, ars, acs, B, brs, bcs, C + i * crs * (int64_t)sz, crs, ccs);
    else
      mm(dt, serial, M, n, K, A, ars, acs, B + i * bcs * (int64_t)sz, brs, bcs, C + i * ccs * (int64_t)sz, crs, ccs);
  }
  return *stop != 0;
}
