/*
 * l_search.c -- the binding of the row kernels behind tensor/search.lua's and
 * tensor/stats.lua's search, counting, order statistics and row scans
 * (src/core/lt_search.c): argument checks and allocation (lua/ltensor/tensor/
 * prepares arguments, dtypes and errors).
 *
 *   _searchsorted_rows(seq, vals, right [, sorter])  seq [1 or rows, n], vals [rows, m]
 *        -> int64 [rows, m] 1-based insertion positions (PyTorch's + 1)
 *   _bincount(x [, weights], minlength)              x int64 1-D >= 0
 *   _histc(x, bins, lo, hi, f32)                     x float64 1-D -> float64 counts
 *   _histogram_edges(x, edges [, weights], linear)   -> float64 counts per bin
 *   _mode_rows(x)                                    x [rows, n] -> int64 [rows] 1-based index
 *   _kth_rows(x, k)                                  x [rows, n] -> int64 [rows] index of the k-th smallest
 *   _logcumsumexp_rows(x)                            x float64 [rows, n] -> scan along n
 *   _cumext_rows(x, is_max)                          x [rows, n] -> int64 1-based arg of the running max/min
 */
#include "l_lua.h"
#include "lt_search.h"

static int is_f64(const lt_tensor *t) { return t->dtype == LTENSOR_FLOAT64; }

static void need_rows(lua_State *L, const lt_tensor *t, const char *fname, int nd) {
  if (t->ndim != nd || !lt_is_contiguous(t) || !(t->dtype == LTENSOR_FLOAT64 || t->dtype == LTENSOR_INT64))
    ltl_error(L, fname, "internal: expected a contiguous %d-D float64/int64 tensor", nd);
}

static int l_searchsorted_rows(lua_State *L) {
  lt_tensor *seq = ltl_check(L, 1), *vals = ltl_check(L, 2);
  int right = lua_toboolean(L, 3);
  lt_tensor *so = lua_isnoneornil(L, 4) ? NULL : ltl_check(L, 4);
  need_rows(L, seq, "searchsorted", 2);
  need_rows(L, vals, "searchsorted", 2);
  if (seq->dtype != vals->dtype) return ltl_error(L, "searchsorted", "internal: dtypes differ");
  int64_t srows = seq->shape[0], n = seq->shape[1], rows = vals->shape[0], m = vals->shape[1];
  if (srows != 1 && srows != rows) return ltl_error(L, "searchsorted", "internal: row counts differ");
  const int64_t *sorter = NULL;
  if (so) {
    if (so->dtype != LTENSOR_INT64 || !lt_is_contiguous(so) || lt_numel(so) != srows * n)
      return ltl_error(L, "searchsorted", "internal: bad sorter");
    sorter = (const int64_t *)lt_data(so);
  }
  int64_t shape[2] = {rows, m};
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 2, shape);
  lt_searchsorted_rows(is_f64(seq), lt_data(seq), srows, n, lt_data(vals), rows, m, sorter, right,
                       (int64_t *)lt_data(out));
  return 1;
}

/* (x int64 1-D non-negative, weights float64 1-D or nil, minlength) */
static int l_bincount(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  lt_tensor *w = lua_isnoneornil(L, 2) ? NULL : ltl_check(L, 2);
  lua_Integer minlength = ltl_checkinteger(L, 3);
  need_rows(L, x, "bincount", 1);
  int64_t n = x->shape[0];
  const int64_t *xs = (const int64_t *)lt_data(x);
  if (w && (w->dtype != LTENSOR_FLOAT64 || !lt_is_contiguous(w) || lt_numel(w) != n))
    return ltl_error(L, "bincount", "internal: bad weights");
  int64_t mx;
  if (lt_bincount_max(xs, n, &mx) != 0)
    return ltl_error(L, "bincount", "bincount only supports 1-d non-negative integral inputs.");
  /* checked before mx + 1, which overflows for INT64_MAX; past 2^40 bins
     the output could not be allocated anyway */
  const int64_t cap = (int64_t)1 << 40;
  if (mx >= cap)
    return ltl_error(L, "bincount", "input value %I needs more bins than can be allocated", (lua_Integer)mx);
  if (minlength > cap)
    return ltl_error(L, "bincount", "minlength %I is more bins than can be allocated", minlength);
  int64_t nb = mx + 1 > minlength ? mx + 1 : minlength;
  lt_tensor *out = ltl_push_new(L, w ? LTENSOR_FLOAT64 : LTENSOR_INT64, 1, &nb);
  lt_fill_i64(out, 0);
  lt_bincount(xs, n, w ? (const double *)lt_data(w) : NULL, lt_data(out));
  return 1;
}

/* histc: bins of equal width over [lo, hi] (lt_histc) */
static int l_histc(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  lua_Integer bins = ltl_checkinteger(L, 2);
  double lo = ltl_checknumber(L, 3), hi = ltl_checknumber(L, 4);
  int f32 = lua_toboolean(L, 5);
  need_rows(L, x, "histc", 1);
  if (!is_f64(x)) return ltl_error(L, "histc", "internal: expected float64");
  if (bins <= 0) return ltl_error(L, "histc", "bins must be > 0");
  int64_t nb = bins;
  lt_tensor *out = ltl_push_new(L, LTENSOR_FLOAT64, 1, &nb);
  lt_fill_i64(out, 0);
  lt_histc((const double *)lt_data(x), x->shape[0], nb, lo, hi, f32, (double *)lt_data(out));
  return 1;
}

