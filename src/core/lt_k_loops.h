/*
 * lt_k_loops.h -- private to the lt_k_*.c kernel files: the dtype lists the
 * kernels are instantiated from and the loop skeletons.
 *
 * Each skeleton takes an expression over the loaded element(s) and emits a
 * loop of lt_iter's signature with branches for the layouts that matter:
 * all contiguous, one input a broadcast scalar (stride 0), and strided.
 * The contiguous branches are plain indexed loops the compiler vectorises.
 */
#ifndef LT_K_LOOPS_H
#define LT_K_LOOPS_H

#include <math.h>
#include <complex.h>
#include "lt_iter.h"
#include "lt_cpu.h"

/* The build's -O2 only vectorises loops the "very cheap" cost model
   accepts, which excludes loops that need a runtime alias check (outputs
   may alias inputs in place).  The Makefile compiles the lt_k_*.c files
   with -O3 -fno-math-errno instead (no `#pragma GCC optimize`: with it GCC
   does not if-convert, and loops with a select do not vectorise). */

/* M(op, E, T, UT): integer dtypes with their unsigned twin (wrapping math) */
#define LT_FOR_UINTS(M, op) M(op, UINT8, uint8_t, uint8_t) M(op, UINT16, uint16_t, uint16_t) \
  M(op, UINT32, uint32_t, uint32_t) M(op, UINT64, uint64_t, uint64_t)
#define LT_FOR_SINTS(M, op) M(op, INT8, int8_t, uint8_t) M(op, INT16, int16_t, uint16_t) \
  M(op, INT32, int32_t, uint32_t) M(op, INT64, int64_t, uint64_t)
#define LT_FOR_INTS(M, op) LT_FOR_UINTS(M, op) LT_FOR_SINTS(M, op)
/* M(op, E, T, S): S is the libm suffix (sqrtf / sqrt, csqrtf / csqrt) */
#define LT_FOR_FLOATS(M, op) M(op, FLOAT32, float, f) M(op, FLOAT64, double, )
#define LT_FOR_CPLX(M, op) M(op, COMPLEX64, lt_cfloat, f) M(op, COMPLEX128, lt_cdouble, )

/* table entries */
#define LT_ENT(op, E, ...) [LTENSOR_##E] = k_##op##_##E,
#define LT_TAB_B(op) [LTENSOR_BOOL] = k_##op##_BOOL,
#define LT_TAB_I(op) LT_FOR_INTS(LT_ENT, op)
#define LT_TAB_F(op) LT_FOR_FLOATS(LT_ENT, op)
#define LT_TAB_C(op) LT_FOR_CPLX(LT_ENT, op)

#define LT_SIGNED(T) ((T)-1 < (T)0)
#define LT_KERR(ctx) atomic_store_explicit(&(ctx)->err, LT_KERR_ZERODIV, memory_order_relaxed)

/* binary: out TO = EXPR(a, b) with a, b of type TI */
#define LT_LOOP2_A(NAME, ATTR, TI, TO, EXPR)                                             \
  static ATTR void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {             \
    lt_kctx *ctx = (lt_kctx *)vctx; (void)ctx;                                            \
    const int64_t so = s[0], sa = s[1], sb = s[2];                                        \
    if (so == (int64_t)sizeof(TO) && sa == (int64_t)sizeof(TI) && sb == (int64_t)sizeof(TI)) { \
      TO *o = (TO *)d[0]; const TI *pa = (const TI *)d[1], *pb = (const TI *)d[2];       \
      for (int64_t i = 0; i < n; i++) { TI a = pa[i], b = pb[i]; o[i] = (EXPR); }         \
    } else if (so == (int64_t)sizeof(TO) && sa == (int64_t)sizeof(TI) && sb == 0) {       \
      TO *o = (TO *)d[0]; const TI *pa = (const TI *)d[1]; const TI b = *(const TI *)d[2]; \
      for (int64_t i = 0; i < n; i++) { TI a = pa[i]; o[i] = (EXPR); }                    \
    } else if (so == (int64_t)sizeof(TO) && sa == 0 && sb == (int64_t)sizeof(TI)) {       \
      TO *o = (TO *)d[0]; const TI a = *(const TI *)d[1]; const TI *pb = (const TI *)d[2]; \
      for (int64_t i = 0; i < n; i++) { TI b = pb[i]; o[i] = (EXPR); }                    \
    } else {                                                                              \
      char *po = d[0]; const char *pa = d[1], *pb = d[2];                                 \
      for (int64_t i = 0; i < n; i++, po += so, pa += sa, pb += sb) {                     \
        TI a = *(const TI *)pa, b = *(const TI *)pb; *(TO *)po = (EXPR);                  \
      }                                                                                   \
    }                                                                                     \
  }

