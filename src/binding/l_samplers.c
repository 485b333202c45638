/* l_samplers.c -- filling tensors from a generator: the in-place samplers
 * (uniform_, normal_, exponential_, geometric_, log_normal_, cauchy_,
 * bernoulli_, random_), T.normal, T.bernoulli, T.poisson, T.multinomial and
 * the standard Gamma used by T.distributions (T._standard_gamma and its
 * implicit-reparameterisation gradient T._standard_gamma_grad).
 *
 * How values are made (lt_rng.h has the generator and scalar transforms):
 * every sampler draws in the row-major order of the destination's logical
 * indices, in blocks of doubles (or int64 for random_/randint) that one
 * typed loop per block stores into the destination dtype; a destination
 * that is not contiguous is filled through a contiguous temporary and
 * copied back, so its values are those a contiguous tensor would get.
 * Per-element parameters (probabilities, means, rates) are first
 * broadcast and converted to a contiguous float64 tensor by the core's
 * copy, so the sampling loops read one plain array.
 *
 *   uniform   u with the destination's mantissa bits (53 float64, 24
 *             float32, 11 float16, 8 bfloat16), exact and < 1; a+(b-a)u.
 *             Complex: real part then imaginary part.
 *   normal    Box-Muller pairs fill consecutive elements; complex parts
 *             get std / sqrt(2) each (PyTorch's convention).
 *   others    see the LT_SAMPLE_* list in l_random.h.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "l_random.h"
#include "lt_iter.h"

#define BLOCK 256

/* numbers in messages as PyTorch prints them (C++ ostream: 6 significant
   digits, no trailing ".0") */
static const char *numstr(char *buf, double v) {
  snprintf(buf, 32, "%g", v);
  return buf;
}
#define NUM(v) numstr((char[32]){ 0 }, (v))

static int mantissa_bits(ltensor_dtype dt) {
  switch (dt) {
  case LTENSOR_FLOAT64: case LTENSOR_COMPLEX128: return 53;
  case LTENSOR_FLOAT16: case LTENSOR_COMPLEX32: return 11;
  case LTENSOR_BFLOAT16: return 8;
  default: return 24;
  }
}

/* v holds m values (2 per element for complex dtypes) */
static void store_block(ltensor_dtype dt, char *p, const double *v, int64_t m) {
  size_t sz = lt_itemsize(dt);
  switch (dt) {
  case LTENSOR_FLOAT64: memcpy(p, v, (size_t)m * sizeof(double)); break;
  case LTENSOR_FLOAT32: {
    float *o = (float *)(void *)p;
    for (int64_t i = 0; i < m; i++) o[i] = (float)v[i];
    break;
  }
  default:
    if (lt_is_complex(dt)) {
      for (int64_t i = 0; i < m / 2; i++) lt_store_c128(dt, p + (size_t)i * sz, CMPLX(v[2 * i], v[2 * i + 1]));
    } else {
      for (int64_t i = 0; i < m; i++) lt_store_f64(dt, p + (size_t)i * sz, v[i]);
    }
  }
}

static void gen_block(int kind, lt_gauss *g, int bits, double a, double b, double *v, int64_t m) {
  uint64_t *s = g->s;
  switch (kind) {
  case LT_SAMPLE_UNIFORM:
    for (int64_t i = 0; i < m; i++) v[i] = a + (b - a) * lt_rng_unit(s, bits);
    break;
  case LT_SAMPLE_NORMAL:
    for (int64_t i = 0; i < m; i++) v[i] = a + b * lt_rng_gauss(g);
    break;
  case LT_SAMPLE_EXPONENTIAL:
    for (int64_t i = 0; i < m; i++) v[i] = a > 0.0 ? -log1p(-lt_rng_unit(s, 53)) / a : INFINITY;
    break;
  case LT_SAMPLE_GEOMETRIC: {
    const double l = log1p(-a);
    for (int64_t i = 0; i < m; i++) {
      double k = ceil(log1p(-lt_rng_unit(s, 53)) / l);
      v[i] = k < 1.0 ? 1.0 : k;   /* u = 0 (and p = 1) give the minimum, one trial */
    }
    break;
  }
  case LT_SAMPLE_LOG_NORMAL:
    for (int64_t i = 0; i < m; i++) v[i] = exp(a + b * lt_rng_gauss(g));
    break;
  case LT_SAMPLE_CAUCHY:
    for (int64_t i = 0; i < m; i++) v[i] = a + b * tan(3.141592653589793 * (lt_rng_unit(s, 53) - 0.5));
    break;
  case LT_SAMPLE_BERNOULLI:
    for (int64_t i = 0; i < m; i++) v[i] = lt_rng_unit(s, 53) < a;
    break;
  }
}

/* The contiguous tensor to write into: t itself, or a temporary pushed on
   the stack (then *tmp is 1 and the caller copies back and pops it). */
static lt_tensor *dest_of(lua_State *L, lt_tensor *t, int *tmp) {
  *tmp = !lt_is_contiguous(t);
  return *tmp ? ltl_push_new(L, t->dtype, t->ndim, t->shape) : t;
}
static void dest_done(lua_State *L, lt_tensor *t, lt_tensor *d, int tmp) {
  if (!tmp) return;
  lt_copy_into(t, d);
  lua_pop(L, 1);
}

