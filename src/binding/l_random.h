/*
 * l_random.h -- what the random binding files (l_random.c, l_samplers.c)
 * share: finding the generator of a call and filling tensors from it.
 */
#ifndef L_RANDOM_H
#define L_RANDOM_H

#include "l_lua.h"
#include "lt_rng.h"

#define LT_GENERATOR_MT "ltensor.Generator"

/* The state's default generator (ltl_settings.rng, seeded lazily). */
uint64_t *ltl_rng_default(lua_State *L);
/* The generator of a call: opts[generator] if opts (a stack slot, 0 for
   none) is a table holding one, else the default.  Raises
   "ltensor.<fname>: generator must be a ltensor.Generator, got ..." for any
   other value.  The generator object stays reachable from the stack
   through the options table for the duration of the call. */
uint64_t *ltl_rng_opt(lua_State *L, int opts, const char *fname);
/* 1 if the value at idx is an options table (not a tensor, no array part,
   one of the keys dtype / requires_grad / generator / replacement set) */
int ltl_is_rng_opts(lua_State *L, int idx);

/* Raises unless dt is a floating point or complex dtype (what the
   continuous samplers and rand/randn produce). */
static inline void ltl_check_float_dtype(lua_State *L, const char *fname, ltensor_dtype dt) {
  if (!lt_is_floating(dt) && !lt_is_complex(dt))
    ltl_error(L, fname, "expected a floating point or complex dtype, but got %s", lt_dtypes[dt].name);
}

/* Fill every element of t (any layout: logical row-major order, so a
   transposed destination gets the values a contiguous one would) with
   samples of one kind.  Parameters were validated by the caller. */
enum {
  LT_SAMPLE_UNIFORM,      /* a + (b - a) * u, u with the dtype's mantissa bits */
  LT_SAMPLE_NORMAL,       /* a + b * z (complex: each part std b / sqrt 2) */
  LT_SAMPLE_EXPONENTIAL,  /* -log(1 - u) / a */
  LT_SAMPLE_GEOMETRIC,    /* ceil(log(1 - u) / log1p(-a)), at least 1 */
  LT_SAMPLE_LOG_NORMAL,   /* exp(a + b * z) */
  LT_SAMPLE_CAUCHY,       /* a + b * tan(pi (u - 1/2)) */
  LT_SAMPLE_BERNOULLI     /* u < a */
};
void ltl_sample_fill(lua_State *L, lt_tensor *t, int kind, double a, double b, uint64_t *s);
/* Integers uniform in [lo, lo + range) (range 0 means all 2^64 words) */
void ltl_sample_fill_int(lua_State *L, lt_tensor *t, int64_t lo, uint64_t range, uint64_t *s);

#endif