/* Binary kernels are memory-bound, yet with the data in L2/L3 the AVX2
   build of the same loop ran ~1.2-1.3x faster than the baseline SSE2 one
   in a 1M-float microbenchmark here (fewer, wider loads and stores); the
   choice is made per call as in LT_LOOP1_V below (one load of a cached
   flag, skipped for tiny n).  No "fma": add_alpha's a + alpha*b must keep
   rounding twice, as the baseline build does. */
#if LT_CPU_X86
#define LT_LOOP2(NAME, TI, TO, EXPR)                                                     \
  LT_LOOP2_A(NAME##_generic, , TI, TO, EXPR)                                             \
  LT_LOOP2_A(NAME##_avx2, LT_TARGET_AVX2, TI, TO, EXPR)                                  \
  static void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {                  \
    if (n >= 16 && lt_cpu_has_avx2()) NAME##_avx2(d, s, n, vctx);                         \
    else NAME##_generic(d, s, n, vctx);                                                   \
  }
#else
#define LT_LOOP2(NAME, TI, TO, EXPR) LT_LOOP2_A(NAME, , TI, TO, EXPR)
#endif

/* unary: out TO = EXPR(x) */
#define LT_LOOP1(NAME, TI, TO, EXPR) LT_LOOP1_A(NAME, , TI, TO, EXPR)
#define LT_LOOP1_A(NAME, ATTR, TI, TO, EXPR)                                             \
  static ATTR void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {             \
    lt_kctx *ctx = (lt_kctx *)vctx; (void)ctx;                                            \
    const int64_t so = s[0], sa = s[1];                                                   \
    if (so == (int64_t)sizeof(TO) && sa == (int64_t)sizeof(TI)) {                         \
      TO *o = (TO *)d[0]; const TI *pa = (const TI *)d[1];                                \
      for (int64_t i = 0; i < n; i++) { TI x = pa[i]; o[i] = (EXPR); }                    \
    } else {                                                                              \
      char *po = d[0]; const char *pa = d[1];                                             \
      for (int64_t i = 0; i < n; i++, po += so, pa += sa) {                               \
        TI x = *(const TI *)pa; *(TO *)po = (EXPR);                                       \
      }                                                                                   \
    }                                                                                     \
  }

/* LT_LOOP1_V: LT_LOOP1 compiled twice, for the build's baseline ISA and
   for AVX2+FMA, picked per call from the CPU's features.  For the
   compute-bound kernels (lt_vmath.h) the wider vectors and fused
   multiply-adds are worth about 2x, and a distributed build cannot assume
   them (no -march=native). */
#if LT_CPU_X86
#define LT_LOOP1_V(NAME, TI, TO, EXPR)                                                   \
  LT_LOOP1_A(NAME##_generic, , TI, TO, EXPR)                                             \
  LT_LOOP1_A(NAME##_avx2, LT_TARGET_AVX2_FMA, TI, TO, EXPR)                              \
  static void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {                  \
    if (lt_cpu_has_avx2_fma())                                                            \
      NAME##_avx2(d, s, n, vctx);                                                         \
    else                                                                                  \
      NAME##_generic(d, s, n, vctx);                                                      \
  }
#else
#define LT_LOOP1_V(NAME, TI, TO, EXPR) LT_LOOP1(NAME, TI, TO, EXPR)
#endif

/* ternary: out TO = EXPR(a, b, c) with a of TA and b, c of TI */
#define LT_LOOP3(NAME, TA, TI, TO, EXPR)                                                 \
  static void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {                  \
    lt_kctx *ctx = (lt_kctx *)vctx; (void)ctx;                                            \
    char *po = d[0]; const char *pa = d[1], *pb = d[2], *pc = d[3];                       \
    for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1], pb += s[2], pc += s[3]) {     \
      TA a = *(const TA *)pa; TI b = *(const TI *)pb, c = *(const TI *)pc;                \
      *(TO *)po = (EXPR);                                                                 \
    }                                                                                     \
  }

#endif