void ltl_sample_fill(lua_State *L, lt_tensor *t, int kind, double a, double b, uint64_t *s) {
  int tmp;
  lt_tensor *d = dest_of(L, t, &tmp);
  ltensor_dtype dt = t->dtype;
  int per = lt_is_complex(dt) ? 2 : 1, bits = mantissa_bits(dt);
  if (per == 2 && kind == LT_SAMPLE_NORMAL) b /= sqrt(2.0);
  int64_t n = lt_numel(t);
  size_t sz = lt_itemsize(t->dtype);
  char *p = lt_data(d);
  double v[BLOCK];
  int single = dt == LTENSOR_FLOAT32 || dt == LTENSOR_FLOAT16 || dt == LTENSOR_BFLOAT16;
  if (single && (kind == LT_SAMPLE_NORMAL || (kind == LT_SAMPLE_EXPONENTIAL && a > 0.0))) {
    /* single-precision destinations: vectorisable float transforms of
       24-bit uniforms (normal: a + b z; exponential: e / a) */
    float z[LT_RNG_NBLOCK];
    double shift = kind == LT_SAMPLE_NORMAL ? a : 0.0, scale = kind == LT_SAMPLE_NORMAL ? b : 1.0 / a;
    for (int64_t off = 0; off < n; off += LT_RNG_NBLOCK) {
      int64_t m = n - off < LT_RNG_NBLOCK ? n - off : LT_RNG_NBLOCK;
      if (kind == LT_SAMPLE_NORMAL) lt_rng_normal_block_f32(s, z);
      else lt_rng_exponential_block_f32(s, z);
      if (dt == LTENSOR_FLOAT32) {
        float *o = (float *)(void *)p + off, fa = (float)shift, fb = (float)scale;
        for (int64_t i = 0; i < m; i++) o[i] = fa + fb * z[i];
      } else {
        for (int64_t i = 0; i < m; i++) v[i] = shift + scale * (double)z[i];
        store_block(dt, p + (size_t)off * sz, v, m);
      }
    }
    dest_done(L, t, d, tmp);
    return;
  }
  if (kind == LT_SAMPLE_BERNOULLI && dt == LTENSOR_FLOAT32) {
    /* a dropout mask's case: two 24-bit uniforms per word compared as
       integers with ceil(p 2^24) (u = k 2^-24 < p exactly when k is below
       it), 1 or 0 stored as floats -- one word per value through double
       and int64 (lt_store_i64's cast) was most of a mask's time */
    const int32_t thr = (int32_t)ceil(a * 16777216.0);
    float *o = (float *)(void *)p;
    int32_t k[LT_RNG_NBLOCK];
    for (int64_t off = 0; off < n; off += LT_RNG_NBLOCK) {
      int64_t m = n - off < LT_RNG_NBLOCK ? n - off : LT_RNG_NBLOCK;
      for (int64_t i = 0; i < (m + 1) / 2; i++) {   /* the words, then a compare loop that vectorises */
        uint64_t w = lt_rng_next(s);
        k[2 * i] = (int32_t)(w >> 40);
        k[2 * i + 1] = (int32_t)((w >> 16) & 0xffffffu);
      }
      float *restrict q = o + off;
      for (int64_t i = 0; i < m; i++) q[i] = k[i] < thr ? 1.0f : 0.0f;
    }
    dest_done(L, t, d, tmp);
    return;
  }
  lt_gauss g = lt_gauss_of(s);
  for (int64_t off = 0; off < n; off += BLOCK / 2) {
    int64_t m = n - off < BLOCK / 2 ? n - off : BLOCK / 2;
    gen_block(kind, &g, bits, a, b, v, m * per);
    if (kind == LT_SAMPLE_BERNOULLI) {
      for (int64_t i = 0; i < m; i++) lt_store_i64(t->dtype, p + (size_t)(off + i) * sz, (int64_t)v[i]);
    } else {
      store_block(t->dtype, p + (size_t)off * sz, v, m * per);
    }
  }
  dest_done(L, t, d, tmp);
}

void ltl_sample_fill_int(lua_State *L, lt_tensor *t, int64_t lo, uint64_t range, uint64_t *s) {
  int tmp;
  lt_tensor *d = dest_of(L, t, &tmp);
  ltensor_dtype dt = t->dtype;
  int64_t n = lt_numel(t);
  size_t sz = lt_itemsize(dt);
  char *p = lt_data(d);
  if (dt == LTENSOR_INT64) {
    int64_t *o = (int64_t *)(void *)p;
    for (int64_t i = 0; i < n; i++)
      o[i] = (int64_t)((uint64_t)lo + (range ? lt_rng_below(s, range) : lt_rng_next(s)));
  } else {
    int fl = !lt_is_integral(dt);
    for (int64_t i = 0; i < n; i++) {
      int64_t x = (int64_t)((uint64_t)lo + (range ? lt_rng_below(s, range) : lt_rng_next(s)));
      if (fl) lt_store_f64(dt, p + (size_t)i * sz, (double)x);
      else lt_store_i64(dt, p + (size_t)i * sz, x);
    }
  }
  dest_done(L, t, d, tmp);
}

