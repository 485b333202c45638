/* l_create.c -- creation: T.tensor from nested tables, empty/zeros/ones/full
   and their *_like forms, arange, linspace, logspace and eye (the random
   constructors are in l_random.c). */
#include <math.h>
#include <string.h>
#include "l_lua.h"

/* kinds seen while scanning: bit 0 bool, bit 1 integer, bit 2 float, bit 3 complex/tensor */
typedef struct { int ndim; int64_t shape[LT_MAX_DIMS]; int seen; ltensor_dtype tensor_dt; int has_tensor; } scan_t;

static void scan_data(lua_State *L, int idx, int depth, scan_t *sc, char *path, size_t pathlen) {
  int t = lua_type(L, idx);
  if (t == LUA_TTABLE) {
    if (ltl_test(L, idx)) goto tensor_case;
    int64_t n = (int64_t)lua_rawlen(L, idx);
    if (depth >= LT_MAX_DIMS) ltl_error(L, "tensor", "too many dimensions (more than %d)", LT_MAX_DIMS);
    if (depth == sc->ndim && sc->seen)   /* a leaf already fixed the depth: {1, {2}} */
      ltl_error(L, "tensor", "element %s must be a number or boolean (got table)", path[0] ? path : "(root)");
    if (depth == sc->ndim) { sc->shape[depth] = n; sc->ndim = depth + 1; }
    else if (sc->shape[depth] != n)
      ltl_error(L, "tensor", "expected sequence of length %d at dim %d (got %d)",
                 (int)sc->shape[depth], depth + 1, (int)n);
    for (int64_t i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      size_t pl = pathlen;
      if (pathlen < 200) pl += (size_t)snprintf(path + pathlen, 256 - pathlen, "[%lld]", (long long)i);
      scan_data(L, lua_gettop(L), depth + 1, sc, path, pl);
      path[pathlen] = 0;
      lua_pop(L, 1);
    }
    return;
  }
  if (depth < sc->ndim)
    ltl_error(L, "tensor", "expected sequence of length %d at dim %d (got %s)",
               (int)sc->shape[depth], depth + 1, luaL_typename(L, idx));
  if (depth > sc->ndim || (depth == sc->ndim && sc->seen && depth < sc->ndim)) {}
  if (t == LUA_TBOOLEAN) { sc->seen |= 1; }
  else if (t == LUA_TNUMBER) { sc->seen |= lua_isinteger(L, idx) ? 2 : 4; }
  else if (t == LUA_TUSERDATA && ltl_test(L, idx)) {
  tensor_case:;
    lt_tensor *x = ltl_test(L, idx);
    if (!x->storage)   /* (an argument error would number the stack slot) */
      ltl_error(L, "tensor", "element %s is a tensor that was freed", path);
    if (lt_numel(x) != 1 || x->ndim != 0)
      ltl_error(L, "tensor", "element %s is a tensor that is not 0-dimensional", path[0] ? path : "(root)");
    if (!sc->has_tensor) { sc->tensor_dt = x->dtype; sc->has_tensor = 1; }
    else if (sc->tensor_dt != x->dtype) sc->tensor_dt = lt_kind(x->dtype) > lt_kind(sc->tensor_dt) ? x->dtype : sc->tensor_dt;
    sc->seen |= 8;
  } else {
    ltl_error(L, "tensor", "element %s must be a number or boolean (got %s)",
               path[0] ? path : "(root)", luaL_typename(L, idx));
  }
  /* a leaf must sit at the innermost depth; deeper tables elsewhere are ragged */
  if (depth != sc->ndim)
    ltl_error(L, "tensor", "expected sequence of length %d at dim %d (got %s)",
               (int)sc->shape[depth], depth + 1, luaL_typename(L, idx));
}

static void fill_data(lua_State *L, int idx, int depth, int ndim, ltensor_dtype dt, char **p, size_t sz) {
  if (depth == ndim) { ltl_store_lua(L, idx, dt, *p); *p += sz; return; }
  int64_t n = (int64_t)lua_rawlen(L, idx);
  for (int64_t i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    fill_data(L, lua_gettop(L), depth + 1, ndim, dt, p, sz);
    lua_pop(L, 1);
  }
}

