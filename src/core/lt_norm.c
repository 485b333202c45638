/*
 * lt_norm.c -- fused normalisation and cross-entropy kernels (see lt_norm.h).
 *
 * One template per floating dtype (NORM_KERNELS below, instantiated for
 * float and double); all sums are accumulated in double.  Work is split
 * into ranges of independent groups (rows or channels) on the state's
 * shared pool (lt_parallel.h); each range writes only its own groups' outputs.
 */
/* the per-element loops are written for the vectoriser, which the
   Makefile's -O2 does not run (GCC < 12) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include <math.h>
#include <string.h>
#include "lt_norm.h"
#include "lt_parallel.h"

/* elements of work a part must get before a split pays */
#define NORM_GRAIN 65536

/* the shared per-state pool (lt_parallel.h): parts by work and units */
static int pick_parts(lt_pool *pool, int64_t work, int64_t units) {
  return lt_parallel_parts(pool, work, NORM_GRAIN, units);
}
/* Ranges of independent groups (each writes only its own groups, every sum
   over one group in one order): the cut changes no value, so a few ranges
   per thread, each over a quarter grain at least -- the pool hands them out
   as threads come, and a worker that starts late (a batch-1 BatchNorm is
   50-200 us) still takes a share instead of leaving both halves to the
   caller (BatchNorm eval ran 2:1 on the caller in resnet18 at two threads) */
static int pick_ranges(lt_pool *pool, int64_t work, int64_t units) {
  int nt = pick_parts(pool, work, units);
  if (nt <= 1) return nt;
  int64_t more = 4 * (int64_t)nt;
  if (more > units) more = units;
  if (more > work / (NORM_GRAIN / 4)) more = work / (NORM_GRAIN / 4);
  return more > nt ? (int)more : nt;
}
static void par_for(lt_pool *pool, int parts, int64_t n, lt_range_fn fn, void *ctx) {
  lt_parallel_run(pool, parts, n, fn, ctx);
}

/* the arguments of every kernel, passed to the range workers */
typedef struct nargs {
  const void *x, *g, *w, *b, *mean_in, *rstd_in, *lse_in;
  const int64_t *target;
  void *y, *mean, *rstd, *var, *dx, *dw, *db, *loss, *lse;
  int64_t R, D, G, Cg, S, N, C, K, ignore;
  double eps;
  int with_lse, has_ignore;
  double wsum[LT_MAX_THREADS];
} nargs;

/* channel of column d in row r (group norm), or the column (layer norm) */
#define AFF_INDEX(a, r, d) ((a)->G ? ((r) % (a)->G) * (a)->Cg + (d) / (a)->S : (d))

#define NORM_KERNELS(T, SFX, EXP)                                                              \
/* s1 += sum(x - k), s2 += sum((x - k)^2) over n values, in four chains: \
   one chain waited on each add's latency (batch norm's statistics ran at  \
   ~8 cycles a value) */                                                   \
static void sum_shifted_##SFX(const T *x, int64_t n, double k, double *s1, double *s2) { \
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;  \
  int64_t q = 0;                                                          \
  for (; q + 4 <= n; q += 4) {                                            \
    double v0 = (double)x[q] - k, v1 = (double)x[q + 1] - k;              \
    double v2 = (double)x[q + 2] - k, v3 = (double)x[q + 3] - k;          \
    a0 += v0; a1 += v1; a2 += v2; a3 += v3;                               \
    b0 += v0 * v0; b1 += v1 * v1; b2 += v2 * v2; b3 += v3 * v3;           \
  }                                                                       \
  for (; q < n; q++) { double v = (double)x[q] - k; a0 += v; b0 += v * v; } \
  *s1 += (a0 + a1) + (a2 + a3);                                           \
  *s2 += (b0 + b1) + (b2 + b3);                                           \
}                                                                         \
/* sg += sum(g), sgx += sum(g (x - mean)), four chains as above */        \
static void sum_grad_##SFX(const T *g, const T *x, int64_t n, double mean, double *sg, double *sgx) { \
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;  \
  int64_t q = 0;                                                          \
  for (; q + 4 <= n; q += 4) {                                            \
    double g0 = (double)g[q], g1 = (double)g[q + 1], g2 = (double)g[q + 2], g3 = (double)g[q + 3]; \
    a0 += g0; a1 += g1; a2 += g2; a3 += g3;                               \
    b0 += g0 * ((double)x[q] - mean); b1 += g1 * ((double)x[q + 1] - mean); \
    b2 += g2 * ((double)x[q + 2] - mean); b3 += g3 * ((double)x[q + 3] - mean); \
  }                                                                       \
  for (; q < n; q++) { a0 += (double)g[q]; b0 += (double)g[q] * ((double)x[q] - mean); } \
  *sg += (a0 + a1) + (a2 + a3);                                           \
  *sgx += (b0 + b1) + (b2 + b3);                                          \
}                                                                         \
/* y = x sc + sh in the data's type, as PyTorch's kernels compute it (a    \
   float plane went through double at half the vector width) */           \
