/* lt_reduce.c -- reduction kernels (Lua-free); scans and softmax are in
 * lt_scan.c, sort in lt_sort.c, their shared walks in lt_reduce_common.h.
 *
 *
 * Layout of every reduction: the iterator planner's reduction mode
 * (lt_iter_reduce_plan, lt_iter.h) splits the input's dims into kept
 * ("outer") and reduced ("inner") groups, each coalesced where the strides
 * allow and with size-1 dims dropped; lt_iter_reduce_parts decides the split
 * over the pool.  The outer group is walked with an odometer; for
 * each output element the inner group is walked in row-major order of the
 * reduced dims (so a running counter is the flat position argmax needs) and
 * handed to a per-op callback in chunks converted to one compute dtype
 * (int64, uint64, double or double complex) by lt_cast_kernel into a small
 * stack buffer: no full-size converted copy of the input is ever made.  A
 * contiguous run already in the compute dtype is passed through directly.
 *
 * Fast paths (float32/float64 in and out, which is what models use): sum,
 * mean, amax, amin, softmax, log_softmax and cumsum go to typed kernels
 * when the reduced dim is a unit-stride run ("rows": vector accumulators,
 * no per-element calls or dtype dispatch) or when the kept innermost dim is
 * unit-stride ("columns": blocks of adjacent outputs accumulated from
 * contiguous row segments).  Everything else takes the generic path above.
 * Both split large work across the state's pool (lt_parallel_run).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lt_reduce.h"
#include "lt_reduce_common.h"

typedef void (*chunk_fn)(void *ctx, const void *buf, int64_t n, int64_t pos);
static void each_chunk(const plan *p, const char *in, ltensor_dtype dt, ltensor_dtype bdt,
                       chunk_fn fn, void *ctx) {
  if (p->nred == 0) return;
  int64_t isz = (int64_t)lt_itemsize(dt), bsz = (int64_t)lt_itemsize(bdt);
  _Alignas(16) char buf[CHUNK_BYTES];
  int64_t cap = CHUNK_BYTES / bsz;
  lt_cast_fn cast = lt_cast_kernel(dt, bdt);
  int last = p->nred_d - 1;
  int64_t run = p->ishape[last], rs = p->istr0[last] * isz;
  int64_t pos = 0;
  lt_odo w;   /* the reduced dims before the last, each a run */
  red_odo(&w, p, last);
  do {
    const char *ptr = in + w.off[0] * isz;
    if (dt == bdt && rs == isz) {
      fn(ctx, ptr, run, pos);
    } else {
      for (int64_t c = 0; c < run; c += cap) {
        int64_t m = run - c < cap ? run - c : cap;
        cast(ptr + c * rs, rs, buf, bsz, m);
        fn(ctx, buf, m, pos + c);
      }
    }
    pos += run;
  } while (lt_odo_next(&w));
}

/* ---- shared accumulator context --------------------------------------- */

#define EXT_RUN(NAME, T, BETTER)                                               \
  static T NAME(const T *restrict x, int64_t n) {                             \
    T a[LANES];                                                               \
    for (int l = 0; l < LANES; l++) a[l] = x[0];                              \
    int64_t i = 0;                                                            \
    for (; i + LANES <= n; i += LANES)                                        \
      LANE_LOOP for (int l = 0; l < LANES; l++) { T v = x[i + l]; a[l] = BETTER(v, a[l]) ? v : a[l]; } \
    T r = a[0];                                                               \
    for (int l = 1; l < LANES; l++) r = BETTER(a[l], r) ? a[l] : r;           \
    for (; i < n; i++) r = BETTER(x[i], r) ? x[i] : r;                        \
    return r;                                                                 \
  }

/* Explicit vectors (GCC and clang vector extensions): the accumulators of
   the hot row kernels stay in registers whatever the vectoriser decides.
   VEC_KERNELS(V, ATTR, BYTES) instantiates them for one vector width: 16
   bytes for the baseline build (SSE2 on x86-64, NEON on AArch64) and, on
   x86, 32 bytes in functions compiled for AVX2+FMA, chosen at run time
   when the CPU has them (same operations lane by lane; the file allows FP
   contraction, so there the exp polynomial uses FMA and rounds slightly
   differently, within its ~2 ulp).  Other compilers (or -DLT_NO_VEC) take the lane
   loops. */
#ifdef LT_VEC

#define VEC_STEP(V, a, v, CMP) do { __typeof__((v) != (v)) m_ = ((v) CMP (a)) | ((v) != (v)); \
    (a) = vsel_##V(m_, (v), (a)); } while (0)
/* The main loop's step: on x86 the max/min instruction (which drops a NaN
   operand) with NaNs tracked apart in an unordered mask, half the
   operations of the select form; elsewhere the select form. */
#if defined(__SSE2__) || defined(__x86_64__)
#define VX_max_bf32 __builtin_ia32_maxps
#define VX_min_bf32 __builtin_ia32_minps
#define VX_max_bf64 __builtin_ia32_maxpd
#define VX_min_bf64 __builtin_ia32_minpd
#define VX_max_xf32 __builtin_ia32_maxps256
#define VX_min_xf32 __builtin_ia32_minps256
#define VX_max_xf64 __builtin_ia32_maxpd256
#define VX_min_xf64 __builtin_ia32_minpd256
#define VEC_STEP_NAN(V, MM, a, v, CMP, nan) do { (a) = VX_##MM##_##V((v), (a)); (nan) |= (v) != (v); } while (0)
#else
#define VEC_STEP_NAN(V, MM, a, v, CMP, nan) VEC_STEP(V, a, v, CMP)
#endif
#define VEC_EXT(NAME, V, T, VT, CMP, MM, BETTER, ATTR)                         \
  ATTR static T NAME(const T *x, int64_t n) {                                 \
    const int64_t vw = (int64_t)(sizeof(VT) / sizeof(T));                     \
    int64_t i = 0;                                                            \
    T r = x[0];                                                               \
    if (n >= 4 * vw) {                                                        \
      VT a0 = vld_##V(x), a1 = vld_##V(x + vw), a2 = vld_##V(x + 2 * vw), a3 = vld_##V(x + 3 * vw); \
      __typeof__(a0 != a0) nan = (a0 != a0) | (a1 != a1) | (a2 != a2) | (a3 != a3); \
      for (i = 4 * vw; i + 4 * vw <= n; i += 4 * vw) {                        \
        VT v0 = vld_##V(x + i), v1 = vld_##V(x + i + vw);                     \
        VT v2 = vld_##V(x + i + 2 * vw), v3 = vld_##V(x + i + 3 * vw);        \
        VEC_STEP_NAN(V, MM, a0, v0, CMP, nan); VEC_STEP_NAN(V, MM, a1, v1, CMP, nan); \
        VEC_STEP_NAN(V, MM, a2, v2, CMP, nan); VEC_STEP_NAN(V, MM, a3, v3, CMP, nan); \
      }                                                                       \
      VEC_STEP(V, a0, a1, CMP); VEC_STEP(V, a2, a3, CMP); VEC_STEP(V, a0, a2, CMP); \
      for (int64_t l = 0; l < vw; l++)                                        \
        if (nan[l]) return (T)NAN;                                            \
      r = a0[0];                                                              \
      for (int64_t l = 1; l < vw; l++) r = BETTER(a0[l], r) ? a0[l] : r;      \
    }                                                                         \
    for (; i < n; i++) r = BETTER(x[i], r) ? x[i] : r;                        \
    return r;                                                                 \
  }
