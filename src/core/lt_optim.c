/*
 * lt_optim.c -- fused optimizer update kernels, the C half of
 * lua/ltensor/optim.lua (src/binding/l_optim.c checks the arguments);
 * Lua-free.
 *
 * One call updates one parameter p (float32/float64) in place from its
 * gradient and its state buffers b1..b3 (tensors of p's shape and dtype, or
 * nil where the variant has none), in one pass over the elements.  The
 * scalars h1..h9 are the group's hyper-parameters and the per-step
 * quantities (bias corrections, step sizes) that optim.lua computes once per
 * parameter, so the kernels hold no optimizer logic beyond PyTorch 1.13's
 * per-element formulas.
 *
 * The per-element arithmetic follows the order of PyTorch 1.13's
 * _single_tensor_<name> functions op by op, in the parameter's precision
 * with the Python scalars rounded to it (as PyTorch's CPU kernels do), so a
 * float32 trajectory stays within float rounding of PyTorch's:
 *   add_(x, alpha=a)        s + a*x
 *   addcmul_(x, y, value=a) s + (a*x)*y
 *   addcdiv_(x, y, value=a) s + (a*x)/y
 * Buffers are always contiguous (optim.lua makes them); a non-contiguous
 * gradient is read through a contiguous copy, and a non-contiguous
 * parameter is updated through a copy written back at the end.
 */
/* The kernels are written for the vectoriser (branch-free loops, see
   OPTIM_KERNELS): the Makefile builds this file with -O3 -fno-math-errno as
   it does lt_k_binary.c (without it every sqrt keeps an errno branch and no
   loop vectorises; GCC's optimize pragma does not get rid of it).  No
   -ffast-math and no contraction: the operation order is PyTorch's. */
#include <math.h>
#include <string.h>
#include "lt_optim.h"
#include "lt_cpu.h"

/* Per-dtype kernels: T is the element type.  d is the (possibly negated,
   weight-decayed) gradient, computed first exactly as PyTorch builds it.
   Each kernel body is an always-inline function whose structural flags
   (which buffers exist, first step, nesterov) are compile-time constants at
   every call site below, so each variant is a branch-free loop the
   vectoriser takes; maximize and weight decay are selects (both sides are
   cheap and side-effect free). */
#define INL static inline __attribute__((always_inline))
#define GRAD(i) (maximize ? -g[i] : g[i])
#define WD(d, x) (has_wd ? (d) + wd * (x) : (d))
/* Adam's first and second moments of the gradient d at i, stored back
   (Adam, NAdam and RAdam share them; PyTorch's order of operations) */
#define ADAM_MOMENTS(T, mi, vi)                                                \
  T mi = m[i] * b1 + omb1 * d;                                                 \
  T vi = v[i] * b2 + (omb2 * d) * d;                                           \
  m[i] = mi; v[i] = vi
