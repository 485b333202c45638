/*
 * lt_promote.h -- dtype promotion (Lua-free): PyTorch's three tiers, JAX's
 * lattice with weak types, and a strict mode.  See lt_promote.c for the
 * rule tables.
 */
#ifndef LT_PROMOTE_H
#define LT_PROMOTE_H

#include "lt_dtype.h"

/* promotion modes: the values of ltl_settings.promotion (T.set_promotion) */
typedef enum lt_promo_mode { LT_PROMO_TORCH = 0, LT_PROMO_JAX = 1, LT_PROMO_STRICT = 2 } lt_promo_mode;

/* the three tiers of PyTorch's ResultTypeState */
enum { LT_TIER_DIM = 0, LT_TIER_ZERO = 1, LT_TIER_WEAK = 2 };

/* One operand of a promotion.  A weak (wrapped Lua) scalar carries its Lua
   kind: BOOL for a boolean, INT64 for an integer, FLOAT64 for a float,
   COMPLEX128 for a complex value. */
typedef struct lt_pin {
  ltensor_dtype dtype;
  int tier;
} lt_pin;

/* Why a strict-mode promotion was refused. */
enum { LT_PROMO_OK = 0, LT_PROMO_ERR_TENSORS = 1, LT_PROMO_ERR_SCALAR = 2 };
typedef struct lt_promo_err {
  ltensor_dtype a, b;   /* TENSORS: the two differing dtypes; SCALAR: tensor dtype, would-be result */
  ltensor_dtype scalar; /* SCALAR: the weak kind (BOOL/INT64/FLOAT64/COMPLEX128) */
} lt_promo_err;

/* promote_types(a, b) of mode (LT_PROMO_TORCH/JAX/STRICT; strict uses the
   torch table); deflt is the default float dtype (JAX's f* results). */
ltensor_dtype lt_promote_types(int mode, ltensor_dtype a, ltensor_dtype b, ltensor_dtype deflt);

/* result_type over n operands (n >= 1); returns LT_PROMO_OK or an error
   code with *err filled. */
int lt_result_type(int mode, const lt_pin *p, int n, ltensor_dtype deflt, ltensor_dtype *out,
                   lt_promo_err *err);

/* PyTorch's canCast: no complex -> real, float -> integral, non-bool -> bool. */
int lt_can_cast(ltensor_dtype from, ltensor_dtype to);

/* PyTorch's ScalarType names (Float, Long, ComplexFloat, ...) for messages. */
const char *lt_torch_name(ltensor_dtype d);
/* C++ type name of a TypeMeta: "float", "long int", "c10::Half" */
const char *lt_typemeta_name(ltensor_dtype d);

#endif
