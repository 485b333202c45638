/* lt_tensor.c -- storage lifetime, shape helpers, strided copy and fill. */
#include <stdlib.h>
#include <stdio.h>
#include "lt_tensor.h"

/* Under AddressSanitizer, the alignment slack around owned data is poisoned
   (LT_POISON, lt_alloc.h) so that an off-by-one access is reported instead
   of landing in padding. */

void lt_storage_init(lt_storage *s, char *data, size_t nbytes) {
  atomic_init(&s->refcount, 1);
  atomic_init(&s->version, 0);
  s->data = data;
  s->nbytes = nbytes;
  s->pool = NULL;
  s->block = NULL;
  s->block_size = 0;
  s->release = NULL;
  s->release_ud = NULL;
}

int lt_storage_alloc(lt_storage *s, lt_alloc *A, size_t nbytes, int cached_only) {
  void *block;
  size_t size;
  int rc = lt_alloc_block(A, nbytes, cached_only, &block, &size);
  if (rc != LT_ALLOC_OK) return rc;
  lt_storage_init(s, lt_alloc_data(block), nbytes);
  s->pool = A;
  s->block = block;
  s->block_size = size;
  LT_POISON((char *)block, (size_t)(s->data - (char *)block));
  LT_POISON(s->data + nbytes, (size_t)((char *)block + size - (s->data + nbytes)));
  return LT_ALLOC_OK;
}

/* Detach the heap block (unpoisoned); NULL if there is none. */
static void *detach_block(lt_storage *s) {
  void *block = s->block;
  s->block = NULL;
  s->data = NULL;
  s->nbytes = 0;
  if (block) LT_UNPOISON(block, s->block_size);
  return block;
}

void lt_storage_release(lt_storage *s) {
  if (s->block) {
    void *block = detach_block(s);
    lt_alloc_release(s->pool, block, s->block_size);
  }
  lt_storage_free(s);   /* the external release, if any */
}

void lt_storage_set_external(lt_storage *s, void *data, size_t nbytes, void (*release)(void *), void *ud) {
  lt_storage_init(s, data, nbytes);
  s->release = release;
  s->release_ud = ud;
}

void lt_storage_retain(lt_storage *s) { atomic_fetch_add(&s->refcount, 1); }

void lt_storage_free(lt_storage *s) {
  if (s->block) {
    void *block = detach_block(s);
    lt_alloc_free(s->pool, block, s->block_size);
  }
  if (s->release) {
    void (*release)(void *) = s->release;
    s->release = NULL;
    release(s->release_ud);
  }
  s->data = NULL;
  s->nbytes = 0;
}

int64_t lt_numel(const lt_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

void lt_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    stride[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
}

/* Contiguity as PyTorch defines it: dims of size 1 may have any stride. */
bool lt_is_contiguous(const lt_tensor *t) {
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] == 0) return true;
    if (t->shape[i] == 1) continue;
    if (t->stride[i] != expected) return false;
    expected *= t->shape[i];
  }
  return true;
}

char *lt_elem_ptr(const lt_tensor *t, const int64_t *idx) {
  int64_t off = t->offset;
  for (int i = 0; i < t->ndim; i++) off += idx[i] * t->stride[i];
  return t->storage->data + off * (int64_t)lt_itemsize(t->dtype);
}

bool lt_has_internal_overlap(const lt_tensor *t) {
  /* sufficient test used by PyTorch: a stride 0 on a dim of size > 1 */
  for (int i = 0; i < t->ndim; i++)
    if (t->stride[i] == 0 && t->shape[i] > 1) return true;
  /* sort dims by stride; each stride must exceed the span of smaller ones */
  int order[LT_MAX_DIMS], n = 0;
  for (int i = 0; i < t->ndim; i++) if (t->shape[i] > 1) order[n++] = i;
  for (int i = 1; i < n; i++) {
    int k = order[i], j = i - 1;
    while (j >= 0 && t->stride[order[j]] > t->stride[k]) { order[j + 1] = order[j]; j--; }
    order[j + 1] = k;
  }
  int64_t span = 0;
  for (int i = 0; i < n; i++) {
    int d = order[i];
    if (t->stride[d] <= span) return true;
    span += t->stride[d] * (t->shape[d] - 1);
  }
  return false;
}

/* the bytes from t's lowest to its highest element, [*lo, *hi) */
static void byte_range(const lt_tensor *t, int64_t *lo, int64_t *hi) {
  int64_t a = t->offset, b = t->offset;
  for (int i = 0; i < t->ndim; i++) {
    int64_t d = t->stride[i] * (t->shape[i] - 1);
    if (d < 0) a += d; else b += d;
  }
  int64_t isz = (int64_t)lt_itemsize(t->dtype);
  *lo = a * isz;
  *hi = (b + 1) * isz;
}