/* ====================================================================== */
/* argument helpers                                                       */
/* ====================================================================== */
/* slot of a trailing options table after the tensor at 1 (0 if none) */
static int trailing_opts(lua_State *L, int first) {
  int top = lua_gettop(L);
  if (top >= first && lua_type(L, top) == LUA_TTABLE && !ltl_test(L, top)) return top;
  return 0;
}
/* the options the samplers read (unknown keys raise, with a suggestion) */
static const char *const GEN_OPTS[] = {"generator", NULL};
static const char *const NORMAL_OPTS[] = {"generator", "dtype", "requires_grad", NULL};
static const char *const MULTINOMIAL_OPTS[] = {"replacement", "generator", NULL};
static double num_arg(lua_State *L, int idx, int opts, double def) {
  if ((opts && idx >= opts) || lua_isnoneornil(L, idx)) return def;
  return ltl_checknumber(L, idx);
}
static void check_real_float(lua_State *L, const char *fname, ltensor_dtype dt) {
  if (!lt_is_floating(dt))
    ltl_error(L, fname, "expected a floating point dtype, but got %s", lt_dtypes[dt].name);
}
/* an in-place write must not go through an expanded (overlapping) view */
static void check_writable(lua_State *L, const char *fname, lt_tensor *t) {
  if (lt_has_internal_overlap(t))
    ltl_error(L, fname, "unsupported operation: more than one element of the written-to tensor refers to a "
             "single memory location. Please clone() the tensor before performing the operation.");
}
static int done_inplace(lua_State *L, lt_tensor *t) {
  lt_bump_version(t);
  lua_settop(L, 1);
  return 1;
}
/* An in-place sampler's frame: sampler_begin takes self (at 1) and a
   trailing options table (*opts, 0 if none; it may name a generator);
   sampler_fill, once the parameters are checked, fills self by kind from
   that generator or the state's. */
static lt_tensor *sampler_begin(lua_State *L, const char *fname, int *opts) {
  lt_tensor *t = ltl_check(L, 1);
  *opts = trailing_opts(L, 2);
  if (*opts) ltl_check_opts(L, *opts, fname, GEN_OPTS);
  return t;
}
static int sampler_fill(lua_State *L, const char *fname, lt_tensor *t, int opts, int kind, double a, double b) {
  check_writable(L, fname, t);
  uint64_t *s = ltl_rng_opt(L, opts, fname);
  ltl_sample_fill(L, t, kind, a, b, s);
  return done_inplace(L, t);
}

/* A contiguous float64 copy of the tensor at idx broadcast to shape
   (pushed on the stack). */
static const double *as_f64(lua_State *L, const lt_tensor *src, int nd, const int64_t *shape) {
  lt_tensor *c = ltl_push_new(L, LTENSOR_FLOAT64, nd, shape);
  lt_copy_into(c, src);
  return (const double *)(const void *)lt_data(c);
}

/* ====================================================================== */
/* in-place samplers                                                      */
/* ====================================================================== */
static int l_uniform_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "uniform_", &opts);
  double a = num_arg(L, 2, opts, 0.0), b = num_arg(L, 3, opts, 1.0);
  ltl_check_float_dtype(L, "uniform_", t->dtype);
  if (!(a <= b))
    return ltl_error(L, "uniform_", "uniform_ expects to return a [from, to) range, but found from=%s > to=%s", NUM(a), NUM(b));
  if (!isfinite(a)) return ltl_error(L, "uniform_", "from is out of bounds for %s", lt_dtypes[t->dtype].name);
  if (!isfinite(b)) return ltl_error(L, "uniform_", "to is out of bounds for %s", lt_dtypes[t->dtype].name);
  double dmax = t->dtype == LTENSOR_FLOAT16 || t->dtype == LTENSOR_COMPLEX32 ? 65504.0
               : t->dtype == LTENSOR_FLOAT64 || t->dtype == LTENSOR_COMPLEX128 ? DBL_MAX
               : t->dtype == LTENSOR_BFLOAT16 ? 3.3895313892515355e38 : FLT_MAX;
  if (!(b - a <= dmax))
    return ltl_error(L, "uniform_", "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found "
                    "to=%s and from=%s which result in to-from to exceed the limit", lt_dtypes[t->dtype].name, NUM(b), NUM(a));
  return sampler_fill(L, "uniform_", t, opts, LT_SAMPLE_UNIFORM, a, b);
}

static int l_normal_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "normal_", &opts);
  double mean = num_arg(L, 2, opts, 0.0), sd = num_arg(L, 3, opts, 1.0);
  ltl_check_float_dtype(L, "normal_", t->dtype);
  if (!(sd >= 0.0)) return ltl_error(L, "normal_", "normal expects std >= 0.0, but found std %s", NUM(sd));
  return sampler_fill(L, "normal_", t, opts, LT_SAMPLE_NORMAL, mean, sd);
}

static int l_exponential_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "exponential_", &opts);
  double lambd = num_arg(L, 2, opts, 1.0);
  check_real_float(L, "exponential_", t->dtype);
  if (!(lambd >= 0.0))   /* lambda 0 gives inf, as PyTorch */
    return ltl_error(L, "exponential_", "exponential_ expects lambda >= 0.0, but found lambda=%s", NUM(lambd));
  return sampler_fill(L, "exponential_", t, opts, LT_SAMPLE_EXPONENTIAL, lambd, 0.0);
}

static int l_geometric_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "geometric_", &opts);
  if (lua_isnoneornil(L, 2) || opts == 2) return ltl_argerror(L, 2, "number expected (the probability p)");
  double p = num_arg(L, 2, opts, 0.5);
  if (t->dtype == LTENSOR_BOOL || lt_is_complex(t->dtype))
    return ltl_error(L, "geometric_", "not implemented for %s", lt_dtypes[t->dtype].name);
  if (!(p > 0.0 && p < 1.0))
    return ltl_error(L, "geometric_", "geometric_ expects p to be in (0, 1), but got p=%s", NUM(p));
  return sampler_fill(L, "geometric_", t, opts, LT_SAMPLE_GEOMETRIC, p, 0.0);
}

