/* lt_sort.c -- stable sort along one dim, and topk's first k (Lua-free).
 *
 * Each row of the dim is cast into 8-byte keys of its compute class
 * (double, int64 or uint64), a permutation is merge-sorted by them, and the
 * first k of the order are written out (values copied from the input
 * itself).  Rows are walked with the reduction plan (lt_reduce_common.h)
 * and split over the pool, each part with its own scratch.
 */
#include <string.h>
#include "lt_sort.h"
#include "lt_reduce_common.h"

/* Stable bottom-up merge sort of a permutation by keys.  NaN sorts as the
   largest value (last ascending, first descending), as in PyTorch. */
#define F_LESS(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
#define F_GREATER(a, b) ((a) > (b) || ((a) != (a) && (b) == (b)))
#define I_LESS(a, b) ((a) < (b))
#define I_GREATER(a, b) ((a) > (b))
#define MERGE_SORT(NAME, T, BEFORE)                                           \
  static void NAME(const T *key, int64_t *perm, int64_t *tmp, int64_t n) {   \
    for (int64_t w = 1; w < n; w *= 2) {                                     \
      for (int64_t lo = 0; lo < n; lo += 2 * w) {                            \
        int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n; \
        int64_t i = lo, j = mid, o = lo;                                     \
        while (i < mid && j < hi)                                            \
          tmp[o++] = BEFORE(key[perm[j]], key[perm[i]]) ? perm[j++] : perm[i++]; \
        while (i < mid) tmp[o++] = perm[i++];                                \
        while (j < hi) tmp[o++] = perm[j++];                                 \
      }                                                                      \
      memcpy(perm, tmp, (size_t)n * sizeof *perm);                           \
    }                                                                        \
  }
MERGE_SORT(sort_f_asc, double, F_LESS)
MERGE_SORT(sort_f_desc, double, F_GREATER)
MERGE_SORT(sort_i_asc, int64_t, I_LESS)
MERGE_SORT(sort_i_desc, int64_t, I_GREATER)
MERGE_SORT(sort_u_asc, uint64_t, I_LESS)
MERGE_SORT(sort_u_desc, uint64_t, I_GREATER)

typedef struct sort_ctx {
  acc c;
  void *keys; int64_t *perm, *tmp;
  int64_t k; int desc;
  char *vals; int64_t vsz; ltensor_dtype vdt;
  int64_t *idx;
} sort_ctx;

static void row_sort(void *vc, const char *in, int64_t o) {
  sort_ctx *s = vc;
  const plan *p = s->c.p;
  int64_t n = p->nred, isz = (int64_t)lt_itemsize(s->c.idt);
  int64_t rs = p->istr0[0] * isz, ws = p->istr1[0];
  lt_cast_kernel(s->c.idt, s->c.bdt)(in, rs, s->keys, 8, n);
  for (int64_t i = 0; i < n; i++) s->perm[i] = i;
  switch (s->c.cls) {
  case CLS_F: (s->desc ? sort_f_desc : sort_f_asc)(s->keys, s->perm, s->tmp, n); break;
  case CLS_U: (s->desc ? sort_u_desc : sort_u_asc)(s->keys, s->perm, s->tmp, n); break;
  default: (s->desc ? sort_i_desc : sort_i_asc)(s->keys, s->perm, s->tmp, n);
  }
  /* values are copied from the input itself: exact whatever the key type */
  for (int64_t j = 0; j < s->k; j++) {
    if (s->vals) memcpy(s->vals + (o + j * ws) * s->vsz, in + s->perm[j] * rs, (size_t)s->vsz);
    if (s->idx) s->idx[o + j * ws] = s->perm[j] + 1;
  }
}

/* merge sort costs about n log2 n compares of a few ns: one unit each */
int lt_sort_parts(const lt_tensor *in, int dim, lt_pool *pool) {
  int64_t n = in->ndim ? in->shape[dim] : 1, rows = n ? lt_numel(in) / n : 0, lg = 1;
  while ((INT64_C(1) << lg) < n && lg < 62) lg++;
  return lt_parallel_parts(pool, rows * n * lg, LT_GRAIN, rows);
}

typedef struct sort_par { const sort_ctx *proto; const lt_tensor *in; int64_t n; } sort_par;
static void sort_part(void *v, int64_t b, int64_t e, int t) {
  sort_par *sp = v;
  sort_ctx s = *sp->proto;   /* each part sorts in its own scratch */
  s.keys = (char *)s.keys + (size_t)t * (size_t)sp->n * 8;
  s.perm += (size_t)t * (size_t)sp->n;
  s.tmp += (size_t)t * (size_t)sp->n;
  run_rows_part(s.c.p, sp->in, row_sort, &s, b, e);
}

void lt_sort(lt_tensor *vals, lt_tensor *idx, const lt_tensor *in, int dim, int descending, int64_t k,
             void *keys, int64_t *perm, int64_t *tmp, int parts, lt_pool *pool) {
  if (k == 0) return;
  plan p;
  const lt_tensor *shape_of = vals ? vals : idx;
  plan_init(&p, in, shape_of->stride, in->ndim ? 1u << dim : 0u);
  sort_ctx s;
  memset(&s, 0, sizeof s);
  s.c.p = &p; s.c.idt = in->dtype;
  s.c.cls = cls_of(in->dtype);
  s.c.bdt = cls_dtype(s.c.cls);
  s.keys = keys; s.perm = perm; s.tmp = tmp; s.k = k; s.desc = descending;
  if (vals) { s.vals = lt_data(vals); s.vsz = (int64_t)lt_itemsize(vals->dtype); s.vdt = vals->dtype; }
  if (idx) s.idx = (int64_t *)lt_data(idx);
  sort_par sp = {&s, in, p.nred};
  lt_parallel_run(pool, parts, p.nout, sort_part, &sp);
}
