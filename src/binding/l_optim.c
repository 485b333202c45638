/*
 * l_optim.c -- fused optimizer update kernels, the C half of
 * lua/ltensor/optim/.
 *
 *   T._optim_update(kind, p, grad, b1, b2, b3, h1, ..., h9)
 *
 * One call updates one parameter p (float32/float64) in place from its
 * gradient and its state buffers b1..b3 (tensors of p's shape and dtype, or
 * nil where the variant has none), in one pass over the elements.  The
 * scalars h1..h9 are the group's hyper-parameters and the per-step
 * quantities (bias corrections, step sizes) that optim/first_order.lua computes once per
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
 * Buffers are always contiguous (optim/first_order.lua makes them); a non-contiguous
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
#include "l_lua.h"

enum {
  K_SGD = 1,       /* b1 momentum_buffer; h: lr, momentum, dampening, wd, nesterov, maximize, first */
  K_ADAM = 2,      /* b1 exp_avg, b2 exp_avg_sq, b3 max_exp_avg_sq|nil;
                      h: lr, beta1, beta2, eps, wd, maximize, decoupled, step_size, bc2_sqrt */
  K_RMSPROP = 3,   /* b1 square_avg, b2 momentum_buffer|nil, b3 grad_avg|nil;
                      h: lr, alpha, eps, wd, momentum, maximize */
  K_ADAGRAD = 4,   /* b1 sum; h: clr, eps, wd, maximize */
  K_ADADELTA = 5,  /* b1 square_avg, b2 acc_delta; h: lr, rho, eps, wd, maximize */
  K_ADAMAX = 6,    /* b1 exp_avg, b2 exp_inf; h: clr, beta1, beta2, eps, wd, maximize */
  K_NADAM = 7,     /* b1 exp_avg, b2 exp_avg_sq; h: beta1, beta2, eps, wd, bc2, c_grad, c_avg */
  K_RADAM = 8,     /* b1 exp_avg, b2 exp_avg_sq;
                      h: lr, beta1, beta2, eps, wd, bc1, rectify, rect, bc2_sqrt */
  K_ADAMW = 9,     /* Adam's kernel under AdamW's name (h[6] = decoupled) */
  K_LAST = 9
};

#define NH 9

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
  }                                                                                              \
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
OPTIM_KERNELS(double, sqrt, fabs, f64, )
/* AVX2 builds of the same loops, chosen at run time (as lt_k_loops.h does
   for the binary kernels): wider loads and stores, same operations in the
   same order (no "fma": every product and sum still rounds separately), so
   results are bit-identical to the baseline build. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define LT_OPTIM_AVX2 1
OPTIM_KERNELS(float, sqrtf, fabsf, f32_avx2, __attribute__((target("avx2"))))
OPTIM_KERNELS(double, sqrt, fabs, f64_avx2, __attribute__((target("avx2"))))
#endif

static const char *const kind_fnames[K_LAST + 1] = {
  "optim", "optim.SGD", "optim.Adam", "optim.RMSprop", "optim.Adagrad", "optim.Adadelta", "optim.Adamax",
  "optim.NAdam", "optim.RAdam", "optim.AdamW"
};

/* A buffer argument: nil, or a contiguous tensor of p's dtype and numel. */
static lt_tensor *check_buf(lua_State *L, int idx, const lt_tensor *p, const char *fname,
                            const char *what) {
  if (lua_isnoneornil(L, idx)) return NULL;
  lt_tensor *b = ltl_check(L, idx);
  if (b->dtype != p->dtype || lt_numel(b) != lt_numel(p) || !lt_is_contiguous(b))
    ltl_error(L, fname, "state '%s' does not match its parameter (expected a contiguous %s tensor of "
             "%I elements)", what, lt_dtypes[p->dtype].name, (lua_Integer)lt_numel(p));
  if (lt_has_internal_overlap(b) && lt_numel(b) > 1)
    ltl_error(L, fname, "state '%s' overlaps itself", what);
  return b;
}

