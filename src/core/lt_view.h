/*
 * lt_view.h -- Lua-free shape arithmetic for views (l_view.c).
 *
 * Everything here works on plain shape/stride arrays in elements and never
 * raises; failures are reported through return values so that the binding
 * layer can word the error as PyTorch does.
 */
#ifndef LT_VIEW_H
#define LT_VIEW_H

#include "lt_tensor.h"

/* PyTorch's computeStride: strides that let a tensor of (oldshape,
   oldstride) be viewed as newshape without copying.  Returns false when no
   such strides exist (a dim of the new shape would span two non-contiguous
   chunks of the old one). */
bool lt_view_compute_stride(int oldnd, const int64_t *oldshape, const int64_t *oldstride,
                            int newnd, const int64_t *newshape, int64_t *newstride);

#endif
