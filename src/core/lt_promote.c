/*
 * lt_promote.c -- dtype promotion rules (Lua-free).
 *
 * Rules
 * -----
 * torch (default), PyTorch 1.13's TensorIterator::compute_common_dtype:
 *   operands fall in three tiers: dimensioned tensors (ndim >= 1), zero-dim
 *   tensors, wrapped Lua scalars.  Inside a tier dtypes combine with the
 *   table TORCH below (PyTorch's _promoteTypesLookup; pairs with uint16/32/64
 *   follow the JAX table, whose f* becomes the default float dtype).
 *   A Lua integer is a weak int64, a Lua float a weak float that enters as
 *   the default dtype, a complex as the default complex, a boolean as bool.
 *   The tiers then combine by category (bool < integral < floating < complex):
 *     result = combine(dim, combine(zero, weak)) where combine(hi, lo) is
 *       hi                  if hi is complex
 *       complex(hi)         if lo is complex and hi floating
 *       lo                  if lo is complex (hi integral/bool/absent)
 *       hi                  if hi is floating
 *       promote(hi, lo)     if hi is bool or lo is floating
 *       hi if present, else lo
 *   so a lower tier only matters when it is of a higher category.
 *     int32 tensor + 5          -> int32      int32 tensor + 5.5   -> float32
 *     int32 tensor + int64 0-dim -> int32     bool + uint8 tensor  -> uint8
 *     int64 tensor + float32    -> float32    float16 + complex64 0-dim -> complex32
 * jax (T.set_promotion "jax"): the JAX lattice, table JAX below taken word
 *   for word from the seed: every tensor is a strong type (zero-dim tensors
 *   are not a tier), Lua integers are i*, floats f*, complex c*, booleans b1.
 *   The result is the join over the lattice; a weak result materialises as
 *   int64 (i*), the default float (f*), the default complex (c*).
 *     int8 + uint8 -> f* (float32)   bfloat16 + float16 -> float32
 *     int16 tensor + 1 -> int16       uint8 tensor + 2.5 -> float32
 *   complex32 is not in JAX's lattice: pairs with it use the torch table.
 * strict: tensors (any ndim) must share one dtype, else an error naming both;
 *   a Lua scalar is accepted only when the torch result leaves that dtype
 *   unchanged (int32 + 1 ok, int32 + 1.5 refused).  With no tensor at all
 *   the torch rule applies.
 * Ops then adjust the common dtype: true division and float-valued unary
 * ops turn bool/integral into the default float; comparisons give bool.
 */
#include "lt_promote.h"

#define b1 LTENSOR_BOOL
#define u1 LTENSOR_UINT8
#define u2 LTENSOR_UINT16
#define u4 LTENSOR_UINT32
#define u8 LTENSOR_UINT64
#define i1 LTENSOR_INT8
#define i2 LTENSOR_INT16
#define i4 LTENSOR_INT32
#define i8 LTENSOR_INT64
#define f2 LTENSOR_FLOAT16
#define bf LTENSOR_BFLOAT16
#define f4 LTENSOR_FLOAT32
#define f8 LTENSOR_FLOAT64
#define c2 LTENSOR_COMPLEX32
#define c4 LTENSOR_COMPLEX64
#define c8 LTENSOR_COMPLEX128
#define fd LTENSOR_NUM_DTYPES   /* "the default float dtype" (JAX's f*) */

