/*
 * l_zip.c -- the C half of PyTorch checkpoints (lua/ltensor/io/zip.lua,
 * io/pt.lua): zlib's CRC-32 for the zip writer and reader, and the strided
 * view a checkpoint's _rebuild_tensor_v2 describes over a storage.
 *
 *   T._crc32(s [, crc])                          -> integer (0 .. 2^32-1)
 *   T._as_strided(storage, size, stride, offset) -> view | nil, reason
 *   T._storage_view(t)                           -> 1-d view of t's whole storage, its key
 *
 * The checkpoint parser runs in Lua, but the bounds that keep memory safe
 * are checked here again: _as_strided refuses any element outside the
 * storage, negative offsets or strides, and sizes whose products overflow.
 * It reports refusals as (nil, reason) so that the caller can name the file.
 */
#include <string.h>
#include <zlib.h>
#include "l_lua.h"

static int l_crc32(lua_State *L) {
  size_t len;
  const char *s = ltl_checklstring(L, 1, &len);
  lua_Integer init = ltl_optinteger(L, 2, 0);
  if (init < 0 || init > 0xFFFFFFFFLL) return ltl_error(L, "_crc32", "initial crc must be in [0, 2^32)");
  uLong crc = (uLong)init;
  /* zlib takes uInt lengths: feed large strings in pieces */
  while (len > 0) {
    uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
    crc = crc32(crc, (const Bytef *)s, n);
    s += n;
    len -= n;
  }
  lua_pushinteger(L, (lua_Integer)(crc & 0xFFFFFFFFUL));
  return 1;
}

static int refuse(lua_State *L, const char *msg) {
  lua_pushnil(L);
  lua_pushstring(L, msg);
  return 2;
}

/* reads t[1..n] (n <= LT_MAX_DIMS) as int64; 0 when an entry is not an integer */
static int read_ints(lua_State *L, int idx, int n, int64_t *out) {
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, idx, i + 1);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok) return 0;
    out[i] = (int64_t)v;
  }
  return 1;
}

static int l_as_strided(lua_State *L) {
  lt_tensor *base = ltl_check(L, 1);
  ltl_checktype(L, 2, LUA_TTABLE);
  ltl_checktype(L, 3, LUA_TTABLE);
  lua_Integer offset = ltl_checkinteger(L, 4);
  if (base->ndim != 1 || !lt_is_contiguous(base))
    return ltl_error(L, "_as_strided", "the storage must be a contiguous 1-d tensor");
  lua_Unsigned nd = lua_rawlen(L, 2);
  if (nd > LT_MAX_DIMS) return refuse(L, "too many dimensions");
  if (lua_rawlen(L, 3) != nd) return refuse(L, "size and stride have different lengths");
  int ndim = (int)nd;
  int64_t shape[LT_MAX_DIMS], stride[LT_MAX_DIMS];
  if (!read_ints(L, 2, ndim, shape) || !read_ints(L, 3, ndim, stride))
    return refuse(L, "size and stride must be integers");
  if (offset < 0) return refuse(L, "negative storage offset");
  int64_t numel = lt_numel(base);   /* elements of the storage */
  int empty = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return refuse(L, "negative size");
    if (stride[i] < 0) return refuse(L, "negative stride");
    empty |= shape[i] == 0;
  }
  /* the last element's index: offset + sum (size-1)*stride, each term
     bounded by numel before it is added, so nothing overflows */
  if (offset > numel) return refuse(L, "storage offset is past the end of the storage");
  if (!empty) {
    int64_t last = offset;
    for (int i = 0; i < ndim; i++) {
      if (shape[i] == 1 || stride[i] == 0) continue;
      if (shape[i] - 1 > numel / stride[i]) return refuse(L, "the view reaches past the end of the storage");
      last += (shape[i] - 1) * stride[i];
      if (last >= numel) return refuse(L, "the view reaches past the end of the storage");
    }
    if (last >= numel) return refuse(L, "the view reaches past the end of the storage");
  }
  if (lt_check_shape(ndim, shape, stride, base->offset + offset) != 0) return refuse(L, "the size is too large");
  lua_pushvalue(L, 1);
  ltl_push_view(L, base, ndim, shape, stride, base->offset + offset);
  return 1;
}

/* The writer saves storages, not tensors, so that views saved together stay
   views of one storage after torch.load: this gives the whole storage as a
   contiguous 1-d tensor of t's dtype, and a key naming the storage. */
static int l_storage_view(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  lt_storage *s = t->storage;
  if (!s || !s->data) return ltl_error(L, "_storage_view", "the tensor's memory has been freed");
  int64_t n = (int64_t)(s->nbytes / lt_itemsize(t->dtype));
  lua_pushvalue(L, 1);
  ltl_push_view(L, t, 1, &n, (const int64_t[]){1}, 0);
  lua_pushfstring(L, "%p", (void *)s);
  return 2;
}

const ltl_reg ltl_reg_zip[] = {
  {"_storage_view", l_storage_view, LT_MODULE, NULL},
  {"_crc32", l_crc32, LT_MODULE, NULL},
  {"_as_strided", l_as_strided, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