/* the kernels with structural variants (SGD, Adam, RMSprop) */
#define OPTIM_KERNELS(T, SQRT, FABS, SUF, ATTR)                                                        \
  INL ATTR void sgd_k_##SUF(int64_t n, T *p, const T *g, T *buf, const double *h, const int mom_on,  \
                       const int first, const int nesterov) {                                    \
    const int has_wd = h[3] != 0, maximize = h[5] != 0;                                          \
    const T mom = (T)h[1], damp1 = (T)(1.0 - h[2]), wd = (T)h[3], neglr = (T)(-h[0]);            \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      if (mom_on) {                                                                              \
        T b = first ? d : buf[i] * mom + damp1 * d;                                              \
        buf[i] = b;                                                                              \
        d = nesterov ? d + mom * b : b;                                                          \
      }                                                                                          \
      p[i] = p[i] + neglr * d;                                                                   \
    }                                                                                            \
  }                                                                                              \
  static ATTR void sgd_##SUF(int64_t n, T *p, const T *g, T *buf, const double *h) {                \
    const int nest = h[4] != 0;                                                                  \
    if (h[1] == 0) sgd_k_##SUF(n, p, g, buf, h, 0, 0, 0);                                        \
    else if (h[6] != 0) {                                                                        \
      if (nest) sgd_k_##SUF(n, p, g, buf, h, 1, 1, 1);                                           \
      else sgd_k_##SUF(n, p, g, buf, h, 1, 1, 0);                                                \
    } else if (nest) sgd_k_##SUF(n, p, g, buf, h, 1, 0, 1);                                      \
    else sgd_k_##SUF(n, p, g, buf, h, 1, 0, 0);                                                  \
  }                                                                                              \
  INL ATTR void adam_k_##SUF(int64_t n, T *p, const T *g, T *m, T *v, T *vmax, const double *h,      \
                        const int ams, const int decoupled) {                                    \
    const T b1 = (T)h[1], b2 = (T)h[2], eps = (T)h[3], wd = (T)h[4];                             \
    const T omb1 = (T)(1.0 - h[1]), omb2 = (T)(1.0 - h[2]);                                      \
    const int maximize = h[5] != 0, has_wd = !decoupled && h[4] != 0;                            \
    const T decay = (T)(1.0 - h[0] * h[4]);                                                      \
    const T negstep = (T)(-h[7]), bc2s = (T)h[8];                                                \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T pi = decoupled ? p[i] * decay : p[i];                                                    \
      T d = WD(GRAD(i), pi);                                                                     \
      ADAM_MOMENTS(T, mi, vi);                                                                   \
      T vv = vi;                                                                                 \
      if (ams) {                                                                                 \
        T a = vmax[i];                                                                           \
        vv = ((a != a) | (vi != vi)) ? (T)NAN : (a > vi ? a : vi); /* maximum propagates NaN */     \
        vmax[i] = vv;                                                                            \
      }                                                                                          \
      T denom = SQRT(vv) / bc2s + eps;                                                           \
      p[i] = pi + (negstep * mi) / denom;                                                        \
    }                                                                                            \
  }                                                                                              \
  static ATTR void adam_##SUF(int64_t n, T *p, const T *g, T *m, T *v, T *vmax, const double *h) {  \
    if (h[6] != 0) {                                                                             \
      if (vmax) adam_k_##SUF(n, p, g, m, v, vmax, h, 1, 1);                                      \
      else adam_k_##SUF(n, p, g, m, v, vmax, h, 0, 1);                                           \
    } else if (vmax) adam_k_##SUF(n, p, g, m, v, vmax, h, 1, 0);                                 \
    else adam_k_##SUF(n, p, g, m, v, vmax, h, 0, 0);                                             \
  }                                                                                              \
  INL ATTR void rmsprop_k_##SUF(int64_t n, T *p, const T *g, T *sq, T *buf, T *ga, const double *h,  \
                           const int mom_on, const int centered) {                               \
    const T alpha = (T)h[1], oma = (T)(1.0 - h[1]), eps = (T)h[2], wd = (T)h[3];                \
    const T mom = (T)h[4], neglr = (T)(-h[0]);                                                   \
    const int maximize = h[5] != 0, has_wd = h[3] != 0;                                          \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      T s = sq[i] * alpha + (oma * d) * d;                                                       \
      sq[i] = s;                                                                                 \
      T avg;                                                                                     \
      if (centered) {                                                                            \
        T a = ga[i] * alpha + oma * d;                                                           \
        ga[i] = a;                                                                               \
        avg = SQRT(s + ((T)-1 * a) * a);                                                         \
      } else {                                                                                   \
        avg = SQRT(s);                                                                           \
      }                                                                                          \
      avg = avg + eps;                                                                           \
      if (mom_on) {                                                                              \
        T b = buf[i] * mom + ((T)1 * d) / avg;                                                   \
        buf[i] = b;                                                                              \
        p[i] = p[i] + neglr * b;                                                                 \
      } else {                                                                                   \
        p[i] = p[i] + (neglr * d) / avg;                                                         \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  static ATTR void rmsprop_##SUF(int64_t n, T *p, const T *g, T *sq, T *buf, T *ga, const double *h) {\
    if (buf) {                                                                                   \
      if (ga) rmsprop_k_##SUF(n, p, g, sq, buf, ga, h, 1, 1);                                    \
      else rmsprop_k_##SUF(n, p, g, sq, buf, ga, h, 1, 0);                                       \
    } else if (ga) rmsprop_k_##SUF(n, p, g, sq, buf, ga, h, 0, 1);                               \
    else rmsprop_k_##SUF(n, p, g, sq, buf, ga, h, 0, 0);                                         \
  }
/* the one-buffer and two-buffer kernels without structural variants */
#define OPTIM_KERNELS_2(T, SQRT, FABS, SUF, ATTR)                                                      \
  static ATTR void adagrad_##SUF(int64_t n, T *p, const T *g, T *sum, const double *h) {             \
    const T negclr = (T)(-h[0]), eps = (T)h[1], wd = (T)h[2];                                    \
    const int maximize = h[3] != 0, has_wd = h[2] != 0;                                          \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      T s = sum[i] + ((T)1 * d) * d;                                                             \
      sum[i] = s;                                                                                \
      T std = SQRT(s) + eps;                                                                     \
      p[i] = p[i] + (negclr * d) / std;                                                          \
    }                                                                                            \
  }                                                                                              \
  static ATTR void adadelta_##SUF(int64_t n, T *p, const T *g, T *sq, T *acc, const double *h) {     \
    const T neglr = (T)(-h[0]), rho = (T)h[1], omr = (T)(1.0 - h[1]), eps = (T)h[2];             \
    const T wd = (T)h[3];                                                                        \
    const int maximize = h[4] != 0, has_wd = h[3] != 0;                                          \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      T s = sq[i] * rho + (omr * d) * d;                                                         \
      sq[i] = s;                                                                                 \
      T std = SQRT(s + eps);                                                                     \
      T delta = SQRT(acc[i] + eps) / std * d;                                                    \
      acc[i] = acc[i] * rho + (omr * delta) * delta;                                             \
      p[i] = p[i] + neglr * delta;                                                               \
    }                                                                                            \
  }                                                                                              \
  static ATTR void adamax_##SUF(int64_t n, T *p, const T *g, T *m, T *u, const double *h) {          \
    const T negclr = (T)(-h[0]), b1 = (T)h[1], omb1 = (T)(1.0 - h[1]), b2 = (T)h[2];             \
    const T eps = (T)h[3], wd = (T)h[4];                                                         \
    const int maximize = h[5] != 0, has_wd = h[4] != 0;                                          \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      T mi = m[i] * b1 + omb1 * d;                                                               \
      m[i] = mi;                                                                                 \
      T a = u[i] * b2, b = FABS(d) + eps;                                                        \
      T ui = ((a != a) | (b != b)) ? (T)NAN : (a > b ? a : b); /* amax propagates NaN */            \
      u[i] = ui;                                                                                 \
      p[i] = p[i] + (negclr * mi) / ui;                                                          \
    }                                                                                            \
  }                                                                                              \
  static ATTR void nadam_##SUF(int64_t n, T *p, const T *g, T *m, T *v, const double *h) {           \
    const T b1 = (T)h[0], omb1 = (T)(1.0 - h[0]), b2 = (T)h[1], omb2 = (T)(1.0 - h[1]);          \
    const T eps = (T)h[2], wd = (T)h[3], bc2 = (T)h[4], cg = (T)h[5], cm = (T)h[6];              \
    const int maximize = 0, has_wd = h[3] != 0;                                                  \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      ADAM_MOMENTS(T, mi, vi);                                                                   \
      T denom = SQRT(vi / bc2) + eps;                                                            \
      T pi = p[i] + (cg * d) / denom;                                                            \
      p[i] = pi + (cm * mi) / denom;                                                             \
    }                                                                                            \
  }                                                                                              \
  INL ATTR void radam_k_##SUF(int64_t n, T *p, const T *g, T *m, T *v, const double *h,              \
                         const int rectify) {                                                    \
    const T lr = (T)h[0], b1 = (T)h[1], omb1 = (T)(1.0 - h[1]), b2 = (T)h[2];                    \
    const T omb2 = (T)(1.0 - h[2]), eps = (T)h[3], wd = (T)h[4], bc1 = (T)h[5];                  \
    const T rect = (T)h[7], bc2s = (T)h[8];                                                      \
    const int maximize = 0, has_wd = h[4] != 0;                                                  \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T d = WD(GRAD(i), p[i]);                                                                   \
      ADAM_MOMENTS(T, mi, vi);                                                                   \
      T bcm = mi / bc1;                                                                          \
      T upd;                                                                                     \
      if (rectify) {                                                                             \
        T alr = ((T)1 / (SQRT(vi) + eps)) * bc2s; /* scalar / tensor is reciprocal() * s */     \
        upd = ((bcm * lr) * alr) * rect;                                                         \
      } else {                                                                                   \
        upd = bcm * lr;                                                                          \
      }                                                                                          \
      p[i] = p[i] + (T)-1 * upd;                                                                 \
    }                                                                                            \
  }                                                                                              \
  static ATTR void radam_##SUF(int64_t n, T *p, const T *g, T *m, T *v, const double *h) {           \
    if (h[6] != 0) radam_k_##SUF(n, p, g, m, v, h, 1);                                           \
    else radam_k_##SUF(n, p, g, m, v, h, 0);                                                     \
  }