static int l_log_normal_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "log_normal_", &opts);
  double mean = num_arg(L, 2, opts, 1.0), sd = num_arg(L, 3, opts, 2.0);
  check_real_float(L, "log_normal_", t->dtype);
  if (!(sd > 0.0)) return ltl_error(L, "log_normal_", "log_normal_ expects std > 0.0, but found std=%s", NUM(sd));
  return sampler_fill(L, "log_normal_", t, opts, LT_SAMPLE_LOG_NORMAL, mean, sd);
}

static int l_cauchy_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "cauchy_", &opts);
  double median = num_arg(L, 2, opts, 0.0), sigma = num_arg(L, 3, opts, 1.0);
  check_real_float(L, "cauchy_", t->dtype);
  return sampler_fill(L, "cauchy_", t, opts, LT_SAMPLE_CAUCHY, median, sigma);
}

/* Largest value random_ draws by default: the dtype's maximum for integers,
   2^mantissa digits for floating types (every integer up to it is exact). */
static int64_t dtype_top(ltensor_dtype dt) {
  switch (dt) {
  case LTENSOR_BOOL: return 1;
  case LTENSOR_UINT8: return UINT8_MAX;
  case LTENSOR_UINT16: return UINT16_MAX;
  case LTENSOR_UINT32: return UINT32_MAX;
  case LTENSOR_INT8: return INT8_MAX;
  case LTENSOR_INT16: return INT16_MAX;
  case LTENSOR_INT32: return INT32_MAX;
  case LTENSOR_FLOAT16: return INT64_C(1) << 11;
  case LTENSOR_BFLOAT16: return INT64_C(1) << 8;
  case LTENSOR_FLOAT32: return INT64_C(1) << 24;
  case LTENSOR_FLOAT64: return INT64_C(1) << 53;
  default: return INT64_MAX;   /* int64, uint64 */
  }
}
static int64_t dtype_bottom(ltensor_dtype dt) {
  switch (dt) {
  case LTENSOR_INT8: return INT8_MIN;
  case LTENSOR_INT16: return INT16_MIN;
  case LTENSOR_INT32: return INT32_MIN;
  case LTENSOR_INT64: return INT64_MIN;
  case LTENSOR_FLOAT16: return -(INT64_C(1) << 11);
  case LTENSOR_BFLOAT16: return -(INT64_C(1) << 8);
  case LTENSOR_FLOAT32: return -(INT64_C(1) << 24);
  case LTENSOR_FLOAT64: return -(INT64_C(1) << 53);
  default: return 0;
  }
}

/* t:random_() -> [0, top]; t:random_(to) -> [0, to); t:random_(from, to)
   -> [from, to), to = nil meaning up to the dtype's top (inclusive). */
static int l_random_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "random_", &opts);
  int nargs = (opts ? opts : lua_gettop(L) + 1) - 2;
  ltensor_dtype dt = t->dtype;
  if (lt_is_complex(dt)) return ltl_error(L, "random_", "not implemented for %s", lt_dtypes[dt].name);
  int64_t from = 0, top = dtype_top(dt);
  int has_to = 0;
  lua_Integer to = 0;
  if (nargs >= 2) {
    from = ltl_checkinteger(L, 2);
    if (!lua_isnil(L, 3)) { to = ltl_checkinteger(L, 3); has_to = 1; }
  } else if (nargs == 1) {
    to = ltl_checkinteger(L, 2);
    has_to = 1;
  }
  uint64_t range;
  if (has_to) {
    if (from >= to)
      return ltl_error(L, "random_", "random_ expects 'from' to be less than 'to', but got from=%I >= to=%I",
                      (lua_Integer)from, to);
    /* integers must fit the dtype; floating types only lose exactness
       past 2^digits (PyTorch warns there) */
    if (lt_is_integral(dt) && (from < dtype_bottom(dt) || from > top))
      return ltl_error(L, "random_", "from is out of bounds for %s", lt_dtypes[dt].name);
    if (lt_is_integral(dt) && (to - 1 < dtype_bottom(dt) || to - 1 > top))
      return ltl_error(L, "random_", "to - 1 is out of bounds for %s", lt_dtypes[dt].name);
    range = (uint64_t)to - (uint64_t)from;
  } else {
    if (from < dtype_bottom(dt) || from > top)
      return ltl_error(L, "random_", "from is out of bounds for %s", lt_dtypes[dt].name);
    range = (uint64_t)top - (uint64_t)from + 1;   /* 0 = all 2^64 words (from = INT64_MIN, int64) */
  }
  check_writable(L, "random_", t);
  uint64_t *s = ltl_rng_opt(L, opts, "random_");
  ltl_sample_fill_int(L, t, from, range, s);
  return done_inplace(L, t);
}