/* histogram over explicit edges (lt_histogram_edges) */
static int l_histogram_edges(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1), *e = ltl_check(L, 2);
  lt_tensor *w = lua_isnoneornil(L, 3) ? NULL : ltl_check(L, 3);
  int linear = lua_toboolean(L, 4);
  need_rows(L, x, "histogram", 1);
  need_rows(L, e, "histogram", 1);
  if (!is_f64(x) || !is_f64(e)) return ltl_error(L, "histogram", "internal: expected float64");
  int64_t n = x->shape[0], k = e->shape[0];
  if (k < 2) return ltl_error(L, "histogram", "internal: need two edges");
  if (w && (w->dtype != LTENSOR_FLOAT64 || !lt_is_contiguous(w) || lt_numel(w) != n))
    return ltl_error(L, "histogram", "internal: bad weights");
  int64_t nb = k - 1;
  lt_tensor *out = ltl_push_new(L, LTENSOR_FLOAT64, 1, &nb);
  lt_fill_i64(out, 0);
  lt_histogram_edges((const double *)lt_data(x), n, (const double *)lt_data(e), k,
                     w ? (const double *)lt_data(w) : NULL, linear, (double *)lt_data(out));
  return 1;
}

/* mode / k-th value of each row: pushes the scratch (one row of pairs per
   part, as a tensor the collector frees) and runs lt_pick_rows */
static void pick_rows(lua_State *L, int op, const lt_tensor *x, int64_t k0, const int64_t *ks, lt_tensor *out) {
  lt_pool *pool = ltl_settings_of(L)->pool;
  int64_t rows = x->shape[0], n = x->shape[1];
  int parts = lt_pick_parts(op, pool, rows, n);
  int64_t sn = 2 * (n > 0 ? n : 1) * parts;   /* pairs are two int64 */
  void *scratch = lt_data(ltl_push_new(L, LTENSOR_INT64, 1, &sn));
  lt_pick_rows(op, is_f64(x), lt_data(x), rows, n, k0, ks, (int64_t *)lt_data(out), scratch, pool, parts);
  lua_pop(L, 1);
}
static int l_mode_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  need_rows(L, x, "mode", 2);
  int64_t rows = x->shape[0];
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 1, &rows);
  pick_rows(L, LT_PICK_MODE, x, 0, NULL, out);
  return 1;
}

/* _kth_rows(x [rows, n], k): k a 1-based integer for every row or an int64
   tensor [rows] of them -> int64 [rows], the 1-based original index */
static int l_kth_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  need_rows(L, x, "kthvalue", 2);
  int64_t rows = x->shape[0], n = x->shape[1];
  const int64_t *ks = NULL;
  int64_t k0 = 1;
  if (lua_isinteger(L, 2)) k0 = lua_tointeger(L, 2);
  else {
    lt_tensor *kt = ltl_check(L, 2);
    if (kt->dtype != LTENSOR_INT64 || !lt_is_contiguous(kt) || lt_numel(kt) != rows)
      return ltl_error(L, "kthvalue", "internal: bad k tensor");
    ks = (const int64_t *)lt_data(kt);
  }
  /* validate every k before touching memory */
  for (int64_t r = 0; r < rows; r++) {
    int64_t k = ks ? ks[r] : k0;
    if (k < 1 || k > n) return ltl_error(L, "kthvalue", "selected number k out of range");
  }
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 1, &rows);
  pick_rows(L, LT_PICK_KTH, x, k0, ks, out);
  return 1;
}

/* ---- row scans: logcumsumexp, cummax/cummin's indices ------------------ */
static int l_logcumsumexp_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  need_rows(L, x, "logcumsumexp", 2);
  if (x->dtype != LTENSOR_FLOAT64) ltl_error(L, "logcumsumexp", "internal: expected a float64 tensor");
  lt_tensor *out = ltl_push_new(L, LTENSOR_FLOAT64, 2, x->shape);
  lt_logcumsumexp_rows((const double *)lt_data(x), x->shape[0], x->shape[1], (double *)lt_data(out));
  return 1;
}

static int l_cumext_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  int is_max = lua_toboolean(L, 2);
  need_rows(L, x, "cummax", 2);
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 2, x->shape);
  lt_cumext_rows(is_f64(x), lt_data(x), x->shape[0], x->shape[1], is_max, (int64_t *)lt_data(out));
  return 1;
}

const ltl_reg ltl_reg_search[] = {
  {"_searchsorted_rows", l_searchsorted_rows, LT_MODULE, NULL},
  {"_bincount", l_bincount, LT_MODULE, NULL},
  {"_histc", l_histc, LT_MODULE, NULL},
  {"_histogram_edges", l_histogram_edges, LT_MODULE, NULL},
  {"_mode_rows", l_mode_rows, LT_MODULE, NULL},
  {"_kth_rows", l_kth_rows, LT_MODULE, NULL},
  {"_logcumsumexp_rows", l_logcumsumexp_rows, LT_MODULE, NULL},
  {"_cumext_rows", l_cumext_rows, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