/* blocks of BLOCK: 4 vector accumulators (each float32 lane adds at most
   BLOCK/16 terms), added pairwise, then lane by lane into double lanes
   (one widening per block; the lanes are added up once, at the end: a
   horizontal sum per block cost a quarter of a 1000-element row); the
   last whole vectors go through one accumulator, at most vw-1 elements
   are added one by one. */
#define VEC_SUM(NAME, V, T, VT, ATTR)                                          \
  ATTR static double NAME(const T *x, int64_t n) {                            \
    const int64_t vw = (int64_t)(sizeof(VT) / sizeof(T));                     \
    double tv[sizeof(VT) / sizeof(T)] = {0};                                  \
    int64_t i = 0;                                                            \
    while (n - i >= 4 * vw) {                                                 \
      int64_t e = n - i > BLOCK ? i + BLOCK : n;                              \
      VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                              \
      for (; i + 4 * vw <= e; i += 4 * vw) {                                  \
        a0 += vld_##V(x + i); a1 += vld_##V(x + i + vw);                      \
        a2 += vld_##V(x + i + 2 * vw); a3 += vld_##V(x + i + 3 * vw);         \
      }                                                                       \
      VT s = (a0 + a1) + (a2 + a3);                                           \
      for (int64_t l = 0; l < vw; l++) tv[l] += (double)s[l];                 \
    }                                                                         \
    if (n - i >= vw) {                                                        \
      VT a0 = {0};                                                            \
      for (; i + vw <= n; i += vw) a0 += vld_##V(x + i);                      \
      for (int64_t l = 0; l < vw; l++) tv[l] += (double)a0[l];                \
    }                                                                         \
    double tot = 0;                                                           \
    for (int64_t l = 0; l < vw; l++) tot += tv[l];                            \
    for (; i < n; i++) tot += (double)x[i];                                   \
    return tot;                                                               \
  }

/* sum of exp(x[i] - mx) over one contiguous row on vectors (VT of T, EXPV
   the vector exp for arguments <= 0, SEXP the scalar one; mx finite and
   >= every x[i]): exps in T lanes per BLOCK, blocks added in double.  With
   y, the exps are also stored there (softmax's pass). */