/* t:bernoulli_(p) with p a number or a tensor broadcastable to t */
static int l_bernoulli_(lua_State *L) {
  int opts;
  lt_tensor *t = sampler_begin(L, "bernoulli_", &opts);
  if (lt_is_complex(t->dtype)) return ltl_error(L, "bernoulli_", "not implemented for %s", lt_dtypes[t->dtype].name);
  lt_tensor *pt = opts == 2 ? NULL : ltl_test(L, 2);
  if (pt) pt = ltl_check(L, 2);   /* refuses a freed tensor */
  if (!pt) {
    double p = num_arg(L, 2, opts, 0.5);
    if (!(p >= 0.0 && p <= 1.0))
      return ltl_error(L, "bernoulli_", "bernoulli_ expects p to be in [0, 1], but got p=%s", NUM(p));
    return sampler_fill(L, "bernoulli_", t, opts, LT_SAMPLE_BERNOULLI, p, 0.0);
  }
  if (!lt_is_floating(pt->dtype))
    return ltl_error(L, "bernoulli_", "expected probabilities of a floating point dtype, got %s",
                    lt_dtypes[pt->dtype].name);
  const lt_tensor *ops[2] = { t, pt };
  int nd; int64_t shape[LT_MAX_DIMS], ba, bb; int bd;
  if (lt_broadcast_shape(ops, 2, &nd, shape, &ba, &bb, &bd) != 0 || nd != t->ndim ||
      memcmp(shape, t->shape, (size_t)nd * sizeof(int64_t)) != 0)
  {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < pt->ndim; i++) {
      lua_pushfstring(L, i ? ", %I" : "%I", (lua_Integer)pt->shape[i]);
      luaL_addvalue(&b);
    }
    luaL_addstring(&b, "} to the tensor's shape {");
    for (int i = 0; i < t->ndim; i++) {
      lua_pushfstring(L, i ? ", %I" : "%I", (lua_Integer)t->shape[i]);
      luaL_addvalue(&b);
    }
    luaL_addstring(&b, "}");
    luaL_pushresult(&b);
    return ltl_error(L, "bernoulli_", "cannot expand the probabilities of shape {%s", lua_tostring(L, -1));
  }
  check_writable(L, "bernoulli_", t);
  uint64_t *s = ltl_rng_opt(L, opts, "bernoulli_");
  const double *p = as_f64(L, pt, t->ndim, t->shape);
  int64_t n = lt_numel(t);
  for (int64_t i = 0; i < n; i++)
    if (!(p[i] >= 0.0 && p[i] <= 1.0))
      return ltl_error(L, "bernoulli_", "expected all elements of p to be in [0, 1], but got %s", NUM(p[i]));
  int tmp;
  lt_tensor *d = dest_of(L, t, &tmp);
  size_t sz = lt_itemsize(t->dtype);
  char *o = lt_data(d);
  for (int64_t i = 0; i < n; i++) lt_store_i64(t->dtype, o + (size_t)i * sz, lt_rng_unit(s, 53) < p[i]);
  dest_done(L, t, d, tmp);
  return done_inplace(L, t);
}

/* T.bernoulli(probs [, p] [, opts]): 0/1 samples shaped and typed like
   probs, with probability probs[i] (or the number p for every element). */
static int l_bernoulli(lua_State *L) {
  lt_tensor *src = ltl_check(L, 1);
  int opts = trailing_opts(L, 2);
  if (opts) ltl_check_opts(L, opts, "bernoulli", GEN_OPTS);
  check_real_float(L, "bernoulli", src->dtype);
  int has_p = !lua_isnoneornil(L, 2) && opts != 2;
  double p = has_p ? ltl_checknumber(L, 2) : 0.0;
  if (has_p && !(p >= 0.0 && p <= 1.0))
    return ltl_error(L, "bernoulli", "bernoulli_ expects p to be in [0, 1], but got p=%s", NUM(p));
  uint64_t *s = ltl_rng_opt(L, opts, "bernoulli");
  int64_t n = lt_numel(src);
  const double *pr = has_p ? NULL : as_f64(L, src, src->ndim, src->shape);
  if (pr)
    for (int64_t i = 0; i < n; i++)
      if (!(pr[i] >= 0.0 && pr[i] <= 1.0))
        return ltl_error(L, "bernoulli", "expected all elements of probs to be in [0, 1], but got %s", NUM(pr[i]));
  lt_tensor *out = ltl_push_new_like(L, src, src->dtype);
  if (has_p) {
    ltl_sample_fill(L, out, LT_SAMPLE_BERNOULLI, p, 0.0, s);
    return 1;
  }
  size_t sz = lt_itemsize(out->dtype);
  char *o = lt_data(out);
  for (int64_t i = 0; i < n; i++) lt_store_i64(out->dtype, o + (size_t)i * sz, lt_rng_unit(s, 53) < pr[i]);
  return 1;
}

/* ====================================================================== */
/* T.normal, T.poisson, T._standard_gamma                                 */
/* ====================================================================== */
/* T.normal(mean, std [, size] [, opts]): mean and std numbers or tensors
   (broadcast together); with two numbers, size is required. */
