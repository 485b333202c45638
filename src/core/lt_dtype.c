/* lt_dtype.c -- dtype metadata, scalar loads/stores and the cast kernels of
   every dtype pair, all generated from LT_DTYPE_LIST. */
#include "lt_dtype.h"

#define INFO(E, name, ctype, kind, canon, sgn) \
  [LTENSOR_##E] = { #name, sizeof(ctype), kind, sgn },
const lt_dtype_info lt_dtypes[LTENSOR_NUM_DTYPES] = { LT_DTYPE_LIST(INFO) };
#undef INFO

/* the public enum and the list must agree: same count, and each name at
   the same position (LT_ORDER_<E> counts the list's entries before E) */
#define ORDER(E, name, ctype, kind, canon, sgn) LT_ORDER_##E,
enum { LT_DTYPE_LIST(ORDER) LT_ORDER_COUNT };
#undef ORDER
_Static_assert((int)LT_ORDER_COUNT == (int)LTENSOR_NUM_DTYPES, "dtype list and enum differ in length");
#define CHECK_ORDER(E, name, ctype, kind, canon, sgn) \
  _Static_assert((int)LT_ORDER_##E == (int)LTENSOR_##E, "dtype list order differs from ltensor_dtype at " #E);
LT_DTYPE_LIST(CHECK_ORDER)
#undef CHECK_ORDER

ltensor_dtype lt_to_complex(ltensor_dtype d) {
  switch (d) {
  case LTENSOR_FLOAT16: case LTENSOR_BFLOAT16: case LTENSOR_COMPLEX32: return LTENSOR_COMPLEX32;
  case LTENSOR_FLOAT64: case LTENSOR_COMPLEX128: return LTENSOR_COMPLEX128;
  default: return LTENSOR_COMPLEX64;
  }
}

ltensor_dtype lt_to_real(ltensor_dtype d) {
  switch (d) {
  case LTENSOR_COMPLEX32: return LTENSOR_FLOAT16;
  case LTENSOR_COMPLEX64: return LTENSOR_FLOAT32;
  case LTENSOR_COMPLEX128: return LTENSOR_FLOAT64;
  default: return d;
  }
}

size_t ltensor_itemsize(ltensor_dtype d) {
  return (unsigned)d < LTENSOR_NUM_DTYPES ? lt_dtypes[d].itemsize : 0;
}
const char *ltensor_dtype_name(ltensor_dtype d) {
  return (unsigned)d < LTENSOR_NUM_DTYPES ? lt_dtypes[d].name : NULL;
}

/* ---- per-dtype load into the canonical kind, store from each kind ------- */
/* LOAD_E(p): value of *p in E's canonical type */
#define LOAD_BOOL(p)       ((int64_t)(*(const uint8_t *)(p) != 0))
#define LOAD_UINT8(p)      ((int64_t)*(const uint8_t *)(p))
#define LOAD_UINT16(p)     ((int64_t)*(const uint16_t *)(p))
#define LOAD_UINT32(p)     ((int64_t)*(const uint32_t *)(p))
#define LOAD_UINT64(p)     (*(const uint64_t *)(p))
#define LOAD_INT8(p)       ((int64_t)*(const int8_t *)(p))
#define LOAD_INT16(p)      ((int64_t)*(const int16_t *)(p))
#define LOAD_INT32(p)      ((int64_t)*(const int32_t *)(p))
#define LOAD_INT64(p)      (*(const int64_t *)(p))
#define LOAD_FLOAT16(p)    ((double)lt_half_to_float(*(const lt_half *)(p)))
#define LOAD_BFLOAT16(p)   ((double)lt_bf16_to_float(*(const lt_bf16 *)(p)))
#define LOAD_FLOAT32(p)    ((double)*(const float *)(p))
#define LOAD_FLOAT64(p)    (*(const double *)(p))
#define LOAD_COMPLEX32(p)  ((lt_cdouble)lt_half_to_float(((const lt_chalf *)(p))->re) + \
                            (lt_cdouble)lt_half_to_float(((const lt_chalf *)(p))->im) * I)
#define LOAD_COMPLEX64(p)  ((lt_cdouble)*(const lt_cfloat *)(p))
#define LOAD_COMPLEX128(p) (*(const lt_cdouble *)(p))

/* canonical C types */
typedef int64_t canon_I64;
typedef uint64_t canon_U64;
typedef double canon_F64;
typedef lt_cdouble canon_C128;

/* STORE_<E>_<K>(p, v): store canonical value v of kind K into *p of dtype E */
#define INT_STORES(E, ct)                                                        \
  static inline void store_##E##_I64(void *p, int64_t v) { *(ct *)p = (ct)(uint64_t)v; } \
  static inline void store_##E##_U64(void *p, uint64_t v) { *(ct *)p = (ct)v; }   \
  static inline void store_##E##_F64(void *p, double v) { *(ct *)p = (ct)(uint64_t)lt_f64_to_i64(v); } \
  static inline void store_##E##_C128(void *p, lt_cdouble v) { store_##E##_F64(p, creal(v)); }
INT_STORES(UINT8, uint8_t)
INT_STORES(UINT16, uint16_t)
INT_STORES(UINT32, uint32_t)
INT_STORES(INT8, int8_t)
INT_STORES(INT16, int16_t)
INT_STORES(INT32, int32_t)
INT_STORES(INT64, int64_t)
static inline void store_UINT64_I64(void *p, int64_t v) { *(uint64_t *)p = (uint64_t)v; }
static inline void store_UINT64_U64(void *p, uint64_t v) { *(uint64_t *)p = v; }
static inline void store_UINT64_F64(void *p, double v) { *(uint64_t *)p = lt_f64_to_u64(v); }
static inline void store_UINT64_C128(void *p, lt_cdouble v) { store_UINT64_F64(p, creal(v)); }

static inline void store_BOOL_I64(void *p, int64_t v) { *(uint8_t *)p = v != 0; }
static inline void store_BOOL_U64(void *p, uint64_t v) { *(uint8_t *)p = v != 0; }
static inline void store_BOOL_F64(void *p, double v) { *(uint8_t *)p = v != 0; }
static inline void store_BOOL_C128(void *p, lt_cdouble v) { *(uint8_t *)p = creal(v) != 0 || cimag(v) != 0; }

#define REAL_STORES(E, ct, conv)                                                  \
  static inline void store_##E##_I64(void *p, int64_t v) { *(ct *)p = conv((float)v); } \
  static inline void store_##E##_U64(void *p, uint64_t v) { *(ct *)p = conv((float)v); } \
  static inline void store_##E##_F64(void *p, double v) { *(ct *)p = conv((float)v); }  \
  static inline void store_##E##_C128(void *p, lt_cdouble v) { *(ct *)p = conv((float)creal(v)); }
REAL_STORES(FLOAT16, lt_half, lt_float_to_half)
REAL_STORES(BFLOAT16, lt_bf16, lt_float_to_bf16)
#define ID(x) (x)
REAL_STORES(FLOAT32, float, ID)
static inline void store_FLOAT64_I64(void *p, int64_t v) { *(double *)p = (double)v; }
static inline void store_FLOAT64_U64(void *p, uint64_t v) { *(double *)p = (double)v; }
static inline void store_FLOAT64_F64(void *p, double v) { *(double *)p = v; }
static inline void store_FLOAT64_C128(void *p, lt_cdouble v) { *(double *)p = creal(v); }

static inline void store_COMPLEX32_C128(void *p, lt_cdouble v) {
  ((lt_chalf *)p)->re = lt_float_to_half((float)creal(v));
  ((lt_chalf *)p)->im = lt_float_to_half((float)cimag(v));
}
static inline void store_COMPLEX32_I64(void *p, int64_t v) { store_COMPLEX32_C128(p, (double)v); }
static inline void store_COMPLEX32_U64(void *p, uint64_t v) { store_COMPLEX32_C128(p, (double)v); }
static inline void store_COMPLEX32_F64(void *p, double v) { store_COMPLEX32_C128(p, v); }
#define CPLX_STORES(E, ct)                                                         \
  static inline void store_##E##_I64(void *p, int64_t v) { *(ct *)p = (ct)(double)v; }  \
  static inline void store_##E##_U64(void *p, uint64_t v) { *(ct *)p = (ct)(double)v; } \
  static inline void store_##E##_F64(void *p, double v) { *(ct *)p = (ct)v; }           \
  static inline void store_##E##_C128(void *p, lt_cdouble v) { *(ct *)p = (ct)v; }
CPLX_STORES(COMPLEX64, lt_cfloat)
CPLX_STORES(COMPLEX128, lt_cdouble)

/* ---- cast kernels for every pair --------------------------------------- */
/* cast_<FROM>_<TO>: the source's canonical value stored into the target.
   The preprocessor cannot nest one X-list inside another with the outer
   argument visible, so each source row lists the 16 targets explicitly. */
#define CAST_ONE(E2, E1, c1)                                                       \
  static void cast_##E1##_##E2(const char *s, int64_t ss, char *d, int64_t ds, int64_t n) { \
    for (int64_t i = 0; i < n; i++, s += ss, d += ds) store_##E2##_##c1(d, LOAD_##E1(s)); \
  }