OPTIM_KERNELS(float, sqrtf, fabsf, f32, )
OPTIM_KERNELS_2(float, sqrtf, fabsf, f32, )
OPTIM_KERNELS(double, sqrt, fabs, f64, )
OPTIM_KERNELS_2(double, sqrt, fabs, f64, )
/* AVX2 builds of the same loops, chosen at run time (as lt_k_loops.h does
   for the binary kernels): wider loads and stores, same operations in the
   same order (no "fma": every product and sum still rounds separately), so
   results are bit-identical to the baseline build. */
#if LT_CPU_X86
#define LT_OPTIM_AVX2 1
OPTIM_KERNELS(float, sqrtf, fabsf, f32_avx2, LT_TARGET_AVX2)
OPTIM_KERNELS_2(float, sqrtf, fabsf, f32_avx2, LT_TARGET_AVX2)
OPTIM_KERNELS(double, sqrt, fabs, f64_avx2, LT_TARGET_AVX2)
OPTIM_KERNELS_2(double, sqrt, fabs, f64_avx2, LT_TARGET_AVX2)
#endif


/* the kernel of one kind for element type T and build SUF */
#define DISPATCH(T, SUF)                                                                      \
  do {                                                                                        \
    T *P = (T *)p, *B0 = (T *)b[0], *B1 = (T *)b[1], *B2 = (T *)b[2];                         \
    const T *G = (const T *)g;                                                                \
    switch (kind) {                                                                           \
    case LT_OPTIM_SGD: sgd_##SUF(n, P, G, B0, h); break;                                      \
    case LT_OPTIM_ADAM: case LT_OPTIM_ADAMW: adam_##SUF(n, P, G, B0, B1, B2, h); break;       \
    case LT_OPTIM_RMSPROP: rmsprop_##SUF(n, P, G, B0, B1, B2, h); break;                      \
    case LT_OPTIM_ADAGRAD: adagrad_##SUF(n, P, G, B0, h); break;                              \
    case LT_OPTIM_ADADELTA: adadelta_##SUF(n, P, G, B0, B1, h); break;                        \
    case LT_OPTIM_ADAMAX: adamax_##SUF(n, P, G, B0, B1, h); break;                            \
    case LT_OPTIM_NADAM: nadam_##SUF(n, P, G, B0, B1, h); break;                              \
    case LT_OPTIM_RADAM: radam_##SUF(n, P, G, B0, B1, h); break;                              \
    }                                                                                         \
  } while (0)

int lt_optim_update(int kind, ltensor_dtype dt, int64_t n, void *p, const void *g, void *const b[3],
                    const double *h) {
  if (kind < 1 || kind > LT_OPTIM_LAST || (dt != LTENSOR_FLOAT32 && dt != LTENSOR_FLOAT64)) return -1;
#ifdef LT_OPTIM_AVX2
  if (n >= 16 && lt_cpu_has_avx2()) {
    if (dt == LTENSOR_FLOAT32) DISPATCH(float, f32_avx2);
    else DISPATCH(double, f64_avx2);
    return 0;
  }
#endif
  if (dt == LTENSOR_FLOAT32) DISPATCH(float, f32);
  else DISPATCH(double, f64);
  return 0;
}