static int l_normal(lua_State *L) {
  lt_tensor *mt = ltl_test(L, 1), *st = ltl_test(L, 2);
  if (mt) mt = ltl_check(L, 1);   /* refuses a freed tensor */
  if (st) st = ltl_check(L, 2);
  int opts = trailing_opts(L, 3);
  if (opts == 3 && !ltl_is_rng_opts(L, 3)) opts = 0;   /* a table of sizes */
  if (opts) ltl_check_opts(L, opts, "normal", NORMAL_OPTS);
  if (!mt) ltl_checknumber(L, 1);
  if (!st) ltl_checknumber(L, 2);
  if (!mt && !st) {
    if (lua_isnoneornil(L, 3) || opts == 3)
      return ltl_error(L, "normal", "with a number mean and std, a size is required: normal(mean, std, size)");
    double mean = lua_tonumber(L, 1), sd = lua_tonumber(L, 2);
    if (!(sd >= 0.0)) return ltl_error(L, "normal", "normal expects std >= 0.0, but found std %s", NUM(sd));
    int64_t shape[LT_MAX_DIMS];
    int nd = ltl_checksize(L, 3, 3, shape, "normal");
    ltensor_dtype dt = opts ? ltl_opt_dtype(L, opts, ltl_settings_of(L)->default_dtype) : ltl_settings_of(L)->default_dtype;
    ltl_check_float_dtype(L, "normal", dt);
    uint64_t *s = ltl_rng_opt(L, opts, "normal");
    lt_tensor *t = ltl_push_new(L, dt, nd, shape);
    ltl_sample_fill(L, t, LT_SAMPLE_NORMAL, mean, sd, s);
    if (opts && ltl_opt_bool(L, opts, "requires_grad", 0)) ltl_set_requires_grad(L, t, true);
    return 1;
  }
  if (!lua_isnoneornil(L, 3) && opts != 3)
    return ltl_error(L, "normal", "a size is only accepted with a number mean and std");
  if ((mt && !lt_is_floating(mt->dtype)) || (st && !lt_is_floating(st->dtype)))
    return ltl_error(L, "normal", "expected mean and std of a floating point dtype, got %s",
                    lt_dtypes[(mt && !lt_is_floating(mt->dtype) ? mt : st)->dtype].name);
  const lt_tensor *ops[2];
  int nops = 0;
  if (mt) ops[nops++] = mt;
  if (st) ops[nops++] = st;
  int nd; int64_t shape[LT_MAX_DIMS], ba, bb; int bd;
  if (lt_broadcast_shape(ops, nops, &nd, shape, &ba, &bb, &bd) != 0)
    return ltl_error(L, "normal", "The size of tensor a (%I) must match the size of tensor b (%I) at "
                    "non-singleton dimension %d", (lua_Integer)ba, (lua_Integer)bb, bd);
  ltensor_dtype dt = mt && st ? (lt_itemsize(mt->dtype) >= lt_itemsize(st->dtype) ? mt->dtype : st->dtype)
                              : (mt ? mt : st)->dtype;
  double mean = mt ? 0.0 : lua_tonumber(L, 1), sd = st ? 1.0 : lua_tonumber(L, 2);
  if (!st && !(sd >= 0.0)) return ltl_error(L, "normal", "normal expects std >= 0.0, but found std %s", NUM(sd));
  uint64_t *s = ltl_rng_opt(L, opts, "normal");
  const double *mv = mt ? as_f64(L, mt, nd, shape) : NULL;
  const double *sv = st ? as_f64(L, st, nd, shape) : NULL;
  lt_tensor probe = { 0 };
  probe.ndim = nd;
  memcpy(probe.shape, shape, sizeof(int64_t) * (size_t)nd);
  int64_t n = lt_numel(&probe);
  if (sv)
    for (int64_t i = 0; i < n; i++)
      if (!(sv[i] >= 0.0))
        return ltl_error(L, "normal", "normal expects all elements of std >= 0.0");
  lt_tensor *buf = ltl_push_new(L, LTENSOR_FLOAT64, nd, shape);
  double *v = (double *)(void *)lt_data(buf);
  lt_gauss g = lt_gauss_of(s);
  for (int64_t i = 0; i < n; i++) v[i] = (mv ? mv[i] : mean) + (sv ? sv[i] : sd) * lt_rng_gauss(&g);
  lt_tensor *out = ltl_push_new(L, dt, nd, shape);
  lt_copy_into(out, buf);
  return 1;
}

/* T.poisson(rates [, opts]): counts with the given rates; and
   T._standard_gamma(alpha [, opts]): Gamma(alpha, 1) samples, never below
   the dtype's smallest normal number (PyTorch's clamp: a zero sample would
   make log_prob and the reparameterised gradient infinite).  One draw per
   element of the parameter tensor, as its dtype. */
static int param_draws(lua_State *L, const char *fname, int gamma) {
  int opts;
  lt_tensor *a = sampler_begin(L, fname, &opts);
  check_real_float(L, fname, a->dtype);
  uint64_t *s = ltl_rng_opt(L, opts, fname);
  const double *av = as_f64(L, a, a->ndim, a->shape);
  int64_t n = lt_numel(a);
  for (int64_t i = 0; i < n; i++) {
    if (gamma && !(av[i] >= 0.0))
      return ltl_error(L, fname, "expected concentration > 0, got %s", NUM(av[i]));
    if (!gamma && (!(av[i] >= 0.0) || isinf(av[i])))
      return ltl_error(L, fname, "invalid Poisson rate, expected rate to be non-negative%s, got %s",
                      isinf(av[i]) ? " and finite" : "", NUM(av[i]));
  }
  double tiny = a->dtype == LTENSOR_FLOAT64 ? DBL_MIN : a->dtype == LTENSOR_FLOAT16 ? 6.103515625e-05 : FLT_MIN;
  lt_tensor *buf = ltl_push_new(L, LTENSOR_FLOAT64, a->ndim, a->shape);
  double *v = (double *)(void *)lt_data(buf);
  lt_gauss g = lt_gauss_of(s);
  for (int64_t i = 0; i < n; i++) {
    if (gamma) {
      double x = lt_rng_gamma(&g, av[i]);
      v[i] = x < tiny ? tiny : x;
    } else {
      v[i] = lt_rng_poisson(&g, av[i]);
    }
  }
  lt_tensor *out = ltl_push_new_like(L, a, a->dtype);
  lt_copy_into(out, buf);
  return 1;
}
static int l_poisson(lua_State *L) { return param_draws(L, "poisson", 0); }
static int l_standard_gamma(lua_State *L) { return param_draws(L, "_standard_gamma", 1); }

