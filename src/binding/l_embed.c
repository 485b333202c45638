/* l_embed.c -- the embedding C API of ltensor.h: host memory as tensors
   (ltensor_push_external) and tensors as plain C views (ltensor_get).
   luaopen_ltensor itself lives in ltensor_open.c. */
#include <string.h>
#include "l_lua.h"

/* Nothing is exposed to Lua from this area; the array exists so that every
   area registers the same way. */
const ltl_reg ltl_reg_embed[] = { {NULL, NULL, 0, NULL} };

typedef struct push_args {
  void *data;
  ltensor_dtype dtype;
  int ndim;
  const int64_t *shape, *strides;
  void (*release)(void *);
  void *ud;
  size_t nbytes;
  int attached;      /* the storage owns release(): the GC will call it */
} push_args;

/* Runs under lua_pcall so that a memory error while building the tensor
   cannot skip release(): ltensor_push_external calls it when attached is
   still 0 (once it is 1, the storage's finalizer owns release). */
static int push_protected(lua_State *L) {
  push_args *a = (push_args *)lua_touserdata(L, 1);
  lt_tensor *t = ltl_push_external(L, a->data, a->nbytes, a->release, a->ud, &a->attached);
  t->dtype = a->dtype;
  t->offset = 0;
  t->ndim = a->ndim;
  for (int i = 0; i < a->ndim; i++) t->shape[i] = a->shape[i];
  if (a->strides)
    for (int i = 0; i < a->ndim; i++) t->stride[i] = a->strides[i];
  else
    lt_contiguous_strides(a->ndim, t->shape, t->stride);
  return 1;
}

/* Checks the arguments; returns NULL when they are fine, else the reason. */
static const char *check_external(lua_State *L, push_args *a) {
  if ((int)a->dtype < 0 || a->dtype >= LTENSOR_NUM_DTYPES)
    return lua_pushfstring(L, "invalid dtype %d", (int)a->dtype);
  if (a->ndim < 0 || a->ndim > LTENSOR_MAX_DIMS)
    return lua_pushfstring(L, "ndim must be in [0, %d], got %d", LTENSOR_MAX_DIMS, a->ndim);
  if (a->ndim > 0 && !a->shape) return "shape is NULL";
  size_t item = lt_itemsize(a->dtype);
  uint64_t numel = 1, extent = 1;   /* extent: elements spanned by the view */
  for (int i = 0; i < a->ndim; i++) {
    int64_t n = a->shape[i];
    if (n < 0) return lua_pushfstring(L, "negative dimension %I at index %d", (lua_Integer)n, i + 1);
    if (n == 0) numel = 0;
    else if (numel && numel > (uint64_t)INT64_MAX / (uint64_t)n) return "tensor too large";
    else numel *= (uint64_t)n;
  }
  /* the shape bounds of every tensor (lt_tensor.h), 0-element ones too */
  if (lt_check_shape(a->ndim, a->shape, a->strides, 0) != 0) return "tensor too large (its shape or strides overflow int64)";
  if (numel == 0) { a->nbytes = 0; return NULL; }
  if (numel > (uint64_t)INT64_MAX / 64) return "tensor too large";
  if (a->strides) {
    for (int i = 0; i < a->ndim; i++) {
      int64_t st = a->strides[i];
      if (st < 0) return lua_pushfstring(L, "negative stride %I at index %d", (lua_Integer)st, i + 1);
      uint64_t span = (uint64_t)(a->shape[i] - 1);
      if (st && span > ((uint64_t)INT64_MAX / 64 - extent) / (uint64_t)st) return "tensor too large";
      extent += span * (uint64_t)st;
    }
  } else {
    extent = numel;
  }
  if (!a->data) return "data is NULL";
  a->nbytes = (size_t)extent * item;
  return NULL;
}

void ltensor_push_external(lua_State *L, void *data, ltensor_dtype dtype,
                           int ndim, const int64_t *shape, const int64_t *strides,
                           void (*release)(void *ud), void *ud) {
  push_args a = { data, dtype, ndim, shape, strides, release, ud, 0, 0 };
  if (!lua_checkstack(L, 4)) {
    if (release) release(ud);
    luaL_error(L, "ltensor.push_external: stack overflow");
    return;
  }
  const char *why = check_external(L, &a);
  if (why) {
    if (release) release(ud);
    ltl_error(L, "push_external", "%s", why);
    return;
  }
  lua_pushcfunction(L, push_protected);
  lua_pushlightuserdata(L, &a);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    if (!a.attached && release) release(ud);
    lua_error(L);
  }
}

static int get_protected(lua_State *L) {
  lua_pushlightuserdata(L, ltl_test(L, 1));
  return 1;
}

int ltensor_get(lua_State *L, int idx, ltensor_info *info) {
  if (lua_type(L, idx) != LUA_TUSERDATA || !lua_checkstack(L, 3)) return 0;
  idx = lua_absindex(L, idx);
  /* ltl_test raises on a state where ltensor was never opened (no settings):
     keep it protected. */
  lua_pushcfunction(L, get_protected);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) { lua_pop(L, 1); return 0; }
  lt_tensor *t = (lt_tensor *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!t || !t->storage) return 0;   /* not a tensor, or freed by :free()/<close> */
  if (info) {
    info->data = lt_data(t);
    info->dtype = t->dtype;
    info->ndim = t->ndim;
    info->shape = t->shape;
    info->strides = t->stride;
  }
  return 1;
}