static void scale_shift_##SFX(const T *x, T *y, int64_t n, T sc, T sh) {  \
  for (int64_t q = 0; q < n; q++) y[q] = x[q] * sc + sh;                  \
}                                                                         \
static void rows_fwd_##SFX(void *ctx, int64_t s, int64_t e, int t) {                      \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *w = a->w, *b = a->b;                                                \
  T *y = a->y, *mo = a->mean, *ro = a->rstd;                                              \
  int64_t D = a->D;                                                                       \
  for (int64_t r = s; r < e; r++) {                                                       \
    const T *xr = x + r * D;                                                              \
    T *yr = y + r * D;                                                                    \
    double k = D ? (double)xr[0] : 0.0, s1 = 0, s2 = 0;                                   \
    sum_shifted_##SFX(xr, D, k, &s1, &s2);                                                \
    double m = D ? s1 / (double)D : 0.0;                                                  \
    double var = D ? s2 / (double)D - m * m : 0.0;                                        \
    if (var < 0) var = 0;                                                                 \
    double mean = k + m, rs = 1.0 / sqrt(var + a->eps);                                   \
    mo[r] = (T)mean; ro[r] = (T)rs;                                                       \
    if (a->G) {                                                                           \
      int64_t c0 = (r % a->G) * a->Cg;                                                    \
      for (int64_t c = 0; c < a->Cg; c++) {                                               \
        double sc = rs * (w ? (double)w[c0 + c] : 1.0);                                   \
        double sh = (b ? (double)b[c0 + c] : 0.0) - mean * sc;                            \
        scale_shift_##SFX(xr + c * a->S, yr + c * a->S, a->S, (T)sc, (T)sh);                \
      }                                                                                   \
    } else {                                                                              \
      for (int64_t d = 0; d < D; d++) {                                                   \
        double v = ((double)xr[d] - mean) * rs;                                           \
        if (w) v *= (double)w[d];                                                         \
        if (b) v += (double)b[d];                                                         \
        yr[d] = (T)v;                                                                     \
      }                                                                                   \
    }                                                                                     \
  }                                                                                       \
}                                                                                         \
static void rows_bwd_dx_##SFX(void *ctx, int64_t s, int64_t e, int t) {                   \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *g = a->g, *w = a->w, *mi = a->mean_in, *ri = a->rstd_in;            \
  T *dx = a->dx;                                                                          \
  int64_t D = a->D;                                                                       \
  for (int64_t r = s; r < e; r++) {                                                       \
    const T *xr = x + r * D, *gr = g + r * D;                                             \
    T *dr = dx + r * D;                                                                   \
    double mean = (double)mi[r], rs = (double)ri[r], sg = 0, sgx = 0;                     \
    for (int64_t d = 0; d < D; d++) {                                                     \
      double gw = (double)gr[d] * (w ? (double)w[AFF_INDEX(a, r, d)] : 1.0);              \
      sg += gw; sgx += gw * ((double)xr[d] - mean) * rs;                                  \
    }                                                                                     \
    sg /= (double)D; sgx /= (double)D;                                                    \
    for (int64_t d = 0; d < D; d++) {                                                     \
      double gw = (double)gr[d] * (w ? (double)w[AFF_INDEX(a, r, d)] : 1.0);              \
      double xh = ((double)xr[d] - mean) * rs;                                            \
      dr[d] = (T)(rs * (gw - sg - xh * sgx));                                             \
    }                                                                                     \
  }                                                                                       \
}                                                                                         \
/* layer norm's dw/db: a range of columns, every row */                                   \
static void rows_bwd_cols_##SFX(void *ctx, int64_t s, int64_t e, int t) {                 \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *g = a->g, *mi = a->mean_in, *ri = a->rstd_in;                       \
  T *dw = a->dw, *db = a->db;                                                             \
  int64_t D = a->D, n = e - s;                                                            \
  for (int64_t d = s; d < e; d++) { if (dw) dw[d] = 0; if (db) db[d] = 0; }               \
  if (n <= 0) return;                                                                     \
  /* accumulate in double: a column block's sums live in the outputs only at the end */   \
  double acc_w[256], acc_b[256];                                                          \
  for (int64_t d0 = s; d0 < e; d0 += 256) {                                               \
    int64_t d1 = d0 + 256 < e ? d0 + 256 : e;                                             \
    memset(acc_w, 0, sizeof acc_w); memset(acc_b, 0, sizeof acc_b);                       \
    for (int64_t r = 0; r < a->R; r++) {                                                  \
      const T *xr = x + r * D, *gr = g + r * D;                                           \
      double mean = (double)mi[r], rs = (double)ri[r];                                    \
      for (int64_t d = d0; d < d1; d++) {                                                 \
        acc_w[d - d0] += (double)gr[d] * ((double)xr[d] - mean) * rs;                     \
        acc_b[d - d0] += (double)gr[d];                                                   \
      }                                                                                   \
    }                                                                                     \
    for (int64_t d = d0; d < d1; d++) {                                                   \
      if (dw) dw[d] = (T)acc_w[d - d0];                                                   \
      if (db) db[d] = (T)acc_b[d - d0];                                                   \
    }                                                                                     \
  }                                                                                       \
}                                                                                         \
/* group norm's dw/db: a range of channels */                                             \
static void rows_bwd_chan_##SFX(void *ctx, int64_t s, int64_t e, int t) {                 \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *g = a->g, *mi = a->mean_in, *ri = a->rstd_in;                       \
  T *dw = a->dw, *db = a->db;                                                             \
  int64_t N = a->R / a->G;                                                                \
  for (int64_t c = s; c < e; c++) {                                                       \
    double sw = 0, sb = 0;                                                                \
    int64_t grp = c / a->Cg, off = (c % a->Cg) * a->S;                                    \
    for (int64_t n = 0; n < N; n++) {                                                     \
      int64_t r = n * a->G + grp;                                                         \
      const T *xr = x + r * a->D + off, *gr = g + r * a->D + off;                         \
      double mean = (double)mi[r], rs = (double)ri[r];                                    \
      for (int64_t q = 0; q < a->S; q++) {                                                \
        sw += (double)gr[q] * ((double)xr[q] - mean) * rs;                                \
        sb += (double)gr[q];                                                              \
      }                                                                                   \
    }                                                                                     \
    if (dw) dw[c] = (T)sw;                                                                \
    if (db) db[c] = (T)sb;                                                                \
  }                                                                                       \
}                                                                                         \
static void chan_fwd_##SFX(void *ctx, int64_t s, int64_t e, int t) {                      \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *w = a->w, *b = a->b;                                                \
  T *y = a->y, *mo = a->mean, *ro = a->rstd, *vo = a->var;                                \
  int64_t N = a->N, C = a->C, S = a->S;                                                   \
  double M = (double)(N * S);                                                             \
  for (int64_t c = s; c < e; c++) {                                                       \
    double k = (double)x[c * S], s1 = 0, s2 = 0;                                          \
    for (int64_t n = 0; n < N; n++) sum_shifted_##SFX(x + (n * C + c) * S, S, k, &s1, &s2); \
    double m = s1 / M, var = s2 / M - m * m;                                              \
    if (var < 0) var = 0;                                                                 \
    double mean = k + m, rs = 1.0 / sqrt(var + a->eps);                                   \
    mo[c] = (T)mean; ro[c] = (T)rs;                                                       \
    if (vo) vo[c] = (T)var;                                                               \
    double sc = rs * (w ? (double)w[c] : 1.0);                                            \
    double sh = (b ? (double)b[c] : 0.0) - mean * sc;                                     \
    for (int64_t n = 0; n < N; n++)                                                       \
      scale_shift_##SFX(x + (n * C + c) * S, y + (n * C + c) * S, S, (T)sc, (T)sh);      \
  }                                                                                       \
}                                                                                         \
static void chan_bwd_##SFX(void *ctx, int64_t s, int64_t e, int t) {                      \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *g = a->g, *w = a->w, *mi = a->mean_in, *ri = a->rstd_in;            \
  T *dx = a->dx, *dw = a->dw, *db = a->db;                                                \
  int64_t N = a->N, C = a->C, S = a->S;                                                   \
  double M = (double)(N * S);                                                             \
  for (int64_t c = s; c < e; c++) {                                                       \
    double mean = (double)mi[c], rs = (double)ri[c], sg = 0, sgx = 0;                     \
    for (int64_t n = 0; n < N; n++)                                                       \
      sum_grad_##SFX(g + (n * C + c) * S, x + (n * C + c) * S, S, mean, &sg, &sgx);        \
    sgx *= rs;                                                                            \
    if (dw) dw[c] = (T)sgx;                                                               \
    if (db) db[c] = (T)sg;                                                                \
    if (!dx) continue;                                                                    \
    double sc = rs * (w ? (double)w[c] : 1.0), mg = sg / M, mgx = sgx / M;                \
    /* dx = sc (g - mg - (x - mean) rs mgx), in the data's type as PyTorch's  \
       kernel computes it (through double it ran at half the vector width) */ \
    T tsc = (T)sc, tmg = (T)mg, tmean = (T)mean, tk = (T)(rs * mgx);                      \
    for (int64_t n = 0; n < N; n++) {                                                     \
      const T *xc = x + (n * C + c) * S, *gc = g + (n * C + c) * S;                       \
      T *dc = dx + (n * C + c) * S;                                                       \
      for (int64_t q = 0; q < S; q++) dc[q] = tsc * (gc[q] - tmg - (xc[q] - tmean) * tk);  \
    }                                                                                     \
  }                                                                                       \
}                                                                                         \
static void chan_eval_##SFX(void *ctx, int64_t s, int64_t e, int t) {                     \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *w = a->w, *b = a->b, *rm = a->mean_in, *rv = a->rstd_in;            \
  T *y = a->y, *sc = a->rstd;                                                             \
  int64_t N = a->N, C = a->C, S = a->S;                                                   \
  for (int64_t c = s; c < e; c++) {                                                       \
    double scale = (w ? (double)w[c] : 1.0) / sqrt((double)rv[c] + a->eps);               \
    double shift = (b ? (double)b[c] : 0.0) - (double)rm[c] * scale;                      \
    sc[c] = (T)scale;                                                                     \
    for (int64_t n = 0; n < N; n++)                                                       \
      scale_shift_##SFX(x + (n * C + c) * S, y + (n * C + c) * S, S, (T)scale, (T)shift); \
  }                                                                                       \
}                                                                                         \
static void xent_fwd_##SFX(void *ctx, int64_t s, int64_t e, int t) {                      \
  nargs *a = ctx;                                                                         \
  const T *x = a->x, *w = a->w;                                                           \
  T *loss = a->loss, *lse = a->lse;                                                       \
  int64_t K = a->K;                                                                       \
  double ws = 0;                                                                          \
  for (int64_t r = s; r < e; r++) {                                                       \
    const T *xr = x + r * K;                                                              \
    double l = 0;                                                                         \
    if (a->with_lse) {                                                                    \
      /* branch-free max (a NaN anywhere makes the row NaN); the exp sum in   \
         four chains so that the adds overlap */                                          \
      T mx = -INFINITY;                                                                   \
      int nan = 0;                                                                        \
      for (int64_t j = 0; j < K; j++) { T v = xr[j]; mx = v > mx ? v : mx; nan |= v != v; } \
      if (nan) l = NAN;                                                                   \
      else if (isinf(mx)) l = mx > 0 ? NAN : (double)mx;                                  \
      else {                                                                              \
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                            \
        int64_t j = 0;                                                                    \
        for (; j + 4 <= K; j += 4) {                                                      \
          s0 += (double)EXP(xr[j] - mx); s1 += (double)EXP(xr[j + 1] - mx);               \
          s2 += (double)EXP(xr[j + 2] - mx); s3 += (double)EXP(xr[j + 3] - mx);           \
        }                                                                                 \
        for (; j < K; j++) s0 += (double)EXP(xr[j] - mx);                                 \
        l = (double)mx + log((s0 + s1) + (s2 + s3));                                      \
      }                                                                                   \
      lse[r] = (T)l;                                                                      \
    }                                                                                     \
    int64_t tg = a->target[r];                                                            \
    if (a->has_ignore && tg == a->ignore) { loss[r] = 0; continue; }                      \
    double wt = w ? (double)w[tg - 1] : 1.0;                                              \
    ws += wt;                                                                             \
    loss[r] = (T)(-wt * ((double)xr[tg - 1] - l));                                        \
  }                                                                                       \
  a->wsum[t] = ws;                                                                        \
}                                                                                         \
static void xent_bwd_##SFX(void *ctx, int64_t s, int64_t e, int t) {                      \
  (void)t;                                                                                \
  const nargs *a = ctx;                                                                   \
  const T *x = a->x, *w = a->w, *g = a->g, *lse = a->lse_in;                                 \
  T *dx = a->dx;                                                                          \
  int64_t K = a->K;                                                                       \
  for (int64_t r = s; r < e; r++) {                                                       \
    const T *xr = x + r * K;                                                              \
    T *dr = dx + r * K;                                                                   \
    int64_t tg = a->target[r];                                                            \
    if (a->has_ignore && tg == a->ignore) { for (int64_t j = 0; j < K; j++) dr[j] = 0; continue; } \
    double coef = (double)g[r] * (w ? (double)w[tg - 1] : 1.0);                           \
    if (a->with_lse) {                                                                    \
      double l = (double)lse[r];                                                          \
      for (int64_t j = 0; j < K; j++) dr[j] = (T)(coef * (double)EXP((T)((double)xr[j] - l)));         \
    } else {                                                                              \
      for (int64_t j = 0; j < K; j++) dr[j] = 0;                                          \
    }                                                                                     \
    dr[tg - 1] = (T)((double)dr[tg - 1] - coef);                                          \
  }                                                                                       \
}