/* In ltensor's dtype order (rows and columns). */
static const unsigned char TORCH[LTENSOR_NUM_DTYPES][LTENSOR_NUM_DTYPES] = {
  /*        b1  u1  u2  u4  u8  i1  i2  i4  i8  f2  bf  f4  f8  c2  c4  c8 */
  /* b1 */ {b1, u1, u2, u4, u8, i1, i2, i4, i8, f2, bf, f4, f8, c2, c4, c8},
  /* u1 */ {u1, u1, u2, u4, u8, i2, i2, i4, i8, f2, bf, f4, f8, c2, c4, c8},
  /* u2 */ {u2, u2, u2, u4, u8, i4, i4, i4, i8, f2, bf, f4, f8, c2, c4, c8},
  /* u4 */ {u4, u4, u4, u4, u8, i8, i8, i8, i8, f2, bf, f4, f8, c2, c4, c8},
  /* u8 */ {u8, u8, u8, u8, u8, fd, fd, fd, fd, f2, bf, f4, f8, c2, c4, c8},
  /* i1 */ {i1, i2, i4, i8, fd, i1, i2, i4, i8, f2, bf, f4, f8, c2, c4, c8},
  /* i2 */ {i2, i2, i4, i8, fd, i2, i2, i4, i8, f2, bf, f4, f8, c2, c4, c8},
  /* i4 */ {i4, i4, i4, i8, fd, i4, i4, i4, i8, f2, bf, f4, f8, c2, c4, c8},
  /* i8 */ {i8, i8, i8, i8, fd, i8, i8, i8, i8, f2, bf, f4, f8, c2, c4, c8},
  /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c2, c4, c8},
  /* bf */ {bf, bf, bf, bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c4, c4, c8},
  /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c4, c4, c8},
  /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8, c8},
  /* c2 */ {c2, c2, c2, c2, c2, c2, c2, c2, c2, c2, c4, c4, c8, c2, c4, c8},
  /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c4, c4, c4, c4, c4, c8, c4, c4, c8},
  /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
};

/* JAX's lattice table in the seed's own order, weak types included. */
enum { J_b1, J_u1, J_u2, J_u4, J_u8, J_i1, J_i2, J_i4, J_i8, J_bf, J_f2, J_f4, J_f8,
       J_c8, J_c16, J_is, J_fs, J_cs, J_N };
#define B J_b1
#define U1 J_u1
#define U2 J_u2
#define U4 J_u4
#define U8 J_u8
#define I1 J_i1
#define I2 J_i2
#define I4 J_i4
#define I8 J_i8
#define BF J_bf
#define F2 J_f2
#define F4 J_f4
#define F8 J_f8
#define C8 J_c8
#define C16 J_c16
#define IS J_is
#define FS J_fs
#define CS J_cs
static const unsigned char JAX[J_N][J_N] = {
  /*        b1   u1   u2   u4   u8   i1   i2   i4   i8   bf   f2   f4   f8   c8   c16  i*   f*   c*  */
  /* b1 */ {B,   U1,  U2,  U4,  U8,  I1,  I2,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, IS,  FS,  CS},
  /* u1 */ {U1,  U1,  U2,  U4,  U8,  I2,  I2,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, U1,  FS,  CS},
  /* u2 */ {U2,  U2,  U2,  U4,  U8,  I4,  I4,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, U2,  FS,  CS},
  /* u4 */ {U4,  U4,  U4,  U4,  U8,  I8,  I8,  I8,  I8,  BF,  F2,  F4,  F8,  C8,  C16, U4,  FS,  CS},
  /* u8 */ {U8,  U8,  U8,  U8,  U8,  FS,  FS,  FS,  FS,  BF,  F2,  F4,  F8,  C8,  C16, U8,  FS,  CS},
  /* i1 */ {I1,  I2,  I4,  I8,  FS,  I1,  I2,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, I1,  FS,  CS},
  /* i2 */ {I2,  I2,  I4,  I8,  FS,  I2,  I2,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, I2,  FS,  CS},
  /* i4 */ {I4,  I4,  I4,  I8,  FS,  I4,  I4,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, I4,  FS,  CS},
  /* i8 */ {I8,  I8,  I8,  I8,  FS,  I8,  I8,  I8,  I8,  BF,  F2,  F4,  F8,  C8,  C16, I8,  FS,  CS},
  /* bf */ {BF,  BF,  BF,  BF,  BF,  BF,  BF,  BF,  BF,  BF,  F4,  F4,  F8,  C8,  C16, BF,  BF,  C8},
  /* f2 */ {F2,  F2,  F2,  F2,  F2,  F2,  F2,  F2,  F2,  F4,  F2,  F4,  F8,  C8,  C16, F2,  F2,  C8},
  /* f4 */ {F4,  F4,  F4,  F4,  F4,  F4,  F4,  F4,  F4,  F4,  F4,  F4,  F8,  C8,  C16, F4,  F4,  C8},
  /* f8 */ {F8,  F8,  F8,  F8,  F8,  F8,  F8,  F8,  F8,  F8,  F8,  F8,  F8,  C16, C16, F8,  F8,  C16},
  /* c8 */ {C8,  C8,  C8,  C8,  C8,  C8,  C8,  C8,  C8,  C8,  C8,  C8,  C16, C8,  C16, C8,  C8,  C8},
  /* c16*/ {C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16, C16},
  /* i* */ {IS,  U1,  U2,  U4,  U8,  I1,  I2,  I4,  I8,  BF,  F2,  F4,  F8,  C8,  C16, IS,  FS,  CS},
  /* f* */ {FS,  FS,  FS,  FS,  FS,  FS,  FS,  FS,  FS,  BF,  F2,  F4,  F8,  C8,  C16, FS,  FS,  CS},
  /* c* */ {CS,  CS,  CS,  CS,  CS,  CS,  CS,  CS,  CS,  C8,  C8,  C8,  C16, C8,  C16, CS,  CS,  CS},
};

