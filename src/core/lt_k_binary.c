/* lt_k_binary.c -- binary and ternary elementwise kernels, one per op and
   compute dtype, instantiated from the lists in lt_k_loops.h.  Integer
   arithmetic goes through the unsigned twin type so that overflow wraps
   without undefined behaviour; integer division by zero raises the
   context's error flag instead of trapping. */
#include "lt_k_loops.h"

/* ---- wrapping integer arithmetic: 0u/1u force unsigned arithmetic even
   for the types that would otherwise promote to (signed) int ---------- */
#define WADD(T, UT, a, b) ((T)(UT)(0u + (UT)(a) + (UT)(b)))
#define WSUB(T, UT, a, b) ((T)(UT)(0u + (UT)(a) - (UT)(b)))
#define WMUL(T, UT, a, b) ((T)(UT)(1u * (UT)(a) * (UT)(b)))

/* per integer dtype helpers: division family, pow, shifts */
#define SINT_HELPERS(op, E, T, UT)                                                          \
  static inline T divt_##E(T a, T b, lt_kctx *c) {                                          \
    if (b == 0) { LT_KERR(c); return 0; }                                                   \
    if (b == -1) return (T)(UT)(0u - (UT)a);   /* MIN / -1 wraps, never traps */            \
    return (T)(a / b);                                                                      \
  }                                                                                         \
  static inline T divf_##E(T a, T b, lt_kctx *c) {                                          \
    if (b == 0) { LT_KERR(c); return 0; }                                                   \
    if (b == -1) return (T)(UT)(0u - (UT)a);                                                \
    T q = (T)(a / b);                                                                       \
    if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q--;                                       \
    return q;                                                                               \
  }                                                                                         \
  static inline T rem_##E(T a, T b, lt_kctx *c) {                                           \
    if (b == 0) { LT_KERR(c); return 0; }                                                   \
    if (b == -1) return 0;                                                                  \
    T r = (T)(a % b);                                                                       \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                                     \
    return r;                                                                               \
  }                                                                                         \
  static inline T fmod_##E(T a, T b, lt_kctx *c) {                                          \
    if (b == 0) { LT_KERR(c); return 0; }                                                   \
    if (b == -1) return 0;                                                                  \
    return (T)(a % b);                                                                      \
  }                                                                                         \
  static inline T pow_##E(T a, T b) {                                                       \
    if (b < 0) {   /* PyTorch's powi: only 1 and -1 survive a negative exponent */          \
      if (a == 1) return 1;                                                                 \
      if (a == -1) return (b & 1) ? (T)-1 : (T)1;                                           \
      return 0;                                                                             \
    }                                                                                       \
    uint64_t r = 1, x = (uint64_t)a, e = (uint64_t)b;                                       \
    while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }                                       \
    return (T)(UT)r;                                                                        \
  }                                                                                         \
  static inline T shl_##E(T a, T b) {                                                       \
    if (b < 0 || (uint64_t)b >= sizeof(T) * 8) return 0;                                    \
    return (T)(UT)((UT)a << b);                                                             \
  }                                                                                         \
  static inline T shr_##E(T a, T b) {   /* arithmetic: sign bits shift in */                \
    if (b < 0 || (uint64_t)b >= sizeof(T) * 8) return a < 0 ? (T)-1 : 0;                   \
    return (T)(a >> b);                                                                     \
  }
#define UINT_HELPERS(op, E, T, UT)                                                          \
  static inline T divt_##E(T a, T b, lt_kctx *c) {                                          \
    if (b == 0) { LT_KERR(c); return 0; }                                                   \
    return (T)(a / b);                                                                      \
  }                                                                                         \
  static inline T divf_##E(T a, T b, lt_kctx *c) { return divt_##E(a, b, c); }              \
  static inline T rem_##E(T a, T b, lt_kctx *c) {                                           \
    if (b == 0) { LT_KERR(c); return 0; }                                                   \
    return (T)(a % b);                                                                      \
  }                                                                                         \
  static inline T fmod_##E(T a, T b, lt_kctx *c) { return rem_##E(a, b, c); }               \
  static inline T pow_##E(T a, T b) {                                                       \
    uint64_t r = 1, x = (uint64_t)a, e = (uint64_t)b;                                       \
    while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }                                       \
    return (T)r;                                                                            \
  }                                                                                         \
  static inline T shl_##E(T a, T b) {                                                       \
    if ((uint64_t)b >= sizeof(T) * 8) return 0;                                             \
    return (T)(UT)(0u + ((UT)a << b));                                                      \
  }                                                                                         \
  static inline T shr_##E(T a, T b) {                                                       \
    if ((uint64_t)b >= sizeof(T) * 8) return 0;                                             \
    return (T)(a >> b);                                                                     \
  }
