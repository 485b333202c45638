/* l_view.h -- helpers shared by the view, indexing, scatter and structural
   binding files (l_view.c, l_index.c, l_scatter.c, l_struct.c): shape text,
   sizes, infer_size, the ordered walk (lt_iter.h's odometer), index
   wrapping.  Private to those files. */
#ifndef L_VIEW_H
#define L_VIEW_H

#include <stdio.h>
#include <string.h>
#include "l_lua.h"
#include "lt_iter.h"
#include "lt_promote.h"
#include "lt_view.h"

/* "[2, 3]" into buf, for PyTorch-style messages */
static inline const char *shape_str(char *buf, size_t n, int nd, const int64_t *s) {
  return lt_shape_str(buf, n, nd, s, "[]");
}
#define SHAPE_BUF LT_SHAPE_STR_MAX

static inline lt_tensor *push_alias(lua_State *L, const lt_tensor *t) {
  return ltl_push_view(L, t, t->ndim, t->shape, t->stride, t->offset);
}

static inline lua_Integer check_int(lua_State *L, int idx, const char *fname, const char *what) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) ltl_error(L, fname, "%s must be an integer (got %s)", what, luaL_typename(L, idx));
  return v;
}

/* Sizes (possibly -1) as varargs from slot first, or one table there. */
static inline int get_sizes(lua_State *L, int first, int64_t *shape, const char *fname) {
  int nd = 0;
  if (lua_type(L, first) == LUA_TTABLE) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, first);
    if (n > LT_MAX_DIMS) ltl_error(L, fname, "too many dimensions (%d > %d)", (int)n, LT_MAX_DIMS);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, first, i);
      shape[nd++] = check_int(L, -1, fname, "size");
      lua_pop(L, 1);
    }
    return nd;
  }
  int top = lua_gettop(L);
  for (int i = first; i <= top; i++) {
    if (nd >= LT_MAX_DIMS) ltl_error(L, fname, "too many dimensions (more than %d)", LT_MAX_DIMS);
    shape[nd++] = check_int(L, i, fname, "size");
  }
  return nd;
}

/* PyTorch's infer_size: one -1 is inferred; the product must be numel. */
static inline void infer_size(lua_State *L, const char *fname, int64_t numel, int nd, int64_t *shape) {
  int64_t newsize = 1;
  int infer = -1;
  char buf[SHAPE_BUF];
  for (int i = 0; i < nd; i++) {
    if (shape[i] == -1) {
      if (infer >= 0) ltl_error(L, fname, "only one dimension can be inferred");
      infer = i;
    } else if (shape[i] >= 0) {
      if (__builtin_mul_overflow(newsize, shape[i], &newsize))   /* cannot match any numel */
        ltl_error(L, fname, "shape '%s' is invalid for input of size %I", shape_str(buf, sizeof buf, nd, shape),
                 (lua_Integer)numel);
    }
    else ltl_error(L, fname, "invalid shape dimension %I", (lua_Integer)shape[i]);
  }
  if (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0)) {
    if (infer >= 0) {
      if (newsize == 0)
        ltl_error(L, fname, "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                 "dimension size -1 can be any value and is ambiguous", shape_str(buf, sizeof buf, nd, shape));
      shape[infer] = numel / newsize;
    }
    return;
  }
  ltl_error(L, fname, "shape '%s' is invalid for input of size %I", shape_str(buf, sizeof buf, nd, shape),
           (lua_Integer)numel);
}

/* The index/gather/scatter walks: the iterator's ordered walk (lt_odo in
   lt_iter.h), under the short names these files use. */
typedef lt_odo odo;
static inline void odo_init(odo *o, int nd, const int64_t *shape) { lt_odo_init(o, nd, shape); }
static inline int odo_next(odo *o) { return lt_odo_next(o); }
static inline int is_nonzero(ltensor_dtype dt, const char *p) {
  switch (lt_kind(dt)) {
  case LT_KIND_BOOL: return *(const uint8_t *)p != 0;
  case LT_KIND_INT: return dt == LTENSOR_UINT64 ? *(const uint64_t *)p != 0 : lt_load_i64(dt, p) != 0;
  case LT_KIND_FLOAT: return lt_load_f64(dt, p) != 0.0;  /* NaN is nonzero */
  default: return lt_load_c128(dt, p) != 0;
  }
}

/* Wrap a 1-based (negative from the end) index into [0, n) or raise. */
static inline int64_t wrap_index(lua_State *L, const char *fname, int64_t i, int64_t n, int dim) {
  int64_t w = i < 0 ? i + n : i - 1;
  if (i == 0 || w < 0 || w >= n)
    ltl_error(L, fname, "index %I is out of bounds for dimension %d with size %I%s", (lua_Integer)i, dim + 1,
             (lua_Integer)n, i == 0 ? " (indices are 1-based: 1 is the first, -1 the last)" : "");
  return w;
}

/* Call the method `name` of the tensor at slot t_idx with nargs arguments
   already pushed, going through __index so that the autograd trampoline
   sees the call (split/chunk/expand_as are built on other views). */
static inline void call_method(lua_State *L, int t_idx, const char *name, int nargs, int nres) {
  lua_getfield(L, t_idx, name);
  lua_pushvalue(L, t_idx);
  lua_rotate(L, -(nargs + 2), 2);
  lua_call(L, nargs + 1, nres);
}


#endif