#define ROW(E1, c1)                                                                 \
  CAST_ONE(BOOL, E1, c1) CAST_ONE(UINT8, E1, c1) CAST_ONE(UINT16, E1, c1)          \
  CAST_ONE(UINT32, E1, c1) CAST_ONE(UINT64, E1, c1) CAST_ONE(INT8, E1, c1)         \
  CAST_ONE(INT16, E1, c1) CAST_ONE(INT32, E1, c1) CAST_ONE(INT64, E1, c1)          \
  CAST_ONE(FLOAT16, E1, c1) CAST_ONE(BFLOAT16, E1, c1) CAST_ONE(FLOAT32, E1, c1)   \
  CAST_ONE(FLOAT64, E1, c1) CAST_ONE(COMPLEX32, E1, c1) CAST_ONE(COMPLEX64, E1, c1) \
  CAST_ONE(COMPLEX128, E1, c1)
#define EMIT_ROW(E, name, ctype, kind, canon, sgn) ROW(E, canon)
LT_DTYPE_LIST(EMIT_ROW)

#define TABLE_ENTRY(E1) \
  { cast_##E1##_BOOL, cast_##E1##_UINT8, cast_##E1##_UINT16, cast_##E1##_UINT32,      \
    cast_##E1##_UINT64, cast_##E1##_INT8, cast_##E1##_INT16, cast_##E1##_INT32,         \
    cast_##E1##_INT64, cast_##E1##_FLOAT16, cast_##E1##_BFLOAT16, cast_##E1##_FLOAT32,  \
    cast_##E1##_FLOAT64, cast_##E1##_COMPLEX32, cast_##E1##_COMPLEX64, cast_##E1##_COMPLEX128 },
#define EMIT_TABLE(E, name, ctype, kind, canon, sgn) TABLE_ENTRY(E)
static const lt_cast_fn cast_table[LTENSOR_NUM_DTYPES][LTENSOR_NUM_DTYPES] = {
  LT_DTYPE_LIST(EMIT_TABLE)
};

lt_cast_fn lt_cast_kernel(ltensor_dtype from, ltensor_dtype to) { return cast_table[from][to]; }

/* ---- scalar access through the cast kernels --------------------------- */
double lt_load_f64(ltensor_dtype d, const void *p) {
  double v; cast_table[d][LTENSOR_FLOAT64](p, 0, (char *)&v, 0, 1); return v;
}
int64_t lt_load_i64(ltensor_dtype d, const void *p) {
  int64_t v; cast_table[d][LTENSOR_INT64](p, 0, (char *)&v, 0, 1); return v;
}
lt_cdouble lt_load_c128(ltensor_dtype d, const void *p) {
  lt_cdouble v; cast_table[d][LTENSOR_COMPLEX128](p, 0, (char *)&v, 0, 1); return v;
}
void lt_store_f64(ltensor_dtype d, void *p, double v) {
  cast_table[LTENSOR_FLOAT64][d]((const char *)&v, 0, p, 0, 1);
}
void lt_store_i64(ltensor_dtype d, void *p, int64_t v) {
  cast_table[LTENSOR_INT64][d]((const char *)&v, 0, p, 0, 1);
}
void lt_store_c128(ltensor_dtype d, void *p, lt_cdouble v) {
  cast_table[LTENSOR_COMPLEX128][d]((const char *)&v, 0, p, 0, 1);
}