LT_FOR_SINTS(SINT_HELPERS, x)
LT_FOR_UINTS(UINT_HELPERS, x)

/* floating division family, as PyTorch's div_floor / remainder */
#define FLT_HELPERS(op, E, T, S)                                                            \
  static inline T divf_##E(T a, T b) {                                                      \
    if (b == 0) return a / b;                                                               \
    T mod = fmod##S(a, b), div = (a - mod) / b;                                             \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                                       \
    T fl;                                                                                   \
    if (div != 0) { fl = floor##S(div); if (div - fl > (T)0.5) fl += 1; }                   \
    else fl = copysign##S((T)0, a / b);                                                     \
    return fl;                                                                              \
  }                                                                                         \
  static inline T rem_##E(T a, T b) {                                                       \
    T mod = fmod##S(a, b);                                                                  \
    if (mod != 0 && ((b < 0) != (mod < 0))) mod += b;                                       \
    return mod;                                                                             \
  }                                                                                         \
  static inline T max_##E(T a, T b) { return (a != a || a > b) ? a : b; }                   \
  static inline T min_##E(T a, T b) { return (a != a || a < b) ? a : b; }                   \
  static inline T lerp_##E(T a, T b, T w) {                                                 \
    return fabs##S(w) < (T)0.5 ? a + w * (b - a) : b - (b - a) * ((T)1 - w);                \
  }                                                                                         \
  /* logaddexp(2): equal infinities give themselves (inf - inf would be NaN);     \
     else max + log1p(exp(-|a - b|)), NaN from either side propagating */      \
  static inline T lae_##E(T a, T b) {                                                       \
    if (isinf(a) && a == b) return a;                                                       \
    return (a < b ? b : a) + log1p##S(exp##S(-fabs##S(a - b)));                              \
  }                                                                                         \
  static inline T lae2_##E(T a, T b) {                                                      \
    if (isinf(a) && a == b) return a;                                                       \
    return (a < b ? b : a) + log1p##S(exp2##S(-fabs##S(a - b))) * (T)1.4426950408889634074; \
  }                                                                                         \
  /* xlogy: NaN when y is NaN, else 0 when x is 0 (even for y = 0 or inf) */    \
  static inline T xlogy_##E(T x, T y) {                                                     \
    if (y != y) return (T)NAN;                                                              \
    if (x == 0) return 0;                                                                   \
    return x * log##S(y);                                                                   \
  }
LT_FOR_FLOATS(FLT_HELPERS, x)

/* ---- add / sub / mul ---------------------------------------------------- */
#define K_INT(op, E, T, UT) LT_LOOP2(k_##op##_##E, T, T, OP_##op(T, UT, a, b))
#define K_FLT(op, E, T, S) LT_LOOP2(k_##op##_##E, T, T, FOP_##op(T, S, a, b))

#define OP_add(T, UT, a, b) WADD(T, UT, a, b)
#define OP_sub(T, UT, a, b) WSUB(T, UT, a, b)
#define OP_mul(T, UT, a, b) WMUL(T, UT, a, b)
#define OP_add_alpha(T, UT, a, b) WADD(T, UT, a, WMUL(T, UT, (T)ctx->i1, b))
#define FOP_add(T, S, a, b) ((a) + (b))
#define FOP_sub(T, S, a, b) ((a) - (b))
#define FOP_mul(T, S, a, b) ((a) * (b))
#define FOP_add_alpha(T, S, a, b) ((a) + (T)ctx->f1 * (b))
#define COP_add_alpha(T, S, a, b) ((a) + (T)ctx->c1 * (b))
#define K_CPX(op, E, T, S) LT_LOOP2(k_##op##_##E, T, T, COP_##op(T, S, a, b))

