/*
 * lt_tensor.h -- storage and strided tensor views (Lua-free core).
 *
 * A storage is a reference-counted block of bytes shared by every view of
 * it.  A tensor is (storage, offset, shape, strides, dtype); offset and
 * strides are in elements.  Functions here never raise: they return an
 * lt_status and leave error text to the binding layer.
 */
#ifndef LT_TENSOR_H
#define LT_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include "lt_dtype.h"

#define LT_MAX_DIMS LTENSOR_MAX_DIMS

typedef void *(*lt_allocf)(void *ud, void *ptr, size_t osize, size_t nsize); /* = lua_Alloc */

/* The bytes behind one or more tensors.  Where it lives (the binding layer
   decides): inside a small tensor's own userdata, or in a storage userdata
   whose finalizer frees `block` or calls `release` -- the Lua collector
   keeps it alive exactly as long as some tensor references it. */
typedef struct lt_storage {
  atomic_long refcount;        /* tensors ever given this storage (1 + views); never
                                  decremented: free() releases memory early only at 1 */
  char *data;                  /* aligned to 64 bytes for heap memory; NULL once freed */
  size_t nbytes;
  /* heap memory: freed through allocf(alloc_ud, block, block_size, 0) */
  lt_allocf allocf;
  void *alloc_ud;
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

/* Storage set-up and release (never raise; return 0 on allocation failure). */
void lt_storage_init(lt_storage *s, char *data, size_t nbytes);           /* unowned bytes */
int lt_storage_alloc(lt_storage *s, lt_allocf allocf, void *alloc_ud, size_t nbytes);
void lt_storage_set_external(lt_storage *s, void *data, size_t nbytes, void (*release)(void *), void *ud);
void lt_storage_retain(lt_storage *s);     /* one more tensor views it */
void lt_storage_free(lt_storage *s);       /* idempotent: frees heap data / calls release */

/* Shape helpers. */
int64_t lt_numel(const lt_tensor *t);
bool lt_is_contiguous(const lt_tensor *t);
void lt_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride);
static inline char *lt_data(const lt_tensor *t) {
  return t->storage->data + t->offset * (int64_t)lt_itemsize(t->dtype);
}
/* Pointer to the element at the 0-based multi-index idx. */
char *lt_elem_ptr(const lt_tensor *t, const int64_t *idx);
/* true if some element is reachable through two different indices (a
   stride-0 or overlapping view); writing through it is refused. */
bool lt_has_internal_overlap(const lt_tensor *t);

/* Copy src into dst, broadcasting src to dst's shape and converting the
   dtype.  The caller checked that the shapes broadcast. Overlap between dst
   and src is handled by the caller (copy through a temporary). */
void lt_copy_into(lt_tensor *dst, const lt_tensor *src);

/* Fill every element of dst with one value given in canonical form. */
void lt_fill_f64(lt_tensor *dst, double v);
void lt_fill_i64(lt_tensor *dst, int64_t v);
void lt_fill_c128(lt_tensor *dst, lt_cdouble v);

/* Visit every element of t in row-major order: fn(ptr, ctx). */
void lt_foreach(const lt_tensor *t, void (*fn)(char *p, void *ctx), void *ctx);

#endif
