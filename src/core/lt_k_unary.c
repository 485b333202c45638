/* lt_k_unary.c -- unary elementwise kernels, one per op and compute dtype,
   instantiated from the lists in lt_k_loops.h. */
#include <string.h>
#include "lt_k_loops.h"

#define K_U(op, E, T, ...) LT_LOOP1(k_##op##_##E, T, T, UOP_##op(T, x))
#define K_UF(op, E, T, S) LT_LOOP1(k_##op##_##E, T, T, FOP_##op(T, S, x))
#define K_UC(op, E, T, S) LT_LOOP1(k_##op##_##E, T, T, COP_##op(T, S, x))
#define K_UB(op) LT_LOOP1(k_##op##_BOOL, uint8_t, uint8_t, BOP_##op(x))

/* identity kernels: floor/ceil/round/trunc of integers, conj of reals (the
   tables below point at them; a plain copy is lt_copy_into's cast loop) */
#define UOP_copy(T, x) (x)
K_U(copy, BOOL, uint8_t) LT_FOR_INTS(K_U, copy) LT_FOR_FLOATS(K_U, copy)

/* ---- sign-related ---------------------------------------------------------- */
#define K_SNEG(op, E, T, UT) LT_LOOP1(k_##op##_##E, T, T, SOP_##op(T, UT, x))
#define SOP_neg(T, UT, x) ((T)(UT)(0u - (UT)(x)))
#define SOP_abs(T, UT, x) ((x) < 0 ? (T)(UT)(0u - (UT)(x)) : (x))
#define SOP_sign(T, UT, x) ((T)(((x) > 0) - ((x) < 0)))
#define SOP_relu(T, UT, x) ((x) > 0 ? (x) : (T)0)
#define SOP_square(T, UT, x) ((T)(UT)(1u * (UT)(x) * (UT)(x)))
#define UOPU_neg(T, UT, x) ((T)(UT)(0u - (UT)(x)))
#define UOPU_abs(T, UT, x) (x)
#define UOPU_sign(T, UT, x) ((T)((x) != 0))
#define UOPU_relu(T, UT, x) (x)
#define UOPU_square(T, UT, x) ((T)(UT)(1u * (UT)(x) * (UT)(x)))
#define K_UNEG(op, E, T, UT) LT_LOOP1(k_##op##_##E, T, T, UOPU_##op(T, UT, x))
#define FOP_neg(T, S, x) (-(x))
#define FOP_abs(T, S, x) fabs##S(x)
#define FOP_sign(T, S, x) ((T)(((T)0 < (x)) - ((x) < (T)0)))   /* NaN -> 0 as torch 1.13 */
#define FOP_relu(T, S, x) ((x) != (x) ? (x) : (x) > 0 ? (x) : (T)0)
#define FOP_square(T, S, x) ((x) * (x))
#define COP_neg(T, S, x) (-(x))
#define COP_square(T, S, x) ((x) * (x))
#define SIGN_OPS(op) LT_FOR_SINTS(K_SNEG, op) LT_FOR_UINTS(K_UNEG, op) LT_FOR_FLOATS(K_UF, op)
SIGN_OPS(neg) SIGN_OPS(abs) SIGN_OPS(sign) SIGN_OPS(relu) SIGN_OPS(square)
LT_FOR_CPLX(K_UC, neg) LT_FOR_CPLX(K_UC, square)
#define BOP_sign(x) (x)
K_UB(sign)
/* sgn of a complex number: z / |z| per part, 0 at 0 (a NaN part gives NaN) */
#define COP_sgn(T, S, x) (cabs##S(x) == 0 ? (T)0 : (x) / cabs##S(x))
LT_FOR_CPLX(K_UC, sgn)
lt_ktable lt_k_neg = { LT_TAB_I(neg) LT_TAB_F(neg) LT_TAB_C(neg) };
lt_ktable lt_k_abs = { LT_TAB_I(abs) LT_TAB_F(abs) };
lt_ktable lt_k_sign = { LT_TAB_B(sign) LT_TAB_I(sign) LT_TAB_F(sign) };
lt_ktable lt_k_sgn = { LT_TAB_B(sign) LT_TAB_I(sign) LT_TAB_F(sign) LT_TAB_C(sgn) };
lt_ktable lt_k_relu = { LT_TAB_I(relu) LT_TAB_F(relu) };
lt_ktable lt_k_square = { LT_TAB_I(square) LT_TAB_F(square) LT_TAB_C(square) };