/* ltensor dtype <-> JAX index (complex32 has none: -1) */
static const signed char TO_JAX[LTENSOR_NUM_DTYPES] = {
  J_b1, J_u1, J_u2, J_u4, J_u8, J_i1, J_i2, J_i4, J_i8, J_f2, J_bf, J_f4, J_f8, -1, J_c8, J_c16
};
static const unsigned char FROM_JAX[J_N] = {
  b1, u1, u2, u4, u8, i1, i2, i4, i8, bf, f2, f4, f8, c4, c8, i8, fd, fd /* c*: see below */
};

/* PyTorch's toComplexType: bfloat16 has float32's range, so complex64 */
static ltensor_dtype to_complex(ltensor_dtype d) {
  return d == LTENSOR_BFLOAT16 ? LTENSOR_COMPLEX64 : lt_to_complex(d);
}

static ltensor_dtype torch_pair(ltensor_dtype a, ltensor_dtype b, ltensor_dtype deflt) {
  int r = TORCH[a][b];
  return r == fd ? deflt : (ltensor_dtype)r;
}

static ltensor_dtype from_jax(int j, ltensor_dtype deflt) {
  if (j == J_cs) return to_complex(deflt);
  if (j == J_fs) return deflt;
  return (ltensor_dtype)FROM_JAX[j];
}

ltensor_dtype lt_promote_types(int mode, ltensor_dtype a, ltensor_dtype b, ltensor_dtype deflt) {
  if (mode == LT_PROMO_JAX && TO_JAX[a] >= 0 && TO_JAX[b] >= 0)
    return from_jax(JAX[TO_JAX[a]][TO_JAX[b]], deflt);
  return torch_pair(a, b, deflt);
}

/* ---- torch: ResultTypeState ------------------------------------------ */
#define UNDEF (-1)
static int skip_undef(int a, int b, ltensor_dtype deflt) {
  if (a == UNDEF) return b;
  if (b == UNDEF) return a;
  return torch_pair((ltensor_dtype)a, (ltensor_dtype)b, deflt);
}

static int combine_categories(int hi, int lo, ltensor_dtype deflt) {
  if (hi != UNDEF && lt_is_complex((ltensor_dtype)hi)) return hi;
  if (lo != UNDEF && lt_is_complex((ltensor_dtype)lo)) {
    if (hi != UNDEF && lt_is_floating((ltensor_dtype)hi)) return to_complex((ltensor_dtype)hi);
    return lo;
  }
  if (hi != UNDEF && lt_is_floating((ltensor_dtype)hi)) return hi;
  if (hi == LTENSOR_BOOL || (lo != UNDEF && lt_is_floating((ltensor_dtype)lo)))
    return skip_undef(hi, lo, deflt);
  if (hi != UNDEF) return hi;
  return lo;
}

static ltensor_dtype torch_result(const lt_pin *p, int n, ltensor_dtype deflt) {
  int dim = UNDEF, zero = UNDEF, wrapped = UNDEF;
  for (int i = 0; i < n; i++) {
    int cur = p[i].dtype;
    if (p[i].tier == LT_TIER_WEAK) {
      if (lt_is_complex((ltensor_dtype)cur)) cur = to_complex(deflt);
      else if (lt_is_floating((ltensor_dtype)cur)) cur = deflt;
      wrapped = skip_undef(wrapped, cur, deflt);
    } else if (p[i].tier == LT_TIER_DIM) {
      dim = skip_undef(dim, cur, deflt);
    } else {
      zero = skip_undef(zero, cur, deflt);
    }
  }
  return (ltensor_dtype)combine_categories(dim, combine_categories(zero, wrapped, deflt), deflt);
}

