/*
 * l_image.c -- the binding of the PNG codec (src/core/lt_png.c), the C half
 * of lua/ltensor/image.lua (which handles files, PPM/PGM and dtype rules):
 * argument checks, buffers, errors.
 *
 *   T._png_encode(hwc_uint8, channels) -> PNG bytes (a Lua string)
 *   T._png_decode(bytes)               -> uint8 tensor C x H x W
 *
 * Scratch buffers are Lua userdata, so an error (including out of memory)
 * leaks nothing; a bad file is a Lua error with the codec's message.
 */
#include <stdint.h>
#include "l_lua.h"
#include "lt_png.h"

static unsigned char *scratch(lua_State *L, size_t n) {
  return lua_newuserdatauv(L, n ? n : 1, 0);
}

static int l_png_encode(lua_State *L) {
  lt_tensor *t = ltl_check(L, 1);
  lua_Integer channels = ltl_checkinteger(L, 2);
  if (t->dtype != LTENSOR_UINT8 || t->ndim != 3 || !lt_is_contiguous(t))
    return ltl_error(L, "save_image", "internal: expected a contiguous H x W x C uint8 tensor");
  if (channels < 1 || channels > 4 || t->shape[2] != channels)
    return ltl_error(L, "save_image", "an image has 1 to 4 channels, got %d", (int)t->shape[2]);
  int64_t h = t->shape[0], w = t->shape[1];
  int c = (int)channels;
  if (h < 1 || w < 1) return ltl_error(L, "save_image", "cannot write an empty image (%d x %d)", (int)h, (int)w);
  if ((uint64_t)h > LT_PNG_MAX_SIDE || (uint64_t)w > LT_PNG_MAX_SIDE)
    return ltl_error(L, "save_image", "image of %I x %I is larger than PNG allows here (%d per side)",
                      (lua_Integer)h, (lua_Integer)w, (int)LT_PNG_MAX_SIDE);
  unsigned char *work = scratch(L, lt_png_encode_scratch(h, w, c));
  size_t cap = lt_png_encode_cap(h, w, c);
  unsigned char *out = scratch(L, cap);
  size_t n = lt_png_encode((const unsigned char *)lt_data(t), h, w, c, work, out, cap);
  if (n == 0) return ltl_error(L, "save_image", "zlib could not compress the image");
  lua_pushlstring(L, (const char *)out, n);
  return 1;
}

static int l_png_decode(lua_State *L) {
  size_t len;
  const unsigned char *s = (const unsigned char *)ltl_checklstring(L, 1, &len);
  char err[LT_PNG_ERRLEN];
  lt_png_info p;
  if (lt_png_read_header(s, len, &p, err) != 0) return ltl_error(L, "load_image", "%s", err);
  unsigned char *z = scratch(L, p.idat_total);
  unsigned char *raw = scratch(L, p.rawlen);
  int64_t shape[3] = { p.out_c, p.height, p.width };
  lt_tensor *t = ltl_push_new(L, LTENSOR_UINT8, 3, shape);
  if (lt_png_decode(s, &p, z, raw, (unsigned char *)lt_data(t), err) != 0)
    return ltl_error(L, "load_image", "%s", err);
  return 1;
}

const ltl_reg ltl_reg_image[] = {
  {"_png_encode", l_png_encode, LT_MODULE, NULL},
  {"_png_decode", l_png_decode, LT_MODULE, NULL},
  {NULL, NULL, 0, NULL}
};
