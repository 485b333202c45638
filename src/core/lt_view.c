/* lt_view.c -- Lua-free shape arithmetic for views: view strides,
   broadcasting of shapes. */
#include "lt_view.h"

/* A port of PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp): the
   old tensor is split into chunks of dims that are contiguous with each
   other; every new dim must lie inside one chunk. */
bool lt_view_compute_stride(int oldnd, const int64_t *oldshape, const int64_t *oldstride,
                            int newnd, const int64_t *newshape, int64_t *newstride) {
  if (oldnd == 0) {
    for (int i = 0; i < newnd; i++) newstride[i] = 1;
    return true;
  }
  int64_t numel = 1;
  for (int i = 0; i < oldnd; i++) numel *= oldshape[i];
  if (numel == 0) {
    bool same = oldnd == newnd;
    for (int i = 0; same && i < oldnd; i++) same = oldshape[i] == newshape[i];
    if (same) {
      for (int i = 0; i < newnd; i++) newstride[i] = oldstride[i];
      return true;
    }
    for (int d = newnd - 1; d >= 0; d--)
      newstride[d] = d == newnd - 1 ? 1 : (newshape[d + 1] > 1 ? newshape[d + 1] : 1) * newstride[d + 1];
    return true;
  }
  int view_d = newnd - 1;
  int64_t chunk_base_stride = oldstride[oldnd - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = oldnd - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 ||
        (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}