static ltensor_dtype jax_result(const lt_pin *p, int n, ltensor_dtype deflt) {
  int j = UNDEF;
  for (int i = 0; i < n; i++) {
    int k;
    ltensor_dtype d = p[i].dtype;
    if (TO_JAX[d] < 0) return torch_result(p, n, deflt);   /* complex32: torch rules */
    if (p[i].tier == LT_TIER_WEAK) {
      switch (lt_kind(d)) {
      case LT_KIND_BOOL: k = J_b1; break;
      case LT_KIND_INT: k = J_is; break;
      case LT_KIND_FLOAT: k = J_fs; break;
      default: k = J_cs; break;
      }
    } else {
      k = TO_JAX[d];
    }
    j = j == UNDEF ? k : JAX[j][k];
  }
  if (j == J_is) return LTENSOR_INT64;
  return from_jax(j, deflt);
}

int lt_result_type(int mode, const lt_pin *p, int n, ltensor_dtype deflt, ltensor_dtype *out,
                   lt_promo_err *err) {
  if (mode == LT_PROMO_JAX) { *out = jax_result(p, n, deflt); return LT_PROMO_OK; }
  if (mode == LT_PROMO_STRICT) {
    int first = -1;
    for (int i = 0; i < n; i++) {
      if (p[i].tier == LT_TIER_WEAK) continue;
      if (first < 0) first = i;
      else if (p[i].dtype != p[first].dtype) {
        err->a = p[first].dtype;
        err->b = p[i].dtype;
        return LT_PROMO_ERR_TENSORS;
      }
    }
    if (first >= 0) {
      ltensor_dtype t = p[first].dtype;
      for (int i = 0; i < n; i++) {
        if (p[i].tier != LT_TIER_WEAK) continue;
        lt_pin two[2] = { { t, LT_TIER_DIM }, p[i] };
        ltensor_dtype r = torch_result(two, 2, deflt);
        if (r != t) {
          err->a = t;
          err->b = r;
          err->scalar = p[i].dtype;
          return LT_PROMO_ERR_SCALAR;
        }
      }
      *out = t;
      return LT_PROMO_OK;
    }
  }
  *out = torch_result(p, n, deflt);
  return LT_PROMO_OK;
}

int lt_can_cast(ltensor_dtype from, ltensor_dtype to) {
  if (lt_is_complex(from) && !lt_is_complex(to)) return 0;
  if (lt_is_floating(from) && lt_kind(to) <= LT_KIND_INT) return 0;
  if (from != LTENSOR_BOOL && to == LTENSOR_BOOL) return 0;
  return 1;
}

const char *lt_torch_name(ltensor_dtype d) {
  static const char *const names[LTENSOR_NUM_DTYPES] = {
    "Bool", "Byte", "UInt16", "UInt32", "UInt64", "Char", "Short", "Int", "Long",
    "Half", "BFloat16", "Float", "Double", "ComplexHalf", "ComplexFloat", "ComplexDouble"
  };
  return (unsigned)d < LTENSOR_NUM_DTYPES ? names[d] : "Undefined";
}

/* the C++ type names PyTorch prints for a caffe2::TypeMeta (a tensor's
   .dtype() in messages such as lerp's "expected dtype float for `end`") */
const char *lt_typemeta_name(ltensor_dtype d) {
  static const char *const names[LTENSOR_NUM_DTYPES] = {
    "bool", "unsigned char", "unsigned short", "unsigned int", "unsigned long", "signed char", "short int",
    "int", "long int", "c10::Half", "c10::BFloat16", "float", "double", "c10::complex<c10::Half>",
    "c10::complex<float>", "c10::complex<double>"
  };
  return (unsigned)d < LTENSOR_NUM_DTYPES ? names[d] : "Undefined";
}