LT_FOR_INTS(K_INT, add) LT_FOR_FLOATS(K_FLT, add) LT_FOR_CPLX(K_FLT, add)
LT_FOR_INTS(K_INT, sub) LT_FOR_FLOATS(K_FLT, sub) LT_FOR_CPLX(K_FLT, sub)
LT_FOR_INTS(K_INT, mul) LT_FOR_FLOATS(K_FLT, mul) LT_FOR_CPLX(K_FLT, mul)
LT_FOR_INTS(K_INT, add_alpha) LT_FOR_FLOATS(K_FLT, add_alpha) LT_FOR_CPLX(K_CPX, add_alpha)
/* bool: + is or, * is and (PyTorch computes in bool) */
LT_LOOP2(k_add_BOOL, uint8_t, uint8_t, (uint8_t)(a | b))
LT_LOOP2(k_mul_BOOL, uint8_t, uint8_t, (uint8_t)(a & b))
LT_LOOP2(k_add_alpha_BOOL, uint8_t, uint8_t, (uint8_t)(a | (ctx->i1 != 0 && b)))

lt_ktable lt_k_add = { LT_TAB_B(add) LT_TAB_I(add) LT_TAB_F(add) LT_TAB_C(add) };
lt_ktable lt_k_sub = { LT_TAB_I(sub) LT_TAB_F(sub) LT_TAB_C(sub) };
lt_ktable lt_k_mul = { LT_TAB_B(mul) LT_TAB_I(mul) LT_TAB_F(mul) LT_TAB_C(mul) };
lt_ktable lt_k_add_alpha = { LT_TAB_B(add_alpha) LT_TAB_I(add_alpha) LT_TAB_F(add_alpha) LT_TAB_C(add_alpha) };

/* ---- division family ------------------------------------------------------ */
#define OP_div_trunc(T, UT, a, b) divt_##T(a, b, ctx)
#define K_IDIV(op, E, T, UT) LT_LOOP2(k_##op##_##E, T, T, IOP_##op(E, a, b))
#define IOP_div_trunc(E, a, b) divt_##E(a, b, ctx)
#define IOP_div_floor(E, a, b) divf_##E(a, b, ctx)
#define IOP_remainder(E, a, b) rem_##E(a, b, ctx)
#define IOP_fmod(E, a, b) fmod_##E(a, b, ctx)
#define IOP_pow(E, a, b) pow_##E(a, b)
#define IOP_lshift(E, a, b) shl_##E(a, b)
#define IOP_rshift(E, a, b) shr_##E(a, b)
#define K_FDIV(op, E, T, S) LT_LOOP2(k_##op##_##E, T, T, XOP_##op(E, T, S, a, b))
#define XOP_div(E, T, S, a, b) ((a) / (b))
#define XOP_div_trunc(E, T, S, a, b) trunc##S((a) / (b))
#define XOP_div_floor(E, T, S, a, b) divf_##E(a, b)
#define XOP_remainder(E, T, S, a, b) rem_##E(a, b)
#define XOP_fmod(E, T, S, a, b) fmod##S(a, b)
#define XOP_pow(E, T, S, a, b) ((b) == 2 ? (a) * (a) : pow##S(a, b))
#define XOP_atan2(E, T, S, a, b) atan2##S(a, b)
#define XOP_maximum(E, T, S, a, b) max_##E(a, b)
#define XOP_minimum(E, T, S, a, b) min_##E(a, b)
#define XOP_cpow(E, T, S, a, b) cpow##S(a, b)

LT_FOR_FLOATS(K_FDIV, div) LT_FOR_CPLX(K_FDIV, div)
LT_FOR_INTS(K_IDIV, div_trunc) LT_FOR_FLOATS(K_FDIV, div_trunc)
LT_FOR_INTS(K_IDIV, div_floor) LT_FOR_FLOATS(K_FDIV, div_floor)
LT_FOR_INTS(K_IDIV, remainder) LT_FOR_FLOATS(K_FDIV, remainder)
LT_FOR_INTS(K_IDIV, fmod) LT_FOR_FLOATS(K_FDIV, fmod)
LT_FOR_INTS(K_IDIV, pow) LT_FOR_FLOATS(K_FDIV, pow)
LT_FOR_FLOATS(K_FDIV, atan2)
#define XOP_hypot(E, T, S, a, b) hypot##S(a, b)
#define XOP_copysign(E, T, S, a, b) copysign##S(a, b)
#define XOP_logaddexp(E, T, S, a, b) lae_##E(a, b)
#define XOP_logaddexp2(E, T, S, a, b) lae2_##E(a, b)
#define XOP_xlogy(E, T, S, a, b) xlogy_##E(a, b)
LT_FOR_FLOATS(K_FDIV, hypot) LT_FOR_FLOATS(K_FDIV, copysign) LT_FOR_FLOATS(K_FDIV, logaddexp)
LT_FOR_FLOATS(K_FDIV, logaddexp2) LT_FOR_FLOATS(K_FDIV, xlogy)
#define K_CPOW(op, E, T, S) LT_LOOP2(k_pow_##E, T, T, cpow##S(a, b))
LT_FOR_CPLX(K_CPOW, pow)