/* the options of the creation functions */
static const char *const CREATE_OPTS[] = {"dtype", "requires_grad", NULL};

static int l_tensor(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  ltl_checkany(L, 1);
  ltl_check_nargs(L, 2);   /* (data [, opts]) */
  if (!lua_isnoneornil(L, 2) && (lua_type(L, 2) != LUA_TTABLE || ltl_test(L, 2)))
    ltl_typeerror(L, 2, "options table");
  int has_opts = lua_type(L, 2) == LUA_TTABLE;
  if (has_opts) ltl_check_opts(L, 2, "tensor", CREATE_OPTS);
  lt_tensor *src = ltl_test(L, 1);
  if (src && !src->storage) ltl_argerror(L, 1, "tensor was freed");
  int requires_grad = ltl_opt_bool(L, 2, "requires_grad", 0);
  lt_tensor *out;
  if (src) {
    ltensor_dtype dt = ltl_opt_dtype(L, 2, src->dtype);
    if (!src->storage) ltl_argerror(L, 1, "tensor was freed");   /* (defensive: options parsed) */
    out = ltl_push_new_like(L, src, dt);
    lt_copy_into(out, src);
  } else {
    scan_t sc;
    memset(&sc, 0, sizeof sc);
    char path[256] = "";
    scan_data(L, 1, 0, &sc, path, 0);
    int64_t n = 1;
    for (int i = 0; i < sc.ndim; i++) n *= sc.shape[i];
    ltensor_dtype inferred;
    if (sc.seen & 8) inferred = sc.tensor_dt;
    else if (sc.seen & 4) inferred = S->default_dtype;
    else if (sc.seen & 2) inferred = LTENSOR_INT64;
    else if (sc.seen & 1) inferred = LTENSOR_BOOL;
    else inferred = S->default_dtype;            /* empty: T.tensor({}) is float32[0] */
    if ((sc.seen & 8) && (sc.seen & 4) && lt_kind(inferred) < LT_KIND_FLOAT) inferred = S->default_dtype;
    (void)n;
    ltensor_dtype dt = has_opts ? ltl_opt_dtype(L, 2, inferred) : inferred;
    out = ltl_push_new(L, dt, sc.ndim, sc.shape);
    char *p = lt_data(out);
    fill_data(L, 1, 0, sc.ndim, dt, &p, lt_itemsize(dt));
  }
  ltl_new_requires_grad(L, "tensor", out, requires_grad);
  return 1;
}

static lt_tensor *push_filled(lua_State *L, const char *fname, int first, int fill_kind, int value_idx) {
  ltl_settings *S = ltl_settings_of(L);
  int top = lua_gettop(L);
  int64_t shape[LT_MAX_DIMS];
  int ndim = ltl_checksize(L, first, top, shape, fname);
  int opts = lua_type(L, top) == LUA_TTABLE && top > first ? top : 0;
  if (lua_type(L, first) == LUA_TTABLE && top == first) opts = 0;
  ltensor_dtype def = S->default_dtype;
  if (fill_kind == 3) { /* full: infer from the value as torch.full does */
    if (lua_type(L, value_idx) == LUA_TBOOLEAN) def = LTENSOR_BOOL;
    else if (lua_isinteger(L, value_idx)) def = LTENSOR_INT64;
  }
  if (opts) ltl_check_opts(L, opts, fname, CREATE_OPTS);
  ltensor_dtype dt = opts ? ltl_opt_dtype(L, opts, def) : def;
  int rg = opts ? ltl_opt_bool(L, opts, "requires_grad", 0) : 0;
  lt_tensor *t = ltl_push_new(L, dt, ndim, shape);
  if (fill_kind == 0) lt_fill_i64(t, 0);
  else if (fill_kind == 1) lt_fill_i64(t, 1);
  else if (fill_kind == 3) {
    char buf[16];
    ltl_store_lua(L, value_idx, dt, buf);
    lt_tensor one = *t;
    one.ndim = 0;
    lt_storage st = *t->storage;
    st.data = buf;
    one.storage = &st;
    one.offset = 0;
    lt_copy_into(t, &one);
  }
  else memset(lt_data(t), 0, (size_t)lt_numel(t) * lt_itemsize(dt)); /* empty: zeroed, deterministic */
  ltl_new_requires_grad(L, fname, t, rg);
  return t;
}

