/* l_reduce.c -- reductions, scans, softmax and sorting (Lua bindings).
 *
 * Argument convention (SPEC §6): (t [, dim or {dims}] [, keepdim] [, opts]),
 * dims 1-based, negative from the end; opts may also carry dim, keepdim,
 * dtype, correction/unbiased (std/var) and p (norm).  Result dtypes follow
 * PyTorch 1.13: sum/prod/cumsum/cumprod of bool or integral input give
 * int64, mean/std/var/norm refuse integral input, max/min keep the dtype.
 * The kernels live in lt_reduce.c, lt_scan.c and lt_sort.c; this file only
 * parses, checks, and allocates outputs (with ltl_push_new, before any
 * work).
 */
#include <math.h>
#include <string.h>
#include "l_lua.h"
#include "lt_reduce.h"
#include "lt_scan.h"
#include "lt_sort.h"
#include "l_oplist.h"
#include "l_ew.h"

/* PyTorch's ScalarType names, used in error messages it words that way */
static const char *torch_name(ltensor_dtype d) {
  static const char *names[LTENSOR_NUM_DTYPES] = {
    "Bool", "Byte", "UInt16", "UInt32", "UInt64", "Char", "Short", "Int", "Long",
    "Half", "BFloat16", "Float", "Double", "ComplexHalf", "ComplexFloat", "ComplexDouble"};
  return names[d];
}

/* ---- argument parsing --------------------------------------------------- */
typedef struct rargs {
  uint32_t mask;     /* dims to reduce (all when no dim was given) */
  int have_dim;      /* a dim or a non-empty list was given */
  int ndims;         /* how many dims were named */
  int dim;           /* the first named dim, 0-based */
  int keepdim;
  int opts;          /* stack index of the options table, 0 if none */
  int out;           /* stack index of the out= tensor, 0 if none */
} rargs;

/* An options table has string keys; a dim list is a sequence ({} is an
   empty dim list, which like PyTorch's dim=[] reduces everything). */
static int is_opts(lua_State *L, int i) {
  if (lua_type(L, i) != LUA_TTABLE || ltl_test(L, i)) return 0;
  if (lua_rawlen(L, i) > 0) return 0;
  lua_pushnil(L);
  if (lua_next(L, i)) { lua_pop(L, 2); return 1; }
  return 0;
}

static void add_dim(lua_State *L, const char *fname, const lt_tensor *t, int idx, rargs *ra) {
  int isnum;
  lua_Integer v = lua_tointegerx(L, idx, &isnum);
  if (!isnum) ltl_error(L, fname, "dim must be an integer or a table of integers (got %s)", luaL_typename(L, idx));
  int d = ltl_checkdim(L, v, t->ndim, fname);
  if (t->ndim == 0) d = 0;
  if (ra->mask & (1u << d)) ltl_error(L, fname, "dim %d appears multiple times in the list of dims", d + 1);
  if (ra->ndims == 0) ra->dim = d;
  ra->ndims++;
  ra->mask |= 1u << d;
}

static void parse_dims_at(lua_State *L, const char *fname, const lt_tensor *t, int idx, rargs *ra, int allow_list) {
  if (lua_type(L, idx) == LUA_TTABLE) {
    if (!allow_list) ltl_error(L, fname, "dim must be an integer (got a table)");
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer k = 1; k <= n; k++) {
      lua_rawgeti(L, idx, k);
      add_dim(L, fname, t, lua_gettop(L), ra);
      lua_pop(L, 1);
    }
  } else {
    add_dim(L, fname, t, idx, ra);
  }
}