lt_ktable lt_k_div = { LT_TAB_F(div) LT_TAB_C(div) };
lt_ktable lt_k_div_trunc = { LT_TAB_I(div_trunc) LT_TAB_F(div_trunc) };
lt_ktable lt_k_div_floor = { LT_TAB_I(div_floor) LT_TAB_F(div_floor) };
lt_ktable lt_k_remainder = { LT_TAB_I(remainder) LT_TAB_F(remainder) };
lt_ktable lt_k_fmod = { LT_TAB_I(fmod) LT_TAB_F(fmod) };
lt_ktable lt_k_pow = { LT_TAB_I(pow) LT_TAB_F(pow) LT_TAB_C(pow) };
lt_ktable lt_k_atan2 = { LT_TAB_F(atan2) };
lt_ktable lt_k_hypot = { LT_TAB_F(hypot) };
lt_ktable lt_k_copysign = { LT_TAB_F(copysign) };
lt_ktable lt_k_logaddexp = { LT_TAB_F(logaddexp) };
lt_ktable lt_k_logaddexp2 = { LT_TAB_F(logaddexp2) };
lt_ktable lt_k_xlogy = { LT_TAB_F(xlogy) };

/* ---- maximum / minimum (NaN propagates) ---------------------------------- */
#define K_IMAX(op, E, T, UT) LT_LOOP2(k_##op##_##E, T, T, MOP_##op(a, b))
#define MOP_maximum(a, b) ((a) > (b) ? (a) : (b))
#define MOP_minimum(a, b) ((a) < (b) ? (a) : (b))
LT_FOR_INTS(K_IMAX, maximum) LT_FOR_FLOATS(K_FDIV, maximum)
LT_FOR_INTS(K_IMAX, minimum) LT_FOR_FLOATS(K_FDIV, minimum)
LT_LOOP2(k_maximum_BOOL, uint8_t, uint8_t, (uint8_t)(a | b))
LT_LOOP2(k_minimum_BOOL, uint8_t, uint8_t, (uint8_t)(a & b))
lt_ktable lt_k_maximum = { LT_TAB_B(maximum) LT_TAB_I(maximum) LT_TAB_F(maximum) };
lt_ktable lt_k_minimum = { LT_TAB_B(minimum) LT_TAB_I(minimum) LT_TAB_F(minimum) };

/* ---- bitwise -------------------------------------------------------------- */
#define K_BIT(op, E, T, UT) LT_LOOP2(k_##op##_##E, T, T, (T)(a BOP_##op b))
#define BOP_bitwise_and &
#define BOP_bitwise_or |
#define BOP_bitwise_xor ^
LT_FOR_INTS(K_BIT, bitwise_and) LT_FOR_INTS(K_BIT, bitwise_or) LT_FOR_INTS(K_BIT, bitwise_xor)
LT_LOOP2(k_bitwise_and_BOOL, uint8_t, uint8_t, (uint8_t)(a & b))
LT_LOOP2(k_bitwise_or_BOOL, uint8_t, uint8_t, (uint8_t)(a | b))
LT_LOOP2(k_bitwise_xor_BOOL, uint8_t, uint8_t, (uint8_t)(a ^ b))
LT_FOR_INTS(K_IDIV, lshift) LT_FOR_INTS(K_IDIV, rshift)
lt_ktable lt_k_bitwise_and = { LT_TAB_B(bitwise_and) LT_TAB_I(bitwise_and) };
lt_ktable lt_k_bitwise_or = { LT_TAB_B(bitwise_or) LT_TAB_I(bitwise_or) };
lt_ktable lt_k_bitwise_xor = { LT_TAB_B(bitwise_xor) LT_TAB_I(bitwise_xor) };
lt_ktable lt_k_lshift = { LT_TAB_I(lshift) };
lt_ktable lt_k_rshift = { LT_TAB_I(rshift) };

