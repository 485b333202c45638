/*
 * lt_vmath.h -- the one vector-math header, shared by the elementwise
 * kernels (lt_k_unary.c) and the reductions (lt_reduce.c: softmax,
 * logsumexp): exp, log, tanh and the functions built on them for float32
 * and float64, written without branches or libm calls so that GCC
 * vectorises the contiguous loops (libm's expf & co. are scalar calls, far
 * slower than PyTorch's SLEEF kernels).  LT_VEXPF is lt_expf written on GCC
 * vector types, for code that vectorises by hand.
 *
 * Every special case is a select, not a branch: NaN passes through
 * comparisons (they are false), +-inf and overflow/underflow come out of
 * the range clamps, denormal inputs of log are rescaled first and denormal
 * results of exp come from a scale split in two factors (2^n1 * 2^n2, each
 * a normal number, so the last multiply rounds once into the denormal
 * range).  Bit patterns are moved with memcpy, which compiles to nothing.
 *
 * Accuracy (checked exhaustively over every float32 input against the
 * double-precision libm): expf <= 1 ulp, logf <= 1 ulp, tanhf <= 2 ulp;
 * the float64 versions are within a few ulp (Taylor / atanh series
 * truncated well below 2^-53).
 */
#ifndef LT_VMATH_H
#define LT_VMATH_H

#include <stdint.h>
#include <string.h>
#include <math.h>