/* ---- floating functions (real and complex) ------------------------------ */
#define LN2 0.693147180559945309417
#define LN10 2.30258509299404568402
#define FOP_reciprocal(T, S, x) ((T)1 / (x))
#define FOP_sqrt(T, S, x) sqrt##S(x)
#define FOP_rsqrt(T, S, x) ((T)1 / sqrt##S(x))
#define FOP_exp(T, S, x) lt_exp##S(x)
#define FOP_exp2(T, S, x) exp2##S(x)
#define FOP_expm1(T, S, x) expm1##S(x)
#define FOP_log(T, S, x) lt_log##S(x)
#define FOP_log2(T, S, x) log2##S(x)
#define FOP_log10(T, S, x) log10##S(x)
#define FOP_log1p(T, S, x) log1p##S(x)
#define FOP_sin(T, S, x) sin##S(x)
#define FOP_cos(T, S, x) cos##S(x)
#define FOP_tan(T, S, x) tan##S(x)
#define FOP_asin(T, S, x) asin##S(x)
#define FOP_acos(T, S, x) acos##S(x)
#define FOP_atan(T, S, x) atan##S(x)
#define FOP_sinh(T, S, x) sinh##S(x)
#define FOP_cosh(T, S, x) cosh##S(x)
#define FOP_tanh(T, S, x) lt_tanh##S(x)
#define FOP_sigmoid(T, S, x) ((T)1 / ((T)1 + lt_exp##S(-(x))))
#define FOP_erf(T, S, x) erf##S(x)
/* float32 gelu through lt_geluf (vectorised erfc); float64 keeps erf */
#define FOP_gelu(T, S, x) GELU_##S(x)
#define GELU_f(x) lt_geluf(x)
#define GELU_(x) (0.5 * (x) * (1.0 + erf((x) * 0.70710678118654752440)))
#define FOP_gelu_tanh(T, S, x) \
  ((T)0.5 * (x) * ((T)1 + lt_tanh##S((T)0.79788456080286535588 * ((x) + (T)0.044715 * (x) * (x) * (x)))))
#define FOP_silu(T, S, x) ((x) / ((T)1 + lt_exp##S(-(x))))
#define FOP_floor(T, S, x) floor##S(x)
#define FOP_ceil(T, S, x) ceil##S(x)
#define FOP_round(T, S, x) nearbyint##S(x)   /* default rounding mode: half to even */
#define FOP_trunc(T, S, x) trunc##S(x)
/* PyTorch 1.13 computes several complex ops with its vectorised
   (Vectorized<c10::complex>) formulas instead of the C library, and their
   special values (0, inf, nan, signed zeros on branch cuts) follow from
   those formulas, not from C99 Annex G: x / y is (ac+bd, bc-ad) / (c^2+d^2),
   1 / x is conj(x) / |x|^2 (so 1/0 is nan+nan*i, not inf), division by a
   real constant is per part, atan is i/2 * log((i+x)/(i-x)).  CX_HELPERS
   defines those per complex dtype (R the real type, MK its CMPLX macro). */
#define CX_HELPERS(T, R, S, MK)                                                         \
  static inline T lt_cdiv##S(T x, T y) {                                                     \
    R a = creal##S(x), b = cimag##S(x), c = creal##S(y), d = cimag##S(y), den = c * c + d * d; \
    return MK((a * c + b * d) / den, (b * c - a * d) / den);                                \
  }                                                                                         \
  static inline T lt_crecip##S(T x) {                                                        \
    R c = creal##S(x), d = cimag##S(x), den = c * c + d * d;                                \
    return MK(c / den, -d / den);                                                           \
  }                                                                                         \
  static inline T lt_cdivr##S(T x, R r) { return MK(creal##S(x) / r, cimag##S(x) / r); }     \
  static inline T lt_catan##S(T x) {                                                         \
    R re = creal##S(x), im = cimag##S(x);                                                   \
    T w = lt_cdiv##S(MK((R)0 + re, (R)1 + im), MK((R)0 - re, (R)1 - im));                    \
    T l = clog##S(w);                                                                       \
    R lr = creal##S(l), li = cimag##S(l);                                                   \
    return MK((R)0 * lr + -((R)0.5 * li), (R)0 * li + (R)0.5 * lr);                         \
  }                                                                                         \
  static inline T lt_csilu##S(T x) {                                                         \
    T e = cexp##S(-(x));                                                                    \
    return lt_cdiv##S(x, MK((R)1 + creal##S(e), cimag##S(e)));                                \
  }