static int l_empty(lua_State *L) { push_filled(L, "empty", 1, 2, 0); return 1; }
static int l_zeros(lua_State *L) { push_filled(L, "zeros", 1, 0, 0); return 1; }
static int l_ones(lua_State *L) { push_filled(L, "ones", 1, 1, 0); return 1; }
static int l_full(lua_State *L) {
  /* T.full(size, value [, opts]) where size is a table or an integer */
  ltl_checkany(L, 2);
  if (lua_type(L, 2) != LUA_TNUMBER && lua_type(L, 2) != LUA_TBOOLEAN)
    return ltl_typeerror(L, 2, "number or boolean");
  lua_pushvalue(L, 2);
  lua_insert(L, 1);           /* value, size, value, [opts] */
  lua_remove(L, 3);           /* value, size, [opts] */
  if (lua_type(L, 2) != LUA_TTABLE) {
    lua_Integer n = ltl_checkinteger(L, 2);
    lua_createtable(L, 1, 0);
    lua_pushinteger(L, n);
    lua_rawseti(L, -2, 1);
    lua_replace(L, 2);
  }
  if (lua_isnoneornil(L, 3)) { lua_settop(L, 2); lua_newtable(L); }
  push_filled(L, "full", 2, 3, 1);
  return 1;
}

static int like(lua_State *L, const char *fname, int kind) {
  lt_tensor *t = ltl_check(L, 1);
  int opts = kind == 3 ? 3 : 2;
  ltl_check_nargs(L, opts);   /* (t [, value] [, opts]) */
  if (!lua_isnoneornil(L, opts) && (lua_type(L, opts) != LUA_TTABLE || ltl_test(L, opts)))
    ltl_typeerror(L, opts, "options table");
  ltl_check_opts(L, opts, fname, CREATE_OPTS);
  ltensor_dtype dt = ltl_opt_dtype(L, opts, t->dtype);
  if (kind == 3 && lua_type(L, opts) != LUA_TTABLE) {
    if (lua_type(L, 2) == LUA_TBOOLEAN) {} /* keep t's dtype, like torch.full_like */
  }
  int rg = ltl_opt_bool(L, opts, "requires_grad", 0);
  lt_tensor *out = ltl_push_new_preserve(L, t, dt);
  if (kind == 0) lt_fill_i64(out, 0);
  else if (kind == 1) lt_fill_i64(out, 1);
  else if (kind == 2) memset(lt_data(out), 0, (size_t)lt_numel(out) * lt_itemsize(dt));
  else {
    char buf[16];
    ltl_store_lua(L, 2, dt, buf);
    lt_tensor one = *out;
    lt_storage st = *out->storage;
    st.data = buf;
    one.storage = &st;
    one.ndim = 0;
    one.offset = 0;
    lt_copy_into(out, &one);
  }
  ltl_new_requires_grad(L, fname, out, rg);
  return 1;
}
static int l_zeros_like(lua_State *L) { return like(L, "zeros_like", 0); }
static int l_ones_like(lua_State *L) { return like(L, "ones_like", 1); }
static int l_empty_like(lua_State *L) { return like(L, "empty_like", 2); }
static int l_full_like(lua_State *L) { ltl_checkany(L, 2); return like(L, "full_like", 3); }