static inline float lt_vm_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t lt_vm_u32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double lt_vm_f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static inline uint64_t lt_vm_u64(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

/* c ? a : b through bit masks.  A plain ?: with an expensive arm becomes
   a branch around that arm (GCC sinks its computation), and a loop with a
   branch does not vectorise; the masks keep both arms computed. */
static inline float lt_vm_self(int c, float a, float b) {
  uint32_t m = 0u - (uint32_t)(c != 0);
  return lt_vm_f32((lt_vm_u32(a) & m) | (lt_vm_u32(b) & ~m));
}
static inline double lt_vm_sel(int c, double a, double b) {
  uint64_t m = 0u - (uint64_t)(c != 0);
  return lt_vm_f64((lt_vm_u64(a) & m) | (lt_vm_u64(b) & ~m));
}

/* ---- float32 ------------------------------------------------------------ */

/* Cephes expf: n = round(x / ln2) by the 1.5*2^23 shift, r = x - n ln2 in
   two parts (the high part has 9 bits: n * hi is exact), e^r by a degree-6
   polynomial on |r| <= ln2/2. */
static inline float lt_expf(float x) {
  const float shift = 12582912.0f;
  float t = x * 1.44269504088896341f + shift;
  float n = t - shift;
  uint32_t ni = lt_vm_u32(t) - lt_vm_u32(shift);   /* n as a two's complement integer */
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  /* 2^n as 2^n1 * 2^n2, n1 = n/2: both normal for n in [-150, 128] */
  uint32_t n1 = (uint32_t)((int32_t)ni >> 1), n2 = ni - n1;
  p = p * lt_vm_f32((n1 + 127u) << 23) * lt_vm_f32((n2 + 127u) << 23);
  /* out of range: e^88.8 overflows, e^-104 is below half the smallest
     denormal (in between, the scale gives inf or the rounded denormal).
     Selects at the end, not clamps at the start: GCC threads a clamp to a
     constant into a branch around the rest. */
  p = lt_vm_self(x > 88.8f, INFINITY, p);
  return lt_vm_self(x < -104.0f, 0.0f, p);
}

/* exp for arguments <= 0 only, as softmax and logsumexp have after
   subtracting the row's max: the same Cephes reduction and polynomial as
   lt_expf, with one exponent scale and clamps instead of lt_expf's split
   scale and range selects (about a fifth fewer operations on the hottest
   reduction loop).  Inputs are clamped to [-88, 88], NaN to -88 (callers
   discard non-finite rows); below ~-87.3 the result is not rounded into
   the float32 subnormal range (it is < 1.2e-38 either way).
   LT_EXPF_NONPOS_V is the same on GCC vector types (VF float, VM int32 of
   the same size), lane by lane, for code that vectorises by hand. */
#define LT_EXPF_NONPOS_BODY(x, VF, SPLAT, SEL)                                 \
    x = SEL(x >= SPLAT(-88.0f), x, SPLAT(-88.0f));                              \
    x = SEL(x <= SPLAT(88.0f), x, SPLAT(88.0f));                                \
    VF n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;              \
    VF r = x - n * 0.693359375f;                                                \
    r = r - n * -2.12194440e-4f;                                                \
    VF q = SPLAT(1.9875691500e-4f);                                             \
    q = q * r + 1.3981999507e-3f;                                               \
    q = q * r + 8.3334519073e-3f;                                               \
    q = q * r + 4.1665795894e-2f;                                               \
    q = q * r + 1.6666665459e-1f;                                               \
    q = q * r + 5.0000001201e-1f;                                               \
    q = q * r * r + r + 1.0f;
#define LT_ID_(v) (v)
#define LT_SEL1_(c, a, b) ((c) ? (a) : (b))
/* always_inline: callers include target("avx2") clones of vectorised
   loops, into which GCC will not inline a plain static inline function;
   an out-of-line call per element made column softmax 17x slower */
static inline __attribute__((always_inline)) float lt_expf_nonpos(float x) {
  LT_EXPF_NONPOS_BODY(x, float, LT_ID_, LT_SEL1_)
  int32_t k = ((int32_t)n + 127) * (1 << 23);
  float sc;
  memcpy(&sc, &k, sizeof sc);
  return q * sc;
}
#define LT_EXPF_NONPOS_V(NAME, VF, VM, SPLAT, SEL, ATTR)                       \
  ATTR static inline VF NAME(VF x) {                                            \
    LT_EXPF_NONPOS_BODY(x, VF, SPLAT, SEL)                                      \
    VM k = (__builtin_convertvector(n, VM) + 127) * (1 << 23);                  \
    return q * (VF)k;                                                           \
  }

/* e^x for x <= 0 on GCC vector types of double (VD, VL int64 of the same
   size): lt_exp's reduction and Taylor polynomial with one exponent scale
   (n in [-1022, 0]); x below -708 (and NaN: callers discard non-finite
   rows) gives 0 instead of the denormal. */
#define LT_EXP_NONPOS_V(NAME, VD, VL, SPLAT, SEL, ATTR)                          \
  ATTR static inline VD NAME(VD x0) {                                           \
    VD x = SEL(x0 >= SPLAT(-708.0), x0, SPLAT(-708.0));                         \
    VD t = x * 1.4426950408889634 + 6755399441055744.0;                         \
    VD n = t - 6755399441055744.0;                                              \
    VL ni = (VL)t - (VL)SPLAT(6755399441055744.0);                              \
    VD r = x - n * 6.93147180369123816490e-01;                                  \
    r = r - n * 1.90821492927058770002e-10;                                     \
    VD p = SPLAT(1.0 / 6227020800.0);                                           \
    p = p * r + 1.0 / 479001600.0;                                              \
    p = p * r + 1.0 / 39916800.0;                                               \
    p = p * r + 1.0 / 3628800.0;                                                \
    p = p * r + 1.0 / 362880.0;                                                 \
    p = p * r + 1.0 / 40320.0;                                                  \
    p = p * r + 1.0 / 5040.0;                                                   \
    p = p * r + 1.0 / 720.0;                                                    \
    p = p * r + 1.0 / 120.0;                                                    \
    p = p * r + 1.0 / 24.0;                                                     \
    p = p * r + 1.0 / 6.0;                                                      \
    p = p * r + 0.5;                                                            \
    p = p * (r * r) + r + 1.0;                                                  \
    p = p * (VD)((ni + 1023) << 52);                                            \
    return SEL(x0 >= SPLAT(-708.0), p, SPLAT(0.0));                             \
  }

/* Cephes logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2
   + f^3 P(f) with f = m - 1, plus e ln2 in two parts. */
static inline float lt_logf(float x) {
  int den = x < 1.17549435e-38f;                 /* also 0 and negatives: fixed below */
  float xs = lt_vm_self(den, x * 8388608.0f, x);            /* 2^23 */
  uint32_t b = lt_vm_u32(xs);
  float e = (float)(int32_t)((b >> 23) & 0xffu) - lt_vm_self(den, 149.0f, 126.0f);
  float m = lt_vm_f32((b & 0x007fffffu) | 0x3f000000u);   /* [0.5, 1) */
  int lo = m < 0.707106781186547524f;
  e = lt_vm_self(lo, e - 1.0f, e);
  float f = lt_vm_self(lo, m + m - 1.0f, m - 1.0f);
  float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y = y + e * -2.12194440e-4f;
  y = y - 0.5f * z;
  float r = f + y;
  r = r + e * 0.693359375f;
  r = lt_vm_self(x == 0.0f, -INFINITY, r);
  r = lt_vm_self(x < 0.0f, NAN, r);
  r = lt_vm_self(x == INFINITY, x, r);
  return lt_vm_self(x != x, x, r);
}

/* Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2/(e^2|x| + 1)
   above (e^2|x| = inf gives 1). */
static inline float lt_tanhf(float x) {
  float ax = fabsf(x), z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  p = p * z * x + x;
  float q = copysignf(1.0f - 2.0f / (lt_expf(ax + ax) + 1.0f), x);
  return lt_vm_self(ax < 0.625f, p, q);
}

/* erfc(|z|) e^{z^2} (the scaled complementary error function) as a
   degree-7 polynomial in t = 1 / (1 + |z|/2), fitted here for relative
   error over z in [0, 9.5] (6.5e-7 evaluated in float32): the form of
   PyTorch's Abramowitz-Stegun erf, with three more terms so that the
   result stays float32-accurate in relative terms where erfc is small
   (A&S: 1.7e-4 at x = -3.4, near 0.02 further out).  LT_ERFCX_POLY(t) is
   shared by the scalar and vector gelu. */
#define LT_ERFCX_POLY(p, t)                                                     \
  p = p * (t) - 3.921982228e-01f;                                               \
  p = p * (t) + 4.433772233e-01f;                                               \
  p = p * (t) - 5.552620938e-03f;                                               \
  p = p * (t) + 3.011725927e-01f;                                               \
  p = p * (t) + 2.725783267e-01f;                                               \
  p = p * (t) + 2.829920927e-01f;                                               \
  p = p * (t) - 3.493355869e-05f;

/* exact gelu (PyTorch's default): x/2 (1 + erf(x/sqrt 2)) = x/2 erfc(-z),
   z = x/sqrt 2, computed as x/2 (2 - c) for z >= 0 and x/2 c below, c =
   erfc(|z|) = erfcx(|z|) e^{-z^2}: no cancellation on the negative side.
   lt_expf_nonpos serves (the argument is <= 0); below e^-88 (|z| > 9.3)
   it gives 0 or a value under 1e-38 instead of the rounded denormal,
   which gelu then scales by |x|/2 anyway.  +inf gives inf; -inf gives NaN
   as PyTorch (-inf * 0); NaN stays NaN. */
static inline __attribute__((always_inline)) float lt_geluf(float x) {
  float z = x * 0.70710678118654752440f;
  float az = fabsf(z);
  float t = 1.0f / (1.0f + 0.5f * az);
  float p = 9.766595259e-02f;
  LT_ERFCX_POLY(p, t)
  float c = p * lt_expf_nonpos(-(az * az));
  return 0.5f * x * lt_vm_self(z >= 0.0f, 2.0f - c, c);
}

/* lt_geluf on GCC vector types (VF float, VM int32 of the same size, SPLAT
   and SEL(mask, a, b) as for LT_EXPF_NONPOS_V), lane by lane the same
   operations: written by hand because the vectoriser turns lt_expf_nonpos's
   clamps into branches inside lt_geluf and then leaves the loop scalar. */
#define LT_GELUF_V(NAME, VF, VM, SPLAT, SEL, ATTR)                               \
  LT_EXPF_NONPOS_V(NAME##_exp_, VF, VM, SPLAT, SEL, ATTR)                       \
  ATTR static inline VF NAME(VF x) {                                            \
    VF z = x * 0.70710678118654752440f;                                         \
    VF az = (VF)((VM)z & 0x7fffffff);                                           \
    VF t = 1.0f / (1.0f + 0.5f * az);                                           \
    VF p = SPLAT(9.766595259e-02f);                                             \
    LT_ERFCX_POLY(p, t)                                                         \
    VF c = p * NAME##_exp_(-(az * az));                                         \
    return 0.5f * x * SEL(z >= 0.0f, 2.0f - c, c);                              \
  }

/* Cephes sinf/cosf for |x| <= 8192 (callers send larger |x|, inf and NaN
   to libm): octant j of |x| / (pi/4), x reduced by pi/4 in three parts,
   then the sine or cosine polynomial as the octant says.  cos = 1 selects
   cosine. */
static inline float lt_sincosf_small(float x, int cos) {
  float ax = fabsf(x);
  int32_t j = (int32_t)(ax * 1.27323954473516f);
  j = j + (j & 1);
  float y = (float)j;
  j = j & 7;
  /* sign flips: sin by the sign of x and octants 4-7; cos by octants 2-5 */
  uint32_t neg = cos ? (uint32_t)(((j + 2) >> 2) & 1) : (lt_vm_u32(x) >> 31) ^ (uint32_t)(j >> 2);
  int use_cos = cos ? ((j & 2) == 0) : ((j & 2) != 0);
  float r = ((ax - y * 0.78515625f) - y * 2.4187564849853515625e-4f) - y * 3.77489497744594108e-8f;
  float z = r * r;
  float pc = 2.443315711809948e-5f;
  pc = pc * z - 1.388731625493765e-3f;
  pc = pc * z + 4.166664568298827e-2f;
  pc = pc * z * z - 0.5f * z + 1.0f;
  float ps = -1.9515295891e-4f;
  ps = ps * z + 8.3321608736e-3f;
  ps = ps * z - 1.6666654611e-1f;
  ps = ps * z * r + r;
  float v = lt_vm_self(use_cos, pc, ps);
  return lt_vm_f32(lt_vm_u32(v) ^ (neg << 31));
}

/* ---- float64 ------------------------------------------------------------ */

/* The Taylor polynomial of e^r shared by lt_exp and lt_expm1_40:
   (e^r - 1 - r) / r^2 for |r| <= ln2/2, truncated well below 2^-53. */
static inline double lt_exp_poly_f64(double r) {
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  return p;
}

/* exp: the same reduction as lt_expf (fdlibm's ln2 split, 32 bits in the
   high part), e^r by its Taylor series to r^13 (|r| <= 0.347: the first
   term left out is below 2^-58). */
static inline double lt_exp(double x) {
  const double shift = 6755399441055744.0;   /* 1.5 * 2^52 */
  double t = x * 1.4426950408889634 + shift;
  double n = t - shift;
  uint64_t ni = lt_vm_u64(t) - lt_vm_u64(shift);
  /* n1 = round(n / 2) by the same shift, n2 = n - n1 */
  uint64_t n1 = lt_vm_u64(n * 0.5 + shift) - lt_vm_u64(shift), n2 = ni - n1;
  double r = x - n * 6.93147180369123816490e-01;
  r = r - n * 1.90821492927058770002e-10;
  double p = lt_exp_poly_f64(r);
  p = p * (r * r) + r + 1.0;
  p = p * lt_vm_f64((n1 + 1023u) << 52) * lt_vm_f64((n2 + 1023u) << 52);
  p = lt_vm_sel(x > 710.0, INFINITY, p);
  return lt_vm_sel(x < -746.0, 0.0, p);
}

/* e^x - 1 for |x| <= 40 (callers clamp): 2^n (e^r - 1) + (2^n - 1), exact
   in relative terms near 0 where n = 0. */
static inline double lt_expm1_40(double x) {
  const double shift = 6755399441055744.0;
  double t = x * 1.4426950408889634 + shift;
  double n = t - shift;
  uint64_t ni = lt_vm_u64(t) - lt_vm_u64(shift);
  double r = x - n * 6.93147180369123816490e-01;
  r = r - n * 1.90821492927058770002e-10;
  double p = lt_exp_poly_f64(r);
  p = p * (r * r) + r;                      /* e^r - 1 */
  double s = lt_vm_f64((ni + 1023u) << 52);  /* 2^n, n in [-58, 58] */
  return s * p + (s - 1.0);
}

/* log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s),
   s = (m-1)/(m+1), |s| <= 0.172: the series to s^23 leaves < 2^-60. */
static inline double lt_log(double x) {
  int den = x < 2.2250738585072014e-308;
  double xs = lt_vm_sel(den, x * 18014398509481984.0, x);   /* 2^54 */
  uint64_t b = lt_vm_u64(xs);
  /* the exponent field as a double without an int64 conversion */
  double e = lt_vm_f64(0x4330000000000000u | ((b >> 52) & 0x7ffu)) - 4503599627370496.0;
  e = e - lt_vm_sel(den, 1076.0, 1022.0);
  double m = lt_vm_f64((b & 0x000fffffffffffffu) | 0x3fe0000000000000u);   /* [0.5, 1) */
  int lo = m < 0.70710678118654752440;
  e = lt_vm_sel(lo, e - 1.0, e);
  m = lt_vm_sel(lo, m + m, m);
  double f = m - 1.0, s = f / (m + 1.0), z = s * s;
  double p = 1.0 / 23;
  p = p * z + 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  p = p * z;
  /* 2s = f - s f: keeps the leading term exact-ish for f near 0 */
  double r = (f - s * f) + (2.0 * s) * p;
  r = e * 1.90821492927058770002e-10 + r;
  r = e * 6.93147180369123816490e-01 + r;
  r = lt_vm_sel(x == 0.0, -INFINITY, r);
  r = lt_vm_sel(x < 0.0, NAN, r);
  r = lt_vm_sel(x == INFINITY, x, r);
  return lt_vm_sel(x != x, x, r);
}

/* tanh = em1 / (em1 + 2) with em1 = e^2|x| - 1: no cancellation near 0 */
static inline double lt_tanh(double x) {
  double ax = fabs(x);
  ax = lt_vm_sel(ax > 20.0, 20.0, ax);   /* tanh(20) is 1 in double; keeps NaN */
  double em1 = lt_expm1_40(ax + ax);
  return copysign(em1 / (em1 + 2.0), x);
}

#endif