/* float32 rows take expf: exp in double would cost twice as much for
   precision the float32 result cannot hold */
NORM_KERNELS(float, f32, expf)
NORM_KERNELS(double, f64, exp)

#define PICK(dt, name) ((dt) == LTENSOR_FLOAT64 ? name##_f64 : name##_f32)

/* layer norm of float32 rows (G == 0) on AVX2 vectors: the template above
   keeps its serial double sums serial (the vectoriser may not reorder FP
   adds), ~3 cycles an element, and a 128 x 256 transformer row block took
   ~40 us.  Here eight float lanes per sum, flushed into double every 512
   elements, and the output in float, as PyTorch's kernel computes it. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(LT_NO_VEC)
#define LN_AVX2 1
typedef float ln_v8f __attribute__((vector_size(32)));
__attribute__((target("avx2,fma"))) static void ln_rows_f32_avx2(void *ctx, int64_t s, int64_t e, int t) {
  (void)t;
  const nargs *a = ctx;
  const float *x = a->x, *w = a->w, *b = a->b;
  float *y = a->y, *mo = a->mean, *ro = a->rstd;
  int64_t D = a->D, D8 = D - D % 8;
  for (int64_t r = s; r < e; r++) {
    const float *xr = x + r * D;
    float *yr = y + r * D;
    float k = D ? xr[0] : 0.0f;
    ln_v8f vk = (ln_v8f){0} + k;
    double s1 = 0, s2 = 0;
    for (int64_t d0 = 0; d0 < D8; d0 += 512) {
      int64_t d1 = d0 + 512 < D8 ? d0 + 512 : D8;
      ln_v8f a1 = {0}, a2 = {0};
      for (int64_t d = d0; d < d1; d += 8) {
        ln_v8f v;
        memcpy(&v, xr + d, sizeof v);
        v -= vk;
        a1 += v;
        a2 += v * v;
      }
      for (int j = 0; j < 8; j++) { s1 += (double)a1[j]; s2 += (double)a2[j]; }
    }
    for (int64_t d = D8; d < D; d++) { double v = (double)xr[d] - k; s1 += v; s2 += v * v; }
    double m = D ? s1 / (double)D : 0.0, var = D ? s2 / (double)D - m * m : 0.0;
    if (var < 0) var = 0;
    double mean = k + m, rs = 1.0 / sqrt(var + a->eps);
    mo[r] = (float)mean;
    ro[r] = (float)rs;
    float mf = (float)mean, rf = (float)rs;
    ln_v8f vm = (ln_v8f){0} + mf, vr = (ln_v8f){0} + rf, one = (ln_v8f){0} + 1.0f, zero = {0};
    for (int64_t d = 0; d < D8; d += 8) {
      ln_v8f v, vw = one, vb = zero;
      memcpy(&v, xr + d, sizeof v);
      if (w) memcpy(&vw, w + d, sizeof vw);
      if (b) memcpy(&vb, b + d, sizeof vb);
      v = (v - vm) * vr * vw + vb;
      memcpy(yr + d, &v, sizeof v);
    }
    for (int64_t d = D8; d < D; d++) yr[d] = (xr[d] - mf) * rf * (w ? w[d] : 1.0f) + (b ? b[d] : 0.0f);
  }
}
#endif

void lt_norm_rows_fwd(ltensor_dtype dt, const void *x, void *y, void *mean, void *rstd,
                      int64_t R, int64_t D, double eps, const void *w, const void *b,
                      int64_t G, int64_t Cg, int64_t S, lt_pool *pool) {
  nargs a = {.x = x, .y = y, .mean = mean, .rstd = rstd, .R = R, .D = D, .eps = eps, .w = w, .b = b,
             .G = G, .Cg = Cg, .S = S};
  lt_range_fn fn = PICK(dt, rows_fwd);
#ifdef LN_AVX2
  if (dt == LTENSOR_FLOAT32 && G == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    fn = ln_rows_f32_avx2;
#endif
  par_for(pool, pick_ranges(pool, R * D, R), R, fn, &a);
}

void lt_norm_rows_bwd(ltensor_dtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                      const void *w, int64_t R, int64_t D, int64_t G, int64_t Cg, int64_t S,
                      void *dx, void *dw, void *db, lt_pool *pool) {
  nargs a = {.g = g, .x = x, .mean_in = mean, .rstd_in = rstd, .w = w, .R = R, .D = D, .G = G, .Cg = Cg,
             .S = S, .dx = dx, .dw = dw, .db = db};
  if (dx) par_for(pool, pick_ranges(pool, R * D, R), R, PICK(dt, rows_bwd_dx), &a);
  if (dw || db) {
    if (G) par_for(pool, pick_ranges(pool, R * D, G * Cg), G * Cg, PICK(dt, rows_bwd_chan), &a);
    else par_for(pool, pick_ranges(pool, R * D, D), D, PICK(dt, rows_bwd_cols), &a);
  }
}

void lt_norm_chan_fwd(ltensor_dtype dt, const void *x, void *y, void *mean, void *rstd, void *var_out,
                      int64_t N, int64_t C, int64_t S, double eps, const void *w, const void *b, lt_pool *pool) {
  nargs a = {.x = x, .y = y, .mean = mean, .rstd = rstd, .var = var_out, .N = N, .C = C, .S = S, .eps = eps,
             .w = w, .b = b};
  par_for(pool, pick_ranges(pool, N * C * S, C), C, PICK(dt, chan_fwd), &a);
}

void lt_norm_chan_bwd(ltensor_dtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                      const void *w, int64_t N, int64_t C, int64_t S, void *dx, void *dw, void *db, lt_pool *pool) {
  nargs a = {.g = g, .x = x, .mean_in = mean, .rstd_in = rstd, .w = w, .N = N, .C = C, .S = S,
             .dx = dx, .dw = dw, .db = db};
  par_for(pool, pick_ranges(pool, N * C * S, C), C, PICK(dt, chan_bwd), &a);
}

void lt_norm_chan_eval(ltensor_dtype dt, const void *x, void *y, void *scale, int64_t N, int64_t C, int64_t S,
                       double eps, const void *w, const void *b, const void *rm, const void *rv, lt_pool *pool) {
  nargs a = {.x = x, .y = y, .rstd = scale, .N = N, .C = C, .S = S, .eps = eps, .w = w, .b = b,
             .mean_in = rm, .rstd_in = rv};
  par_for(pool, pick_ranges(pool, N * C * S, C), C, PICK(dt, chan_eval), &a);
}

void lt_xent_fwd(ltensor_dtype dt, const void *x, const int64_t *target, const void *w,
                 int64_t R, int64_t K, int with_lse, int has_ignore, int64_t ignore,
                 void *loss, void *lse, double *wsum, lt_pool *pool) {
  nargs a = {.x = x, .target = target, .w = w, .R = R, .K = K, .with_lse = with_lse,
             .has_ignore = has_ignore, .ignore = ignore, .loss = loss, .lse = lse};
  int n = pick_parts(pool, R * K, R);
  par_for(pool, n, R, PICK(dt, xent_fwd), &a);
  double s = 0;
  for (int t = 0; t < n; t++) s += a.wsum[t];
  *wsum = s;
}

void lt_xent_bwd(ltensor_dtype dt, const void *g, const void *x, const int64_t *target, const void *w,
                 const void *lse, int64_t R, int64_t K, int with_lse, int has_ignore, int64_t ignore,
                 void *dx, lt_pool *pool) {
  nargs a = {.g = g, .x = x, .target = target, .w = w, .lse_in = lse, .R = R, .K = K, .with_lse = with_lse,
             .has_ignore = has_ignore, .ignore = ignore, .dx = dx};
  par_for(pool, pick_ranges(pool, R * K, R), R, PICK(dt, xent_bwd), &a);
}
