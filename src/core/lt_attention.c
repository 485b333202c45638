/*
 * lt_attention.c -- fused scaled dot-product attention (see lt_attention.h).
 *
 * Per (batch, head): one product for the scores into a scratch block (or the
 * caller's weights slice), scale + masks + softmax row by row (the vector
 * softmax of lt_reduce.c), one product for the output.  This replaces the
 * composed path's scaled copy of Q, the score tensor, the mask add, the
 * softmax output and the head transposes and copies: 7 tensors and 8 ops
 * per layer become 1 tensor and 1 call.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "lt_attention.h"
#include "lt_blas.h"
#include "lt_reduce_common.h"

typedef struct sdpa_ctx {
  const lt_sdpa_args *a;
  atomic_int err;
} sdpa_ctx;

/* scale and mask one score row into dst, then softmax it in place of dst
   (through tmp: the vector softmax wants distinct input and output) */
#define SDPA_ROW(T, SFX, EXP)                                                                  \
static void sdpa_row_##SFX(const lt_sdpa_args *a, int64_t n, int64_t h, int64_t l, T *row, T *tmp) { \
  int64_t S = a->S;                                                                            \
  T sc = (T)a->scale;                                                                          \
  for (int64_t s = 0; s < S; s++) tmp[s] = row[s] * sc;                                        \
  if (a->am) {                                                                                 \
    const T *m = (const T *)a->am + n * a->ams[0] + h * a->ams[1] + l * a->ams[2];            \
    for (int64_t s = 0; s < S; s++) tmp[s] += m[s * a->ams[3]];                                \
  }                                                                                            \
  if (a->kpm) {                                                                                \
    const T *m = (const T *)a->kpm + n * a->kpms[0];                                           \
    for (int64_t s = 0; s < S; s++) tmp[s] += m[s * a->kpms[1]];                               \
  }                                                                                            \
  if (lt_softmax_row_##SFX(tmp, row, S, 0)) return;                                            \
  /* a non-finite max (NaN, +inf, every key masked): the plain formula,                        \
     which gives NaN rows as PyTorch's softmax does */                                         \
  T mx = tmp[0];                                                                               \
  for (int64_t s = 1; s < S; s++) if (tmp[s] > mx || tmp[s] != tmp[s]) mx = tmp[s];            \
  double tot = 0;                                                                              \
  for (int64_t s = 0; s < S; s++) { row[s] = EXP(tmp[s] - mx); tot += (double)row[s]; }       \
  for (int64_t s = 0; s < S; s++) row[s] = (T)((double)row[s] / tot);                          \
}
SDPA_ROW(float, f32, expf)
SDPA_ROW(double, f64, exp)

/* rows of an (rows x N x K) product that keep it within OpenBLAS's
   one-thread size (LT_BLAS_ST_MAX multiply-adds) */
static int64_t rows_per_call(int64_t N, int64_t K) {
  int64_t nk = N * K > 0 ? N * K : 1, r = LT_BLAS_ST_MAX / nk;
  return r > 0 ? r : 1;
}

static void sdpa_part(void *vc, int64_t begin, int64_t end, int part) {
  (void)part;
  sdpa_ctx *c = vc;
  const lt_sdpa_args *a = c->a;
  size_t isz = lt_itemsize(a->dt);
  int64_t L = a->L, S = a->S;
  char *scratch = malloc((size_t)(L * S + S + 1) * isz);
  if (!scratch) { atomic_store(&c->err, 1); return; }
  for (int64_t i = begin; i < end; i++) {
    int64_t n = i / a->H, h = i % a->H;
    const char *q = a->q + (n * a->qs[0] + h * a->qs[1]) * (int64_t)isz;
    const char *k = a->k + (n * a->ks[0] + h * a->ks[1]) * (int64_t)isz;
    const char *v = a->v + (n * a->vs[0] + h * a->vs[1]) * (int64_t)isz;
    char *o = a->out + (n * a->os[0] + h * a->os[1]) * (int64_t)isz;
    char *p = a->w ? a->w + i * L * S * (int64_t)isz : scratch;
    char *tmp = scratch + L * S * (int64_t)isz;
    /* P (L x S) = Q (L x D) K^T (D x S), in row blocks OpenBLAS runs on
       this thread (a whole head is a "mid-size" product, which lt_blas
       would hand to the slower built-in gemm) */
    int64_t rb = rows_per_call(S, a->D);
    for (int64_t r = 0; r < L; r += rb)
      lt_mm_1t(a->dt, L - r < rb ? L - r : rb, S, a->D, q + r * a->qs[2] * (int64_t)isz, a->qs[2], a->qs[3],
               k, a->ks[3], a->ks[2], p + r * S * (int64_t)isz, S, 1);
    /* (no keys: no rows to normalise, and the second product gives zeros) */
    for (int64_t l = 0; S > 0 && l < L; l++) {
      if (a->dt == LTENSOR_FLOAT32) sdpa_row_f32(a, n, h, l, (float *)p + l * S, (float *)tmp);
      else sdpa_row_f64(a, n, h, l, (double *)p + l * S, (double *)tmp);
    }
    /* O (L x Dv) = P (L x S) V (S x Dv) */
    rb = rows_per_call(a->Dv, S);
    for (int64_t r = 0; r < L; r += rb)
      lt_mm_1t(a->dt, L - r < rb ? L - r : rb, a->Dv, S, p + r * S * (int64_t)isz, S, 1, v, a->vs[2], a->vs[3],
               o + r * a->os[2] * (int64_t)isz, a->os[2], a->os[3]);
  }
  free(scratch);
}

int lt_sdpa_fwd(const lt_sdpa_args *a, lt_pool *pool) {
  if (a->dt != LTENSOR_FLOAT32 && a->dt != LTENSOR_FLOAT64) return -1;
  int64_t units = a->N * a->H;
  if (units == 0 || a->L == 0) return 0;
  sdpa_ctx c;
  c.a = a;
  atomic_init(&c.err, 0);
  int64_t work = units * a->L * a->S * (a->D + a->Dv + 8);
  int parts = lt_parallel_parts(pool, work, LT_GRAIN, units);
  lt_parallel_run(pool, parts, units, sdpa_part, &c);
  return atomic_load(&c.err) ? -1 : 0;
}
