/*
 * lt_search.h -- row kernels for search, counting, order statistics and
 * row scans (lt_search.c); Lua-free.  Operands are contiguous; f64 selects
 * float64 elements, else int64.  Positions and indices written are
 * 1-based (the Lua side's).
 */
#ifndef LT_SEARCH_H
#define LT_SEARCH_H

#include <stdint.h>
#include "lt_parallel.h"

/* seq [srows (1 or rows), n] sorted per row (through sorter [srows, n]
   when not NULL), vals [rows, m] -> dst [rows, m] insertion positions
   (PyTorch's + 1; right: after equal values); NaN sorts last. */
void lt_searchsorted_rows(int f64, const void *seq, int64_t srows, int64_t n, const void *vals, int64_t rows,
                          int64_t m, const int64_t *sorter, int right, int64_t *dst);
/* the largest of x[0..n) into *mx (-1 when n == 0); -1 (a negative value)
   or 0 */
int lt_bincount_max(const int64_t *x, int64_t n, int64_t *mx);
/* counts (int64, w NULL) or weight sums (float64) into out, zeroed by the
   caller and holding max(x) + 1 bins at least */
void lt_bincount(const int64_t *x, int64_t n, const double *w, void *out);
/* bins of equal width over [lo, hi] into d (bins doubles, zeroed by the
   caller); x == hi counts in the last bin, values outside and NaN are
   ignored; f32: the bin arithmetic in float (PyTorch's for float32) */
void lt_histc(const double *x, int64_t n, int64_t bins, double lo, double hi, int f32, double *d);
/* over k >= 2 ascending edges into d (k - 1 doubles, zeroed by the caller):
   bin i holds edges[i] <= x < edges[i+1], the last bin closed; w: weights
   or NULL; linear: evenly spaced edges (computed bin, corrected by one
   step), else a binary search */
void lt_histogram_edges(const double *x, int64_t n, const double *edges, int64_t k, const double *w, int linear,
                        double *d);

/* One index per row of x [rows, n]: LT_PICK_MODE, the most frequent value
   (the smallest on a tie, NaN last) and one of its indices; LT_PICK_KTH,
   the k-th smallest (k0 for every row, or ks[r]; 1 <= k <= n, checked by
   the caller) as the stable sorted row has it.  Split over `parts`
   threads of the pool (lt_pick_parts), each with its scratch of 2 *
   max(n, 1) int64 in `scratch` (parts of them). */
enum { LT_PICK_MODE = 0, LT_PICK_KTH = 1 };
int lt_pick_parts(int op, lt_pool *pool, int64_t rows, int64_t n);
void lt_pick_rows(int op, int f64, const void *x, int64_t rows, int64_t n, int64_t k0, const int64_t *ks,
                  int64_t *dst, void *scratch, lt_pool *pool, int parts);

/* running logaddexp along each row of src [rows, n] (float64) */
void lt_logcumsumexp_rows(const double *src, int64_t rows, int64_t n, double *dst);
/* index of the running max (is_max) or min along each row; a NaN wins and
   sticks, ties take the later index */
void lt_cumext_rows(int f64, const void *x, int64_t rows, int64_t n, int is_max, int64_t *dst);

#endif