CX_HELPERS(lt_cfloat, float, f, CMPLXF)
CX_HELPERS(lt_cdouble, double, , CMPLX)
#define COP_reciprocal(T, S, x) lt_crecip##S(x)
#define COP_sqrt(T, S, x) csqrt##S(x)
#define COP_rsqrt(T, S, x) lt_crecip##S(csqrt##S(x))
#define COP_exp(T, S, x) cexp##S(x)
#define COP_exp2(T, S, x) cexp##S((x) * (T)LN2)
#define COP_expm1(T, S, x) (cexp##S(x) - (T)1)
#define COP_log(T, S, x) clog##S(x)
#define COP_log2(T, S, x) lt_cdivr##S(clog##S(x), LN2)
#define COP_log10(T, S, x) lt_cdivr##S(clog##S(x), LN10)
#define COP_log1p(T, S, x) clog##S((T)1 + (x))
#define COP_sin(T, S, x) csin##S(x)
#define COP_cos(T, S, x) ccos##S(x)
#define COP_tan(T, S, x) ctan##S(x)
#define COP_asin(T, S, x) casin##S(x)
#define COP_acos(T, S, x) cacos##S(x)
#define COP_atan(T, S, x) lt_catan##S(x)
#define COP_sinh(T, S, x) csinh##S(x)
#define COP_cosh(T, S, x) ccosh##S(x)
#define COP_tanh(T, S, x) ctanh##S(x)
#define COP_sigmoid(T, S, x) ((T)1 / ((T)1 + cexp##S(-(x))))
#define COP_conj(T, S, x) conj##S(x)
#define COP_silu(T, S, x) lt_csilu##S(x)
#define FC_OPS(op) LT_FOR_FLOATS(K_UF, op) LT_FOR_CPLX(K_UC, op)
FC_OPS(reciprocal) FC_OPS(exp2) FC_OPS(expm1)
FC_OPS(log2) FC_OPS(log10) FC_OPS(log1p) FC_OPS(tan)
FC_OPS(asin) FC_OPS(acos) FC_OPS(atan) FC_OPS(sinh) FC_OPS(cosh)
LT_FOR_FLOATS(K_UF, erf)
/* inverse hyperbolics: libm's (log1p forms near 0, no cancellation for
   large |x|), as PyTorch's std:: calls; erfc from libm, accurate in the
   tail where 1 - erf(x) would round to 0 */
#define FOP_asinh(T, S, x) asinh##S(x)
#define FOP_acosh(T, S, x) acosh##S(x)
#define FOP_atanh(T, S, x) atanh##S(x)
#define FOP_erfc(T, S, x) erfc##S(x)
#define COP_asinh(T, S, x) casinh##S(x)
#define COP_acosh(T, S, x) cacosh##S(x)
#define COP_atanh(T, S, x) catanh##S(x)
/* deg2rad / rad2deg: PyTorch multiplies by the double constant rounded to
   the compute type (a wrapped scalar), so float32 uses (float)(pi / 180) */
#define FOP_deg2rad(T, S, x) ((x) * (T)0.017453292519943295769236907684886)
#define FOP_rad2deg(T, S, x) ((x) * (T)57.295779513082320876798154814105170)
/* sinc: 1 at 0, else sin(pi x) / (pi x) with pi in the compute type, as
   PyTorch's kernel; frac: x - trunc(x) (inf gives NaN, as there) */
#define LT_PI 3.14159265358979323846264338327950288
#define FOP_sinc(T, S, x) ((x) == 0 ? (T)1 : sin##S((T)LT_PI * (x)) / ((T)LT_PI * (x)))
#define COP_sinc(T, S, x) ((x) == 0 ? (T)1 : csin##S((T)LT_PI * (x)) / ((T)LT_PI * (x)))
#define FOP_frac(T, S, x) ((x) - trunc##S(x))
FC_OPS(asinh) FC_OPS(acosh) FC_OPS(atanh) FC_OPS(sinc)
LT_FOR_FLOATS(K_UF, erfc) LT_FOR_FLOATS(K_UF, deg2rad) LT_FOR_FLOATS(K_UF, rad2deg) LT_FOR_FLOATS(K_UF, frac)
/* The compute-bound real kernels: lt_vmath.h's branch-free functions,
   built for the baseline ISA and AVX2+FMA (LT_LOOP1_V).  This file is
   compiled with -ffp-contract=fast (Makefile) for their fused
   multiply-adds: only the AVX2 clones have FMA, so the other kernels keep
   separately rounded arithmetic unless the whole build targets FMA. */
