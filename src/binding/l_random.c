/* l_random.c -- the generators
 * (T.manual_seed & co. for the state's default one, T.Generator objects)
 * and the sized random constructors rand / randn / randint / randperm.
 * The samplers proper (in-place fills, normal, poisson, multinomial, ...)
 * are in l_samplers.c, the Lua-free generator core in lt_rng.c.
 *
 * Generators
 * ----------
 * One default generator per lua_State, in ltl_settings.rng (see lt_rng.h for
 * the layout); T.Generator([seed]) objects are userdata with their own
 * words.  Every sampling function takes {generator = g} in its options
 * table and otherwise draws from the default one.  T.manual_seed(n) seeds
 * the default generator deterministically (splitmix64 expansion of n, two's
 * complement for negative n); an unseeded one starts from PyTorch's default
 * seed, so every run is reproducible.  get_state() is a uint8 tensor of
 * LT_RNG_STATE_BYTES bytes (the four state words and the seed,
 * little-endian), as PyTorch's is a uint8 tensor.
 *
 * Values (each element consumes whole words, in the row-major order of the
 * tensor's logical indices, never its memory order): see l_samplers.c.
 */
#include <math.h>
#include <string.h>
#include <time.h>
#include "l_random.h"

/* ====================================================================== */
/* the generator of a call                                                */
/* ====================================================================== */
typedef struct lt_generator {
  uint64_t own[LT_RNG_WORDS];
  uint64_t *s;            /* own, or the state's default (T.default_generator) */
} lt_generator;

uint64_t *ltl_rng_default(lua_State *L) {
  uint64_t *s = ltl_settings_of(L)->rng;
  if (!s[4]) lt_rng_seed(s, LT_RNG_DEFAULT_SEED);
  return s;
}

static lt_generator *test_gen(lua_State *L, int idx) {
  return (lt_generator *)luaL_testudata(L, idx, LT_GENERATOR_MT);
}

static lt_generator *check_gen(lua_State *L, int idx, const char *fname) {
  lt_generator *g = test_gen(L, idx);
  if (!g) ltl_error(L, fname, "expected a ltensor.Generator, got %s", luaL_typename(L, idx));
  if (!g->s[4]) lt_rng_seed(g->s, LT_RNG_DEFAULT_SEED);
  return g;
}

uint64_t *ltl_rng_opt(lua_State *L, int opts, const char *fname) {
  if (!opts || lua_type(L, opts) != LUA_TTABLE) return ltl_rng_default(L);
  if (ltl_getopt(L, opts, "generator") == LUA_TNIL) { lua_pop(L, 1); return ltl_rng_default(L); }
  lt_generator *g = test_gen(L, -1);
  if (!g) ltl_error(L, fname, "generator must be a ltensor.Generator, got %s", luaL_typename(L, -1));
  lua_pop(L, 1);   /* still referenced by the options table on the stack */
  if (!g->s[4]) lt_rng_seed(g->s, LT_RNG_DEFAULT_SEED);
  return g->s;
}

int ltl_is_rng_opts(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE || ltl_test(L, idx)) return 0;
  if (lua_rawlen(L, idx) > 0) return 0;
  static const char *const keys[] = { "dtype", "requires_grad", "generator", "replacement", NULL };
  for (int i = 0; keys[i]; i++) {
    int t = ltl_getopt(L, idx, keys[i]);
    lua_pop(L, 1);
    if (t != LUA_TNIL) return 1;
  }
  return 0;
}

/* ====================================================================== */
/* argument helpers                                                       */
/* ====================================================================== */
/* Trailing options table of a call whose sizes come first: returns its
   slot (0 if none) and the last size slot in *last. */
static int split_opts(lua_State *L, int first, int *last) {
  int top = lua_gettop(L);
  int opts = 0;
  if (top >= first && lua_type(L, top) == LUA_TTABLE && !ltl_test(L, top) &&
      (top > first || ltl_is_rng_opts(L, top)))
    opts = top;
  *last = opts ? top - 1 : top;
  return opts;
}

/* The options each factory reads (unknown keys raise, with a suggestion) */
static const char *const RAND_OPTS[] = {"dtype", "requires_grad", "generator", NULL};

/* ====================================================================== */
/* the default generator: T.manual_seed & co.                             */
/* ====================================================================== */
static int l_default_generator(lua_State *L);

/* T.manual_seed(n): seeds the default generator and returns it (as a
   Generator object, like PyTorch) */
static int l_manual_seed(lua_State *L) {
  lua_Integer n = ltl_checkinteger(L, 1);
  lt_rng_seed(ltl_settings_of(L)->rng, (uint64_t)n);
  return l_default_generator(L);
}