/* Parse (dim, keepdim, opts) starting at stack slot `first`. */
static void parse_rargs(lua_State *L, const char *fname, const lt_tensor *t, int first, rargs *ra, int allow_list) {
  int top = lua_gettop(L);
  memset(ra, 0, sizeof *ra);
  for (int k = first; k <= top; k++)
    if (is_opts(L, k)) { ra->opts = k; break; }
  int last = ra->opts ? ra->opts - 1 : top;
  if (first <= last && !lua_isnil(L, first)) {
    if (lua_type(L, first) == LUA_TBOOLEAN)
      ltl_error(L, fname, "expected a dim (integer or table of integers), got boolean");
    parse_dims_at(L, fname, t, first, ra, allow_list);
  }
  if (first + 1 <= last && !lua_isnil(L, first + 1)) {
    if (lua_type(L, first + 1) != LUA_TBOOLEAN)
      ltl_error(L, fname, "keepdim must be a boolean (got %s)", luaL_typename(L, first + 1));
    ra->keepdim = lua_toboolean(L, first + 1);
  }
  if (ra->opts) {
    /* the keys any reduction reads; a misspelt one must not silently
       reduce over everything */
    static const char *const REDUCE_OPTS[] = {"dim", "keepdim", "dtype", "correction", "unbiased", "out", "p", NULL};
    ltl_check_opts(L, ra->opts, fname, REDUCE_OPTS);
    if (!ra->ndims) {
      ltl_getopt(L, ra->opts, "dim");
      if (!lua_isnil(L, -1)) parse_dims_at(L, fname, t, lua_gettop(L), ra, allow_list);
      lua_pop(L, 1);
    }
    ra->keepdim = ltl_opt_bool(L, ra->opts, "keepdim", ra->keepdim);
    ra->out = ew_opt_out(L, ra->opts);   /* pushed; a freed one is refused here, by name */
  }
  ra->have_dim = ra->ndims > 0;
  if (!ra->have_dim) ra->mask = t->ndim ? (uint32_t)((1ull << t->ndim) - 1) : 0;
}

static int reduced_shape(const lt_tensor *t, uint32_t mask, int keepdim, int64_t *shape) {
  int n = 0;
  for (int d = 0; d < t->ndim; d++) {
    if ((mask >> d) & 1) { if (keepdim) shape[n++] = 1; }
    else shape[n++] = t->shape[d];
  }
  return n;
}

static lt_tensor *push_reduced(lua_State *L, const lt_tensor *t, const rargs *ra, ltensor_dtype dt) {
  int64_t shape[LT_MAX_DIMS];
  int n = reduced_shape(t, ra->mask, ra->keepdim, shape);
  return ltl_push_new(L, dt, n, shape);
}

/* PyTorch's zero-size checks for max/min/argmax/amax... */
static void check_nonempty(lua_State *L, const char *fname, const lt_tensor *t, const rargs *ra) {
  if (lt_numel(t) != 0) return;
  if (!ra->have_dim)
    ltl_error(L, fname, "expected reduction dim to be specified for input.numel() == 0. "
                       "Specify the reduction dim with the 'dim' argument");
  for (int d = 0; d < t->ndim; d++)
    if (((ra->mask >> d) & 1) && t->shape[d] == 0)
      ltl_error(L, fname, "expected reduction dim %d to have non-zero size", d + 1);
}

/* PyTorch 1.13 words a dtype its kernel refuses as '"kernel" not implemented
   for 'Type''; the kernel name here is ours, the rest is PyTorch's. */
static void refuse_dtype(lua_State *L, const char *fname, ltensor_dtype d) {
  ltl_error(L, fname, "\"%s_cpu\" not implemented for '%s'", fname, torch_name(d));
}

static void check_real(lua_State *L, const char *fname, const lt_tensor *t) {
  if (lt_is_complex(t->dtype)) refuse_dtype(L, fname, t->dtype);
}

/* argmax/argmin/topk have no Bool kernel in PyTorch 1.13 (max/min/sort do) */
static void check_not_bool(lua_State *L, const char *fname, const lt_tensor *t) {
  if (t->dtype == LTENSOR_BOOL) refuse_dtype(L, fname, t->dtype);
}

static ltensor_dtype integral_to_long(ltensor_dtype d) {
  return lt_is_integral(d) ? LTENSOR_INT64 : d;
}

/* the options table's dtype: the input is converted to it before reducing */
static ltensor_dtype opt_dtype(lua_State *L, const rargs *ra, ltensor_dtype def) {
  return ra->opts ? ltl_opt_dtype(L, ra->opts, def) : def;
}