static int same_shape(const lt_tensor *a, const lt_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static int l_optim_update(lua_State *L) {
  lua_Integer kind = ltl_checkinteger(L, 1);
  if (kind < 1 || kind > K_LAST) return ltl_error(L, "optim", "unknown optimizer kernel %d", (int)kind);
  /* the error-message name, "optim.<Name>"; messages are built only on errors */
  const char *fname = kind_fnames[kind];
  lt_tensor *p = ltl_check(L, 2);
  lt_tensor *g = ltl_check(L, 3);
  if (p->dtype != LTENSOR_FLOAT32 && p->dtype != LTENSOR_FLOAT64)
    return ltl_error(L, fname, "parameters of dtype %s are not supported (float32 and float64 are)",
                    lt_dtypes[p->dtype].name);
  if (g->dtype != p->dtype)
    return ltl_error(L, fname, "the gradient's dtype (%s) differs from the parameter's (%s)",
                    lt_dtypes[g->dtype].name, lt_dtypes[p->dtype].name);
  if (!same_shape(p, g))
    return ltl_error(L, fname, "the gradient's shape differs from the parameter's");
  if (lt_has_internal_overlap(p) && lt_numel(p) > 1)
    return ltl_error(L, fname, "unsupported operation: a parameter that overlaps itself (an expanded "
                    "view) can't be updated in place");
  lt_tensor *b[3];
  static const char *const bn[3] = {"buffer 1", "buffer 2", "buffer 3"};
  for (int i = 0; i < 3; i++) b[i] = check_buf(L, 4 + i, p, fname, bn[i]);
  double h[NH];
  for (int i = 0; i < NH; i++) h[i] = ltl_optnumber(L, 7 + i, 0);
  lua_settop(L, 6 + NH);
  int need[K_LAST + 1] = {0, 0, 2, 1, 1, 2, 2, 2, 2, 2};   /* buffers each kind requires */
  for (int i = 0; i < need[kind]; i++)
    if (!b[i]) return ltl_error(L, fname, "missing state buffer %d", i + 1);
  if (kind == K_SGD && h[1] != 0 && !b[0]) return ltl_error(L, fname, "missing momentum buffer");

  int64_t n = lt_numel(p);
  if (n == 0) return 0;
  /* every operand as contiguous memory; all work below is allocation-free */
  lt_tensor *gc = g, *pc = p;
  if (!lt_is_contiguous(g)) gc = ltl_push_clone(L, g);
  if (!lt_is_contiguous(p)) pc = ltl_push_clone(L, p);
#define PTR(t, T) ((t) ? (T *)lt_data(t) : NULL)
#define DISPATCH(T, SUF)                                                                           \
  do {                                                                                             \
    T *P = (T *)lt_data(pc);                                                                       \
    const T *G = (const T *)lt_data(gc);                                                           \
    T *B0 = PTR(b[0], T), *B1 = PTR(b[1], T), *B2 = PTR(b[2], T);                                  \
    switch (kind) {                                                                                \
    case K_SGD: sgd_##SUF(n, P, G, B0, h); break;                                                  \
    case K_ADAM: case K_ADAMW: adam_##SUF(n, P, G, B0, B1, B2, h); break;                                        \
    case K_RMSPROP: rmsprop_##SUF(n, P, G, B0, B1, B2, h); break;                                  \
    case K_ADAGRAD: adagrad_##SUF(n, P, G, B0, h); break;                                          \
    case K_ADADELTA: adadelta_##SUF(n, P, G, B0, B1, h); break;                                    \
    case K_ADAMAX: adamax_##SUF(n, P, G, B0, B1, h); break;                                        \
    case K_NADAM: nadam_##SUF(n, P, G, B0, B1, h); break;                                          \
    case K_RADAM: radam_##SUF(n, P, G, B0, B1, h); break;                                          \
    }                                                                                              \
  } while (0)
#ifdef LT_OPTIM_AVX2
  if (n >= 16 && __builtin_cpu_supports("avx2")) {
    if (p->dtype == LTENSOR_FLOAT32) DISPATCH(float, f32_avx2);
    else DISPATCH(double, f64_avx2);
  } else
#endif
  if (p->dtype == LTENSOR_FLOAT32) DISPATCH(float, f32);
  else DISPATCH(double, f64);
#undef DISPATCH
#undef PTR
  if (pc != p) lt_copy_into(p, pc);
  lt_bump_version(p);
  for (int i = 0; i < 3; i++)
    if (b[i]) lt_bump_version(b[i]);
  return 0;
}

const ltl_reg ltl_reg_optim[] = {
  {"_optim_update", l_optim_update, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