#define VEC_SUMEXP(NAME, V, T, VT, EXPV, SEXP, ATTR)                              \
  ATTR static double NAME(const T *restrict x, T *restrict y, int64_t n, T mx) { \
    const int64_t vw = (int64_t)(sizeof(VT) / sizeof(T));                     \
    VT vm = vsplat_##V(mx);                                                   \
    double tot = 0;                                                           \
    int64_t i = 0;                                                            \
    while (n - i >= 2 * vw) {                                                 \
      int64_t e = n - i > BLOCK ? i + BLOCK : n;                              \
      VT s = {0};   /* one accumulator: with two, the exp's constants     \
                       pushed them out of the 16 registers (a spill and a  \
                       store-forward in the add chain) */                  \
      if (!y) {                                                               \
        for (; i + 2 * vw <= e; i += 2 * vw)                                  \
          s += EXPV(vld_##V(x + i) - vm) + EXPV(vld_##V(x + i + vw) - vm);    \
      } else {                                                                \
        for (; i + 2 * vw <= e; i += 2 * vw) {                                \
          VT e0 = EXPV(vld_##V(x + i) - vm);                                  \
          VT e1 = EXPV(vld_##V(x + i + vw) - vm);                             \
          vst_##V(y + i, e0); vst_##V(y + i + vw, e1);                        \
          s += e0 + e1;                                                       \
        }                                                                     \
      }                                                                       \
      for (int64_t l = 0; l < vw; l++) tot += (double)s[l];                   \
    }                                                                         \
    if (i < n && n >= vw) {   /* the rest: whole vectors, then one that      \
                                 overlaps the done part, its overlap masked */ \
      VT r = {0}, li;                                                         \
      for (int64_t l = 0; l < vw; l++) li[l] = (T)l;                          \
      for (; i + vw <= n; i += vw) {                                          \
        VT e = EXPV(vld_##V(x + i) - vm);                                     \
        if (y) vst_##V(y + i, e);                                             \
        r += e;                                                               \
      }                                                                       \
      if (i < n) {                                                            \
        VT e = EXPV(vld_##V(x + n - vw) - vm);                                \
        if (y) vst_##V(y + n - vw, e);                                        \
        r += vsel_##V(li >= (T)(vw - (n - i)), e, vsplat_##V(0));             \
      }                                                                       \
      for (int64_t l = 0; l < vw; l++) tot += (double)r[l];                   \
      i = n;                                                                  \
    }                                                                         \
    for (; i < n; i++) {                                                      \
      T e = SEXP(x[i] - mx);                                                  \
      if (y) y[i] = e;                                                        \
      tot += (double)e;                                                       \
    }                                                                         \
    return tot;                                                               \
  }
/* softmax / log_softmax of one contiguous row; 0 (nothing written) when
   the row's max is not finite: NaN, +inf and all -inf rows take the
   generic path. */
#define VEC_SOFTMAX(NAME, T, SUMEXP, MAXRUN, ATTR)                             \
  ATTR static int NAME(const T *restrict x, T *restrict y, int64_t n, int is_log) { \
    T mx = MAXRUN(x, n);                                                      \
    if (!isfinite(mx)) return 0;                                              \
    if (is_log) {                                                             \
      T ls = (T)log(SUMEXP(x, NULL, n, mx));                                  \
      for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mx) - ls;                \
    } else {                                                                  \
      T inv = (T)(1.0 / SUMEXP(x, y, n, mx));                                 \
      for (int64_t i = 0; i < n; i++) y[i] *= inv;                            \
    }                                                                         \
    return 1;                                                                 \
  }

#define VEC_KERNELS(V, ATTR, BYTES)                                            \
  typedef float vf32_##V __attribute__((vector_size(BYTES)));                 \
  typedef int32_t vm32_##V __attribute__((vector_size(BYTES)));               \
  typedef double vf64_##V __attribute__((vector_size(BYTES)));                \
  typedef int64_t vm64_##V __attribute__((vector_size(BYTES)));               \
  ATTR static inline vf32_##V vld_##V##f32(const float *p) { vf32_##V v; memcpy(&v, p, sizeof v); return v; } \
  ATTR static inline vf64_##V vld_##V##f64(const double *p) { vf64_##V v; memcpy(&v, p, sizeof v); return v; } \
  ATTR static inline void vst_##V##f32(float *p, vf32_##V v) { memcpy(p, &v, sizeof v); } \
  ATTR static inline vf32_##V vsplat_##V##f32(float x) { vf32_##V v = {0}; return v + x; } \
  ATTR static inline vf64_##V vsplat_##V##f64(double x) { vf64_##V v = {0}; return v + x; } \
  ATTR static inline void vst_##V##f64(double *p, vf64_##V v) { memcpy(p, &v, sizeof v); } \
  ATTR static inline vf32_##V vsel_##V##f32(vm32_##V m, vf32_##V a, vf32_##V b) { \
    return (vf32_##V)(((vm32_##V)a & m) | ((vm32_##V)b & ~m)); }              \
  ATTR static inline vf64_##V vsel_##V##f64(vm64_##V m, vf64_##V a, vf64_##V b) { \
    return (vf64_##V)(((vm64_##V)a & m) | ((vm64_##V)b & ~m)); }             \
  VEC_SUM(sum_run_##V##f32, V##f32, float, vf32_##V, ATTR)                    \
  VEC_SUM(sum_run_##V##f64, V##f64, double, vf64_##V, ATTR)                   \
  VEC_EXT(max_run_##V##f32, V##f32, float, vf32_##V, >, max, BETTER_MAX, ATTR)     \
  VEC_EXT(min_run_##V##f32, V##f32, float, vf32_##V, <, min, BETTER_MIN, ATTR)     \
  VEC_EXT(max_run_##V##f64, V##f64, double, vf64_##V, >, max, BETTER_MAX, ATTR)    \
  VEC_EXT(min_run_##V##f64, V##f64, double, vf64_##V, <, min, BETTER_MIN, ATTR)    \
  /* exp on vectors, the same operations lane by lane as exp_f32/exp_f64 */ \
  LT_EXPF_NONPOS_V(vexp_##V, vf32_##V, vm32_##V, vsplat_##V##f32, vsel_##V##f32, ATTR) \
  LT_EXP_NONPOS_V(vexpd_##V, vf64_##V, vm64_##V, vsplat_##V##f64, vsel_##V##f64, ATTR) \
  VEC_SUMEXP(sumexp_row_##V##f32, V##f32, float, vf32_##V, vexp_##V, exp_f32, ATTR) \
  VEC_SUMEXP(sumexp_row_##V##f64, V##f64, double, vf64_##V, vexpd_##V, exp_f64, ATTR) \
  VEC_SOFTMAX(softmax_row_##V##f32, float, sumexp_row_##V##f32, max_run_##V##f32, ATTR) \
  VEC_SOFTMAX(softmax_row_##V##f64, double, sumexp_row_##V##f64, max_run_##V##f64, ATTR)

VEC_KERNELS(b, , 16)
#ifdef LT_VEC_AVX2
VEC_KERNELS(x, LT_TARGET_AVX2_FMA, 32)
#define VPICK(NAME, S) (HAVE_AVX2() ? NAME##_x##S : NAME##_b##S)
#else
#define VPICK(NAME, S) NAME##_b##S
#define sum_run_xf32 sum_run_bf32
#define sum_run_xf64 sum_run_bf64
#define max_run_xf32 max_run_bf32
#define min_run_xf32 min_run_bf32
#define max_run_xf64 max_run_bf64
#define min_run_xf64 min_run_bf64
#define softmax_row_xf32 softmax_row_bf32
#define softmax_row_xf64 softmax_row_bf64
#define sumexp_row_xf32 sumexp_row_bf32
#define sumexp_row_xf64 sumexp_row_bf64
#endif
static double sum_run_f32(const float *x, int64_t n) { return VPICK(sum_run, f32)(x, n); }
static double sum_run_f64(const double *x, int64_t n) { return VPICK(sum_run, f64)(x, n); }
static float max_run_f32(const float *x, int64_t n) { return VPICK(max_run, f32)(x, n); }
static float min_run_f32(const float *x, int64_t n) { return VPICK(min_run, f32)(x, n); }
static double max_run_f64(const double *x, int64_t n) { return VPICK(max_run, f64)(x, n); }
static double min_run_f64(const double *x, int64_t n) { return VPICK(min_run, f64)(x, n); }
#define SOFTMAX_ROW_F32 VPICK(softmax_row, f32)
#define SOFTMAX_ROW_F64 VPICK(softmax_row, f64)
/* the sum of exp(x[i] - mx) of a contiguous row (mx finite, the max) */
static double sumexp_row_f32(const float *x, int64_t n, float mx) { return VPICK(sumexp_row, f32)(x, NULL, n, mx); }
static double sumexp_row_f64(const double *x, int64_t n, double mx) { return VPICK(sumexp_row, f64)(x, NULL, n, mx); }
#else
#define SOFTMAX_ROW_F32 softmax_row_bf32
#define SOFTMAX_ROW_F64 softmax_row_bf64
#endif

#ifndef LT_VEC
#define LANE_KERNELS(S, T) \
  static double sum_run_##S(const T *restrict x, int64_t n) {                 \
    double tot = 0;                                                           \
    for (int64_t b = 0; b < n; b += BLOCK) {                                  \
      const T *xb = x + b;                                                    \
      int64_t m = n - b < BLOCK ? n - b : BLOCK, i = 0;                       \
      T a[LANES] = {0};                                                       \
      for (; i + LANES <= m; i += LANES)                                      \
        for (int l = 0; l < LANES; l++) a[l] += xb[i + l];                    \
      double s = 0;                                                           \
      for (int l = 0; l < LANES; l++) s += (double)a[l];                      \
      for (; i < m; i++) s += (double)xb[i];                                  \
      tot += s;                                                               \
    }                                                                         \
    return tot;                                                               \
  }                                                                           \
  EXT_RUN(max_run_##S, T, BETTER_MAX)                                         \
  EXT_RUN(min_run_##S, T, BETTER_MIN)
#define LANE_SOFTMAX(S, T, EXP)                                                \
  /* softmax of one contiguous row; 0 (nothing written) when its max is not  \
     finite: NaN, +inf and all -inf rows take the generic path */            \
  static int softmax_row_b##S(const T *restrict x, T *restrict y, int64_t n, int is_log) { \
    T mx = max_run_##S(x, n);                                                 \
    if (!isfinite(mx)) return 0;                                              \
    double tot = 0;                                                           \
    for (int64_t b = 0; b < n; b += BLOCK) {                                  \
      const T *xb = x + b;                                                    \
      T *yb = y + b;                                                          \
      int64_t m = n - b < BLOCK ? n - b : BLOCK, i = 0;                       \
      T a[LANES] = {0};                                                       \
      if (is_log) {                                                           \
        for (; i + LANES <= m; i += LANES)                                    \
          LANE_LOOP for (int l = 0; l < LANES; l++) a[l] += EXP(xb[i + l] - mx); \
      } else {                                                                \
        for (; i + LANES <= m; i += LANES)                                    \
          LANE_LOOP for (int l = 0; l < LANES; l++) {                         \
            T e = EXP(xb[i + l] - mx);                                        \
            yb[i + l] = e; a[l] += e;                                         \
          }                                                                   \
      }                                                                       \
      double s = 0;                                                           \
      for (int l = 0; l < LANES; l++) s += (double)a[l];                      \
      for (; i < m; i++) {                                                    \
        T e = EXP(xb[i] - mx);                                                \
        if (!is_log) yb[i] = e;                                               \
        s += (double)e;                                                       \
      }                                                                       \
      tot += s;                                                               \
    }                                                                         \
    if (is_log) {                                                             \
      T ls = (T)log(tot);                                                     \
      for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mx) - ls;                \
    } else {                                                                  \
      T inv = (T)(1.0 / tot);                                                 \
      for (int64_t i = 0; i < n; i++) y[i] *= inv;                            \
    }                                                                         \
    return 1;                                                                 \
  }
LANE_KERNELS(f32, float)
LANE_KERNELS(f64, double)
LANE_SOFTMAX(f32, float, exp_f32)
LANE_SOFTMAX(f64, double, exp_f64)
#define max_run_bf32 max_run_f32
#define max_run_bf64 max_run_f64
#endif

int lt_softmax_row_f32(const float *x, float *y, int64_t n, int is_log) { return SOFTMAX_ROW_F32(x, y, n, is_log); }
int lt_softmax_row_f64(const double *x, double *y, int64_t n, int is_log) { return SOFTMAX_ROW_F64(x, y, n, is_log); }

/* ---- fast value reductions: sum, mean, amax, amin ------------------------- */
enum { FV_SUM, FV_MEAN, FV_MAX, FV_MIN };
typedef struct fastv {
  const plan *p;
  const char *in;
  char *out;
  int op, f32;
  double part[LT_MAX_THREADS * LT_ITER_RED_PIECES];   /* partials of cut runs */
} fastv;

static double fv_run(int op, int f32, const char *x, int64_t n) {
  if (f32) {
    const float *f = (const float *)x;
    return op == FV_MAX ? max_run_f32(f, n) : op == FV_MIN ? min_run_f32(f, n) : sum_run_f32(f, n);
  }
  const double *f = (const double *)x;
  return op == FV_MAX ? max_run_f64(f, n) : op == FV_MIN ? min_run_f64(f, n) : sum_run_f64(f, n);
}
static double fv_combine(int op, double a, double b) {
  switch (op) {
  case FV_MAX: return BETTER_MAX(b, a) ? b : a;
  case FV_MIN: return BETTER_MIN(b, a) ? b : a;
  default: return a + b;
  }
}
static void fv_store(const fastv *f, int64_t o, double v) {
  if (f->op == FV_MEAN) v /= (double)f->p->nred;
  if (f->f32) ((float *)f->out)[o] = (float)v;
  else ((double *)f->out)[o] = v;
}
static void fv_row(void *v, const char *x, int64_t o) {
  fastv *f = v;
  fv_store(f, o, fv_run(f->op, f->f32, x, f->p->nred));
}
static void fv_rows_part(void *v, int64_t s, int64_t e, int t) {
  (void)t;
  fastv *f = v;
  int64_t isz = f->f32 ? 4 : 8;
  lt_odo w;
  if (s >= e) return;
  outer_odo(&w, f->p, f->p->nout_d);
  lt_odo_seek(&w, s);
  for (int64_t o = s; o < e; o++) {
    fv_row(f, f->in + w.off[0] * isz, w.off[1]);
    lt_odo_next(&w);
  }
}
/* few outputs: unit u is piece u % PIECES of output u / PIECES's run;
   partial results, combined in order by the caller */
static double fv_identity(int op) { return op == FV_MAX ? -INFINITY : op == FV_MIN ? INFINITY : 0.0; }
static void fv_piece(void *v, int64_t s, int64_t e, int t) {
  (void)t;
  fastv *f = v;
  int64_t isz = f->f32 ? 4 : 8, n = f->p->nred;
  lt_odo w;
  outer_odo(&w, f->p, f->p->nout_d);
  for (int64_t u = s; u < e; u++) {
    int64_t k = u % LT_ITER_RED_PIECES;
    int64_t a = n * k / LT_ITER_RED_PIECES, b = n * (k + 1) / LT_ITER_RED_PIECES;
    lt_odo_seek(&w, u / LT_ITER_RED_PIECES);
    f->part[u] = a < b ? fv_run(f->op, f->f32, f->in + (w.off[0] + a) * isz, b - a) : fv_identity(f->op);
  }
}

/* max or min of the rows into y (w columns), one running value per column
   (this form vectorises) */
#define COLS_EXT(NAME, T, BETTER, ATTR)                                        \
  ATTR static void NAME(const plan *p, const T *x, T *restrict y, int64_t w) { \
    int64_t n = p->nred, k;                                                   \
    lt_odo rw;   /* the rows: the reduced dims' walk */                       \
    const T *r0, *r1, *r2, *r3;                                               \
    red_odo(&rw, p, p->nred_d);                                               \
    for (int64_t i = 0; i < w; i++) y[i] = x[i];                              \
    lt_odo_next(&rw);                                                         \
    for (k = 1; k + 4 <= n; k += 4) {                                         \
      r0 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      r1 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      r2 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      r3 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      for (int64_t i = 0; i < w; i++) {                                       \
        T m = y[i], v;                                                        \
        v = r0[i]; m = BETTER(v, m) ? v : m;                                  \
        v = r1[i]; m = BETTER(v, m) ? v : m;                                  \
        v = r2[i]; m = BETTER(v, m) ? v : m;                                  \
        v = r3[i]; m = BETTER(v, m) ? v : m;                                  \
        y[i] = m;                                                             \
      }                                                                       \
    }                                                                         \
    for (; k < n; k++) {                                                      \
      r0 = x + rw.off[0];                                                     \
      for (int64_t i = 0; i < w; i++) { T v = r0[i]; y[i] = BETTER(v, y[i]) ? v : y[i]; } \
      lt_odo_next(&rw);                                                       \
    }                                                                         \
  }
/* Rows are taken four at a time and combined before touching the block
   accumulators: a quarter of the accumulator loads and stores. */
#define FV_COLS(S, T, V, ATTR)                                                 \
  COLS_EXT(cols_max_##V##S, T, BETTER_MAX, ATTR)                              \
  COLS_EXT(cols_min_##V##S, T, BETTER_MIN, ATTR)                              \
  ATTR static void fv_cols_##V##S(const fastv *f, const T *x, T *y, int64_t w) { \
    const plan *p = f->p;                                                     \
    if (f->op == FV_MAX) { cols_max_##V##S(p, x, y, w); return; }             \
    if (f->op == FV_MIN) { cols_min_##V##S(p, x, y, w); return; }             \
    int64_t n = p->nred, k = 0;                                               \
    lt_odo rw;   /* the rows: the reduced dims' walk */                       \
    const T *r0, *r1, *r2, *r3;                                               \
    red_odo(&rw, p, p->nred_d);                                               \
    T af[CW];                                                                 \
    double ad[CW];                                                            \
    for (int64_t i = 0; i < w; i++) { af[i] = 0; ad[i] = 0; }                 \
    int cnt = 0;                                                              \
    for (; k + 4 <= n; k += 4) {                                              \
      r0 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      r1 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      r2 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      r3 = x + rw.off[0]; lt_odo_next(&rw);                                  \
      for (int64_t i = 0; i < w; i++) af[i] += (r0[i] + r1[i]) + (r2[i] + r3[i]); \
      if ((cnt += 4) >= CFLUSH) {                                             \
        for (int64_t i = 0; i < w; i++) { ad[i] += (double)af[i]; af[i] = 0; } \
        cnt = 0;                                                              \
      }                                                                       \
    }                                                                         \
    for (; k < n; k++) {                                                      \
      r0 = x + rw.off[0];                                                     \
      for (int64_t i = 0; i < w; i++) af[i] += r0[i];                         \
      lt_odo_next(&rw);                                                       \
    }                                                                         \
    double div = f->op == FV_MEAN ? (double)n : 1.0;                          \
    for (int64_t i = 0; i < w; i++) y[i] = (T)((ad[i] + (double)af[i]) / div); \
  }
/* ---- column sums cut by rows ------------------------------------------------
   A sum or mean over the rows of one matrix (kept dim unit-stride, one
   reduced dim) on several threads: column blocks gave each thread short
   row segments and scaled badly (sum dim=1 of 1000x1000 f32: 43 us on one
   thread, 36-54 on two); cut by rows, each thread streams its own
   contiguous band and sums it into a row of double partials, which are
   added in part order (deterministic for a given thread count; the bands
   start on CFLUSH rows, so each float block is the one-thread path's). */
#define FV_BAND(S, T, V, ATTR)                                                  \
  ATTR static void fv_band_##V##S(const T *x, int64_t rs, int64_t k0, int64_t k1, \
                                  double *dst, int64_t width) {                 \
    T af[CW];                                                                  \
    double ad[CW];                                                             \
    for (int64_t j = 0; j < width; j += CW) {                                  \
      int64_t w = width - j < CW ? width - j : CW, k = k0;                     \
      for (int64_t i = 0; i < w; i++) { af[i] = 0; ad[i] = 0; }                \
      const T *r = x + j + k0 * rs;                                            \
      int cnt = 0;                                                             \
      for (; k + 4 <= k1; k += 4, r += 4 * rs) {                               \
        for (int64_t i = 0; i < w; i++)                                        \
          af[i] += (r[i] + r[rs + i]) + (r[2 * rs + i] + r[3 * rs + i]);       \
        if ((cnt += 4) >= CFLUSH) {                                            \
          for (int64_t i = 0; i < w; i++) { ad[i] += (double)af[i]; af[i] = 0; } \
          cnt = 0;                                                             \
        }                                                                      \
      }                                                                        \
      for (; k < k1; k++, r += rs)                                             \
        for (int64_t i = 0; i < w; i++) af[i] += r[i];                         \
      for (int64_t i = 0; i < w; i++) dst[j + i] = ad[i] + (double)af[i];      \
    }                                                                          \
  }
/* the column kernels of each dtype: blocks (FV_COLS) and bands (FV_BAND) */
#define FV_COL_KERNELS(S, T, V, ATTR) FV_COLS(S, T, V, ATTR) FV_BAND(S, T, V, ATTR)
FV_COL_KERNELS(f32, float, b, )
FV_COL_KERNELS(f64, double, b, )
#ifdef LT_VEC_AVX2
FV_COL_KERNELS(f32, float, x, LT_TARGET_AVX2_FMA)
FV_COL_KERNELS(f64, double, x, LT_TARGET_AVX2_FMA)
#endif

typedef struct bandrun {
  const fastv *f;
  int64_t width, rows, rs;
  int parts;
  double *partial;   /* parts rows of width */
} bandrun;
/* part t's band: rows [rows*t/parts, rows*(t+1)/parts) rounded down to CFLUSH */
static int64_t band_edge(const bandrun *b, int64_t t) {
  if (t >= b->parts) return b->rows;
  return b->rows * t / b->parts / CFLUSH * CFLUSH;
}
static void fv_band_part(void *v, int64_t s, int64_t e, int t) {
  (void)t;
  const bandrun *b = v;
  for (int64_t u = s; u < e; u++) {
    double *dst = b->partial + u * b->width;
    if (b->f->f32)
      PICK(fv_band, f32)((const float *)b->f->in, b->rs, band_edge(b, u), band_edge(b, u + 1), dst, b->width);
    else
      PICK(fv_band, f64)((const double *)b->f->in, b->rs, band_edge(b, u), band_edge(b, u + 1), dst, b->width);
  }
}
/* 1 when done; 0: not this layout, one thread, or no memory for the
   partials (the column blocks then run). */
static int fv_cols_by_rows(fastv *f, lt_pool *pool) {
  const plan *p = f->p;
  if ((f->op != FV_SUM && f->op != FV_MEAN) || p->nout_d != 1 || p->nred_d != 1) return 0;
  int64_t width = p->oshape[0], rows = p->ishape[0];
  int parts = lt_parallel_parts(pool, p->nout * p->nred, VEC_GRAIN, rows / (2 * CFLUSH));
  if (parts < 2) return 0;
  double *partial = malloc(sizeof(double) * (size_t)parts * (size_t)width);
  if (!partial) return 0;
  bandrun b = {f, width, rows, p->istr0[0], parts, partial};
  lt_parallel_run(pool, parts, parts, fv_band_part, &b);
  for (int64_t j = 0; j < width; j++) {
    double v = partial[j];
    for (int t = 1; t < parts; t++) v += partial[t * width + j];
    fv_store(f, j * p->ostr1[0], v);   /* the mean divides there */
  }
  free(partial);
  return 1;
}

static void fv_cols_unit(const colrun *r, acc *c, int64_t o0, int64_t o1, int64_t w) {
  (void)c;
  const char *ibase = lt_data(r->in);
  if (r->in->dtype == LTENSOR_FLOAT32) PICK(fv_cols, f32)(r->f, (const float *)ibase + o0, (float *)r->f->out + o1, w);
  else PICK(fv_cols, f64)(r->f, (const double *)ibase + o0, (double *)r->f->out + o1, w);
}

/* Returns 0 when the layout or dtypes have no fast path. */
static int fast_value(lt_tensor *out, const lt_tensor *in, const plan *p, int op, lt_pool *pool) {
  if (!fast_dtype(in->dtype) || out->dtype != in->dtype || p->nout == 0 || p->nred == 0) return 0;
  fastv f;
  f.p = p; f.in = lt_data(in); f.out = lt_data(out); f.op = op;
  f.f32 = in->dtype == LTENSOR_FLOAT32;
  if (p->nred_d == 1 && p->istr0[0] == 1) {
    int pieces, parts = lt_iter_reduce_parts(p, pool, VEC_GRAIN, 1, &pieces);
    if (pieces == 1) { run_split(pool, parts, p->nout, fv_rows_part, &f); return 1; }
    /* fewer outputs than threads: each run in pieces, partials combined in
       order (deterministic for a given thread count) */
    lt_parallel_run(pool, parts, p->nout * pieces, fv_piece, &f);
    lt_odo w;
    outer_odo(&w, p, p->nout_d);
    for (int64_t o = 0; o < p->nout; o++, lt_odo_next(&w)) {
      double v = f.part[o * pieces];
      for (int k = 1; k < pieces; k++) v = fv_combine(op, v, f.part[o * pieces + k]);
      fv_store(&f, w.off[1], v);
    }
    return 1;
  }
  if (columns_apply(p, in)) {
    if (fv_cols_by_rows(&f, pool)) return 1;
    colrun r = {p, in, NULL, &f, fv_cols_unit, 0, 0, 0};
    run_cols(&r, pool, VEC_GRAIN);
    return 1;
  }
  return 0;
}

/* ---- sum / mean / prod -------------------------------------------------- */
/* Blocks of 256 summed with four accumulators, block sums added to the
   total: error grows with n/256 + 256 rather than n. */
#define SUM_FLOAT(NAME, T)                                                   \
  static void NAME(void *vc, const void *b, int64_t n, int64_t pos) {        \
    (void)pos;                                                               \
    acc *c = vc; const T *x = (const T *)b;                                  \
    double tot = c->f;                                                       \
    for (int64_t s = 0; s < n; s += 256) {                                   \
      int64_t e = n - s < 256 ? n : s + 256, i = s;                          \
      double a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                 \
      for (; i + 4 <= e; i += 4) {                                           \
        a0 += (double)x[i]; a1 += (double)x[i + 1];                          \
        a2 += (double)x[i + 2]; a3 += (double)x[i + 3];                      \
      }                                                                      \
      for (; i < e; i++) a0 += (double)x[i];                                 \
      tot += (a0 + a1) + (a2 + a3);                                          \
    }                                                                        \
    c->f = tot;                                                              \
  }
SUM_FLOAT(sum_f64, double)
SUM_FLOAT(sum_f32, float)

/* sum/product of a chunk into the accumulator (integers in uint64: wraps) */
#define FOLD_FN(NAME, T, S, FIELD, OP)                                         \
  static void NAME(void *vc, const void *b, int64_t n, int64_t pos) {         \
    (void)pos;                                                                \
    acc *c = vc; const T *x = b;                                              \
    S s = c->FIELD;                                                           \
    for (int64_t i = 0; i < n; i++) s OP (S)x[i];                             \
    c->FIELD = s;                                                             \
  }
FOLD_FN(sum_i64, int64_t, uint64_t, i, +=)
/* Floating products in double, in PLANES independent lanes: one chain of
   dependent multiplies costs its latency per element (a float32 prod over
   rows of 1000 ran at ~1.3 ns an element); lanes let it vectorise.  The
   lanes are combined in order, so results do not depend on the chunking
   beyond where a chunk starts (as PyTorch's vectorised prod, the order of
   the multiplies is not the sequential one). */
#define PLANES 8
#define PROD_FLOAT(NAME, T)                                                    \
  static void NAME(void *vc, const void *b, int64_t n, int64_t pos) {         \
    (void)pos;                                                                \
    acc *c = vc; const T *x = (const T *)b;                                   \
    double a[PLANES];                                                         \
    for (int l = 0; l < PLANES; l++) a[l] = 1.0;                              \
    int64_t i = 0;                                                            \
    for (; i + PLANES <= n; i += PLANES)                                      \
      for (int l = 0; l < PLANES; l++) a[l] *= (double)x[i + l];              \
    double s = c->f;                                                          \
    for (int l = 0; l < PLANES; l++) s *= a[l];                               \
    for (; i < n; i++) s *= (double)x[i];                                     \
    c->f = s;                                                                 \
  }
PROD_FLOAT(prod_f64, double)
PROD_FLOAT(prod_f32, float)
FOLD_FN(prod_i64, int64_t, uint64_t, i, *=)
FOLD_FN(prod_c128, lt_cdouble, lt_cdouble, c, *=)
static void sum_c128(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  acc *c = vc; const lt_cdouble *x = b;
  double re = 0, im = 0;
  for (int64_t i = 0; i < n; i++) { re += creal(x[i]); im += cimag(x[i]); }
  c->c += re + im * I;
}
static void row_sumprod(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  char *dst = c->out + o * c->osz;
  int prod = c->mode == 2;
  switch (c->cls) {
  case CLS_F: {
    c->f = prod ? 1.0 : 0.0;
    chunk_fn fn = c->bdt == LTENSOR_FLOAT32 ? (prod ? prod_f32 : sum_f32) : prod ? prod_f64 : sum_f64;
    each_chunk(c->p, in, c->idt, c->bdt, fn, c);
    double v = c->f;
    if (c->mode == 1) v /= (double)c->p->nred;
    lt_store_f64(c->odt, dst, v);
    break;
  }
  case CLS_C: {
    c->c = prod ? 1.0 : 0.0;
    each_chunk(c->p, in, c->idt, c->bdt, prod ? prod_c128 : sum_c128, c);
    lt_cdouble v = c->c;
    if (c->mode == 1) v /= (double)c->p->nred;
    lt_store_c128(c->odt, dst, v);
    break;
  }
  default:
    c->i = prod ? 1 : 0;
    each_chunk(c->p, in, c->idt, c->bdt, prod ? prod_i64 : sum_i64, c);
    lt_store_i64(c->odt, dst, (int64_t)c->i);
  }
}

static void sumprod_columns(const plan *p, const lt_tensor *in, acc *c) {
  colgen g = colgen_of(c);
  int64_t isz = g.isz, bsz = g.bsz, cap = g.cap;
  lt_cast_fn load = g.load, save = g.save;
  cols_fn add = g.add;
  _Alignas(16) char buf[CHUNK_BYTES], accum[CHUNK_BYTES];
  const char *ibase = lt_data(in);
  int lo = p->nout_d - 1, ni = p->nred_d;
  int64_t width = p->oshape[lo];
  int direct_f32 = c->cls == CLS_F && c->idt == LTENSOR_FLOAT32;
  lt_odo ow, rw;   /* the kept dims before the columns; the rows */
  outer_odo(&ow, p, lo);
  red_odo(&rw, p, ni);
  do {
    int64_t o0 = ow.off[0], o1 = ow.off[1];
    for (int64_t j = 0; j < width; j += cap) {
      int64_t w = width - j < cap ? width - j : cap;
      for (int64_t i = 0; i < w; i++) {
        if (c->cls == CLS_F) ((double *)accum)[i] = c->mode == 2;
        else if (c->cls == CLS_C) ((lt_cdouble *)accum)[i] = c->mode == 2;
        else ((uint64_t *)accum)[i] = c->mode == 2;
      }
      do {   /* a full walk of rw ends back at its start */
        const char *src = ibase + (o0 + j + rw.off[0]) * isz;
        if (direct_f32) {   /* the common float32 case, without a staging copy */
          double *x = (double *)accum; const float *y = (const float *)src;
          if (c->mode == 2) for (int64_t i = 0; i < w; i++) x[i] *= (double)y[i];
          else for (int64_t i = 0; i < w; i++) x[i] += (double)y[i];
        } else if (c->idt == c->bdt) {
          add(c, accum, src, w);
        } else {
          load(src, isz, buf, bsz, w);
          add(c, accum, buf, w);
        }
      } while (lt_odo_next(&rw));
      if (c->mode == 1) {
        double nf = (double)p->nred;
        for (int64_t i = 0; i < w; i++) {
          if (c->cls == CLS_C) ((lt_cdouble *)accum)[i] /= nf;
          else ((double *)accum)[i] /= nf;
        }
      }
      save(accum, bsz, c->out + (o1 + j) * c->osz, c->osz, w);
    }
  } while (lt_odo_next(&ow));
}

/* mode: 0 sum, 1 mean, 2 prod.  The compute class follows the output dtype
   (sum(int, dtype=float) converts each element first, as PyTorch does). */
static void reduce_sumprod(lt_tensor *out, const lt_tensor *in, uint32_t mask, int mode, lt_pool *pool) {
  plan p;
  acc c;
  reduce_plan(&p, in, mask);
  acc_start(&c, &p, in, out, wrap_cls(out->dtype), mode);
  if (mode != 2 && fast_value(out, in, &p, mode == 1 ? FV_MEAN : FV_SUM, pool)) return;
  if (columns_apply(&p, in)) { sumprod_columns(&p, in, &c); return; }
  if (c.cls == CLS_F && in->dtype == LTENSOR_FLOAT32) c.bdt = LTENSOR_FLOAT32;
  run_rows_acc(&p, in, row_sumprod, &c, pool);
}

void lt_reduce_sum(lt_tensor *out, const lt_tensor *in, uint32_t mask, int mean, lt_pool *pool) {
  reduce_sumprod(out, in, mask, mean ? 1 : 0, pool);
}
void lt_reduce_prod(lt_tensor *out, const lt_tensor *in, uint32_t mask, lt_pool *pool) {
  reduce_sumprod(out, in, mask, 2, pool);
}

/* ---- max / min / argmax / argmin ----------------------------------------- */
/* The first NaN wins and ends the search; ties keep the first position. */
#define GT(a, b) ((a) > (b))
#define LT(a, b) ((a) < (b))
#define MINMAX_FN(NAME, T, FIELD, BETTER)                                    \
  static void NAME(void *vc, const void *b, int64_t n, int64_t pos) {        \
    acc *c = vc; const T *x = (const T *)b;                                  \
    if (c->done || n == 0) return;                                           \
    T best = c->have ? (T)c->best.FIELD : x[0];                              \
    int64_t bi = c->have ? c->bpos : pos;                                    \
    for (int64_t i = 0; i < n; i++) {                                        \
      T v = x[i];                                                            \
      if (v != v) { best = v; bi = pos + i; c->done = 1; break; }            \
      if (BETTER(v, best)) { best = v; bi = pos + i; }                       \
    }                                                                        \
    c->best.FIELD = best; c->bpos = bi; c->have = 1;                         \
  }
MINMAX_FN(max_f64, double, f, GT)
MINMAX_FN(min_f64, double, f, LT)
MINMAX_FN(max_i64, int64_t, i, GT)
MINMAX_FN(min_i64, int64_t, i, LT)
MINMAX_FN(max_u64, uint64_t, u, GT)
MINMAX_FN(min_u64, uint64_t, u, LT)
/* float32 read in place; the best value is kept as a double (exact) */
MINMAX_FN(max_f32, float, f, GT)
MINMAX_FN(min_f32, float, f, LT)

static chunk_fn minmax_fn(int cls, ltensor_dtype bdt, int is_max) {
  switch (cls) {
  case CLS_F:
    if (bdt == LTENSOR_FLOAT32) return is_max ? max_f32 : min_f32;
    return is_max ? max_f64 : min_f64;
  case CLS_U: return is_max ? max_u64 : min_u64;
  default: return is_max ? max_i64 : min_i64;
  }
}

static void row_minmax(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  c->have = c->done = 0;
  c->bpos = 0;
  c->best.u = 0;
  each_chunk(c->p, in, c->idt, c->bdt, minmax_fn(c->cls, c->bdt, c->mode), c);
  if (c->out) lt_cast_kernel(cls_dtype(c->cls), c->odt)((const char *)&c->best, 0, c->out + o * c->osz, 0, 1);
  if (c->out2) ((int64_t *)c->out2)[o] = c->bpos + 1;
}

void lt_reduce_minmax(lt_tensor *vals, lt_tensor *idx, const lt_tensor *in, uint32_t mask, int is_max, lt_pool *pool) {
  plan p;
  reduce_plan(&p, in, mask);
  if (vals && !idx && fast_value(vals, in, &p, is_max ? FV_MAX : FV_MIN, pool)) return;
  acc c;
  acc_start(&c, &p, in, vals, cls_of(in->dtype), is_max);
  if (in->dtype == LTENSOR_FLOAT32) c.bdt = LTENSOR_FLOAT32;
  if (idx) c.out2 = lt_data(idx);
  run_rows_acc(&p, in, row_minmax, &c, pool);
}

/* ---- all / any --------------------------------------------------------- */
static void allany_chunk(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  acc *c = vc; const uint8_t *x = b;
  if (c->done) return;
  uint8_t want = c->mode ? 0 : 1;   /* all: look for a zero; any: a nonzero */
  for (int64_t i = 0; i < n; i++)
    if ((x[i] != 0) == want) { c->done = 1; return; }
}
static void row_allany(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  c->done = 0;
  each_chunk(c->p, in, c->idt, LTENSOR_BOOL, allany_chunk, c);
  int v = c->mode ? !c->done : c->done;
  lt_store_i64(c->odt, c->out + o * c->osz, v);
}
void lt_reduce_allany(lt_tensor *out, const lt_tensor *in, uint32_t mask, int is_all, lt_pool *pool) {
  plan p;
  acc c;
  reduce_plan(&p, in, mask);
  acc_start(&c, &p, in, out, CLS_I, is_all);
  run_rows_acc(&p, in, row_allany, &c, pool);
}

/* ---- var / std (two passes: mean, then squared deviations) -------------- */
static void dev2_f64(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  acc *c = vc; const double *x = b;
  double m = c->param, s = 0;
  for (int64_t i = 0; i < n; i++) { double d = x[i] - m; s += d * d; }
  c->f += s;
}
static void dev2_c128(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  acc *c = vc; const lt_cdouble *x = b;
  lt_cdouble m = c->cparam;
  double s = 0;
  for (int64_t i = 0; i < n; i++) {
    double dr = creal(x[i]) - creal(m), di = cimag(x[i]) - cimag(m);
    s += dr * dr + di * di;
  }
  c->f += s;
}
static void row_var(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  double nf = (double)c->p->nred;
  if (c->cls == CLS_C) {
    c->c = 0;
    each_chunk(c->p, in, c->idt, c->bdt, sum_c128, c);
    c->cparam = c->c / nf;
    c->f = 0;
    each_chunk(c->p, in, c->idt, c->bdt, dev2_c128, c);
  } else {
    c->f = 0;
    each_chunk(c->p, in, c->idt, c->bdt, sum_f64, c);
    c->param = c->f / nf;
    c->f = 0;
    each_chunk(c->p, in, c->idt, c->bdt, dev2_f64, c);
  }
  /* PyTorch's divisor: N - correction, clamped at 0 (then 0/0 = nan) */
  double div = nf > c->corr ? nf - c->corr : 0.0;
  double v = c->f / div;
  if (c->flag) v = sqrt(v);
  lt_store_f64(c->odt, c->out + o * c->osz, v);
}
void lt_reduce_var(lt_tensor *out, const lt_tensor *in, uint32_t mask, double correction, int take_sqrt, lt_pool *pool) {
  plan p;
  acc c;
  reduce_plan(&p, in, mask);
  acc_start(&c, &p, in, out, lt_is_complex(in->dtype) ? CLS_C : CLS_F, 0);
  c.flag = take_sqrt; c.corr = correction;
  run_rows_acc(&p, in, row_var, &c, pool);
}

/* ---- norm ---------------------------------------------------------------- */
enum { NORM_0, NORM_1, NORM_2, NORM_INF, NORM_NINF, NORM_P };

static void norm_abs(void *vc, const double *a, int64_t n) {
  acc *c = vc;
  double s = c->f;
  switch (c->mode) {
  case NORM_0: for (int64_t i = 0; i < n; i++) s += a[i] != 0; break;
  case NORM_1: case NORM_2: {
    /* PLANES independent sums: one dependent add chain per element ran at
       its latency (norm over rows of 1000 was ~13x PyTorch's time) */
    double l[PLANES] = {0};
    int64_t i = 0;
    if (c->mode == NORM_1)
      for (; i + PLANES <= n; i += PLANES) for (int k = 0; k < PLANES; k++) l[k] += a[i + k];
    else
      for (; i + PLANES <= n; i += PLANES) for (int k = 0; k < PLANES; k++) l[k] += a[i + k] * a[i + k];
    for (; i < n; i++) l[0] += c->mode == NORM_1 ? a[i] : a[i] * a[i];
    for (int k = 0; k < PLANES; k++) s += l[k];
    break;
  }
  /* NaN, once seen, stays: comparisons with it are false */
  case NORM_INF: for (int64_t i = 0; i < n; i++) if (a[i] != a[i] || a[i] > s) s = a[i]; break;
  case NORM_NINF: for (int64_t i = 0; i < n; i++) if (a[i] != a[i] || a[i] < s) s = a[i]; break;
  default: for (int64_t i = 0; i < n; i++) s += pow(a[i], c->param);
  }
  c->f = s;
}
static void norm_f64(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  const double *x = b;
  double a[CHUNK_BYTES / sizeof(double)];
  for (int64_t s = 0; s < n; s += (int64_t)(CHUNK_BYTES / sizeof(double))) {
    int64_t m = n - s < (int64_t)(CHUNK_BYTES / sizeof(double)) ? n - s : (int64_t)(CHUNK_BYTES / sizeof(double));
    for (int64_t i = 0; i < m; i++) a[i] = fabs(x[s + i]);
    norm_abs(vc, a, m);
  }
}
static void norm_c128(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  const lt_cdouble *x = b;
  /* each_chunk hands a contiguous complex128 run over whole (dt == bdt),
     so n is not bounded by the chunk: convert it in pieces of the buffer */
  enum { NA = CHUNK_BYTES / sizeof(lt_cdouble) };
  double a[NA];
  for (int64_t s = 0; s < n; s += NA) {
    int64_t m = n - s < NA ? n - s : NA;
    for (int64_t i = 0; i < m; i++) a[i] = cabs(x[s + i]);
    norm_abs(vc, a, m);
  }
}
/* 1- and 2-norm sums of a contiguous float32/float64 row, read in place
   (no staging copies), in PLANES double lanes */
#define NORM_ROW(NAME, T)                                                      \
  static double NAME(const T *x, int64_t n, int sq) {                         \
    double l[PLANES] = {0};                                                   \
    int64_t i = 0;                                                            \
    if (sq)                                                                   \
      for (; i + PLANES <= n; i += PLANES)                                    \
        for (int k = 0; k < PLANES; k++) l[k] += (double)x[i + k] * (double)x[i + k]; \
    else                                                                      \
      for (; i + PLANES <= n; i += PLANES)                                    \
        for (int k = 0; k < PLANES; k++) l[k] += fabs((double)x[i + k]);      \
    for (; i < n; i++) l[0] += sq ? (double)x[i] * (double)x[i] : fabs((double)x[i]); \
    double s = 0;                                                             \
    for (int k = 0; k < PLANES; k++) s += l[k];                               \
    return s;                                                                 \
  }
NORM_ROW(norm_row_f32, float)
NORM_ROW(norm_row_f64, double)
static void row_norm(void *vc, const char *in, int64_t o) {
  acc *c = vc;
  c->f = c->mode == NORM_NINF ? INFINITY : 0.0;
  const plan *p = c->p;
  if ((c->mode == NORM_1 || c->mode == NORM_2) && p->nred_d == 1 && p->istr0[0] == 1 && fast_dtype(c->idt))
    c->f = c->idt == LTENSOR_FLOAT32 ? norm_row_f32((const float *)in, p->nred, c->mode == NORM_2)
                                     : norm_row_f64((const double *)in, p->nred, c->mode == NORM_2);
  else
    each_chunk(c->p, in, c->idt, c->bdt, c->cls == CLS_C ? norm_c128 : norm_f64, c);
  double v = c->f;
  if (c->mode == NORM_2) v = sqrt(v);
  else if (c->mode == NORM_P) v = pow(v, 1.0 / c->param);
  lt_store_f64(c->odt, c->out + o * c->osz, v);
}
void lt_reduce_norm(lt_tensor *out, const lt_tensor *in, uint32_t mask, double pv, lt_pool *pool) {
  plan p;
  acc c;
  reduce_plan(&p, in, mask);
  acc_start(&c, &p, in, out, lt_is_complex(in->dtype) ? CLS_C : CLS_F,
            pv == 0 ? NORM_0 : pv == 1 ? NORM_1 : pv == 2 ? NORM_2 : pv == INFINITY ? NORM_INF
            : pv == -INFINITY ? NORM_NINF : NORM_P);
  c.param = pv;
  run_rows_acc(&p, in, row_norm, &c, pool);
}

/* ---- logsumexp ----------------------------------------------------------- */
static void sumexp_f64(void *vc, const void *b, int64_t n, int64_t pos) {
  (void)pos;
  acc *c = vc; const double *x = b;
  double m = c->param, s = 0;
  for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
  c->f += s;
}
static void row_logsumexp(void *vc, const char *in, int64_t o) {
  acc *c = vc;
#ifdef LT_VEC
  /* float32/float64 rows: the vector max and exp-sum of softmax's pass;
     a row whose max is not finite takes the generic path below */
  const plan *p = c->p;
  if (p->nred_d == 1 && p->istr0[0] == 1 && p->nred > 0 && fast_dtype(c->idt) && c->odt == c->idt) {
    int64_t n = p->nred;
    if (c->idt == LTENSOR_FLOAT32) {
      const float *x = (const float *)in;
      float m = max_run_f32(x, n);
      if (isfinite(m)) { ((float *)c->out)[o] = (float)(log(sumexp_row_f32(x, n, m)) + m); return; }
    } else {
      const double *x = (const double *)in;
      double m = max_run_f64(x, n);
      if (isfinite(m)) { ((double *)c->out)[o] = log(sumexp_row_f64(x, n, m)) + m; return; }
    }
  }
#endif
  c->have = c->done = 0;
  c->best.f = -INFINITY;
  each_chunk(c->p, in, c->idt, c->bdt, max_f64, c);
  double m = c->have ? c->best.f : -INFINITY;
  /* as PyTorch: an infinite max is not subtracted (inf - inf would be nan) */
  if (isinf(m)) m = 0;
  c->param = m;
  c->f = 0;
  each_chunk(c->p, in, c->idt, c->bdt, sumexp_f64, c);
  lt_store_f64(c->odt, c->out + o * c->osz, log(c->f) + m);
}
void lt_reduce_logsumexp(lt_tensor *out, const lt_tensor *in, uint32_t mask, lt_pool *pool) {
  plan p;
  acc c;
  reduce_plan(&p, in, mask);
  acc_start(&c, &p, in, out, CLS_F, 0);
  run_rows_acc(&p, in, row_logsumexp, &c, pool);
}