/* The result on top of the stack, or written into out= (returned then). */
static int finish(lua_State *L, const char *fname, const rargs *ra, const lt_tensor *out) {
  ltl_into_out(L, fname, ra->out, out->dtype);
  return 1;
}

/* ---- sum / mean / prod ---------------------------------------------------- */
/* sum (a list of dims allowed) and prod (one dim): bool and integers give
   int64 unless opts.dtype says otherwise */
static int sumprod(lua_State *L, const char *fname, int is_prod) {
  lt_tensor *t = ltl_check(L, 1);
  rargs ra;
  parse_rargs(L, fname, t, 2, &ra, !is_prod);
  lt_tensor *out = push_reduced(L, t, &ra, opt_dtype(L, &ra, integral_to_long(t->dtype)));
  if (is_prod) lt_reduce_prod(out, t, ra.mask, ltl_settings_of(L)->pool);
  else lt_reduce_sum(out, t, ra.mask, 0, ltl_settings_of(L)->pool);
  return finish(L, fname, &ra, out);
}
static int l_sum(lua_State *L) { return sumprod(L, "sum", 0); }
static int l_prod(lua_State *L) { return sumprod(L, "prod", 1); }

static int l_mean(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  rargs ra;
  parse_rargs(L, "mean", t, 2, &ra, 1);
  ltensor_dtype dt = opt_dtype(L, &ra, t->dtype);
  if (lt_is_integral(dt))
    ltl_error(L, "mean", "could not infer output dtype. %s dtype must be either a floating point or complex dtype. Got: %s",
             dt == t->dtype ? "Input" : "Optional", torch_name(dt));
  lt_tensor *out = push_reduced(L, t, &ra, dt);
  lt_reduce_sum(out, t, ra.mask, 1, ltl_settings_of(L)->pool);
  return finish(L, "mean", &ra, out);
}

/* ---- max / min ----------------------------------------------------------- */
/* Raw max/min: without a dim one 0-dim tensor, with a dim (values, indices). */
static int minmax(lua_State *L, const char *fname, int is_max) {
  lt_tensor *t = ltl_check(L, 1);
  rargs ra;
  parse_rargs(L, fname, t, 2, &ra, 0);
  check_real(L, fname, t);
  check_nonempty(L, fname, t, &ra);
  if (ra.out && ra.have_dim)   /* PyTorch's out=(values, indices) */
    ltl_error(L, fname, "out= with a dim is not supported (the result is a (values, indices) pair)");
  lt_tensor *vals = push_reduced(L, t, &ra, t->dtype);
  if (!ra.have_dim) {
    lt_reduce_minmax(vals, NULL, t, ra.mask, is_max, ltl_settings_of(L)->pool);
    return finish(L, fname, &ra, vals);
  }
  lt_tensor *idx = push_reduced(L, t, &ra, LTENSOR_INT64);
  lt_reduce_minmax(vals, idx, t, ra.mask, is_max, ltl_settings_of(L)->pool);
  return 2;
}
static int l_max_raw(lua_State *L) { return minmax(L, "max", 1); }
static int l_min_raw(lua_State *L) { return minmax(L, "min", 0); }

/* T.max(a, b) with a tensor b is the elementwise maximum (PyTorch's
   overload).  Both entries are looked up at call time through the tensor's
   methods so that autograd sees the right op ("maximum" or "max"). */
static int minmax_entry(lua_State *L, const char *reduce_name, const char *elementwise) {
  int other = ltl_test(L, 2) ? 2 : 0;
  int self = ltl_test(L, 1) ? 1 : other;
  if (!self) { ltl_check(L, 1); return 0; }
  lua_getfield(L, self, other ? elementwise : reduce_name);
  if (lua_isnil(L, -1)) return ltl_error(L, reduce_name + 1, "'%s' is not available", other ? elementwise : reduce_name);
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}
static int l_max(lua_State *L) { return minmax_entry(L, "_max", "maximum"); }
static int l_min(lua_State *L) { return minmax_entry(L, "_min", "minimum"); }

/* amax/amin (values; a list of dims allowed) and argmax/argmin (indices;
   one dim or none, no Bool kernel in PyTorch 1.13) */
