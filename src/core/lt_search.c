/*
 * lt_search.c -- the row kernels behind structural.lua's search, counting,
 * order statistics and row scans; Lua-free (src/binding/l_search.c checks
 * the arguments and allocates; lua/ltensor/structural.lua prepares dtypes
 * and errors).
 *
 * The kernels take contiguous float64 or int64 operands (f64: which): the
 * Lua side converts first (exact for every real dtype but uint64 beyond
 * 2^63), so each kernel exists for two element types instead of eleven.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lt_search.h"

/* PyTorch's cus_lower_bound / cus_upper_bound, written with the same
   negated comparisons so that NaN values land at the end. */
#define SS_LOOP(ctype)                                                                     \
  do {                                                                                     \
    const ctype *sq = (const ctype *)seq, *vv = (const ctype *)vals;                       \
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

void lt_searchsorted_rows(int f64, const void *seq, int64_t srows, int64_t n, const void *vals, int64_t rows,
                          int64_t m, const int64_t *sorter, int right, int64_t *dst) {
  if (n == 0) {
    for (int64_t i = 0; i < rows * m; i++) dst[i] = 1;
    return;
  }
  if (f64) SS_LOOP(double);
  else SS_LOOP(int64_t);
}

int lt_bincount_max(const int64_t *xs, int64_t n, int64_t *mx) {
  *mx = -1;
  for (int64_t i = 0; i < n; i++) {
    if (xs[i] < 0) return -1;
    if (xs[i] > *mx) *mx = xs[i];
  }
  return 0;
}

void lt_bincount(const int64_t *xs, int64_t n, const double *ws, void *out) {
  if (ws) {
    double *d = out;
    for (int64_t i = 0; i < n; i++) d[xs[i]] += ws[i];
  } else {
    int64_t *d = out;
    for (int64_t i = 0; i < n; i++) d[xs[i]]++;
  }
}

void lt_histc(const double *xs, int64_t n, int64_t bins, double lo, double hi, int f32, double *d) {
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
}

void lt_histogram_edges(const double *xs, int64_t n, const double *ed, int64_t k, const double *ws, int linear,
                        double *d) {
  int64_t nb = k - 1;
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

/* work units of one row: a sort (n log n) for the mode, a selection for kth */
static int64_t row_cost(int op, int64_t n) {
  int64_t lg = 1;
  if (op == LT_PICK_KTH) return n * 8;
  while ((INT64_C(1) << lg) < n && lg < 62) lg++;
  return n * lg * 4;
}
int lt_pick_parts(int op, lt_pool *pool, int64_t rows, int64_t n) {
  return lt_parallel_parts(pool, rows * row_cost(op, n), LT_GRAIN, rows);
}

void lt_pick_rows(int op, int f64, const void *x, int64_t rows, int64_t n, int64_t k0, const int64_t *ks,
                  int64_t *dst, void *scratch, lt_pool *pool, int parts) {
  row_pick fn = op == LT_PICK_KTH ? (f64 ? kth_row_f : kth_row_i) : (f64 ? mode_row_f : mode_row_i);
  rowjob j = {fn, x, dst, n, k0, ks, scratch};
  if (rows > 0 && n > 0) lt_parallel_run(pool, parts, rows, rowjob_part, &j);
}

/* ---- row scans: logcumsumexp, cummax/cummin's indices ------------------ */
void lt_logcumsumexp_rows(const double *src, int64_t rows, int64_t n, double *dst) {
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
}

/* 1-based index of the running max (is_max) or min; a NaN wins and sticks,
   a later NaN taking over the index, and ties take the later index: PyTorch's
   `isnan(x) || (!isnan(best) && x >= best)`. */
#define CUMEXT_LOOP(ctype, isnanf)                                             \
  do {                                                                         \
    const ctype *src = (const ctype *)x;                                       \
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
void lt_cumext_rows(int f64, const void *x, int64_t rows, int64_t n, int is_max, int64_t *dst) {
  if (f64) CUMEXT_LOOP(double, isnan);
  else CUMEXT_LOOP(int64_t, NO_NAN);
}