/* ====================================================================== */
/* arange / linspace / logspace / eye                                     */
/* ====================================================================== */
static int l_arange(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  int top = lua_gettop(L), opts = 0;
  if (top >= 1 && lua_type(L, top) == LUA_TTABLE) opts = top--;
  if (top < 1 || top > 3) return ltl_error(L, "arange", "expected 1 to 3 numbers (start, end, step), got %d", top);
  ltl_check_opts(L, opts, "arange", CREATE_OPTS);
  int all_int = 1;
  for (int i = 1; i <= top; i++) {
    ltl_checknumber(L, i);
    if (!lua_isinteger(L, i)) all_int = 0;
  }
  int si = top == 1 ? 0 : 1, ei = top == 1 ? 1 : 2, ti = top == 3 ? 3 : 0;
  ltensor_dtype dt = ltl_opt_dtype(L, opts, all_int ? LTENSOR_INT64 : S->default_dtype);
  if (dt == LTENSOR_BOOL || lt_is_complex(dt))
    return ltl_error(L, "arange", "not implemented for %s", lt_dtypes[dt].name);
  double dstart = si ? lua_tonumber(L, si) : 0.0, dend = lua_tonumber(L, ei);
  double dstep = ti ? lua_tonumber(L, ti) : 1.0;
  int64_t start = 0, step = 1;   /* the integral dtypes' bounds */
  double size;
  if (lt_is_integral(dt)) {
    /* PyTorch converts the bounds to the integer accumulator first */
#define TOI(idx, def) ((idx) == 0 ? (int64_t)(def) : lua_isinteger(L, idx) ? (int64_t)lua_tointeger(L, idx) \
                                                   : lt_f64_to_i64(lua_tonumber(L, idx)))
    int64_t end = TOI(ei, 0);
    start = TOI(si, 0); step = TOI(ti, 1);
#undef TOI
    if (step == 0) return ltl_error(L, "arange", "step must be nonzero");
    if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
      return ltl_error(L, "arange", "upper bound and larger bound inconsistent with step sign");
    if (dt == LTENSOR_INT64) {
      /* exact |end - start| (< 2^64) without signed overflow */
      double diff = end >= start ? (double)((uint64_t)end - (uint64_t)start)
                                 : -(double)((uint64_t)start - (uint64_t)end);
      size = ceil(diff / (double)step);
    } else {
      size = ceil((dend - dstart) / dstep);
    }
  } else {
    if (dstep == 0) return ltl_error(L, "arange", "step must be nonzero");
    if (!isfinite(dstart) || !isfinite(dend))
      return ltl_error(L, "arange", "unsupported range: %f -> %f", dstart, dend);
    if (!((dstep > 0 && dend >= dstart) || (dstep < 0 && dend <= dstart)))
      return ltl_error(L, "arange", "upper bound and larger bound inconsistent with step sign");
    size = ceil((dend - dstart) / dstep);
  }
  if (!(size >= 0 && size <= 9.2233720368547748e18))
    return ltl_error(L, "arange", "invalid size, possible overflow?");
  int64_t n = (int64_t)size;
  lt_tensor *t = ltl_push_new(L, dt, 1, &n);
  char *p = lt_data(t);
  size_t sz = lt_itemsize(dt);
  if (lt_is_integral(dt))
    for (int64_t i = 0; i < n; i++)
      lt_store_i64(dt, p + (size_t)i * sz, (int64_t)((uint64_t)start + (uint64_t)step * (uint64_t)i));
  else
    for (int64_t i = 0; i < n; i++) lt_store_f64(dt, p + (size_t)i * sz, dstart + dstep * (double)i);
  ltl_new_requires_grad(L, "arange", t, ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}

/* T.linspace(start, end, steps [, opts]) and T.logspace(start, end, steps
   [, base] [, opts]).  Like PyTorch, the first half counts up from start
   and the second half down from end, so both ends are exact; float32 and
   half types compute in float, integral types in double. */