bool lt_may_overlap(const lt_tensor *a, const lt_tensor *b) {
  if (a->storage != b->storage || lt_numel(a) == 0 || lt_numel(b) == 0) return false;
  int64_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

bool lt_is_dense(const lt_tensor *t) {
  int nd = t->ndim, perm[LT_MAX_DIMS];
  for (int i = 0; i < nd; i++) perm[i] = i;
  /* sort by stride, size-1 dims last (their stride says nothing) */
  for (int i = 1; i < nd; i++) {
    int d = perm[i], j = i;
    for (; j > 0; j--) {
      int e = perm[j - 1];
      int before = t->shape[d] >= 2 && (t->shape[e] < 2 || t->stride[d] < t->stride[e]);
      if (!before) break;
      perm[j] = e;
    }
    perm[j] = d;
  }
  int64_t want = 1;
  for (int i = 0; i < nd; i++) {
    int d = perm[i];
    if (t->shape[d] == 1) continue;
    if (t->stride[d] != want) return false;
    want *= t->shape[d];
  }
  return true;
}

int lt_broadcast_into(int *accnd, int64_t *acc, int bnd, const int64_t *b) {
  int nd = *accnd > bnd ? *accnd : bnd;
  int64_t out[LT_MAX_DIMS];
  for (int i = nd - 1; i >= 0; i--) {
    int ia = i - (nd - *accnd), ib = i - (nd - bnd);
    int64_t sa = ia >= 0 ? acc[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa == sb || sb == 1) out[i] = sa;
    else if (sa == 1) out[i] = sb;
    else return i;
  }
  for (int i = 0; i < nd; i++) acc[i] = out[i];
  *accnd = nd;
  return -1;
}

int lt_broadcast_shape(const lt_tensor *const *ts, int n, int *ndim, int64_t *shape,
                       int64_t *bad_a, int64_t *bad_b, int *bad_dim) {
  int nd = 0;
  for (int k = 0; k < n; k++) {
    const lt_tensor *t = ts[k];
    int i = lt_broadcast_into(&nd, shape, t->ndim, t->shape);
    if (i >= 0) {
      int rd = nd > t->ndim ? nd : t->ndim, ia = i - (rd - nd), ib = i - (rd - t->ndim);
      *bad_a = ia >= 0 ? shape[ia] : 1;
      *bad_b = ib >= 0 ? t->shape[ib] : 1;
      *bad_dim = i + 1;
      return -1;
    }
  }
  *ndim = nd;
  return 0;
}

void lt_broadcast_strides(const lt_tensor *t, int nd, const int64_t *shape, int64_t *st) {
  int off = nd - t->ndim;
  for (int i = 0; i < nd; i++) {
    int j = i - off;
    st[i] = (j < 0 || (t->shape[j] == 1 && shape[i] != 1)) ? 0 : t->stride[j];
  }
}

const char *lt_shape_str(char *buf, size_t n, int nd, const int64_t *s, const char *brackets) {
  size_t k = (size_t)snprintf(buf, n, "%c", brackets[0]);
  for (int i = 0; i < nd && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)s[i]);
  if (k < n) snprintf(buf + k, n - k, "%c", brackets[1]);
  return buf;
}

/* a * b into *r, or 0 when it overflows int64 (a, b >= 0) */
static int mul_fits(int64_t a, int64_t b, int64_t *r) {
  if (a != 0 && b > INT64_MAX / a) return 0;
  *r = a * b;
  return 1;
}

int lt_check_shape(int ndim, const int64_t *shape, const int64_t *stride, int64_t offset) {
  int64_t n = 1;   /* product of max(size, 1): the contiguous strides and the element count */
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return -1;
    if (!mul_fits(n, shape[i] > 1 ? shape[i] : 1, &n)) return -1;
  }
  if (!stride) return 0;
  if (offset < 0) return -1;
  int64_t span = offset;   /* the farthest element's offset */
  for (int i = 0; i < ndim; i++) {
    if (shape[i] <= 1) continue;
    int64_t st = stride[i], d;
    if (st == INT64_MIN) return -1;
    if (!mul_fits(st < 0 ? -st : st, shape[i] - 1, &d)) return -1;
    if (d > INT64_MAX - span) return -1;
    span += d;
  }
  return 0;
}
