/*
 * l_search.c -- the C row kernels behind tensor/search.lua's and tensor/stats.lua's search, counting,
 * order statistics and row scans (lua/ltensor/tensor/ prepares
 * arguments, dtypes and errors).
 *
 * The kernels take contiguous float64 or int64 operands: the Lua side
 * converts first (exact for every real dtype but uint64 beyond 2^63), so each
 * kernel exists for two element types instead of eleven.
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
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "l_lua.h"

static int is_f64(const lt_tensor *t) { return t->dtype == LTENSOR_FLOAT64; }

static void need_rows(lua_State *L, const lt_tensor *t, const char *fname, int nd) {
  if (t->ndim != nd || !lt_is_contiguous(t) || !(t->dtype == LTENSOR_FLOAT64 || t->dtype == LTENSOR_INT64))
    ltl_error(L, fname, "internal: expected a contiguous %d-D float64/int64 tensor", nd);
}

/* PyTorch's cus_lower_bound / cus_upper_bound, written with the same
   negated comparisons so that NaN values land at the end. */
#define SS_LOOP(ctype)                                                                     \
  do {                                                                                     \
    const ctype *sq = (const ctype *)lt_data(seq), *vv = (const ctype *)lt_data(vals);     \
    for (int64_t r = 0; r < rows; r++) {                                                   \
      const ctype *srow = sq + (srows == 1 ? 0 : r * n);                                   \
      const int64_t *prow = sorter ? sorter + (srows == 1 ? 0 : r * n) : NULL;             \
      for (int64_t j = 0; j < m; j++) {                                                    \
        ctype v = vv[r * m + j];                                                           \
        int64_t lo = 0, hi = n;                                                            \
        while (lo < hi) {                                                                  \
          int64_t mid = lo + ((hi - lo) >> 1);                                             \
          ctype mv = prow ? srow[prow[mid]] : srow[mid];                                   \
          if (right ? !(mv > v) : !(mv >= v)) lo = mid + 1;                                \
          else hi = mid;                                                                   \
        }                                                                                  \
        dst[r * m + j] = lo + 1;                                                           \
      }                                                                                    \
    }                                                                                      \
  } while (0)

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
  int64_t *dst = (int64_t *)lt_data(out);
  if (n == 0) {
    for (int64_t i = 0; i < rows * m; i++) dst[i] = 1;
    return 1;
  }
  if (is_f64(seq)) SS_LOOP(double);
  else SS_LOOP(int64_t);
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
  int64_t mx = -1;
  for (int64_t i = 0; i < n; i++) {
    if (xs[i] < 0) return ltl_error(L, "bincount", "bincount only supports 1-d non-negative integral inputs.");
    if (xs[i] > mx) mx = xs[i];
  }
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
  if (w) {
    double *d = (double *)lt_data(out);
    const double *ws = (const double *)lt_data(w);
    for (int64_t i = 0; i < n; i++) d[xs[i]] += ws[i];
  } else {
    int64_t *d = (int64_t *)lt_data(out);
    for (int64_t i = 0; i < n; i++) d[xs[i]]++;
  }
  return 1;
}

/* histc: bins of equal width over [lo, hi]; x == hi counts in the last bin,
   values outside (and NaN) are ignored.  f32: the bin arithmetic in float,
   as PyTorch computes it for a float32 input. */
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
  double *d = (double *)lt_data(out);
  const double *xs = (const double *)lt_data(x);
  int64_t n = x->shape[0];
  for (int64_t i = 0; i < n; i++) {
    double v = xs[i];
    /* PyTorch 1.13's histc, operation for operation in the input's dtype:
       range check against the edges min and max rounded to it, then
       (x - min) / (max - min) * bins (the division first) truncated */
    int64_t pos;
    if (f32) {
      float fv = (float)v, flo = (float)lo, fhi = (float)hi;
      if (!(fv >= flo && fv <= fhi)) continue;
      pos = (int64_t)((fv - flo) / (fhi - flo) * (float)bins);
    } else {
      if (!(v >= lo && v <= hi)) continue;
      pos = (int64_t)((v - lo) / (hi - lo) * (double)bins);
    }
    if (pos >= bins) pos = bins - 1;
    if (pos < 0) pos = 0;
    d[pos] += 1;
  }
  return 1;
}