static int extreme(lua_State *L, const char *fname, int is_max, int want_idx) {
  lt_tensor *t = ltl_check(L, 1);
  rargs ra;
  parse_rargs(L, fname, t, 2, &ra, !want_idx);
  check_real(L, fname, t);
  if (want_idx) check_not_bool(L, fname, t);
  check_nonempty(L, fname, t, &ra);
  if (want_idx && !ra.have_dim) ra.keepdim = 0;   /* over the flattened tensor: a 0-dim result (1.13) */
  lt_tensor *out = push_reduced(L, t, &ra, want_idx ? LTENSOR_INT64 : t->dtype);
  lt_reduce_minmax(want_idx ? NULL : out, want_idx ? out : NULL, t, ra.mask, is_max, ltl_settings_of(L)->pool);
  return finish(L, fname, &ra, out);
}
static int l_amax(lua_State *L) { return extreme(L, "amax", 1, 0); }
static int l_amin(lua_State *L) { return extreme(L, "amin", 0, 0); }
static int l_argmax(lua_State *L) { return extreme(L, "argmax", 1, 1); }
static int l_argmin(lua_State *L) { return extreme(L, "argmin", 0, 1); }

/* ---- all / any ------------------------------------------------------------- */
static int allany(lua_State *L, const char *fname, int is_all) {
  lt_tensor *t = ltl_check(L, 1);
  rargs ra;
  parse_rargs(L, fname, t, 2, &ra, 1);
  /* PyTorch 1.13 keeps uint8 for uint8 input (legacy mask type) */
  lt_tensor *out = push_reduced(L, t, &ra, t->dtype == LTENSOR_UINT8 ? LTENSOR_UINT8 : LTENSOR_BOOL);
  lt_reduce_allany(out, t, ra.mask, is_all, ltl_settings_of(L)->pool);
  return finish(L, fname, &ra, out);
}
static int l_all(lua_State *L) { return allany(L, "all", 1); }
static int l_any(lua_State *L) { return allany(L, "any", 0); }

