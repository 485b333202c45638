/*
 * lt_tensor.h -- storage and strided tensor views (Lua-free core).
 *
 * A storage is a reference-counted block of bytes shared by every view of
 * it.  A tensor is (storage, offset, shape, strides, dtype); offset and
 * strides are in elements.  Functions here never raise: a failure is a
 * return value (0 or -1, with the details the message needs in out
 * parameters, as lt_broadcast_shape), and the error text is the binding
 * layer's.
 */
#ifndef LT_TENSOR_H
#define LT_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include "lt_dtype.h"
#include "lt_alloc.h"

#define LT_MAX_DIMS LTENSOR_MAX_DIMS

/* The bytes behind one or more tensors.  Where it lives (the binding layer
   decides): inside a small tensor's own userdata, or in a storage userdata
   whose finalizer gives `block` back to its allocator or calls `release` --
   the Lua collector keeps it alive exactly as long as some tensor
   references it. */
typedef struct lt_storage {
  atomic_long refcount;        /* tensors ever given this storage (1 + views); never
                                  decremented: free() releases memory early only at 1 */
  char *data;                  /* aligned to 64 bytes for heap memory; NULL once freed */
  size_t nbytes;
  /* heap memory: a block of the state's caching allocator (lt_alloc.h) */
  lt_alloc *pool;
  void *block;
  size_t block_size;
  /* external memory (ltensor_push_external): release(release_ud) once */
  void (*release)(void *ud);
  void *release_ud;
  /* bumped by every in-place write; autograd compares saved versions */
  atomic_llong version;
} lt_storage;

typedef struct lt_tensor {
  lt_storage *storage;         /* NULL only while half-built or after free */
  int64_t offset;              /* in elements */
  ltensor_dtype dtype;
  int ndim;
  bool requires_grad;          /* autograd flag, read by the op trampoline */
  int64_t shape[LT_MAX_DIMS];
  int64_t stride[LT_MAX_DIMS]; /* in elements */
} lt_tensor;

/* Storage set-up and release (never raise). */
void lt_storage_init(lt_storage *s, char *data, size_t nbytes);           /* unowned bytes */
/* Heap data from the state's allocator (a cached block when one of the size
   class is free; cached_only: no new memory).  Returns LT_ALLOC_OK, or
   LT_ALLOC_NOMEM / LT_ALLOC_OVER_LIMIT with s unchanged. */
int lt_storage_alloc(lt_storage *s, lt_alloc *A, size_t nbytes, int cached_only);
void lt_storage_set_external(lt_storage *s, void *data, size_t nbytes, void (*release)(void *), void *ud);
void lt_storage_retain(lt_storage *s);     /* one more tensor views it */
void lt_storage_free(lt_storage *s);       /* idempotent: frees heap data at once / calls release */
void lt_storage_release(lt_storage *s);    /* idempotent: like free, the block goes to the cache */

/* Shape bounds, checked once wherever a tensor is made (creation, views,
   loaders): the element count, and the span of every dim (stride * (size -
   1), and their sum plus the offset), must fit in int64 -- for 0-element
   tensors too, whose other dims are then still walked by strides.  Returns
   0, or -1 when they do not. */
int lt_check_shape(int ndim, const int64_t *shape, const int64_t *stride, int64_t offset);

/* Shape helpers. */
int64_t lt_numel(const lt_tensor *t);
bool lt_is_contiguous(const lt_tensor *t);
void lt_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride);
static inline char *lt_data(const lt_tensor *t) {
  return t->storage->data + t->offset * (int64_t)lt_itemsize(t->dtype);
}
/* ---- broadcasting and shape text: the one copy of each ------------------ */
/* Right-aligned broadcast of shape b into (*accnd, acc), PyTorch's
   infer_size.  Returns -1, or the 0-based result dim where the sizes
   conflict (acc is then unchanged). */
int lt_broadcast_into(int *accnd, int64_t *acc, int bnd, const int64_t *b);
/* The broadcast shape of n tensors.  Returns 0, or -1 with *bad_a, *bad_b
   (the conflicting sizes) and *bad_dim (1-based, in the result) for
   PyTorch's message. */
int lt_broadcast_shape(const lt_tensor *const *ts, int n, int *ndim, int64_t *shape,
                       int64_t *bad_a, int64_t *bad_b, int *bad_dim);
/* Element strides of t seen with the (broadcast) shape of nd dims: 0 on
   dims t lacks and on size-1 dims of t that the shape expands. */
void lt_broadcast_strides(const lt_tensor *t, int nd, const int64_t *shape, int64_t *st);
/* A shape as text, "[2, 3]" (brackets "[]") or "{2, 3}" ("{}"), into buf;
   returns buf.  LT_SHAPE_STR_MAX bytes hold any shape. */
#define LT_SHAPE_STR_MAX 400
const char *lt_shape_str(char *buf, size_t n, int nd, const int64_t *s, const char *brackets);

/* Pointer to the element at the 0-based multi-index idx. */
char *lt_elem_ptr(const lt_tensor *t, const int64_t *idx);
/* PyTorch's is_non_overlapping_and_dense: the elements fill a block of
   numel elements exactly, in some order of the dims (a transposed or
   permuted contiguous tensor), so its strides can be reused for a copy
   (memory_format=preserve_format). */
bool lt_is_dense(const lt_tensor *t);
/* true if some element is reachable through two different indices (a
   stride-0 or overlapping view); writing through it is refused. */
bool lt_has_internal_overlap(const lt_tensor *t);
/* false when a and b cannot share a byte: different storages, an empty
   one, or disjoint byte ranges of one storage (two slices of a buffer).
   True may still mean interleaved views that touch no common element;
   callers treat it as "may overlap" and read through a copy. */
bool lt_may_overlap(const lt_tensor *a, const lt_tensor *b);

/* Record an in-place write (the autograd version counter). */
static inline void lt_bump_version(lt_tensor *t) { atomic_fetch_add(&t->storage->version, 1); }

#endif