/* histogram over explicit edges (ascending, k >= 2 of them): bin i holds
   edges[i] <= x < edges[i+1], the last bin closed.  linear: the edges are
   evenly spaced, so the bin is computed and corrected by one step against
   the edges (PyTorch's LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH); otherwise
   a binary search. */
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
  double *d = (double *)lt_data(out);
  const double *xs = (const double *)lt_data(x), *ed = (const double *)lt_data(e);
  const double *ws = w ? (const double *)lt_data(w) : NULL;
  double lo = ed[0], hi = ed[k - 1];
  for (int64_t i = 0; i < n; i++) {
    double v = xs[i];
    if (!(v >= lo && v <= hi)) continue;
    int64_t pos;
    if (linear) {
      pos = (int64_t)((v - lo) * (double)nb / (hi - lo));
      if (pos > nb - 1) pos = nb - 1;
      if (pos < 0) pos = 0;
      if (v < ed[pos] && pos > 0) pos--;
      else if (pos + 1 < nb && v >= ed[pos + 1]) pos++;
    } else {
      int64_t a = 0, b = k;   /* upper bound: first edge > v */
      while (a < b) {
        int64_t mid = a + ((b - a) >> 1);
        if (!(ed[mid] > v)) a = mid + 1;
        else b = mid;
      }
      pos = a - 1;
      if (pos >= nb) pos = nb - 1;
    }
    d[pos] += ws ? ws[i] : 1.0;
  }
  return 1;
}

/* mode of each row: the most frequent value, the smallest one on a tie (a
   strict > over runs of the sorted row, as PyTorch's CPU kernel), with the
   original index of one of its occurrences. NaN sorts last. */
typedef struct { double v; int64_t i; } pair_f;
typedef struct { int64_t v; int64_t i; } pair_i;
static int cmp_f(const void *a, const void *b) {
  const pair_f *x = a, *y = b;
  int xn = isnan(x->v), yn = isnan(y->v);
  if (xn || yn) return xn - yn ? xn - yn : (x->i > y->i) - (x->i < y->i);
  if (x->v < y->v) return -1;
  if (x->v > y->v) return 1;
  return (x->i > y->i) - (x->i < y->i);
}
static int cmp_i(const void *a, const void *b) {
  const pair_i *x = a, *y = b;
  if (x->v < y->v) return -1;
  if (x->v > y->v) return 1;
  return (x->i > y->i) - (x->i < y->i);
}
#define SAME_F(a, b) ((a) == (b) || (isnan(a) && isnan(b)))
#define SAME_I(a, b) ((a) == (b))
/* one row: sort (value, index) pairs, the longest run's first index */
#define MODE_ROW(NAME, ptype, ctype, cmp, same)                                \
  static int64_t NAME(const void *row, int64_t n, void *scratch, int64_t k) { \
    (void)k;                                                                   \
    const ctype *src = row;                                                    \
    ptype *p = scratch;                                                        \
    for (int64_t j = 0; j < n; j++) { p[j].v = src[j]; p[j].i = j; }           \
    qsort(p, (size_t)n, sizeof(ptype), cmp);                                   \
    int64_t best = 0, bestf = 0, f = 0;                                        \
    for (int64_t j = 0; j < n; j++) {                                          \
      f++;                                                                     \
      if (j == n - 1 || !(same(p[j].v, p[j + 1].v))) {                         \
        if (f > bestf) { bestf = f; best = p[j].i; }                           \
        f = 0;                                                                 \
      }                                                                        \
    }                                                                          \
    return best;                                                               \
  }