/* ---- comparisons and logical ops (bool out) ------------------------------- */
#define K_CMP_I(op, E, T, UT) LT_LOOP2(k_##op##_##E, T, uint8_t, (uint8_t)(a COP_##op b))
#define K_CMP_F(op, E, T, S) LT_LOOP2(k_##op##_##E, T, uint8_t, (uint8_t)(a COP_##op b))
#define COP_eq ==
#define COP_ne !=
#define COP_lt <
#define COP_le <=
#define COP_gt >
#define COP_ge >=
#define CMP_ALL(op) LT_LOOP2(k_##op##_BOOL, uint8_t, uint8_t, (uint8_t)(a COP_##op b)) \
  LT_FOR_INTS(K_CMP_I, op) LT_FOR_FLOATS(K_CMP_F, op)
CMP_ALL(eq) CMP_ALL(ne) CMP_ALL(lt) CMP_ALL(le) CMP_ALL(gt) CMP_ALL(ge)
LT_FOR_CPLX(K_CMP_F, eq) LT_FOR_CPLX(K_CMP_F, ne)
lt_ktable lt_k_eq = { LT_TAB_B(eq) LT_TAB_I(eq) LT_TAB_F(eq) LT_TAB_C(eq) };
lt_ktable lt_k_ne = { LT_TAB_B(ne) LT_TAB_I(ne) LT_TAB_F(ne) LT_TAB_C(ne) };
lt_ktable lt_k_lt = { LT_TAB_B(lt) LT_TAB_I(lt) LT_TAB_F(lt) };
lt_ktable lt_k_le = { LT_TAB_B(le) LT_TAB_I(le) LT_TAB_F(le) };
lt_ktable lt_k_gt = { LT_TAB_B(gt) LT_TAB_I(gt) LT_TAB_F(gt) };
lt_ktable lt_k_ge = { LT_TAB_B(ge) LT_TAB_I(ge) LT_TAB_F(ge) };

#define K_LOG_I(op, E, T, UT) LT_LOOP2(k_##op##_##E, T, uint8_t, (uint8_t)((a != 0) LOP_##op (b != 0)))
#define K_LOG_F(op, E, T, S) LT_LOOP2(k_##op##_##E, T, uint8_t, (uint8_t)((a != 0) LOP_##op (b != 0)))
#define LOP_logical_and &&
#define LOP_logical_or ||
#define LOP_logical_xor !=
#define LOG_ALL(op) LT_LOOP2(k_##op##_BOOL, uint8_t, uint8_t, (uint8_t)((a != 0) LOP_##op (b != 0))) \
  LT_FOR_INTS(K_LOG_I, op) LT_FOR_FLOATS(K_LOG_F, op) LT_FOR_CPLX(K_LOG_F, op)
LOG_ALL(logical_and) LOG_ALL(logical_or) LOG_ALL(logical_xor)
lt_ktable lt_k_logical_and = { LT_TAB_B(logical_and) LT_TAB_I(logical_and) LT_TAB_F(logical_and) LT_TAB_C(logical_and) };
lt_ktable lt_k_logical_or = { LT_TAB_B(logical_or) LT_TAB_I(logical_or) LT_TAB_F(logical_or) LT_TAB_C(logical_or) };
lt_ktable lt_k_logical_xor = { LT_TAB_B(logical_xor) LT_TAB_I(logical_xor) LT_TAB_F(logical_xor) LT_TAB_C(logical_xor) };

/* ---- ternary: where(cond, a, b), lerp(a, b, w) ---------------------------- */
#define K_WHERE(op, E, T, ...) LT_LOOP3(k_where_##E, uint8_t, T, T, a ? b : c)
K_WHERE(x, BOOL, uint8_t, x)
LT_FOR_INTS(K_WHERE, x) LT_FOR_FLOATS(K_WHERE, x) LT_FOR_CPLX(K_WHERE, x)
lt_ktable lt_k_where = { LT_TAB_B(where) LT_TAB_I(where) LT_TAB_F(where) LT_TAB_C(where) };

#define K_LERP(op, E, T, S) LT_LOOP3(k_lerp_##E, T, T, T, lerp_##E(a, b, c))
LT_FOR_FLOATS(K_LERP, x)
#define K_CLERP(op, E, T, S) \
  LT_LOOP3(k_lerp_##E, T, T, T, cabs##S(c) < 0.5 ? a + c * (b - a) : b - (b - a) * ((T)1 - c))
LT_FOR_CPLX(K_CLERP, x)
lt_ktable lt_k_lerp = { LT_TAB_F(lerp) LT_TAB_C(lerp) };