/* a non-deterministic seed (time, clock and addresses), non-negative */
static uint64_t fresh_seed(const void *salt) {
  uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^ (uint64_t)(uintptr_t)salt ^
               (uint64_t)(uintptr_t)&x;
  return lt_rng_splitmix(&x) >> 1;
}

/* T.seed(): reseeds the default generator non-deterministically, returns the seed */
static int l_seed(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  uint64_t seed = fresh_seed(S);
  lt_rng_seed(S->rng, seed);
  lua_pushinteger(L, (lua_Integer)seed);
  return 1;
}

static int l_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)ltl_rng_default(L)[5]);
  return 1;
}

static int push_state(lua_State *L, const uint64_t *s) {
  int64_t n = LT_RNG_STATE_BYTES;
  lt_tensor *t = ltl_push_new(L, LTENSOR_UINT8, 1, &n);
  lt_rng_save(s, (unsigned char *)lt_data(t));
  return 1;
}

/* A state: a uint8 tensor from get_state (PyTorch's form) or, for the
   default generator, the table {w1, w2, w3, w4, seed} older code saved. */
static void load_state(lua_State *L, int idx, uint64_t *s, const char *fname) {
  unsigned char buf[LT_RNG_STATE_BYTES];
  lt_tensor *t = ltl_test(L, idx);
  if (t) {
    t = ltl_check(L, idx);   /* refuses a freed tensor */
    if (t->dtype != LTENSOR_UINT8)
      ltl_error(L, fname, "RNG state must be a uint8 tensor, got %s", lt_dtypes[t->dtype].name);
    if (lt_numel(t) != LT_RNG_STATE_BYTES)
      ltl_error(L, fname, "expected an RNG state of %d bytes, but found the input RNG state size to be %I",
               LT_RNG_STATE_BYTES, (lua_Integer)lt_numel(t));
    /* any shape of 40 bytes, read flat; contiguous as PyTorch requires (a
       multi-dim state read by one index walked past its first dim) */
    if (!lt_is_contiguous(t)) ltl_error(L, fname, "RNG state must be contiguous");
    memcpy(buf, lt_data(t), LT_RNG_STATE_BYTES);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    for (int i = 0; i < 5; i++) {
      lua_rawgeti(L, idx, i + 1);
      int ok;
      lua_Integer v = lua_tointegerx(L, -1, &ok);
      lua_pop(L, 1);
      if (!ok && i < 4) ltl_error(L, fname, "state element %d must be an integer", i + 1);
      for (int b = 0; b < 8; b++) buf[i * 8 + b] = (unsigned char)((uint64_t)(ok ? v : 0) >> (8 * b));
    }
  } else {
    ltl_error(L, fname, "expected an RNG state (a uint8 tensor), got %s", luaL_typename(L, idx));
  }
  uint64_t tmp[LT_RNG_WORDS] = { 0 };
  if (!lt_rng_load(tmp, buf)) ltl_error(L, fname, "invalid RNG state: the state must not be all zero");
  memcpy(s, tmp, 6 * sizeof(uint64_t));
}

static int l_get_rng_state(lua_State *L) { ltl_check_nargs(L, 0); return push_state(L, ltl_rng_default(L)); }
static int l_set_rng_state(lua_State *L) {
  load_state(L, 1, ltl_settings_of(L)->rng, "set_rng_state");
  return 0;
}

/* ====================================================================== */
/* T.Generator objects                                                    */
/* ====================================================================== */
static lt_generator *new_gen(lua_State *L);

static int g_manual_seed(lua_State *L) {
  lt_generator *g = check_gen(L, 1, "Generator.manual_seed");
  lua_Integer n = ltl_checkinteger(L, 2);
  lt_rng_seed(g->s, (uint64_t)n);
  lua_settop(L, 1);
  return 1;   /* self, as PyTorch */
}
static int g_seed(lua_State *L) {
  lt_generator *g = check_gen(L, 1, "Generator.seed");
  uint64_t seed = fresh_seed(g);
  lt_rng_seed(g->s, seed);
  lua_pushinteger(L, (lua_Integer)seed);
  return 1;
}
static int g_initial_seed(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_gen(L, 1, "Generator.initial_seed")->s[5]);
  return 1;
}
static int g_get_state(lua_State *L) { return push_state(L, check_gen(L, 1, "Generator.get_state")->s); }
static int g_set_state(lua_State *L) {
  lt_generator *g = check_gen(L, 1, "Generator.set_state");
  load_state(L, 2, g->s, "Generator.set_state");
  lua_settop(L, 1);
  return 1;
}
/* g:clone(): an independent generator in the same state */
static int g_clone(lua_State *L) {
  lt_generator *g = check_gen(L, 1, "Generator.clone");
  lt_generator *c = new_gen(L);
  memcpy(c->own, g->s, sizeof c->own);
  return 1;
}
static int g_tostring(lua_State *L) {
  lt_generator *g = check_gen(L, 1, "Generator");
  lua_pushfstring(L, "ltensor.Generator(initial_seed=%I)", (lua_Integer)g->s[5]);
  return 1;
}
static int g_eq(lua_State *L) {
  lt_generator *a = test_gen(L, 1), *b = test_gen(L, 2);
  lua_pushboolean(L, a && b && a->s == b->s);
  return 1;
}