MODE_ROW(mode_row_f, pair_f, double, cmp_f, SAME_F)
MODE_ROW(mode_row_i, pair_i, int64_t, cmp_i, SAME_I)

/* Rows of an f64 or int64 [rows, n] matrix, each reduced to one 1-based
   index by fn in its own scratch of n pairs, split over the state's pool. */
typedef int64_t (*row_pick)(const void *row, int64_t n, void *scratch, int64_t k);
typedef struct rowjob {
  row_pick fn; const char *src; int64_t *dst, n, k0; const int64_t *ks; char *scratch;
} rowjob;
static void rowjob_part(void *v, int64_t b, int64_t e, int t) {
  rowjob *j = v;
  void *scratch = j->scratch + (size_t)t * (size_t)j->n * sizeof(pair_f);
  for (int64_t r = b; r < e; r++)
    j->dst[r] = j->fn(j->src + (size_t)r * (size_t)j->n * 8, j->n, scratch, j->ks ? j->ks[r] : j->k0) + 1;
}
/* pushes the scratch (one row of pairs per part) and runs: cost is the
   work units of one row */
static void run_rowjob(lua_State *L, rowjob *j, int64_t rows, int64_t cost) {
  lt_pool *pool = ltl_settings_of(L)->pool;
  int parts = lt_parallel_parts(pool, rows * cost, LT_GRAIN, rows);
  int64_t sn = 2 * (j->n > 0 ? j->n : 1) * parts;   /* pairs are two int64 */
  j->scratch = lt_data(ltl_push_new(L, LTENSOR_INT64, 1, &sn));
  if (rows > 0 && j->n > 0) lt_parallel_run(pool, parts, rows, rowjob_part, j);
  lua_pop(L, 1);
}
static int l_mode_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  need_rows(L, x, "mode", 2);
  int64_t rows = x->shape[0], n = x->shape[1], lg = 1;
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 1, &rows);
  while ((INT64_C(1) << lg) < n && lg < 62) lg++;
  rowjob j = {is_f64(x) ? mode_row_f : mode_row_i, lt_data(x), (int64_t *)lt_data(out), n, 0, NULL, NULL};
  run_rowjob(L, &j, rows, n * lg * 4);
  return 1;
}

/* k-th smallest of each row in O(n): quickselect over (value, index)
   pairs ordered lexicographically, NaN largest.  The index tie-break makes
   every pair distinct, so the pick is exactly the k-th element of the
   stable sorted row (median's first NaN, kthvalue's first of equals). */
static inline int less_pf(const pair_f *a, const pair_f *b) {
  int an = isnan(a->v), bn = isnan(b->v);
  if (an != bn) return bn;
  if (!an && a->v != b->v) return a->v < b->v;
  return a->i < b->i;
}
static inline int less_pi(const pair_i *a, const pair_i *b) {
  return a->v != b->v ? a->v < b->v : a->i < b->i;
}
#define SELECT_IMPL(name, ptype, LESS)                                         \
  static void name(ptype *a, int64_t n, int64_t k) {                           \
    int64_t lo = 0, hi = n - 1;                                                \
    ptype tmp;                                                                 \
    while (hi > lo) {                                                          \
      int64_t mid = lo + (hi - lo) / 2;                                        \
      if (LESS(&a[mid], &a[lo])) { tmp = a[mid]; a[mid] = a[lo]; a[lo] = tmp; } \
      if (LESS(&a[hi], &a[lo])) { tmp = a[hi]; a[hi] = a[lo]; a[lo] = tmp; }    \
      if (LESS(&a[hi], &a[mid])) { tmp = a[hi]; a[hi] = a[mid]; a[mid] = tmp; } \
      ptype pivot = a[mid];                                                    \
      int64_t i = lo, j = hi;                                                  \
      while (i <= j) {                                                         \
        while (LESS(&a[i], &pivot)) i++;                                       \
        while (LESS(&pivot, &a[j])) j--;                                       \
        if (i <= j) { tmp = a[i]; a[i] = a[j]; a[j] = tmp; i++; j--; }         \
      }                                                                        \
      if (k <= j) hi = j;                                                      \
      else if (k >= i) lo = i;                                                 \
      else return;                                                             \
    }                                                                          \
  }