/* T._standard_gamma_grad(alpha, x): d x / d alpha for standard Gamma
   samples x (same shape as alpha, or broadcastable) */
static int l_standard_gamma_grad(lua_State *L) {
  lt_tensor *a = ltl_check(L, 1), *x = ltl_check(L, 2);
  check_real_float(L, "_standard_gamma_grad", a->dtype);
  const lt_tensor *ops[2] = { a, x };
  int nd; int64_t shape[LT_MAX_DIMS], ba, bb; int bd;
  if (lt_broadcast_shape(ops, 2, &nd, shape, &ba, &bb, &bd) != 0)
    return ltl_error(L, "_standard_gamma_grad", "The size of tensor a (%I) must match the size of tensor b (%I) "
                    "at non-singleton dimension %d", (lua_Integer)ba, (lua_Integer)bb, bd);
  const double *av = as_f64(L, a, nd, shape), *xv = as_f64(L, x, nd, shape);
  lt_tensor *buf = ltl_push_new(L, LTENSOR_FLOAT64, nd, shape);
  double *v = (double *)(void *)lt_data(buf);
  int64_t n = lt_numel(buf);
  for (int64_t i = 0; i < n; i++) v[i] = lt_gamma_grad_alpha(av[i], xv[i]);
  lt_tensor *out = ltl_push_new(L, a->dtype, nd, shape);
  lt_copy_into(out, buf);
  return 1;
}

/* ====================================================================== */
/* multinomial                                                            */
/* ====================================================================== */
/* T.multinomial(probs, num_samples [, replacement] [, {replacement=, generator=}]):
   int64 category indices (1-based) drawn with the given non-negative
   weights, per row of a 2-D probs.  Each draw takes one 53-bit uniform u
   and picks the first category whose running sum exceeds u * total. */
static int64_t pick(const double *w, int64_t n, double total, double u) {
  double target = u * total, acc = 0.0;
  int64_t last = -1;
  for (int64_t i = 0; i < n; i++) {
    if (w[i] <= 0.0) continue;
    acc += w[i];
    last = i;
    if (acc > target) return i;
  }
  return last;   /* rounding left target at the very top */
}

static int l_multinomial(lua_State *L) {
  lt_tensor *p = ltl_check(L, 1);
  lua_Integer ns = ltl_checkinteger(L, 2);
  int opts = trailing_opts(L, 3);
  if (opts) ltl_check_opts(L, opts, "multinomial", MULTINOMIAL_OPTS);
  int repl = opts == 3 ? 0 : lua_toboolean(L, 3);
  if (opts) repl = ltl_opt_bool(L, opts, "replacement", repl);
  if (p->ndim < 1 || p->ndim > 2) return ltl_error(L, "multinomial", "prob_dist must be 1 or 2 dim");
  if (!lt_is_floating(p->dtype))
    return ltl_error(L, "multinomial", "multinomial only supports floating-point dtypes for input, got: %s",
                    lt_dtypes[p->dtype].name);
  if (ns <= 0) return ltl_error(L, "multinomial", "cannot sample n_sample <= 0 samples");
  int64_t rows = p->ndim == 2 ? p->shape[0] : 1, n = p->shape[p->ndim - 1];
  if (!repl && ns > n)
    return ltl_error(L, "multinomial", "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  if (n == 0) return ltl_error(L, "multinomial", "number of categories cannot be zero");
  if (n > (INT64_C(1) << 24)) return ltl_error(L, "multinomial", "number of categories cannot exceed 2^24");
  uint64_t *s = ltl_rng_opt(L, opts, "multinomial");
  int64_t pshape[2] = { rows, n };
  const double *pv = as_f64(L, p, p->ndim, p->ndim == 2 ? pshape : &pshape[1]);
  int64_t oshape[2] = { rows, ns };
  lt_tensor *out = p->ndim == 2 ? ltl_push_new(L, LTENSOR_INT64, 2, oshape)
                                : ltl_push_new(L, LTENSOR_INT64, 1, &oshape[1]);
  lt_tensor *scratch = ltl_push_new(L, LTENSOR_FLOAT64, 1, &n);   /* GC-owned work row */
  double *w = (double *)(void *)lt_data(scratch);
  int64_t *o = (int64_t *)(void *)lt_data(out);
  for (int64_t r = 0; r < rows; r++) {
    double total = 0.0;
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n; i++) {
      w[i] = pv[r * n + i];
      if (!isfinite(w[i]) || w[i] < 0.0)
        return ltl_error(L, "multinomial", "probability tensor contains either `inf`, `nan` or element < 0");
      total += w[i];
      nonzero += w[i] > 0.0;
    }
    if (!(total > 0.0))
      return ltl_error(L, "multinomial", "invalid multinomial distribution (sum of probabilities <= 0)");
    if (!repl && nonzero < ns)
      return ltl_error(L, "multinomial", "invalid multinomial distribution (with replacement=False, not enough "
                      "non-negative category to sample)");
    for (int64_t k = 0; k < ns; k++) {
      int64_t c = pick(w, n, total, lt_rng_unit(s, 53));
      o[r * ns + k] = c + 1;
      if (!repl) {   /* remove the category and renormalise by a fresh sum */
        w[c] = 0.0;
        total = 0.0;
        for (int64_t i = 0; i < n; i++) total += w[i];
      }
    }
  }
  lua_pop(L, 1);   /* scratch */
  return 1;
}