static lt_generator *new_gen(lua_State *L) {
  lt_generator *g = (lt_generator *)lua_newuserdatauv(L, sizeof *g, 0);
  memset(g, 0, sizeof *g);
  g->s = g->own;
  if (luaL_newmetatable(L, LT_GENERATOR_MT)) {
    static const luaL_Reg methods[] = {
      {"manual_seed", g_manual_seed}, {"seed", g_seed}, {"initial_seed", g_initial_seed},
      {"get_state", g_get_state}, {"set_state", g_set_state}, {"clone", g_clone}, {NULL, NULL}
    };
    luaL_newlib(L, methods);
    lua_pushliteral(L, "cpu");
    lua_setfield(L, -2, "device");
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, g_eq);
    lua_setfield(L, -2, "__eq");
  }
  lua_setmetatable(L, -2);
  return g;
}

/* T.Generator([seed]): an independent stream, seeded with seed or with
   PyTorch's default seed (so a fresh generator is reproducible, as
   torch.Generator()). T.Generator({device = "cpu"}) is accepted too. */
static int l_generator(lua_State *L) {
  int has_seed = 0;
  lua_Integer seed = 0;
  if (lua_type(L, 1) == LUA_TTABLE) {
    static const char *const GEN_OPTS[] = {"device", "seed", NULL};
    ltl_check_opts(L, 1, "Generator", GEN_OPTS);
    if (ltl_getopt(L, 1, "device") != LUA_TNIL) {
      const char *d = lua_tostring(L, -1);
      if (!d || strcmp(d, "cpu") != 0)
        return ltl_error(L, "Generator", "only the \"cpu\" device is supported, got %s",
                        d ? d : luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    if (ltl_getopt(L, 1, "seed") != LUA_TNIL) {
      if (!lua_isinteger(L, -1)) return ltl_error(L, "Generator", "seed must be an integer");
      seed = lua_tointeger(L, -1);
      has_seed = 1;
    }
    lua_pop(L, 1);
  } else if (!lua_isnoneornil(L, 1)) {
    if (!lua_isinteger(L, 1))
      return ltl_error(L, "Generator", "seed must be an integer, got %s", luaL_typename(L, 1));
    seed = lua_tointeger(L, 1);
    has_seed = 1;
  }
  lt_generator *g = new_gen(L);
  lt_rng_seed(g->s, has_seed ? (uint64_t)seed : LT_RNG_DEFAULT_SEED);
  return 1;
}

/* T._default_generator(): a Generator object that is the state's default
   generator (T.default_generator is set from it in Lua). */
static int l_default_generator(lua_State *L) {
  lt_generator *g = new_gen(L);
  g->s = ltl_rng_default(L);   /* lives in the settings userdata, as long as the state */
  return 1;
}

/* ====================================================================== */
/* sized random tensors                                                   */
/* ====================================================================== */
static int rand_sized(lua_State *L, const char *fname, int normal) {
  ltl_settings *S = ltl_settings_of(L);
  int last, opts = split_opts(L, 1, &last);
  ltl_check_opts(L, opts, fname, RAND_OPTS);
  int64_t shape[LT_MAX_DIMS];
  int nd = ltl_checksize(L, 1, last, shape, fname);
  ltensor_dtype dt = ltl_opt_dtype(L, opts, S->default_dtype);
  ltl_check_float_dtype(L, fname, dt);
  uint64_t *s = ltl_rng_opt(L, opts, fname);
  lt_tensor *t = ltl_push_new(L, dt, nd, shape);
  ltl_sample_fill(L, t, normal ? LT_SAMPLE_NORMAL : LT_SAMPLE_UNIFORM, 0.0, 1.0, s);
  ltl_new_requires_grad(L, fname, t, ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}
static int l_rand(lua_State *L) { return rand_sized(L, "rand", 0); }
static int l_randn(lua_State *L) { return rand_sized(L, "randn", 1); }

static int rand_like(lua_State *L, const char *fname, int normal) {
  lt_tensor *src = ltl_check(L, 1);
  ltl_check_nargs(L, 2);   /* (t [, opts]) */
  if (!lua_isnoneornil(L, 2) && (lua_type(L, 2) != LUA_TTABLE || ltl_test(L, 2)))
    ltl_typeerror(L, 2, "options table");
  int opts = lua_type(L, 2) == LUA_TTABLE ? 2 : 0;
  ltl_check_opts(L, opts, fname, RAND_OPTS);
  ltensor_dtype dt = ltl_opt_dtype(L, opts, src->dtype);
  ltl_check_float_dtype(L, fname, dt);
  uint64_t *s = ltl_rng_opt(L, opts, fname);
  lt_tensor *t = ltl_push_new_like(L, src, dt);
  ltl_sample_fill(L, t, normal ? LT_SAMPLE_NORMAL : LT_SAMPLE_UNIFORM, 0.0, 1.0, s);
  ltl_new_requires_grad(L, fname, t, ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}
static int l_rand_like(lua_State *L) { return rand_like(L, "rand_like", 0); }
static int l_randn_like(lua_State *L) { return rand_like(L, "randn_like", 1); }

/* T.randint(low, high, size [, opts]) or T.randint(high, size [, opts]);
   size is a table of integers (or one integer for a 1-D result). */
static int l_randint(lua_State *L) {
  lua_Integer low = 0, high;
  int size_idx;
  if (lua_type(L, 2) == LUA_TTABLE) { high = ltl_checkinteger(L, 1); size_idx = 2; }
  else { low = ltl_checkinteger(L, 1); high = ltl_checkinteger(L, 2); size_idx = 3; }
  int opts = lua_type(L, size_idx + 1) == LUA_TTABLE ? size_idx + 1 : 0;
  ltl_check_opts(L, opts, "randint", RAND_OPTS);
  if (lua_type(L, size_idx) != LUA_TTABLE && lua_type(L, size_idx) != LUA_TNUMBER)
    return ltl_typeerror(L, size_idx, "table of sizes");
  int64_t shape[LT_MAX_DIMS];
  int nd = ltl_checksize(L, size_idx, size_idx, shape, "randint");
  if (low >= high)
    return ltl_error(L, "randint", "random_ expects 'from' to be less than 'to', but got from=%I >= to=%I",
                    low, high);
  ltensor_dtype dt = ltl_opt_dtype(L, opts, LTENSOR_INT64);
  uint64_t *s = ltl_rng_opt(L, opts, "randint");
  lt_tensor *t = ltl_push_new(L, dt, nd, shape);
  ltl_sample_fill_int(L, t, (int64_t)low, (uint64_t)high - (uint64_t)low, s);
  ltl_new_requires_grad(L, "randint", t, ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}

/* T.randperm(n [, opts]): a random permutation of 1..n (1-based, like every
   index in ltensor). */
static int l_randperm(lua_State *L) {
  lua_Integer n = ltl_checkinteger(L, 1);
  int opts = lua_type(L, 2) == LUA_TTABLE ? 2 : 0;
  ltl_check_opts(L, opts, "randperm", RAND_OPTS);
  if (n < 0) return ltl_error(L, "randperm", "n must be non-negative, got %I", n);
  ltensor_dtype dt = ltl_opt_dtype(L, opts, LTENSOR_INT64);
  if (dt == LTENSOR_BOOL || lt_is_complex(dt))
    return ltl_error(L, "randperm", "not implemented for %s", lt_dtypes[dt].name);
  uint64_t *s = ltl_rng_opt(L, opts, "randperm");
  int64_t len = n;
  lt_tensor *t = ltl_push_new(L, LTENSOR_INT64, 1, &len);
  int64_t *v = (int64_t *)(void *)lt_data(t);
  for (int64_t i = 0; i < n; i++) v[i] = i + 1;
  for (int64_t i = n - 1; i > 0; i--) {   /* Fisher-Yates from the last position down */
    int64_t j = (int64_t)lt_rng_below(s, (uint64_t)i + 1);
    int64_t tmp = v[i]; v[i] = v[j]; v[j] = tmp;
  }
  if (dt != LTENSOR_INT64) {
    lt_tensor *c = ltl_push_new(L, dt, 1, &len);
    lt_copy_into(c, t);
  }
  ltl_new_requires_grad(L, "randperm", ltl_check(L, -1), ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}

const ltl_reg ltl_reg_random[] = {
  {"manual_seed", l_manual_seed, LT_MODULE, NULL},
  {"seed", l_seed, LT_MODULE, NULL},
  {"initial_seed", l_initial_seed, LT_MODULE, NULL},
  {"get_rng_state", l_get_rng_state, LT_MODULE, NULL},
  {"set_rng_state", l_set_rng_state, LT_MODULE, NULL},
  {"Generator", l_generator, LT_MODULE, NULL},
  {"_default_generator", l_default_generator, LT_MODULE, NULL},
  {"rand", l_rand, LT_MODULE, NULL},
  {"randn", l_randn, LT_MODULE, NULL},
  {"rand_like", l_rand_like, LT_BOTH, NULL},
  {"randn_like", l_randn_like, LT_BOTH, NULL},
  {"randint", l_randint, LT_MODULE, NULL},
  {"randperm", l_randperm, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