SELECT_IMPL(select_f, pair_f, less_pf)
SELECT_IMPL(select_i, pair_i, less_pi)

/* one row: quickselect the k-th (1-based) pair, its index */
#define KTH_ROW(NAME, ptype, ctype, sel)                                        \
  static int64_t NAME(const void *row, int64_t n, void *scratch, int64_t k) {  \
    const ctype *src = row;                                                     \
    ptype *p = scratch;                                                         \
    for (int64_t j = 0; j < n; j++) { p[j].v = src[j]; p[j].i = j; }            \
    sel(p, n, k - 1);                                                           \
    return p[k - 1].i;                                                          \
  }
KTH_ROW(kth_row_f, pair_f, double, select_f)
KTH_ROW(kth_row_i, pair_i, int64_t, select_i)

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
  rowjob j = {is_f64(x) ? kth_row_f : kth_row_i, lt_data(x), (int64_t *)lt_data(out), n, k0, ks, NULL};
  run_rowjob(L, &j, rows, n * 8);
  return 1;
}

/* ---- row scans: logcumsumexp, cummax/cummin's indices ------------------ */
static int l_logcumsumexp_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  need_rows(L, x, "logcumsumexp", 2);
  if (x->dtype != LTENSOR_FLOAT64) ltl_error(L, "logcumsumexp", "internal: expected a float64 tensor");
  lt_tensor *out = ltl_push_new(L, LTENSOR_FLOAT64, 2, x->shape);
  int64_t rows = x->shape[0], n = x->shape[1];
  const double *src = (const double *)lt_data(x);
  double *dst = (double *)lt_data(out);
  for (int64_t r = 0; r < rows; r++) {
    double acc = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
      double v = src[r * n + j];
      /* logaddexp(acc, v), exact for infinities and NaN-propagating */
      if (isnan(v) || isnan(acc)) acc = NAN;
      else {
        double hi = acc > v ? acc : v, lo = acc > v ? v : acc;
        if (hi == -INFINITY) acc = -INFINITY;
        else if (hi == INFINITY) acc = INFINITY;
        else acc = hi + log1p(exp(lo - hi));
      }
      dst[r * n + j] = acc;
    }
  }
  return 1;
}

/* 1-based index of the running max (is_max) or min; a NaN wins and sticks,
   a later NaN taking over the index, and ties take the later index: PyTorch's
   `isnan(x) || (!isnan(best) && x >= best)`. */
#define CUMEXT_LOOP(ctype, isnanf)                                             \
  do {                                                                         \
    const ctype *src = (const ctype *)lt_data(x);                              \
    for (int64_t r = 0; r < rows; r++) {                                       \
      const ctype *row = src + r * n;                                          \
      int64_t best = 0;                                                        \
      for (int64_t j = 0; j < n; j++) {                                        \
        ctype v = row[j], b = row[best];                                       \
        if (isnanf(v) || (!isnanf(b) && (is_max ? v >= b : v <= b))) best = j; \
        dst[r * n + j] = best + 1;                                             \
      }                                                                        \
    }                                                                          \
  } while (0)
#define NO_NAN(v) 0
static int l_cumext_rows(lua_State *L) {
  lt_tensor *x = ltl_check(L, 1);
  int is_max = lua_toboolean(L, 2);
  need_rows(L, x, "cummax", 2);
  lt_tensor *out = ltl_push_new(L, LTENSOR_INT64, 2, x->shape);
  int64_t rows = x->shape[0], n = x->shape[1];
  int64_t *dst = (int64_t *)lt_data(out);
  if (x->dtype == LTENSOR_FLOAT64) CUMEXT_LOOP(double, isnan);
  else CUMEXT_LOOP(int64_t, NO_NAN);
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