/* ---- std / var ------------------------------------------------------------- */
static int stdvar(lua_State *L, const char *fname, int take_sqrt) {
  lt_tensor *t = ltl_check(L, 1);
  double correction = 1;
  if (lua_type(L, 2) == LUA_TBOOLEAN) {   /* PyTorch's std(t, unbiased) */
    correction = lua_toboolean(L, 2) ? 1 : 0;
    lua_remove(L, 2);
  }
  rargs ra;
  parse_rargs(L, fname, t, 2, &ra, 1);
  if (ra.opts) {
    ltl_getopt(L, ra.opts, "unbiased");
    if (!lua_isnil(L, -1)) correction = lua_toboolean(L, -1) ? 1 : 0;
    lua_pop(L, 1);
    ltl_getopt(L, ra.opts, "correction");
    if (!lua_isnil(L, -1)) {
      int isnum;
      correction = lua_tonumberx(L, -1, &isnum);
      if (!isnum) ltl_error(L, fname, "correction must be a number (got %s)", luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  if (lt_is_integral(t->dtype))
    ltl_error(L, fname, "std and var only support floating point and complex dtypes");
  lt_tensor *out = push_reduced(L, t, &ra, lt_to_real(t->dtype));
  lt_reduce_var(out, t, ra.mask, correction, take_sqrt, ltl_settings_of(L)->pool);
  return finish(L, fname, &ra, out);
}
static int l_std(lua_State *L) { return stdvar(L, "std", 1); }
static int l_var(lua_State *L) { return stdvar(L, "var", 0); }

/* ---- norm ------------------------------------------------------------------ */
static double norm_p(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    if (strcmp(s, "fro") == 0) return 2;
    if (strcmp(s, "inf") == 0) return INFINITY;
    if (strcmp(s, "-inf") == 0) return -INFINITY;
    return ltl_error(L, "norm", "unsupported norm type '%s' (expected a number, 'fro', 'inf' or '-inf')", s);
  }
  int isnum;
  double p = lua_tonumberx(L, idx, &isnum);
  if (!isnum) return ltl_error(L, "norm", "p must be a number or 'fro' (got %s)", luaL_typename(L, idx));
  return p;
}
static int l_norm(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  double p = 2;
  int first = 2;
  if (lua_type(L, 2) == LUA_TNUMBER || lua_type(L, 2) == LUA_TSTRING) { p = norm_p(L, 2); first = 3; }
  else if (lua_isnil(L, 2) && lua_gettop(L) >= 3) first = 3;
  rargs ra;
  parse_rargs(L, "norm", t, first, &ra, 1);
  if (ra.opts) {
    ltl_getopt(L, ra.opts, "p");
    if (!lua_isnil(L, -1)) p = norm_p(L, lua_gettop(L));
    lua_pop(L, 1);
  }
  ltensor_dtype dt = ra.opts ? ltl_opt_dtype(L, ra.opts, t->dtype) : t->dtype;
  if (lt_is_integral(dt))
    ltl_error(L, "norm", "input dtype should be either floating point or complex. Got %s instead", torch_name(dt));
  lt_tensor *out = push_reduced(L, t, &ra, lt_to_real(dt));
  lt_reduce_norm(out, t, ra.mask, p, ltl_settings_of(L)->pool);
  return finish(L, "norm", &ra, out);
}

/* ---- logsumexp ------------------------------------------------------------- */
static int l_logsumexp(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  rargs ra;
  parse_rargs(L, "logsumexp", t, 2, &ra, 1);
  if (lt_is_complex(t->dtype))
    ltl_error(L, "logsumexp", "Expected floating point type for result tensor, but got: %s", torch_name(t->dtype));
  ltensor_dtype dt = lt_is_integral(t->dtype) ? ltl_settings_of(L)->default_dtype : t->dtype;
  lt_tensor *out = push_reduced(L, t, &ra, dt);
  lt_reduce_logsumexp(out, t, ra.mask, ltl_settings_of(L)->pool);
  return finish(L, "logsumexp", &ra, out);
}

/* ---- scans and softmax: one required dim --------------------------------- */
static int one_dim(lua_State *L, const char *fname, const lt_tensor *t, int idx) {
  if (lua_isnoneornil(L, idx) || is_opts(L, idx)) {
    if (is_opts(L, idx)) {
      ltl_getopt(L, idx, "dim");
      int has = !lua_isnil(L, -1);
      if (has) {
        int d = ltl_checkdim(L, ltl_checkinteger(L, -1), t->ndim, fname);
        lua_pop(L, 1);
        return t->ndim ? d : 0;
      }
      lua_pop(L, 1);
    }
    ltl_error(L, fname, "missing required argument 'dim'");
  }
  int isnum;
  lua_Integer v = lua_tointegerx(L, idx, &isnum);
  if (!isnum) ltl_error(L, fname, "dim must be an integer (got %s)", luaL_typename(L, idx));
  int d = ltl_checkdim(L, v, t->ndim, fname);
  return t->ndim ? d : 0;
}

/* trailing options: a table with dtype, or a dtype itself */
static ltensor_dtype trailing_dtype(lua_State *L, int idx, ltensor_dtype def) {
  ltensor_dtype dt;
  if (lua_isnoneornil(L, idx)) return def;
  if (ltl_testdtype(L, idx, &dt)) return dt;
  if (lua_type(L, idx) == LUA_TTABLE) return ltl_opt_dtype(L, idx, def);
  return def;
}

/* the options of scans and softmax: an unknown key raises */
static const char *const DIM_DTYPE_OPTS[] = {"dim", "dtype", NULL};
static void check_dim_dtype_opts(lua_State *L, const char *fname) {
  for (int i = 2; i <= 3; i++)
    if (is_opts(L, i)) ltl_check_opts(L, i, fname, DIM_DTYPE_OPTS);
}

static int scan(lua_State *L, const char *fname, int is_prod) {
  lt_tensor *t = ltl_check(L, 1);
  check_dim_dtype_opts(L, fname);
  int dim = one_dim(L, fname, t, 2);
  ltensor_dtype dt = trailing_dtype(L, is_opts(L, 2) ? 2 : 3, integral_to_long(t->dtype));
  lt_tensor *out = ltl_push_new_like(L, t, dt);
  lt_scan(out, t, dim, is_prod, ltl_settings_of(L)->pool);
  return 1;
}
static int l_cumsum(lua_State *L) { return scan(L, "cumsum", 0); }
static int l_cumprod(lua_State *L) { return scan(L, "cumprod", 1); }

static int softmax(lua_State *L, const char *fname, int is_log) {
  lt_tensor *t = ltl_check(L, 1);
  check_dim_dtype_opts(L, fname);
  int dim = one_dim(L, fname, t, 2);
  check_real(L, fname, t);
  /* float-valued like exp (SPEC §3): integral input gives the default dtype,
     where PyTorch 1.13 has no integral kernel and raises */
  ltensor_dtype def = lt_is_integral(t->dtype) ? ltl_settings_of(L)->default_dtype : t->dtype;
  ltensor_dtype dt = trailing_dtype(L, is_opts(L, 2) ? 2 : 3, def);
  if (!lt_is_floating(dt))
    ltl_error(L, fname, "expected a floating point dtype for the result, got %s", lt_dtypes[dt].name);
  lt_tensor *out = ltl_push_new_like(L, t, dt);
  lt_softmax(out, t, dim, is_log, ltl_settings_of(L)->pool);
  return 1;
}
static int l_softmax(lua_State *L) { return softmax(L, "softmax", 0); }
static int l_log_softmax(lua_State *L) { return softmax(L, "log_softmax", 1); }

/* ---- sort / argsort / topk ---------------------------------------------- */
/* Sorted values and/or 1-based indices of the first k along dim. */
static int sort_common(lua_State *L, const char *fname, lt_tensor *t, int dim, int desc, int64_t k,
                       int want_vals, int want_idx) {
  check_real(L, fname, t);
  int64_t shape[LT_MAX_DIMS];
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  int64_t n = t->ndim ? t->shape[dim] : 1;
  if (t->ndim) shape[dim] = k;
  int base = lua_gettop(L);
  lt_tensor *vals = want_vals ? ltl_push_new(L, t->dtype, t->ndim, shape) : NULL;
  lt_tensor *idx = want_idx ? ltl_push_new(L, LTENSOR_INT64, t->ndim, shape) : NULL;
  /* scratch rows: owned by the GC like any tensor, popped afterwards */
  lt_pool *pool = ltl_settings_of(L)->pool;
  int parts = lt_numel(t) > 0 ? lt_sort_parts(t, dim, pool) : 1;
  int64_t sn = (n > 0 ? n : 1) * parts;   /* one scratch row per part */
  lt_tensor *keys = ltl_push_new(L, LTENSOR_INT64, 1, &sn);
  lt_tensor *perm = ltl_push_new(L, LTENSOR_INT64, 1, &sn);
  lt_tensor *tmp = ltl_push_new(L, LTENSOR_INT64, 1, &sn);
  if (lt_numel(t) > 0)
    lt_sort(vals, idx, t, dim, desc, k, lt_data(keys), (int64_t *)lt_data(perm), (int64_t *)lt_data(tmp),
            parts, pool);
  lua_pop(L, 3);
  return lua_gettop(L) - base;
}

static int opt_flag(lua_State *L, int idx, int opts, const char *field, int def) {
  if (lua_type(L, idx) == LUA_TBOOLEAN) return lua_toboolean(L, idx);
  if (!lua_isnoneornil(L, idx) && !is_opts(L, idx))
    ltl_argerror(L, idx, lua_pushfstring(L, "%s: boolean expected, got %s", field, luaL_typename(L, idx)));
  return opts ? ltl_opt_bool(L, opts, field, def) : def;
}

/* (t [, dim=-1] [, descending] [, opts{dim, descending}]) */
static int sort_args(lua_State *L, const char *fname, lt_tensor *t, int *desc) {
  /* (t [, dim] [, descending] [, opts]): a string or a 5th argument is a slip */
  ltl_check_nargs(L, 4);
  int ty2 = lua_type(L, 2);
  if (ty2 != LUA_TNONE && ty2 != LUA_TNIL && ty2 != LUA_TNUMBER && ty2 != LUA_TBOOLEAN &&
      (ty2 != LUA_TTABLE || ltl_test(L, 2)))
    ltl_typeerror(L, 2, "dim (integer), descending (boolean) or options table");
  int top = lua_gettop(L), opts = 0;
  for (int k = 2; k <= top; k++) if (is_opts(L, k)) { opts = k; break; }
  static const char *const SORT_OPTS[] = {"dim", "descending", "stable", NULL};
  if (opts) ltl_check_opts(L, opts, fname, SORT_OPTS);
  int dim;
  if (lua_type(L, 2) == LUA_TNUMBER) dim = one_dim(L, fname, t, 2);
  else {
    lua_Integer d = -1;
    if (opts) { ltl_getopt(L, opts, "dim"); if (!lua_isnil(L, -1)) d = ltl_checkinteger(L, -1); lua_pop(L, 1); }
    dim = ltl_checkdim(L, d, t->ndim, fname);
    if (!t->ndim) dim = 0;
    if (lua_type(L, 2) == LUA_TBOOLEAN) { *desc = lua_toboolean(L, 2); return dim; }
  }
  *desc = opt_flag(L, 3, opts, "descending", 0);
  return dim;
}

/* sort (values and indices) and argsort (indices) of the whole dim */
static int sort_all(lua_State *L, const char *fname, int want_vals) {
  lt_tensor *t = ltl_check(L, 1);
  int desc;
  int dim = sort_args(L, fname, t, &desc);
  return sort_common(L, fname, t, dim, desc, t->ndim ? t->shape[dim] : 1, want_vals, 1);
}
static int l_sort(lua_State *L) { return sort_all(L, "sort", 1); }
static int l_argsort(lua_State *L) { return sort_all(L, "argsort", 0); }

/* (t, k [, dim=-1] [, largest=true] [, sorted=true]): the result is always sorted */
static int l_topk(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  lua_Integer k = ltl_checkinteger(L, 2);
  int top = lua_gettop(L), opts = 0;
  for (int i = 3; i <= top; i++) if (is_opts(L, i)) { opts = i; break; }
  static const char *const TOPK_OPTS[] = {"dim", "largest", "sorted", NULL};
  if (opts) ltl_check_opts(L, opts, "topk", TOPK_OPTS);
  lua_Integer d = -1;
  if (lua_type(L, 3) == LUA_TNUMBER) d = ltl_checkinteger(L, 3);
  else if (!lua_isnoneornil(L, 3) && !is_opts(L, 3)) ltl_typeerror(L, 3, "dim (integer) or options table");
  else if (opts) { ltl_getopt(L, opts, "dim"); if (!lua_isnil(L, -1)) d = ltl_checkinteger(L, -1); lua_pop(L, 1); }
  int dim = ltl_checkdim(L, d, t->ndim, "topk");
  if (!t->ndim) dim = 0;
  int largest = opt_flag(L, 4, opts, "largest", 1);
  (void)opt_flag(L, 5, opts, "sorted", 1);   /* checked only: the result is always sorted */
  int64_t n = t->ndim ? t->shape[dim] : 1;
  if (k < 0 || k > n) return ltl_error(L, "topk", "selected index k out of range");
  check_not_bool(L, "topk", t);   /* after the k check, in PyTorch's order */
  return sort_common(L, "topk", t, dim, largest, k, 1, 1);
}

/* the op list's lines (l_oplist.h), then max/min: T.max (values and
   indices, not recorded) and the differentiable _max/_min behind it */
const ltl_reg ltl_reg_reduce[] = {
  LT_OPS_REDUCE(LT_OP_REG_ALL)
  {"max", l_max, LT_BOTH, NULL},
  {"min", l_min, LT_BOTH, NULL},
  {"_max", l_max_raw, LT_BOTH | LT_DIFF, "max"},
  {"_min", l_min_raw, LT_BOTH | LT_DIFF, "min"},
  {NULL, NULL, 0, NULL}
};
