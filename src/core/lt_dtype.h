/*
 * lt_dtype.h -- the one list of dtypes that drives every per-dtype piece of C.
 *
 * LT_DTYPE_LIST(X) expands X(E, name, ctype, kind, canon, sgn) once per dtype:
 *   E      suffix of the public enum (LTENSOR_##E)
 *   name   lowercase name as a bare token ("float32" via #name)
 *   ctype  storage type of one element
 *   kind   LT_KIND_BOOL / INT / FLOAT / COMPLEX (the promotion category)
 *   canon  canonical value kind used for conversions: I64, U64, F64 or C128
 *   sgn    1 if the type can hold negative values (PyTorch's is_signed)
 *
 * float16, bfloat16 and complex32 are stored in 16/32 bits and computed in
 * float32 (see lt_compute_dtype).  Lua-free: this header never includes lua.h.
 */
#ifndef LT_DTYPE_H
#define LT_DTYPE_H

#include <complex.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "ltensor_types.h"

typedef uint16_t lt_half;      /* IEEE binary16 bits */
typedef uint16_t lt_bf16;      /* bfloat16 bits */
typedef struct { lt_half re, im; } lt_chalf;
typedef float _Complex lt_cfloat;
typedef double _Complex lt_cdouble;

enum { LT_KIND_BOOL = 0, LT_KIND_INT = 1, LT_KIND_FLOAT = 2, LT_KIND_COMPLEX = 3 };

#define LT_DTYPE_LIST(X)                                   \
  X(BOOL,       bool,       uint8_t,    LT_KIND_BOOL,    I64, 0)  \
  X(UINT8,      uint8,      uint8_t,    LT_KIND_INT,     I64, 0)  \
  X(UINT16,     uint16,     uint16_t,   LT_KIND_INT,     I64, 0)  \
  X(UINT32,     uint32,     uint32_t,   LT_KIND_INT,     I64, 0)  \
  X(UINT64,     uint64,     uint64_t,   LT_KIND_INT,     U64, 0)  \
  X(INT8,       int8,       int8_t,     LT_KIND_INT,     I64, 1)  \
  X(INT16,      int16,      int16_t,    LT_KIND_INT,     I64, 1)  \
  X(INT32,      int32,      int32_t,    LT_KIND_INT,     I64, 1)  \
  X(INT64,      int64,      int64_t,    LT_KIND_INT,     I64, 1)  \
  X(FLOAT16,    float16,    lt_half,    LT_KIND_FLOAT,   F64, 1)  \
  X(BFLOAT16,   bfloat16,   lt_bf16,    LT_KIND_FLOAT,   F64, 1)  \
  X(FLOAT32,    float32,    float,      LT_KIND_FLOAT,   F64, 1)  \
  X(FLOAT64,    float64,    double,     LT_KIND_FLOAT,   F64, 1)  \
  X(COMPLEX32,  complex32,  lt_chalf,   LT_KIND_COMPLEX, C128, 1) \
  X(COMPLEX64,  complex64,  lt_cfloat,  LT_KIND_COMPLEX, C128, 1) \
  X(COMPLEX128, complex128, lt_cdouble, LT_KIND_COMPLEX, C128, 1)

/* A second copy so that per-pair code (casts) can nest the list. */
#define LT_DTYPE_LIST2(X) LT_DTYPE_LIST(X)

typedef struct lt_dtype_info {
  const char *name;
  size_t itemsize;
  int kind;
  int is_signed;
} lt_dtype_info;

extern const lt_dtype_info lt_dtypes[LTENSOR_NUM_DTYPES];

static inline size_t lt_itemsize(ltensor_dtype d) { return lt_dtypes[d].itemsize; }
static inline int lt_kind(ltensor_dtype d) { return lt_dtypes[d].kind; }
static inline int lt_is_floating(ltensor_dtype d) { return lt_dtypes[d].kind == LT_KIND_FLOAT; }
static inline int lt_is_complex(ltensor_dtype d) { return lt_dtypes[d].kind == LT_KIND_COMPLEX; }
static inline int lt_is_integral(ltensor_dtype d) { return lt_dtypes[d].kind <= LT_KIND_INT; } /* bool too */

