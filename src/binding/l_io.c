/*
 * l_io.c -- raw bytes <-> tensors, the C half of lua/ltensor/io.lua.
 *
 * The file formats (safetensors, .npy) are parsed in Lua; C only moves
 * bytes, so every bound a hostile file could violate is checked here again
 * before memory is touched: the Lua side may give clearer messages, but it
 * is not what keeps memory safe.
 *
 *   T._tobytes(t)                          -> little-endian contiguous bytes
 *   T._frombytes(s, dtype, shape [, offset [, big_endian [, fortran]]]) -> tensor
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "l_lua.h"

static int host_is_little(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

/* Size of one byte-swapped unit: the element, or each half of a complex. */
static size_t swap_unit(ltensor_dtype dt) {
  size_t sz = lt_itemsize(dt);
  return lt_is_complex(dt) ? sz / 2 : sz;
}

static void swap_bytes(char *p, size_t nbytes, size_t unit) {
  if (unit <= 1) return;
  for (size_t i = 0; i + unit <= nbytes; i += unit)
    for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
      char c = p[a]; p[a] = p[b]; p[b] = c;
    }
}

static int l_tobytes(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  size_t nbytes = (size_t)lt_numel(t) * lt_itemsize(t->dtype);
  int swap = !host_is_little() && swap_unit(t->dtype) > 1;
  if (lt_is_contiguous(t) && !swap) {
    lua_pushlstring(L, nbytes ? lt_data(t) : "", nbytes);
    return 1;
  }
  lt_tensor *c = ltl_push_clone(L, t);   /* GC-owned scratch */
  if (swap) swap_bytes(lt_data(c), nbytes, swap_unit(t->dtype));
  lua_pushlstring(L, nbytes ? lt_data(c) : "", nbytes);
  return 1;
}

static int l_frombytes(lua_State *L) {
  size_t len;
  const char *s = ltl_checklstring(L, 1, &len);
  ltensor_dtype dt = ltl_checkdtype(L, 2);
  ltl_checktype(L, 3, LUA_TTABLE);
  lua_Integer offset = ltl_optinteger(L, 4, 0);
  int big = lua_toboolean(L, 5);
  int fortran = lua_toboolean(L, 6);
  lua_Unsigned nd = lua_rawlen(L, 3);
  if (nd > LT_MAX_DIMS)
    return ltl_error(L, "_frombytes", "too many dimensions (%d, at most %d)", (int)nd, LT_MAX_DIMS);
  int ndim = (int)nd;
  int64_t shape[LT_MAX_DIMS];
  size_t isz = lt_itemsize(dt);
  uint64_t nbytes = isz;   /* overflow-checked product, bounded by len */
  for (int i = 0; i < ndim; i++) {
    lua_rawgeti(L, 3, i + 1);
    int ok;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || n < 0)
      return ltl_error(L, "_frombytes", "size %d must be a non-negative integer", i + 1);
    shape[i] = n;
  }
  if (offset < 0 || (uint64_t)offset > len)
    return ltl_error(L, "_frombytes", "offset %I is outside the %I bytes given", offset, (lua_Integer)len);
  uint64_t avail = (uint64_t)len - (uint64_t)offset;
  int zero = 0;
  for (int i = 0; i < ndim; i++) zero |= shape[i] == 0;
  if (zero) nbytes = 0;
  for (int i = 0; i < ndim && !zero; i++) {
    if (nbytes > avail / (uint64_t)shape[i])   /* product would exceed avail: no overflow possible */
      return ltl_error(L, "_frombytes", "shape needs more than the %I bytes available at offset %I",
                      (lua_Integer)avail, offset);
    nbytes *= (uint64_t)shape[i];
  }
  if (nbytes > avail)
    return ltl_error(L, "_frombytes", "shape needs %I bytes at offset %I, but only %I bytes are available",
                    (lua_Integer)nbytes, offset, (lua_Integer)avail);
  const char *src = s + offset;
  lt_tensor *out = ltl_push_new(L, dt, ndim, shape);
  if (nbytes == 0) return 1;
  if (!fortran || ndim < 2) {
    memcpy(lt_data(out), src, (size_t)nbytes);
  } else {
    /* column-major bytes: load them as a tensor with reversed sizes, then
       copy its transposed view (strides of a Fortran array) into out */
    int64_t rshape[LT_MAX_DIMS], fstride[LT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) rshape[i] = shape[ndim - 1 - i];
    lt_tensor *tmp = ltl_push_new(L, dt, ndim, rshape);
    memcpy(lt_data(tmp), src, (size_t)nbytes);
    int64_t st = 1;
    for (int i = 0; i < ndim; i++) { fstride[i] = st; st *= shape[i]; }
    lt_tensor *view = ltl_push_view(L, tmp, ndim, shape, fstride, 0);
    lt_copy_into(out, view);
    lua_pop(L, 2);
  }
  if (big == host_is_little()) swap_bytes(lt_data(out), (size_t)nbytes, swap_unit(dt));
  if (dt == LTENSOR_BOOL) {   /* a bool byte other than 0/1 would break kernels that assume it */
    unsigned char *p = (unsigned char *)lt_data(out);
    for (uint64_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
  }
  return 1;
}

const ltl_reg ltl_reg_io[] = {
  {"_tobytes", l_tobytes, LT_MODULE, NULL},
  {"_frombytes", l_frombytes, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