/* ====================================================================== */
/* special functions the distributions need (T.lgamma, T.digamma and
   T.polygamma(1, x) get their autograd rules in distributions/special.lua)       */
/* ====================================================================== */
static double digamma1(double x) {
  if (x == 0.0) return copysign(INFINITY, -x);   /* PyTorch: digamma(+-0) = -+inf */
  if (x < 0.0) {
    if (x == floor(x)) return NAN;
    /* reflection: psi(1 - x) - psi(x) = pi cot(pi x) */
    return digamma1(1.0 - x) - 3.141592653589793 / tan(3.141592653589793 * x);
  }
  double r = 0.0;
  while (x < 10.0) { r -= 1.0 / x; x += 1.0; }
  double f = 1.0 / (x * x);
  /* asymptotic series (Abramowitz & Stegun 6.3.18): from x >= 10 the next
     term is below 1e-17 */
  return r + log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132 - f * (691.0 / 32760))))));
}
static double trigamma1(double x) {
  if (x == -INFINITY) return NAN;   /* no limit there (PyTorch: nan) */
  if (x <= 0.0 && x == floor(x)) return INFINITY;
  if (x < 0.0) {   /* psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x) */
    double sn = sin(3.141592653589793 * x);
    return -trigamma1(1.0 - x) + 9.869604401089358 / (sn * sn);
  }
  double r = 0.0;
  while (x < 10.0) { r += 1.0 / (x * x); x += 1.0; }
  double f = 1.0 / (x * x);
  return r + 1.0 / x + f / 2.0 +
         f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f * (1.0 / 30 - f * (5.0 / 66)))));
}

static int special(lua_State *L, const char *fname, int which) {
  lt_tensor *x = ltl_check(L, 1);
  if (lt_is_complex(x->dtype))
    return ltl_error(L, fname, "not implemented for %s", lt_dtypes[x->dtype].name);
  /* integer inputs give the default floating dtype, as PyTorch's unary float ops */
  ltensor_dtype dt = lt_is_floating(x->dtype) ? x->dtype : ltl_settings_of(L)->default_dtype;
  const double *xv = as_f64(L, x, x->ndim, x->shape);
  lt_tensor *buf = ltl_push_new(L, LTENSOR_FLOAT64, x->ndim, x->shape);
  double *v = (double *)(void *)lt_data(buf);
  int64_t n = lt_numel(x);
  switch (which) {
  case 0: for (int64_t i = 0; i < n; i++) v[i] = lgamma(xv[i]); break;
  case 1: for (int64_t i = 0; i < n; i++) v[i] = digamma1(xv[i]); break;
  default: for (int64_t i = 0; i < n; i++) v[i] = trigamma1(xv[i]); break;
  }
  lt_tensor *out = ltl_push_new_like(L, x, dt);
  lt_copy_into(out, buf);
  return 1;
}
static int l_lgamma(lua_State *L) { return special(L, "lgamma", 0); }
static int l_digamma(lua_State *L) { return special(L, "digamma", 1); }
static int l_trigamma(lua_State *L) { return special(L, "polygamma", 2); }

const ltl_reg ltl_reg_samplers[] = {
  /* LT_DIFF: outputs of normal / bernoulli / poisson require
     grad like PyTorch's, with zero gradients, and the in-place samplers
     refuse leaves that require grad; rules in autograd/rules_random.lua */
  {"uniform_", l_uniform_, LT_METHOD | LT_DIFF, NULL},
  {"normal_", l_normal_, LT_METHOD | LT_DIFF, NULL},
  {"exponential_", l_exponential_, LT_METHOD | LT_DIFF, NULL},
  {"geometric_", l_geometric_, LT_METHOD | LT_DIFF, NULL},
  {"log_normal_", l_log_normal_, LT_METHOD | LT_DIFF, NULL},
  {"cauchy_", l_cauchy_, LT_METHOD | LT_DIFF, NULL},
  {"random_", l_random_, LT_METHOD | LT_DIFF, NULL},
  {"bernoulli_", l_bernoulli_, LT_METHOD | LT_DIFF, NULL},
  {"bernoulli", l_bernoulli, LT_BOTH | LT_DIFF, NULL},
  {"normal", l_normal, LT_MODULE | LT_DIFF, NULL},
  {"poisson", l_poisson, LT_BOTH | LT_DIFF, NULL},
  {"multinomial", l_multinomial, LT_BOTH, NULL},
  {"_standard_gamma", l_standard_gamma, LT_MODULE | LT_DIFF, NULL},
  {"_standard_gamma_grad", l_standard_gamma_grad, LT_MODULE, NULL},
  {"_lgamma", l_lgamma, LT_MODULE, NULL},
  {"_digamma", l_digamma, LT_MODULE, NULL},
  {"_trigamma", l_trigamma, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