#include "lt_vmath.h"
#define K_UFV(op, E, T, S) LT_LOOP1_V(k_##op##_##E, T, T, FOP_##op(T, S, x))
/* The polynomial kernels (exp, log, tanh, sigmoid, silu, gelu) are
   compute-bound: where the CPU has AVX-512 (and the OS saves its state,
   which lt_cpu_has_avx512 checks), a third clone runs 16 float32
   lanes per instruction, the same operations lane by lane as the AVX2+FMA
   clone (so the same results). */
#if LT_CPU_X86
/* 2: AVX-512 (F, DQ, VL, BW), 1: AVX2+FMA, 0: the baseline */
static int isa_level(void) {
  if (lt_cpu_has_avx512()) return 2;
  return lt_cpu_has_avx2_fma();
}
/* NAME picks NAME_avx512 / NAME_avx2 / NAME_base per call (runs shorter
   than one 512-bit unroll stay on AVX2) */
#define K_DISPATCH3(NAME)                                                                   \
  static void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {                     \
    int isa = isa_level();                                                                  \
    if (isa == 2 && n < 32) isa = 1;                                                        \
    if (isa == 2) NAME##_avx512(d, s, n, vctx);                                              \
    else if (isa == 1) NAME##_avx2(d, s, n, vctx);                                           \
    else NAME##_base(d, s, n, vctx);                                                         \
  }