/* The dtype arithmetic runs in: half types compute in float32/complex64. */
static inline ltensor_dtype lt_compute_dtype(ltensor_dtype d) {
  if (d == LTENSOR_FLOAT16 || d == LTENSOR_BFLOAT16) return LTENSOR_FLOAT32;
  if (d == LTENSOR_COMPLEX32) return LTENSOR_COMPLEX64;
  return d;
}

/* Complex dtype matching a real float dtype, and the real dtype of a complex one. */
ltensor_dtype lt_to_complex(ltensor_dtype d);
ltensor_dtype lt_to_real(ltensor_dtype d);

/* ---- half precision (round to nearest even) ------------------------------ */
static inline float lt_half_to_float(lt_half h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else { /* subnormal: normalise */
      int e = -1;
      do { e++; man <<= 1; } while (!(man & 0x400u));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f; memcpy(&f, &bits, 4); return f;
}

static inline lt_half lt_float_to_half(float f) {
  uint32_t x; memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) /* inf or nan */
    return (lt_half)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
  if (ax >= 0x477ff000u) return (lt_half)(sign | 0x7c00u); /* overflow after rounding */
  if (ax < 0x38800000u) { /* subnormal or zero in half */
    if (ax <= 0x33000000u) return (lt_half)sign; /* at most half the smallest subnormal */
    uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; /* value = m * 2^(e-150); in units of 2^-24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (lt_half)(sign | r);
  }
  uint32_t r = ax - 0x38000000u; /* rebias exponent 127 -> 15 */
  uint32_t lsb = (r >> 13) & 1;
  r += 0xfffu + lsb;
  return (lt_half)(sign | (r >> 13));
}

static inline float lt_bf16_to_float(lt_bf16 h) {
  uint32_t bits = (uint32_t)h << 16; float f; memcpy(&f, &bits, 4); return f;
}

static inline lt_bf16 lt_float_to_bf16(float f) {
  uint32_t x; memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (lt_bf16)((x >> 16) | 0x40u); /* quiet nan */
  x += 0x7fffu + ((x >> 16) & 1);
  return (lt_bf16)(x >> 16);
}

/* ---- float -> integer without undefined behaviour ------------------------
   NaN becomes 0; values beyond the int64 range saturate to INT64_MIN/MAX;
   the result then wraps modulo 2^bits into narrower integer types (as
   PyTorch's CPU casts do in practice: 300.0 -> int8 gives 44, -1.0 -> uint8
   gives 255).  For uint64, values in [2^63, 2^64) convert exactly, larger
   values saturate to UINT64_MAX. */
static inline int64_t lt_f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}
static inline uint64_t lt_f64_to_u64(double v) {
  if (v != v) return 0;
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  if (v >= 9223372036854775808.0) return (uint64_t)v;
  return (uint64_t)lt_f64_to_i64(v);
}

/* ---- canonical loads: any element as int64 / uint64 / double / complex ---- */
double lt_load_f64(ltensor_dtype d, const void *p);       /* complex: real part */
int64_t lt_load_i64(ltensor_dtype d, const void *p);      /* floats as lt_f64_to_i64 */
lt_cdouble lt_load_c128(ltensor_dtype d, const void *p);
void lt_store_f64(ltensor_dtype d, void *p, double v);
void lt_store_i64(ltensor_dtype d, void *p, int64_t v);   /* uint64 gets the bits */
void lt_store_c128(ltensor_dtype d, void *p, lt_cdouble v);

/* Convert n elements from (src, src_stride bytes, sdt) to (dst, dst_stride bytes, ddt). */
typedef void (*lt_cast_fn)(const char *src, int64_t sstride, char *dst, int64_t dstride, int64_t n);
lt_cast_fn lt_cast_kernel(ltensor_dtype from, ltensor_dtype to);

#endif