static int space(lua_State *L, const char *fname, int is_log) {
  ltl_settings *S = ltl_settings_of(L);
  double a = ltl_checknumber(L, 1), b = ltl_checknumber(L, 2);
  lua_Integer n = ltl_checkinteger(L, 3);
  double base = 10.0;
  int opts = 0;
  if (is_log && lua_type(L, 4) == LUA_TNUMBER) { base = lua_tonumber(L, 4); opts = 5; }
  else opts = 4;
  if (lua_type(L, opts) != LUA_TTABLE) opts = 0;
  ltl_check_opts(L, opts, fname, CREATE_OPTS);
  if (n < 0) return ltl_error(L, fname, "number of steps must be non-negative");
  ltensor_dtype dt = ltl_opt_dtype(L, opts, S->default_dtype);
  if (dt == LTENSOR_BOOL) return ltl_error(L, fname, "not implemented for bool");
  int64_t len = n;
  lt_tensor *t = ltl_push_new(L, dt, 1, &len);
  char *p = lt_data(t);
  size_t sz = lt_itemsize(dt);
  int64_t half = n / 2;
  /* start/end are first converted to the dtype, through the first element
     (none when steps is 0: linspace(a, b, 0, {dtype = int32}) wrote past
     an empty buffer) */
  if (lt_is_integral(dt) && !is_log && n > 0) {
    lt_store_f64(dt, p, a); a = lt_load_f64(dt, p);
    lt_store_f64(dt, p, b); b = lt_load_f64(dt, p);
  }
  int in_float = dt == LTENSOR_FLOAT32 || dt == LTENSOR_FLOAT16 || dt == LTENSOR_BFLOAT16 ||
                 dt == LTENSOR_COMPLEX64 || dt == LTENSOR_COMPLEX32;
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (n == 1) v = a;
    else if (in_float && !is_log) {
      float fa = (float)a, fb = (float)b, step = (fb - fa) / (float)(n - 1);
      v = i < half ? fa + step * (float)i : fb - step * (float)(n - i - 1);
    } else {
      double step = (b - a) / (double)(n - 1);
      v = i < half ? a + step * (double)i : b - step * (double)(n - i - 1);
    }
    if (is_log) v = pow(base, v);
    if (lt_is_complex(dt)) lt_store_c128(dt, p + (size_t)i * sz, v);
    else lt_store_f64(dt, p + (size_t)i * sz, v);
  }
  ltl_new_requires_grad(L, fname, t, ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}
static int l_linspace(lua_State *L) { return space(L, "linspace", 0); }
static int l_logspace(lua_State *L) { return space(L, "logspace", 1); }

static int l_eye(lua_State *L) {
  ltl_settings *S = ltl_settings_of(L);
  lua_Integer n = ltl_checkinteger(L, 1), m = n;
  int opts = 2;
  if (lua_type(L, 2) == LUA_TNUMBER) { m = ltl_checkinteger(L, 2); opts = 3; }
  if (lua_type(L, opts) != LUA_TTABLE) opts = 0;
  ltl_check_opts(L, opts, "eye", CREATE_OPTS);
  if (n < 0) return ltl_error(L, "eye", "n must be greater or equal to 0, got %I", (lua_Integer)n);
  if (m < 0) return ltl_error(L, "eye", "m must be greater or equal to 0, got %I", (lua_Integer)m);
  ltensor_dtype dt = ltl_opt_dtype(L, opts, S->default_dtype);
  int64_t shape[2] = { n, m };
  lt_tensor *t = ltl_push_new(L, dt, 2, shape);
  size_t sz = lt_itemsize(dt);
  char *p = lt_data(t);
  memset(p, 0, (size_t)(n * m) * sz);
  for (int64_t i = 0; i < n && i < m; i++) lt_store_i64(dt, p + (size_t)(i * m + i) * sz, 1);
  ltl_new_requires_grad(L, "eye", t, ltl_opt_bool(L, opts, "requires_grad", 0));
  return 1;
}

const ltl_reg ltl_reg_create[] = {
  {"arange", l_arange, LT_MODULE, NULL},
  {"linspace", l_linspace, LT_MODULE, NULL},
  {"logspace", l_logspace, LT_MODULE, NULL},
  {"eye", l_eye, LT_MODULE, NULL},
  {"tensor", l_tensor, LT_MODULE, NULL},
  {"empty", l_empty, LT_MODULE, NULL},
  {"zeros", l_zeros, LT_MODULE, NULL},
  {"ones", l_ones, LT_MODULE, NULL},
  {"full", l_full, LT_MODULE, NULL},
  {"empty_like", l_empty_like, LT_BOTH, NULL},
  {"zeros_like", l_zeros_like, LT_BOTH, NULL},
  {"ones_like", l_ones_like, LT_BOTH, NULL},
  {"full_like", l_full_like, LT_BOTH, NULL},
  {NULL, NULL, 0, NULL}
};