#define K_UFV3(op, E, T, S)                                                                 \
  LT_LOOP1_A(k_##op##_##E##_base, , T, T, FOP_##op(T, S, x))                                \
  LT_LOOP1_A(k_##op##_##E##_avx2, LT_TARGET_AVX2_FMA, T, T, FOP_##op(T, S, x)) \
  LT_LOOP1_A(k_##op##_##E##_avx512, LT_TARGET_AVX512, T, T, FOP_##op(T, S, x))              \
  K_DISPATCH3(k_##op##_##E)
#else
#define K_UFV3 K_UFV
#endif
#define FCV_OPS(op) LT_FOR_FLOATS(K_UFV, op) LT_FOR_CPLX(K_UC, op)
#define FCV3_OPS(op) LT_FOR_FLOATS(K_UFV3, op) LT_FOR_CPLX(K_UC, op)
FCV_OPS(sqrt) FCV_OPS(rsqrt) FCV3_OPS(exp) FCV3_OPS(log) FCV3_OPS(tanh) FCV3_OPS(sigmoid) FCV3_OPS(silu)
K_UFV3(gelu, FLOAT64, double, ) LT_FOR_FLOATS(K_UFV3, gelu_tanh)

/* float32 exact gelu: contiguous runs through LT_GELUF_V on explicit
   vectors (16 bytes baseline, 32 with AVX2+FMA, 64 with AVX-512), the rest
   and the tails through the scalar lt_geluf. */
#define K_GELU32(V, ATTR, BYTES)                                                            \
  typedef float vf_##V __attribute__((vector_size(BYTES)));                                 \
  typedef int32_t vm_##V __attribute__((vector_size(BYTES)));                               \
  ATTR static inline vf_##V splat_##V(float x) { vf_##V v = {0}; return v + x; }             \
  ATTR static inline vf_##V sel_##V(vm_##V m, vf_##V a, vf_##V b) {                          \
    return (vf_##V)(((vm_##V)a & m) | ((vm_##V)b & ~m)); }                                  \
  LT_GELUF_V(gelu_##V, vf_##V, vm_##V, splat_##V, sel_##V, ATTR)                             \
  ATTR static void k_gelu_FLOAT32_##V(char **d, const int64_t *s, int64_t n, void *vctx) {   \
    (void)vctx;                                                                             \
    const int64_t w = (int64_t)(sizeof(vf_##V) / sizeof(float));                            \
    if (s[0] == 4 && s[1] == 4) {                                                           \
      float *o = (float *)d[0]; const float *a = (const float *)d[1];                       \
      int64_t i = 0;                                                                        \
      for (; i + w <= n; i += w) {                                                          \
        vf_##V x;                                                                           \
        memcpy(&x, a + i, sizeof x);                                                        \
        x = gelu_##V(x);                                                                    \
        memcpy(o + i, &x, sizeof x);                                                        \
      }                                                                                     \
      for (; i < n; i++) o[i] = lt_geluf(a[i]);                                             \
    } else {                                                                                \
      char *po = d[0]; const char *pa = d[1];                                               \
      for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1]) *(float *)po = lt_geluf(*(const float *)pa); \
    }                                                                                       \
  }
K_GELU32(base, , 16)
#if LT_CPU_X86
K_GELU32(avx2, LT_TARGET_AVX2_FMA, 32)
K_GELU32(avx512, LT_TARGET_AVX512, 64)
K_DISPATCH3(k_gelu_FLOAT32)
#else
#define k_gelu_FLOAT32 k_gelu_FLOAT32_base
#endif

/* float32 sin/cos: the polynomial is accurate for |x| <= 8192 only, so a
   contiguous run goes in blocks: a block whose elements are all in range
   (the usual case) runs the vectorised loop, any other block picks per
   element between it and libm (inf, NaN, huge arguments). */
#define SC_BLOCK 256
#define SC_OK(x) (fabsf(x) <= 8192.0f)
#define K_SINCOS32(NAME, ATTR, IS_COS, LIBM)                                           \
  static ATTR void NAME(char **d, const int64_t *s, int64_t n, void *vctx) {           \
    (void)vctx;                                                                         \
    if (s[0] == 4 && s[1] == 4) {                                                       \
      float *o = (float *)d[0]; const float *pa = (const float *)d[1];                  \
      for (int64_t b = 0; b < n; b += SC_BLOCK) {                                       \
        int64_t m = n - b < SC_BLOCK ? n - b : SC_BLOCK;                                \
        int bad = 0;                                                                    \
        for (int64_t i = 0; i < m; i++) bad |= !SC_OK(pa[b + i]);                       \
        if (!bad)                                                                       \
          for (int64_t i = 0; i < m; i++) o[b + i] = lt_sincosf_small(pa[b + i], IS_COS); \
        else                                                                            \
          for (int64_t i = 0; i < m; i++) {                                             \
            float x = pa[b + i];                                                        \
            o[b + i] = SC_OK(x) ? lt_sincosf_small(x, IS_COS) : LIBM(x);                \
          }                                                                             \
      }                                                                                 \
    } else {                                                                            \
      char *po = d[0]; const char *pa = d[1];                                           \
      for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1]) {                         \
        float x = *(const float *)pa;                                                   \
        *(float *)po = SC_OK(x) ? lt_sincosf_small(x, IS_COS) : LIBM(x);                \
      }                                                                                 \
    }                                                                                   \
  }
#if LT_CPU_X86
#define K_SINCOS32_V(NAME, IS_COS, LIBM)                                                \
  K_SINCOS32(NAME##_base, , IS_COS, LIBM)                                               \
  K_SINCOS32(NAME##_avx2, LT_TARGET_AVX2_FMA, IS_COS, LIBM)           \
  K_SINCOS32(NAME##_avx512, LT_TARGET_AVX512, IS_COS, LIBM)                             \
  K_DISPATCH3(NAME)
#else
#define K_SINCOS32_V(NAME, IS_COS, LIBM) K_SINCOS32(NAME, , IS_COS, LIBM)
#endif
K_SINCOS32_V(k_sin_FLOAT32, 0, sinf)
K_SINCOS32_V(k_cos_FLOAT32, 1, cosf)
K_UF(sin, FLOAT64, double, ) K_UF(cos, FLOAT64, double, )
LT_FOR_CPLX(K_UC, sin) LT_FOR_CPLX(K_UC, cos)
LT_FOR_FLOATS(K_UF, floor) LT_FOR_FLOATS(K_UF, ceil)
LT_FOR_FLOATS(K_UF, round) LT_FOR_FLOATS(K_UF, trunc) LT_FOR_CPLX(K_UC, conj)
#define FC_TAB(op) lt_ktable lt_k_##op = { LT_TAB_F(op) LT_TAB_C(op) };
FC_TAB(reciprocal) FC_TAB(sqrt) FC_TAB(rsqrt) FC_TAB(exp) FC_TAB(exp2) FC_TAB(expm1)
FC_TAB(log) FC_TAB(log2) FC_TAB(log10) FC_TAB(log1p) FC_TAB(sin) FC_TAB(cos) FC_TAB(tan)
FC_TAB(asin) FC_TAB(acos) FC_TAB(atan) FC_TAB(sinh) FC_TAB(cosh) FC_TAB(tanh) FC_TAB(sigmoid)
#define F_TAB(op) lt_ktable lt_k_##op = { LT_TAB_F(op) };
F_TAB(erf) F_TAB(gelu) F_TAB(gelu_tanh) FC_TAB(silu)
FC_TAB(asinh) FC_TAB(acosh) FC_TAB(atanh) FC_TAB(sinc)
F_TAB(erfc) F_TAB(deg2rad) F_TAB(rad2deg) F_TAB(frac)
/* rounding: integers are unchanged; bool is not implemented, as PyTorch */
#define RND_TAB(op) lt_ktable lt_k_##op = { LT_FOR_INTS(RND_ENT, x) LT_TAB_F(op) };
#define RND_ENT(op, E, ...) [LTENSOR_##E] = k_copy_##E,
RND_TAB(floor) RND_TAB(ceil) RND_TAB(round) RND_TAB(trunc)
/* round with decimals: ctx->f1 = 10^|decimals|, ctx->mode = decimals < 0 */
#define FOP_round_dec(T, S, x) \
  (ctx->mode ? nearbyint##S((x) / (T)ctx->f1) * (T)ctx->f1 : nearbyint##S((x) * (T)ctx->f1) / (T)ctx->f1)
LT_FOR_FLOATS(K_UF, round_dec)
F_TAB(round_dec)
lt_ktable lt_k_conj = { [LTENSOR_BOOL] = k_copy_BOOL, LT_FOR_INTS(RND_ENT, x) LT_FOR_FLOATS(RND_ENT, x)
                        LT_TAB_C(conj) };

/* ---- bitwise not, logical not, classification (bool out) ------------------- */
#define K_BNOT(op, E, T, UT) LT_LOOP1(k_bitwise_not_##E, T, T, (T)(UT)(~(UT)x))
LT_FOR_INTS(K_BNOT, x)
LT_LOOP1(k_bitwise_not_BOOL, uint8_t, uint8_t, (uint8_t)!x)
lt_ktable lt_k_bitwise_not = { LT_TAB_B(bitwise_not) LT_TAB_I(bitwise_not) };

#define K_TO_BOOL(op, E, T, ...) LT_LOOP1(k_##op##_##E, T, uint8_t, (uint8_t)(BEXPR_##op(x)))
#define BEXPR_logical_not(x) ((x) == 0)
#define BEXPR_int_false(x) ((void)(x), 0)
#define BEXPR_int_true(x) ((void)(x), 1)
#define BEXPR_isnan(x) ((x) != (x))
#define BEXPR_isinf(x) isinf(x)
#define BEXPR_isfinite(x) isfinite(x)
#define BEXPR_cisnan(x) (isnan(creal(x)) || isnan(cimag(x)))
#define BEXPR_cisinf(x) (isinf(creal(x)) || isinf(cimag(x)))
#define BEXPR_cisfinite(x) (isfinite(creal(x)) && isfinite(cimag(x)))
K_TO_BOOL(logical_not, BOOL, uint8_t)
LT_FOR_INTS(K_TO_BOOL, logical_not) LT_FOR_FLOATS(K_TO_BOOL, logical_not) LT_FOR_CPLX(K_TO_BOOL, logical_not)
K_TO_BOOL(int_false, BOOL, uint8_t) LT_FOR_INTS(K_TO_BOOL, int_false)
K_TO_BOOL(int_true, BOOL, uint8_t) LT_FOR_INTS(K_TO_BOOL, int_true)
LT_FOR_FLOATS(K_TO_BOOL, isnan) LT_FOR_FLOATS(K_TO_BOOL, isinf) LT_FOR_FLOATS(K_TO_BOOL, isfinite)
LT_FOR_CPLX(K_TO_BOOL, cisnan) LT_FOR_CPLX(K_TO_BOOL, cisinf) LT_FOR_CPLX(K_TO_BOOL, cisfinite)
lt_ktable lt_k_logical_not = { LT_TAB_B(logical_not) LT_TAB_I(logical_not) LT_TAB_F(logical_not) LT_TAB_C(logical_not) };
#define CLS_TAB(op, ints)                                                                \
  lt_ktable lt_k_##op = { [LTENSOR_BOOL] = k_##ints##_BOOL, LT_FOR_INTS(CLS_ENT, ints)   \
                          LT_TAB_F(op) LT_FOR_CPLX(CLS_CENT, op) };
#define CLS_ENT(op, E, ...) [LTENSOR_##E] = k_##op##_##E,
#define CLS_CENT(op, E, ...) [LTENSOR_##E] = k_c##op##_##E,
CLS_TAB(isnan, int_false) CLS_TAB(isinf, int_false) CLS_TAB(isfinite, int_true)
/* signbit (set for -0.0 and a negative NaN; signed integers below 0),
   isposinf / isneginf: real dtypes only (the binding refuses complex) */
#define BEXPR_signbit(x) (signbit(x) != 0)
#define BEXPR_int_neg(x) ((x) < 0)
#define BEXPR_isposinf(x) ((x) == INFINITY)
#define BEXPR_isneginf(x) ((x) == -INFINITY)
#define K_SINT_NEG(op, E, T, UT) K_TO_BOOL(int_neg, E, T)
LT_FOR_SINTS(K_SINT_NEG, x)
LT_FOR_FLOATS(K_TO_BOOL, signbit) LT_FOR_FLOATS(K_TO_BOOL, isposinf) LT_FOR_FLOATS(K_TO_BOOL, isneginf)
#define UINT_FALSE_ENT(op, E, ...) [LTENSOR_##E] = k_int_false_##E,
lt_ktable lt_k_signbit = { [LTENSOR_BOOL] = k_int_false_BOOL, LT_FOR_UINTS(UINT_FALSE_ENT, x)
                           LT_FOR_SINTS(CLS_ENT, int_neg) LT_TAB_F(signbit) };
lt_ktable lt_k_isposinf = { [LTENSOR_BOOL] = k_int_false_BOOL, LT_FOR_INTS(CLS_ENT, int_false) LT_TAB_F(isposinf) };
lt_ktable lt_k_isneginf = { [LTENSOR_BOOL] = k_int_false_BOOL, LT_FOR_INTS(CLS_ENT, int_false) LT_TAB_F(isneginf) };

/* ---- nan_to_num: ctx->f1 / f2 replace +inf / -inf, creal(ctx->c1) NaN ------ */
/* (real dtypes: PyTorch 1.13 has no complex kernel; the binding passes the
   dtype's limits as defaults and the kernel rounds the values to it) */
#define NTN(T, x) ((x) != (x) ? (T)creal(ctx->c1) : (x) == (T)INFINITY ? (T)ctx->f1 : \
                   (x) == -(T)INFINITY ? (T)ctx->f2 : (x))
#define K_NTN(op, E, T, S) LT_LOOP1(k_nan_to_num_##E, T, T, NTN(T, x))
LT_FOR_FLOATS(K_NTN, x)
lt_ktable lt_k_nan_to_num = { [LTENSOR_BOOL] = k_copy_BOOL, LT_FOR_INTS(RND_ENT, x) LT_TAB_F(nan_to_num) };

/* ---- logit: log(z / (1 - z)), z clamped to [eps, 1 - eps] (eps = ctx->f1)
   when ctx->mode -------------------------------------------------------- */
#define FOP_logit(T, S, x) LOGIT_(T, S, ctx->mode ? LOGIT_CLAMP(T, x) : (x))
/* lo = eps and hi = 1 - eps in the compute type, as PyTorch's kernel */
#define LOGIT_CLAMP(T, x) ((x) < (T)ctx->f1 ? (T)ctx->f1 : (x) > (T)1 - (T)ctx->f1 ? (T)1 - (T)ctx->f1 : (x))
#define LOGIT_(T, S, z) logit_##S(z)
static inline float logit_f(float z) { return logf(z / (1.0f - z)); }
static inline double logit_(double z) { return log(z / (1.0 - z)); }
LT_FOR_FLOATS(K_UF, logit)
F_TAB(logit)

/* ---- clamp: optional bounds in ctx (i1/i2 integral, f1/f2 floating) -------- */
/* a NaN bound (ctx->mode) makes every element NaN: PyTorch's vectorised
   minimum/maximum propagate NaN from either side */
#define K_ICLAMP(op, E, T, UT) \
  LT_LOOP1(k_clamp_##E, T, T, (ctx->has2 && (ctx->has1 ? ((x) > (T)ctx->i1 ? (x) : (T)ctx->i1) : (x)) > (T)ctx->i2) ? (T)ctx->i2 : (ctx->has1 && (x) < (T)ctx->i1 ? (T)ctx->i1 : (x)))
/* Floats: the bounds hoisted (an absent one is -inf / inf) and two
   compare-selects per element, which compile to max/min instructions, 8
   lanes wide in the AVX2 clone: fmin/fmax were libm calls per element
   (ReLU6, a clamp, was a third of mobilenet_v2's inference).  NaN x stays
   NaN (both compares are false) and -0.0 stays -0.0 at a 0.0 bound, as
   PyTorch's clamp; lo > hi gives hi everywhere, as torch.clamp. */
#define K_FCLAMP_BODY(E, T, ATTR)                                                            \
  static ATTR void k_clamp_##E##_##ATTR##_(char **d, const int64_t *s, int64_t n, void *vctx) { \
    const lt_kctx *ctx = (const lt_kctx *)vctx;                                                 \
    const T lo = ctx->has1 ? (T)ctx->f1 : (T)-INFINITY, hi = ctx->has2 ? (T)ctx->f2 : (T)INFINITY; \
    const int nanb = ctx->mode;                                                                 \
    const int64_t so = s[0], sa = s[1];                                                         \
    if (so == (int64_t)sizeof(T) && sa == (int64_t)sizeof(T)) {                                 \
      T *restrict o = (T *)d[0];                                                                \
      const T *restrict pa = (const T *)d[1];                                                   \
      if (nanb) { for (int64_t i = 0; i < n; i++) o[i] = (T)NAN; return; }                      \
      for (int64_t i = 0; i < n; i++) {                                                         \
        T x = pa[i], y = x < lo ? lo : x;                                                       \
        o[i] = y > hi ? hi : y;                                                                 \
      }                                                                                         \
      return;                                                                                   \
    }                                                                                           \
    char *po = d[0];                                                                            \
    const char *pa = d[1];                                                                      \
    for (int64_t i = 0; i < n; i++, po += so, pa += sa) {                                       \
      T x = *(const T *)pa, y = x < lo ? lo : x;                                                \
      *(T *)po = nanb ? (T)NAN : y > hi ? hi : y;                                               \
    }                                                                                           \
  }
#define LT_NOATTR
#if LT_CPU_X86
#define K_FCLAMP(op, E, T, S)                                                                    \
  K_FCLAMP_BODY(E, T, LT_NOATTR)                                                                 \
  K_FCLAMP_BODY(E, T, LT_TARGET_AVX2_FMA)                                                        \
  static void k_clamp_##E(char **d, const int64_t *s, int64_t n, void *vctx) {                  \
    if (lt_cpu_has_avx2_fma()) k_clamp_##E##_LT_TARGET_AVX2_FMA_(d, s, n, vctx);                 \
    else k_clamp_##E##_LT_NOATTR_(d, s, n, vctx);                                               \
  }
#else
#define K_FCLAMP(op, E, T, S)                                                                    \
  K_FCLAMP_BODY(E, T, LT_NOATTR)                                                                 \
  static void k_clamp_##E(char **d, const int64_t *s, int64_t n, void *vctx) { k_clamp_##E##_LT_NOATTR_(d, s, n, vctx); }
#endif
LT_FOR_INTS(K_ICLAMP, x) LT_FOR_FLOATS(K_FCLAMP, x)
lt_ktable lt_k_clamp = { LT_TAB_I(clamp) LT_TAB_F(clamp) };

/* ---- complex -> real ------------------------------------------------------ */
LT_LOOP1(k_cabs_COMPLEX64, lt_cfloat, float, cabsf(x))
LT_LOOP1(k_cabs_COMPLEX128, lt_cdouble, double, cabs(x))
LT_LOOP1(k_angle_COMPLEX64, lt_cfloat, float, cargf(x))
LT_LOOP1(k_angle_COMPLEX128, lt_cdouble, double, carg(x))
lt_ktable lt_k_cabs = { LT_TAB_C(cabs) };
lt_ktable lt_k_angle = { LT_TAB_C(angle) };
#define K_RANGLE(op, E, T, S) LT_LOOP1(k_angle_real_##E, T, T, (x) != (x) ? (x) : (x) < 0 ? (T)3.14159265358979323846 : (T)0)
LT_FOR_FLOATS(K_RANGLE, x)
lt_ktable lt_k_angle_real = { LT_TAB_F(angle_real) };
